package hnsw

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"lore/internal/benchdata"
)

// BenchmarkGraph builds a graph of structured 768-d vectors (the space of
// lore's other benchmarks) with every core, then measures recall@10 and
// speed against exact search, and opening the saved file.
func BenchmarkGraph(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			space := benchdata.NewSpace(768, 500)
			vecs := make([][]float32, n)
			for i := range vecs {
				vecs[i] = space.Vec(uint64(i))
			}
			qs := space.Queries(200)
			b.ResetTimer()
			for range b.N {
				benchGraph(b, vecs, qs)
			}
		})
	}
}

func benchGraph(b *testing.B, vecs [][]float32, qs []benchdata.Query) {
	g := New(768, Options{M: 16, EfConstruction: 100})
	workers := runtime.GOMAXPROCS(0)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(vecs); i += workers {
				g.Add(int64(i+1), vecs[i])
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(len(vecs))/time.Since(start).Seconds(), "inserts/s")

	exact := make([]map[int64]bool, len(qs))
	start = time.Now()
	for i, q := range qs {
		exact[i] = map[int64]bool{}
		for _, k := range exactTopSlice(q.Vec, vecs, 10) {
			exact[i][k] = true
		}
	}
	exactPer := time.Since(start) / time.Duration(len(qs))
	for _, ef := range []int{32, 64, 128} {
		found := 0
		start := time.Now()
		for i, q := range qs {
			hits, _ := g.Search(q.Vec, 10, ef)
			for _, h := range hits {
				if exact[i][h.Key] {
					found++
				}
			}
		}
		per := time.Since(start) / time.Duration(len(qs))
		r := float64(found) / float64(10*len(qs))
		fmt.Printf("    %dk, ef=%d: recall@10 %.3f, %.3f ms/query, %.0fx exact (%.2f ms)\n", len(vecs)/1000, ef, r, float64(per.Microseconds())/1000, float64(exactPer)/float64(per), float64(exactPer.Microseconds())/1000)
		if ef == 128 {
			b.ReportMetric(r, "recall@10")
			b.ReportMetric(float64(exactPer)/float64(per), "x-exact")
		}
	}
	path := filepath.Join(b.TempDir(), "g")
	f, _ := os.Create(path)
	start = time.Now()
	g.WriteTo(f, nil)
	f.Close()
	b.ReportMetric(time.Since(start).Seconds()*1000, "save-ms")
	start = time.Now()
	back, _, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	back.Search(qs[0].Vec, 10, 128)
	b.ReportMetric(time.Since(start).Seconds()*1000, "open+search-ms")
	back.Close()
}

func exactTopSlice(q []float32, vecs [][]float32, k int) []int64 {
	m := make(map[int64][]float32, len(vecs))
	for i, v := range vecs {
		m[int64(i+1)] = v
	}
	return exactTop(q, m, k)
}
