package ingest

import (
	"strings"
)

// loadText splits plain text into paragraphs. reStructuredText section titles
// (a line underlined with = - ~ ^ and friends) become headings, their level
// set by the order in which each underline style first appears, as docutils does.
func loadText(src string, rst bool) []block {
	lines := splitLines(src)
	if !rst {
		return paragraphs(lines, 1)
	}
	var out []block
	var levels []byte
	start := 0
	for i := 0; i+1 < len(lines); i++ {
		title, under := strings.TrimSpace(lines[i]), strings.TrimRight(lines[i+1], " \t")
		if title == "" || !isRSTUnderline(under) || len(under) < len(title) || (i > 0 && strings.TrimSpace(lines[i-1]) != "" && !isRSTUnderline(lines[i-1])) {
			continue
		}
		out = append(out, paragraphs(lines[start:i], start+1)...)
		level := strings.IndexByte(string(levels), under[0]) + 1
		if level == 0 {
			levels = append(levels, under[0])
			level = len(levels)
		}
		out = append(out, block{Kind: blockHeading, Level: min(level, 6), Title: title, Start: i + 1, Lines: []string{lines[i], lines[i+1]}})
		start = i + 2
		i++
	}
	return append(out, paragraphs(lines[start:], start+1)...)
}

func isRSTUnderline(s string) bool {
	if len(s) < 3 || !strings.ContainsRune("=-~^\"'`#*+_:.", rune(s[0])) {
		return false
	}
	return strings.Trim(s, s[:1]) == ""
}
