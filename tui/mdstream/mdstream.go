// Package mdstream renders a markdown answer that grows token by token with
// glamour, at a per-call cost proportional to the unstable tail rather than to
// the whole answer, and byte-for-byte equal to rendering the whole answer.
// (Glamour itself is not quite deterministic: on a colour tie chroma picks a
// palette entry at random, see normalize in the tests. A cached code block
// keeps the colours it was first rendered with.)
//
// # How the output is composed
//
// Glamour renders every top-level block into one document buffer, then
// word-wraps that buffer and pipes it through a margin writer that indents and
// pads each line (ansi.BlockElement.Finish for the document node). Those
// writers are line-oriented state machines: their state is reset at every
// newline, except that a line may start before a block ends (a heading's
// styled trailing newline, a code block's margin after its last line leave a
// partial line that the next block continues and that is padded only when the
// next newline arrives). So rendering two halves separately and concatenating
// them is not exact, but restarting the writers at a newline is.
//
// The Renderer therefore keeps the output up to the last newline of the last
// stable segment (the "context"), and on every call renders the context
// together with the tail as one glamour document, skips the context's
// already-emitted lines and appends the rest. Re-rendering the context each
// call costs one segment, normally one block, and in exchange the result is
// exact with no knowledge of glamour's padding rules. When a new segment becomes stable it
// is rendered once, with the previous context in front for the same reason.
//
// Where the stable prefix ends is decided in boundary.go.
package mdstream

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Options for a renderer; a Renderer is not safe for concurrent use.
type Options struct {
	// Style is "dark", "light", or "notty" (no colour; used when NO_COLOR is
	// set); any glamour standard style name works.
	Style string
	Width int // word-wrap width in cells
}

// Renderer renders successive versions of one answer. The zero value is not
// usable; call New.
type Renderer struct {
	opt Options
	md  goldmark.Markdown // glamour's pipeline; nil until first use and after a render error
	// incremental is false for styles whose document prefix or suffix would be
	// repeated by every segment; such styles always render whole.
	incremental bool
	head, foot  string // the document's block prefix and suffix

	src       string // the previous call's text
	ctx       int    // start of the context: the last stable segment, re-rendered with the tail
	cut       int    // start of the unstable tail
	ctxBlocks int    // top-level blocks in src[ctx:cut]
	skip      int    // newlines of the context's output that out already holds
	out       strings.Builder
	ctxDefs   []parser.Reference // link reference definitions in src[:ctx]
	cutDefs   []parser.Reference // link reference definitions in src[:cut]
	// known holds the definitions the cached output was rendered against, and
	// folded is src[:cut] normalised like a link label; a definition that
	// appears or changes later invalidates the cache if its label occurs there.
	known  map[string]parser.Reference
	folded []byte
}

// New returns a Renderer for opt. An unknown style is reported by Render.
func New(opt Options) *Renderer {
	return &Renderer{opt: opt}
}

// SetOptions switches style or width; the cached rendering is dropped because
// every line of it depends on both.
func (r *Renderer) SetOptions(opt Options) {
	if opt != r.opt {
		*r = Renderer{opt: opt}
	}
}

// Render returns the rendering of md, the whole answer so far. Calls normally pass a text
// that extends the previous one; any other text (edited, shorter) just resets the cache.
func (r *Renderer) Render(md string) (string, error) {
	if r.md == nil {
		if err := r.build(); err != nil {
			return "", err
		}
	}
	if !strings.HasPrefix(md, r.src) {
		r.reset()
	}
	r.src = md
	out, err := r.render(md)
	if err != nil {
		// A failed render can leave glamour's block stack unbalanced.
		r.md = nil
		r.reset()
	}
	return out, err
}

// Full renders md from scratch with the same options (what Render must equal).
func Full(opt Options, md string) (string, error) {
	pool := termRenderers(opt)
	tr, _ := pool.Get().(*glamour.TermRenderer)
	if tr == nil {
		style, err := styleConfig(opt.Style)
		if err != nil {
			return "", err
		}
		tr, err = glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(opt.Width))
		if err != nil {
			return "", fmt.Errorf("mdstream: new glamour renderer: %w", err)
		}
	}
	out, err := tr.Render(md)
	if err != nil {
		return "", fmt.Errorf("mdstream: glamour render: %w", err)
	}
	pool.Put(tr)
	return out, nil
}

// fullPools caches glamour TermRenderers per Options: building one compiles
// the style, and one TermRenderer must not render concurrently.
var fullPools sync.Map // Options -> *sync.Pool

func termRenderers(opt Options) *sync.Pool {
	p, ok := fullPools.Load(opt)
	if !ok {
		p, _ = fullPools.LoadOrStore(opt, new(sync.Pool))
	}
	return p.(*sync.Pool)
}

// build builds the goldmark pipeline exactly as glamour.NewTermRenderer does
// (glamour.go in charm.land/glamour/v2 v2.0.1) with WithStandardStyle and
// WithWordWrap. Glamour keeps its pipeline private, and the incremental path
// needs its own parser.Context (for link references) and to render an edited
// AST; the tests compare every output with Full to catch any drift.
func (r *Renderer) build() error {
	style, err := styleConfig(r.opt.Style)
	if err != nil {
		return err
	}
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.DefinitionList),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
	ar := ansi.NewRenderer(ansi.Options{WordWrap: r.opt.Width, Styles: style})
	md.SetRenderer(renderer.NewRenderer(renderer.WithNodeRenderers(util.Prioritized(ar, 1000))))
	r.md = md
	doc := style.Document
	// The block prefix and suffix are written with the (empty) parent style,
	// so verbatim; a prefix or suffix inside the margin would repeat per segment.
	r.head, r.foot = doc.BlockPrefix, doc.BlockSuffix
	r.incremental = doc.Prefix == "" && doc.Suffix == ""
	r.reset()
	return nil
}

func (r *Renderer) reset() {
	r.ctx, r.cut, r.ctxBlocks, r.skip = 0, 0, 0, 0
	r.out.Reset()
	r.ctxDefs, r.cutDefs, r.known, r.folded = nil, nil, nil, nil
}

// render renders md, whose first r.cut bytes are cached, and moves the cut
// forward when more of md has become stable.
func (r *Renderer) render(md string) (string, error) {
	if !r.incremental {
		return r.renderWhole(md)
	}
	src := []byte(md[r.ctx:])
	pc := contextWith(r.ctxDefs)
	doc := r.parse(src, pc)
	refs := refMap(pc.References())
	advance := true
	if r.stale(refs) {
		// Streaming a definition that the cache uses: render whole until it
		// stops changing rather than re-caching everything on every token.
		r.reset()
		advance = false
		src = []byte(md)
		doc = r.parse(src, parser.NewContext())
	}
	r.known = refs
	if advance {
		moved, err := r.advance(md, doc, refs)
		if err != nil {
			return "", err
		}
		if moved {
			src = []byte(md[r.ctx:])
			doc = r.parse(src, contextWith(r.ctxDefs))
		}
	}
	o, err := r.renderDoc(src, doc, r.ctx > 0)
	if err != nil {
		return "", err
	}
	tail, ok := strings.CutPrefix(o, r.head)
	if ok {
		tail, ok = afterLines(tail, r.skip)
	}
	if !ok {
		// Not the shape this package relies on; stay correct, drop the cache.
		r.reset()
		return r.renderWhole(md)
	}
	return r.head + r.out.String() + tail, nil
}

func (r *Renderer) renderWhole(md string) (string, error) {
	src := []byte(md)
	return r.renderDoc(src, r.parse(src, parser.NewContext()), false)
}

func (r *Renderer) parse(src []byte, pc parser.Context) ast.Node {
	return r.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
}

// renderDoc renders a parsed segment as a glamour document. afterBlock says
// other blocks precede the segment in the answer: glamour separates a
// paragraph or heading from its predecessor only when it has a previous
// sibling, so an empty TextBlock (which glamour renders as nothing) stands in
// for them.
func (r *Renderer) renderDoc(src []byte, doc ast.Node, afterBlock bool) (string, error) {
	if afterBlock && doc.FirstChild() != nil {
		doc.InsertBefore(doc, doc.FirstChild(), ast.NewTextBlock())
	}
	var buf bytes.Buffer
	if err := r.md.Renderer().Render(&buf, src, doc); err != nil {
		return "", fmt.Errorf("mdstream: render markdown: %w", err)
	}
	return buf.String(), nil
}

// appendSegment renders src[r.ctx:c] (the context and a newly stable segment
// ending at c), parsed as doc with definitions pc, and caches its output up to
// the segment's last newline. It reports false if the output does not have
// the expected shape, leaving the cache untouched.
func (r *Renderer) appendSegment(md string, c int, doc ast.Node, pc parser.Context) (bool, error) {
	o, err := r.renderDoc([]byte(md[r.ctx:c]), doc, r.ctx > 0)
	if err != nil {
		return false, err
	}
	body, ok := strings.CutPrefix(o, r.head)
	if ok {
		body, ok = strings.CutSuffix(body, r.foot)
	}
	if ok {
		body, ok = afterLines(body, r.skip)
	}
	nl := strings.LastIndexByte(body, '\n')
	if !ok || nl < 0 {
		return false, nil
	}
	body = body[:nl+1]
	r.out.WriteString(body)
	r.folded = append(r.folded, foldLabel([]byte(md[r.cut:c]))...)
	r.ctxDefs, r.cutDefs = r.cutDefs, pc.References()
	r.ctx, r.cut, r.skip = r.cut, c, strings.Count(body, "\n")
	return true, nil
}

// afterLines returns s after its first n newlines.
func afterLines(s string, n int) (string, bool) {
	for ; n > 0; n-- {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return "", false
		}
		s = s[i+1:]
	}
	return s, true
}
