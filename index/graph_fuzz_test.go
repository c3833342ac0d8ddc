package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"lore/internal/benchdata"
)

const fuzzDim = 4

// smallGraph is a real graph as lore builds it: 24 vectors, two removed
// (small, so that the fuzzer minimises fast).
func smallGraph() *vectorGraph {
	space := benchdata.NewSpace(fuzzDim, 5)
	vg := newVectorGraph(fuzzDim)
	for i := range 24 {
		vg.add(int64(i+1), space.Vec(uint64(i)))
	}
	vg.remove(7)
	vg.remove(20)
	return vg
}

// graphBytes is vg's graph file.
func graphBytes(t testing.TB, vg *vectorGraph) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := vg.writeTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seal appends the checksum a graph file ends with.
func seal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, graphCRC))
}

// FuzzGraphFile feeds the graph file reader damaged files. It must refuse
// them with errGraphFormat, never panic nor allocate beyond what the file
// could hold; a graph it accepts must be safe to search, extend, save and
// load again. The input is a file without its checksum, which the target
// appends (so that the fuzzer gets past it to the structure), and the
// input as it is (so that the checksum is exercised too).
func FuzzGraphFile(f *testing.F) {
	good := graphBytes(f, smallGraph())
	f.Add(good[:len(good)-4])
	one := newVectorGraph(fuzzDim)
	one.add(9, []float32{1, 0, 0, 0})
	f.Add(graphBytes(f, one)[:len(graphBytes(f, one))-4])
	empty := graphBytes(f, newVectorGraph(fuzzDim))
	f.Add(empty[:len(empty)-4])
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, data := range [][]byte{seal(body), body} {
			vg, err := readGraph(bytes.NewReader(data), int64(len(data)), fuzzDim)
			if err != nil {
				if !errors.Is(err, errGraphFormat) && !errors.Is(err, errGraphVersion) {
					t.Fatalf("error is neither damage nor another version: %v", err)
				}
				continue
			}
			exerciseGraph(t, vg)
		}
	})
}

// exerciseGraph searches a loaded graph, adds to it, saves and reloads it.
func exerciseGraph(t *testing.T, vg *vectorGraph) {
	space := benchdata.NewSpace(fuzzDim, 5)
	for _, q := range space.Queries(3) {
		if _, _, err := vg.search(q.Vec, 5, 16); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if err := vg.add(int64(1_000_000+i), space.Vec(uint64(100+i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := vg.search(space.Queries(1)[0].Vec, 5, 16); err != nil {
		t.Fatal(err)
	}
	b := graphBytes(t, vg)
	back, err := readGraph(bytes.NewReader(b), int64(len(b)), fuzzDim)
	if err != nil {
		t.Fatalf("a graph lore saved does not load: %v", err)
	}
	if back.Len() != vg.Len() {
		t.Fatalf("saved %d live vectors, loaded %d", vg.Len(), back.Len())
	}
}
