package hnsw

import (
	"bytes"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	coder "github.com/coder/hnsw"

	"github.com/lore-cli/lore/internal/benchdata"
)

// coderGraph adapts github.com/coder/hnsw. Its Add, Search and Delete are
// called through interfaces asserted at run time, because v0.6.1 returns no
// errors and later code may: so that this file compiles unchanged against
// whichever version bench/go.mod requires.
type coderGraph struct {
	g *coder.Graph[int64]
}

func newCoder(int) ann {
	g := coder.NewGraph[int64]()
	g.M = m
	g.Ml = 0.25 // the library's default: each layer a quarter of the one below
	g.Distance = coder.CosineDistance
	g.Rng = rand.New(rand.NewSource(1))
	// coder/hnsw has no efConstruction: inserts search with EfSearch, so it
	// is efConstruction until the build is done; search sets it per query.
	g.EfSearch = efConstruction
	return &coderGraph{g}
}

func (c *coderGraph) add(key int64, v []float32) {
	n := coder.MakeNode(key, v)
	switch g := any(c.g).(type) {
	case interface{ Add(...coder.Node[int64]) }:
		g.Add(n)
	case interface {
		Add(...coder.Node[int64]) error
	}:
		if err := g.Add(n); err != nil {
			panic(err)
		}
	default:
		panic("coder/hnsw: unknown Add signature; update coderGraph.add")
	}
}

func (c *coderGraph) search(q []float32, k, ef int) []int64 {
	c.g.EfSearch = ef
	var nodes []coder.Node[int64]
	switch g := any(c.g).(type) {
	case interface {
		Search([]float32, int) []coder.Node[int64]
	}:
		nodes = g.Search(q, k)
	case interface {
		Search([]float32, int) ([]coder.Node[int64], error)
	}:
		var err error
		if nodes, err = g.Search(q, k); err != nil {
			panic(err)
		}
	default:
		panic("coder/hnsw: unknown Search signature; update coderGraph.search")
	}
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		out[i] = n.Key
	}
	return out
}

func (c *coderGraph) delete(key int64) {
	switch g := any(c.g).(type) {
	case interface{ Delete(int64) bool }:
		g.Delete(key)
	case interface{ Delete(int64) }:
		g.Delete(key)
	case interface{ Delete(int64) error }:
		g.Delete(key)
	default:
		panic("coder/hnsw: unknown Delete signature; update coderGraph.delete")
	}
}

// coderVersion is the version of github.com/coder/hnsw in this build, as
// the go command resolves it (a test binary carries no module versions).
func coderVersion() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{with .Replace}}{{.Path}}@{{.Version}}{{else}}{{.Version}}{{end}}", "github.com/coder/hnsw").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "unknown"
}

// TestCoderDeleteAfterImport checks the failure that made lore drop
// coder/hnsw: a graph that has had deletes is exported and imported, then
// searched, or deleted from again. A graph without deletes before the
// export is the control. It reports rather than fails: the outcome is a
// fact about the coder/hnsw version in go.mod, not about lore.
func TestCoderDeleteAfterImport(t *testing.T) {
	const n, trials = 2000, 5
	space := benchdata.NewSpace(dim, 50)
	queries := space.Queries(50)
	for _, deleteFirst := range []bool{true, false} {
		panicked := map[string]int{}
		var first []string
		for trial := range trials {
			c := newCoder(dim).(*coderGraph)
			c.g.Rng = rand.New(rand.NewSource(int64(trial)))
			for i := range n {
				c.add(int64(i), space.Vec(uint64(i)))
			}
			if deleteFirst {
				for i := 0; i < n; i += 10 { // a tenth
					c.delete(int64(i))
				}
			}
			var buf bytes.Buffer
			if err := c.g.Export(&buf); err != nil {
				t.Fatalf("export: %v", err)
			}
			ops := []struct {
				name string
				f    func(*coderGraph)
			}{
				{"search", func(g *coderGraph) {
					for _, q := range queries {
						g.search(q.Vec, k, 64)
					}
				}},
				{"delete", func(g *coderGraph) {
					for i := 5; i < n; i += 10 { // another tenth
						g.delete(int64(i))
					}
				}},
			}
			for _, op := range ops {
				imp := &coderGraph{coder.NewGraph[int64]()}
				if err := imp.g.Import(bytes.NewReader(buf.Bytes())); err != nil {
					t.Fatalf("import: %v", err)
				}
				if err := try(func() { op.f(imp) }); err != nil {
					panicked[op.name]++
					if len(first) < 2 {
						first = append(first, fmt.Sprintf("%s: %v", op.name, err))
					}
				}
			}
		}
		t.Logf("coder/hnsw %s, %d 768-d vectors, deletes before Export: %v; after Import, search panicked in %d of %d trials, delete in %d of %d",
			coderVersion(), n, deleteFirst, panicked["search"], trials, panicked["delete"], trials)
		for _, f := range first {
			t.Log("  " + f)
		}
	}
}

// try runs f and returns what it panicked with, if anything.
func try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f()
	return nil
}
