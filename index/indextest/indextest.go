// Package indextest is an in-memory store behind the store seam of package
// index (Store, Target, Reader, Writer), for tests of the code above the
// seam (BuildTo, the engine) that need no SQLite and no cluster. It is
// simple and honest: maps guarded by one mutex; a rebuild fills a new
// generation that Publish swaps in, while readers keep the one they
// opened; keyword search counts the terms of lore's analyser (package
// index/analysis) weighted by their rarity, vector search scans every
// vector, and index.FuseRRF fuses the two, as the other stores do. It
// passes the conformance suite (index/storetest), which is what makes it
// a fair stand-in.
//
// Two hooks let a test reach what a real store meets only by accident:
// Damage marks an index damaged, and Lose drops chunks a Writer took (a
// cluster node that lost a write), which its Publish then finds
// (index.ErrIncomplete).
package indextest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
)

// Store is a set of indexes in memory. The zero value is not usable: call
// New.
type Store struct {
	// Lose, when set, is asked about every chunk a Writer takes (its
	// file's path and its position in the file): true drops it, as a
	// node that acknowledged a write and lost it would. Set it before the
	// store is used.
	Lose func(path string, ord int) bool

	mu      sync.Mutex
	indexes map[string]*ix
	writing map[string]bool // indexes a Writer (or a Remove) holds
	// watched are the indexes whose watch lease is held, with what their
	// watcher last recorded.
	watched map[string]*index.Freshness
	gens    int // generations made, for their names
}

var (
	_ index.Store  = (*Store)(nil)
	_ index.Target = (*Store)(nil)
	_ index.Reader = (*Reader)(nil)
	_ index.Writer = (*Writer)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{indexes: map[string]*ix{}, writing: map[string]bool{}, watched: map[string]*index.Freshness{}}
}

// ix is one index: the generation readers use and a rebuild's.
type ix struct {
	name          string
	current, next *gen
	remembered    *index.Remembered
	damaged       string
}

// gen is one generation's data.
type gen struct {
	id        string
	meta      map[string]string
	sources   []index.Source
	docs      map[int64]*doc
	vectors   map[string][]float32 // by chunk hash
	lastDoc   int64
	lastChunk int64
	// unverified are the documents written since the last Publish, whose
	// chunks Publish counts.
	unverified map[int64]bool
}

type doc struct {
	src    index.Source
	path   string
	state  index.DocState
	want   int // chunks the Writer was given
	chunks []*chunk
}

type chunk struct {
	id    int64
	c     ingest.Chunk
	hash  string
	terms map[string]int // analysed, every field together
}

func (s *Store) newGen() *gen {
	s.gens++
	return &gen{id: "m" + strconv.Itoa(s.gens), meta: map[string]string{}, docs: map[int64]*doc{}, vectors: map[string][]float32{},
		unverified: map[int64]bool{}}
}

func (s *Store) Kind() string { return "memory" }

// Damage marks the index name damaged for reason: Open, Status, List and
// a refresh report it (index.ErrCorrupt), as a store that found its
// data broken would; a rebuild mends it.
func (s *Store) Damage(name, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.indexes[name]; x != nil {
		x.damaged = reason
	}
}

func (s *Store) damagedError(name, reason string) error {
	return &index.DamagedError{Index: name, Reason: reason}
}

func noIndex(name string) error {
	return fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
}

func (s *Store) Names(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := []string{}
	for n := range s.indexes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (s *Store) List(ctx context.Context) ([]index.Info, error) {
	names, _ := s.Names(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []index.Info{}
	for _, n := range names {
		out = append(out, s.info(s.indexes[n]))
	}
	return out, nil
}

// info describes x; under s.mu.
func (s *Store) info(x *ix) index.Info {
	in := index.Info{Name: x.name, Path: "memory:" + x.name, Built: x.current != nil, Damaged: x.damaged}
	if g := x.current; g != nil && x.damaged == "" {
		in.Embedder = g.meta["embedder"]
		in.BuiltAt = unixTime(g.meta["built_at"])
		in.Chunks = g.chunkCount()
		in.SizeBytes = g.size()
	}
	return in
}

func (s *Store) Generation(_ context.Context, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.indexes[name]; x != nil && x.current != nil {
		return x.current.id
	}
	return ""
}

func (s *Store) Open(_ context.Context, name string) (index.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.indexes[name]
	switch {
	case x == nil || x.current == nil:
		return nil, noIndex(name)
	case x.damaged != "":
		return nil, s.damagedError(name, x.damaged)
	}
	return &Reader{s: s, x: x, g: x.current}, nil
}

// Status is name's Status; a damaged index has one too (its name,
// sources and Damaged).
func (s *Store) Status(ctx context.Context, name string) (index.Status, error) {
	s.mu.Lock()
	x := s.indexes[name]
	if x == nil || x.current == nil {
		s.mu.Unlock()
		return index.Status{}, noIndex(name)
	}
	r := &Reader{s: s, x: x, g: x.current}
	s.mu.Unlock()
	return r.Status(ctx)
}

func (s *Store) Remembered(_ context.Context, name string) (index.Remembered, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.indexes[name]
	if x == nil {
		return index.Remembered{}, noIndex(name)
	}
	return x.remember(), nil
}

// remember is what a rebuild of x starts from; under s.mu.
func (x *ix) remember() index.Remembered {
	if x.remembered != nil {
		r := *x.remembered
		r.Sources = slices.Clone(r.Sources)
		return r
	}
	r := index.Remembered{Sources: []string{}}
	if g := firstOf(x.current, x.next); g != nil {
		for _, src := range g.sources {
			r.Sources = append(r.Sources, src.Root)
		}
		r.Embedder = g.meta["embedder"]
	}
	return r
}

func firstOf(a, b *gen) *gen {
	if a != nil {
		return a
	}
	return b
}

func locked(name string) error {
	return fmt.Errorf("%w: another build is writing index %q: wait for it to finish", index.ErrLocked, name)
}

// Remove deletes name once confirm agrees, holding it against builds
// while confirm asks.
func (s *Store) Remove(_ context.Context, name string, confirm func(index.Info) error) (index.Info, error) {
	s.mu.Lock()
	x := s.indexes[name]
	switch {
	case x == nil:
		s.mu.Unlock()
		return index.Info{}, fmt.Errorf("%w %q: see `lore index list`", index.ErrNoIndex, name)
	case s.writing[name]:
		s.mu.Unlock()
		return index.Info{}, fmt.Errorf("cannot remove index %q: %w", name, locked(name))
	}
	s.writing[name] = true
	in := s.info(x)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.writing, name)
		s.mu.Unlock()
	}()
	if confirm != nil {
		if err := confirm(in); err != nil {
			return in, err
		}
	}
	s.mu.Lock()
	delete(s.indexes, name)
	s.mu.Unlock()
	return in, nil
}

// Build creates or refreshes an index with the shared pipeline.
func (s *Store) Build(ctx context.Context, opt index.BuildOptions) (index.Summary, error) {
	return index.BuildTo(ctx, s, opt)
}

// BeginWrite holds req.Name for one Writer and picks the generation it
// writes: an interrupted rebuild's, a new one for a rebuild, else the
// current one (a first build's is current at once, so that an
// interrupted first build is resumed, as the other stores do).
func (s *Store) BeginWrite(_ context.Context, req index.WriteRequest) (index.Writer, error) {
	s.mu.Lock()
	x := s.indexes[req.Name]
	switch {
	case s.writing[req.Name]:
		s.mu.Unlock()
		return nil, locked(req.Name)
	case x != nil && x.damaged != "" && !req.Rebuild:
		s.mu.Unlock()
		return nil, s.damagedError(req.Name, x.damaged)
	}
	s.writing[req.Name] = true
	exists := x != nil && (x.current != nil || x.next != nil)
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		delete(s.writing, req.Name)
		s.mu.Unlock()
	}
	if req.Before != nil {
		if err := req.Before(exists); err != nil {
			release()
			return nil, err
		}
	}
	notice := req.Notice
	if notice == nil {
		notice = func(string) {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if x == nil {
		x = &ix{name: req.Name}
		s.indexes[req.Name] = x
	}
	w := &Writer{s: s, x: x}
	switch {
	case x.next != nil:
		w.g = x.next
		notice("resuming an interrupted rebuild")
	case x.current == nil:
		w.g = s.newGen()
		x.current = w.g
	case req.Rebuild:
		if req.KeepSources {
			w.previous = x.remember().Sources
		}
		w.g = s.newGen()
		x.next = w.g
	default:
		w.g = x.current
	}
	return w, nil
}

// Writer is one build's access to an index. Every call takes the store's
// lock, so a reader sees a file before or after a WriteFiles, never half.
type Writer struct {
	s        *Store
	x        *ix
	g        *gen
	previous []string
	once     sync.Once
}

// Prepare analyses the chunks on the build's worker.
func (w *Writer) Prepare(f *index.FileUpdate) {
	terms := make([]map[string]int, len(f.Chunks))
	for i, c := range f.Chunks {
		terms[i] = analyse(f.Path, c)
	}
	f.Prepared = terms
}

func analyse(path string, c ingest.Chunk) map[string]int {
	d := analysis.Analyze(analysis.Fields{Path: path, Heading: c.Heading, Body: c.Text, Structured: ingest.Structured(path)})
	out := make(map[string]int, len(d.Terms))
	for _, t := range d.Terms {
		out[t.Term] = int(t.Path) + int(t.Heading) + int(t.Body) + int(t.Idents)
	}
	return out
}

func (w *Writer) PreviousSources(context.Context) ([]string, error) { return w.previous, nil }

func (w *Writer) Meta(_ context.Context, key string) (string, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.g.meta[key], nil
}

func (w *Writer) SetMeta(_ context.Context, kv ...string) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for i := 0; i+1 < len(kv); i += 2 {
		w.g.meta[kv[i]] = kv[i+1]
	}
	return nil
}

func (w *Writer) Sources(context.Context) ([]index.Source, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return slices.Clone(w.g.sources), nil
}

func (w *Writer) AddSource(_ context.Context, root string) (index.Source, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, src := range w.g.sources {
		if src.Root == root {
			return src, nil
		}
	}
	src := index.Source{ID: int64(len(w.g.sources) + 1), Root: root}
	w.g.sources = append(w.g.sources, src)
	return src, nil
}

func (w *Writer) Documents(_ context.Context, sourceID int64) (map[string]index.DocState, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	out := map[string]index.DocState{}
	for _, d := range w.g.docs {
		if d.src.ID == sourceID {
			out[d.path] = d.state
		}
	}
	return out, nil
}

func (w *Writer) MissingVectors(_ context.Context, hashes []string) (map[string]bool, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	out := map[string]bool{}
	for _, h := range hashes {
		if _, ok := w.g.vectors[h]; !ok {
			out[h] = true
		}
	}
	return out, nil
}

func (w *Writer) PendingVectors(_ context.Context, sourceID int64) (map[string]bool, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	out := map[string]bool{}
	for _, d := range w.g.docs {
		if d.src.ID != sourceID {
			continue
		}
		for _, c := range d.chunks {
			if _, ok := w.g.vectors[c.hash]; !ok {
				out[d.path] = true
				break
			}
		}
	}
	return out, nil
}

func (w *Writer) PutVectors(_ context.Context, hashes []string, vecs [][]float32) error {
	if len(hashes) != len(vecs) {
		return fmt.Errorf("%d hashes for %d vectors", len(hashes), len(vecs))
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for i, h := range hashes {
		if _, ok := w.g.vectors[h]; !ok {
			w.g.vectors[h] = slices.Clone(vecs[i])
		}
	}
	return nil
}

// find is the document of source id at path; under s.mu.
func (g *gen) find(sourceID int64, path string) *doc {
	for _, d := range g.docs {
		if d.src.ID == sourceID && d.path == path {
			return d
		}
	}
	return nil
}

func (g *gen) source(id int64) (index.Source, bool) {
	for _, s := range g.sources {
		if s.ID == id {
			return s, true
		}
	}
	return index.Source{}, false
}

func (w *Writer) WriteFiles(_ context.Context, files []index.FileUpdate) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	now := time.Now().UnixNano()
	for _, f := range files {
		src, ok := w.g.source(f.SourceID)
		if !ok {
			return fmt.Errorf("write %s: no source %d", f.Path, f.SourceID)
		}
		d := w.g.find(f.SourceID, f.Path)
		if d == nil {
			w.g.lastDoc++
			d = &doc{src: src, path: f.Path}
			w.g.docs[w.g.lastDoc] = d
			d.state.ID = w.g.lastDoc
		}
		d.state = index.DocState{ID: d.state.ID, Size: f.Size, MTimeNS: f.MTimeNS, Hash: f.Hash, Status: f.Status, Reason: f.Reason,
			Chunker: f.Chunker, IndexedAt: now}
		prepared, _ := f.Prepared.([]map[string]int)
		d.chunks, d.want = nil, len(f.Chunks)
		for i, c := range f.Chunks {
			if w.s.Lose != nil && w.s.Lose(f.Path, i) {
				continue
			}
			terms := analyse(f.Path, c)
			if i < len(prepared) {
				terms = prepared[i]
			}
			w.g.lastChunk++
			d.chunks = append(d.chunks, &chunk{id: w.g.lastChunk, c: c, hash: c.Hash(), terms: terms})
		}
		w.g.unverified[d.state.ID] = true
	}
	return nil
}

func (w *Writer) TouchFiles(_ context.Context, files []index.FileUpdate) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	now := time.Now().UnixNano()
	for _, f := range files {
		if d := w.g.find(f.SourceID, f.Path); d != nil {
			d.state.Size, d.state.MTimeNS, d.state.IndexedAt = f.Size, f.MTimeNS, now
		}
	}
	return nil
}

func (w *Writer) RemoveDocuments(_ context.Context, ids []int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, id := range ids {
		delete(w.g.docs, id)
		delete(w.g.unverified, id)
	}
	return nil
}

func (w *Writer) Remember(_ context.Context, r index.Remembered) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	r.Sources = slices.Clone(r.Sources)
	w.x.remembered = &r
	return nil
}

// Publish counts the chunks of the documents written since the last
// Publish: a document that lost some is forgotten, so that the next pass
// writes it again, and the build hears index.ErrIncomplete. Otherwise it
// drops the vectors no chunk uses and, for a rebuild, makes its
// generation the one readers open.
func (w *Writer) Publish(_ context.Context, _ index.PublishOptions) (files, chunks int, err error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	g := w.g
	var lost []string
	missing := 0
	for id := range g.unverified {
		d := g.docs[id]
		if d != nil && len(d.chunks) != d.want {
			lost = append(lost, d.path)
			missing += d.want - len(d.chunks)
			delete(g.docs, id)
		}
	}
	g.unverified = map[int64]bool{}
	if len(lost) > 0 {
		sort.Strings(lost)
		return 0, 0, fmt.Errorf("%w: %d chunks of %d files (%s)", index.ErrIncomplete, missing, len(lost), strings.Join(lost, ", "))
	}
	used := map[string]bool{}
	for _, d := range g.docs {
		for _, c := range d.chunks {
			used[c.hash] = true
		}
	}
	for h := range g.vectors {
		if !used[h] {
			delete(g.vectors, h)
		}
	}
	g.meta["built_at"] = strconv.FormatInt(time.Now().Unix(), 10)
	if w.x.next == g {
		w.x.current, w.x.next, w.x.damaged = g, nil, ""
	}
	for _, d := range g.docs {
		if d.state.Status == index.StatusIndexed {
			files++
		}
	}
	return files, g.chunkCount(), nil
}

// Close lets the next writer in.
func (w *Writer) Close() error {
	w.once.Do(func() {
		w.s.mu.Lock()
		delete(w.s.writing, w.x.name)
		w.s.mu.Unlock()
	})
	return nil
}

func (g *gen) chunkCount() int {
	n := 0
	for _, d := range g.docs {
		n += len(d.chunks)
	}
	return n
}

func (g *gen) size() int64 {
	var n int64
	for _, d := range g.docs {
		for _, c := range d.chunks {
			n += int64(len(c.c.Text))
		}
	}
	return n + int64(len(g.vectors)*4*g.dim())
}

func (g *gen) dim() int {
	d, _ := strconv.Atoi(g.meta["dim"])
	return d
}

// sortedDocs are g's documents by source and path; under s.mu.
func (g *gen) sortedDocs() []*doc {
	out := make([]*doc, 0, len(g.docs))
	for _, d := range g.docs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].src.ID != out[j].src.ID {
			return out[i].src.ID < out[j].src.ID
		}
		return out[i].path < out[j].path
	})
	return out
}

func unixTime(v string) *time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	t := time.Unix(n, 0)
	return &t
}

// Reader is one generation of one index, as it was opened: a rebuild
// published since does not change what it reads.
type Reader struct {
	s *Store
	x *ix
	g *gen
}

func (r *Reader) Generation() string { return r.g.id }
func (r *Reader) Close() error       { return nil }

func (r *Reader) EmbedderModel(context.Context) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if m := r.g.meta["embedder"]; m != "" {
		return m
	}
	return "none"
}

// SearchVector ranks chunks by their query terms (each weighted by its
// rarity, BM25's idf) and, given vec, by the dot product with their
// vectors, and fuses the two by RRF.
func (r *Reader) SearchVector(_ context.Context, query string, vec []float32, opt index.SearchOptions, embed time.Duration) (index.Results, error) {
	opt = opt.WithDefaults()
	res := index.Results{Mode: "lexical", Timings: index.Timings{Embed: embed}}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	g := r.g
	var all []*chunk
	where := map[int64]*doc{}
	for _, d := range g.sortedDocs() {
		for _, c := range d.chunks {
			all = append(all, c)
			where[c.id] = d
		}
	}
	var vecRanks [][]int64
	if vec != nil && len(g.vectors) > 0 {
		if len(vec) != g.dim() {
			return res, fmt.Errorf("%w: the query has %d dimensions, index %q %d", index.ErrDimension, len(vec), r.x.name, g.dim())
		}
		res.Mode = "hybrid"
		if opt.NoLexical {
			res.Mode = "vector"
		}
		vecRanks = vectorRanks(g, all, vec, opt.Depth)
	}
	var lexIDs []int64
	var cover []float64
	if !opt.NoLexical {
		lexIDs, cover = lexical(all, query, opt.Depth)
	}
	for _, f := range index.FuseRRF(lexIDs, cover, vecRanks, opt.RRFK, opt.Limit) {
		d := where[f.ID]
		var c *chunk
		for _, x := range d.chunks {
			if x.id == f.ID {
				c = x
			}
		}
		h := hit(d, c)
		h.Score, h.LexicalRank, h.VectorRank, h.Coverage = f.Score, f.Lexical, f.Vector, f.Coverage
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

func hit(d *doc, c *chunk) index.Hit {
	return index.Hit{ChunkID: c.id, Source: d.src.Dir(d.path), Path: d.path, Start: c.c.Start, End: c.c.End, Heading: c.c.Heading,
		Kind: c.c.Kind, Text: c.c.Text}
}

// vectorRanks ranks the distinct vectors by their dot product with vec,
// best first, each rank naming the chunks that share it.
func vectorRanks(g *gen, all []*chunk, vec []float32, depth int) [][]int64 {
	byHash := map[string][]int64{}
	for _, c := range all {
		if _, ok := g.vectors[c.hash]; ok {
			byHash[c.hash] = append(byHash[c.hash], c.id)
		}
	}
	type scored struct {
		ids   []int64
		score float64
	}
	var ranks []scored
	for h, ids := range byHash {
		var dot float64
		for i, x := range g.vectors[h] {
			dot += float64(x) * float64(vec[i])
		}
		ranks = append(ranks, scored{ids, dot})
	}
	sort.Slice(ranks, func(i, j int) bool {
		if ranks[i].score != ranks[j].score {
			return ranks[i].score > ranks[j].score
		}
		return ranks[i].ids[0] < ranks[j].ids[0]
	})
	out := make([][]int64, 0, min(depth, len(ranks)))
	for _, s := range ranks[:min(depth, len(ranks))] {
		out = append(out, s.ids)
	}
	return out
}

// lexical ranks the chunks that hold a query term by the sum, over the
// terms, of the term's count in the chunk times its idf; a plain word
// also counts as the part of a camelCase identifier.
func lexical(all []*chunk, query string, depth int) ([]int64, []float64) {
	terms := analysis.Query(query)
	df := map[string]int{}
	for _, c := range all {
		for _, t := range terms {
			if tf(c, t) > 0 {
				df[t]++
			}
		}
	}
	n := float64(len(all))
	type scored struct {
		c     *chunk
		score float64
	}
	var hits []scored
	for _, c := range all {
		score := 0.0
		for _, t := range terms {
			if k := tf(c, t); k > 0 {
				d := float64(df[t])
				score += float64(k) * math.Log(1+(n-d+0.5)/(d+0.5))
			}
		}
		if score > 0 {
			hits = append(hits, scored{c, score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].c.id < hits[j].c.id
	})
	hits = hits[:min(depth, len(hits))]
	words := analysis.QueryWords(query)
	ids, cover := make([]int64, len(hits)), make([]float64, len(hits))
	for i, h := range hits {
		ids[i] = h.c.id
		cover[i] = analysis.Coverage(words, func(t string) bool { return h.c.terms[t] > 0 })
	}
	return ids, cover
}

func tf(c *chunk, term string) int {
	n := c.terms[term]
	if !strings.HasPrefix(term, analysis.IdentPrefix) {
		n += c.terms[analysis.PartPrefix+term]
	}
	return n
}

// document finds the indexed document p names: relative to a source, or
// absolute; ErrNotIndexed for anything else. Under s.mu.
func (r *Reader) document(p string) (*doc, error) {
	g := r.g
	roots := make([]string, len(g.sources))
	for i, s := range g.sources {
		roots[i] = s.Root
	}
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("%w: the path is empty", index.ErrNotIndexed)
	}
	if !filepath.IsAbs(p) && !filepath.IsLocal(p) {
		return nil, fmt.Errorf("%w: %s leads outside the index's sources (%s)", index.ErrNotIndexed, p, strings.Join(roots, ", "))
	}
	var found []*doc
	for _, d := range g.sortedDocs() {
		if d.state.Status != index.StatusIndexed {
			continue
		}
		if filepath.IsAbs(p) && d.src.Join(d.path) == filepath.Clean(p) || !filepath.IsAbs(p) && d.path == filepath.ToSlash(filepath.Clean(p)) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w %q: %s is not a file it holds (its sources: %s)", index.ErrNotIndexed, r.x.name, p, strings.Join(roots, ", "))
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%w: %s is in more than one source of index %q: give the source joined to the path", index.ErrNotIndexed, p, r.x.name)
}

// ReadPassage stitches lines start to end of the document p names from
// its chunks (it never reads the file).
func (r *Reader) ReadPassage(_ context.Context, p string, start, end, maxLines int) (index.Passage, error) {
	if start < 0 || end < 0 || (end > 0 && end < start) {
		return index.Passage{}, fmt.Errorf("lines %d-%d: give 1 <= start_line <= end_line", start, end)
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	d, err := r.document(p)
	if err != nil {
		return index.Passage{}, err
	}
	out := index.Passage{Source: d.src.Dir(d.path), Path: d.path, FromChunks: true}
	s, e := max(start, 1), end
	if e == 0 {
		e = math.MaxInt32
	}
	var texts []string
	for _, c := range d.chunks {
		if c.c.End < s || c.c.Start > e {
			continue
		}
		if out.Start == 0 || c.c.Start < out.Start {
			out.Start = c.c.Start
		}
		if maxLines > 0 && out.End > 0 && c.c.End-out.Start+1 > maxLines {
			out.Truncated = true
			break
		}
		out.End = max(out.End, c.c.End)
		texts = append(texts, c.c.Text)
	}
	if len(texts) == 0 {
		return out, fmt.Errorf("%s: the index holds no text at lines %d-%d", d.src.Join(d.path), s, e)
	}
	out.Text = strings.Join(texts, "\n\n")
	return out, nil
}

// SampleChunks returns up to n chunks of at least minChars characters,
// chosen at random, the same ones for the same seed.
func (r *Reader) SampleChunks(_ context.Context, n, minChars int, seed uint64) ([]index.Hit, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var hits []index.Hit
	for _, d := range r.g.sortedDocs() {
		for _, c := range d.chunks {
			if len(c.c.Text) >= minChars {
				hits = append(hits, hit(d, c))
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(hits), func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
	return hits[:min(n, len(hits))], nil
}

func (r *Reader) Files(context.Context) ([]index.File, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []index.File
	for _, d := range r.g.sortedDocs() {
		if d.state.Status == index.StatusIndexed {
			out = append(out, index.File{Source: d.src.Dir(d.path), Path: d.path})
		}
	}
	return out, nil
}

func (r *Reader) Chunks(context.Context) (int, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.g.chunkCount(), nil
}

// Changed tells whether the document rel under dir differs on disk from
// what the index holds: false when its source is not on this machine,
// true when the index does not hold it, else as a build decides.
func (r *Reader) Changed(_ context.Context, dir, rel string) (bool, error) {
	r.s.mu.Lock()
	var src *index.Source
	for i, s := range r.g.sources {
		if s.Root == dir || s.Root == filepath.Join(dir, rel) {
			src = &r.g.sources[i]
			break
		}
	}
	var state *index.DocState
	if src != nil {
		if d := r.g.find(src.ID, rel); d != nil && d.state.Status == index.StatusIndexed {
			st := d.state
			state = &st
		}
	}
	r.s.mu.Unlock()
	if src == nil {
		return true, nil // no longer indexed
	}
	if _, err := os.Stat(src.Root); err != nil {
		return false, nil
	}
	if state == nil {
		return true, nil
	}
	return index.FileChanged(filepath.Join(dir, rel), *state), nil
}

// Check reports the damage Store.Damage recorded.
func (r *Reader) Check(context.Context) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.x.damaged != "" && r.x.current == r.g {
		return r.s.damagedError(r.x.name, r.x.damaged)
	}
	return nil
}

func (r *Reader) CheckGraph(ctx context.Context) (index.GraphStatus, error) {
	e := r.EmbedderModel(ctx)
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	n := len(r.g.vectors)
	return index.GraphStatus{Needed: e != "none", Present: true, Nodes: n, Vectors: n}, nil
}

// Status counts what the generation holds; Changed is index.Changes.
func (r *Reader) Status(ctx context.Context) (index.Status, error) {
	st := index.Status{Index: r.x.name, Path: "memory:" + r.x.name + "/" + r.g.id, Sources: []string{}, Skipped: []index.SkippedFile{},
		Changed: []index.Change{}, ChunksByKind: map[string]int{}, DocumentsByKind: map[string]int{}}
	r.s.mu.Lock()
	for _, s := range r.g.sources {
		st.Sources = append(st.Sources, s.Root)
	}
	r.s.mu.Unlock()
	var d *index.DamagedError
	if err := r.Check(ctx); errors.As(err, &d) {
		st.Damaged = d.Reason
		return st, nil
	}
	r.s.mu.Lock()
	g := r.g
	sources := slices.Clone(g.sources)
	docs := map[int64]map[string]index.DocState{}
	for _, doc := range g.sortedDocs() {
		if docs[doc.src.ID] == nil {
			docs[doc.src.ID] = map[string]index.DocState{}
		}
		docs[doc.src.ID][doc.path] = doc.state
		switch doc.state.Status {
		case index.StatusSkipped:
			st.Skipped = append(st.Skipped, index.SkippedFile{Path: doc.src.Join(doc.path), Reason: doc.state.Reason})
		case index.StatusIndexed:
			st.Documents++
			st.DocumentsByKind[ingest.FileKind(doc.path)]++
		}
		for _, c := range doc.chunks {
			st.ChunksByKind[c.c.Kind]++
		}
	}
	st.Chunks, st.Vectors, st.SizeBytes = g.chunkCount(), len(g.vectors), g.size()
	st.Embedder, st.Chunker, st.Dimension = cmpString(g.meta["embedder"], "none"), g.meta["chunker"], g.dim()
	st.BuiltAt = unixTime(g.meta["built_at"])
	r.s.mu.Unlock()

	var err error
	if st.Changed, err = index.Changes(ctx, sources, ingest.WalkOptions{}, func(src index.Source) (map[string]index.DocState, error) { return docs[src.ID], nil }); err != nil {
		return st, err
	}
	sort.Slice(st.Skipped, func(i, j int) bool { return st.Skipped[i].Path < st.Skipped[j].Path })
	return st, nil
}

func cmpString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Freshness is what name's watcher last recorded.
func (s *Store) Freshness(_ context.Context, name string) (index.Freshness, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.watched[name]; f != nil {
		return *f, nil
	}
	return index.Freshness{State: index.WatchStopped}, nil
}

// Watch takes name's watch lease.
func (s *Store) Watch(_ context.Context, name string) (index.WatchLease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.indexes[name]; x == nil || x.current == nil {
		return nil, noIndex(name)
	}
	if s.watched[name] != nil {
		return nil, fmt.Errorf("%w: another watcher is watching index %q", index.ErrLocked, name)
	}
	s.watched[name] = &index.Freshness{State: index.WatchWatching}
	return &lease{s: s, name: name}, nil
}

type lease struct {
	s      *Store
	name   string
	closed bool
}

func (l *lease) Record(_ context.Context, f index.Freshness) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.closed {
		return errors.New("watch lease closed")
	}
	l.s.watched[l.name] = &f
	return nil
}

func (l *lease) Close() error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if !l.closed {
		l.closed = true
		delete(l.s.watched, l.name)
	}
	return nil
}
