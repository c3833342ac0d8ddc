package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lore-cli/lore/index"
)

// A build told to follow links out of its sources, given a link to /,
// ends as soon as its context does: the path of Ctrl+C, SIGTERM and an
// MCP index_paths call that is cancelled (issue 34, item 1).
func TestBuildEndsOnCancelDuringTheScan(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.Embedder, cfg.FollowSymlinks = "none", true
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"x.md": "# x\n\nnotes\n"})
	if err := os.Symlink("/", filepath.Join(docs, "everything")); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Config: cfg, NoRerank: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = e.Build(ctx, BuildRequest{Paths: []string{docs}, Progress: func(p index.Progress) {
		if p.Phase == "scan" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v, want context.Canceled", err)
	}
}
