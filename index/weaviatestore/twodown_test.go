package weaviatestore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/weaviatestore"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// With all but one node down, reads work and a write fails with one line
// that names the endpoints and says why; once the nodes are back the
// rerun writes it.
func TestAllButOneNodeDown(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	c := weaviatetest.Start(t, 3)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "# Retention\n\nPrometheus keeps data for 15 days by default.\n")
	ctx := context.Background()
	st, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints()})
	if err != nil {
		t.Fatal(err)
	}
	opt := index.BuildOptions{Name: "down", Paths: []string{dir}, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 1 << 20}
	if _, err := st.Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	c.Kill(0)
	c.Kill(1)
	r, err := st.Open(ctx, "down")
	if err != nil {
		t.Fatalf("open with one node of three: %v", err)
	}
	res, err := r.SearchVector(ctx, "retention", nil, index.SearchOptions{Limit: 3}, 0)
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search with one node of three: %v %v", res.Hits, err)
	}
	write("b.md", "# Remote write\n\nTune the queue.\n")
	_, err = st.Build(ctx, opt)
	t.Logf("write with one node of three: %v", err)
	// The live node answers (not ready, or ready but unable to finish):
	// the line tells it from the dead ones.
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.Endpoints()[2]+" is up") {
		t.Fatalf("a write with one node of three: %v", err)
	}
	c.Start(0)
	c.Start(1)
	c.WaitHealthy(3)
	sum, err := st.Build(ctx, opt)
	if err != nil || sum.FilesIndexed != 1 {
		t.Fatalf("the rerun with the cluster back: %+v %v", sum, err)
	}
}
