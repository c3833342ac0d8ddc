// Package mdcode finds the code in a model's markdown answer: its fenced
// blocks, and the prose left once code is taken out. Both the agent (which
// [n] markers are citations) and eval (does the code parse) read answers
// this way, so a marker inside code means the same thing to both.
package mdcode

import (
	"regexp"
	"strings"
)

// Block is a fenced block of an answer.
type Block struct {
	Lang   string // first word of the info string, lower case
	Text   string // the content, without the fence's indentation
	Line   int    // of the opening fence, 1-based
	Closed bool
}

// Blocks finds fenced blocks the CommonMark way (``` or ~~~, three or more,
// closed by at least as many of the same character), except that a fence
// may be indented any amount: models put fences in list items, and the
// content loses the fence's indentation as it does there.
func Blocks(md string) []Block {
	var out []Block
	scan(md, func(b Block) { out = append(out, b) }, nil)
	return out
}

// Prose is md without its fenced blocks, with each code span blanked: what
// is left is what the answer says in words.
func Prose(md string) string {
	var lines []string
	scan(md, nil, func(line string) { lines = append(lines, line) })
	return codeSpan.ReplaceAllString(strings.Join(lines, "\n"), " ")
}

// codeSpan is an inline code span: `args[1]` indexes a slice.
var codeSpan = regexp.MustCompile("`[^`\n]*`")

// scan walks md once, handing each fenced block to block and each line
// outside a block to prose (either may be nil).
func scan(md string, block func(Block), prose func(string)) {
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		fence := openingFence(trimmed)
		if fence == "" {
			if prose != nil {
				prose(lines[i])
			}
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		b := Block{Line: i + 1}
		if f := strings.Fields(trimmed[len(fence):]); len(f) > 0 {
			b.Lang = strings.ToLower(strings.Trim(f[0], "{}."))
		}
		var body []string
		for i++; i < len(lines); i++ {
			t := strings.TrimLeft(lines[i], " \t")
			if c := fenceOf(t); len(c) >= len(fence) && c[0] == fence[0] && strings.TrimSpace(t[len(c):]) == "" {
				b.Closed = true
				break
			}
			body = append(body, dedent(lines[i], indent))
		}
		if block != nil {
			b.Text = strings.Join(body, "\n")
			block(b)
		}
	}
}

// openingFence is the fence a line opens, or "": a backtick fence's info
// string may not hold a backtick (it would be a code span, as in
// "```x```").
func openingFence(line string) string {
	f := fenceOf(line)
	if f != "" && f[0] == '`' && strings.Contains(line[len(f):], "`") {
		return ""
	}
	return f
}

// fenceOf is the run of three or more backticks or tildes a line starts
// with, or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

func dedent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && line[i] == ' ' {
		i++
	}
	return line[i:]
}
