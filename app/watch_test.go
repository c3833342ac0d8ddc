package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// waitEvent takes watcher events until ok says one is the one awaited.
func waitEvent(t *testing.T, events <-chan WatchEvent, what string, ok func(WatchEvent) bool) WatchEvent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Kind == WatchFailed {
				t.Logf("watch error: %v", ev.Err)
			}
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no watcher event: %s", what)
		}
	}
}

func updated(ev WatchEvent, rel string) bool {
	for _, f := range ev.Summary.Updated {
		if f.Path == rel {
			return true
		}
	}
	return false
}

// A watched index answers for a saved file; with Ollama down a change is
// searchable by keyword at once and its vectors follow when it is back;
// the freshness every process reads says so.
func TestWatchKeepsTheIndexInStep(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	var down atomic.Bool
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		return downConn{c, &down}, err
	}
	e, err := Open(Options{Config: cfg, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan WatchEvent, 64)
	done := make(chan error, 1)
	go func() {
		done <- e.Watch(ctx, WatchRequest{FillEvery: 200 * time.Millisecond, OnEvent: func(ev WatchEvent) { events <- ev }})
	}()
	waitEvent(t, events, "started", func(ev WatchEvent) bool { return ev.Kind == WatchStarted })

	store := local.Store{Parent: filepath.Dir(cfg.IndexDir())}
	if _, err := store.Watch(ctx, cfg.Index); !errors.Is(err, index.ErrLocked) {
		t.Errorf("a second watcher of the index: %v, want ErrLocked", err)
	}

	writeDocs(t, docs, map[string]string{"b.md": "# Beta\n\nThe zebra crossing.\n"})
	waitEvent(t, events, "b.md synced", func(ev WatchEvent) bool { return ev.Kind == WatchSynced && updated(ev, "b.md") })
	res, err := e.Search(ctx, SearchRequest{Query: "zebra crossing", K: 3})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].Path != "b.md" || res.Mode != "hybrid" {
		t.Fatalf("search for the saved file: %+v %v", res, err)
	}
	f, err := store.Freshness(ctx, cfg.Index)
	if err != nil || f.State != index.WatchWatching || f.SyncedAt.IsZero() || f.Watcher == "" {
		t.Errorf("Freshness read from the store: %+v %v", f, err)
	}

	down.Store(true)
	writeDocs(t, docs, map[string]string{"c.md": "# Gamma\n\nAn okapi grazes.\n"})
	ev := waitEvent(t, events, "c.md synced with Ollama down", func(ev WatchEvent) bool { return ev.Kind == WatchSynced && updated(ev, "c.md") })
	if ev.Freshness.VectorsPending != 1 || ev.Freshness.State != index.WatchVectorsPending {
		t.Errorf("with Ollama down: %+v, want one vector pending", ev.Freshness)
	}
	res, err = e.Search(ctx, SearchRequest{Query: "okapi", K: 3})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].Path != "c.md" {
		t.Fatalf("keyword search for the file saved while Ollama was down: %+v %v", res, err)
	}
	if f, _ := store.Freshness(ctx, cfg.Index); f.VectorsPending != 1 {
		t.Errorf("Freshness while Ollama is down: %+v", f)
	}

	down.Store(false)
	ev = waitEvent(t, events, "vectors filled", func(ev WatchEvent) bool { return ev.Kind == WatchSynced && ev.Summary.ChunksEmbedded == 1 })
	if ev.Freshness.VectorsPending != 0 {
		t.Errorf("after the fill: %+v", ev.Freshness)
	}
	st, err := e.IndexStatus(ctx, "")
	if err != nil || st.Vectors != st.Chunks || st.Chunks != 3 {
		t.Errorf("status after the fill: %d vectors, %d chunks (%v)", st.Vectors, st.Chunks, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Watch ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not end with its context")
	}
	if f, _ := store.Freshness(context.Background(), cfg.Index); f.State != index.WatchStopped {
		t.Errorf("Freshness after the watcher ended: %+v", f)
	}
}

// Two engines keep one index fresh: one watches, the other follows it
// and tells its subscribers when a batch was applied.
func TestKeepFreshWatchesOnceAndFollows(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func() *Engine {
		e, err := Open(Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	first, second := open(), open()
	firstEv, secondEv := make(chan SyncEvent, 16), make(chan SyncEvent, 16)
	first.Subscribe(func(ev SyncEvent) { firstEv <- ev })
	second.Subscribe(func(ev SyncEvent) { secondEv <- ev })
	first.KeepFresh(ctx)
	<-firstEv // the first refresh
	second.KeepFresh(ctx)
	writeDocs(t, docs, map[string]string{"b.md": "# Beta\n\nThe zebra crossing.\n"})
	for ev := range firstEv {
		if len(ev.Changed) == 1 && ev.Changed[0].Path == "b.md" {
			break
		}
	}
	select {
	case ev := <-secondEv:
		if ev.Changed != nil || ev.Freshness.SyncedAt.IsZero() {
			t.Errorf("the follower was told %+v, want an unknown change at a sync time", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the engine that follows was not told of the batch")
	}
	res, err := second.Search(ctx, SearchRequest{Query: "zebra crossing", K: 3})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].Path != "b.md" {
		t.Errorf("the follower's search: %+v %v", res, err)
	}
}

// downConn is a connection to a server that goes down with down: kept
// connections fail too, as they do when Ollama stops.
type downConn struct {
	net.Conn
	down *atomic.Bool
}

func (c downConn) Read(b []byte) (int, error) {
	if c.down.Load() {
		return 0, syscall.ECONNRESET
	}
	return c.Conn.Read(b)
}

func (c downConn) Write(b []byte) (int, error) {
	if c.down.Load() {
		return 0, syscall.ECONNRESET
	}
	return c.Conn.Write(b)
}

// An index removed while watched ends its watcher, leaving nothing.
func TestWatchEndsWhenTheIndexIsRemoved(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, nil)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	events := make(chan WatchEvent, 64)
	done := make(chan error, 1)
	go func() {
		done <- e.Watch(context.Background(), WatchRequest{OnEvent: func(ev WatchEvent) { events <- ev }})
	}()
	waitEvent(t, events, "started", func(ev WatchEvent) bool { return ev.Kind == WatchStarted })
	if _, err := e.RemoveIndex(context.Background(), "", nil); err != nil {
		t.Fatal(err)
	}
	writeDocs(t, docs, map[string]string{"b.md": "# Beta\n\nbeta\n"})
	select {
	case err := <-done:
		if !errors.Is(err, index.ErrNoIndex) {
			t.Errorf("Watch of a removed index ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher of a removed index did not end")
	}
	if _, err := os.Stat(cfg.IndexDir()); !os.IsNotExist(err) {
		t.Errorf("the removed index's folder is back: %v", err)
	}
}

// chunksOf lists every chunk of a local index: path, lines and text.
func chunksOf(t *testing.T, dir, name string) []string {
	t.Helper()
	ix, err := local.Open(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.SampleChunks(context.Background(), 1<<30, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d-%d %q", h.Path, h.Start, h.End, h.Text))
	}
	slices.Sort(out)
	return out
}

// Whatever happens to the files, in any order and as fast as a script
// can do it, once the burst settles the watched index holds exactly
// what a fresh build of the same files holds.
func TestWatchedIndexMatchesAFreshBuild(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	cfg.MaxFileSize = 64 << 10
	docs := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.md", i%10, i)] = fmt.Sprintf("# File %d\n\nword%d in folder %d\n", i, i, i%10)
	}
	writeDocs(t, docs, files)
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{docs}, MaxFileSize: cfg.MaxFileSize,
		Chunk: ingest.ChunkOptions{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap}}); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan WatchEvent, 1024)
	go e.Watch(ctx, WatchRequest{OnEvent: func(ev WatchEvent) { events <- ev }})
	waitEvent(t, events, "started", func(ev WatchEvent) bool { return ev.Kind == WatchStarted })

	p := func(rel string) string { return filepath.Join(docs, rel) }
	// A branch switch: many files rewritten, some deleted, some new.
	for i := 0; i < 300; i += 3 {
		writeDocs(t, docs, map[string]string{fmt.Sprintf("d%d/f%d.md", i%10, i): fmt.Sprintf("# File %d\n\nchanged%d\n", i, i)})
	}
	for i := 1; i < 300; i += 7 {
		os.Remove(p(fmt.Sprintf("d%d/f%d.md", i%10, i)))
	}
	writeDocs(t, docs, map[string]string{"new/deep/er/x.md": "# X\n\nxylophone\n"})
	os.Rename(p("d3"), p("d3-moved"))
	os.RemoveAll(p("d4"))
	// An atomic save, a file past the size limit, an ignore file.
	writeDocs(t, docs, map[string]string{".f0.swp": "# File 0\n\natomic\n", "big.txt": strings.Repeat("huge ", 20_000), ".loreignore": "d5/\n"})
	os.Rename(p(".f0.swp"), p("d0/f0.md"))
	writeDocs(t, docs, map[string]string{"d6/late.md": "# Late\n\nlate\n"})

	// Settled: no batch for two seconds.
	for settled := false; !settled; {
		select {
		case ev := <-events:
			if ev.Kind == WatchFailed {
				t.Logf("batch failed (tried again): %v", ev.Err)
			}
		case <-time.After(2 * time.Second):
			settled = true
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if _, err := local.Build(context.Background(), fresh, index.BuildOptions{Name: "fresh", Paths: []string{docs}, MaxFileSize: cfg.MaxFileSize,
		Chunk: ingest.ChunkOptions{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap}}); err != nil {
		t.Fatal(err)
	}
	got, want := chunksOf(t, cfg.IndexDir(), cfg.Index), chunksOf(t, fresh, "fresh")
	if !slices.Equal(got, want) {
		var orphans, lost []string
		for _, c := range got {
			if !slices.Contains(want, c) {
				orphans = append(orphans, c)
			}
		}
		for _, c := range want {
			if !slices.Contains(got, c) {
				lost = append(lost, c)
			}
		}
		t.Errorf("the watched index (%d chunks) differs from a fresh build (%d):\norphans %v\nlost %v", len(got), len(want), orphans, lost)
	}
}
