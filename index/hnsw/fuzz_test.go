package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/lore-cli/lore/internal/benchdata"
)

const fuzzDim = 4

// smallGraph is a graph as lore builds it: 24 vectors, two deleted (small,
// so that the fuzzer minimises fast).
func smallGraph(t testing.TB) []byte {
	space := benchdata.NewSpace(fuzzDim, 5)
	g := New(fuzzDim, Options{M: 4, EfConstruction: 16})
	for i := range 24 {
		g.Add(int64(i+1), space.Vec(uint64(i)))
	}
	g.Delete(7)
	g.Delete(20)
	return fileBytes(t, g, "v")
}

func fileBytes(t testing.TB, g *Graph, meta string) []byte {
	var b bytes.Buffer
	if err := g.WriteTo(&b, []byte(meta)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seal sets the header's checksum, so that the fuzzer gets past it to the
// structure.
func seal(data []byte) []byte {
	data = bytes.Clone(data)
	if len(data) < headerSize {
		return data
	}
	var hd header
	decodeHeader(data, &hd)
	lay := hd.layout()
	if lay.links0 < headerSize || lay.upper < lay.links0 || lay.q < lay.upper || lay.q > int64(len(data)) {
		return data
	}
	binary.LittleEndian.PutUint32(data[headerSize-8:], structureCRC(data[:headerSize], data[headerSize:lay.q], lay))
	return data
}

// FuzzGraphFile feeds the file reader damaged files, sealed and as they
// are. It must refuse them with ErrDamaged or ErrVersion, never panic nor
// allocate beyond what the file could hold; a graph it accepts must be safe
// to search, extend, save and open again.
func FuzzGraphFile(f *testing.F) {
	f.Add(smallGraph(f))
	one := New(fuzzDim, Options{M: 4, EfConstruction: 16})
	one.Add(9, []float32{1, 0, 0, 0})
	f.Add(fileBytes(f, one, ""))
	f.Add(fileBytes(f, New(fuzzDim, Options{}), ""))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range [][]byte{seal(data), data} {
			if len(d) < headerSize {
				continue
			}
			g, _, err := attach(d)
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("error is not damage: %v", err)
				}
				continue
			}
			exercise(t, g)
		}
	})
}

func exercise(t *testing.T, g *Graph) {
	space := benchdata.NewSpace(g.Dim(), 5)
	for _, q := range space.Queries(3) {
		g.Search(q.Vec, 5, 16) // damaged vectors may say so; never panic
	}
	for i := range 5 {
		if err := g.Add(int64(1_000_000+i), space.Vec(uint64(100+i))); errors.Is(err, ErrDamaged) {
			return // a damaged vector found on the way: the caller rebuilds
		} else if err != nil {
			t.Fatal(err)
		}
	}
	g.Search(space.Queries(1)[0].Vec, 5, 16)
	b := fileBytes(t, g, "")
	back, _, err := attach(b)
	if err != nil {
		t.Fatalf("a graph lore saved does not load: %v", err)
	}
	if back.Len() != g.Len() {
		t.Fatalf("saved %d live vectors, loaded %d", g.Len(), back.Len())
	}
}
