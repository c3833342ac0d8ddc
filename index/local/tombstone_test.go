package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/wordvec"
)

// recallAt10 is the share of the 10 true nearest chunks (brute force over
// the stored vectors) that a vector search of ix finds.
func recallAt10(t *testing.T, ix *Index, q []float32) float64 {
	t.Helper()
	ctx := context.Background()
	rows, err := ix.st.db.QueryContext(ctx, `SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.hash = c.hash`)
	if err != nil {
		t.Fatal(err)
	}
	type scored struct {
		id int64
		d  float32
	}
	var all []scored
	for rows.Next() {
		var id int64
		var b []byte
		rows.Scan(&id, &b)
		all = append(all, scored{id, dotDistance(q, decodeVector(b))})
	}
	rows.Close()
	sort.Slice(all, func(i, j int) bool { return all[i].d < all[j].d })
	// Ties: any chunk as near as the tenth nearest is a right answer.
	k := min(10, len(all))
	dist := map[int64]float32{}
	for _, s := range all {
		dist[s.id] = s.d
	}
	tenth := all[k-1].d + 1e-6
	res, err := ix.SearchVector(ctx, "", q, index.SearchOptions{Limit: 10, Depth: 10, NoLexical: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, h := range res.Hits {
		if d, ok := dist[h.ChunkID]; ok && d <= tenth {
			found++
		}
	}
	return float64(found) / float64(k)
}

// After a large delete, vector search finds the true neighbours among
// what is left, for a reader opened after the refresh and for one that
// was open before it (which catches up in memory); doctor's check says
// nothing is wrong only when that holds.
func TestVectorSearchHoldsAfterALargeDelete(t *testing.T) {
	ctx := context.Background()
	src, dir := t.TempDir(), t.TempDir()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	for i := range 5000 {
		body := fmt.Sprintf("# Note %d\n\n%s %s %s number%d\n", i, words[i%12], words[(i/12)%12], words[(i/144)%12], i)
		os.WriteFile(filepath.Join(src, fmt.Sprintf("n%04d.md", i)), []byte(body), 0o644)
	}
	emb := wordvec.Embedder{Dim: 64}
	opt := index.BuildOptions{Name: "t", Paths: []string{src}, Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500}}
	if _, err := Build(ctx, dir, opt); err != nil {
		t.Fatal(err)
	}
	// Two readers open across the delete: one finds the graph file the
	// refresh saved, the other finds none (removed below) and compacts
	// its own graph in memory.
	var open []*Index
	for range 2 {
		ix, err := Open(dir, "t")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		q, _ := emb.EmbedQuery(ctx, "alpha bravo charlie")
		if r := recallAt10(t, ix, q); r < 0.9 {
			t.Fatalf("recall@10 before any delete: %.2f", r)
		}
		open = append(open, ix)
	}
	for i := range 5000 {
		if i%75 != 0 {
			os.Remove(filepath.Join(src, fmt.Sprintf("n%04d.md", i)))
		}
	}
	opt.Paths = nil
	if _, err := Build(ctx, dir, opt); err != nil {
		t.Fatal(err)
	}
	after, err := Open(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	for _, c := range []struct {
		name string
		ix   *Index
	}{{"a reader opened after the delete", after}, {"a reader open before it", open[0]}, {"a reader open before it, the graph file gone", open[1]}} {
		if c.ix == open[1] {
			os.Remove(filepath.Join(dir, after.gen, graphFile))
		}
		var got []float64
		for _, text := range []string{"alpha bravo charlie", "delta echo", "golf hotel india", "kilo lima alpha"} {
			q, _ := emb.EmbedQuery(ctx, text)
			got = append(got, recallAt10(t, c.ix, q))
		}
		if slices.Min(got) < 0.9 {
			t.Errorf("%s: recall@10 %v after deleting 74 chunks in 75", c.name, got)
		}
	}
	os.Remove(filepath.Join(dir, after.gen, graphFile))
	if _, err := Build(ctx, dir, opt); err != nil {
		t.Fatal(err)
	}
	gs, err := after.CheckGraph(ctx)
	if err != nil || gs.Problem != "" {
		t.Errorf("CheckGraph after the refresh: %+v %v", gs, err)
	}
}

// A graph file saved with most of its nodes deleted (by a lore before
// compaction) is a problem doctor names, not "fine".
func TestCheckGraphNamesASparseGraph(t *testing.T) {
	ctx := context.Background()
	src, dir := t.TempDir(), t.TempDir()
	for i := range 300 {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("n%03d.md", i)), []byte(fmt.Sprintf("# N\n\nword%d\n", i)), 0o644)
	}
	emb := wordvec.Embedder{Dim: 16}
	if _, err := Build(ctx, dir, index.BuildOptions{Name: "t", Paths: []string{src}, Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500}}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	path := filepath.Join(dir, ix.gen, graphFile)
	vg, err := readGraphFile(path, 16)
	if err != nil {
		t.Fatal(err)
	}
	// Delete 250 nodes in the file and their vectors in the database, as
	// an older lore's refresh left them.
	keys := vg.g.Keys()
	slices.Sort(keys)
	for _, k := range keys[:250] {
		vg.remove(k)
		ix.st.db.ExecContext(ctx, `DELETE FROM vectors WHERE id = ?`, k)
	}
	if err := vg.writeFile(path); err != nil {
		t.Fatal(err)
	}
	vg.close()
	gs, err := ix.CheckGraph(ctx)
	if err != nil || !strings.Contains(gs.Problem, "250 deleted nodes for 50 live") {
		t.Errorf("CheckGraph of a mostly deleted graph: %+v %v", gs, err)
	}
}

// A live-sync batch does not rewrite the graph file (its cost grows with
// the index); a reader still finds the new chunk by vector, and once the
// batches add up to a twentieth of the vectors the file is saved again.
func TestSyncBatchLeavesTheGraphFile(t *testing.T) {
	ctx := context.Background()
	src, dir := t.TempDir(), t.TempDir()
	for i := range 600 {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("n%03d.md", i)), []byte(fmt.Sprintf("# N\n\nword%d common\n", i)), 0o644)
	}
	emb := wordvec.Embedder{Dim: 16}
	opt := index.BuildOptions{Name: "t", Paths: []string{src}, Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500}}
	if _, err := Build(ctx, dir, opt); err != nil {
		t.Fatal(err)
	}
	graph := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, CurrentGeneration(dir), graphFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	saved := graph()
	batch := func(i int) {
		p := filepath.Join(src, fmt.Sprintf("new%03d.md", i))
		os.WriteFile(p, []byte(fmt.Sprintf("# New\n\nzebra%d stripes\n", i)), 0o644)
		o := opt
		o.Paths, o.Only = nil, []string{p}
		if _, err := Build(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
	}
	batch(0)
	if !slices.Equal(graph(), saved) {
		t.Errorf("a one-file batch rewrote the graph file")
	}
	ix, err := Open(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := emb.EmbedQuery(ctx, "zebra0 stripes")
	res, err := ix.SearchVector(ctx, "", q, index.SearchOptions{Limit: 1, Depth: 10, NoLexical: true}, 0)
	ix.Close()
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Path != "new000.md" {
		t.Errorf("vector search for the batch's chunk: %+v %v", res.Hits, err)
	}
	// Behind by what live sync left on purpose: doctor is not to fail it.
	ix, err = Open(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	if gs, err := ix.CheckGraph(ctx); err != nil || gs.Problem != "" || gs.Lag != 1 {
		t.Errorf("CheckGraph of a file one batch behind: %+v %v", gs, err)
	}
	ix.Close()
	for i := 1; i < 40; i++ {
		batch(i)
	}
	if slices.Equal(graph(), saved) {
		t.Errorf("40 batches on 600 vectors and the graph file was never saved again")
	}
	ix, err = Open(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if gs, err := ix.CheckGraph(ctx); err != nil || gs.Missing > 30 {
		t.Errorf("the graph file lags by %d vectors (%v)", gs.Missing, err)
	}
}

// A live-sync batch drops the vectors of the chunks it replaced or
// removed, and only those: a vector another file's chunk still uses stays.
func TestSyncBatchDropsTheVectorsItLeftUnused(t *testing.T) {
	ctx := context.Background()
	src, dir := t.TempDir(), t.TempDir()
	shared := "# Shared\n\nthe same paragraph in two files\n"
	writeFiles(t, src, map[string]string{
		"a.md": shared + "\n# A\n\napples only here\n",
		"b.md": shared + "\n# B\n\npears only here\n",
		"c.md": "# C\n\nplums\n",
	})
	emb := wordvec.Embedder{Dim: 16}
	opt := index.BuildOptions{Name: "t", Paths: []string{src}, Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 40}}
	if _, err := Build(ctx, dir, opt); err != nil {
		t.Fatal(err)
	}
	batch := func(rel string) {
		o := opt
		o.Paths, o.Only = nil, []string{filepath.Join(src, rel)}
		if _, err := Build(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		ix, err := Open(dir, "t")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var vectors, used, unembedded int
		ix.st.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vectors), (SELECT count(DISTINCT hash) FROM chunks),
			(SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = c.hash))`).Scan(&vectors, &used, &unembedded)
		if vectors != used || unembedded != 0 {
			t.Errorf("%s: %d vectors for %d distinct chunks, %d chunks without one", when, vectors, used, unembedded)
		}
	}
	writeFiles(t, src, map[string]string{"a.md": "# A\n\napples changed\n"})
	batch("a.md")
	check("after a batch that edited a.md")
	os.Remove(filepath.Join(src, "b.md"))
	batch("b.md")
	check("after a batch that deleted b.md")
}
