package index

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"lore/internal/benchdata"
)

// TestHNSWRecall checks the graph finds true nearest neighbours: on 3,000
// structured vectors recall@10 must be high, and higher with a wider search.
func TestHNSWRecall(t *testing.T) {
	space := benchdata.NewSpace(64, 50)
	vg := newVectorGraph(64)
	var ids []int64
	var vecs [][]float32
	for i := range 3000 {
		v := space.Vec(uint64(i))
		vg.add(int64(i+1), v)
		ids, vecs = append(ids, int64(i+1)), append(vecs, v)
	}
	recall := func(g *vectorGraph, ef int) float64 {
		found := 0
		qs := space.Queries(50)
		for _, q := range qs {
			exact := exactTopK(q.Vec, ids, vecs, 10)
			got, dist, err := g.search(q.Vec, 10, ef)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(dist); i++ {
				if dist[i] < dist[i-1] {
					t.Fatal("results not nearest first")
				}
			}
			for _, id := range got {
				if exact[id] {
					found++
				}
			}
		}
		return float64(found) / float64(10*len(qs))
	}
	low, high := recall(vg, 10), recall(vg, 128)
	if high < 0.95 || high < low {
		t.Fatalf("recall@10: %.3f at ef=10, %.3f at ef=128", low, high)
	}

	// Save and load: the same answers.
	path := filepath.Join(t.TempDir(), "g")
	if err := vg.writeFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := readGraphFile(path, 64)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != 3000 || recall(back, 128) != high {
		t.Fatalf("reloaded graph differs: %d nodes", back.Len())
	}

	// Tombstones never come back in results, and survive a save.
	q := space.Queries(1)[0].Vec
	top, _, _ := back.search(q, 5, 64)
	back.remove(top[0])
	back.writeFile(path)
	again, _ := readGraphFile(path, 64)
	for _, g := range []*vectorGraph{back, again} {
		got, _, _ := g.search(q, 5, 64)
		for _, id := range got {
			if id == top[0] {
				t.Fatal("a removed vector was returned")
			}
		}
		if len(got) != 5 || g.tombstones() != 1 {
			t.Fatalf("%d results, %d tombstones", len(got), g.tombstones())
		}
	}
}

func TestGraphFileDamage(t *testing.T) {
	vg := newVectorGraph(4)
	for i := range 50 {
		vg.add(int64(i), benchdata.NewSpace(4, 3).Vec(uint64(i)))
	}
	path := filepath.Join(t.TempDir(), "g")
	vg.writeFile(path)
	good, _ := os.ReadFile(path)
	for name, data := range map[string][]byte{
		"truncated":  good[:len(good)/2],
		"empty":      nil,
		"bad magic":  append([]byte("XXXX"), good[4:]...),
		"bad link":   corruptLastLink(good),
		"many links": hugeLastLinkCount(good),
		"wrong size": good, // read with another dimension below
		"flipped":    flipByte(good, len(good)/3),
		"old format": append([]byte("LOREGRAPH3"), good[len(graphMagic):]...),
	} {
		os.WriteFile(path, data, 0o644)
		dim := 4
		if name == "wrong size" {
			dim = 8
		}
		if _, err := readGraphFile(path, dim); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, _, err := newVectorGraph(4).search(make([]float32, 3), 1, 1); err == nil {
		t.Error("wrong query dimension accepted")
	}
}

// The helpers below damage a graph file's structure and seal it again
// with a matching checksum, as if lore had written it so: the structure
// checks must catch what the checksum cannot.

// corruptLastLink points the file's last link at a node that does not exist.
func corruptLastLink(b []byte) []byte {
	c := bytes.Clone(b[:len(b)-4])
	copy(c[len(c)-4:], []byte{0xff, 0xff, 0xff, 0x7f})
	return seal(c)
}

// hugeLastLinkCount claims 65535 links for the file's last neighbour list.
func hugeLastLinkCount(b []byte) []byte {
	c := bytes.Clone(b[:len(b)-4])
	for k := 1; 4*k+2 <= len(c); k++ {
		if at := len(c) - 4*k - 2; int(binary.LittleEndian.Uint16(c[at:])) == k {
			binary.LittleEndian.PutUint16(c[at:], 0xffff)
			return seal(append(c, make([]byte, 4*0xffff)...))
		}
	}
	panic("no link list found")
}

// flipByte flips the bits of one byte, checksum left as it was.
func flipByte(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 0xff
	return c
}

func exactTopK(q []float32, ids []int64, vecs [][]float32, k int) map[int64]bool {
	type sc struct {
		id int64
		d  float32
	}
	var all []sc
	for i, v := range vecs {
		all = append(all, sc{ids[i], dotDistance(q, v)})
	}
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].d < all[j-1].d; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	out := map[int64]bool{}
	for _, s := range all[:k] {
		out[s.id] = true
	}
	return out
}
