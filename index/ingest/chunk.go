package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Chunk kinds, as stored and shown.
const (
	KindProse = "prose"
	KindCode  = "code"
	KindTable = "table"
)

// ChunkOptions is the chunk budget. Both numbers are in bytes of text,
// which for English prose and code is about four per token.
type ChunkOptions struct {
	Size    int // the most a chunk holds
	Overlap int // prose repeated across a cut inside a section
}

// minSize is the size below which a prose chunk takes in the sections that
// follow it: half the budget, so chunks of prose are between half and the
// whole of chunk-size unless a page (or a section under a higher heading)
// is smaller.
func (o ChunkOptions) minSize() int { return o.Size / 2 }

// Chunk is a piece of a document: a range of its lines, with the
// breadcrumb of headings above it.
type Chunk struct {
	Start, End int // 1-based, inclusive
	Heading    string
	Kind       string // KindProse, KindCode or KindTable
	Text       string
}

// chunkDocument cuts loaded blocks into pieces of at most opt.Size bytes
// (a lone oversized line is the only exception). Prose documents are cut at
// headings first, and neighbouring small sections are then joined up to
// opt.minSize(); source files are cut at declarations. title is the page
// title (front matter, <title>); when empty, a heading that is alone at the
// top level of the document is taken as the title.
func chunkDocument(bs []block, code bool, title string, opt ChunkOptions) []Chunk {
	if code {
		return chunkCode(bs, opt)
	}
	if title == "" {
		title = soleTopHeading(bs)
	}
	var (
		secs    []section
		stack   []block
		current []block
	)
	var pending []block // headings with no text of their own yet
	flush := func() {
		s := section{blocks: append(pending, current...), size: -1}
		for _, b := range s.blocks {
			s.size += b.size() + 1
			if b.Kind != blockHeading {
				s.body = true
			}
		}
		current = nil
		if !s.body {
			// A heading straight followed by a subheading goes with
			// the subheading's text.
			pending = s.blocks
			return
		}
		pending = nil
		if len(stack) > 0 {
			s.level = stack[len(stack)-1].Level
			s.name = stack[len(stack)-1].Title
		}
		if s.blocks[0].Kind == blockHeading {
			s.level = s.blocks[0].Level
		}
		s.trail = withTitle(title, breadcrumb(stack))
		secs = append(secs, s)
	}
	for _, b := range bs {
		if b.Kind == blockHeading {
			flush()
			for len(stack) > 0 && stack[len(stack)-1].Level >= b.Level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, b)
		}
		current = append(current, b)
	}
	flush()
	var out []Chunk
	for _, g := range groupSections(secs, opt) {
		var blocks []block
		for _, s := range g {
			blocks = append(blocks, s.blocks...)
		}
		out = append(out, pack(blocks, groupHeading(g), opt)...)
	}
	return out
}

// A section is a heading and the blocks under it up to the next heading.
type section struct {
	blocks []block
	size   int    // bytes of text, with a newline between blocks
	level  int    // of its heading; 0 before the first heading
	name   string // its heading's own title
	trail  string // the page title and the headings above it, "Title > A > B"
	body   bool   // holds more than its heading
}

// groupSections joins neighbouring sections while the group is smaller than
// the minimum chunk size and the next section still fits the budget. Small
// sections on their own are short, so BM25 boosts them for their length, and
// the words that tie a question to them often sit in the section next door.
// A group never climbs above its first section's level: "A > x" does not
// absorb the next "B", whose text is not about A.
func groupSections(secs []section, opt ChunkOptions) [][]section {
	var out [][]section
	var g []section
	size := 0
	for _, s := range secs {
		if len(g) > 0 && (size >= opt.minSize() || size+1+s.size > opt.Size || s.level < g[0].level) {
			out = append(out, g)
			g, size = nil, -1
		}
		g = append(g, s)
		size += 1 + s.size
	}
	if len(g) > 0 {
		out = append(out, g)
	}
	return out
}

// groupHeading is a group's heading trail: its first section's, then the
// names of the sections joined to it, which their text holds as well but
// which say what the chunk is about.
func groupHeading(g []section) string {
	h := g[0].trail
	for _, s := range g[1:] {
		if s.name != "" && !strings.Contains(h, s.name) {
			h += "; " + s.name
		}
	}
	return h
}

// soleTopHeading is the title of a document whose first heading is the only
// one at its level or above: the page's title, as a lone "# Title" is.
func soleTopHeading(bs []block) string {
	var first *block
	for i, b := range bs {
		if b.Kind != blockHeading {
			continue
		}
		if first == nil {
			first = &bs[i]
		} else if b.Level <= first.Level {
			return ""
		}
	}
	if first == nil {
		return ""
	}
	return first.Title
}

// withTitle puts the page title at the head of a heading trail, unless the
// trail already starts with it.
func withTitle(title, trail string) string {
	switch {
	case title == "":
		return trail
	case trail == "":
		return title
	case trail == title || strings.HasPrefix(trail, title+" > "):
		return trail
	}
	return title + " > " + trail
}

func breadcrumb(stack []block) string {
	titles := make([]string, 0, len(stack))
	for _, h := range stack {
		if h.Title != "" {
			titles = append(titles, h.Title)
		}
	}
	return strings.Join(titles, " > ")
}

// chunkCode packs whole declarations together up to the budget. A section
// of a doc comment ("package exec > Title") keeps a chunk of its own, so its
// heading stays precise.
func chunkCode(bs []block, opt ChunkOptions) []Chunk {
	var out []Chunk
	var group []block
	size := 0
	flush := func() {
		if len(group) == 0 {
			return
		}
		titles := make([]string, 0, len(group))
		for _, b := range group {
			// Blocks of comments alone take their neighbour's title
			// (loadCode): "package x; package x" says nothing twice.
			if b.Title != "" && !slices.Contains(titles, b.Title) {
				titles = append(titles, b.Title)
			}
		}
		h := strings.Join(titles, "; ")
		if len(h) > 200 {
			h = h[:200] + "…"
		}
		out = append(out, pack(group, h, opt)...)
		group, size = nil, 0
	}
	for _, b := range bs {
		sub := strings.Contains(b.Title, " > ")
		if size+b.size() > opt.Size || sub || (len(group) == 1 && strings.Contains(group[0].Title, " > ")) {
			flush()
		}
		group = append(group, b)
		size += b.size()
	}
	flush()
	return out
}

// pack fills pieces with units in order, starting a new piece when the next
// unit would not fit. A new piece after a full one starts with the tail of
// the previous prose (up to opt.Overlap bytes), so a sentence cut at the
// boundary can be found from either side. Code is never repeated.
func pack(bs []block, heading string, opt ChunkOptions) []Chunk {
	var units []block
	for _, b := range bs {
		units = append(units, splitBlock(b, opt.Size-2)...)
	}
	var out []Chunk
	var cur []block
	size := 0
	// A unit costs its size plus one byte for the blank line that may join
	// it to the previous one, so a piece's text never exceeds opt.Size.
	for _, u := range units {
		if size+u.size()+1 > opt.Size && onlyHeadings(cur) {
			// The breadcrumb names the heading already; drop its line
			// rather than overflow the budget.
			cur, size = nil, 0
		}
		if size+u.size()+1 > opt.Size && len(cur) > 0 {
			out = append(out, makePiece(cur, heading))
			last := cur[len(cur)-1]
			cur, size = nil, 0
			if tail, ok := overlapTail(last, u, opt.Overlap); ok && tail.size()+u.size()+2 <= opt.Size {
				cur, size = []block{tail}, tail.size()+1
			}
		}
		cur = append(cur, u)
		size += u.size() + 1
	}
	if len(cur) > 0 {
		out = append(out, makePiece(cur, heading))
	}
	return out
}

func onlyHeadings(bs []block) bool {
	if len(bs) == 0 {
		return false
	}
	for _, b := range bs {
		if b.Kind != blockHeading {
			return false
		}
	}
	return true
}

// overlapTail returns the last lines of the unit that ended the previous
// piece, when both it and the next unit are prose.
func overlapTail(last, next block, overlap int) (block, bool) {
	if overlap <= 0 || next.Kind == blockCode || last.Kind != blockPara || !last.exact() {
		return block{}, false
	}
	n, size := 0, 0
	for i := len(last.Lines) - 1; i >= 0 && size+len(last.Lines[i])+1 <= overlap; i-- {
		size += len(last.Lines[i]) + 1
		n++
	}
	if n == 0 {
		return block{}, false
	}
	tail := sub(last, len(last.Lines)-n, len(last.Lines))
	return tail, true
}

// splitBlock cuts a block larger than max: code at blank lines and then at
// line boundaries, anything else at line boundaries, and a single line
// longer than max at spaces.
func splitBlock(b block, max int) []block {
	if b.size() <= max {
		return []block{b}
	}
	if b.Kind == blockCode {
		var out []block
		for _, part := range splitAtBlankLines(b) {
			out = append(out, splitLinesTo(part, max)...)
		}
		return mergeSmall(out, max)
	}
	if b.Kind == blockTable {
		return splitTable(b, max)
	}
	return splitLinesTo(b, max)
}

// splitTable cuts a table into groups of whole rows up to max, each after
// the first repeating the header (the column names, and in Markdown the
// delimiter row) as its Prefix. A row alone means little: in a reference
// table of options the header says which cell is the name, the type, the
// default.
func splitTable(b block, max int) []block {
	nh := 1
	if len(b.Lines) > 1 && tableDelim.MatchString(b.Lines[1]) {
		nh = 2
	}
	head := strings.Join(b.Lines[:nh], "\n")
	if len(b.Lines) <= nh || len(head)+1 > max/2 {
		return splitLinesTo(b, max) // a header this wide would crowd out the rows
	}
	var groups []block
	group := func(i, j int) {
		g := sub(b, i, j)
		if i >= nh {
			g.Prefix = head
		}
		groups = append(groups, g)
	}
	start, size := 0, len(head)+1
	for i := nh; i < len(b.Lines); i++ {
		n := len(b.Lines[i]) + 1
		if size+n > max && i > start && i > nh {
			group(start, i)
			start, size = i, len(head)+1
		}
		size += n
	}
	group(start, len(b.Lines))
	var out []block
	for _, g := range groups {
		if g.size() <= max {
			out = append(out, g)
			continue
		}
		// One row larger than the budget: cut it, each part still headed.
		prefix := g.Prefix
		g.Prefix = ""
		budget := max
		if prefix != "" {
			budget -= len(prefix) + 1
		}
		for _, p := range splitLinesTo(g, budget) {
			p.Prefix = prefix
			out = append(out, p)
		}
	}
	return out
}

func splitAtBlankLines(b block) []block {
	var out []block
	start := 0
	for i, l := range b.Lines {
		if strings.TrimSpace(l) == "" && i > start {
			out = append(out, sub(b, start, i))
			start = i + 1
		}
	}
	if start < len(b.Lines) {
		out = append(out, sub(b, start, len(b.Lines)))
	}
	return out
}

// mergeSmall joins neighbouring parts of one split block while they fit, so
// a function cut at blank lines does not become a dozen three-line chunks.
func mergeSmall(parts []block, max int) []block {
	var out []block
	for _, p := range parts {
		if n := len(out); n > 0 && out[n-1].exact() && p.exact() && out[n-1].size()+p.size()+1 <= max {
			last := &out[n-1]
			for last.End() < p.Start-1 {
				last.Lines = append(last.Lines, "")
			}
			last.Lines = append(last.Lines, p.Lines...)
			continue
		}
		out = append(out, p)
	}
	return out
}

func splitLinesTo(b block, max int) []block {
	var out []block
	start, size := 0, 0
	for i, l := range b.Lines {
		if size+len(l)+1 > max && i > start {
			out = append(out, sub(b, start, i))
			start, size = i, 0
		}
		size += len(l) + 1
	}
	out = append(out, sub(b, start, len(b.Lines)))
	var res []block
	for _, p := range out {
		if len(p.Lines) == 1 && len(p.Lines[0]) > max {
			res = append(res, splitLongLine(p, max)...)
		} else {
			res = append(res, p)
		}
	}
	return res
}

// sub is lines [i, j) of b, with the line numbers they have on disk.
func sub(b block, i, j int) block {
	s := b
	s.Lines = b.Lines[i:j]
	s.Title = b.Title
	if b.exact() {
		s.Start = b.Start + i
		return s
	}
	span := b.End() - b.Start + 1
	s.Start = b.Start + i*span/len(b.Lines)
	s.EndLine = max(s.Start, b.Start+(j*span-1)/len(b.Lines))
	return s
}

func splitLongLine(b block, max int) []block {
	var out []block
	line := b.Lines[0]
	for len(line) > max {
		cut := strings.LastIndexByte(line[:max], ' ')
		if cut <= max/2 {
			cut = validCut(line, max)
		}
		p := b
		p.Lines = []string{line[:cut]}
		out = append(out, p)
		line = strings.TrimLeft(line[cut:], " ")
	}
	p := b
	p.Lines = []string{line}
	return append(out, p)
}

// validCut backs off from n to the start of a UTF-8 sequence.
func validCut(s string, n int) int {
	for n > 1 && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

func makePiece(units []block, heading string) Chunk {
	var b strings.Builder
	sizes := map[blockKind]int{}
	for i, u := range units {
		if i > 0 {
			if u.Start > units[i-1].End()+1 || !u.exact() {
				b.WriteString("\n\n")
			} else {
				b.WriteString("\n")
			}
		}
		b.WriteString(u.text())
		sizes[u.Kind] += u.size()
	}
	kind := KindProse
	switch {
	case sizes[blockCode] > sizes[blockPara]+sizes[blockTable]:
		kind = KindCode
	case sizes[blockTable] > sizes[blockPara]+sizes[blockCode]:
		kind = KindTable
	}
	end := units[0].End()
	for _, u := range units {
		end = max(end, u.End())
	}
	return Chunk{Start: units[0].Start, End: end, Heading: heading, Kind: kind, Text: strings.Trim(b.String(), "\n")}
}

// EmbedText is what is embedded for a chunk: its breadcrumb, so that a
// section's context counts, then its text.
func (p Chunk) EmbedText() string {
	if p.Heading == "" {
		return p.Text
	}
	return p.Heading + "\n\n" + p.Text
}

// Hash identifies a chunk's embedding input; equal hashes share one
// stored vector, which is what makes re-indexing a changed file cheap.
func (p Chunk) Hash() string {
	sum := sha256.Sum256([]byte(p.EmbedText()))
	return hex.EncodeToString(sum[:16])
}
