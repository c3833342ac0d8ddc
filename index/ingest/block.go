package ingest

import (
	"strings"
)

// blockKind says what a block of a document holds; the chunker treats each
// kind differently (a code block is never split unless it alone is too big).
type blockKind uint8

const (
	blockPara blockKind = iota
	blockHeading
	blockCode
	blockTable
)

// A block is a unit of a loaded document: a heading, a paragraph, a fenced
// code block, a table or, in source files, a top-level declaration. Lines
// hold the cleaned text, one entry per line of the file on disk starting at
// Start, so that a block split at line boundaries keeps exact line numbers.
type block struct {
	Kind  blockKind
	Level int    // headings: 1 (top) to 6
	Title string // headings: the heading text; declarations: the signature
	Start int    // 1-based line of the file on disk
	Lines []string
	// EndLine is set when Lines do not map one to one onto lines on disk
	// (HTML, where markup lines vanish); zero means Start+len(Lines)-1.
	EndLine int
	// Prefix is text the block's chunk repeats before its lines without
	// their being there on disk: the header row of a table cut into parts,
	// so that every part carries its column names.
	Prefix string
}

func (b block) End() int {
	if b.EndLine > 0 {
		return b.EndLine
	}
	return b.Start + len(b.Lines) - 1
}

// exact says whether Lines[i] is line Start+i on disk.
func (b block) exact() bool { return b.EndLine == 0 }

func (b block) text() string {
	if b.Prefix != "" {
		return b.Prefix + "\n" + strings.Join(b.Lines, "\n")
	}
	return strings.Join(b.Lines, "\n")
}

func (b block) size() int {
	n := len(b.Lines)
	if b.Prefix != "" {
		n += len(b.Prefix) + 1
	}
	for _, l := range b.Lines {
		n += len(l)
	}
	return n
}

// splitLines splits on \n and drops a trailing \r, so CRLF files keep the
// line numbers an editor shows.
func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// paragraphs turns plain lines into paragraph blocks split at blank lines.
func paragraphs(lines []string, first int) []block {
	var out []block
	var cur *block
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			cur = nil
			continue
		}
		if cur == nil {
			out = append(out, block{Kind: blockPara, Start: first + i})
			cur = &out[len(out)-1]
		}
		for cur.End() < first+i-1 { // keep Lines aligned with file lines
			cur.Lines = append(cur.Lines, "")
		}
		cur.Lines = append(cur.Lines, l)
	}
	return out
}
