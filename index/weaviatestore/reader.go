package weaviatestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/bm25"
	"github.com/lore-cli/lore/index/ingest"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
)

// Reader is one generation of one index in the cluster. Safe for
// concurrent use: it holds names and the meta it was opened with.
type Reader struct {
	s                     *Store
	name, gen             string
	chunks, docs, vectors string

	mu sync.Mutex
	v  *view

	rank rankCache
}

// view is the generation's meta keys and sources as last read. A build
// that refreshes this generation (not a rebuild) adds sources and, in a
// first build, the embedder's dimension while readers have it open: the
// view is read again when it is older than viewTTL.
type view struct {
	meta    map[string]string
	sources []index.Source
	roots   map[int64]string
	at      time.Time
}

const viewTTL = 5 * time.Second

func newView(g *genState) *view {
	v := &view{meta: g.Meta, sources: g.Sources, roots: map[int64]string{}, at: time.Now()}
	for _, src := range g.Sources {
		v.roots[src.ID] = src.Root
	}
	return v
}

// view is the current view, read again when stale; the old one serves
// when the cluster cannot say.
func (r *Reader) view(ctx context.Context) *view {
	r.mu.Lock()
	v := r.v
	r.mu.Unlock()
	if time.Since(v.at) < viewTTL {
		return v
	}
	st, err := r.s.readState(ctx, r.name, r.s.cfg.ReadConsistency)
	if err == nil && st != nil && st.Gens[r.gen] != nil {
		v = newView(st.gen(r.gen))
	} else {
		v = &view{meta: v.meta, sources: v.sources, roots: v.roots, at: time.Now()}
	}
	r.mu.Lock()
	r.v = v
	r.mu.Unlock()
	return v
}

var _ index.Reader = (*Reader)(nil)

// Generation names what this Reader reads: its chunks collection.
func (r *Reader) Generation() string { return r.chunks }

// Close releases nothing: the Store owns the connections.
func (r *Reader) Close() error { return nil }

// EmbedderModel is the model that embedded the index, or "none".
func (r *Reader) EmbedderModel(ctx context.Context) string {
	if m := r.view(ctx).meta["embedder"]; m != "" {
		return m
	}
	return "none"
}

func (r *Reader) dim(ctx context.Context) int {
	d, _ := strconv.Atoi(r.view(ctx).meta["dim"])
	return d
}

// damaged turns "the collection is gone" into the index's DamagedError:
// an index is a cache of its sources, and the fix is to rebuild it; or,
// when a rebuild replaced this generation since it was opened, to open
// it again.
func (r *Reader) damaged(ctx context.Context, err error, what string) error {
	if err == nil || !isMissingClass(err) {
		return r.s.wrap(err, what)
	}
	if st, _ := r.s.readState(ctx, r.name, r.s.cfg.ReadConsistency); st != nil && st.Current != "" && st.Current != r.gen {
		return &index.DamagedError{Index: r.name, Reason: "a rebuild replaced the generation this reader opened", Fix: "open it again", Err: err}
	}
	return &index.DamagedError{Index: r.name, Reason: "its collections are missing from the cluster", Err: err}
}

// chunkObj is a chunk object as read back.
type chunkObj struct {
	ChunkID     textInt `json:"chunk_id"`
	DocID       textInt `json:"doc_id"`
	SourceID    int64   `json:"source_id"`
	Source      string  `json:"source"`
	Path        string  `json:"path"`
	Ord         int     `json:"ord"`
	StartLine   int     `json:"start_line"`
	EndLine     int     `json:"end_line"`
	Heading     string  `json:"heading"`
	Kind        string  `json:"kind"`
	Text        string  `json:"text"`
	Identifiers string  `json:"identifiers"`
	Chars       int     `json:"chars"`
	Additional  struct {
		ID    string `json:"id"`
		Score string `json:"score"`
	} `json:"_additional"`
}

var hitFields = append(fields("chunk_id", "source_id", "source", "path", "start_line", "end_line", "heading", "kind", "text", "identifiers"),
	additional("id", "score"))

func (v *view) hit(c chunkObj) index.Hit {
	root := c.Source
	if root == "" {
		root = v.roots[c.SourceID]
	}
	return index.Hit{ChunkID: int64(c.ChunkID), Source: sourceDir(root, c.Path), Path: c.Path, Start: c.StartLine, End: c.EndLine,
		Heading: c.Heading, Kind: c.Kind, Text: c.Text}
}

// bm25Props are the properties BM25 reads, with their boosts: a heading or
// an identifier that matches says more than the body, a camelCase part
// less (bm25.PartWeight, as lore's scorer weighs it).
var bm25Props = []string{"terms", "heading_terms^2", "identifiers^2", "path_terms", fmt.Sprintf("part_terms^%g", bm25.PartWeight)}

// partMark starts each term of part_terms and each part a query searches
// there: the query's text is searched in every property, and unmarked, a
// question's word would match a part as a word and an abbreviation it is
// searched as (conn for "connections") a text that says it as a word,
// which the local postings keep apart (analysis.PartPrefix). No term of
// the other properties holds it: analysis.Words and the squashed
// identifiers are letters and digits.
const partMark = "_"

// partToken is a camelCase part as part_terms holds it.
func partToken(part string) string { return partMark + part }

// SearchVector searches by BM25 and, when vec is given and the index has
// vectors, by vector, each for opt.Depth candidates, and fuses the two
// with lore's RRF (score = sum of 1/(k + rank)), as the local store does;
// or, with Config.Hybrid "weaviate", asks Weaviate's own hybrid search.
func (r *Reader) SearchVector(ctx context.Context, query string, vec []float32, opt index.SearchOptions, embed time.Duration) (index.Results, error) {
	opt = opt.WithDefaults()
	res := index.Results{Mode: "lexical", Timings: index.Timings{Embed: embed}}
	v := r.view(ctx)
	dim := r.dim(ctx)
	useVec := vec != nil && dim > 0
	if useVec && len(vec) != dim {
		return res, fmt.Errorf("%w: the query has %d dimensions, index %q %d", index.ErrDimension, len(vec), r.name, dim)
	}
	q := cleanQuery(query)
	lexical := !opt.NoLexical && strings.TrimSpace(q) != ""
	if useVec {
		res.Mode = "hybrid"
		if opt.NoLexical {
			res.Mode = "vector"
		}
	}
	if useVec && lexical && r.s.cfg.Hybrid == HybridWeaviate {
		return r.weaviateHybrid(ctx, v, query, q, vec, opt, res)
	}
	var lex, vecHits []chunkObj
	var lexErr, vecErr, statErr error
	var st termStats
	var wg sync.WaitGroup
	bq := bm25.NewQuery(query)
	if lexical {
		wg.Go(func() {
			t := time.Now()
			lexErr = r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
				return b.WithBM25((&graphql.BM25ArgumentBuilder{}).WithQuery(bm25Query(q, bq)).WithProperties(bm25Props...)).
					WithFields(hitFields...).WithLimit(candidates(opt.Depth))
			}, &lex)
			res.Timings.Lexical = time.Since(t)
		})
		if len(bq.Read) > 0 {
			wg.Go(func() { st, statErr = r.stats(ctx, bq) })
		}
	}
	if useVec {
		wg.Go(func() {
			t := time.Now()
			vecErr = r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
				return b.WithNearVector((&graphql.NearVectorArgumentBuilder{}).WithVector(vec)).WithFields(hitFields...).WithLimit(opt.Depth)
			}, &vecHits)
			res.Timings.Vector = time.Since(t)
		})
	}
	wg.Wait()
	if err := errors.Join(lexErr, vecErr); err != nil {
		return res, r.damaged(ctx, err, "search index "+strconv.Quote(r.name))
	}
	t := time.Now()
	objs := map[int64]chunkObj{}
	var lexIDs []int64
	var cover []float64
	if statErr == nil && len(bq.Read) > 0 {
		var kept []ranked
		kept, res.Known = rank(bq, lex, st, opt.Depth, !opt.NoProximity)
		for _, k := range kept {
			lexIDs, cover, objs[int64(k.obj.ChunkID)] = append(lexIDs, int64(k.obj.ChunkID)), append(cover, k.cover), k.obj
		}
	} else {
		// The counts did not come (a node slow or down): the cluster's
		// own order, rather than no keyword results. A node that refuses
		// the sample's read refuses it every time: said once.
		if limit, ok := maxResultsRefused(statErr); ok && r.s.maxResultsSaid.CompareAndSwap(false, true) {
			res.Notice = "weaviate: keyword results are in the cluster's own order: " + maxResultsAdvice(limit)
		}
		words := analysis.QueryWords(query)
		held := map[string]bool{}
		for _, o := range lex[:min(len(lex), opt.Depth)] {
			lexIDs, cover, objs[int64(o.ChunkID)] = append(lexIDs, int64(o.ChunkID)), append(cover, coverage(words, o, held)), o
		}
		res.Known = analysis.Coverage(words, func(t string) bool { return held[t] })
	}
	res.Timings.Lexical += time.Since(t) // lore's ranking is part of the keyword stage
	t = time.Now()
	vecRanks := make([][]int64, len(vecHits))
	for i, o := range vecHits {
		vecRanks[i] = []int64{int64(o.ChunkID)}
		if _, ok := objs[int64(o.ChunkID)]; !ok {
			objs[int64(o.ChunkID)] = o
		}
	}
	for _, c := range index.FuseRRF(lexIDs, cover, vecRanks, opt.RRFK, opt.Limit) {
		h := v.hit(objs[c.ID])
		h.Score, h.LexicalRank, h.VectorRank, h.Coverage = c.Score, c.Lexical, c.Vector, c.Coverage
		res.Hits = append(res.Hits, h)
	}
	res.Timings.Fuse = time.Since(t)
	return res, nil
}

// weaviateHybrid is SearchVector by Weaviate's hybrid search: its score,
// no per-retriever ranks.
func (r *Reader) weaviateHybrid(ctx context.Context, v *view, query, q string, vec []float32, opt index.SearchOptions, res index.Results) (index.Results, error) {
	t := time.Now()
	var objs []chunkObj
	err := r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
		return b.WithHybrid((&graphql.HybridArgumentBuilder{}).WithQuery(bm25Query(q, bm25.NewQuery(query))).WithVector(vec).WithAlpha(0.5).
			WithFusionType(graphql.RelativeScore).WithProperties(bm25Props)).WithFields(hitFields...).WithLimit(opt.Limit)
	}, &objs)
	if err != nil {
		return res, r.damaged(ctx, err, "search index "+strconv.Quote(r.name))
	}
	res.Timings.Vector = time.Since(t)
	words := analysis.QueryWords(query)
	for _, o := range objs {
		h := v.hit(o)
		h.Score, _ = strconv.ParseFloat(o.Additional.Score, 64)
		h.Coverage = coverage(words, o, nil)
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// get runs a Get on the chunks collection.
func (r *Reader) get(ctx context.Context, build func(*graphql.GetBuilder) *graphql.GetBuilder, out any) error {
	return r.s.get(ctx, r.chunks, build, out)
}

// maxQuery bounds the query text sent (runes).
const maxQuery = 1000

// cleanQuery keeps a query's words and the punctuation identifiers are
// made of. The client puts the query in the GraphQL text with Go's %q,
// whose escapes GraphQL does not all read; nothing lore searches by is
// lost.
func cleanQuery(q string) string {
	q = strings.ToValidUTF8(q, " ")
	q = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r):
			return r
		case strings.ContainsRune("_.-/:#@$+'", r):
			return r
		}
		return ' '
	}, q)
	q = strings.Join(strings.Fields(q), " ")
	if rs := []rune(q); len(rs) > maxQuery {
		q = string(rs[:maxQuery])
	}
	return q
}

// bm25Query is the query and its identifiers as the identifiers property
// holds them (OLLAMA_HOST → ollamahost), so that a query naming one finds
// the chunks that hold it first; then what lore's scorer also reads (bq):
// the identifiers its plain words may be (keepalive for --keep-alive, a
// name a table defines), each word's other forms (repository for repo),
// and the camelCase parts each word is searched among, itself and those
// forms (partToken).
func bm25Query(q string, bq bm25.Query) string {
	var b strings.Builder
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
	for _, t := range strings.Fields(analysis.TermText(q) + " " + analysis.IdentifierText(q)) {
		add(t)
	}
	for _, t := range bq.Terms {
		if id, ok := strings.CutPrefix(t.Term, analysis.IdentPrefix); ok && t.Word != "" {
			add(id)
		}
	}
	for _, t := range bq.Read {
		switch part, ok := strings.CutPrefix(t, analysis.PartPrefix); {
		case ok:
			add(partToken(part))
		case !strings.HasPrefix(t, analysis.IdentPrefix):
			add(t) // a word's other form (repositori for repo)
		}
	}
	return b.String()
}

// coverage is analysis.Coverage over the chunk's terms as the analyser
// gives them, the local store's postings for the same chunk. held, when
// not nil, gathers the terms of every candidate (Results.Known).
func coverage(words []analysis.QueryWord, o chunkObj, held map[string]bool) float64 {
	if len(words) == 0 {
		return 0
	}
	d := analysis.Analyze(analysis.Fields{Path: o.Path, Heading: o.Heading, Body: o.Text, Structured: ingest.Structured(o.Path)})
	terms := make(map[string]bool, len(d.Terms))
	for _, t := range d.Terms {
		terms[t.Term] = true
		if held != nil {
			held[t.Term] = true
		}
	}
	return analysis.Coverage(words, func(t string) bool { return terms[t] })
}

func sourceDir(root, rel string) string  { return index.Source{Root: root}.Dir(rel) }
func joinSource(root, rel string) string { return index.Source{Root: root}.Join(rel) }

// document finds the document p names (index.FindDocument).
func (r *Reader) document(ctx context.Context, p string) (index.DocPath, *docObj, error) {
	return index.FindDocument(r.name, p, r.view(ctx).sources, func(cands []index.DocPath) ([]*docObj, error) {
		ids := make([]string, len(cands))
		for i, c := range cands {
			ids[i] = docUUID(c.Source.ID, c.Rel)
		}
		var docs []docObj
		err := r.s.get(ctx, r.docs, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idIn(ids)).WithFields(fields(docFields...)...).WithLimit(len(ids))
		}, &docs)
		if err != nil {
			return nil, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
		}
		held := make([]*docObj, len(cands))
		for i, c := range cands {
			for _, d := range docs {
				if d.SourceID == c.Source.ID && d.Path == c.Rel && d.Status == index.StatusIndexed {
					held[i] = &d
				}
			}
		}
		return held, nil
	})
}

// maxPassageChunks bounds the chunks one passage reads.
const maxPassageChunks = 2000

// ReadPassage returns lines start to end (1-based, inclusive; 0 for the
// first or the last line), at most maxLines (0: no limit), of the document
// p names, rebuilt from the chunks the index holds: the cluster's index
// may have been built on another machine, so the file is not read.
func (r *Reader) ReadPassage(ctx context.Context, p string, start, end, maxLines int) (index.Passage, error) {
	if err := index.CheckLineRange(start, end); err != nil {
		return index.Passage{}, err
	}
	doc, d, err := r.document(ctx, p)
	if err != nil {
		return index.Passage{}, err
	}
	out := index.Passage{Source: doc.Dir(), Path: doc.Rel}
	s, e := index.LineRange(start, end, 1<<31-1)
	var chunks []chunkObj
	err = r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
		return b.WithWhere(and(idIs("doc_id", int64(d.DocID)),
			filters.Where().WithPath([]string{"end_line"}).WithOperator(filters.GreaterThanEqual).WithValueInt(int64(s)),
			filters.Where().WithPath([]string{"start_line"}).WithOperator(filters.LessThanEqual).WithValueInt(int64(e)))).
			WithFields(append(fields("ord", "start_line", "end_line", "text"), additional("id"))...).WithLimit(maxPassageChunks)
	}, &chunks)
	if err != nil {
		return out, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
	}
	sort.Slice(chunks, func(i, j int) bool { return chunks[i].Ord < chunks[j].Ord })
	pcs := make([]index.PassageChunk, len(chunks))
	for i, c := range chunks {
		pcs[i] = index.PassageChunk{Start: c.StartLine, End: c.EndLine, Text: c.Text}
	}
	return index.StitchPassage(out, pcs, start, end, maxLines)
}

// SampleChunks returns up to n chunks of at least minChars characters,
// chosen at random, reproducibly for a seed.
func (r *Reader) SampleChunks(ctx context.Context, n, minChars int, seed uint64) ([]index.Hit, error) {
	var ids []int64
	err := r.s.scan(ctx, r.chunks, []string{"chunk_id", "chars"}, maxScan, func(o map[string]any) error {
		var c chunkObj
		if err := remarshal(o, &c); err != nil {
			return err
		}
		if c.Chars >= minChars {
			ids = append(ids, int64(c.ChunkID))
		}
		return nil
	})
	if err != nil {
		return nil, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = ids[:min(n, len(ids))]
	if len(ids) == 0 {
		return nil, nil
	}
	byID := map[int64]chunkObj{}
	for i := 0; i < len(ids); i += idGroup {
		group := ids[i:min(i+idGroup, len(ids))]
		var objs []chunkObj
		err := r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idsIn("chunk_id", group)).WithFields(hitFields...).WithLimit(len(group) * 2)
		}, &objs)
		if err != nil {
			return nil, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
		}
		for _, o := range objs {
			byID[int64(o.ChunkID)] = o
		}
	}
	v := r.view(ctx)
	out := make([]index.Hit, 0, len(ids))
	for _, id := range ids {
		if o, ok := byID[id]; ok {
			out = append(out, v.hit(o))
		}
	}
	return out, nil
}

// Files lists the documents the index holds (not the skipped ones).
func (r *Reader) Files(ctx context.Context) ([]index.File, error) {
	type file struct {
		src int64
		f   index.File
	}
	var fs []file
	roots := r.view(ctx).roots
	err := r.s.scanDocs(ctx, r.docs, func(d docObj) {
		if d.Status == index.StatusIndexed {
			fs = append(fs, file{d.SourceID, index.File{Source: sourceDir(roots[d.SourceID], d.Path), Path: d.Path}})
		}
	})
	if err != nil {
		return nil, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].src != fs[j].src {
			return fs[i].src < fs[j].src
		}
		return fs[i].f.Path < fs[j].f.Path
	})
	out := make([]index.File, len(fs))
	for i, f := range fs {
		out[i] = f.f
	}
	return out, nil
}

// Chunks counts the chunks (a bounded call: see Store.count).
func (r *Reader) Chunks(ctx context.Context) (int, error) {
	n, err := r.s.count(ctx, r.chunks)
	if err != nil {
		return 0, r.damaged(ctx, err, "count chunks")
	}
	return n, nil
}

// Changed tells whether the document rel under dir differs on disk from
// what the index holds: false when its source is not on this machine (an
// index built elsewhere), else as a build decides (gone, another size, or
// another mtime with other bytes).
func (r *Reader) Changed(ctx context.Context, dir, rel string) (bool, error) {
	var src *index.Source
	sources := r.view(ctx).sources
	for i, s := range sources {
		if s.Root == dir || s.Root == filepath.Join(dir, rel) {
			src = &sources[i]
			break
		}
	}
	if src == nil {
		return true, nil // no longer indexed
	}
	if _, err := os.Stat(src.Root); err != nil {
		return false, nil
	}
	var docs []docObj
	err := r.s.get(ctx, r.docs, func(b *graphql.GetBuilder) *graphql.GetBuilder {
		return b.WithWhere(idIn([]string{docUUID(src.ID, rel)})).WithFields(fields(docFields...)...).WithLimit(1)
	}, &docs)
	if err != nil {
		return false, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
	}
	if len(docs) == 0 || docs[0].Status != index.StatusIndexed {
		return true, nil
	}
	return index.FileChanged(filepath.Join(dir, rel), docs[0].state()), nil
}

// Status gathers the index's numbers; Changed is index.Changes: what
// `lore index` on this machine would change.
func (r *Reader) Status(ctx context.Context) (index.Status, error) {
	st := index.Status{Index: r.name, Path: r.s.endpoints() + " " + r.chunks, Sources: []string{}, Skipped: []index.SkippedFile{},
		Changed: []index.Change{}, ChunksByKind: map[string]int{}, DocumentsByKind: map[string]int{}}
	v := r.view(ctx)
	for _, s := range v.sources {
		st.Sources = append(st.Sources, s.Root)
	}
	if err := r.Check(ctx); err != nil {
		var d *index.DamagedError
		if errors.As(err, &d) {
			st.Damaged = d.Reason
			return st, nil
		}
		return st, err
	}
	held := map[int64]map[string]index.DocState{}
	err := r.s.scanDocs(ctx, r.docs, func(d docObj) {
		root := v.roots[d.SourceID]
		if held[d.SourceID] == nil {
			held[d.SourceID] = map[string]index.DocState{}
		}
		held[d.SourceID][d.Path] = d.state()
		switch d.Status {
		case index.StatusSkipped:
			st.Skipped = append(st.Skipped, index.SkippedFile{Path: joinSource(root, d.Path), Reason: d.Reason})
		case index.StatusIndexed:
			st.Documents++
			st.DocumentsByKind[ingest.FileKind(d.Path)]++
		}
	})
	if err != nil {
		return st, r.damaged(ctx, err, "read index "+strconv.Quote(r.name))
	}
	walk := ingest.WalkOptions{}
	if rem, err := r.s.Remembered(ctx, r.name); err == nil {
		walk = rem.Walk()
	}
	if st.Changed, err = index.Changes(ctx, v.sources, walk, func(src index.Source) (map[string]index.DocState, error) { return held[src.ID], nil }); err != nil {
		return st, err
	}
	if st.Chunks, err = r.Chunks(ctx); err != nil {
		return st, err
	}
	if st.Vectors, err = r.s.count(ctx, r.vectors); err != nil {
		return st, r.damaged(ctx, err, "count vectors")
	}
	st.Embedder = r.EmbedderModel(ctx)
	st.Chunker = v.meta["chunker"]
	st.Dimension = r.dim(ctx)
	st.BuiltAt = unixTime(v.meta["built_at"])
	st.ChunksByKind = r.chunksByKind(ctx)
	sort.Slice(st.Skipped, func(i, j int) bool { return st.Skipped[i].Path < st.Skipped[j].Path })
	return st, nil
}

// chunksByKind counts chunks by kind with a bounded Aggregate; empty when
// the cluster cannot say in time (a node down: see Store.count).
func (r *Reader) chunksByKind(ctx context.Context) map[string]int {
	out := map[string]int{}
	r.s.mu.Lock()
	off := time.Now().Before(r.s.aggregateOff)
	r.s.mu.Unlock()
	if off {
		return out
	}
	actx, cancel := context.WithTimeout(ctx, min(r.s.cfg.Timeout, 5*time.Second))
	defer cancel()
	err := r.s.pool.do(actx, func(ctx context.Context, c *wv.Client) error {
		resp, err := c.GraphQL().Aggregate().WithClassName(r.chunks).WithGroupBy("kind").WithFields(
			graphql.Field{Name: "groupedBy", Fields: fields("value")},
			graphql.Field{Name: "meta", Fields: fields("count")}).Do(ctx)
		if err != nil {
			return err
		}
		var rows map[string][]struct {
			GroupedBy struct{ Value string } `json:"groupedBy"`
			Meta      struct{ Count int }    `json:"meta"`
		}
		if err := decodeGQL(resp, "Aggregate", &rows); err != nil {
			return err
		}
		for _, row := range rows[r.chunks] {
			out[row.GroupedBy.Value] = row.Meta.Count
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && (errors.Is(err, ErrUnreachable) || unreachable(err)) {
		r.s.mu.Lock()
		r.s.aggregateOff = time.Now().Add(time.Minute)
		r.s.mu.Unlock()
	}
	return out
}

// CheckGraph checks the vector side: the chunks collection is there, and
// how many vectors the index holds.
func (r *Reader) CheckGraph(ctx context.Context) (index.GraphStatus, error) {
	var gs index.GraphStatus
	e := r.EmbedderModel(ctx)
	gs.Needed = e != "none" && e != ""
	cl, err := r.s.getClass(ctx, r.chunks)
	if err != nil {
		return gs, r.s.wrap(err, "read the schema")
	}
	gs.Present = cl != nil
	if !gs.Present {
		if gs.Needed {
			gs.Problem = "collection " + r.chunks + " is missing: rebuild the index (lore index --rebuild)"
		}
		return gs, nil
	}
	if gs.Nodes, err = r.s.count(ctx, r.chunks); err != nil {
		return gs, r.s.wrap(err, "count chunks")
	}
	if gs.Vectors, err = r.s.count(ctx, r.vectors); err != nil {
		return gs, r.damaged(ctx, err, "count vectors")
	}
	return gs, nil
}

// Check tells whether the index is whole: its three collections exist
// (ErrCorrupt, as a DamagedError, when one is gone) and a node answers.
func (r *Reader) Check(ctx context.Context) error {
	for _, c := range []string{r.chunks, r.docs, r.vectors} {
		cl, err := r.s.getClass(ctx, c)
		if err != nil {
			return r.s.wrap(err, "read the schema")
		}
		if cl == nil {
			return &index.DamagedError{Index: r.name, Reason: "collection " + c + " is missing from the cluster"}
		}
	}
	return nil
}

// remarshal converts a decoded JSON object into a struct.
func remarshal(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
