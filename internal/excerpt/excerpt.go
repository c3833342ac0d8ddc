// Package excerpt cuts a passage down to a few lines for a listing: the
// search printer, the ask printer and the chat show passages the same way.
package excerpt

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Lines is the first n non-blank lines of text, tabs expanded, control
// characters escaped, each cut to width terminal cells with an ellipsis.
func Lines(text string, n, width int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, ansi.Truncate(Safe(l), max(width, 10), "…"))
		if len(out) == n {
			break
		}
	}
	return out
}

// Safe makes text from outside (a file name, a heading, a web page title)
// safe to print on a terminal: control characters, which could colour the
// terminal or split a line, and bytes that are not UTF-8 are shown as
// escapes (\x1b, \n).
func Safe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if isControl(r) {
			return true
		}
	}
	return false
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// FirstLine is the first line of a message, for a one-line notice or error.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Cut is the largest length ≤ n at which s can be cut without splitting a
// UTF-8 character: s[:Cut(s, n)] is valid text whenever s is.
func Cut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
