// Package local keeps lore's indexes on this machine, behind the store seam
// of package index: one folder per index (indexes/NAME), holding
// generations (a rebuild writes a new one and flips CURRENT), each a
// SQLite database (documents, chunks, vectors by chunk hash, keyword
// segments of package bm25) and a vector graph file (package hnsw); a
// lock file for the one writer, a writing mark for damage after a crash,
// and sources.json to rebuild a damaged index from.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/lore-cli/lore/index"
)

// localTarget is the write side of a local index: a folder of SQLite
// generations (layout.go).
type localTarget struct{ dir string }

// localWriter is one build of a local index. It holds the index lock and
// the generation's database, the keyword segment being gathered and the
// vector graph being fed.
type localWriter struct {
	dir, name    string
	gen, current string
	previous     []string // a rebuild's sources, read by BeginWrite (KeepSources)
	st           *database
	lk           *lock
	notice       func(string)
	keywords     *keywordBuffer // chunks written since the last keyword segment
	firstSeg     int64          // the newest segment before this build
	removed      []int64        // documents to drop, at Publish
	graph        *graphFeeder
	// held are the vectors of a small build not yet given to the graph: a
	// live-sync batch whose few vectors readers add from index.db need
	// not load and save the whole graph file (see Publish).
	held []graphItem
	// stale are the hashes of the chunks this build replaced or removed
	// and of the vectors it stored: all that a scoped garbage collection
	// of vectors looks at (gcHashes), until there are more than staleMax.
	stale    []string
	staleAll bool // too many to list: collect over every vector
	dim      int
	fresh    bool // no meta written yet
}

// staleMax is how many hashes a build lists for a scoped garbage
// collection of vectors: a live-sync batch lists a few dozen; a build
// past this many collects over the whole table, as it scans every file
// anyway.
const staleMax = 4096

// noteStale adds hashes to w.stale, or gives up listing past staleMax.
func (w *localWriter) noteStale(hashes ...string) {
	if w.staleAll {
		return
	}
	if len(w.stale)+len(hashes) > staleMax {
		w.stale, w.staleAll = nil, true
		return
	}
	w.stale = append(w.stale, hashes...)
}

// noteStaleChunks lists the chunk hashes that query finds.
func (w *localWriter) noteStaleChunks(ctx context.Context, query string, args ...any) error {
	if w.staleAll {
		return nil
	}
	rows, err := w.st.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return err
		}
		hashes = append(hashes, h)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.noteStale(hashes...)
	return nil
}

func (t localTarget) BeginWrite(ctx context.Context, req index.WriteRequest) (_ index.Writer, err error) {
	notice := req.Notice
	if notice == nil {
		notice = func(string) {}
	}
	var lk *lock
	for range 2 {
		if err := os.MkdirAll(t.dir, 0o755); err != nil {
			return nil, fmt.Errorf("create index folder: %w", err)
		}
		// A refused first build removes the folder it made
		// (removeEmptyIndexDir); it may have gone between the two calls.
		if lk, err = acquireLock(t.dir); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	w := &localWriter{dir: t.dir, name: req.Name, lk: lk, notice: notice, keywords: newKeywordBuffer()}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	if req.Rebuild {
		dropDamagedNext(ctx, t.dir, req.Name, notice)
	}
	if req.DiscardNext {
		// removeStaleGenerations below deletes its folder.
		if err := os.Remove(filepath.Join(t.dir, nextFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("drop the interrupted rebuild: %w", err)
		}
	}
	current := readPointer(t.dir, currentFile)
	next := readPointer(t.dir, nextFile)
	w.current = current
	if req.Before != nil {
		exists := current != "" || next != ""
		if err := req.Before(exists); err != nil {
			if !exists {
				// A first build refused before it began (no folders
				// named, Ollama down) leaves no index behind: a folder
				// with a lock in it would be listed as one, "not built",
				// and offered by completion.
				removeEmptyIndexDir(t.dir)
			}
			return nil, err
		}
	}
	switch {
	case next != "":
		w.gen = next // finish the interrupted rebuild first
		notice("resuming an interrupted rebuild")
	case current == "":
		w.gen = newGeneration()
	case req.Rebuild:
		if req.KeepSources {
			// Read before a generation is made: a rebuild that cannot
			// know its folders must leave nothing to resume.
			if w.previous, err = rememberedSources(ctx, t.dir, current, req.Name); err != nil {
				return nil, err
			}
		}
		w.gen = newGeneration()
	default:
		w.gen = current
	}
	removeStaleGenerations(t.dir)
	genDir := filepath.Join(t.dir, w.gen)
	if err := os.MkdirAll(genDir, 0o755); err != nil {
		return nil, err
	}
	existed := fileExists(filepath.Join(genDir, dbFile))
	if err := markWriting(genDir); err != nil {
		return nil, err
	}
	st, err := openStore(filepath.Join(genDir, dbFile))
	if err != nil {
		clearWriting(genDir)
		return nil, err
	}
	w.st = st
	if existed {
		// A damaged database must not be written to, nor called unchanged.
		if err := checkPages(ctx, st.db, req.Name); err != nil {
			return nil, err
		}
	}
	switch {
	case current == "":
		// Nothing to protect readers from: publish at once, so an
		// interrupted first build is resumed rather than started over.
		err = writePointer(t.dir, currentFile, w.gen)
	case w.gen != current:
		err = writePointer(t.dir, nextFile, w.gen)
	}
	if err != nil {
		return nil, fmt.Errorf("publish index: %w", err)
	}
	if err := w.checkFormat(ctx, req.Rebuild); err != nil {
		return nil, err
	}
	if err := st.catchUpKeywords(ctx); err != nil {
		return nil, fmt.Errorf("write keyword index: %w", err)
	}
	if w.firstSeg, err = st.lastSegment(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// checkFormat refuses a database of another format, upgrades one of
// format 1 in place, and stamps a new one.
func (w *localWriter) checkFormat(ctx context.Context, rebuild bool) error {
	ver, err := w.st.meta(ctx, "schema_version")
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	switch {
	case ver == "":
		w.fresh = true // stamped with the build's first meta (SetMeta)
		return nil
	case ver == "1" && !rebuild:
		w.notice("upgrading the index to this lore's format (once; nothing is read or embedded again)")
		return migrateV1(ctx, w.st)
	case ver != schemaVersion:
		return formatError(w.name, ver)
	}
	return nil
}

func (w *localWriter) Prepare(f *index.FileUpdate) { prepare(f) }

func (w *localWriter) PreviousSources(context.Context) ([]string, error) { return w.previous, nil }

func (w *localWriter) Meta(ctx context.Context, key string) (string, error) {
	return w.st.meta(ctx, key)
}

// SetMeta writes meta keys. A new database gets its format and creation
// time in the same transaction as the build's first keys, in the order
// lore has always written them: the file is what it was before the seam.
func (w *localWriter) SetMeta(ctx context.Context, kv ...string) error {
	if w.fresh {
		stamp := []string{"schema_version", schemaVersion}
		if len(kv) >= 2 {
			stamp = append(stamp, kv[:2]...)
			kv = kv[2:]
		}
		kv = append(append(stamp, "created_at", strconv.FormatInt(time.Now().Unix(), 10)), kv...)
	}
	if err := w.st.setMeta(ctx, kv...); err != nil {
		return err
	}
	w.fresh = false
	return nil
}

func (w *localWriter) Sources(ctx context.Context) ([]index.Source, error) { return w.st.sources(ctx) }
func (w *localWriter) AddSource(ctx context.Context, root string) (index.Source, error) {
	return w.st.addSource(ctx, root)
}
func (w *localWriter) Documents(ctx context.Context, sourceID int64) (map[string]index.DocState, error) {
	return w.st.documents(ctx, sourceID)
}
func (w *localWriter) MissingVectors(ctx context.Context, hashes []string) (map[string]bool, error) {
	return w.st.missingHashes(ctx, hashes)
}
func (w *localWriter) PendingVectors(ctx context.Context, sourceID int64) (map[string]bool, error) {
	return w.st.pendingVectors(ctx, sourceID)
}
func (w *localWriter) Remember(_ context.Context, r index.Remembered) error {
	return writeRemembered(w.dir, r)
}

// PutVectors commits the vectors and feeds the new ones to the graph,
// which inserts them while the build goes on.
func (w *localWriter) PutVectors(ctx context.Context, hashes []string, vecs [][]float32) error {
	ids, err := w.st.putVectors(ctx, hashes, vecs)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if id != 0 {
			w.held = append(w.held, graphItem{id, vecs[i]})
			// Unused if its file is then skipped or fails.
			w.noteStale(hashes[i])
		}
	}
	if w.graph == nil && len(w.held) <= heldMax {
		return nil
	}
	w.feedGraph(ctx)
	return nil
}

// heldMax is how many new vectors a build holds back from the graph
// before it starts feeding it.
const heldMax = 256

// feedGraph starts the graph feeder if need be and gives it the held
// vectors.
func (w *localWriter) feedGraph(ctx context.Context) {
	if w.graph == nil {
		if w.dim == 0 {
			d, _ := w.st.meta(ctx, "dim")
			w.dim, _ = strconv.Atoi(d)
		}
		w.startGraph()
	}
	for _, it := range w.held {
		w.graph.ch <- it
	}
	w.held = nil
}

// graphLagged tells whether a live-sync batch may leave the graph file as
// it is: what it and the batches before it changed since the file was
// saved (graph_lag) stays under a twentieth of the vectors. Readers add
// what the file lacks from index.db as they load it; saving the file at
// every save would cost in proportion to the whole index.
func (w *localWriter) graphLagged(ctx context.Context, p index.PublishOptions, gone int64) bool {
	if !p.Batch || w.graph != nil || !fileExists(filepath.Join(w.dir, w.gen, graphFile)) {
		return false
	}
	lagS, _ := w.st.meta(ctx, "graph_lag")
	lag, _ := strconv.Atoi(lagS)
	lag += len(w.held) + int(gone)
	// The live nodes of the file as saved: counting the vectors instead
	// reads an index of them all at every save.
	nodesS, _ := w.st.meta(ctx, "graph_nodes")
	vectors, err := strconv.Atoi(nodesS)
	if err != nil {
		if err := w.st.db.QueryRowContext(ctx, `SELECT count(*) FROM vectors`).Scan(&vectors); err != nil {
			return false
		}
	}
	if lag >= max(16, vectors/20) {
		return false
	}
	return w.st.setMeta(ctx, "graph_lag", strconv.Itoa(lag)) == nil
}

// WriteFiles writes the files and gathers their chunks for the keyword
// index, written as a segment every segmentChunks chunks.
func (w *localWriter) WriteFiles(ctx context.Context, files []index.FileUpdate) error {
	if len(files) == 0 {
		return nil
	}
	for _, f := range files {
		if err := w.noteStaleChunks(ctx, `SELECT c.hash FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.source_id = ? AND d.path = ?`, f.SourceID, f.Path); err != nil {
			return err
		}
	}
	added, err := w.st.writeFiles(ctx, files)
	if err != nil {
		return err
	}
	w.keywords.add(added)
	if w.keywords.pending.Len() >= segmentChunks {
		return w.writeKeywords(ctx)
	}
	return nil
}

func (w *localWriter) writeKeywords(ctx context.Context) error {
	if err := w.st.writeKeywords(ctx, w.keywords); err != nil {
		return fmt.Errorf("write keyword index: %w", err)
	}
	return nil
}

func (w *localWriter) TouchFiles(ctx context.Context, files []index.FileUpdate) error {
	return w.st.touchFiles(ctx, files)
}

// RemoveDocuments drops them at Publish, after the keyword segments this
// build wrote are merged.
func (w *localWriter) RemoveDocuments(_ context.Context, ids []int64) error {
	w.removed = append(w.removed, ids...)
	return nil
}

func (w *localWriter) Publish(ctx context.Context, p index.PublishOptions) (files, chunks int, err error) {
	st := w.st
	if err := w.writeKeywords(ctx); err != nil {
		return 0, 0, err
	}
	if err := st.compact(ctx, w.firstSeg); err != nil {
		return 0, 0, fmt.Errorf("write keyword index: %w", err)
	}
	if len(w.removed) > 0 {
		for _, id := range w.removed {
			if err := w.noteStaleChunks(ctx, `SELECT hash FROM chunks WHERE doc_id = ?`, id); err != nil {
				return 0, 0, fmt.Errorf("remove deleted files: %w", err)
			}
		}
		if err := st.removeDocuments(ctx, w.removed); err != nil {
			return 0, 0, fmt.Errorf("remove deleted files: %w", err)
		}
	}
	// A batch drops only the vectors it may have left unused: looking at
	// every vector took 0.67-0.75 s a save at 100k 768-d chunks, reading
	// the whole vectors table (BenchmarkVectorLiveSync100k, BENCHMARKS.md).
	// Vectors an interrupted build left unused wait for the next Publish
	// that is no batch, or that saves the graph.
	var gone int64
	if p.Batch && !w.staleAll {
		gone, err = st.gcHashes(ctx, w.stale)
	} else {
		gone, err = st.gcVectors(ctx)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("drop unused vectors: %w", err)
	}
	if err := st.setMeta(ctx, "built_at", strconv.FormatInt(time.Now().Unix(), 10)); err != nil {
		return 0, 0, err
	}
	if p.Vectors && !w.graphLagged(ctx, p, gone) {
		if p.Batch && !w.staleAll {
			// Saving the graph costs in proportion to the index anyway.
			if _, err := st.gcVectors(ctx); err != nil {
				return 0, 0, fmt.Errorf("drop unused vectors: %w", err)
			}
		}
		if len(w.held) > 0 {
			w.feedGraph(ctx)
		}
		if err := w.updateGraph(ctx, p.Progress); err != nil {
			return 0, 0, err
		}
		if err := st.setMeta(ctx, "graph_lag", "0"); err != nil {
			return 0, 0, err
		}
	}
	if err := st.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM documents WHERE status = 'indexed'), (SELECT count(*) FROM chunks)`).Scan(&files, &chunks); err != nil {
		return 0, 0, err
	}
	if w.gen != w.current && w.current != "" {
		if _, err := st.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return 0, 0, err
		}
		if err := writePointer(w.dir, currentFile, w.gen); err != nil {
			return 0, 0, fmt.Errorf("publish rebuilt index: %w", err)
		}
		os.Remove(filepath.Join(w.dir, nextFile))
		removeStaleGenerations(w.dir)
	}
	return files, chunks, nil
}

// Close stops the graph feeder, closes the database, clears the writing
// mark and releases the lock, in that order.
func (w *localWriter) Close() error {
	if f, _ := w.stopGraph(); f != nil {
		f.vg.close()
	}
	var err error
	if w.st != nil {
		err = w.st.Close()
		clearWriting(filepath.Join(w.dir, w.gen))
	}
	w.lk.release()
	return err
}

// graphFeeder inserts vectors into the graph on a goroutine of its own
// while the build goes on: graph inserts are the most expensive step of a
// build without a model, and they overlap with chunking and SQLite writes.
type graphFeeder struct {
	vg    *vectorGraph
	ch    chan graphItem
	done  chan error
	added int
}

type graphItem struct {
	id  int64
	vec []float32
}

// loadGraph reads the graph file, or starts an empty graph when it is
// missing, unreadable or mostly tombstones; the caller syncs it with the
// stored vectors either way. A build checks every vector of the file (a
// search checks only those it returns) before adding to it and saving it.
func (w *localWriter) loadGraph() *vectorGraph {
	vg, err := readGraphFile(filepath.Join(w.dir, w.gen, graphFile), w.dim)
	if err == nil {
		if err = vg.g.Verify(); err != nil {
			vg.close()
		}
	}
	if errors.Is(err, errGraphFormat) {
		w.notice(graphDamagedNotice)
	}
	if err == nil && vg.tooSparse() {
		vg.close()
		err = errors.New("mostly tombstones")
	}
	if err != nil {
		vg = newVectorGraph(w.dim)
	}
	return vg
}

// startGraph inserts vectors as the build stores them, from one goroutine
// per core: inserts lock per node, so they scale with cores, and they
// overlap with chunking and SQLite writes.
func (w *localWriter) startGraph() {
	f := &graphFeeder{vg: w.loadGraph(), ch: make(chan graphItem, 1024), done: make(chan error, 1)}
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	added := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for it := range f.ch {
				if errs[w] == nil {
					errs[w] = f.vg.add(it.id, it.vec)
					added[w]++
				}
			}
		})
	}
	go func() {
		wg.Wait()
		for _, a := range added {
			f.added += a
		}
		f.done <- errors.Join(errs...)
	}()
	w.graph = f
}

// stopGraph waits for the feeder to finish what it was given.
func (w *localWriter) stopGraph() (*graphFeeder, error) {
	f := w.graph
	if f == nil {
		return nil, nil
	}
	w.graph = nil
	close(f.ch)
	return f, <-f.done
}

// updateGraph brings the ANN graph file in line with the stored vectors:
// add and remove the difference, write it back atomically. A missing or
// unreadable graph is rebuilt from the vectors, never an error.
func (w *localWriter) updateGraph(ctx context.Context, progress func(phase string, done, total int)) error {
	if w.dim == 0 {
		d, _ := w.st.meta(ctx, "dim")
		w.dim, _ = strconv.Atoi(d)
		if w.dim == 0 {
			return nil // nothing was ever embedded
		}
	}
	f, err := w.stopGraph()
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	vg, fed := (*vectorGraph)(nil), 0
	if f != nil {
		vg, fed = f.vg, f.added
	} else {
		vg = w.loadGraph()
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	progress("graph", 0, 0)
	added, removed, err := syncGraph(ctx, w.st, vg, func(done, total int) { progress("graph", done, total) })
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	if vg, err = compactGraph(ctx, w.st, vg, false); err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	path := filepath.Join(w.dir, w.gen, graphFile)
	version, err := w.st.vectorVersion(ctx)
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	defer vg.close()
	if err := w.st.setMeta(ctx, "graph_nodes", strconv.Itoa(vg.Len())); err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	if fed+added+removed == 0 && fileExists(path) && vg.synced == version {
		return nil
	}
	vg.synced = version
	if err := vg.writeFile(path); err != nil {
		return fmt.Errorf("save vector graph: %w", err)
	}
	return nil
}

// Store is the store of indexes on this machine: one folder per index
// under Parent (config's IndexesDir).
type Store struct{ Parent string }

var (
	_ index.Store  = Store{}
	_ index.Reader = (*Index)(nil)
	_ index.Target = localTarget{}
)

// Dir is the folder of the index name.
func (l Store) Dir(name string) string { return filepath.Join(l.Parent, name) }

func (Store) Kind() string { return "local" }

func (l Store) List(ctx context.Context) ([]index.Info, error) { return List(ctx, l.Parent) }
func (l Store) Names(_ context.Context) ([]string, error)      { return Names(l.Parent) }
func (l Store) Generation(_ context.Context, name string) string {
	return CurrentGeneration(l.Dir(name))
}

func (l Store) Open(_ context.Context, name string) (index.Reader, error) {
	ix, err := Open(l.Dir(name), name)
	if err != nil {
		return nil, err // not a nil *Index in a non-nil Reader
	}
	return ix, nil
}

func (l Store) Status(ctx context.Context, name string) (index.Status, error) {
	return StatusOf(ctx, l.Dir(name), name)
}

// QuickStatus is Status without the integrity check (QuickStatusOf).
func (l Store) QuickStatus(ctx context.Context, name string) (index.Status, error) {
	return QuickStatusOf(ctx, l.Dir(name), name)
}

func (l Store) Remembered(_ context.Context, name string) (index.Remembered, error) {
	r, err := ReadRemembered(l.Dir(name))
	if errors.Is(err, fs.ErrNotExist) && readPointer(l.Dir(name), currentFile) == "" && readPointer(l.Dir(name), nextFile) == "" {
		return r, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
	}
	return r, err
}

func (l Store) Remove(ctx context.Context, name string, confirm func(index.Info) error) (index.Info, error) {
	return Remove(ctx, l.Dir(name), name, confirm)
}

// Build creates or refreshes the local index in dir (see BuildTo).
func Build(ctx context.Context, dir string, opt index.BuildOptions) (index.Summary, error) {
	sum, err := index.BuildTo(ctx, localTarget{dir: dir}, opt)
	return sum, damaged(opt.Name, err)
}

func (l Store) Build(ctx context.Context, opt index.BuildOptions) (index.Summary, error) {
	return Build(ctx, l.Dir(opt.Name), opt)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
