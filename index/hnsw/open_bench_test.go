package hnsw

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// synthetic fills a graph of n random nodes directly, links random: what
// opening a file costs does not depend on how good its links are, and
// inserting 1M vectors takes a quarter of an hour.
func synthetic(n, dim int) *Graph {
	g := New(dim, Options{M: 16, EfConstruction: 100})
	rng := rand.New(rand.NewSource(1))
	pool := make([][]float32, 256)
	for i := range pool {
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		pool[i] = v
	}
	for i := range n {
		b := g.blocks[i>>blockShift]
		if b == nil {
			b = g.newBlock()
			g.blocks[i>>blockShift] = b
		}
		j := i & (blockSize - 1)
		level := min(int(-math.Log(1-rng.Float64())*g.ml), maxLevel)
		b.keys[j], b.levels[j], b.vrefs[j] = int64(i+1), uint8(level), pool[i%len(pool)]
		b.scales[j] = quantize(b.q[j*g.qdim:(j+1)*g.qdim], b.vrefs[j])
		s := b.links0[j*g.stride : (j+1)*g.stride]
		s[0] = uint32(2 * g.m)
		for k := 1; k <= 2*g.m; k++ {
			s[k] = uint32(rng.Intn(n))
		}
		if level > 0 {
			b.upper[j] = make([]uint32, level*(g.m+1))
		}
		if level > g.top || g.entry < 0 {
			g.entry, g.top = int32(i), level
		}
	}
	g.n.Store(uint32(n))
	g.live.Store(int64(n))
	return g
}

// BenchmarkOpen measures opening a saved graph and its first search, the
// graph's share of a process's start-up, at 100k and 1M 768-d nodes.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "g")
			f, _ := os.Create(path)
			if err := synthetic(n, 768).WriteTo(f, nil); err != nil {
				b.Fatal(err)
			}
			f.Close()
			q := make([]float32, 768)
			q[0] = 1
			var open, first time.Duration
			for range b.N {
				start := time.Now()
				g, _, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				open += time.Since(start)
				g.Search(q, 10, 128)
				first += time.Since(start)
				g.Close()
			}
			b.ReportMetric(float64(open.Microseconds())/1000/float64(b.N), "open-ms")
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "open+search-ms")
		})
	}
}
