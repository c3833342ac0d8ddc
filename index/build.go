package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/units"
)

// chunkerVersion changes whenever chunking output changes for the same
// input, so that existing documents are re-chunked (their unchanged chunks
// keep their vectors: only new hashes are embedded).
const chunkerVersion = "3"

// BuildOptions says what to index and how.
type BuildOptions struct {
	Name           string   // the index name, for messages and the summary
	Paths          []string // folders or files to add; none means the remembered sources
	Rebuild        bool     // start from scratch
	Embedder       Embedder // nil builds a lexical-only index
	EmbedBatchSize int
	Chunk          ChunkOptions
	MaxFileSize    int64
	Workers        int
	// Progress, if set, is called often from one goroutine; keep it cheap.
	Progress func(Progress)
	// Notice, if set, receives one-line warnings meant for the user.
	Notice func(string)
}

// Progress is a snapshot of a build.
type Progress struct {
	Phase          string // "scan", "index", "graph", "done"
	FilesTotal     int    // files to (re)index
	FilesDone      int
	Chunks         int // chunks of the files read so far
	ChunksEmbedded int
	// Done is the share of the files finished, 0-1, counting the group
	// being embedded by the share of its chunks embedded: a group holds up
	// to 512 chunks, minutes of work with a slow model, and FilesDone
	// moves only when the group is written.
	Done       float64
	GraphDone  int
	GraphTotal int
	Started    time.Time
}

// SkippedFile is a file the index does not hold, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Summary is what a build did.
type Summary struct {
	Index          string        `json:"index"`
	Embedder       string        `json:"embedder"` // the model it was built with, or "none", as status says
	FilesIndexed   int           `json:"files_indexed"`
	FilesUnchanged int           `json:"files_unchanged"`
	FilesRemoved   int           `json:"files_removed"`
	FilesSkipped   []SkippedFile `json:"files_skipped"`
	Chunks         int           `json:"chunks"`
	ChunksEmbedded int           `json:"chunks_embedded"`
	Seconds        float64       `json:"seconds"`
	TotalFiles     int           `json:"total_files"`
	TotalChunks    int           `json:"total_chunks"`
	Warnings       []string      `json:"warnings"`
}

// ErrNoSources means there is nothing to index.
var ErrNoSources = errors.New("no sources")

// ErrBadSource means a path given to index is missing or not a file or folder.
// Its text begins the message.
var ErrBadSource = errors.New("cannot index")

// Build creates or refreshes the index in dir. It holds the index lock for
// its whole run. Work is committed as it goes, so an interrupted build
// keeps everything it finished; the next build picks up from there.
func Build(ctx context.Context, dir string, opt BuildOptions) (Summary, error) {
	b := &builder{opt: opt, dir: dir, keywords: newKeywordBuffer(), sum: Summary{Index: opt.Name, FilesSkipped: []SkippedFile{}, Warnings: []string{}}}
	b.progress.Started = time.Now()
	if b.opt.Workers <= 0 {
		b.opt.Workers = runtime.GOMAXPROCS(0)
	}
	if b.opt.EmbedBatchSize <= 0 {
		b.opt.EmbedBatchSize = 32
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return b.sum, fmt.Errorf("create index folder: %w", err)
	}
	lk, err := acquireLock(dir)
	if err != nil {
		return b.sum, err
	}
	defer lk.release()
	err = damaged(opt.Name, b.run(ctx))
	b.sum.Seconds = time.Since(b.progress.Started).Seconds()
	return b.sum, err
}

type builder struct {
	opt      BuildOptions
	dir      string
	gen      string
	st       *store
	sig      string
	keywords *keywordBuffer // chunks written since the last keyword segment
	dim      int
	sum      Summary
	progress Progress
	noticed  map[string]bool
	pdfTool  bool
	graph    *graphFeeder
}

func (b *builder) notice(msg string) {
	if b.noticed == nil {
		b.noticed = map[string]bool{}
	}
	if b.noticed[msg] {
		return
	}
	b.noticed[msg] = true
	b.sum.Warnings = append(b.sum.Warnings, msg)
	if b.opt.Notice != nil {
		b.opt.Notice(msg)
	}
}

func (b *builder) report(phase string) {
	b.progress.Phase = phase
	if b.opt.Progress != nil {
		b.opt.Progress(b.progress)
	}
}

func (b *builder) run(ctx context.Context) error {
	if b.opt.Rebuild {
		b.dropDamagedNext(ctx)
	}
	current := readPointer(b.dir, currentFile)
	next := readPointer(b.dir, nextFile)
	paths := b.opt.Paths
	// Refuse bad input before creating anything.
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%w %s: %w", ErrBadSource, p, errors.Unwrap(err))
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return fmt.Errorf("%w %s: not a file or folder (a device, pipe or socket)", ErrBadSource, p)
		}
	}
	if current == "" && next == "" && len(paths) == 0 {
		return fmt.Errorf("%w: index %q has no sources yet: name a folder, e.g. `lore index ./docs`", ErrNoSources, b.opt.Name)
	}
	if current == "" && next == "" && b.opt.Embedder != nil {
		// A first build whose embedder cannot work must leave nothing
		// behind: an empty index bound to that embedder would refuse the
		// natural retry with --embedder none.
		if _, err := b.opt.Embedder.Check(ctx); err != nil {
			return err
		}
	}
	switch {
	case next != "":
		b.gen = next // finish the interrupted rebuild first
		b.notice("resuming an interrupted rebuild")
	case current == "":
		b.gen = newGeneration()
	case b.opt.Rebuild:
		b.gen = newGeneration()
		if len(paths) == 0 {
			old, err := rememberedSources(ctx, b.dir, current, b.opt.Name)
			if err != nil {
				return err
			}
			paths = old
		}
	default:
		b.gen = current
	}
	removeStaleGenerations(b.dir)
	if err := os.MkdirAll(filepath.Join(b.dir, b.gen), 0o755); err != nil {
		return err
	}
	existed := fileExists(filepath.Join(b.dir, b.gen, dbFile))
	if err := markWriting(filepath.Join(b.dir, b.gen)); err != nil {
		return err
	}
	defer clearWriting(filepath.Join(b.dir, b.gen)) // after st.Close
	st, err := openStore(filepath.Join(b.dir, b.gen, dbFile))
	if err != nil {
		return err
	}
	defer st.Close()
	b.st = st
	if existed {
		// A damaged database must not be written to, nor called unchanged.
		if err := checkPages(ctx, st.db, b.opt.Name); err != nil {
			return err
		}
	}
	switch {
	case current == "":
		// Nothing to protect readers from: publish at once, so an
		// interrupted first build is resumed rather than started over.
		err = writePointer(b.dir, currentFile, b.gen)
	case b.gen != current:
		err = writePointer(b.dir, nextFile, b.gen)
	}
	if err != nil {
		return fmt.Errorf("publish index: %w", err)
	}
	if err := b.checkMeta(ctx); err != nil {
		return err
	}
	if err := st.catchUpKeywords(ctx); err != nil {
		return fmt.Errorf("write keyword index: %w", err)
	}
	firstSeg, err := st.lastSegment(ctx)
	if err != nil {
		return err
	}

	sources, wanted, err := b.sources(ctx, paths)
	if err != nil {
		return err
	}
	b.report("scan")
	jobs, removed, err := b.scan(ctx, sources, wanted)
	if err != nil {
		return err
	}
	if len(jobs) > 0 && b.opt.Embedder != nil {
		if err := b.checkEmbedder(ctx); err != nil {
			return err
		}
		b.startGraph()
		defer b.stopGraph()
	}
	// Remembered only once the embedder answered: a new folder named
	// while Ollama is down must not join the index's sources unindexed.
	if err := b.remember(ctx); err != nil {
		return err
	}
	b.progress.FilesTotal = len(jobs)
	b.report("index")
	if err := b.process(ctx, jobs); err != nil {
		return err
	}
	if err := st.compact(ctx, firstSeg); err != nil {
		return fmt.Errorf("write keyword index: %w", err)
	}
	if len(removed) > 0 {
		if err := st.removeDocuments(ctx, removed); err != nil {
			return fmt.Errorf("remove deleted files: %w", err)
		}
		b.sum.FilesRemoved = len(removed)
	}
	if _, err := st.gcVectors(ctx); err != nil {
		return fmt.Errorf("drop unused vectors: %w", err)
	}
	if err := st.setMeta(ctx, "built_at", strconv.FormatInt(time.Now().Unix(), 10)); err != nil {
		return err
	}
	if b.opt.Embedder != nil {
		if err := b.updateGraph(ctx); err != nil {
			return err
		}
	}
	if err := st.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM documents WHERE status = 'indexed'), (SELECT count(*) FROM chunks)`).Scan(&b.sum.TotalFiles, &b.sum.TotalChunks); err != nil {
		return err
	}
	if b.gen != current && current != "" {
		if _, err := st.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return err
		}
		if err := writePointer(b.dir, currentFile, b.gen); err != nil {
			return fmt.Errorf("publish rebuilt index: %w", err)
		}
		os.Remove(filepath.Join(b.dir, nextFile))
		removeStaleGenerations(b.dir)
	}
	b.report("done")
	return nil
}

// checkMeta refuses an index built by another schema or embedder, and
// records this build's settings in a new one.
func (b *builder) checkMeta(ctx context.Context) error {
	b.sig = fmt.Sprintf("v%s size=%d overlap=%d", chunkerVersion, b.opt.Chunk.Size, b.opt.Chunk.Overlap)
	want := "none"
	if b.opt.Embedder != nil {
		want = b.opt.Embedder.Model()
	}
	b.sum.Embedder = want
	ver, err := b.st.meta(ctx, "schema_version")
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	if ver == "" {
		return b.st.setMeta(ctx, "schema_version", schemaVersion, "embedder", want, "created_at", strconv.FormatInt(time.Now().Unix(), 10), "chunker", b.sig)
	}
	if ver == "1" && !b.opt.Rebuild {
		b.notice("upgrading the index to this lore's format (once; nothing is read or embedded again)")
		if err := migrateV1(ctx, b.st); err != nil {
			return err
		}
	} else if ver != schemaVersion {
		return formatError(b.opt.Name, ver)
	}
	have, _ := b.st.meta(ctx, "embedder")
	if !sameEmbedder(have, want) {
		return fmt.Errorf("index %q was built with embedder %s but %s is configured: run `lore index --rebuild` to re-embed, or configure %s again",
			b.opt.Name, describeEmbedder(have), describeEmbedder(want), describeEmbedder(have))
	}
	return b.st.setMeta(ctx, "chunker", b.sig)
}

// sameEmbedder tells whether two recorded embedders make the same vectors:
// nomic-embed-text and nomic-embed-text:latest are one model to Ollama.
func sameEmbedder(a, b string) bool {
	if a == "none" || b == "none" || a == "" || b == "" {
		return a == b
	}
	return ollama.FullName(a) == ollama.FullName(b)
}

func describeEmbedder(model string) string {
	if model == "none" {
		return "none (lexical only)"
	}
	return model
}

// checkEmbedder asks the embedder to prove it works and compares its
// dimension with the index's.
func (b *builder) checkEmbedder(ctx context.Context) error {
	dim, err := b.opt.Embedder.Check(ctx)
	if err != nil {
		return err
	}
	have, _ := b.st.meta(ctx, "dim")
	if have != "" && have != strconv.Itoa(dim) {
		return fmt.Errorf("index %q holds %s-dimensional vectors but %s now returns %d: run `lore index --rebuild`",
			b.opt.Name, have, b.opt.Embedder.Model(), dim)
	}
	b.dim = dim
	return b.st.setMeta(ctx, "dim", strconv.Itoa(dim))
}

// sources adds the paths not yet covered by a source and returns the
// sources to walk, with those to refresh marked (nil: all of them). A source
// nested with one to refresh is walked too, though left as it is, so that
// its files are not indexed a second time through the other.
func (b *builder) sources(ctx context.Context, paths []string) ([]source, map[int64]bool, error) {
	all, err := b.st.sources(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 {
		if len(all) == 0 {
			return nil, nil, fmt.Errorf("%w: index %q has no sources yet: name a folder, e.g. `lore index ./docs`", ErrNoSources, b.opt.Name)
		}
		return all, nil, nil
	}
	wanted := map[int64]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, err
		}
		abs = filepath.Clean(abs)
		if src, ok := covering(all, abs); ok {
			if src.Root != abs {
				b.notice(fmt.Sprintf("%s is already indexed as part of %s", abs, src.Root))
			}
			wanted[src.ID] = true
			continue
		}
		src, err := b.st.addSource(ctx, abs)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, src)
		wanted[src.ID] = true
	}
	var walk []source
	for _, s := range all {
		if wanted[s.ID] || nestsWithAny(s, all, wanted) {
			walk = append(walk, s)
		}
	}
	return walk, wanted, nil
}

func nestsWithAny(s source, all []source, wanted map[int64]bool) bool {
	for _, o := range all {
		if wanted[o.ID] {
			if _, in := covering([]source{o}, s.Root); in {
				return true
			}
			if _, in := covering([]source{s}, o.Root); in {
				return true
			}
		}
	}
	return false
}

// covering returns the source that already holds path: the same folder or
// file, or a folder it lies inside, compared by real path so that a
// symbolic link or a relative spelling does not make a second source.
func covering(sources []source, path string) (source, bool) {
	real := realPath(path)
	for _, s := range sources {
		root := realPath(s.Root)
		if real == root || strings.HasPrefix(real, root+string(filepath.Separator)) || root == string(filepath.Separator) {
			return s, true
		}
	}
	return source{}, false
}

// realPath resolves symbolic links; a path that cannot be resolved (gone,
// unreadable) stands for itself.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// A job is one file to read, with what the index knew of it before.
type job struct {
	src  source
	e    walkEntry
	prev *docRow
}

// scan walks the sources and sorts files into work to do, unchanged, and
// gone. A file is unchanged when its size and mtime match; a file whose
// mtime is too close to when it was indexed is re-read and its hash
// compared instead (the "racy git" problem: an edit within the same clock
// tick as the last index run would otherwise go unseen).
func (b *builder) scan(ctx context.Context, sources []source, wanted map[int64]bool) ([]job, []int64, error) {
	var jobs []job
	var removed []int64
	var walkSkips []FileUpdate
	_, pdfErr := exec.LookPath("pdftotext")
	b.pdfTool = pdfErr == nil
	for _, w := range walkSources(sources) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		src, entries := w.source, w.entries
		if wanted != nil && !wanted[src.ID] {
			continue // walked only to claim its files
		}
		if w.err != nil {
			b.notice(fmt.Sprintf("source %s is not readable (%v); its files stay in the index as they were", src.Root, shortErr(w.err)))
			continue
		}
		docs, err := b.st.documents(ctx, src.ID)
		if err != nil {
			return nil, nil, err
		}
		seen := make(map[string]bool, len(entries))
		for _, e := range entries {
			seen[e.Rel] = true
			prev, known := docs[e.Rel]
			if e.Reason != "" {
				if !known || prev.Reason != e.Reason {
					walkSkips = append(walkSkips, FileUpdate{SourceID: src.ID, Path: e.Rel, Status: statusSkipped, Reason: e.Reason, Chunker: b.sig})
				}
				b.skipped(src.Root, e.Rel, e.Reason)
				continue
			}
			if known && b.unchanged(prev, e) {
				if prev.Status == statusSkipped {
					b.skipped(src.Root, e.Rel, prev.Reason)
				} else {
					b.sum.FilesUnchanged++
				}
				continue
			}
			j := job{src: src, e: e}
			if known {
				j.prev = &prev
			}
			jobs = append(jobs, j)
		}
		for p, d := range docs {
			if !seen[p] {
				removed = append(removed, d.ID)
			}
		}
	}
	if len(walkSkips) > 0 {
		if _, err := b.st.writeFiles(ctx, walkSkips); err != nil {
			return nil, nil, err
		}
	}
	return jobs, removed, nil
}

const racyWindow = 2 * time.Second

func (b *builder) unchanged(prev docRow, e walkEntry) bool {
	if prev.Size != e.Size || prev.MTimeNS != e.MTime.UnixNano() {
		return false
	}
	switch {
	case prev.Status == statusIndexed:
		return prev.Chunker == b.sig && time.Duration(prev.IndexedAt-prev.MTimeNS) >= racyWindow
	case strings.HasPrefix(prev.Reason, reasonTooLarge):
		return e.Size > b.opt.MaxFileSize
	case prev.Reason == errNoPDFTool.Error():
		return !b.pdfTool
	case prev.Reason == reasonBinary || prev.Reason == reasonUnsupported:
		return true
	}
	return false // failures are retried
}

// Skip reasons that depend only on the file.
const (
	reasonTooLarge    = "too large"
	reasonBinary      = "binary file"
	reasonUnsupported = "unsupported file type"
	reasonNotRegular  = "not a regular file"
)

// result is a job done by a worker.
type result struct {
	root string // the source's root, for messages
	up   FileUpdate
	same bool // content unchanged: only the stat info is refreshed
	warn string
}

func (b *builder) process(ctx context.Context, jobs []job) error {
	if len(jobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan job)
	out := make(chan result, 4*b.opt.Workers)
	var wg sync.WaitGroup
	for range b.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				select {
				case out <- b.load(ctx, j):
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(in)
		for _, j := range jobs {
			select {
			case in <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()

	var group []result
	chunks := 0
	lastFlush := time.Now()
	for r := range out {
		group = append(group, r)
		chunks += len(r.up.Pieces)
		if len(group) >= 64 || chunks >= 512 || time.Since(lastFlush) > time.Second {
			if err := b.flush(ctx, group); err != nil {
				return err
			}
			group, chunks, lastFlush = group[:0], 0, time.Now()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.flush(ctx, group); err != nil {
		return err
	}
	return b.writeKeywords(ctx)
}

// writeKeywords writes the chunks gathered since the last segment as one.
func (b *builder) writeKeywords(ctx context.Context) error {
	if err := b.st.writeKeywords(ctx, b.keywords); err != nil {
		return fmt.Errorf("write keyword index: %w", err)
	}
	return nil
}

// load reads, checks and chunks one file.
func (b *builder) load(ctx context.Context, j job) result {
	up := FileUpdate{SourceID: j.src.ID, Path: j.e.Rel, Size: j.e.Size, MTimeNS: j.e.MTime.UnixNano(), Status: statusIndexed, Chunker: b.sig}
	skip := func(reason string) result {
		up.Status, up.Reason = statusSkipped, reason
		return result{root: j.src.Root, up: up}
	}
	ft := typeOf(j.e.Rel)
	if ft == typeNone {
		return skip(reasonUnsupported)
	}
	if j.e.Size > b.opt.MaxFileSize {
		return skip(fmt.Sprintf("%s: %s is over the %s limit (raise max-file-size)", reasonTooLarge, units.Bytes(j.e.Size), units.Bytes(b.opt.MaxFileSize)))
	}
	data, err := readFileLimited(j.e.Abs, b.opt.MaxFileSize)
	if err != nil {
		return skip("unreadable: " + shortErr(err))
	}
	up.Hash = contentHash(data)
	if p := j.prev; p != nil && p.Status == statusIndexed && p.Hash == up.Hash && p.Chunker == b.sig {
		return result{root: j.src.Root, up: up, same: true}
	}
	if ft != typePDF && isBinary(data) {
		return skip(reasonBinary)
	}
	res, err := loadDocument(ctx, ft, j.e.Abs, data, b.opt.Chunk)
	if err != nil {
		if errors.Is(err, errNoPDFTool) {
			return skip(errNoPDFTool.Error())
		}
		return skip("failed to load: " + err.Error())
	}
	up.Pieces = res.pieces
	up.analyze()
	r := result{root: j.src.Root, up: up}
	if res.repaired {
		r.warn = j.e.Rel + ": invalid UTF-8 replaced with U+FFFD"
		r.up.Reason = "invalid UTF-8 repaired"
	}
	return r
}

// contentHash is what the index records of a file's bytes.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

func readFileLimited(path string, limit int64) ([]byte, error) {
	// Non-blocking: a file replaced by a named pipe since the walk must not
	// wait for a writer; what was opened is checked, not the path again.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New(notRegular(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("grew past the %s limit while being read", units.Bytes(limit))
	}
	return data, nil
}

// flush embeds what a group of files needs and then writes the group in one
// transaction. Vectors are committed first, batch by batch: a run killed in
// between has them already and does not embed them again.
func (b *builder) flush(ctx context.Context, group []result) error {
	if len(group) == 0 {
		return nil
	}
	var hashes []string
	texts := map[string]string{}
	for _, r := range group {
		if r.warn != "" {
			b.notice(r.warn)
		}
		if r.up.Status == statusSkipped {
			b.skipped(r.root, r.up.Path, r.up.Reason)
			if r.up.Reason == errNoPDFTool.Error() {
				b.notice("PDF files skipped: " + errNoPDFTool.Error())
			}
			continue
		}
		if r.same {
			b.sum.FilesUnchanged++
			continue
		}
		b.sum.FilesIndexed++
		b.sum.Chunks += len(r.up.Pieces)
		for _, p := range r.up.Pieces {
			h := pieceHash(p)
			if _, ok := texts[h]; !ok {
				texts[h] = embedText(p)
				hashes = append(hashes, h)
			}
		}
	}
	b.progress.Chunks = b.sum.Chunks
	if b.opt.Embedder != nil && len(hashes) > 0 {
		missing, err := b.st.missingHashes(ctx, hashes)
		if err != nil {
			return err
		}
		var todo []string
		for _, h := range hashes {
			if missing[h] {
				todo = append(todo, h)
			}
		}
		for i := 0; i < len(todo); i += b.opt.EmbedBatchSize {
			batch := todo[i:min(i+b.opt.EmbedBatchSize, len(todo))]
			in := make([]string, len(batch))
			for k, h := range batch {
				in[k] = texts[h]
			}
			vecs, err := b.opt.Embedder.EmbedDocuments(ctx, in)
			if err != nil {
				return err
			}
			for _, v := range vecs {
				if len(v) != b.dim {
					return fmt.Errorf("%s returned a %d-dimensional vector, the index holds %d: run `lore index --rebuild`", b.opt.Embedder.Model(), len(v), b.dim)
				}
			}
			ids, err := b.st.putVectors(ctx, batch, vecs)
			if err != nil {
				return fmt.Errorf("store vectors: %w", err)
			}
			b.feedGraph(ids, vecs)
			b.sum.ChunksEmbedded += len(batch)
			b.progress.ChunksEmbedded = b.sum.ChunksEmbedded
			b.progress.Done = b.filesShare(float64(b.progress.FilesDone) + float64(len(group))*float64(i+len(batch))/float64(len(todo)))
			b.report("index")
		}
	}
	// Unchanged content needs only its stat info refreshed: write those
	// rows without touching their chunks.
	var full, statOnly []FileUpdate
	for _, r := range group {
		if r.same {
			statOnly = append(statOnly, r.up)
		} else {
			full = append(full, r.up)
		}
	}
	added, err := b.st.writeFiles(ctx, full)
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	b.keywords.add(added)
	if b.keywords.pending.Len() >= segmentChunks {
		if err := b.writeKeywords(ctx); err != nil {
			return err
		}
	}
	if err := b.st.touchFiles(ctx, statOnly); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	b.progress.FilesDone += len(group)
	b.progress.Done = b.filesShare(float64(b.progress.FilesDone))
	b.report("index")
	return nil
}

// filesShare is files as a share of the files to index.
func (b *builder) filesShare(files float64) float64 {
	if b.progress.FilesTotal == 0 {
		return 1
	}
	return min(files/float64(b.progress.FilesTotal), 1)
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
func (b *builder) loadGraph() *vectorGraph {
	vg, err := readGraphFile(filepath.Join(b.dir, b.gen, graphFile), b.dim)
	if err == nil {
		if err = vg.g.Verify(); err != nil {
			vg.close()
		}
	}
	if errors.Is(err, errGraphFormat) {
		b.notice(graphDamagedNotice)
	}
	if err == nil && vg.tombstones() > max(64, vg.Len()/3) {
		vg.close()
		err = errors.New("mostly tombstones")
	}
	if err != nil {
		vg = newVectorGraph(b.dim)
	}
	return vg
}

// startGraph inserts vectors as the build stores them, from one goroutine
// per core: inserts lock per node, so they scale with cores, and they
// overlap with chunking and SQLite writes.
func (b *builder) startGraph() {
	f := &graphFeeder{vg: b.loadGraph(), ch: make(chan graphItem, 1024), done: make(chan error, 1)}
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
	b.graph = f
}

func (b *builder) feedGraph(ids []int64, vecs [][]float32) {
	if b.graph == nil {
		return
	}
	for i, id := range ids {
		if id != 0 {
			b.graph.ch <- graphItem{id, vecs[i]}
		}
	}
}

// stopGraph waits for the feeder to finish what it was given.
func (b *builder) stopGraph() (*graphFeeder, error) {
	f := b.graph
	if f == nil {
		return nil, nil
	}
	b.graph = nil
	close(f.ch)
	return f, <-f.done
}

// updateGraph brings the ANN graph file in line with the stored vectors:
// add and remove the difference, write it back atomically. A missing or
// unreadable graph is rebuilt from the vectors, never an error.
func (b *builder) updateGraph(ctx context.Context) error {
	if b.dim == 0 {
		d, _ := b.st.meta(ctx, "dim")
		b.dim, _ = strconv.Atoi(d)
		if b.dim == 0 {
			return nil // nothing was ever embedded
		}
	}
	f, err := b.stopGraph()
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	vg, fed := (*vectorGraph)(nil), 0
	if f != nil {
		vg, fed = f.vg, f.added
	} else {
		vg = b.loadGraph()
	}
	b.report("graph")
	added, removed, err := syncGraph(ctx, b.st, vg, func(done, total int) {
		b.progress.GraphDone, b.progress.GraphTotal = done, total
		b.report("graph")
	})
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	path := filepath.Join(b.dir, b.gen, graphFile)
	version, err := b.st.vectorVersion(ctx)
	if err != nil {
		return fmt.Errorf("update vector graph: %w", err)
	}
	if fed+added+removed == 0 && fileExists(path) && vg.synced == version {
		vg.close()
		return nil
	}
	defer vg.close()
	vg.synced = version
	if err := vg.writeFile(path); err != nil {
		return fmt.Errorf("save vector graph: %w", err)
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// skipped records a file the index does not hold, named as
// `lore index status` names it.
func (b *builder) skipped(root, rel, reason string) {
	b.sum.FilesSkipped = append(b.sum.FilesSkipped, SkippedFile{joinSource(root, rel), reason})
}

// sortSkipped orders skipped files by path, for stable output.
func sortSkipped(s []SkippedFile) {
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}
