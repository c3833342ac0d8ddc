package local

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

func TestCheckGraph(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	build(t, dir, testOptions(newFakeEmbedder("fake", 8), src))
	check := func() index.GraphStatus {
		t.Helper()
		ix, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		gs, err := ix.CheckGraph(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	gs := check()
	if !gs.Needed || !gs.Present || gs.Problem != "" || gs.Nodes == 0 || gs.Nodes != gs.Vectors {
		t.Fatalf("healthy graph: %+v", gs)
	}
	path := genPath(t, dir, graphFile)
	good, _ := os.ReadFile(path)

	// A flipped byte in the last vector: opening does not see it, Verify does.
	bad := slices.Clone(good)
	bad[len(bad)-2] ^= 0x40
	os.WriteFile(path, bad, 0o644)
	if gs := check(); !gs.Present || !strings.Contains(gs.Problem, "damaged") || strings.Contains(gs.Problem, "damaged graph file") {
		t.Errorf("damaged vector: %+v", gs)
	}
	os.WriteFile(path, good[:len(good)/2], 0o644)
	if gs := check(); !strings.Contains(gs.Problem, "damaged") {
		t.Errorf("truncated: %+v", gs)
	}
	os.Remove(path)
	if gs := check(); gs.Present || !strings.Contains(gs.Problem, "missing") {
		t.Errorf("missing: %+v", gs)
	}

	// A lexical-only index has no graph to check.
	dir2 := t.TempDir()
	build(t, dir2, testOptions(nil, src))
	ix, err := Open(dir2, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if gs, err := ix.CheckGraph(context.Background()); err != nil || gs.Needed || gs.Problem != "" {
		t.Errorf("lexical-only: %+v %v", gs, err)
	}
}
