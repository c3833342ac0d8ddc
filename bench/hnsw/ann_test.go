// Package hnsw compares lore's HNSW graph with github.com/coder/hnsw, the
// library lore first chose and replaced, on the vectors and queries of
// lore's own benchmarks, against exact search in the same run. It is kept
// so that one run tells whether a newer coder/hnsw release has become
// competitive:
//
//	cd bench && go get github.com/coder/hnsw@latest
//	go test -run Coder -v -bench ANN -benchtime 1x ./hnsw/
//
// or, without touching go.mod, hnsw/compare.sh VERSION... (see there).
package hnsw

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/viterin/vek/vek32"

	"github.com/lore-cli/lore/internal/benchdata"
)

// ann is what the benchmark needs of an index: inserts and a k-nearest
// search at a given search breadth (efSearch).
type ann interface {
	add(key int64, v []float32)
	search(q []float32, k, ef int) []int64
}

// library is an index under test; lore_test.go adds lore's when built with
// -tags lorehnsw.
type library struct {
	name string
	new  func(dim int) ann
}

var libraries = []library{{"coder-" + coderVersion(), newCoder}}

const (
	dim            = 768
	k              = 10
	m              = 16  // links per node (2m on layer 0 where a library does so)
	efConstruction = 100 // candidates kept while inserting
)

var efs = []int{16, 32, 64, 128, 256}

// exact is brute-force search: the ground truth and the speed baseline.
type exact struct {
	keys []int64
	vecs [][]float32
}

func (e *exact) add(key int64, v []float32) {
	e.keys = append(e.keys, key)
	e.vecs = append(e.vecs, v)
}

// search ranks every vector by dot product (the vectors are unit length).
func (e *exact) search(q []float32, k, _ int) []int64 {
	type hit struct {
		key int64
		sim float32
	}
	top := make([]hit, 0, k+1)
	for i, v := range e.vecs {
		s := vek32.Dot(q, v)
		if len(top) == k && s <= top[k-1].sim {
			continue
		}
		j, _ := slices.BinarySearchFunc(top, s, func(h hit, s float32) int {
			if h.sim > s {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, j, hit{e.keys[i], s})
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]int64, len(top))
	for i, h := range top {
		out[i] = h.key
	}
	return out
}

// dataset is one size's vectors, queries, and exact top-k of each query.
type dataset struct {
	vecs    [][]float32
	queries [][]float32
	truth   [][]int64
	exactMs float64 // exact search, ms per query
}

var datasets = map[int]*dataset{}

func data(n int) *dataset {
	if d := datasets[n]; d != nil {
		return d
	}
	space := benchdata.NewSpace(dim, 500)
	d := &dataset{vecs: make([][]float32, n)}
	ex := &exact{}
	for i := range n {
		d.vecs[i] = space.Vec(uint64(i))
		ex.add(int64(i), d.vecs[i])
	}
	for _, q := range space.Queries(200) {
		d.queries = append(d.queries, q.Vec)
	}
	start := time.Now()
	for _, q := range d.queries {
		d.truth = append(d.truth, ex.search(q, k, 0))
	}
	d.exactMs = ms(time.Since(start)) / float64(len(d.queries))
	datasets[n] = d
	return d
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// row is one library's results at one size.
type row struct {
	insertsPerSec float64
	graphMiB      float64
	recall, msPer []float64 // by efs
}

func BenchmarkANN(b *testing.B) {
	// 100k takes 4-6 minutes on 2 cores, lore's build being most of
	// it (coder/hnsw v0.6.1 builds in 40-65 s); -bench ANN/10k runs the small one.
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			d := data(n)
			rows := map[string]row{}
			for _, lib := range libraries {
				b.Run(lib.name, func(b *testing.B) {
					var r row
					for range b.N {
						r = measure(lib, d)
					}
					b.ReportMetric(r.insertsPerSec, "inserts/s")
					b.ReportMetric(r.graphMiB, "graph-MiB")
					for i, ef := range efs {
						b.ReportMetric(r.recall[i], fmt.Sprintf("recall@10-ef%d", ef))
						b.ReportMetric(r.msPer[i], fmt.Sprintf("ms/query-ef%d", ef))
						b.ReportMetric(d.exactMs/r.msPer[i], fmt.Sprintf("x-exact-ef%d", ef))
					}
					b.ReportMetric(d.exactMs, "exact-ms/query")
					rows[lib.name] = r
				})
			}
			printTable(n, d, rows)
		})
	}
}

// measure builds lib's index over d's vectors, one insert at a time, then
// runs every query at every search breadth.
func measure(lib library, d *dataset) row {
	before := heapMiB()
	idx := lib.new(dim)
	start := time.Now()
	for i, v := range d.vecs {
		idx.add(int64(i), v)
	}
	r := row{insertsPerSec: float64(len(d.vecs)) / time.Since(start).Seconds()}
	// The vectors are shared and not copied by any library here, so the
	// growth is the graph's own structure.
	r.graphMiB = heapMiB() - before
	for _, q := range d.queries[:20] { // warm up
		idx.search(q, k, efs[0])
	}
	for _, ef := range efs {
		var found int
		start := time.Now()
		res := make([][]int64, len(d.queries))
		for i, q := range d.queries {
			res[i] = idx.search(q, k, ef)
		}
		r.msPer = append(r.msPer, ms(time.Since(start))/float64(len(d.queries)))
		for i := range res {
			found += overlap(res[i], d.truth[i])
		}
		r.recall = append(r.recall, float64(found)/float64(k*len(d.queries)))
	}
	runtime.KeepAlive(idx)
	return r
}

// overlap counts the keys of got found in truth (duplicates once).
func overlap(got, truth []int64) int {
	n := 0
	for i, g := range got {
		if slices.Contains(truth, g) && !slices.Contains(got[:i], g) {
			n++
		}
	}
	return n
}

func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

func printTable(n int, d *dataset, rows map[string]row) {
	fmt.Printf("    %d vectors, %d-d, M=%d, efConstruction=%d, %d queries; exact search %.2f ms/query\n",
		n, dim, m, efConstruction, len(d.queries), d.exactMs)
	fmt.Printf("    %-22s %10s %9s", "library", "inserts/s", "graph MiB")
	for _, ef := range efs {
		fmt.Printf(" | ef%-3d recall  ms/q  x-exact", ef)
	}
	fmt.Println()
	for _, lib := range libraries {
		r, ok := rows[lib.name]
		if !ok {
			continue
		}
		fmt.Printf("    %-22s %10.0f %9.1f", lib.name, r.insertsPerSec, r.graphMiB)
		for i := range efs {
			fmt.Printf(" |       %5.3f %5.2f %7.1f", r.recall[i], r.msPer[i], d.exactMs/r.msPer[i])
		}
		fmt.Println()
	}
}
