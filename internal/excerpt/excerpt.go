// Package excerpt cuts a passage down to a few lines for a listing: the
// search printer, the ask printer and the chat show passages the same way.
package excerpt

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/internal/termsafe"
)

// Lines is the first n non-blank lines of text, tabs expanded, control
// characters and escape sequences removed (termsafe), each cut to width
// terminal cells with an ellipsis.
func Lines(text string, n, width int) []string {
	var out []string
	for _, l := range strings.Split(termsafe.Text(text), "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, ansi.Truncate(l, max(width, 10), "…"))
		if len(out) == n {
			break
		}
	}
	return out
}

// FirstLine is the first line of a message, for a one-line notice or
// error, safe to print: a message may quote a server or a file.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(termsafe.Text(s)), "\n")
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
