package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"sync"

	"github.com/viterin/vek/vek32"
)

// hnsw is a Hierarchical Navigable Small World graph (Malkov & Yashunin,
// 2016) over unit vectors with dot-product distance. lore keeps its own
// rather than github.com/coder/hnsw: that library's layer search stops at
// the first expansion that does not improve its best result, so its
// recall@10 on structured 768-d data stayed near 0.08 for any search
// breadth (BENCHMARKS.md), and its Delete corrupts the graph across
// Export/Import. This one follows the paper: beam search with ef
// candidates, the neighbour-selection heuristic, 2M links on layer 0.
//
// Nodes are dense internal ids.
// Not safe for concurrent writes; searches may run concurrently with each
// other (the caller serialises writes against reads).
type hnsw struct {
	dim     int
	m       int // links per node on upper layers; 2m on layer 0
	efCons  int
	ml      float64
	rng     *rand.Rand
	vecs    [][]float32  // node i's vector; not copied: add takes ownership
	keys    []int64      // external key of node i
	levels  [][][]uint32 // levels[i][l] are node i's neighbours on layer l
	entry   int32        // -1 when empty
	visited sync.Pool
}

func newHNSW(dim, m, efConstruction int) *hnsw {
	return &hnsw{dim: dim, m: m, efCons: efConstruction, ml: 1 / math.Log(float64(m)), rng: rand.New(rand.NewSource(1)), entry: -1}
}

func (h *hnsw) len() int { return len(h.keys) }

func (h *hnsw) vec(i uint32) []float32 { return h.vecs[i] }

func (h *hnsw) dist(q []float32, i uint32) float32 { return 1 - vek32.Dot(q, h.vec(i)) }

func (h *hnsw) maxLinks(layer int) int {
	if layer == 0 {
		return 2 * h.m
	}
	return h.m
}

// visitSet marks nodes seen during one search; reusing it across searches
// through a pool avoids allocating a map per query.
type visitSet struct {
	mark []uint32
	gen  uint32
}

func (h *hnsw) getVisited() *visitSet {
	v, _ := h.visited.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	if len(v.mark) < h.len() {
		v.mark = make([]uint32, h.len()+h.len()/2+16)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 { // wrapped: clear
		clear(v.mark)
		v.gen = 1
	}
	return v
}

// cand is a node and its distance to the query.
type cand struct {
	id uint32
	d  float32
}

// minHeap and maxHeap of candidates, hand-rolled: container/heap's
// interface calls cost more than the distance computations here.
type candHeap struct {
	c   []cand
	max bool
}

func (q *candHeap) less(i, j int) bool {
	if q.max {
		return q.c[i].d > q.c[j].d
	}
	return q.c[i].d < q.c[j].d
}

func (q *candHeap) push(x cand) {
	q.c = append(q.c, x)
	for i := len(q.c) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.c[i], q.c[p] = q.c[p], q.c[i]
		i = p
	}
}

func (q *candHeap) pop() cand {
	top := q.c[0]
	n := len(q.c) - 1
	q.c[0] = q.c[n]
	q.c = q.c[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.c[i], q.c[m] = q.c[m], q.c[i]
		i = m
	}
	return top
}

// searchLayer is the paper's SEARCH-LAYER: a beam search from the entry
// points keeping the ef closest nodes found.
func (h *hnsw) searchLayer(q []float32, eps []cand, ef, layer int) []cand {
	vis := h.getVisited()
	defer h.visited.Put(vis)
	cands := candHeap{c: make([]cand, 0, ef*2)}
	res := candHeap{c: make([]cand, 0, ef+1), max: true}
	for _, e := range eps {
		vis.mark[e.id] = vis.gen
		cands.push(e)
		res.push(e)
		if len(res.c) > ef {
			res.pop()
		}
	}
	for len(cands.c) > 0 {
		c := cands.pop()
		if len(res.c) >= ef && c.d > res.c[0].d {
			break
		}
		for _, n := range h.levels[c.id][layer] {
			if vis.mark[n] == vis.gen {
				continue
			}
			vis.mark[n] = vis.gen
			d := h.dist(q, n)
			if len(res.c) < ef || d < res.c[0].d {
				cands.push(cand{n, d})
				res.push(cand{n, d})
				if len(res.c) > ef {
					res.pop()
				}
			}
		}
	}
	return res.c
}

// selectNeighbors is the paper's heuristic (algorithm 4): take candidates
// nearest first, keeping one only if it is nearer to the new node than to
// every neighbour kept so far. It spreads links across directions, which
// is what keeps clustered data navigable.
func (h *hnsw) selectNeighbors(cands []cand, m int) []uint32 {
	sortCands(cands)
	out := make([]uint32, 0, m)
	var pruned []uint32
	for _, c := range cands {
		if len(out) == m {
			break
		}
		good := true
		for _, o := range out {
			if 1-vek32.Dot(h.vec(c.id), h.vec(o)) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c.id)
		} else {
			pruned = append(pruned, c.id)
		}
	}
	// Fill up with the nearest pruned ones (keepPrunedConnections).
	for _, p := range pruned {
		if len(out) == m {
			break
		}
		out = append(out, p)
	}
	return out
}

func sortCands(c []cand) {
	// insertion sort: candidate lists are at most a few hundred long
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].d < c[j-1].d; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// add inserts a vector (already unit length) under key.
func (h *hnsw) add(key int64, v []float32) {
	id := uint32(len(h.keys))
	h.keys = append(h.keys, key)
	h.vecs = append(h.vecs, v)
	level := int(-math.Log(1-h.rng.Float64()) * h.ml)
	h.levels = append(h.levels, make([][]uint32, level+1))
	if h.entry < 0 {
		h.entry = int32(id)
		return
	}
	ep := []cand{{uint32(h.entry), h.dist(v, uint32(h.entry))}}
	top := len(h.levels[h.entry]) - 1
	for l := top; l > level; l-- {
		ep = h.greedy(v, ep, l)
	}
	for l := min(top, level); l >= 0; l-- {
		w := h.searchLayer(v, ep, h.efCons, l)
		ep = append([]cand(nil), w...)
		neigh := h.selectNeighbors(append([]cand(nil), w...), h.m)
		h.levels[id][l] = neigh
		for _, n := range neigh {
			links := append(h.levels[n][l], id)
			if len(links) > h.maxLinks(l) {
				links = h.shrink(n, links, h.maxLinks(l))
			}
			h.levels[n][l] = links
		}
	}
	if level > top {
		h.entry = int32(id)
	}
}

// shrink cuts an overflowing link list back to m with the same heuristic
// that picks a new node's links. Keeping just the m nearest instead built
// the graph 30% faster on 20k vectors but cost recall at 100k (0.949
// against 0.980 at efSearch 128), for no gain in whole-build speed.
func (h *hnsw) shrink(n uint32, links []uint32, m int) []uint32 {
	cs := make([]cand, len(links))
	for i, x := range links {
		cs[i] = cand{x, h.dist(h.vec(n), x)}
	}
	return h.selectNeighbors(cs, m)
}

// greedy walks layer l towards q from ep, one closest node at a time.
func (h *hnsw) greedy(q []float32, ep []cand, l int) []cand {
	best := ep[0]
	for _, e := range ep[1:] {
		if e.d < best.d {
			best = e
		}
	}
	for changed := true; changed; {
		changed = false
		for _, n := range h.levels[best.id][l] {
			if d := h.dist(q, n); d < best.d {
				best, changed = cand{n, d}, true
			}
		}
	}
	return []cand{best}
}

// search returns up to ef nearest nodes to q, nearest first.
func (h *hnsw) search(q []float32, ef int) []cand {
	if h.entry < 0 {
		return nil
	}
	ep := []cand{{uint32(h.entry), h.dist(q, uint32(h.entry))}}
	for l := len(h.levels[h.entry]) - 1; l > 0; l-- {
		ep = h.greedy(q, ep, l)
	}
	res := h.searchLayer(q, ep, ef, 0)
	sortCands(res)
	return res
}

const hnswMagic = "LOREHNSW2"

// writeTo serialises the graph: parameters, keys, vectors, then each
// node's links per layer.
func (h *hnsw) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	hdr := []any{[]byte(hnswMagic), uint32(h.dim), uint32(h.m), uint32(h.efCons), int32(h.entry), uint64(len(h.keys))}
	for _, x := range hdr {
		if err := binary.Write(bw, binary.LittleEndian, x); err != nil {
			return err
		}
	}
	if err := binary.Write(bw, binary.LittleEndian, h.keys); err != nil {
		return err
	}
	for _, v := range h.vecs {
		if err := binary.Write(bw, binary.LittleEndian, v); err != nil {
			return err
		}
	}
	for _, lv := range h.levels {
		if err := binary.Write(bw, binary.LittleEndian, uint8(len(lv))); err != nil {
			return err
		}
		for _, links := range lv {
			if err := binary.Write(bw, binary.LittleEndian, uint16(len(links))); err != nil {
				return err
			}
			if err := binary.Write(bw, binary.LittleEndian, links); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// errGraphFormat is a graph file that is damaged: lore rebuilds the graph
// from the vectors in index.db.
var errGraphFormat = errors.New("damaged graph file")

// readFloat32s fills dst with little-endian floats from r, len(buf) bytes
// at a time.
func readFloat32s(r io.Reader, dst []float32, buf []byte) error {
	for len(dst) > 0 {
		k := min(len(dst), len(buf)/4)
		if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
			return err
		}
		for i := range k {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		dst = dst[k:]
	}
	return nil
}

// readHNSW loads a graph written by writeTo from the next size bytes of
// br, checking every link.
func readHNSW(br *bufio.Reader, size int64) (*hnsw, error) {
	magic := make([]byte, len(hnswMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != hnswMagic {
		return nil, errGraphFormat
	}
	var dim, m, efc uint32
	var entry int32
	var n uint64
	for _, x := range []any{&dim, &m, &efc, &entry, &n} {
		if err := binary.Read(br, binary.LittleEndian, x); err != nil {
			return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
		}
	}
	// m below 2 makes the level multiplier infinite; efConstruction is a
	// search breadth (0 finds nothing, 2^32 allocates 64 GiB).
	if dim == 0 || dim > 1<<16 || m < 2 || m > 1024 || efc == 0 || efc > 1<<16 || n > 1<<31 || int64(entry) >= int64(n) {
		return nil, errGraphFormat
	}
	// Each node takes its key, its vector and a level count at least.
	if header := int64(len(hnswMagic)) + 24; n > 0 && (size-header)/int64(n) < 8+4*int64(dim)+1 {
		return nil, fmt.Errorf("%w: %d nodes do not fit in %d bytes", errGraphFormat, n, size)
	}
	h := newHNSW(int(dim), int(m), int(efc))
	h.entry = entry
	h.keys = make([]int64, n)
	if err := binary.Read(br, binary.LittleEndian, h.keys); err != nil {
		return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
	}
	// binary.Read would first read the whole slab into a byte slice of its
	// own, doubling the peak memory of every command that opens the graph
	// (a 100k-chunk, 768-d index: 300 MiB more); read through a small buffer.
	slab := make([]float32, n*uint64(dim)) // one allocation, in node order
	buf := make([]byte, 64<<10)
	if err := readFloat32s(br, slab, buf); err != nil {
		return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
	}
	h.vecs = make([][]float32, n)
	for i := range h.vecs {
		h.vecs[i] = slab[i*int(dim) : (i+1)*int(dim) : (i+1)*int(dim)]
	}
	h.levels = make([][][]uint32, n)
	for i := range h.levels {
		var nl uint8
		if err := binary.Read(br, binary.LittleEndian, &nl); err != nil {
			return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
		}
		if nl == 0 {
			return nil, fmt.Errorf("%w: node %d is on no layer", errGraphFormat, i)
		}
		h.levels[i] = make([][]uint32, nl)
		for l := range h.levels[i] {
			var c uint16
			if err := binary.Read(br, binary.LittleEndian, &c); err != nil {
				return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
			}
			if int(c) > 2*int(m) || 4*int(c) > len(buf) {
				return nil, fmt.Errorf("%w: node %d has %d links, more than %d", errGraphFormat, i, c, 2*m)
			}
			links := make([]uint32, c)
			if _, err := io.ReadFull(br, buf[:4*int(c)]); err != nil {
				return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
			}
			for j := range links {
				links[j] = binary.LittleEndian.Uint32(buf[4*j:])
			}
			for _, x := range links {
				if uint64(x) >= n {
					return nil, fmt.Errorf("%w: link to node %d of %d", errGraphFormat, x, n)
				}
			}
			h.levels[i][l] = links
		}
	}
	if n > 0 && entry < 0 {
		return nil, errGraphFormat
	}
	// A search reaches a node on layer l through a link on layer l: the
	// node must be on it.
	for i, lv := range h.levels {
		for l, links := range lv {
			for _, x := range links {
				if len(h.levels[x]) <= l {
					return nil, fmt.Errorf("%w: node %d links node %d on layer %d, which it is not on", errGraphFormat, i, x, l)
				}
			}
		}
	}
	return h, nil
}
