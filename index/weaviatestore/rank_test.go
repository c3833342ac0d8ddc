package weaviatestore

import (
	"context"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// testKeywordRanking: the cluster's candidates are ordered by lore's own
// scorer, as the local store orders the same chunks. Weaviate's BM25
// alone put the shorter chunk first in both cases: it knows neither the
// camelCase parts of an identifier nor how close together a chunk holds
// the question's words.
func testKeywordRanking(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Rank")
	w := begin(t, s, "rank", false)
	src, err := w.AddSource(context.Background(), "/nowhere/rank")
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(heading, text string) ingest.Chunk {
		return ingest.Chunk{Start: 1, End: 5, Heading: heading, Kind: "prose", Text: text}
	}
	files := []index.FileUpdate{
		fileUpdate(src.ID, "pool/parts.md", chunk("Pools", "The pool keeps maxIdleConns connections open.")),
		fileUpdate(src.ID, "pool/plain.md", chunk("Pools", "The pool keeps connections open.")),
		fileUpdate(src.ID, "disk/together.md", chunk("Storage", "Set disk retention with a flag.\nalpha beta gamma")),
		fileUpdate(src.ID, "disk/apart.md", chunk("Storage", "Set disk with a flag.\nalpha\nbeta\n\nretention")),
	}
	for i, f := range []string{"garden", "tomatoes", "weather", "music", "coffee", "trains"} {
		files = append(files, fileUpdate(src.ID, "other/"+f+".md", chunk("Other", "Notes about "+f+" and nothing else, part "+string(rune('a'+i))+".")))
	}
	ctx := context.Background()
	if err := w.SetMeta(ctx, "schema_version", "3", "chunker", "test"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Publish(ctx, index.PublishOptions{}); err != nil { // keyword only: no vectors
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := open(t, s, "rank")
	for _, q := range []struct{ query, want, why string }{
		{"idle connections in the pool", "pool/parts.md", "maxIdleConns is found by its part idle"},
		{"disk retention", "disk/together.md", "the words together beat the words apart"},
	} {
		res := search(t, r, q.query, nil, index.SearchOptions{})
		if len(res.Hits) < 2 || res.Hits[0].Path != q.want {
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Path)
			}
			t.Errorf("%q: %v, want %s first (%s)", q.query, got, q.want, q.why)
		}
	}
}
