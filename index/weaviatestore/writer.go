package weaviatestore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-openapi/strfmt"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
	"golang.org/x/sync/errgroup"
)

// A writer's lease: held in the index's meta object, renewed while the
// Writer is open, given back by Close. A writer killed without Close
// leaves it until it expires, unless it ran on this machine and its
// process is gone (then it is taken over at once). A writer whose
// renewals failed until its lease lapsed (a laptop asleep, the cluster
// out of reach) and another lore took it over finds out at its next
// renewal and writes nothing more (see renew).
//
// The times are a Store's (leaseTimes), not package variables, so that a
// test shortens them for its own stores while another store's renewal
// still runs.
type leaseTimes struct {
	ttl   time.Duration // how long a lease lasts unrenewed
	renew time.Duration // how often its holder renews it
	// pause waits out leaseSettle before a lease just written is read
	// back (settle); a test of two contenders ends the first one's
	// pause once the other has written, rather than wait a pause long
	// enough for a loaded machine.
	pause func(context.Context) error
}

func defaultLeaseTimes() leaseTimes {
	return leaseTimes{ttl: 2 * time.Minute, renew: 30 * time.Second,
		pause: func(ctx context.Context) error { return sleep(ctx, leaseSettle) }}
}

// expiry is when a lease written now expires, in Unix milliseconds.
func (lt leaseTimes) expiry() int64 { return time.Now().Add(lt.ttl).UnixMilli() }

// newHolder names one lease: two builds of one index in one process (lore
// serve or mcp with writes allowed) are refused as two processes are.
func (s *Store) newHolder() string {
	return fmt.Sprintf("%s #%d", s.holder, s.leases.Add(1))
}

// leaseHeld is ErrLocked when another writer's lease on st is live. A
// lease of this Store's whose Writer is closed is not: its release failed
// (a node down), and BuildTo's second pass must not wait it out.
func (s *Store) leaseHeld(st *state) error {
	if st.LockHolder == "" || time.Now().UnixMilli() >= st.LockExpires || holderGone(st.LockHolder) {
		return nil
	}
	s.mu.Lock()
	ours := strings.HasPrefix(st.LockHolder, s.holder+" #") && !s.writing[st.LockHolder]
	s.mu.Unlock()
	if ours {
		return nil
	}
	return fmt.Errorf("%w: %s is writing it (its lease runs until %s): wait for that build to end",
		index.ErrLocked, clip(st.LockHolder), time.UnixMilli(st.LockExpires).Format("15:04:05"))
}

// holderGone tells whether a lease holder ("host pid N (...)") ran on
// this machine and its process no longer exists.
func holderGone(holder string) bool {
	host, rest, ok := strings.Cut(holder, " pid ")
	me, _ := os.Hostname()
	if !ok || host != me {
		return false
	}
	pidText, _, _ := strings.Cut(rest, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// readyNodes counts the cluster's HEALTHY nodes.
func (s *Store) readyNodes(ctx context.Context) (int, error) {
	var resp *models.NodesStatusResponse
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		var err error
		resp, err = c.Cluster().NodesStatusGetter().Do(ctx)
		return err
	})
	if err != nil {
		return 0, s.wrap(err, "read the cluster's nodes")
	}
	n := 0
	for _, nd := range resp.Nodes {
		if nd.Status != nil && *nd.Status == models.NodeStatusStatusHEALTHY {
			n++
		}
	}
	return n, nil
}

// Writer is one build's access to an index in the cluster.
type Writer struct {
	s                     *Store
	name, gen, holder     string
	chunks, docs, vectors string
	notice                func(string)
	inherited             bool       // the generation held writes no Publish checked when this one began
	mu                    sync.Mutex // st: the lease renewal writes it beside the build
	st                    *state
	lostTo                atomic.Pointer[string] // who took the lease over, nil while it is held: nothing is written after
	cache                 map[string][]float32   // vectors PutVectors stored in this run, until used
	orphans               map[string]bool        // hashes whose vectors may be unused now (see gcVectors); under mu
	written               map[int64]docObj       // documents this run wrote, for verify
	recorded              map[int64]string       // the version each document's record had when Documents read it
	stop, stopped         chan struct{}
	closeOnce             sync.Once
	// deferVectors: chunks whose vectors are not there are written
	// without them and their documents listed as pending.
	deferVectors bool
}

var _ index.Writer = (*Writer)(nil)

// BeginWrite opens req.Name for writing: it takes the index's lease,
// decides the generation (a rebuild's new one, an interrupted rebuild's,
// or the current one) and creates its collections.
func (s *Store) BeginWrite(ctx context.Context, req index.WriteRequest) (index.Writer, error) {
	return s.beginWrite(ctx, req)
}

func (s *Store) beginWrite(ctx context.Context, req index.WriteRequest) (*Writer, error) {
	st, err := s.readState(ctx, req.Name, s.cfg.WriteConsistency)
	if err != nil {
		return nil, err
	}
	if st != nil {
		if err := s.leaseHeld(st); err != nil {
			return nil, fmt.Errorf("index %q: %w", req.Name, err)
		}
	}
	exists := st != nil && (st.Current != "" || st.Next != "")
	if req.Before != nil {
		if err := req.Before(exists); err != nil {
			return nil, err
		}
	}
	if st == nil {
		st = &state{Name: req.Name}
	}
	factor := s.cfg.Replication
	if factor == 0 {
		n, err := s.readyNodes(ctx)
		if err != nil {
			return nil, err
		}
		factor = max(1, min(3, n))
	}
	if err := s.ensureClass(ctx, classDef(metaClass(s.cfg.CollectionPrefix), "", factor)); err != nil {
		return nil, err
	}
	notice := req.Notice
	if notice == nil {
		notice = func(string) {}
	}
	if req.DiscardNext {
		st.Next = "" // dropStale deletes its collections
	}
	if st.Next != "" {
		// A rebuild that another lore began cannot be finished by this
		// one when its collections are not as this one creates them:
		// it starts over (dropStale deletes them), as resuming it would
		// have finished it.
		if err := s.checkFormat(ctx, req.Name, s.class(req.Name, st.Next, kindChunks)); errors.Is(err, index.ErrOldFormat) {
			notice("the interrupted rebuild was begun by another lore: starting it over")
			st.Next, req.Rebuild = "", true
		}
	}
	var gen string
	switch {
	case st.Next != "":
		gen = st.Next // finish the interrupted rebuild first
		notice("resuming an interrupted rebuild")
	case st.Current == "":
		// Nothing to protect readers from: publish at once, so that an
		// interrupted first build is resumed rather than started over.
		gen = newGeneration()
		st.Current = gen
	case req.Rebuild:
		gen = newGeneration()
		st.Next = gen
	default:
		gen = st.Current
		// A refresh writes into what readers see: its collections must be
		// there. Created again empty, the documents the index records
		// would have no chunks, and nothing would notice.
		for _, k := range []string{kindChunks, kindDocs} {
			have, err := s.getClass(ctx, s.class(req.Name, gen, k))
			if err != nil {
				return nil, s.wrap(err, "read the schema")
			}
			if have == nil {
				return nil, &index.DamagedError{Index: req.Name, Reason: "collection " + s.class(req.Name, gen, k) + " is missing from the cluster"}
			}
			if k == kindChunks {
				if err := chunksFormat(req.Name, have); err != nil {
					return nil, err
				}
			}
		}
	}
	gs := st.gen(gen)
	if gs.Replication == 0 {
		gs.Replication = factor
	}
	// An earlier writer cut short before its Publish left its mark: this
	// Publish checks every document written since, not only its own.
	inherited := gs.Unverified != 0
	if !inherited {
		// Kept until a Publish checks what was written since (see verify).
		gs.Unverified = time.Now().UnixNano()
	}
	holder := s.newHolder()
	st.LockHolder, st.LockExpires = holder, s.lease.expiry()
	if err := s.writeState(ctx, st); err != nil {
		s.giveBack(ctx, req.Name, holder) // it may have landed
		return nil, err
	}
	if err := s.settleLease(ctx, req.Name, holder); err != nil {
		return nil, lockedWrap(err, "index %q: %w", req.Name)
	}
	s.mu.Lock()
	s.writing[holder] = true
	s.mu.Unlock()
	w := &Writer{
		s: s, name: req.Name, gen: gen, st: st, notice: notice, holder: holder, inherited: inherited,
		chunks: s.class(req.Name, gen, kindChunks), docs: s.class(req.Name, gen, kindDocs), vectors: s.class(req.Name, gen, kindVectors),
		cache: map[string][]float32{}, orphans: map[string]bool{}, written: map[int64]docObj{}, recorded: map[int64]string{}, stop: make(chan struct{}), stopped: make(chan struct{}),
		deferVectors: req.DeferVectors,
	}
	go w.renew()
	for _, k := range kinds {
		if err := s.ensureClass(ctx, classDef(s.class(req.Name, gen, k), k, gs.Replication)); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.dropStale(ctx); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// dropStale deletes the collections of generations neither Current nor
// Next names: what a Publish cut short after its flip left behind.
func (w *Writer) dropStale(ctx context.Context) error {
	w.mu.Lock()
	if err := w.held(); err != nil {
		w.mu.Unlock()
		return err
	}
	var stale []string
	for g := range w.st.Gens {
		if g != w.st.Current && g != w.st.Next {
			stale = append(stale, g)
		}
	}
	w.mu.Unlock()
	for _, g := range stale {
		for _, k := range kinds {
			if err := w.s.deleteClass(ctx, w.s.class(w.name, g, k)); err != nil {
				return err
			}
		}
		w.mu.Lock()
		delete(w.st.Gens, g)
		err := w.writeState(ctx)
		w.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// renew extends the lease until Close, or until it finds the lease taken
// over: then it stops, and every later write of the Writer fails
// (lostErr), as a watcher that lost its lease stops (watchLease.write).
func (w *Writer) renew() {
	defer close(w.stopped)
	renewLoop(w.s.lease.renew, w.stop, func() bool {
		w.renewOnce()
		return w.lostTo.Load() != nil
	})
}

// renewOnce reads the lease back and, still this writer's, writes it with
// a new expiry. Written blind, a lease that lapsed and was taken over
// would be taken back, and two builds would write one index. The read is
// outside mu, so the build's writes do not wait on it; the write is
// under it, as st is written whole and an older copy must not land after
// a newer one.
func (w *Writer) renewOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), w.s.cfg.Timeout)
	defer cancel()
	back, err := w.s.readState(ctx, w.name, w.s.cfg.WriteConsistency)
	if err != nil {
		return
	}
	if back == nil || back.LockHolder != w.holder {
		lost := "another lore, which removed the index,"
		if back != nil {
			lost = "another lore (" + clip(back.LockHolder) + ")"
		}
		w.lostTo.Store(&lost)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.st.LockExpires = w.s.lease.expiry()
	w.s.writeState(ctx, w.st)
}

// held is nil while the lease is this writer's, and ErrLocked once the
// renewal found it taken over.
func (w *Writer) held() error {
	lost := w.lostTo.Load()
	if lost == nil {
		return nil
	}
	return fmt.Errorf("index %q: %w: %s took the index over after this run's lease lapsed (not renewed in time): run the command again",
		w.name, index.ErrLocked, *lost)
}

// writeState writes the meta object unless the lease was lost; under mu.
func (w *Writer) writeState(ctx context.Context) error {
	if err := w.held(); err != nil {
		return err
	}
	return w.s.writeState(ctx, w.st)
}

// Close gives the lease back.
func (w *Writer) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.stop)
		<-w.stopped
		defer func() {
			w.s.mu.Lock()
			delete(w.s.writing, w.holder)
			w.s.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), w.s.cfg.Timeout)
		defer cancel()
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.lostTo.Load() != nil {
			return
		}
		// A writer whose lease lapsed (renewals failed for two minutes)
		// and was taken over must not write its state over the other's.
		if back, err := w.s.readState(ctx, w.name, w.s.cfg.WriteConsistency); err == nil && back != nil && back.LockHolder != w.holder {
			return
		}
		w.st.LockHolder, w.st.LockExpires = "", 0
		err = w.s.writeState(ctx, w.st)
	})
	return err
}

// setState changes the meta object under the writer's lock and writes it.
func (w *Writer) setState(ctx context.Context, fn func(st *state)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(w.st)
	return w.writeState(ctx)
}

func (w *Writer) genState() *genState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.gen(w.gen)
}

// analysed is a chunk's keyword properties, as lore's analyser gives
// them (see schema.go).
type analysed struct{ terms, headingTerms, identifiers, partTerms string }

// AnalyserVersion is the keyword analyser's version: a new one analyses
// every document again on the next build.
func (w *Writer) AnalyserVersion() string { return analysis.Version }

// Prepare analyses f's chunks for the keyword properties on a build
// worker (index.Writer).
func (w *Writer) Prepare(f *index.FileUpdate) {
	out := make([]analysed, len(f.Chunks))
	for i, p := range f.Chunks {
		out[i] = analyse(p, ingest.Structured(f.Path))
	}
	f.Prepared = out
}

// analyse gives a chunk's keyword properties, from one pass of the
// analyser (analysis.AnalyzeTexts): terms and heading_terms are TermText
// of the body and heading, identifiers IdentifierText of both, the terms
// a search asks them with (reader.go). The camelCase parts and the names
// the chunk defines come from the local store's analysis of the same
// chunk: parts as part_terms (partToken), each as often as the heading
// and body hold it, and defined names (identifier terms the path field
// counts) added to identifiers, so that the cluster finds and counts
// them as the local postings do.
func analyse(p ingest.Chunk, structured bool) analysed {
	return analysedFrom(analysis.AnalyzeTexts(analysis.Fields{Heading: p.Heading, Body: p.Text, Structured: structured}))
}

// analysedFrom is the stored properties of a chunk's analysis d and its
// texts tx.
func analysedFrom(d analysis.Doc, tx analysis.Texts) analysed {
	a := analysed{terms: tx.Body, headingTerms: tx.Heading}
	ids := tx.Identifiers
	have := map[string]bool{}
	for _, id := range strings.Fields(ids) {
		have[id] = true
	}
	var idb, parts strings.Builder
	idb.WriteString(ids)
	for _, tf := range d.Terms {
		if part, ok := strings.CutPrefix(tf.Term, analysis.PartPrefix); ok {
			for range int(tf.Heading) + int(tf.Body) {
				if parts.Len() > 0 {
					parts.WriteByte(' ')
				}
				parts.WriteString(partToken(part))
			}
		} else if id, ok := strings.CutPrefix(tf.Term, analysis.IdentPrefix); ok && tf.Path > 0 && !have[id] {
			have[id] = true
			if idb.Len() > 0 {
				idb.WriteByte(' ')
			}
			idb.WriteString(id)
		}
	}
	a.identifiers, a.partTerms = valid(idb.String()), valid(parts.String())
	return a
}

// PreviousSources are the roots a rebuild with no paths starts from.
func (w *Writer) PreviousSources(ctx context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.st.Remembered; r != nil && len(r.Sources) > 0 {
		return slices.Clone(r.Sources), nil
	}
	roots := []string{}
	if w.st.Current != "" {
		for _, src := range w.st.gen(w.st.Current).Sources {
			roots = append(roots, src.Root)
		}
	}
	return roots, nil
}

// Meta is a meta key of the generation being written.
func (w *Writer) Meta(ctx context.Context, key string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.gen(w.gen).Meta[key], nil
}

// SetMeta sets meta keys (key, value, key, value...) of the generation.
func (w *Writer) SetMeta(ctx context.Context, kv ...string) error {
	if len(kv)%2 != 0 {
		return fmt.Errorf("SetMeta: %d arguments: give keys and values in pairs", len(kv))
	}
	return w.setState(ctx, func(st *state) {
		m := st.gen(w.gen).Meta
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
	})
}

// Sources are the generation's sources.
func (w *Writer) Sources(ctx context.Context) ([]index.Source, error) {
	return slices.Clone(w.genState().Sources), nil
}

// AddSource adds root to the generation's sources, once.
func (w *Writer) AddSource(ctx context.Context, root string) (index.Source, error) {
	var src index.Source
	err := w.setState(ctx, func(st *state) {
		gs := st.gen(w.gen)
		var top int64
		for _, s := range gs.Sources {
			if s.Root == root {
				src = s
				return
			}
			top = max(top, s.ID)
		}
		src = index.Source{ID: top + 1, Root: root}
		gs.Sources = append(gs.Sources, src)
	})
	return src, err
}

func (w *Writer) root(sourceID int64) string {
	for _, s := range w.genState().Sources {
		if s.ID == sourceID {
			return s.Root
		}
	}
	return ""
}

// docObj is a document object as read back.
type docObj struct {
	DocID     textInt `json:"doc_id"`
	SourceID  int64   `json:"source_id"`
	Path      string  `json:"path"`
	Size      textInt `json:"size"`
	MTimeNS   string  `json:"mtime_ns"`
	Hash      string  `json:"hash"`
	Status    string  `json:"status"`
	Reason    string  `json:"reason"`
	Chunker   string  `json:"chunker"`
	IndexedAt string  `json:"indexed_at"`
	Chunks    int     `json:"chunks"`
	Version   string  `json:"version"`
}

var docFields = []string{"doc_id", "source_id", "path", "size", "mtime_ns", "hash", "status", "reason", "chunker", "indexed_at", "chunks", "version"}

func (d docObj) state() index.DocState {
	mt, _ := strconv.ParseInt(d.MTimeNS, 10, 64)
	at, _ := strconv.ParseInt(d.IndexedAt, 10, 64)
	return index.DocState{ID: int64(d.DocID), Size: int64(d.Size), MTimeNS: mt, Hash: d.Hash, Status: d.Status, Reason: d.Reason, Chunker: d.Chunker, IndexedAt: at}
}

// scanDocs calls fn with every document object of class.
func (s *Store) scanDocs(ctx context.Context, class string, fn func(docObj)) error {
	return s.scan(ctx, class, docFields, maxScan, func(o map[string]any) error {
		var d docObj
		if err := remarshal(o, &d); err != nil {
			return err
		}
		fn(d)
		return nil
	})
}

// Documents are the files of a source the generation knows, by path.
func (w *Writer) Documents(ctx context.Context, sourceID int64) (map[string]index.DocState, error) {
	out := map[string]index.DocState{}
	err := w.s.scanDocs(ctx, w.docs, func(d docObj) {
		if d.SourceID == sourceID {
			out[d.Path] = d.state()
			w.recorded[int64(d.DocID)] = d.Version
		}
	})
	return out, w.s.wrap(err, "read the documents of index "+strconv.Quote(w.name))
}

// idGroup is how many ids one filter names.
const idGroup = 200

// MissingVectors tells which hashes have no stored vector yet.
func (w *Writer) MissingVectors(ctx context.Context, hashes []string) (map[string]bool, error) {
	missing := map[string]bool{}
	var ask []string
	for _, h := range hashes {
		if _, ok := w.cache[h]; !ok && !missing[h] {
			missing[h] = true
			ask = append(ask, h)
		}
	}
	for i := 0; i < len(ask); i += idGroup {
		group := ask[i:min(i+idGroup, len(ask))]
		ids := make([]string, len(group))
		for j, h := range group {
			ids[j] = vectorUUID(h)
		}
		var found []struct{ Hash string }
		err := w.s.get(ctx, w.vectors, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idIn(ids)).WithFields(fields("hash")...).WithLimit(len(ids))
		}, &found)
		if err != nil {
			return nil, w.s.wrap(err, "read vectors")
		}
		for _, f := range found {
			delete(missing, f.Hash)
		}
	}
	return missing, nil
}

// maxCached bounds the vectors kept between PutVectors and the
// WriteFiles that uses them (768 floats: 3 KB each).
const maxCached = 16384

// PutVectors stores vectors by chunk hash, acknowledged by the write
// consistency's replicas before it returns.
func (w *Writer) PutVectors(ctx context.Context, hashes []string, vecs [][]float32) error {
	if len(hashes) != len(vecs) {
		return fmt.Errorf("PutVectors: %d hashes, %d vectors", len(hashes), len(vecs))
	}
	if err := w.held(); err != nil {
		return err
	}
	objs := make([]*models.Object, 0, len(hashes))
	seen := map[string]bool{}
	for i, h := range hashes {
		if seen[h] {
			continue
		}
		seen[h] = true
		objs = append(objs, &models.Object{Class: w.vectors, ID: strfmt.UUID(vectorUUID(h)), Properties: map[string]any{"hash": h}, Vector: vecs[i]})
	}
	if err := w.s.insert(ctx, "store vectors", objs, nil); err != nil {
		return err
	}
	w.orphan(hashes...)
	if len(w.cache)+len(hashes) > maxCached {
		clear(w.cache) // WriteFiles reads them back from the cluster
	}
	for i, h := range hashes {
		w.cache[h] = vecs[i]
	}
	return nil
}

// vectorsFor gathers the vectors of hashes: those PutVectors stored in
// this run, the rest from the Vectors collection (a resumed build's).
func (w *Writer) vectorsFor(ctx context.Context, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	var ask []string
	for _, h := range hashes {
		if _, done := out[h]; done {
			continue
		}
		if v, ok := w.cache[h]; ok {
			out[h] = v
			continue
		}
		out[h] = nil
		ask = append(ask, h)
	}
	for i := 0; i < len(ask); i += idGroup {
		group := ask[i:min(i+idGroup, len(ask))]
		ids := make([]string, len(group))
		for j, h := range group {
			ids[j] = vectorUUID(h)
		}
		var found []struct {
			Hash       string
			Additional struct{ Vector []float32 } `json:"_additional"`
		}
		err := w.s.get(ctx, w.vectors, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idIn(ids)).WithFields(graphql.Field{Name: "hash"}, additional("vector")).WithLimit(len(ids))
		}, &found)
		if err != nil {
			return nil, w.s.wrap(err, "read vectors")
		}
		for _, f := range found {
			out[f.Hash] = f.Additional.Vector
		}
	}
	// A filtered Get reads one replica, which may lack what a QUORUM write
	// put on the others (a node that was down): ask for the rest by id at
	// the write consistency (its replicas overlap the write's) before
	// calling them missing.
	for _, h := range ask {
		if out[h] != nil {
			continue
		}
		o, err := w.s.objectByID(ctx, w.vectors, vectorUUID(h), true)
		if err != nil {
			return nil, w.s.wrap(err, "read vectors")
		}
		if o != nil {
			out[h] = o.Vector
		}
	}
	return out, nil
}

// version names a file's chunking: the ids of its chunk objects derive
// from it, so that a rewrite adds new objects beside the old ones and
// then deletes the old, and the same chunks written again (a retry) are
// the same objects.
func version(f index.FileUpdate) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00", len(f.Chunks), f.Status)
	for _, p := range f.Chunks {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\x00", p.Hash(), p.Start, p.End, p.Kind)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// WriteFiles replaces the chunks of each file. The new chunk objects go in
// first, then the file's other chunks are deleted, then its document
// object records the new state: a reader sees the old chunks, then for a
// moment both, then the new ones, never a file with none; a build cut
// short before the document object is written redoes the file.
func (w *Writer) WriteFiles(ctx context.Context, files []index.FileUpdate) error {
	if len(files) == 0 {
		return nil
	}
	if err := w.held(); err != nil {
		return err
	}
	var hashes []string
	for _, f := range files {
		for _, p := range f.Chunks {
			hashes = append(hashes, p.Hash())
		}
	}
	vecs := map[string][]float32{}
	if w.genState().Meta["dim"] != "" || len(w.cache) > 0 {
		var err error
		if vecs, err = w.vectorsFor(ctx, hashes); err != nil {
			return err
		}
	}
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	var chunkObjs, docObjs []*models.Object
	keep := map[int64]string{}
	// pending: whether each document goes in without some vectors; listed
	// before its chunks are written, cleared after (a crash in between
	// costs a fill that finds nothing to embed, never a vector forgotten).
	pending := map[int64]bool{}
	for _, f := range files {
		did, ver, root := docID(f.SourceID, f.Path), version(f), w.root(f.SourceID)
		prepared, _ := f.Prepared.([]analysed)
		pathTerms := analysis.TermText(f.Path)
		for i, p := range f.Chunks {
			h := p.Hash()
			a := analysed{}
			if i < len(prepared) {
				a = prepared[i]
			} else {
				a = analyse(p, ingest.Structured(f.Path))
			}
			props := map[string]any{
				"text": valid(p.Text), "heading": valid(p.Heading), "identifiers": a.identifiers,
				"terms": a.terms, "heading_terms": a.headingTerms, "path_terms": pathTerms, "part_terms": a.partTerms,
				"path": valid(f.Path), "source": valid(root), "source_id": f.SourceID, "doc_id": idText(did),
				"chunk_id": idText(chunkID(f.SourceID, f.Path, i)), "ord": i, "start_line": p.Start, "end_line": p.End,
				"chars": utf8.RuneCountInString(p.Text), "kind": valid(p.Kind), "hash": h, "version": ver,
			}
			// A deferred build whose embedder never answered has no
			// dimension yet: its chunks lack vectors all the same, and
			// unlisted, a FillVectors build would never embed them.
			if vecs[h] == nil && (w.deferVectors || w.genState().Meta["dim"] != "") {
				if !w.deferVectors {
					// Not found (a replica behind, or a failover in
					// between): a chunk without its vector would never be
					// found by meaning, and nothing would notice. The
					// rerun embeds it.
					return fmt.Errorf("weaviate: the vector of a chunk of %s is not in the cluster yet: run the build again (it embeds only what is missing)", f.Path)
				}
				pending[did] = true
			}
			chunkObjs = append(chunkObjs, &models.Object{Class: w.chunks, ID: strfmt.UUID(chunkUUID(f.SourceID, f.Path, ver, i)), Properties: props, Vector: vecs[h]})
		}
		keep[did] = ver
		docObjs = append(docObjs, &models.Object{Class: w.docs, ID: strfmt.UUID(docUUID(f.SourceID, f.Path)), Properties: map[string]any{
			"doc_id": idText(did), "source_id": f.SourceID, "path": valid(f.Path), "size": idText(f.Size), "mtime_ns": strconv.FormatInt(f.MTimeNS, 10),
			"hash": f.Hash, "status": f.Status, "reason": valid(f.Reason), "chunker": valid(f.Chunker), "indexed_at": now,
			"chunks": len(f.Chunks), "version": ver,
		}})
	}
	if err := w.notePending(ctx, files, pending, true); err != nil {
		return err
	}
	if err := w.s.insert(ctx, "write chunks", chunkObjs, nil); err != nil {
		return err
	}
	// The lease may have been found lost while the chunks went in: stop
	// before deleting or recording anything (the other run writes these
	// files itself).
	if err := w.held(); err != nil {
		return err
	}
	if err := w.dropOtherVersions(ctx, keep); err != nil {
		return err
	}
	if err := w.held(); err != nil {
		return err
	}
	if err := w.s.insert(ctx, "write documents", docObjs, nil); err != nil {
		return err
	}
	if err := w.notePending(ctx, files, pending, false); err != nil {
		return err
	}
	for _, f := range files {
		if f.Status == index.StatusIndexed {
			did := docID(f.SourceID, f.Path)
			w.written[did] = docObj{DocID: textInt(did), SourceID: f.SourceID, Path: f.Path, Status: f.Status, Chunks: len(f.Chunks), Version: keep[did]}
		}
	}
	for _, h := range hashes {
		delete(w.cache, h)
	}
	return nil
}

// notePending lists the documents of files that go in without some of
// their vectors (before their chunks are written: listing), or clears
// those written whole (after), and saves the meta object when that
// changed anything.
func (w *Writer) notePending(ctx context.Context, files []index.FileUpdate, pending map[int64]bool, listing bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	gs := w.st.gen(w.gen)
	changed := false
	for _, f := range files {
		did := docID(f.SourceID, f.Path)
		key := idText(did)
		_, listed := gs.Pending[key]
		switch {
		case listing && pending[did] && !listed:
			if gs.Pending == nil {
				gs.Pending = map[string]pendingDoc{}
			}
			gs.Pending[key] = pendingDoc{SourceID: f.SourceID, Path: f.Path}
			changed = true
		case !listing && !pending[did] && listed:
			delete(gs.Pending, key)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return w.writeState(ctx)
}

// listLimit is the most objects one query returns (the server's
// QUERY_MAXIMUM_RESULTS default).
const listLimit = 10_000

// dropOtherVersions deletes the chunks of documents (by id) whose version
// is not the one keep gives: what a rewrite replaced, or what a build cut
// short wrote. It lists the documents' chunks with a filter that names
// them and deletes the others by object id; then, since that listing
// reads one replica, which may lack chunks a node outage kept from it, it
// deletes the version each record named by a filter that names it. One
// batch delete filtered on `version != v` would do it all in one call,
// but the coordinator deletes on every replica what any replica matched,
// and `!=` is everything but the objects whose version index has v: on a
// replica still applying the insert that includes the new chunks
// (TestHealthyClusterLosesNoChunk: 1 build in 20 lost a chunk that way).
// Filters that name the objects (`=`, contains-any) match nothing new.
func (w *Writer) dropOtherVersions(ctx context.Context, keep map[int64]string) error {
	ids := make([]int64, 0, len(keep))
	for id := range keep {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	const perList = 50
	for i := 0; i < len(ids); i += perList {
		group := ids[i:min(i+perList, len(ids))]
		for {
			var objs []struct {
				DocID      textInt `json:"doc_id"`
				Version    string  `json:"version"`
				Hash       string  `json:"hash"`
				Additional struct {
					ID string `json:"id"`
				} `json:"_additional"`
			}
			err := w.s.get(ctx, w.chunks, func(b *graphql.GetBuilder) *graphql.GetBuilder {
				return b.WithWhere(idsIn("doc_id", group)).WithFields(append(fields("doc_id", "version", "hash"), additional("id"))...).WithLimit(listLimit)
			}, &objs)
			if err != nil {
				return w.s.wrap(err, "list replaced chunks")
			}
			var old []string
			for _, o := range objs {
				if v, ok := keep[int64(o.DocID)]; ok && o.Version != v && o.Additional.ID != "" {
					old = append(old, o.Additional.ID)
					w.orphan(o.Hash)
				}
			}
			for j := 0; j < len(old); j += idGroup {
				if err := w.s.deleteWhere(ctx, "delete replaced chunks", w.chunks, idIn(old[j:min(j+idGroup, len(old))])); err != nil {
					return err
				}
			}
			if len(objs) < listLimit {
				break
			}
			if len(old) == 0 {
				return fmt.Errorf("weaviate: %d files of index %q hold more than %d chunks between them, more than lore lists at once: lower max-file-size or raise the chunk size", len(group), w.name, listLimit)
			}
		}
		var recorded []*filters.WhereBuilder
		for _, id := range group {
			if v := w.recorded[id]; v != "" && v != keep[id] {
				recorded = append(recorded, and(idIs("doc_id", id), textIs("version", v)))
			}
		}
		if len(recorded) > 0 {
			if err := w.s.deleteWhere(ctx, "delete replaced chunks", w.chunks, or(recorded...)); err != nil {
				return err
			}
		}
	}
	return nil
}

// TouchFiles refreshes the stat info of files whose bytes did not change.
func (w *Writer) TouchFiles(ctx context.Context, files []index.FileUpdate) error {
	if err := w.held(); err != nil {
		return err
	}
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(batchWorkers)
	for _, f := range files {
		g.Go(func() error {
			props := map[string]any{"size": idText(f.Size), "mtime_ns": strconv.FormatInt(f.MTimeNS, 10), "indexed_at": now}
			var err error
			for attempt := range batchAttempts {
				if attempt > 0 {
					if err := sleep(gctx, backoff(attempt)); err != nil {
						return err
					}
				}
				err = w.s.pool.do(gctx, func(ctx context.Context, c *wv.Client) error {
					err := c.Data().Updater().WithClassName(w.docs).WithID(docUUID(f.SourceID, f.Path)).WithProperties(props).
						WithMerge().WithConsistencyLevel(w.s.cfg.WriteConsistency).Do(ctx)
					if statusCode(err) == http.StatusNotFound {
						return nil // not indexed: nothing to refresh, as the local store
					}
					return err
				})
				if err == nil || !retryable(err) {
					break
				}
			}
			return w.s.writeError(err, "refresh "+f.Path)
		})
	}
	return g.Wait()
}

// RemoveDocuments drops documents (by DocState.ID) and their chunks.
func (w *Writer) RemoveDocuments(ctx context.Context, ids []int64) error {
	for i := 0; i < len(ids); i += idGroup {
		if err := w.held(); err != nil {
			return err
		}
		group := ids[i:min(i+idGroup, len(ids))]
		// Their hashes first, for gcVectors (a listing too long to hold
		// leaves some vectors behind: harmless).
		var objs []struct{ Hash string }
		err := w.s.get(ctx, w.chunks, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idsIn("doc_id", group)).WithFields(fields("hash")...).WithLimit(listLimit)
		}, &objs)
		if err != nil {
			return w.s.wrap(err, "list removed chunks")
		}
		for _, o := range objs {
			w.orphan(o.Hash)
		}
		if err := w.s.deleteWhere(ctx, "remove documents' chunks", w.chunks, idsIn("doc_id", group)); err != nil {
			return err
		}
		if err := w.s.deleteWhere(ctx, "remove documents", w.docs, idsIn("doc_id", group)); err != nil {
			return err
		}
		w.mu.Lock()
		for _, id := range group {
			delete(w.st.gen(w.gen).Pending, idText(id)) // saved by Publish
		}
		w.mu.Unlock()
	}
	return nil
}

// Remember records the sources and embedder in the meta object, apart
// from the generations' data.
func (w *Writer) Remember(ctx context.Context, r index.Remembered) error {
	r.Sources = slices.Clone(r.Sources)
	return w.setState(ctx, func(st *state) { st.Remembered = &r })
}

// Publish ends a complete build: the documents written since the last
// Publish are checked, vectors no chunk uses any more go, built_at is
// set, and a rebuild's generation becomes Current in one write of the
// meta object; then the old generation's collections are deleted. Its
// cost follows what the build changed, not the size of the index (but
// for a pass over the document records after a build cut short).
func (w *Writer) Publish(ctx context.Context, p index.PublishOptions) (files, chunks int, err error) {
	if err := w.held(); err != nil {
		return 0, 0, err
	}
	if files, err = w.verify(ctx); err != nil {
		return 0, 0, err
	}
	if p.Vectors {
		if err := w.gcVectors(ctx, p.Progress); err != nil {
			return 0, 0, err
		}
	}
	if chunks, err = w.s.count(ctx, w.chunks); err != nil {
		return 0, 0, err
	}
	var old string
	err = w.setState(ctx, func(st *state) {
		g := st.gen(w.gen)
		g.Meta["built_at"] = strconv.FormatInt(time.Now().Unix(), 10)
		g.Unverified = 0
		if st.Current != w.gen {
			old, st.Current, st.Next = st.Current, w.gen, ""
		}
	})
	if err != nil {
		return 0, 0, err
	}
	if old != "" {
		// Readers that opened the old generation lose it now; a search
		// they run next fails and reopens (Store.Generation changed).
		if err := w.dropStale(ctx); err != nil {
			w.notice("the previous generation's collections were not all deleted: the next build deletes them (" + oneLine(err) + ")")
		}
	}
	return files, chunks, nil
}

// clockSkew is how far apart the clocks of two machines writing one index
// may be: verify checks documents written that long before it began.
const clockSkew = 10 * time.Minute

// verify compares the chunk count of every document written since the
// last Publish (by this run or a run cut short before it) with the chunks
// the cluster holds for it, and returns how many files the index holds. A
// chunk acknowledged and then lost (kill -9 of a node at the wrong
// moment) would otherwise stay lost, since the document's record says it
// is indexed and no later run reads the file again. Those documents lose
// their record, and the build stops with ErrIncomplete: BuildTo writes
// them again.
func (w *Writer) verify(ctx context.Context) (files int, err error) {
	since := w.genState().Unverified - clockSkew.Nanoseconds()
	// What this run wrote, whether or not the replica the listing reads
	// has its records yet, and what the records say was written since.
	toCheck := maps.Clone(w.written)
	if !w.inherited {
		// Every write before this run's was checked by a Publish: what
		// this run wrote is all there is to check, and the files are
		// counted, not listed (a pass over the document records at every
		// live-sync batch cost in proportion to the index).
		files, err = w.s.countWhere(ctx, w.docs, textIs("status", index.StatusIndexed))
	}
	if w.inherited || err != nil {
		files = 0
		err = w.s.scanDocs(ctx, w.docs, func(d docObj) {
			if d.Status != index.StatusIndexed {
				return
			}
			files++
			if at, _ := strconv.ParseInt(d.IndexedAt, 10, 64); at >= since && toCheck[int64(d.DocID)].Path == "" {
				toCheck[int64(d.DocID)] = d
			}
		})
	}
	if err != nil {
		return 0, w.s.wrap(err, "check documents")
	}
	var check []docObj
	for _, d := range toCheck {
		if d.Chunks > 0 {
			check = append(check, d)
		}
	}
	slices.SortFunc(check, func(a, b docObj) int { return cmp.Compare(a.DocID, b.DocID) })
	var short []int64
	var names []string
	missing := 0
	for len(check) > 0 {
		// As many documents as one listing holds, with room for chunks of
		// theirs not yet deleted.
		n, sum := 0, 0
		for n < len(check) && n < idGroup && sum+check[n].Chunks <= listLimit/2 {
			sum += check[n].Chunks
			n++
		}
		group := check[:max(n, 1)]
		check = check[len(group):]
		ids := make([]int64, len(group))
		for i, d := range group {
			ids[i] = int64(d.DocID)
		}
		var objs []struct {
			DocID   textInt `json:"doc_id"`
			Version string  `json:"version"`
		}
		err := w.s.get(ctx, w.chunks, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(idsIn("doc_id", ids)).WithFields(fields("doc_id", "version")...).WithLimit(listLimit)
		}, &objs)
		if err != nil {
			return 0, w.s.wrap(err, "check chunks")
		}
		version := map[int64]string{}
		for _, d := range group {
			version[int64(d.DocID)] = d.Version
		}
		// Only the recorded version's chunks count: another version's,
		// not deleted yet, must not hide a loss.
		got := map[int64]int{}
		for _, o := range objs {
			if o.Version == version[int64(o.DocID)] {
				got[int64(o.DocID)]++
			}
		}
		for _, d := range group {
			if got[int64(d.DocID)] >= d.Chunks && len(objs) < listLimit {
				continue
			}
			// The listing read one replica, maybe one still applying the
			// last writes: ask for each of the document's chunks by id
			// before calling any lost.
			n, err := w.lost(ctx, d)
			if err != nil {
				return 0, w.s.wrap(err, "check the chunks of "+d.Path)
			}
			if n > 0 {
				short = append(short, int64(d.DocID))
				names = append(names, d.Path)
				missing += n
			}
		}
	}
	if len(short) == 0 {
		return files, nil
	}
	sort.Strings(names)
	if err := w.held(); err != nil {
		return 0, err
	}
	for i := 0; i < len(short); i += idGroup {
		if err := w.s.deleteWhere(ctx, "forget short documents", w.docs, idsIn("doc_id", short[i:min(i+idGroup, len(short))])); err != nil {
			return 0, err
		}
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return 0, fmt.Errorf("weaviate: %d chunks of %d files are not in the cluster although it took them (%s): run the build again to write them: %w",
		missing, len(short), strings.Join(names, ", "), index.ErrIncomplete)
}

// lost counts the chunks of d the cluster does not hold, each asked for
// by its object id (objectByID: not a listing, which reads one replica).
func (w *Writer) lost(ctx context.Context, d docObj) (int, error) {
	var n atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range d.Chunks {
		g.Go(func() error {
			o, err := w.s.objectByID(gctx, w.chunks, chunkUUID(d.SourceID, d.Path, d.Version, i), false)
			if err == nil && o == nil {
				n.Add(1)
			}
			return err
		})
	}
	err := g.Wait()
	return int(n.Load()), err
}

// orphan marks hashes whose vectors gcVectors checks.
func (w *Writer) orphan(hashes ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range hashes {
		w.orphans[h] = true
	}
}

// gcVectors deletes the stored vectors that no chunk uses any more, among
// those this run may have orphaned: the vectors it stored and those of
// the chunks it deleted (by id). What a run cut short orphaned, or chunks
// deleted by filter held, stays: unused vectors cost disk, never a wrong
// answer, and a rebuild starts a generation without them.
func (w *Writer) gcVectors(ctx context.Context, progress func(string, int, int)) error {
	w.mu.Lock()
	cands := slices.Sorted(maps.Keys(w.orphans))
	w.mu.Unlock()
	var unused []string
	for i := 0; i < len(cands); i += idGroup {
		if progress != nil {
			progress("vectors", i, len(cands))
		}
		group := cands[i:min(i+idGroup, len(cands))]
		var objs []struct{ Hash string }
		err := w.s.get(ctx, w.chunks, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			return b.WithWhere(hashesIn(group)).WithFields(fields("hash")...).WithLimit(listLimit)
		}, &objs)
		if err != nil {
			return w.s.wrap(err, "read chunk hashes")
		}
		if len(objs) == listLimit {
			continue // cannot tell which are unused: keep them
		}
		used := map[string]bool{}
		for _, o := range objs {
			used[o.Hash] = true
		}
		for _, h := range group {
			if !used[h] {
				unused = append(unused, vectorUUID(h))
			}
		}
	}
	if err := w.held(); err != nil {
		return err
	}
	for i := 0; i < len(unused); i += idGroup {
		if err := w.s.deleteWhere(ctx, "drop unused vectors", w.vectors, idIn(unused[i:min(i+idGroup, len(unused))])); err != nil {
			return err
		}
	}
	if progress != nil {
		progress("vectors", len(cands), len(cands))
	}
	w.mu.Lock()
	clear(w.orphans)
	w.mu.Unlock()
	return nil
}
