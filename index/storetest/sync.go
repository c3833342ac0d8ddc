package storetest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
)

// The sync cases: what a watcher relies on. A watcher applies each batch
// of changed paths as a scoped build (BuildOptions.Only); after any
// series of batches the index must hold exactly what a fresh build of the
// same files holds.

// syncCases run after the others (see cases).
var syncCases = []testCase{
	{"sync batches match a fresh build", testSyncMatchesFresh},
	{"sync scope leaves the rest alone", testSyncScope},
	{"sync embeds only changed chunks", testSyncEmbedsChanged},
	{"sync with the embedder down", testSyncEmbedderDown},
	{"sync keeps a source that vanished", testSyncKeepsVanished},
	{"watch lease", testWatchLease},
}

// sync applies one batch: a scoped refresh of paths (relative to src).
func (e *env) sync(src string, emb index.Embedder, rels ...string) index.Summary {
	e.t.Helper()
	opt := e.opts(emb)
	opt.Only = []string{}
	for _, r := range rels {
		opt.Only = append(opt.Only, filepath.Join(src, r))
	}
	opt.KeepEmptied = true
	return e.build(opt)
}

// chunkList is every chunk of the index name: path, lines and text, in
// one order.
func (e *env) chunkList(name string) []string {
	e.t.Helper()
	r, err := e.s.Open(e.ctx, name)
	if err != nil {
		e.t.Fatalf("open %s: %v", name, err)
	}
	defer r.Close()
	hits, err := r.SampleChunks(e.ctx, 1<<30, 0, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, strings.Join([]string{h.Path, itoa(h.Start), itoa(h.End), h.Text}, "\x00"))
	}
	slices.Sort(out)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// sameAsFresh builds src afresh into another index and compares every
// chunk with the synced one.
func (e *env) sameAsFresh(src string, emb index.Embedder) {
	e.t.Helper()
	opt := e.opts(emb, src)
	opt.Name = "fresh"
	e.build(opt)
	got, want := e.chunkList(name), e.chunkList("fresh")
	if !slices.Equal(got, want) {
		var extra, lost []string
		for _, c := range got {
			if !slices.Contains(want, c) {
				extra = append(extra, strings.ReplaceAll(c, "\x00", " "))
			}
		}
		for _, c := range want {
			if !slices.Contains(got, c) {
				lost = append(lost, strings.ReplaceAll(c, "\x00", " "))
			}
		}
		e.t.Errorf("the synced index differs from a fresh build: %d chunks against %d;\norphans: %q\nlost: %q", len(got), len(want), extra, lost)
	}
}

func testSyncMatchesFresh(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	e.build(e.opts(emb, src))

	// A new file, in a new folder.
	write(t, src, map[string]string{"new/idea.md": "# Idea\n\nA capybara in the garden.\n"})
	e.sync(src, emb, "new")
	// An edit of one section.
	edit(t, src, "guide.md", strings.Replace(guideMD, "quetzal", "pangolin", 1))
	e.sync(src, emb, "guide.md")
	// A delete.
	os.Remove(filepath.Join(src, "api/server.go"))
	e.sync(src, emb, "api/server.go")
	// A rename of a file and of a folder: delete + create.
	must(t, os.Rename(filepath.Join(src, "notes/todo.txt"), filepath.Join(src, "notes/list.txt")))
	e.sync(src, emb, "notes/todo.txt", "notes/list.txt")
	must(t, os.Rename(filepath.Join(src, "new"), filepath.Join(src, "old")))
	e.sync(src, emb, "new", "old")
	// An editor's atomic save: a temporary file renamed over the file.
	tmp := filepath.Join(src, ".guide.md.swp")
	must(t, os.WriteFile(tmp, []byte(strings.Replace(guideMD, "zanzibar", "okapi", 1)), 0o644))
	must(t, os.Chtimes(tmp, time.Now().Add(-20*time.Minute), time.Now().Add(-20*time.Minute)))
	e.sync(src, emb, ".guide.md.swp")
	must(t, os.Rename(tmp, filepath.Join(src, "guide.md")))
	e.sync(src, emb, ".guide.md.swp", "guide.md")
	// An ignore file that leaves a folder out: the batch is its folder.
	write(t, src, map[string]string{"notes/draft.md": "# Draft\n\nwalrus\n", ".loreignore": "old/\n"})
	e.sync(src, emb, ".")
	// A file grown past the size limit is dropped.
	write(t, src, map[string]string{"big.txt": strings.Repeat("narwhal ", 100)})
	e.sync(src, emb, "big.txt")
	write(t, src, map[string]string{"big.txt": strings.Repeat("narwhal ", 200_000)})
	e.sync(src, emb, "big.txt")
	// A burst: many files at once, as a branch switch writes them.
	burst := map[string]string{}
	var rels []string
	for i := range 40 {
		rel := filepath.Join("burst", "f"+itoa(i)+".md")
		burst[rel] = "# File " + itoa(i) + "\n\nword" + itoa(i) + " and the ibis\n"
		rels = append(rels, rel)
	}
	write(t, src, burst)
	e.sync(src, emb, rels...)

	e.sameAsFresh(src, emb)
	r := e.open()
	e.found(r, "okapi", "guide.md")
	e.found(r, "capybara", "")
	e.found(r, "wombat", "")
	e.found(r, "marmalade", "notes/list.txt")
	e.found(r, "narwhal", "")
}

// A batch applies only its paths: a change elsewhere waits for its own.
func testSyncScope(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	e.build(e.opts(emb, src))
	edit(t, src, "guide.md", strings.Replace(guideMD, "quetzal", "pangolin", 1))
	os.Remove(filepath.Join(src, "api/server.go"))
	write(t, src, map[string]string{"notes/more.txt": "kiwi\n"})
	sum := e.sync(src, emb, "notes")
	if sum.FilesIndexed != 1 || sum.FilesRemoved != 0 {
		t.Errorf("a batch of notes/: %+v", sum)
	}
	if len(sum.Updated) != 1 || sum.Updated[0].Path != "notes/more.txt" || len(sum.Deleted) != 0 {
		t.Errorf("a batch of notes/ lists %v written and %v removed, want notes/more.txt only", sum.Updated, sum.Deleted)
	}
	r := e.open()
	e.found(r, "kiwi", "notes/more.txt")
	e.found(r, "quetzal", "guide.md")
	e.found(r, "wombat", "api/server.go")
	sum = e.sync(src, emb, "api/server.go")
	if len(sum.Deleted) != 1 || sum.Deleted[0].Path != "api/server.go" || sum.Deleted[0].Source != src {
		t.Errorf("a batch that removed api/server.go lists %+v removed", sum.Deleted)
	}
	// A batch that changed nothing (a temporary file come and gone)
	// writes nothing.
	gen := e.s.Generation(e.ctx, name)
	if sum := e.sync(src, emb, ".gone.tmp"); sum.FilesIndexed+sum.FilesRemoved != 0 || e.s.Generation(e.ctx, name) != gen {
		t.Errorf("a batch of a path that is not there: %+v", sum)
	}
}

func testSyncEmbedsChanged(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	e.build(e.opts(emb, src))
	emb.reset()
	edit(t, src, "guide.md", strings.Replace(guideMD, "quetzal", "pangolin", 1))
	sum := e.sync(src, emb, "guide.md")
	if texts := emb.all(); len(texts) != 1 || !strings.Contains(texts[0], "pangolin") || sum.ChunksEmbedded != 1 {
		t.Errorf("a batch editing one section embedded %q (%d), want that section alone", texts, sum.ChunksEmbedded)
	}
}

func testSyncEmbedderDown(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	first := e.build(e.opts(emb, src))
	emb.reset()
	emb.down = errors.New("ollama unreachable")
	write(t, src, map[string]string{"notes/new.md": "# New\n\nThe axolotl swims.\n"})
	edit(t, src, "guide.md", strings.Replace(guideMD, "quetzal", "pangolin", 1))
	opt := e.opts(emb)
	opt.Only = []string{filepath.Join(src, "notes/new.md"), filepath.Join(src, "guide.md")}
	opt.DeferVectors = true
	sum := e.build(opt)
	if sum.VectorsPending != 2 || sum.ChunksEmbedded != 0 || sum.FilesIndexed != 2 {
		t.Errorf("a batch with the embedder down: %+v, want 2 chunks written with their vectors pending", sum)
	}
	r := e.open()
	e.found(r, "axolotl", "notes/new.md")
	e.found(r, "pangolin", "guide.md")
	if st, _ := r.Status(e.ctx); st.Vectors != first.TotalChunks-1 {
		t.Errorf("%d vectors with two pending, want %d", st.Vectors, first.TotalChunks-1)
	}
	r.Close()

	// Back up: a FillVectors build embeds exactly what is pending.
	emb.down = nil
	opt = e.opts(emb)
	opt.FillVectors = true
	sum = e.build(opt)
	texts := emb.all()
	slices.Sort(texts)
	if len(texts) != 2 || !strings.Contains(texts[0]+texts[1], "axolotl") || !strings.Contains(texts[0]+texts[1], "pangolin") || sum.ChunksEmbedded != 2 {
		t.Errorf("filling the pending vectors embedded %q (%+v), want the two chunks written while it was down", texts, sum)
	}
	r = e.open()
	if st, _ := r.Status(e.ctx); st.Vectors != st.Chunks {
		t.Errorf("after the fill: %d vectors for %d chunks", st.Vectors, st.Chunks)
	}
	emb.reset()
	if sum := e.build(opt); sum.ChunksEmbedded != 0 || emb.count() != 0 {
		t.Errorf("a second fill embedded %d", emb.count())
	}
	e.sameAsFresh(src, emb)
}

// A source folder that is gone, or empty (an unmounted disk's mount
// point), keeps its documents in a sync batch.
func testSyncKeepsVanished(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	first := e.build(e.opts(emb, src))
	aside := src + ".aside"
	must(t, os.Rename(src, aside))
	t.Cleanup(func() { os.RemoveAll(aside) })
	must(t, os.Mkdir(src, 0o755))
	sum := e.sync(src, emb, ".")
	if sum.FilesRemoved != 0 || !slices.Equal(sum.Missing, []string{src}) {
		t.Errorf("a batch of an emptied source: %+v, want nothing removed and the source missing", sum)
	}
	must(t, os.Remove(src))
	sum = e.sync(src, emb, ".", "guide.md")
	if sum.FilesRemoved != 0 || !slices.Equal(sum.Missing, []string{src}) {
		t.Errorf("a batch of a source that is gone: %+v", sum)
	}
	r := e.open()
	if n, _ := r.Chunks(e.ctx); n != first.TotalChunks {
		t.Errorf("%d chunks after the source vanished, want %d kept", n, first.TotalChunks)
	}
	e.found(r, "marmalade", "notes/todo.txt")
	r.Close()
	// Back: nothing to do. A refresh on purpose (not KeepEmptied) of an
	// empty source drops its files.
	must(t, os.Rename(aside, src))
	if sum := e.sync(src, emb, "."); sum.FilesIndexed+sum.FilesRemoved != 0 || len(sum.Missing) != 0 {
		t.Errorf("a batch after the source came back: %+v", sum)
	}
}

func testWatchLease(t *testing.T, e *env) {
	if _, err := e.s.Watch(e.ctx, name); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("Watch of an index never built: %v, want ErrNoIndex", err)
	}
	if f, err := e.s.Freshness(e.ctx, name); err != nil || f.State != index.WatchStopped {
		t.Errorf("Freshness of an index never built: %+v %v", f, err)
	}
	src := folder(t, corpus())
	e.build(e.opts(nil, src))
	l, err := e.s.Watch(e.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Watch(e.ctx, name); !errors.Is(err, index.ErrLocked) {
		t.Errorf("a second watcher: %v, want ErrLocked", err)
	}
	at := time.Now().Truncate(time.Millisecond).UTC()
	want := index.Freshness{Watcher: "lore (pid 1 on test)", State: index.WatchVectorsPending, Since: at, SyncedAt: at, Pending: 3, VectorsPending: 2,
		Polling: "why", Missing: []string{"/gone"}, Error: "boom"}
	if err := l.Record(e.ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := e.s.Freshness(e.ctx, name)
	if err != nil || got.Watcher != want.Watcher || got.State != want.State || !got.SyncedAt.Equal(at) || !got.Since.Equal(at) ||
		got.Pending != 3 || got.VectorsPending != 2 || got.Polling != "why" || !slices.Equal(got.Missing, want.Missing) || got.Error != "boom" {
		t.Errorf("Freshness read back: %+v %v, want %+v", got, err, want)
	}
	// A build beside the watcher is not refused by the lease: each batch
	// takes the writer as any build does.
	e.build(e.opts(nil))
	must(t, l.Close())
	if f, _ := e.s.Freshness(e.ctx, name); f.State != index.WatchStopped || f.Watcher != "" {
		t.Errorf("Freshness after the watcher closed: %+v", f)
	}
	l2, err := e.s.Watch(e.ctx, name)
	if err != nil {
		t.Fatalf("Watch after the first watcher closed: %v", err)
	}
	l2.Close()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
