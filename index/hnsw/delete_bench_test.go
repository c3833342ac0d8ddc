package hnsw

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/benchdata"
)

// BenchmarkRecallAfterDeletes measures recall@10 (ef 128, the local
// store's) over the live nodes as a 20k-node graph loses more and more of
// them, deleted at random (files edited all over) or by region (a folder
// of one subject removed: the nodes nearest one direction go first, which
// leaves whole dead neighbourhoods for a walk to cross). It is what the
// local store's compaction threshold is chosen from (BENCHMARKS.md).
func BenchmarkRecallAfterDeletes(b *testing.B) {
	const n = 20000
	shares := []float64{0, 0.1, 0.2, 0.25, 1.0 / 3, 0.4, 0.5, 0.6, 0.75, 0.9, 0.98}
	for _, c := range []struct {
		order string
		dim   int
	}{{"random", 64}, {"region", 64}, {"region", 768}} {
		order, space := c.order, benchdata.NewSpace(c.dim, 200)
		b.Run(fmt.Sprintf("%s/%dd", order, c.dim), func(b *testing.B) {
			for range b.N {
				g, vecs := buildBench(b, space, n)
				keys := make([]int64, 0, n)
				for k := range vecs {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				rng := rand.New(rand.NewSource(9))
				if order == "random" {
					rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				} else {
					dir := space.Vec(1 << 50)
					slices.SortFunc(keys, func(x, y int64) int {
						return -cmpDot(vecs[x], vecs[y], dir)
					})
				}
				gone := 0
				for _, share := range shares {
					for ; gone < int(share*n); gone++ {
						g.Delete(keys[gone])
						delete(vecs, keys[gone])
					}
					r := recallOf(b, g, space, vecs)
					fmt.Printf("    %s %dd: %3.0f%% deleted (%d tombstones for %d live, %.2f of live): recall@10 %.3f\n",
						order, space.Dim, share*100, g.Tombstones(), g.Len(), float64(g.Tombstones())/float64(max(1, g.Len())), r)
				}
				// What compaction costs: the live nodes inserted afresh.
				start := time.Now()
				fresh := New(space.Dim, Options{M: 16, EfConstruction: 100})
				for k, v := range vecs {
					fresh.Add(k, v)
				}
				fmt.Printf("    %s %dd: rebuilding the %d live nodes took %v\n", order, space.Dim, len(vecs), time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

func cmpDot(x, y, dir []float32) int {
	var a, c float32
	for i := range dir {
		a += x[i] * dir[i]
		c += y[i] * dir[i]
	}
	switch {
	case a < c:
		return -1
	case a > c:
		return 1
	}
	return 0
}

func buildBench(b *testing.B, space *benchdata.Space, n int) (*Graph, map[int64][]float32) {
	g := New(space.Dim, Options{M: 16, EfConstruction: 100})
	g.exactBelow = 0 // walk the graph, as above 4,096 nodes
	vecs := map[int64][]float32{}
	for i := range n {
		vecs[int64(i+1)] = space.Vec(uint64(i))
		if err := g.Add(int64(i+1), vecs[int64(i+1)]); err != nil {
			b.Fatal(err)
		}
	}
	return g, vecs
}

// recallOf is recall@10 at ef 128 over 200 queries, against brute force
// over the live vectors.
func recallOf(b *testing.B, g *Graph, space *benchdata.Space, vecs map[int64][]float32) float64 {
	found, total := 0, 0
	for _, q := range space.Queries(200) {
		want := exactTop(q.Vec, vecs, 10)
		hits, err := g.Search(q.Vec, 10, 128)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hits {
			if slices.Contains(want, h.Key) {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(max(1, total))
}
