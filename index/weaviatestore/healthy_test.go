package weaviatestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/index/weaviatestore"
	"github.com/lore-cli/lore/internal/weaviatetest"
	"github.com/lore-cli/lore/internal/wordvec"
)

// A healthy 3-node cluster keeps every chunk it took: each of 20 builds of
// lore's own docs into a fresh index holds the local store's chunks with
// no repair at Publish. Three causes of repairs were found this way: a
// file's replaced chunks deleted by a filter (doc_id = d AND version != v)
// that a replica still applying the insert matched against the new chunks
// too, the coordinator then deleting them on every replica (1 build in 20
// lost a chunk); Publish's check reading a replica behind and calling
// present chunks lost (2 builds in 20); a fresh collection queried on a
// node that had not applied its creation yet (1 build in 20 failed).
func TestHealthyClusterLosesNoChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	c := weaviatetest.Start(t, 3)
	ctx := context.Background()
	opt := index.BuildOptions{Paths: []string{"../../docs"}, Embedder: wordvec.Embedder{Dim: 64},
		Chunk: ingest.ChunkOptions{Size: 1200, Overlap: 150}, MaxFileSize: 4 << 20, Workers: 2}
	local := local.Store{Parent: t.TempDir()}
	lopt := opt
	lopt.Name = "docs"
	if _, err := local.Build(ctx, lopt); err != nil {
		t.Fatal(err)
	}
	want := chunkSet(t, local, "docs")
	st, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints()})
	if err != nil {
		t.Fatal(err)
	}
	const builds = 20
	repaired := 0
	for i := range builds {
		bopt := opt
		bopt.Name = fmt.Sprintf("docs%d", i)
		bopt.Notice = func(msg string) {
			if strings.Contains(msg, index.ErrIncomplete.Error()) {
				repaired++
				t.Logf("build %d: %s", i, msg)
			}
		}
		sum, err := st.Build(ctx, bopt)
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		if sum.TotalChunks != len(want) {
			t.Errorf("build %d: %d chunks, the local store %d", i, sum.TotalChunks, len(want))
		}
	}
	if repaired > 0 {
		t.Errorf("%d of %d builds lost chunks on a healthy cluster (Publish wrote them again)", repaired, builds)
	}
	got := chunkSet(t, st, "docs0")
	if missing, extra := equalSets(want, got); missing+extra > 0 {
		t.Errorf("docs0: %d chunks missing, %d extra against the local store", missing, extra)
	}
}
