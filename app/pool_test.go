package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// namedIndexes builds one keyword-only index per name, each holding a
// file that names it ("the alpha widget" in alpha), and opens an engine
// whose default is the first.
func namedIndexes(t *testing.T, maxOpen int, names ...string) (*Engine, config.Config) {
	t.Helper()
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.MaxOpenIndexes = maxOpen
	for _, n := range names {
		c := cfg
		c.Index = n
		docs := t.TempDir()
		writeDocs(t, docs, map[string]string{n + ".md": "# " + n + "\n\nThe " + n + " widget spins.\n"})
		build(t, c, docs, false, nil)
	}
	cfg.Index = names[0]
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, cfg
}

// searchOn searches index name for its own widget and checks the answer
// came from that index.
func searchOn(t *testing.T, e *Engine, name string) {
	t.Helper()
	res, err := e.Search(context.Background(), SearchRequest{Index: name, Query: name + " widget", K: 5})
	if err != nil {
		t.Errorf("search %s: %v", name, err)
		return
	}
	if res.Index != name || len(res.Passages) != 1 || res.Passages[0].Path != name+".md" {
		t.Errorf("search %s: index %q, passages %s", name, res.Index, paths(res.Passages))
	}
}

// Requests on two indexes run at once on one engine, each answered from
// its own (a server answers for several indexes; -race checks the pool).
func TestTwoIndexesSearchedConcurrently(t *testing.T) {
	e, _ := namedIndexes(t, 4, "alpha", "beta")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			searchOn(t, e, []string{"alpha", "beta"}[i%2])
		}()
	}
	wg.Wait()
	if names, live := e.pool.names(); !slices.Equal(names, []string{"alpha", "beta"}) || live != 2 {
		t.Fatalf("open %v (%d handles), want alpha and beta once each", names, live)
	}
	// "" is the default index, and the result says which it was.
	res, err := e.Search(context.Background(), SearchRequest{Query: "alpha widget"})
	if err != nil || res.Index != "alpha" || len(res.Passages) != 1 {
		t.Fatalf("default index: %v %q %s", err, res.Index, paths(res.Passages))
	}
}

// At most max-open-indexes stay open: opening another closes the least
// recently used one that no request is using.
func TestIndexPoolClosesTheLeastRecentlyUsed(t *testing.T) {
	e, _ := namedIndexes(t, 2, "alpha", "beta", "gamma")
	searchOn(t, e, "alpha")
	searchOn(t, e, "beta")
	searchOn(t, e, "alpha") // beta is now the least recently used
	searchOn(t, e, "gamma")
	if names, live := e.pool.names(); !slices.Equal(names, []string{"alpha", "gamma"}) || live != 2 {
		t.Fatalf("open %v (%d handles), want alpha and gamma", names, live)
	}

	// An index in use is never closed under its request: the pool goes
	// over the limit until it is released.
	held, err := e.acquire(context.Background(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	searchOn(t, e, "gamma")
	searchOn(t, e, "beta") // closes gamma, not alpha
	if names, _ := e.pool.names(); !slices.Equal(names, []string{"alpha", "beta"}) {
		t.Fatalf("open %v, want alpha (held) and beta", names)
	}
	e.release(held)
}

// A rebuild of a named index by another process is seen by the next
// request on it, and the old generation is closed.
func TestNamedIndexRebuildIsPickedUp(t *testing.T) {
	e, cfg := namedIndexes(t, 4, "alpha", "beta")
	searchOn(t, e, "beta")
	c := cfg
	c.Index = "beta"
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"new.md": "# New\n\nThe rebuilt beta gadget hums.\n"})
	build(t, c, docs, true, nil)
	res, err := e.Search(context.Background(), SearchRequest{Index: "beta", Query: "gadget", K: 5})
	if err != nil || paths(res.Passages) != "new.md" {
		t.Fatalf("after the rebuild: %v %s", err, paths(res.Passages))
	}
	if _, live := e.pool.names(); live != 1 {
		t.Fatalf("%d index handles open, want 1: the old generation stayed open", live)
	}
}

// An index nobody uses for a while is closed; the next request opens it.
func TestIdleIndexIsClosed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, _ := namedIndexes(t, 4, "alpha")
	e.pool.idle = 20 * time.Millisecond
	searchOn(t, e, "alpha")
	waitFor(t, "the idle index to close", func() bool { _, live := e.pool.names(); return live == 0 })
	searchOn(t, e, "alpha")
	e.Close()
}

// Close closes every index; one still in use closes when its request
// ends, and no request opens another.
func TestCloseLeavesNoIndexOpen(t *testing.T) {
	e, _ := namedIndexes(t, 4, "alpha", "beta")
	searchOn(t, e, "alpha")
	held, err := e.acquire(context.Background(), "beta")
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, live := e.pool.names(); live != 1 {
		t.Fatalf("%d handles open after Close, want the one in use", live)
	}
	e.release(held)
	if names, live := e.pool.names(); live != 0 || len(names) != 0 {
		t.Fatalf("open after Close: %v (%d handles)", names, live)
	}
	if _, err := e.Search(context.Background(), SearchRequest{Index: "alpha", Query: "widget"}); err == nil {
		t.Fatal("a search after Close opened the index again")
	}
}

// An index name is checked per request, and one not built is
// index.ErrNoIndex (a server's 404), naming it; IndexInfo says Built false.
func TestRequestIndexNames(t *testing.T) {
	e, _ := namedIndexes(t, 4, "alpha")
	ctx := context.Background()
	for _, bad := range []string{"../alpha", "a b", "/etc", strings.Repeat("x", 65)} {
		if _, err := e.Search(ctx, SearchRequest{Index: bad, Query: "widget"}); err == nil || !strings.Contains(err.Error(), "not a valid name") {
			t.Errorf("index %q: %v", bad, err)
		}
		if _, err := e.IndexInfo(ctx, bad); err == nil {
			t.Errorf("IndexInfo(%q) accepted it", bad)
		}
	}
	_, err := e.Search(ctx, SearchRequest{Index: "nope", Query: "widget"})
	if !errors.Is(err, index.ErrNoIndex) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unbuilt index: %v", err)
	}
	if _, _, err := e.Ask(ctx, AskRequest{Index: "nope", SourcesOnly: true}); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("Ask on an unbuilt index: %v", err)
	}
	if _, err := e.Changed(ctx, "nope", nil); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("Changed on an unbuilt index: %v", err)
	}
	info, err := e.IndexInfo(ctx, "nope")
	if err != nil || info.Built || info.Name != "nope" {
		t.Fatalf("IndexInfo(nope) = %+v, %v", info, err)
	}
	info, err = e.IndexInfo(ctx, "")
	if err != nil || !info.Built || info.Name != "alpha" || info.Chunks != 1 || info.Embedder != "none" {
		t.Fatalf("IndexInfo(default) = %+v, %v", info, err)
	}
	if got := fmt.Sprint(e.Indexes(), " ", e.DefaultIndex()); got != "[alpha] alpha" {
		t.Fatalf("Indexes, DefaultIndex = %s", got)
	}
}

// waitFor polls cond, failing the test if it does not hold within a
// generous bound (no timing is asserted, only that it happens).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// blockingClose is an index whose Close waits for unblock: the last
// reader of a replaced generation deletes its folder in Close, which for a
// large index takes seconds.
type blockingClose struct {
	index.Reader
	entered chan struct{}
	unblock chan struct{}
}

func (b blockingClose) Close() error {
	close(b.entered)
	<-b.unblock
	return b.Reader.Close()
}

// While an evicted index closes (a slow Close: an old generation being
// deleted), requests on other indexes open theirs: the pool does not hold
// its lock across Close.
func TestClosingIndexDoesNotHoldThePool(t *testing.T) {
	e, _ := namedIndexes(t, 1, "alpha", "beta", "gamma")
	entered, unblock := make(chan struct{}), make(chan struct{})
	open := e.pool.open
	e.pool.open = func(ctx context.Context, name string) (*openIndex, error) {
		o, err := open(ctx, name)
		if err == nil && name == "alpha" {
			o.ix = blockingClose{Reader: o.ix, entered: entered, unblock: unblock}
		}
		return o, err
	}
	searchOn(t, e, "alpha")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); searchOn(t, e, "beta") }() // evicts alpha (max 1), whose Close blocks
	<-entered
	done := make(chan struct{})
	go func() { defer close(done); searchOn(t, e, "gamma") }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a deadlock, not a speed: gamma needs nothing alpha holds
		close(unblock)
		t.Fatal("opening gamma waited for alpha's Close")
	}
	close(unblock)
	wg.Wait()
	if _, live := e.pool.names(); live > 2 {
		t.Errorf("%d handles open after alpha closed, want beta and gamma at most", live)
	}
}
