package mdstream

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

// advance moves the cut to the start of the last top-level block that may
// still change, one segment per block boundary so the context stays small.
// doc is src[r.ctx:] parsed; refs are all definitions of md.
//
// A boundary before block i is taken only when no append can change how the
// blocks before it render:
//
//   - Only complete lines are parsed. How the line being typed parses can
//     change with its next byte ("```" opens a fence, "```x`" does not; "2"
//     is text, "2." continues an ordered list across a blank line), while a
//     complete line that closed a block closed it for good: CommonMark never
//     reopens a block.
//   - Every block but the last is then closed, with two goldmark exceptions
//     found by looking at closed siblings: a ": description" line after a
//     paragraph turns it into a definition term even across a blank line, and
//     a paragraph right after a definition list joins that list. Closed
//     blocks never change, but the last one can vanish (a paragraph that
//     becomes link reference definitions, "[1]:" + "\nhttp://x"), exposing
//     the paragraph before it; so no boundary goes before a last paragraph
//     starting with "[", or between a definition list and a paragraph.
//   - The block must start on the boundary line and parse the same from there
//     as in the whole text. Goldmark records no block positions, so the line
//     is found from the first content segment, and the segment is re-parsed
//     alone and compared block by block with the whole-text parse; this
//     catches blocks whose opening line carries no content (an empty list
//     item, a fence without info string).
//   - The line before the boundary is blank, or the previous block cannot be
//     continued by any line (a heading, rule, fenced or indented code, HTML
//     block). Otherwise the boundary line interrupted an open paragraph, and
//     a line that interrupts a paragraph is not always parsed as it would be
//     on its own.
//   - The block is not an HTML block. Glamour starts every other block with a
//     newline, but writes an HTML block's text straight after the previous
//     block's partial last line, so that line wraps differently when the
//     segment is rendered on its own (see mdstream.go on partial lines).
//
// Link reference definitions are the one way later text changes earlier
// blocks; they are tracked separately (see stale).
func (r *Renderer) advance(md string, doc ast.Node, refs map[string]parser.Reference) (bool, error) {
	end := strings.LastIndexByte(md, '\n') + 1
	if end <= r.cut || doc.ChildCount() < r.ctxBlocks+2 {
		return false, nil
	}
	base := r.ctx
	src := []byte(md[base:end])
	if end < len(md) {
		doc = r.parse(src, parser.NewContext())
	}
	var bl []ast.Node
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		bl = append(bl, n)
	}
	moved := false
	ctxIdx, first := 0, r.ctxBlocks // bl[ctxIdx:first] is the context, bl[first:] the tail
	for i := first + 1; i < len(bl); i++ {
		c, ok := firstLine(bl[i], src)
		if !ok || base+c <= r.cut || !boundaryOK(bl, i, src, c) {
			continue
		}
		pc := &laterRefs{Context: contextWith(r.ctxDefs), later: refs}
		seg := r.parse([]byte(md[r.ctx:base+c]), pc)
		if !sameBlocks(seg, bl[ctxIdx:i], r.ctx-base) {
			continue
		}
		ok, err := r.appendSegment(md, base+c, seg, pc)
		if err != nil {
			return moved, err
		}
		if !ok {
			// The segment's output has no line of its own to end the cache
			// on (glamour writes an HTML block without a newline); let it
			// grow to the next boundary.
			continue
		}
		moved = true
		r.ctxBlocks = i - first
		ctxIdx, first = first, i
	}
	return moved, nil
}

// boundaryOK applies the rules on the blocks around a boundary before bl[i],
// whose first line starts at src[c:].
func boundaryOK(bl []ast.Node, i int, src []byte, c int) bool {
	prev, b := bl[i-1], bl[i]
	if _, ok := b.(*ast.HTMLBlock); ok {
		return false
	}
	_, para := b.(*ast.Paragraph)
	if _, ok := prev.(*east.DefinitionList); ok && para {
		return false
	}
	if para && i == len(bl)-1 && bytes.HasPrefix(bytes.TrimLeft(src[c:], " \t"), []byte("[")) {
		return false
	}
	switch prev.(type) {
	case *ast.Heading, *ast.ThematicBreak, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
		return true
	}
	return blankLineBefore(src, c)
}

func blankLineBefore(src []byte, c int) bool {
	if c == 0 {
		return false
	}
	prev := src[:c-1]
	return len(bytes.Trim(prev[bytes.LastIndexByte(prev, '\n')+1:], " \t\r")) == 0
}

// firstLine returns the start of the line holding b's first content, which is
// b's first line unless that line has no content (then the caller's re-parse
// rejects the boundary).
func firstLine(b ast.Node, src []byte) (int, bool) {
	pos := -1
	see := func(p int) {
		if pos < 0 || p < pos {
			pos = p
		}
	}
	_ = ast.Walk(b, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			see(n.Lines().At(0).Start)
		}
		switch n := n.(type) {
		case *ast.Text:
			see(n.Segment.Start)
		case *ast.FencedCodeBlock:
			if n.Info != nil {
				see(n.Info.Segment.Start)
			} else if n.Lines().Len() > 0 {
				// The opening fence is the line before the first code line.
				see(lineStart(src, lineStart(src, n.Lines().At(0).Start)-1))
			}
		}
		return ast.WalkContinue, nil
	})
	if pos < 0 {
		return 0, false
	}
	return lineStart(src, pos), true
}

func lineStart(src []byte, p int) int {
	if p <= 0 {
		return 0
	}
	return bytes.LastIndexByte(src[:p], '\n') + 1
}

// sameBlocks reports whether doc's top-level blocks are want, block for block
// down to line segments, with doc's offsets shifted by shift.
func sameBlocks(doc ast.Node, want []ast.Node, shift int) bool {
	got := blockChildren(doc)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !sameBlock(got[i], want[i], shift) {
			return false
		}
	}
	return true
}

// sameBlock compares block structure only: inline content follows from the
// lines and the link definitions, which are tracked separately.
func sameBlock(a, b ast.Node, shift int) bool {
	if a.Kind() != b.Kind() || a.Lines().Len() != b.Lines().Len() {
		return false
	}
	for i := 0; i < a.Lines().Len(); i++ {
		sa, sb := a.Lines().At(i), b.Lines().At(i)
		if sa.Start+shift != sb.Start || sa.Stop+shift != sb.Stop || sa.Padding != sb.Padding {
			return false
		}
	}
	ca, cb := blockChildren(a), blockChildren(b)
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if !sameBlock(ca[i], cb[i], shift) {
			return false
		}
	}
	return true
}

func blockChildren(n ast.Node) []ast.Node {
	var out []ast.Node
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			out = append(out, c)
		}
	}
	return out
}

// stale reports whether a link reference definition appeared, changed or
// disappeared since the cache was rendered, under a label that may occur in
// the cached text. A definition can sit anywhere after its uses, and its
// destination streams in token by token, so this is checked on every call.
// The label test is a conservative substring search on folded text.
func (r *Renderer) stale(refs map[string]parser.Reference) bool {
	if r.cut == 0 {
		return false
	}
	used := func(label string) bool { return bytes.Contains(r.folded, []byte(label)) }
	for label, ref := range refs {
		if old, ok := r.known[label]; (!ok || !sameRef(old, ref)) && used(label) {
			return true
		}
	}
	for label := range r.known {
		if _, ok := refs[label]; !ok && used(label) {
			return true
		}
	}
	return false
}

func sameRef(a, b parser.Reference) bool {
	return bytes.Equal(a.Destination(), b.Destination()) && bytes.Equal(a.Title(), b.Title())
}

// foldLabel normalises text as goldmark normalises link labels
// (util.ToLinkReference), so a label used in the text is a substring of it.
func foldLabel(b []byte) []byte {
	return util.ReplaceSpaces(util.DoFullUnicodeCaseFolding(b), ' ')
}

func refMap(refs []parser.Reference) map[string]parser.Reference {
	m := make(map[string]parser.Reference, len(refs))
	for _, ref := range refs {
		m[util.ToLinkReference(ref.Label())] = ref
	}
	return m
}

// contextWith returns a parser context that already knows the definitions of
// the text before the parsed segment; added first, they win over later
// duplicates as in a whole-text parse.
func contextWith(defs []parser.Reference) parser.Context {
	pc := parser.NewContext()
	for _, d := range defs {
		pc.AddReference(d)
	}
	return pc
}

// laterRefs resolves the labels a segment uses but the answer defines after
// it, so the segment renders as it does inside the whole text.
type laterRefs struct {
	parser.Context
	later map[string]parser.Reference
}

func (c *laterRefs) Reference(label string) (parser.Reference, bool) {
	if ref, ok := c.Context.Reference(label); ok {
		return ref, true
	}
	ref, ok := c.later[label]
	return ref, ok
}
