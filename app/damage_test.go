package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// genFile is a file of the current generation of cfg's index.
func genFile(t *testing.T, dir, name string) string {
	t.Helper()
	return filepath.Join(dir, local.CurrentGeneration(dir), name)
}

// The chat's path to the index, Search and Ask, turns a damaged database
// into ErrCorrupt with its one line, and a damaged graph into a notice
// (issue 11, item 8).
func TestDamagedIndexInTheEngine(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n", "b.md": "# Beta\n\nThe beta widget stops.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	ctx := context.Background()

	graph := genFile(t, cfg.IndexDir(), "graph.hnsw")
	b, _ := os.ReadFile(graph)
	// A byte of the float32 vectors, which end the file: a search checks
	// those it returns. (Damaged links only steer a walk; the next build
	// finds them.)
	b[len(b)-3] ^= 0x55
	os.WriteFile(graph, b, 0o644)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, SearchRequest{Query: "alpha widget", K: 5})
	if err != nil || res.Mode != "hybrid" || !strings.Contains(res.Notice, "graph file was damaged") || len(res.Passages) == 0 {
		t.Fatalf("search with a damaged graph: %v %q %+v", err, res.Notice, res.Passages)
	}
	e.Close()

	db := genFile(t, cfg.IndexDir(), "index.db")
	fi, _ := os.Stat(db)
	f, _ := os.OpenFile(db, os.O_RDWR, 0)
	f.WriteAt([]byte(strings.Repeat("\xde\xad", int(fi.Size())/2-2048)), 4096) // every page but the first
	f.Close()
	e, err = Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	oneLine := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, index.ErrCorrupt) || !strings.HasPrefix(err.Error(), `index "default" is damaged (`) || strings.Contains(err.Error(), "\n") ||
			!strings.HasSuffix(err.Error(), "rebuild it: lore index --rebuild") {
			t.Errorf("%s: %v, want the one line that says the index is damaged", what, err)
		}
	}
	_, err = e.Search(ctx, SearchRequest{Query: "alpha widget", K: 5})
	oneLine("search", err)
	_, events, err := e.Ask(ctx, AskRequest{Turn: agent.Turn{Question: "what spins?"}})
	if err != nil {
		oneLine("ask", err)
		return
	}
	var final agent.Event
	for ev := range events {
		final = ev
	}
	failed, ok := final.(agent.Failed)
	if !ok {
		t.Fatalf("ask on a damaged index ended with %#v", final)
	}
	oneLine("ask", failed.Err)
}
