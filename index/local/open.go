package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
)

// Index is an index opened for reading. Any number may be open while a
// build runs: SQLite's WAL gives each reader a consistent snapshot, and a
// rebuild writes a new generation rather than the one readers have open.
type Index struct {
	name string
	dir  string
	gen  string
	hold *os.File // the shared lock that keeps gen's folder (holdGeneration)
	st   *database
	lex  *database // keyword searches only: memory-mapped (openKeywordReader)
	graphState
	lexicalState
}

// Open opens the index in dir for reading. A damaged database is
// ErrCorrupt; after a run that did not end cleanly (its writing marker is
// still there, its process gone) the database is checked first.
func Open(dir, name string) (ix *Index, err error) {
	var gen string
	var hold *os.File
	// A rebuild may flip CURRENT and remove the generation just read: read
	// the pointer again then.
	for try := 0; hold == nil; try++ {
		if gen = readPointer(dir, currentFile); gen == "" {
			return nil, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
		}
		if hold, err = holdGeneration(filepath.Join(dir, gen)); err != nil && try == 2 {
			return nil, fmt.Errorf("open index %q: %w", name, err)
		}
	}
	defer func() {
		if err != nil {
			hold.Close()
		}
	}()
	st, err := openStore(filepath.Join(dir, gen, dbFile))
	if err != nil {
		return nil, damaged(name, err)
	}
	genDir := filepath.Join(dir, gen)
	if mark, stale := staleWriter(genDir); stale {
		if err := quickCheck(context.Background(), st.db, name); err != nil {
			st.Close()
			return nil, err
		}
		clearStaleWriter(genDir, mark)
	}
	if err := checkFormat(context.Background(), st, name); err != nil {
		st.Close()
		return nil, damaged(name, err)
	}
	lex, err := openKeywordReader(filepath.Join(dir, gen, dbFile))
	if err != nil {
		st.Close()
		return nil, damaged(name, err)
	}
	return &Index{name: name, dir: dir, gen: gen, hold: hold, st: st, lex: lex}, nil
}

// Check runs SQLite's quick_check on the index: ErrCorrupt (a
// DamagedError) when it finds damage.
func (ix *Index) Check(ctx context.Context) error { return quickCheck(ctx, ix.st.db, ix.name) }

// Generation names the build this Index reads. A `lore index --rebuild`
// publishes a new one; CurrentGeneration tells a long-lived reader when to
// reopen.
func (ix *Index) Generation() string { return ix.gen }

// CurrentGeneration is the generation that Open(dir, ...) would read now,
// or "" when the index has not been built.
func CurrentGeneration(dir string) string { return readPointer(dir, currentFile) }

// Chunks counts the chunks in the index.
func (ix *Index) Chunks(ctx context.Context) (int, error) {
	var n int
	err := ix.st.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n)
	return n, damaged(ix.name, err)
}

// Files lists the documents the index holds (not the skipped ones).
func (ix *Index) Files(ctx context.Context) ([]index.File, error) {
	rows, err := ix.st.db.QueryContext(ctx, `SELECT s.root, d.path FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.status = ? ORDER BY s.id, d.path`, index.StatusIndexed)
	if err != nil {
		return nil, damaged(ix.name, err)
	}
	defer rows.Close()
	var out []index.File
	for rows.Next() {
		var f index.File
		if err := rows.Scan(&f.Source, &f.Path); err != nil {
			return nil, damaged(ix.name, err)
		}
		f.Source = ingest.SourceDir(f.Source, f.Path)
		out = append(out, f)
	}
	return out, damaged(ix.name, rows.Err())
}

// Close releases the database.
func (ix *Index) Close() error {
	ix.graphMu.Lock()
	var g error
	if ix.graph != nil {
		g = ix.graph.close() // waits for searches in flight
		ix.graph = nil
	}
	ix.graphMu.Unlock()
	err := errors.Join(ix.lex.Close(), ix.st.Close(), g)
	ix.hold.Close()
	if readPointer(ix.dir, currentFile) != ix.gen {
		// The last reader of a replaced generation removes it, unless a
		// build holds the index (it removes it when it ends).
		if lk, err := acquireLock(ix.dir); err == nil {
			asides := retireStaleGenerations(ix.dir)
			lk.release() // a build may start while the folders go
			for _, aside := range asides {
				os.RemoveAll(aside)
			}
		}
	}
	return err
}

// Status checks the index (SQLite's quick_check), gathers its numbers and
// walks its sources to list files changed since they were indexed (by size
// and mtime, as a build would). Damage is not an error here: it is in
// Status.Damaged.
func (ix *Index) Status(ctx context.Context) (index.Status, error) {
	return ix.statusChecked(ctx, true)
}

// QuickStatus is Status without the quick_check, which reads every page
// (seconds on a large index, more with a cold page cache): what `lore
// index status` shows. Damage its own queries meet is still reported.
func (ix *Index) QuickStatus(ctx context.Context) (index.Status, error) {
	return ix.statusChecked(ctx, false)
}

func (ix *Index) statusChecked(ctx context.Context, check bool) (index.Status, error) {
	s := index.Status{Index: ix.name, Path: filepath.Join(ix.dir, ix.gen), Sources: []string{}, Skipped: []index.SkippedFile{}, Changed: []index.Change{}, ChunksByKind: map[string]int{}, DocumentsByKind: map[string]int{}}
	var err error
	if check {
		err = ix.Check(ctx)
	}
	if err == nil {
		var full index.Status
		if full, err = ix.status(ctx, s); err == nil {
			return full, nil
		}
	}
	var d *index.DamagedError
	if !errors.As(damaged(ix.name, err), &d) {
		return s, err
	}
	s.Damaged = d.Reason
	if r, err := ReadRemembered(ix.dir); err == nil {
		s.Sources = append(s.Sources, r.Sources...)
	} else if srcs, err := ix.st.sources(ctx); err == nil { // an index from before sources.json
		for _, src := range srcs {
			s.Sources = append(s.Sources, src.Root)
		}
	}
	return s, nil
}

// Changed reports whether the document rel under dir (dir as a Hit's
// Source gives it) differs on disk from what the index holds of it: gone,
// another size, or another mtime with other bytes (a touch or a checkout
// that kept the bytes is no change), as a build decides. It never compares
// extracted text, which for HTML, PDF or a non-UTF-8 file is not the
// file's lines.
func (ix *Index) Changed(ctx context.Context, dir, rel string) (bool, error) {
	var d index.DocState
	var root string
	err := ix.st.db.QueryRowContext(ctx, `SELECT d.size, d.mtime_ns, d.hash, s.root FROM documents d JOIN sources s ON s.id = d.source_id
		WHERE d.path = ? AND d.status = ? AND s.root IN (?, ?)`, rel, index.StatusIndexed, dir, filepath.Join(dir, rel)).Scan(&d.Size, &d.MTimeNS, &d.Hash, &root)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil // no longer indexed: a refresh found it gone or skipped
	case err != nil:
		return false, err
	}
	if _, err := os.Stat(root); err != nil {
		return false, nil // the source is not on this machine: nothing to compare
	}
	return index.FileChanged(filepath.Join(dir, rel), d), nil
}

// StatusOf opens the index in dir and returns its Status. An index too
// damaged to open still has one: its name, path, remembered sources and
// Damaged.
func StatusOf(ctx context.Context, dir, name string) (index.Status, error) {
	return openStatus(ctx, dir, name, true)
}

// QuickStatusOf is StatusOf without the quick_check (Index.QuickStatus).
func QuickStatusOf(ctx context.Context, dir, name string) (index.Status, error) {
	return openStatus(ctx, dir, name, false)
}

func openStatus(ctx context.Context, dir, name string, check bool) (index.Status, error) {
	ix, err := Open(dir, name)
	var d *index.DamagedError
	if errors.As(err, &d) {
		s := index.Status{Index: name, Path: filepath.Join(dir, CurrentGeneration(dir)), Sources: []string{}, Skipped: []index.SkippedFile{},
			Changed: []index.Change{}, ChunksByKind: map[string]int{}, DocumentsByKind: map[string]int{}, Damaged: d.Reason}
		if r, err := ReadRemembered(dir); err == nil {
			s.Sources = append(s.Sources, r.Sources...)
		}
		return s, nil
	}
	if err != nil {
		return index.Status{}, err
	}
	defer ix.Close()
	return ix.statusChecked(ctx, check)
}

func (ix *Index) status(ctx context.Context, s index.Status) (index.Status, error) {
	db := ix.st.db
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM documents WHERE status = 'indexed'), (SELECT count(*) FROM chunks), (SELECT count(*) FROM vectors)`).
		Scan(&s.Documents, &s.Chunks, &s.Vectors); err != nil {
		return s, fmt.Errorf("read index: %w", err)
	}
	s.Embedder, _ = ix.st.meta(ctx, "embedder")
	s.Chunker, _ = ix.st.meta(ctx, "chunker")
	d, _ := ix.st.meta(ctx, "dim")
	s.Dimension, _ = strconv.Atoi(d)
	s.BuiltAt = ix.builtAt(ctx)
	entries, _ := os.ReadDir(s.Path)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			s.SizeBytes += fi.Size()
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT kind, count(*) FROM chunks GROUP BY kind`)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var k string
		var n int
		rows.Scan(&k, &n)
		s.ChunksByKind[k] = n
	}
	rows.Close()
	srcs, err := ix.st.sources(ctx)
	if err != nil {
		return s, err
	}
	byID := map[int64]map[string]index.DocState{}
	for _, src := range srcs {
		s.Sources = append(s.Sources, src.Root)
		docs, err := ix.st.documents(ctx, src.ID)
		if err != nil {
			return s, err
		}
		byID[src.ID] = docs
		for p, d := range docs {
			switch d.Status {
			case index.StatusSkipped:
				s.Skipped = append(s.Skipped, index.SkippedFile{Path: src.Join(p), Reason: d.Reason})
			case index.StatusIndexed:
				s.DocumentsByKind[ingest.FileKind(p)]++
			}
		}
	}
	remembered, _ := ReadRemembered(ix.dir) // none: links out are skipped, the default
	if s.Changed, err = index.Changes(ctx, srcs, remembered.Walk(), func(src index.Source) (map[string]index.DocState, error) { return byID[src.ID], nil }); err != nil {
		return s, err
	}
	sortSkipped(s.Skipped)
	return s, nil
}

// sortSkipped orders skipped files by path, for stable output.
func sortSkipped(s []index.SkippedFile) {
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}
