package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/units"
)

// BuildTo creates or refreshes the index opt.Name in t, any store's. It
// holds the store's write lock for its whole run. Work is committed as it
// goes, so an interrupted build keeps everything it finished; the next
// build picks up from there.
func BuildTo(ctx context.Context, t Target, opt BuildOptions) (Summary, error) {
	sum, err := buildOnce(ctx, t, opt)
	if errors.Is(err, ErrIncomplete) && ctx.Err() == nil {
		// The store found chunks missing that it had taken, and forgot
		// their documents: a second pass writes them again (the rest is
		// unchanged and costs a scan).
		if opt.Notice != nil {
			opt.Notice(err.Error() + ": writing them again")
		}
		sum, err = buildOnce(ctx, t, opt)
	}
	return sum, err
}

func buildOnce(ctx context.Context, t Target, opt BuildOptions) (Summary, error) {
	b := &builder{opt: opt, sum: Summary{Index: opt.Name, FilesSkipped: []SkippedFile{}, Warnings: []string{}}}
	b.progress.Started = time.Now()
	if b.opt.Workers <= 0 {
		b.opt.Workers = runtime.GOMAXPROCS(0)
	}
	if b.opt.EmbedBatchSize <= 0 {
		b.opt.EmbedBatchSize = 32
	}
	err := b.run(ctx, t)
	b.sum.Seconds = time.Since(b.progress.Started).Seconds()
	return b.sum, err
}

type builder struct {
	opt      BuildOptions
	w        Writer
	sig      string
	have     string // the embedder the Writer's generation holds ("" new)
	dim      int
	sum      Summary
	progress Progress
	noticed  map[string]bool
	pdfTool  bool
	wrote    bool // chunks, skip records, vectors or removals were written
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

func (b *builder) run(ctx context.Context, t Target) error {
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
	w, err := b.begin(ctx, t, false)
	if err != nil {
		return err
	}
	defer func() {
		if b.w != nil { // the Writer begin made last
			b.w.Close()
		}
	}()
	err = b.checkMeta(ctx)
	if errors.Is(err, errOtherEmbedder) && b.opt.Rebuild {
		// Only an interrupted rebuild, resumed, holds another embedder's
		// work here: a rebuild told another embedder starts it over,
		// else the advice to rebuild would lead back to this refusal.
		b.notice(fmt.Sprintf("the interrupted rebuild used embedder %s: starting it over with %s", describeEmbedder(b.have), describeEmbedder(b.sum.Embedder)))
		w.Close()
		b.w = nil
		if w, err = b.begin(ctx, t, true); err != nil {
			return err
		}
		err = b.checkMeta(ctx)
	}
	if err != nil {
		return err
	}
	if b.opt.Rebuild && len(paths) == 0 {
		if paths, err = w.PreviousSources(ctx); err != nil {
			return err
		}
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
	if len(jobs) > 0 && b.opt.Embedder != nil && !b.opt.DeferVectors {
		if err := b.checkEmbedder(ctx); err != nil {
			return err
		}
	}
	// Remembered only once the embedder answered: a new folder named
	// while Ollama is down must not join the index's sources unindexed.
	// A rebuild's are remembered once it is published: until then the
	// index is what it was, embedder and all.
	if !b.opt.Rebuild {
		if err := b.remember(ctx); err != nil {
			return err
		}
	}
	b.progress.FilesTotal = len(jobs)
	b.report("index")
	if err := b.process(ctx, jobs); err != nil {
		return err
	}
	if len(removed) > 0 {
		if err := w.RemoveDocuments(ctx, removed); err != nil {
			return fmt.Errorf("remove deleted files: %w", err)
		}
		b.wrote = true
	}
	if b.opt.Only != nil && !b.wrote {
		// A sync batch that found nothing changed (a touch, a temporary
		// file come and gone): nothing to publish, readers keep theirs.
		b.report("done")
		return nil
	}
	b.sum.TotalFiles, b.sum.TotalChunks, err = w.Publish(ctx, PublishOptions{Vectors: b.opt.Embedder != nil, Batch: b.opt.Only != nil, Progress: func(phase string, done, total int) {
		b.progress.GraphDone, b.progress.GraphTotal = done, total
		b.report(phase)
	}})
	if err != nil {
		return err
	}
	if b.opt.Rebuild {
		if err := b.remember(ctx); err != nil {
			return err
		}
	}
	b.report("done")
	return nil
}

// begin asks t for the build's Writer. discardNext drops an interrupted
// rebuild rather than resume it.
func (b *builder) begin(ctx context.Context, t Target, discardNext bool) (Writer, error) {
	paths := b.opt.Paths
	w, err := t.BeginWrite(ctx, WriteRequest{Name: b.opt.Name, Rebuild: b.opt.Rebuild, KeepSources: b.opt.Rebuild && len(paths) == 0, DiscardNext: discardNext, DeferVectors: b.opt.DeferVectors, Notice: b.notice, Before: func(exists bool) error {
		if !exists && len(paths) == 0 {
			return fmt.Errorf("%w: index %q has no sources yet: name a folder, e.g. `lore index ./docs`", ErrNoSources, b.opt.Name)
		}
		if (!exists || b.opt.Rebuild) && b.opt.Embedder != nil {
			// A first build or a rebuild whose embedder cannot work must
			// leave nothing behind: an empty index, or a rebuild to
			// resume, bound to that embedder would refuse the natural
			// retry with --embedder none.
			if _, err := b.opt.Embedder.Check(ctx); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	b.w = w
	return w, nil
}

// analyser is a Writer whose Prepare analyses chunks for keyword search.
// Its version joins the signature a document is recorded with, so that a
// document analysed by another lore is analysed again on the next build,
// as one chunked by another chunker is chunked again (its unchanged
// chunks keep their vectors).
type analyser interface{ AnalyserVersion() string }

// checkMeta refuses an index built with another embedder, and records
// this build's settings in a new one. (The store checks its own format
// when the build begins.)
func (b *builder) checkMeta(ctx context.Context) error {
	b.sig = fmt.Sprintf("v%s size=%d overlap=%d", ingest.ChunkerVersion, b.opt.Chunk.Size, b.opt.Chunk.Overlap)
	if a, ok := b.w.(analyser); ok {
		b.sig += " analysis=" + a.AnalyserVersion()
	}
	want := "none"
	if b.opt.Embedder != nil {
		want = b.opt.Embedder.Model()
	}
	b.sum.Embedder = want
	have, err := b.w.Meta(ctx, "embedder")
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	b.have = have
	if have == "" {
		return b.w.SetMeta(ctx, "embedder", want, "chunker", b.sig)
	}
	if !b.sameModel(have, want) {
		return otherEmbedderError(fmt.Sprintf("index %q holds embedder %s, not %s: `lore index --rebuild %s` rebuilds it with %s, `lore index %s` keeps %s",
			b.opt.Name, describeEmbedder(have), describeEmbedder(want), embedderFlags(want), want, embedderFlags(have), have))
	}
	return b.w.SetMeta(ctx, "chunker", b.sig)
}

// sameModel tells whether the index's recorded embedder (have) is the
// configured one (want): nomic-embed-text and nomic-embed-text:latest are
// one model to Ollama, which only the embedder knows (SameModel).
func (b *builder) sameModel(have, want string) bool {
	if s, ok := b.opt.Embedder.(interface{ SameModel(string) bool }); ok && have != "none" && have != "" {
		return s.SameModel(have)
	}
	return have == want
}

// errOtherEmbedder is checkMeta's refusal of an embedder the index (or
// the rebuild it resumes) does not hold.
var errOtherEmbedder = errors.New("another embedder")

type otherEmbedderError string

func (e otherEmbedderError) Error() string        { return string(e) }
func (e otherEmbedderError) Is(target error) bool { return target == errOtherEmbedder }

// embedderFlags are the flags that name model.
func embedderFlags(model string) string {
	if model == "none" {
		return "--embedder none"
	}
	return "--embedder ollama --embed-model " + model
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
	have, _ := b.w.Meta(ctx, "dim")
	if have != "" && have != strconv.Itoa(dim) {
		return fmt.Errorf("index %q holds %s-dimensional vectors but %s now returns %d: run `lore index --rebuild`",
			b.opt.Name, have, b.opt.Embedder.Model(), dim)
	}
	b.dim = dim
	return b.w.SetMeta(ctx, "dim", strconv.Itoa(dim))
}

// sources adds the paths not yet covered by a source and returns the
// sources to walk, with those to refresh marked (nil: all of them). A source
// nested with one to refresh is walked too, though left as it is, so that
// its files are not indexed a second time through the other.
func (b *builder) sources(ctx context.Context, paths []string) ([]Source, map[int64]bool, error) {
	all, err := b.w.Sources(ctx)
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
		src, err := b.w.AddSource(ctx, abs)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, src)
		wanted[src.ID] = true
	}
	var walk []Source
	for _, s := range all {
		if wanted[s.ID] || nestsWithAny(s, all, wanted) {
			walk = append(walk, s)
		}
	}
	return walk, wanted, nil
}

func nestsWithAny(s Source, all []Source, wanted map[int64]bool) bool {
	for _, o := range all {
		if wanted[o.ID] {
			if _, in := covering([]Source{o}, s.Root); in {
				return true
			}
			if _, in := covering([]Source{s}, o.Root); in {
				return true
			}
		}
	}
	return false
}

// covering returns the source that already holds path: the same folder or
// file, or a folder it lies inside, compared by real path so that a
// symbolic link or a relative spelling does not make a second source.
func covering(sources []Source, path string) (Source, bool) {
	real := realPath(path)
	for _, s := range sources {
		root := realPath(s.Root)
		if real == root || strings.HasPrefix(real, root+string(filepath.Separator)) || root == string(filepath.Separator) {
			return s, true
		}
	}
	return Source{}, false
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
	src  Source
	e    ingest.Entry
	prev *DocState
	fill bool // its chunks lack vectors (FillVectors): read it though it is unchanged
}

// scan walks the sources and sorts files into work to do, unchanged, and
// gone. A file is unchanged when its size and mtime match; a file whose
// mtime is too close to when it was indexed is re-read and its hash
// compared instead (the "racy git" problem: an edit within the same clock
// tick as the last index run would otherwise go unseen).
func (b *builder) scan(ctx context.Context, sources []Source, wanted map[int64]bool) ([]job, []int64, error) {
	var jobs []job
	var removed []int64
	var walkSkips []FileUpdate
	_, pdfErr := exec.LookPath("pdftotext")
	b.pdfTool = pdfErr == nil
	roots := make([]string, len(sources))
	for i, s := range sources {
		roots[i] = s.Root
	}
	walk := b.opt.Walk
	walk.Only = b.opt.Only
	walked, err := ingest.WalkRoots(ctx, roots, walk)
	if err != nil {
		return nil, nil, err
	}
	for i, w := range walked {
		src, entries := sources[i], w.Entries
		if wanted != nil && !wanted[src.ID] {
			continue // walked only to claim its files
		}
		// scope is what of src this build looks at: nil all of it.
		var scope []string
		if b.opt.Only != nil {
			if scope = ingest.Scope(src.Root, b.opt.Only); scope == nil {
				continue
			}
			if scope[0] == "" {
				scope = nil
			}
		}
		if w.Err != nil {
			b.sum.Missing = append(b.sum.Missing, src.Root)
			b.notice(fmt.Sprintf("source %s is not readable (%v); its files stay in the index as they were", src.Root, ingest.ShortErr(w.Err)))
			continue
		}
		docs, err := b.w.Documents(ctx, src.ID)
		if err != nil {
			return nil, nil, err
		}
		if b.opt.KeepEmptied && emptyDir(src.Root) && holdsFiles(docs) {
			b.sum.Missing = append(b.sum.Missing, src.Root)
			b.notice(fmt.Sprintf("source %s is empty now (an unmounted disk?): its files stay in the index, marked missing; `lore index` drops them", src.Root))
			continue
		}
		var fill map[string]bool
		if b.opt.FillVectors && b.opt.Embedder != nil && !b.opt.DeferVectors {
			if fill, err = b.w.PendingVectors(ctx, src.ID); err != nil {
				return nil, nil, err
			}
		}
		seen := make(map[string]bool, len(entries))
		for _, e := range entries {
			seen[e.Rel] = true
			prev, known := docs[e.Rel]
			if e.Reason != "" {
				if !known || prev.Reason != e.Reason {
					walkSkips = append(walkSkips, FileUpdate{SourceID: src.ID, Path: e.Rel, Status: StatusSkipped, Reason: e.Reason, Chunker: b.sig})
				}
				if known && prev.Status == StatusIndexed {
					b.sum.FilesRemoved++ // its chunks leave the index
					b.listed(&b.sum.Deleted, src.Root, e.Rel)
				}
				b.skipped(src.Root, e.Rel, e.Reason)
				continue
			}
			if known && b.unchanged(prev, e) && !fill[e.Rel] {
				if prev.Status == StatusSkipped {
					b.skipped(src.Root, e.Rel, prev.Reason)
				} else {
					b.sum.FilesUnchanged++
				}
				continue
			}
			j := job{src: src, e: e, fill: fill[e.Rel]}
			if known {
				j.prev = &prev
			}
			jobs = append(jobs, j)
		}
		if w.Cut != "" {
			b.notice(fmt.Sprintf("source %s was not walked to the end (%s); the files it did not reach stay in the index as they were", src.Root, w.Cut))
			continue
		}
		for p, d := range docs {
			if !seen[p] && ingest.InScope(scope, p) {
				removed = append(removed, d.ID)
				if d.Status == StatusIndexed {
					b.listed(&b.sum.Deleted, src.Root, p)
					// Only a file that was searchable leaves the index: a
					// skip record (a file or folder it never held) going
					// is no removal to report.
					b.sum.FilesRemoved++
				}
			}
		}
	}
	if len(walkSkips) > 0 {
		if err := b.w.WriteFiles(ctx, walkSkips); err != nil {
			return nil, nil, err
		}
		b.wrote = true
	}
	return jobs, removed, nil
}

// emptyDir tells whether dir is a folder with nothing in it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return err != nil && len(names) == 0
}

func holdsFiles(docs map[string]DocState) bool {
	for _, d := range docs {
		if d.Status == StatusIndexed {
			return true
		}
	}
	return false
}

// listed adds a document to one of a scoped build's lists.
func (b *builder) listed(to *[]File, root, rel string) {
	if b.opt.Only != nil {
		*to = append(*to, File{Source: ingest.SourceDir(root, rel), Path: rel})
	}
}

const racyWindow = 2 * time.Second

func (b *builder) unchanged(prev DocState, e ingest.Entry) bool {
	if prev.Size != e.Size || prev.MTimeNS != e.MTime.UnixNano() {
		return false
	}
	switch {
	case prev.Status == StatusIndexed:
		return prev.Chunker == b.sig && time.Duration(prev.IndexedAt-prev.MTimeNS) >= racyWindow
	case strings.HasPrefix(prev.Reason, ingest.ReasonTooLarge):
		return e.Size > b.opt.MaxFileSize
	case prev.Reason == ingest.ErrNoPDFTool.Error():
		return !b.pdfTool
	case prev.Reason == ingest.ReasonBinary || prev.Reason == ingest.ReasonUnsupported:
		return true
	}
	return false // failures are retried
}

// result is a job done by a worker.
type result struct {
	root string // the source's root, for messages
	up   FileUpdate
	same bool // content unchanged: only the stat info is refreshed
	// dropped is a file the index held that is now skipped: its chunks
	// leave the index, a removal the summary counts.
	dropped bool
	warn    string
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
		chunks += len(r.up.Chunks)
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
	return b.flush(ctx, group)
}

// load reads, checks and chunks one file.
func (b *builder) load(ctx context.Context, j job) result {
	up := FileUpdate{SourceID: j.src.ID, Path: j.e.Rel, Size: j.e.Size, MTimeNS: j.e.MTime.UnixNano(), Status: StatusIndexed, Chunker: b.sig}
	skip := func(reason string) result {
		up.Status, up.Reason = StatusSkipped, reason
		return result{root: j.src.Root, up: up, dropped: j.prev != nil && j.prev.Status == StatusIndexed}
	}
	if !ingest.Supported(j.e.Rel) {
		return skip(ingest.ReasonUnsupported)
	}
	if j.e.Size > b.opt.MaxFileSize {
		return skip(fmt.Sprintf("%s: %s is over the %s limit (raise max-file-size)", ingest.ReasonTooLarge, units.Bytes(j.e.Size), units.Bytes(b.opt.MaxFileSize)))
	}
	data, err := ingest.ReadFile(j.e.Abs, b.opt.MaxFileSize)
	if errors.Is(err, ingest.ErrGrew) {
		return skip(fmt.Sprintf("unreadable: grew past the %s limit while being read", units.Bytes(b.opt.MaxFileSize)))
	}
	if err != nil {
		return skip("unreadable: " + ingest.ShortErr(err))
	}
	up.Hash = ContentHash(data)
	same := false
	if p := j.prev; p != nil && p.Status == StatusIndexed && p.Hash == up.Hash && p.Chunker == b.sig {
		if !j.fill {
			return result{root: j.src.Root, up: up, same: true}
		}
		same = true // chunked again only for the vectors they lack
	}
	doc, err := ingest.Load(ctx, j.e.Abs, data, b.opt.Chunk)
	switch {
	case errors.Is(err, ingest.ErrBinary):
		return skip(ingest.ReasonBinary)
	case errors.Is(err, ingest.ErrNoPDFTool):
		return skip(ingest.ErrNoPDFTool.Error())
	case err != nil:
		return skip("failed to load: " + err.Error())
	}
	up.Chunks = doc.Chunks
	if same {
		return result{root: j.src.Root, up: up, same: true}
	}
	b.w.Prepare(&up)
	r := result{root: j.src.Root, up: up}
	if doc.Repaired {
		r.warn = j.e.Rel + ": invalid UTF-8 replaced with U+FFFD"
		r.up.Reason = "invalid UTF-8 repaired"
	}
	return r
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
		if r.up.Status == StatusSkipped {
			b.skipped(r.root, r.up.Path, r.up.Reason)
			if r.dropped {
				b.sum.FilesRemoved++
				b.listed(&b.sum.Deleted, r.root, r.up.Path)
			}
			if r.up.Reason == ingest.ErrNoPDFTool.Error() {
				b.notice("PDF files skipped: " + ingest.ErrNoPDFTool.Error())
			}
			continue
		}
		if r.same {
			b.sum.FilesUnchanged++
		} else {
			b.sum.FilesIndexed++
			b.sum.Chunks += len(r.up.Chunks)
			b.listed(&b.sum.Updated, r.root, r.up.Path)
		}
		for _, p := range r.up.Chunks { // a same file's only when it lacks vectors
			h := p.Hash()
			if _, ok := texts[h]; !ok {
				texts[h] = p.EmbedText()
				hashes = append(hashes, h)
			}
		}
	}
	b.progress.Chunks = b.sum.Chunks
	if b.opt.Embedder != nil && len(hashes) > 0 {
		missing, err := b.w.MissingVectors(ctx, hashes)
		if err != nil {
			return err
		}
		var todo []string
		for _, h := range hashes {
			if missing[h] {
				todo = append(todo, h)
			}
		}
		if b.opt.DeferVectors {
			// The embedder is down: the chunks go in for keyword search
			// now, their vectors when a FillVectors build finds them.
			b.sum.VectorsPending += len(todo)
			todo = nil
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
			if err := b.w.PutVectors(ctx, batch, vecs); err != nil {
				return fmt.Errorf("store vectors: %w", err)
			}
			b.wrote = true
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
			r.up.Chunks = nil // only its vectors were wanted
			statOnly = append(statOnly, r.up)
		} else {
			full = append(full, r.up)
		}
	}
	if err := b.w.WriteFiles(ctx, full); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	b.wrote = b.wrote || len(full) > 0
	if err := b.w.TouchFiles(ctx, statOnly); err != nil {
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

// skipped records a file the index does not hold, named as
// `lore index status` names it.
func (b *builder) skipped(root, rel, reason string) {
	b.sum.FilesSkipped = append(b.sum.FilesSkipped, SkippedFile{ingest.JoinSource(root, rel), reason})
}

// remember records the build's sources and embedder outside the index
// data (the local store: sources.json).
func (b *builder) remember(ctx context.Context) error {
	srcs, err := b.w.Sources(ctx)
	if err != nil {
		return err
	}
	r := Remembered{Sources: []string{}, Settings: b.opt.Remember}
	for _, s := range srcs {
		r.Sources = append(r.Sources, s.Root)
	}
	if r.Embedder, err = b.w.Meta(ctx, "embedder"); err != nil {
		return err
	}
	if err := b.w.Remember(ctx, r); err != nil {
		return fmt.Errorf("remember sources: %w", err)
	}
	return nil
}
