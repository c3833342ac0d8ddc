package hnsw

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"lore/internal/benchdata"
)

func TestZZProf(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZN"))
	if n == 0 {
		t.Skip()
	}
	efc, _ := strconv.Atoi(os.Getenv("ZZEFC"))
	space := benchdata.NewSpace(768, 500)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = space.Vec(uint64(i))
	}
	g := New(768, Options{M: 16, EfConstruction: efc})
	start := time.Now()
	for i, v := range vecs {
		g.Add(int64(i+1), v)
	}
	fmt.Printf("%.0f inserts/s\n", float64(n)/time.Since(start).Seconds())
	qs := space.Queries(200)
	m := map[int64][]float32{}
	for i, v := range vecs {
		m[int64(i+1)] = v
	}
	exact := make([][]int64, len(qs))
	for i, q := range qs {
		exact[i] = exactTop(q.Vec, m, 10)
	}
	for _, ef := range []int{32, 64, 128} {
		found := 0
		start := time.Now()
		for i, q := range qs {
			hs, _ := g.Search(q.Vec, 10, ef)
			for _, h := range hs {
				if slices.Contains(exact[i], h.Key) {
					found++
				}
			}
		}
		fmt.Printf("ef=%d recall %.3f %.3f ms\n", ef, float64(found)/2000, time.Since(start).Seconds()*1000/200)
	}
}
