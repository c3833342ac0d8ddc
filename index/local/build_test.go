package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// fakeEmbedder makes deterministic vectors from the text and counts what it
// was asked to embed.
type fakeEmbedder struct {
	model string
	dim   int
	mu    sync.Mutex
	seen  map[string]int
	calls int
	err   error
}

func newFakeEmbedder(model string, dim int) *fakeEmbedder {
	return &fakeEmbedder{model: model, dim: dim, seen: map[string]int{}}
}

func (f *fakeEmbedder) Model() string { return f.model }

// SameModel is Ollama's naming rule, as the real embedder has it.
func (f *fakeEmbedder) SameModel(m string) bool {
	return ollama.FullName(m) == ollama.FullName(f.model)
}
func (f *fakeEmbedder) Check(ctx context.Context) (int, error) { return f.dim, f.err }
func (f *fakeEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return ollamatest.Vector(text, f.dim), nil
}
func (f *fakeEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		f.seen[t]++
		out[i] = ollamatest.Vector(t, f.dim)
	}
	return out, nil
}

func (f *fakeEmbedder) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.seen {
		n += c
	}
	return n
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// age sets every file's mtime to an hour ago, out of the racy window, as a
// file written by a person minutes before indexing would be.
func age(t testing.TB, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

func testOptions(emb index.Embedder, paths ...string) index.BuildOptions {
	o := index.BuildOptions{Name: "test", Paths: paths, Chunk: ingest.ChunkOptions{Size: 300, Overlap: 40}, MaxFileSize: 1 << 20, EmbedBatchSize: 4}
	if emb != nil {
		o.Embedder = emb
	}
	return o
}

func build(t testing.TB, dir string, opt index.BuildOptions) index.Summary {
	t.Helper()
	sum, err := Build(context.Background(), dir, opt)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return sum
}

var corpus = map[string]string{
	"guide.md":       "# Guide\n\nInstall lore with make.\n\n## Config\n\nSet OLLAMA_HOST to reach the server.\n",
	"notes/todo.txt": "Remember the milk.\n\nAnd the eggs.\n",
	"api/server.go":  "package api\n\n// Serve serves.\nfunc Serve() {}\n\n// Stop stops.\nfunc Stop() {}\n",
}

// statusOf is `lore index status` of the test index.
func statusOf(t testing.TB, dir string) index.Status {
	t.Helper()
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// lexicalCount counts chunks the lexical index finds for a word.
func lexicalCount(t testing.TB, dir, word string) int {
	t.Helper()
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ids, err := ix.lexicalIDs(context.Background(), word, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

func TestIncrementalBuild(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)

	sum := build(t, dir, testOptions(emb, src))
	if sum.FilesIndexed != 3 || sum.FilesUnchanged != 0 || sum.Chunks == 0 || sum.ChunksEmbedded != sum.Chunks {
		t.Fatalf("first build: %+v", sum)
	}
	firstChunks := sum.Chunks
	if lexicalCount(t, dir, "milk") != 1 || lexicalCount(t, dir, "ollamahost") != 1 {
		t.Fatal("lexical index does not find the words and identifiers indexed")
	}

	t.Run("unchanged", func(t *testing.T) {
		before := emb.total()
		sum := build(t, dir, testOptions(emb)) // no paths: the remembered sources
		if sum.FilesIndexed != 0 || sum.FilesUnchanged != 3 || sum.ChunksEmbedded != 0 || emb.total() != before {
			t.Fatalf("no-op rebuild did work: %+v", sum)
		}
		if sum.TotalChunks != firstChunks {
			t.Fatalf("total chunks %d, want %d", sum.TotalChunks, firstChunks)
		}
	})

	t.Run("change embeds only new chunks", func(t *testing.T) {
		writeFiles(t, src, map[string]string{"guide.md": "# Guide\n\nInstall lore with make.\n\n## Config\n\nSet LORE_INDEX to pick an index.\n"})
		age(t, src)
		sum := build(t, dir, testOptions(emb))
		if sum.FilesIndexed != 1 || sum.FilesUnchanged != 2 || sum.ChunksEmbedded != 1 {
			t.Fatalf("after editing one section: %+v", sum)
		}
		if lexicalCount(t, dir, "ollamahost") != 0 || lexicalCount(t, dir, "loreindex") != 1 {
			t.Fatal("lexical index still holds the old text or misses the new")
		}
	})

	t.Run("touch without change is confirmed by hash", func(t *testing.T) {
		now := time.Now().Add(-time.Minute)
		os.Chtimes(filepath.Join(src, "notes/todo.txt"), now, now)
		sum := build(t, dir, testOptions(emb))
		if sum.FilesIndexed != 0 || sum.FilesUnchanged != 3 || sum.ChunksEmbedded != 0 {
			t.Fatalf("touched file re-indexed: %+v", sum)
		}
	})

	t.Run("rename embeds nothing", func(t *testing.T) {
		os.Rename(filepath.Join(src, "notes/todo.txt"), filepath.Join(src, "notes/shopping.txt"))
		sum := build(t, dir, testOptions(emb))
		if sum.FilesIndexed != 1 || sum.FilesRemoved != 1 || sum.ChunksEmbedded != 0 {
			t.Fatalf("rename: %+v", sum)
		}
		if lexicalCount(t, dir, "milk") != 1 {
			t.Fatal("renamed file's text is not found exactly once")
		}
	})

	t.Run("delete removes from every table and the graph", func(t *testing.T) {
		os.Remove(filepath.Join(src, "notes/shopping.txt"))
		sum := build(t, dir, testOptions(emb))
		if sum.FilesRemoved != 1 || sum.TotalFiles != 2 {
			t.Fatalf("delete: %+v", sum)
		}
		if lexicalCount(t, dir, "milk") != 0 {
			t.Fatal("deleted file still in the lexical index")
		}
		ix, _ := Open(dir, "test")
		defer ix.Close()
		var orphans, vectors int
		ix.st.db.QueryRow(`SELECT count(*) FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks)`).Scan(&orphans)
		ix.st.db.QueryRow(`SELECT count(*) FROM vectors`).Scan(&vectors)
		if orphans != 0 {
			t.Fatalf("%d vectors of deleted chunks remain", orphans)
		}
		vg, err := readGraphFile(filepath.Join(ix.dir, ix.gen, graphFile), 8)
		if err != nil {
			t.Fatalf("graph: %v", err)
		}
		if vg.Len() != vectors {
			t.Fatalf("graph holds %d vectors, the database %d", vg.Len(), vectors)
		}
	})
}

func TestChunkerChangeRechunksWithoutReembeddingSameText(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	opt := testOptions(emb)
	opt.Chunk.Overlap = 10 // a different chunker signature; small docs chunk the same
	sum := build(t, dir, opt)
	if sum.FilesIndexed != 3 || sum.ChunksEmbedded != 0 {
		t.Fatalf("after a chunker change: %+v", sum)
	}
}

func TestLock(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	lk, err := acquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), dir, testOptions(nil, src))
	if !errors.Is(err, index.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	lk.release()
	build(t, dir, testOptions(nil, src))
}

func TestReadersKeepWorkingDuringRebuild(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	build(t, dir, testOptions(nil, src))
	reader, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	writeFiles(t, src, map[string]string{"extra.md": "# Extra\n\nmore words\n"})
	opt := testOptions(nil)
	opt.Rebuild = true
	opt.Progress = func(p index.Progress) {
		// Mid-rebuild, the open reader still sees the whole old index.
		if st, err := reader.Status(context.Background()); err != nil || st.Documents != 3 {
			t.Errorf("reader during rebuild: %d documents, %v", st.Documents, err)
		}
	}
	sum := build(t, dir, opt)
	if sum.FilesIndexed != 4 {
		t.Fatalf("rebuild: %+v", sum)
	}
	fresh, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if st, _ := fresh.Status(context.Background()); st.Documents != 4 {
		t.Fatalf("after the rebuild a new reader sees %d documents", st.Documents)
	}
	// The old generation stays while its reader is open (its database
	// opens connections as requests come), and goes with the last reader.
	if gens, _ := filepath.Glob(filepath.Join(dir, "g*")); len(gens) != 2 {
		t.Fatalf("with a reader on the old generation: %v", gens)
	}
	reader.Close()
	if gens, _ := filepath.Glob(filepath.Join(dir, "g*")); len(gens) != 1 {
		t.Fatalf("old generations left behind: %v", gens)
	}
}

// A reader still on a generation that rebuilds have replaced keeps
// answering, including requests that need a new database connection: a
// server's request in flight during `lore index --rebuild` (issue 35: 1 in
// 3,500 searches failed with "unable to open database file").
func TestReaderOfAReplacedGenerationKeepsAnswering(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	emb := newFakeEmbedder("nomic-embed-text", 8)
	build(t, dir, testOptions(emb, src))
	reader, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	for range 2 {
		opt := testOptions(emb)
		opt.Rebuild = true
		build(t, dir, opt)
	}
	if CurrentGeneration(dir) == reader.Generation() {
		t.Fatal("the rebuilds did not publish a new generation")
	}
	// Many at once, so that the database opens connections it did not
	// have, and the first search loads the vector graph.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if _, err := reader.Search(context.Background(), "zeppelin maintenance", index.SearchOptions{Embedder: emb}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("search on the replaced generation: %v", err)
	}
}

func TestGraphIsRebuiltWhenMissingOrCorrupt(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	gen := readPointer(dir, currentFile)
	path := filepath.Join(dir, gen, graphFile)
	want, err := readGraphFile(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	for name, damage := range map[string]func(){
		"missing": func() { os.Remove(path) },
		"corrupt": func() { os.WriteFile(path, []byte("LOREHNSW garbage"), 0o644) },
		"stale":   func() { newVectorGraph(8).writeFile(path) },
	} {
		t.Run(name, func(t *testing.T) {
			damage()
			build(t, dir, testOptions(emb))
			got, err := readGraphFile(path, 8)
			if err != nil || got.Len() != want.Len() {
				t.Fatalf("graph after repair: %v, %d nodes, want %d", err, got.Len(), want.Len())
			}
		})
	}
}

func TestSkipsAndIgnores(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		".gitignore":          "build/\n*.log\n!keep.log\n",
		"docs/.loreignore":    "private.md\n",
		"docs/private.md":     "# secret\n\nhidden\n",
		"docs/public.md":      "# public\n\nshown\n",
		"build/out.md":        "# generated\n",
		"debug.log":           "noise",
		"keep.log":            "kept",
		".git/config":         "[core]",
		"image.png":           "\x89PNG\x00\x00",
		"blob.txt":            "text\x00with nul",
		"big.md":              strings.Repeat("x", 2000),
		"latin1.txt":          "caf\xe9 au lait\n",
		"deep/a/b/c/d/doc.md": "# deep\n\nfound\n",
	})
	os.Symlink(src, filepath.Join(src, "deep", "loop"))
	if err := syscall.Mkfifo(filepath.Join(src, "docs", "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := testOptions(nil, src)
	opt.MaxFileSize = 1000
	sum := build(t, dir, opt)

	reasons := map[string]string{}
	for _, s := range sum.FilesSkipped {
		rel, _ := filepath.Rel(src, s.Path)
		reasons[filepath.ToSlash(rel)] = s.Reason
	}
	want := map[string]string{"image.png": ingest.ReasonUnsupported, "blob.txt": ingest.ReasonBinary, "big.md": ingest.ReasonTooLarge, "keep.log": ingest.ReasonUnsupported, "deep/loop": "symlink loop",
		"docs/pipe.md": "not a regular file (a named pipe)"}
	for p, r := range want {
		if !strings.HasPrefix(reasons[p], r) {
			t.Errorf("%s: skip reason %q, want %q", p, reasons[p], r)
		}
	}
	for _, p := range []string{"docs/private.md", "build/out.md", "debug.log", ".git/config"} {
		if _, ok := reasons[p]; ok {
			t.Errorf("%s is ignored and must not be recorded", p)
		}
	}
	if sum.FilesIndexed != 3 { // public.md, latin1.txt, doc.md
		t.Errorf("indexed %d files, want 3: %+v", sum.FilesIndexed, sum)
	}
	if len(sum.Warnings) == 0 || !strings.Contains(strings.Join(sum.Warnings, "\n"), "latin1.txt: invalid UTF-8") {
		t.Errorf("no warning for the invalid UTF-8: %v", sum.Warnings)
	}
	if lexicalCount(t, dir, "caf") != 1 || lexicalCount(t, dir, "hidden") != 0 || lexicalCount(t, dir, "found") != 1 {
		t.Error("lexical index does not match what was indexed")
	}
	// Raising the limit picks the large file up; nothing else changes.
	opt = testOptions(nil)
	opt.MaxFileSize = 4000
	if sum := build(t, dir, opt); sum.FilesIndexed != 1 {
		t.Errorf("after raising max-file-size: %+v", sum)
	}
}

// A file source replaced by a named pipe is skipped with its reason on the
// next refresh: opening it would wait for a writer forever.
func TestSourceReplacedByANamedPipeIsSkipped(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(src, "notes.md")
	writeFiles(t, src, map[string]string{"notes.md": "# Notes\n\npears\n"})
	build(t, dir, testOptions(nil, file))
	os.Remove(file)
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Fatal(err)
	}
	var sum index.Summary
	var err error
	unblocked(t, file, func() { sum, err = Build(context.Background(), dir, testOptions(nil)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.FilesSkipped) != 1 || sum.FilesSkipped[0].Reason != "not a regular file (a named pipe)" {
		t.Fatalf("skipped %+v, want the pipe as not a regular file", sum.FilesSkipped)
	}
	if lexicalCount(t, dir, "pears") != 0 {
		t.Fatal("the file's old text is still found")
	}
}

// ReadFile never waits on a named pipe, even one that replaced a
// walked file.
func TestReadFileLimitedRefusesAPipe(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	unblocked(t, pipe, func() { _, err = ingest.ReadFile(pipe, 100) })
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("got %v, want a named pipe refused", err)
	}
}

// unblocked runs f, and fails the test if f is still waiting on the named
// pipe after a minute (a deadlock guard, not a timing assertion): it then
// opens the pipe's other end so that f returns and the test ends.
func unblocked(t *testing.T, pipe string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("blocked opening a named pipe")
	}
}

func TestStatusListsChanges(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	writeFiles(t, src, map[string]string{"guide.md": "# Guide\n\nchanged\n", "new.md": "# New\n"})
	os.Remove(filepath.Join(src, "notes/todo.txt"))
	st := statusOf(t, dir)
	got := map[string]string{}
	for _, c := range st.Changed {
		got[filepath.Base(c.Path)] = c.Change
	}
	if got["guide.md"] != "modified" || got["new.md"] != "new" || got["todo.txt"] != "deleted" || len(got) != 3 {
		t.Fatalf("changes: %v", st.Changed)
	}
	if st.Documents != 3 || st.Chunks == 0 || st.Embedder != "none" || len(st.Sources) != 1 {
		t.Fatalf("status: %+v", st)
	}
}

// smallDocs is a folder of n one-chunk documents, each with a word of its own.
func smallDocs(t *testing.T, n int) string {
	src := t.TempDir()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%03d.md", i)] = fmt.Sprintf("# Doc %d\n\nword%d text\n", i, i)
	}
	writeFiles(t, src, files)
	age(t, src)
	return src
}

func TestInterruptedBuildKeepsFinishedWork(t *testing.T) {
	src, dir := smallDocs(t, 200), t.TempDir()
	emb := newFakeEmbedder("fake", 8)
	ctx, cancel := context.WithCancel(context.Background())
	opt := testOptions(emb, src)
	opt.Progress = func(p index.Progress) {
		if p.FilesDone >= 64 {
			cancel()
		}
	}
	if _, err := Build(ctx, dir, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	done := emb.total()
	if done == 0 || done >= 200 {
		t.Fatalf("embedded %d before the interrupt", done)
	}
	sum := build(t, dir, testOptions(emb))
	if sum.ChunksEmbedded+done != 200 || sum.TotalFiles != 200 {
		t.Fatalf("resume embedded %d after %d: %+v", sum.ChunksEmbedded, done, sum)
	}
	for text, n := range emb.seen {
		if n > 1 {
			t.Fatalf("%q embedded %d times", text, n)
		}
	}
}

// While a group of files is embedded, before any of it is written, the
// progress says how much is done: the chunks read, and a share that grows
// with every batch (the bar and the ETA of lore index follow it).
func TestProgressMovesWhileEmbedding(t *testing.T) {
	src, dir := smallDocs(t, 10), t.TempDir()
	opt := testOptions(newFakeEmbedder("fake", 8), src)
	var during []index.Progress
	var last index.Progress
	opt.Progress = func(p index.Progress) {
		if p.Phase == "index" && p.FilesDone == 0 && p.ChunksEmbedded > 0 {
			during = append(during, p)
		}
		last = p
	}
	build(t, dir, opt)
	if len(during) < 2 {
		t.Fatalf("%d reports while the first group was embedded, want one a batch", len(during))
	}
	for i, p := range during {
		if p.Chunks != 10 || p.Done <= 0 || p.Done > 1 || (i > 0 && p.Done <= during[i-1].Done) {
			t.Errorf("report %d while embedding: %+v", i, p)
		}
	}
	if last.Done != 1 || last.FilesDone != 10 {
		t.Errorf("last report: %+v", last)
	}
}

func TestTwoSourcesWithTheSamePaths(t *testing.T) {
	a, b, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, a, map[string]string{"README.md": "# A\n\napples\n"})
	writeFiles(t, b, map[string]string{"README.md": "# B\n\npears\n"})
	age(t, a)
	age(t, b)
	if sum := build(t, dir, testOptions(nil, a, b)); sum.FilesIndexed != 2 {
		t.Fatalf("%+v", sum)
	}
	// Touch one: only it is re-read, and both stay findable.
	now := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(b, "README.md"), now, now)
	if sum := build(t, dir, testOptions(nil)); sum.FilesUnchanged != 2 || sum.FilesIndexed != 0 {
		t.Fatalf("%+v", sum)
	}
	if lexicalCount(t, dir, "apples") != 1 || lexicalCount(t, dir, "pears") != 1 {
		t.Fatal("a source's file shadows the other's")
	}
	// Indexing one source by name leaves the other alone.
	writeFiles(t, b, map[string]string{"README.md": "# B\n\nplums\n"})
	if sum := build(t, dir, testOptions(nil, a)); sum.FilesIndexed != 0 || sum.FilesRemoved != 0 {
		t.Fatalf("%+v", sum)
	}
	if lexicalCount(t, dir, "pears") != 1 {
		t.Fatal("the other source was refreshed")
	}
}

// A file is indexed once, whatever path reached it: a folder and a folder
// inside it, a file inside an indexed folder, a symbolic link to it, or a
// parent added after its child.
func TestOverlappingSourcesIndexEachFileOnce(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	link := filepath.Join(t.TempDir(), "docs-link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	once := func(t *testing.T, dir string, docs int) {
		t.Helper()
		if n := lexicalCount(t, dir, "milk"); n != 1 {
			t.Fatalf("notes/todo.txt is indexed %d times", n)
		}
		st := statusOf(t, dir)
		if st.Documents != docs || len(st.Changed) != 0 {
			t.Fatalf("status: %d documents (want %d), changed %v", st.Documents, docs, st.Changed)
		}
	}

	sum := build(t, dir, testOptions(nil, src, filepath.Join(src, "notes")))
	if sum.FilesIndexed != 3 || sum.TotalFiles != 3 {
		t.Fatalf("folder and subfolder: %+v", sum)
	}
	if !strings.Contains(strings.Join(sum.Warnings, "\n"), "already") {
		t.Errorf("no word that notes/ is already indexed: %q", sum.Warnings)
	}
	once(t, dir, 3)
	for _, p := range []string{filepath.Join(src, "guide.md"), link, src + "/./notes/.."} {
		if sum := build(t, dir, testOptions(nil, p)); sum.FilesIndexed != 0 || sum.TotalFiles != 3 {
			t.Fatalf("%s: %+v", p, sum)
		}
		once(t, dir, 3)
	}

	// The child first, then its parent.
	dir2 := t.TempDir()
	build(t, dir2, testOptions(nil, filepath.Join(src, "notes")))
	if sum := build(t, dir2, testOptions(nil, link)); sum.FilesIndexed != 2 || sum.TotalFiles != 3 {
		t.Fatalf("parent after child: %+v", sum)
	}
	once(t, dir2, 3)
	if sum := build(t, dir2, testOptions(nil)); sum.FilesIndexed != 0 || sum.FilesUnchanged != 3 || sum.FilesRemoved != 0 {
		t.Fatalf("refresh: %+v", sum)
	}
	once(t, dir2, 3)
}

// A refresh sorts every file into exactly one of indexed, unchanged and
// skipped, and lists the skipped ones as `lore index status` does: a file
// skipped last time is skipped again, not "unchanged".
func TestSummaryAgreesWithStatus(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"guide.md":  "# Guide\n\ntext\n",
		"image.png": "\x89PNG\x00\x00",
		"blob.txt":  "text\x00with nul",
		"big.md":    strings.Repeat("x", 2000),
	})
	os.Symlink(filepath.Join(src, "gone"), filepath.Join(src, "dangling.md"))
	age(t, src)
	opt := testOptions(nil, src)
	opt.MaxFileSize = 1000
	for run := 1; run <= 2; run++ {
		sum := build(t, dir, opt)
		st := statusOf(t, dir)
		sortSkipped(sum.FilesSkipped)
		if fmt.Sprint(sum.FilesSkipped) != fmt.Sprint(st.Skipped) || len(st.Skipped) != 4 {
			t.Errorf("run %d: summary skipped %v, status skipped %v", run, sum.FilesSkipped, st.Skipped)
		}
		if sum.FilesIndexed+sum.FilesUnchanged != st.Documents || sum.TotalFiles != st.Documents {
			t.Errorf("run %d: %d indexed + %d unchanged, status holds %d", run, sum.FilesIndexed, sum.FilesUnchanged, st.Documents)
		}
	}
}

// A single file can be a source: what the index says of it (status,
// search hits) names the file itself, never FILE/FILE; a device or a
// missing path is refused before anything is created (issue 11, item 13).
func TestSingleFileSource(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{"a.md": "# Title\n\nhello world\n"})
	age(t, src)
	file := filepath.Join(src, "a.md")
	build(t, dir, testOptions(nil, file))
	writeFiles(t, src, map[string]string{"a.md": "# Title\n\nhello world, again\n"})

	if st := statusOf(t, dir); len(st.Changed) != 1 || st.Changed[0].Path != file {
		t.Errorf("status names %v, want %s modified", st.Changed, file)
	}
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.Search(context.Background(), "hello", index.SearchOptions{Limit: 3})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search: %v %+v", err, res)
	}
	if h := res.Hits[0]; filepath.Join(h.Source, h.Path) != file {
		t.Errorf("hit is %s + %s, want %s", h.Source, h.Path, file)
	}

	for _, p := range []string{"/dev/null", filepath.Join(src, "missing.md")} {
		empty := t.TempDir()
		_, err := Build(context.Background(), empty, testOptions(nil, p))
		if !errors.Is(err, index.ErrBadSource) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
		if _, err := Open(empty, "test"); !errors.Is(err, index.ErrNoIndex) {
			t.Errorf("%s: a refused build left an index behind: %v", p, err)
		}
	}
}

// The .loreignore example of docs/indexing.md does what the page says: the
// folder's files are left out but its README is kept, by git's rule (a
// file inside an excluded folder cannot be re-included, so the example
// excludes the folder's contents, not the folder).
func TestLoreignoreExampleOfTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/indexing.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "```gitignore\n# .loreignore\n")
	example, _, _ = strings.Cut(example, "```")
	if !ok || !strings.Contains(example, "!vendor/README.md") {
		t.Fatalf("no .loreignore example in docs/indexing.md")
	}
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		".loreignore":      example,
		"CHANGELOG.md":     "# Changes\n\nzebra one\n",
		"guide.md":         "# Guide\n\nzebra two\n",
		"vendor/README.md": "# Vendored\n\nzebra three\n",
		"vendor/lib/x.md":  "# Lib\n\nzebra four\n",
	})
	build(t, dir, testOptions(nil, src))
	for word, want := range map[string]int{"one": 0, "two": 1, "three": 1, "four": 0} {
		if n := lexicalCount(t, dir, word); n != want {
			t.Errorf("%q found %d times, want %d", word, n, want)
		}
	}
}

// A folder named while Ollama is down fails the build, and must not join
// the index's sources: the next plain `lore index` would otherwise pick up
// a source the user saw fail.
func TestNewSourceWithEmbedderDownIsNotRemembered(t *testing.T) {
	src, more, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	writeFiles(t, more, map[string]string{"extra.md": "# Extra\n\nmore text\n"})
	build(t, dir, testOptions(newFakeEmbedder("nomic-embed-text", 8), src))

	down := newFakeEmbedder("nomic-embed-text", 8)
	down.err = errors.New("could not connect to Ollama")
	if _, err := Build(context.Background(), dir, testOptions(down, more)); err == nil {
		t.Fatal("a build whose embedder is down succeeded")
	}
	r, err := ReadRemembered(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sources {
		if s == more {
			t.Fatalf("the folder that failed to index was remembered: %v", r.Sources)
		}
	}
}

func TestStatusCountsFilesByChunker(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	files := map[string]string{"openapi.yaml": "openapi: 3.0.0\ninfo:\n  title: API\n", "package-lock.json": "{\n  \"lockfileVersion\": 3\n}\n"}
	for k, v := range corpus {
		files[k] = v
	}
	writeFiles(t, src, files)
	build(t, dir, testOptions(nil, src))
	st := statusOf(t, dir)
	got := fmt.Sprint(st.DocumentsByKind)
	if want := "map[code:1 markdown:1 structured:1 text:1]"; got != want {
		t.Fatalf("documents by kind %s, want %s (a lock file is not indexed)", got, want)
	}
}
