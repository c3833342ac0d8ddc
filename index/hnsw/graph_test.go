package hnsw

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/lore-cli/lore/internal/benchdata"
)

func exactTop(q []float32, vecs map[int64][]float32, k int) []int64 {
	type sc struct {
		key int64
		d   float32
	}
	var all []sc
	for key, v := range vecs {
		var dot float32
		for i := range v {
			dot += q[i] * v[i]
		}
		all = append(all, sc{key, 1 - dot})
	}
	slices.SortFunc(all, func(a, b sc) int { return cmp.Compare(a.d, b.d) })
	var out []int64
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.key)
	}
	return out
}

func recall(t *testing.T, g *Graph, space *benchdata.Space, vecs map[int64][]float32, ef int) float64 {
	t.Helper()
	found, total := 0, 0
	for _, q := range space.Queries(50) {
		want := exactTop(q.Vec, vecs, 10)
		hits, err := g.Search(q.Vec, 10, ef)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Dist < hits[i-1].Dist {
				t.Fatal("results not nearest first")
			}
		}
		for _, h := range hits {
			if slices.Contains(want, h.Key) {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

func build(t *testing.T, space *benchdata.Space, n, workers int) (*Graph, map[int64][]float32) {
	g := New(space.Dim, Options{M: 16, EfConstruction: 100})
	g.exactBelow = 0 // walk the graph, however small
	vecs := map[int64][]float32{}
	for i := range n {
		vecs[int64(i+1)] = space.Vec(uint64(i))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := g.Add(int64(i+1), vecs[int64(i+1)]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return g, vecs
}

// The graph finds the true nearest neighbours, built by one goroutine or
// by several at once, and more of them with a wider search.
func TestRecall(t *testing.T) {
	space := benchdata.NewSpace(64, 50)
	for _, workers := range []int{1, 4} {
		g, vecs := build(t, space, 3000, workers)
		if g.Len() != 3000 {
			t.Fatalf("%d keys", g.Len())
		}
		low, high := recall(t, g, space, vecs, 10), recall(t, g, space, vecs, 128)
		if high < 0.95 || high < low {
			t.Fatalf("%d workers: recall@10 %.3f at ef=10, %.3f at ef=128", workers, low, high)
		}
	}
}

// A saved graph opens to the same answers, keeps its tombstones, and takes
// inserts after opening.
func TestSaveOpenAdd(t *testing.T) {
	space := benchdata.NewSpace(64, 50)
	g, vecs := build(t, space, 5000, 2) // more than one block
	q := space.Queries(1)[0].Vec
	top, _ := g.Search(q, 5, 64)
	g.Delete(top[0].Key)
	delete(vecs, top[0].Key)
	path := filepath.Join(t.TempDir(), "g")
	save(t, g, path, "v1")
	back, meta, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	back.exactBelow = 0
	if string(meta) != "v1" || back.Len() != g.Len() || back.Tombstones() != 1 {
		t.Fatalf("meta %q, %d keys, %d tombstones", meta, back.Len(), back.Tombstones())
	}
	if err := back.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, q := range space.Queries(20) {
		a, _ := g.Search(q.Vec, 10, 64)
		b, _ := back.Search(q.Vec, 10, 64)
		if !slices.Equal(a, b) {
			t.Fatalf("opened graph answers %v, saved one %v", b, a)
		}
		for _, h := range b {
			if h.Key == top[0].Key {
				t.Fatal("a deleted key was returned")
			}
		}
	}
	for i := 5000; i < 6000; i++ {
		v := space.Vec(uint64(i))
		vecs[int64(i+1)] = v
		if err := back.Add(int64(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
	if r := recall(t, back, space, vecs, 128); r < 0.95 {
		t.Fatalf("recall after adding to an opened graph: %.3f", r)
	}
	// The file itself is not written through the mapping.
	again, _, err := Open(path)
	if err != nil || again.Len() != 4999 {
		t.Fatalf("file changed under an opened graph: %v", err)
	}
	again.Close()
	save(t, back, path, "v2")
	third, _, err := Open(path)
	if err != nil || third.Len() != 5999 || third.Verify() != nil {
		t.Fatalf("%v", err)
	}
	third.Close()
}

func save(t *testing.T, g *Graph, path, meta string) {
	t.Helper()
	var b bytes.Buffer
	if err := g.WriteTo(&b, []byte(meta)); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A small graph is searched exhaustively: exact, whatever its links.
func TestSmallGraphIsExact(t *testing.T) {
	space := benchdata.NewSpace(64, 50)
	g := New(64, Options{M: 2, EfConstruction: 1}) // a poor graph
	vecs := map[int64][]float32{}
	for i := range 2000 {
		vecs[int64(i+1)] = space.Vec(uint64(i))
		g.Add(int64(i+1), vecs[int64(i+1)])
	}
	if r := recall(t, g, space, vecs, 16); r != 1 {
		t.Fatalf("recall@10 %.3f over 2,000 vectors", r)
	}
	g.exactBelow = 0
	if r := recall(t, g, space, vecs, 16); r == 1 {
		t.Fatal("the walk of a poor graph is exact too: the test proves nothing")
	}
}

// Damage in the structure is refused on open; damage in a vector is found
// by the search that would return it, and by Verify.
func TestDamage(t *testing.T) {
	space := benchdata.NewSpace(32, 5)
	g, _ := build(t, space, 50, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "g")
	save(t, g, path, "")
	good, _ := os.ReadFile(path)
	flip := func(at int) string {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		p := filepath.Join(dir, "bad")
		os.WriteFile(p, b, 0o644)
		return p
	}
	var hd header
	if _, err := decodeHeader(good, &hd); err != nil {
		t.Fatal(err)
	}
	lay := hd.layout()
	for name, at := range map[string]int{"header": 20, "keys": int(lay.keys) + 3, "levels": int(lay.levels) + 1} {
		if _, _, err := Open(flip(at)); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Layer-0 links and int8 vectors are checked by Verify, not on opening.
	for name, at := range map[string]int{"links": int(lay.links0) + 9, "int8 vector": int(lay.q) + 5} {
		g, _, err := Open(flip(at))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := g.Verify(); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: verify: %v", name, err)
		}
		g.Close()
	}
	if _, _, err := Open(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(flip(0), append([]byte("LOREGRAPH4"), good[10:]...), 0o644)
	if _, _, err := Open(filepath.Join(dir, "bad")); !errors.Is(err, ErrVersion) {
		t.Errorf("older version: %v", err)
	}

	// Every vector damaged: whatever a search returns fails its check.
	b := bytes.Clone(good)
	for i := lay.vecs; i < lay.end; i += 4 {
		b[i+3] ^= 0x01
	}
	os.WriteFile(path, b, 0o644)
	bad, _, err := Open(path)
	if err != nil {
		t.Fatalf("vectors are not checked on open: %v", err)
	}
	defer bad.Close()
	if _, err := bad.Search(space.Queries(1)[0].Vec, 5, 16); !errors.Is(err, ErrDamaged) {
		t.Errorf("search over damaged vectors: %v", err)
	}
	if err := bad.Verify(); !errors.Is(err, ErrDamaged) {
		t.Errorf("verify: %v", err)
	}
}
