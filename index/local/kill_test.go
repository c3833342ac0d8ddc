package local

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// TestKillHelper is the child process of TestKillAtRandomMoments: it builds
// the index it is pointed at and is killed somewhere along the way.
func TestKillHelper(t *testing.T) {
	if os.Getenv("LORE_KILL_HELPER") != "1" {
		t.Skip("child process of TestKillAtRandomMoments")
	}
	opt := testOptions(embedderFor(t, os.Getenv("LORE_KILL_URL"), "nomic-embed-text"), os.Getenv("LORE_KILL_SRC"))
	if _, err := Build(context.Background(), os.Getenv("LORE_KILL_DIR"), opt); err != nil {
		t.Fatal(err)
	}
}

// TestKillAtRandomMoments kills an indexing process with SIGKILL at random
// moments. After every kill the index must open and pass SQLite's integrity
// check; at the end, a run completes, and no chunk was embedded twice except
// those in the one request that was in flight when a kill landed.
func TestKillAtRandomMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	srv := ollamatest.New(t)
	srv.SetDelay(8 * time.Millisecond)
	src, dir := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		// Sections over half the chunk budget, so each is a chunk of its own.
		pad := strings.Repeat(" filler", 25)
		files[fmt.Sprintf("d%02d/f%03d.md", i%7, i)] = fmt.Sprintf("# File %d\n\nalpha %d%s\n\n## Two\n\nbeta %d%s\n\n## Three\n\ngamma %d%s\n", i, i, pad, i, pad, i, pad)
	}
	writeFiles(t, src, files)
	age(t, src)

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	inFlight := map[int]bool{} // request index → it was the last before a kill
	for kill := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LORE_KILL_HELPER=1", "LORE_KILL_SRC="+src, "LORE_KILL_DIR="+dir, "LORE_KILL_URL="+srv.URL)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.Intn(250)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		time.Sleep(20 * time.Millisecond) // let the server read what was sent
		n := len(srv.Requests())
		if n > 0 {
			inFlight[n-1] = true
		}
		t.Logf("kill %d: %d embed requests so far", kill, n)
		ix, err := Open(dir, "test")
		if os.IsNotExist(err) || (err != nil && readPointer(dir, currentFile) == "") {
			continue // killed before the index existed at all
		}
		if err != nil {
			t.Fatalf("kill %d: index does not open: %v", kill, err)
		}
		var check string
		if err := ix.st.db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("kill %d: integrity check: %q %v", kill, check, err)
		}
		if _, err := ix.Status(context.Background()); err != nil {
			t.Fatalf("kill %d: status: %v", kill, err)
		}
		ix.Close()
	}

	// The folder is named again: every kill may have landed before the
	// first run saved it.
	sum := build(t, dir, testOptions(embedderFor(t, srv.URL, "nomic-embed-text"), src))
	t.Logf("final run embedded %d chunks", sum.ChunksEmbedded)
	if sum.TotalFiles != 300 || sum.TotalChunks != 900 {
		t.Fatalf("final run: %+v", sum)
	}
	first := map[string]int{}
	for i, req := range srv.Requests() {
		for _, text := range req {
			if text == "dimension probe" {
				continue
			}
			if prev, ok := first[text]; ok && !inFlight[prev] {
				t.Fatalf("%q embedded in request %d and again in %d, and %d was not in flight at a kill", text, prev, i, prev)
			}
			first[text] = i
		}
	}
	if len(first) != 900 {
		t.Fatalf("%d distinct chunks embedded, want 900", len(first))
	}
	gen := readPointer(dir, currentFile)
	if vg, err := readGraphFile(filepath.Join(dir, gen, graphFile), 8); err != nil || vg.Len() != 900 {
		t.Fatalf("graph after the final run: %v", err)
	}
}
