// Package hnsw is lore's approximate nearest-neighbour index: a
// Hierarchical Navigable Small World graph (Malkov & Yashunin, 2016) over
// unit vectors with dot-product distance, and its file.
//
// It follows the paper: beam search with ef candidates, the
// neighbour-selection heuristic, 2M links on layer 0 (a list may hold 8
// more between two cuts). lore keeps its own rather than
// github.com/coder/hnsw, whose v0.6.1 search found under a tenth of the
// true neighbours (docs/ARCHITECTURE.md).
//
// These choices make it fit a laptop:
//   - The graph is walked with int8 copies of the vectors, a quarter of the
//     bytes of float32: walking is bound by fetching vectors from memory.
//     The candidates a search ends with are rescored with the float32
//     vectors, so the order a caller sees is exact.
//   - Inserts run concurrently, each node's links behind a lock of its own
//     (hnswlib's scheme), so a build uses every core.
//   - A saved graph is memory-mapped, not read: opening one costs a
//     checksum over its links, and a search touches only the pages of the
//     vectors it visits.
//   - Up to 4,096 nodes a search scans every vector instead of walking.
package hnsw

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"
)

// Options are the graph's build parameters.
type Options struct {
	M              int // links per node on upper layers; 2M on layer 0
	EfConstruction int // search breadth while inserting
}

// Hit is a search result: a key and its cosine distance (1 - dot product).
type Hit struct {
	Key  int64
	Dist float32
}

// ErrDamaged is a graph file, or a vector read from one, that fails its
// checks. The graph is derived data: rebuild it from the stored vectors.
var ErrDamaged = errors.New("damaged graph file")

const (
	blockShift = 12
	blockSize  = 1 << blockShift
	maxBlocks  = 1 << 16 // 268M nodes
	maxLevel   = 32
	lockStripe = 1 << 12

	// exactBelow is the graph size up to which a search scans every
	// vector: 4,096 int8 distances take about as long as a walk with ef 128
	// (BENCHMARKS.md), and a small corpus then gets exact answers.
	exactBelow = 4096

	// linkSlack lets a layer-0 link list grow 8 past 2M before the
	// heuristic cuts it back to 2M: the cut is most of an insert's cost when
	// it runs on every overflow. At 20k vectors it built 1.55x faster, with
	// recall@10 no lower (BENCHMARKS.md).
	linkSlack = 8
)

// castagnoli is the CRC of the file and of each vector in it (hardware
// accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// block holds blockSize consecutive nodes. A graph opened from a file
// points its blocks into the mapping; blocks made by inserts are heap.
type block struct {
	keys   []int64
	levels []uint8     // the node's top layer
	scales []float32   // int8 vector i times scales[i] approximates vector i
	q      []int8      // blockSize*qdim quantised vectors
	vecs   []float32   // a file's blocks: blockSize*dim float32 vectors
	vrefs  [][]float32 // heap blocks: the vectors Add was given
	vcrc   []uint32    // CRC of each vector as saved; nil in heap blocks
	links0 []uint32    // per node: a count, then 2M slots (and slack)
	upper  [][]uint32  // heap blocks: per node above layer 0, per layer a count, then M slots
	upOff  []uint32    // a file's blocks: where each node's upper lists start in Graph.upper
	dead   []uint32    // tombstone bits, accessed atomically
}

// Graph is an HNSW graph. Add, Delete and Search are safe for concurrent
// use.
type Graph struct {
	dim, qdim, m, efCons int
	stride               int // uint32s per node in links0
	exactBelow           int // scan rather than walk up to this many nodes
	ml                   float64

	// rw is held shared by Add and Search, exclusively only to turn an
	// opened (read-only) graph into one that takes inserts.
	rw      sync.RWMutex
	frozen  bool // opened from a file and not added to: no locks needed
	blocks  []*block
	n       atomic.Uint32 // nodes created, dead ones included
	live    atomic.Int64
	locks   []sync.Mutex // striped per-node locks over links, once not frozen
	allocMu sync.Mutex   // node creation, byKey, rng
	byKey   map[int64]uint32
	rng     *rand.Rand

	entryMu sync.Mutex
	entry   int32 // -1 when empty
	top     int

	visited sync.Pool
	unmap   func() error // releases the file mapping; nil for heap graphs

	linksCRC, qCRC uint32   // of an opened file, for Verify
	upper          []uint32 // an opened file's upper lists
}

// New returns an empty graph of dim-dimensional vectors.
func New(dim int, opt Options) *Graph {
	if opt.M < 2 {
		opt.M = 16
	}
	if opt.EfConstruction < 1 {
		opt.EfConstruction = 100
	}
	return &Graph{
		dim: dim, qdim: (dim + 31) &^ 31, m: opt.M, efCons: opt.EfConstruction, stride: 1 + 2*opt.M + linkSlack,
		ml: 1 / math.Log(float64(opt.M)), blocks: make([]*block, maxBlocks), locks: make([]sync.Mutex, lockStripe),
		byKey: map[int64]uint32{}, rng: rand.New(rand.NewSource(1)), entry: -1, exactBelow: exactBelow,
	}
}

// Dim is the vectors' dimension.
func (h *Graph) Dim() int { return h.dim }

// Len is the number of live keys.
func (h *Graph) Len() int { return int(h.live.Load()) }

// Tombstones counts deleted nodes still in the graph: they route searches
// but are never returned. Rebuild the graph when they are many.
func (h *Graph) Tombstones() int { return int(h.n.Load()) - h.Len() }

func (h *Graph) node(i uint32) (*block, int) {
	return h.blocks[i>>blockShift], int(i & (blockSize - 1))
}

func (h *Graph) isDead(i uint32) bool {
	b, j := h.node(i)
	return atomic.LoadUint32(&b.dead[j>>5])&(1<<(j&31)) != 0
}

func (h *Graph) setDead(i uint32) {
	b, j := h.node(i)
	atomic.OrUint32(&b.dead[j>>5], 1<<(j&31))
}

func (h *Graph) key(i uint32) int64 { b, j := h.node(i); return b.keys[j] }

func (h *Graph) level(i uint32) int { b, j := h.node(i); return int(b.levels[j]) }

func (h *Graph) vec(i uint32) []float32 {
	b, j := h.node(i)
	if b.vrefs != nil {
		return b.vrefs[j]
	}
	return b.vecs[j*h.dim : (j+1)*h.dim : (j+1)*h.dim]
}

func (h *Graph) quant(i uint32) ([]int8, float32) {
	b, j := h.node(i)
	return b.q[j*h.qdim : (j+1)*h.qdim : (j+1)*h.qdim], b.scales[j]
}

// slots is node i's link list on layer l: a count, then the slots. The
// caller holds i's lock unless the graph is frozen.
func (h *Graph) slots(i uint32, l int) []uint32 {
	b, j := h.node(i)
	if l == 0 {
		return b.links0[j*h.stride : (j+1)*h.stride : (j+1)*h.stride]
	}
	u := h.upperOf(b, j)
	off := (l - 1) * (h.m + 1)
	if off+h.m+1 > len(u) {
		return nil
	}
	return u[off : off+h.m+1 : off+h.m+1]
}

// upperOf is node j of block b's lists above layer 0.
func (h *Graph) upperOf(b *block, j int) []uint32 {
	if b.upper != nil {
		return b.upper[j]
	}
	n := int(b.levels[j]) * (h.m + 1)
	off := int(b.upOff[j])
	return h.upper[off : off+n : off+n]
}

func (h *Graph) maxLinks(l int) int {
	if l == 0 {
		return 2 * h.m
	}
	return h.m
}

// links returns node i's neighbours on layer l, copied into buf unless the
// graph is frozen (then nothing can change them under the reader).
func (h *Graph) links(i uint32, l int, buf []uint32) []uint32 {
	if h.frozen {
		s := h.slots(i, l)
		if len(s) == 0 {
			return nil
		}
		return s[1 : 1+min(int(s[0]), len(s)-1)]
	}
	mu := &h.locks[i&(lockStripe-1)]
	mu.Lock()
	buf = buf[:0]
	if s := h.slots(i, l); len(s) > 0 {
		buf = append(buf, s[1:1+min(int(s[0]), len(s)-1)]...)
	}
	mu.Unlock()
	return buf
}

// query is a vector as the graph walks it.
type query struct {
	q     []int8
	scale float32
}

func (h *Graph) dist(q query, i uint32) float32 {
	v, s := h.quant(i)
	return 1 - q.scale*s*float32(dotInt8(q.q, v))
}

// visitSet marks nodes seen during one search; pooled, so a search does not
// allocate one.
type visitSet struct {
	mark      []uint32
	gen       uint32
	buf, next []uint32
}

func (h *Graph) getVisited(n int) *visitSet {
	v, _ := h.visited.Get().(*visitSet)
	if v == nil {
		v = &visitSet{buf: make([]uint32, 0, 2*h.m+1), next: make([]uint32, 0, 2*h.m+1)}
	}
	if len(v.mark) < n {
		v.mark = make([]uint32, n+n/2+16)
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

// candHeap is a binary heap of candidates, hand-rolled: container/heap's
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
// points keeping the ef closest nodes found. Links to nodes at or beyond
// limit (made after the search began, or damage) and to nodes not on the
// layer are skipped, so a damaged graph searches worse but never panics.
func (h *Graph) searchLayer(q query, eps []cand, ef, layer int, limit uint32) []cand {
	vis := h.getVisited(int(limit))
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
		vis.buf = h.links(c.id, layer, vis.buf)
		// Drop what is seen or out of bounds, and have the rest's vectors
		// fetched from memory together: walking is bound by those fetches.
		next := vis.next[:0]
		for _, n := range vis.buf {
			if n >= limit || vis.mark[n] == vis.gen || (layer > 0 && h.level(n) < layer) {
				continue
			}
			vis.mark[n] = vis.gen
			next = append(next, n)
			v, _ := h.quant(n)
			prefetch(&v[0], len(v))
		}
		vis.next = next
		for _, n := range next {
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

// greedy walks layer l towards q from ep, one closest node at a time.
func (h *Graph) greedy(q query, best cand, l int, limit uint32) cand {
	var buf []uint32
	for changed := true; changed; {
		changed = false
		buf = h.links(best.id, l, buf)
		for _, n := range buf {
			if n >= limit || h.level(n) < l {
				continue
			}
			if d := h.dist(q, n); d < best.d {
				best, changed = cand{n, d}, true
			}
		}
	}
	return best
}

// scan is exhaustive search over the int8 vectors: the ef nearest live
// nodes. Below exactBelow nodes it is cheaper than walking the graph, and
// exact where a walk may miss a node no link leads to.
func (h *Graph) scan(q query, ef int, limit uint32) []cand {
	res := candHeap{c: make([]cand, 0, ef+1), max: true}
	for i := range limit {
		if h.isDead(i) {
			continue
		}
		if d := h.dist(q, i); len(res.c) < ef || d < res.c[0].d {
			res.push(cand{i, d})
			if len(res.c) > ef {
				res.pop()
			}
		}
	}
	return res.c
}

// nodeDist is the distance between two nodes.
func (h *Graph) nodeDist(a, b uint32) float32 {
	qa, sa := h.quant(a)
	return h.dist(query{qa, sa}, b)
}

// selectNeighbors is the paper's heuristic (algorithm 4): take candidates
// nearest first, keeping one only if it is nearer to the new node than to
// every neighbour kept so far. It spreads links across directions, which
// is what keeps clustered data navigable. It fills up with the nearest
// pruned ones (keepPrunedConnections).
func (h *Graph) selectNeighbors(cands []cand, m int, out []uint32) []uint32 {
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	out = out[:0]
	var pruned []uint32
	for _, c := range cands {
		if len(out) == m {
			break
		}
		good := true
		for _, o := range out {
			if h.nodeDist(c.id, o) < c.d {
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
	for _, p := range pruned {
		if len(out) == m {
			break
		}
		out = append(out, p)
	}
	return out
}

func (h *Graph) newBlock() *block {
	return &block{
		keys: make([]int64, blockSize), levels: make([]uint8, blockSize), scales: make([]float32, blockSize),
		q: make([]int8, blockSize*h.qdim), vrefs: make([][]float32, blockSize),
		links0: make([]uint32, blockSize*h.stride), upper: make([][]uint32, blockSize), dead: make([]uint32, blockSize/32),
	}
}

// Add inserts v (unit length) under key; a key already live is left as it
// is. The graph keeps v, which must not change: a build hands over vectors
// it is done with, and a copy would double their memory until collected.
func (h *Graph) Add(key int64, v []float32) error {
	if len(v) != h.dim {
		return fmt.Errorf("vector %d has %d dimensions, the graph %d", key, len(v), h.dim)
	}
	if err := h.thaw(); err != nil {
		return err
	}
	h.rw.RLock()
	defer h.rw.RUnlock()
	id, level, ok, err := h.newNode(key, v)
	if err != nil || !ok {
		return err
	}
	h.entryMu.Lock()
	ep, top := h.entry, h.top
	if ep < 0 {
		h.entry, h.top = int32(id), level
		h.entryMu.Unlock()
		return nil
	}
	if level > top {
		// A new top node: hold the entry point until it is linked
		// (hnswlib does the same; one node in M^level is such).
		defer func() { h.entry, h.top = int32(id), level; h.entryMu.Unlock() }()
	} else {
		h.entryMu.Unlock()
	}
	qv, qs := h.quant(id)
	q := query{qv, qs}
	limit := id + 1
	cur := cand{uint32(ep), h.dist(q, uint32(ep))}
	for l := top; l > level; l-- {
		cur = h.greedy(q, cur, l, limit)
	}
	eps := []cand{cur}
	var neigh []uint32
	for l := min(top, level); l >= 0; l-- {
		w := h.searchLayer(q, eps, h.efCons, l, limit)
		eps = append(eps[:0], w...)
		neigh = h.selectNeighbors(w, h.m, neigh)
		h.lockNode(id)
		s := h.slots(id, l)
		s[0] = uint32(copy(s[1:], neigh))
		h.unlockNode(id)
		for _, n := range neigh {
			h.connect(n, id, l)
		}
	}
	return nil
}

func (h *Graph) lockNode(i uint32)   { h.locks[i&(lockStripe-1)].Lock() }
func (h *Graph) unlockNode(i uint32) { h.locks[i&(lockStripe-1)].Unlock() }

// connect adds a link from n to id on layer l. A list out of room (its
// slack used up, on layer 0) is cut back to its maximum with the same
// heuristic that picks a new node's links. Keeping just the nearest instead
// built 30% faster on 20k vectors but cost recall at 100k (0.949 against
// 0.980 at efSearch 128).
func (h *Graph) connect(n, id uint32, l int) {
	h.lockNode(n)
	defer h.unlockNode(n)
	s := h.slots(n, l)
	if len(s) == 0 {
		return
	}
	c := min(int(s[0]), len(s)-1)
	if slices.Contains(s[1:1+c], id) {
		return
	}
	if c < len(s)-1 { // room, slack included
		s[1+c] = id
		s[0]++
		return
	}
	qn, sn := h.quant(n)
	q := query{qn, sn}
	cs := make([]cand, 0, c+1)
	limit := h.n.Load()
	for _, x := range s[1 : 1+c] {
		if x < limit { // a damaged file's bad link is dropped here
			cs = append(cs, cand{x, h.dist(q, x)})
		}
	}
	cs = append(cs, cand{id, h.dist(q, id)})
	kept := h.selectNeighbors(cs, h.maxLinks(l), make([]uint32, 0, h.maxLinks(l)))
	s[0] = uint32(copy(s[1:], kept))
}

// newNode creates key's node and its vector, unlinked. ok is false when
// key is already live.
func (h *Graph) newNode(key int64, v []float32) (id uint32, level int, ok bool, err error) {
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	if h.byKey == nil {
		h.indexKeys()
	}
	if _, ok := h.byKey[key]; ok {
		return 0, 0, false, nil
	}
	id = h.n.Load()
	if id>>blockShift >= maxBlocks {
		return 0, 0, false, fmt.Errorf("the graph holds %d vectors, its limit", id)
	}
	b := h.blocks[id>>blockShift]
	if b == nil {
		b = h.newBlock()
		h.blocks[id>>blockShift] = b
	}
	level = min(int(-math.Log(1-h.rng.Float64())*h.ml), maxLevel)
	j := int(id & (blockSize - 1))
	b.keys[j], b.levels[j] = key, uint8(level)
	b.vrefs[j] = v
	b.scales[j] = quantize(b.q[j*h.qdim:(j+1)*h.qdim], v)
	if level > 0 {
		b.upper[j] = make([]uint32, level*(h.m+1))
	}
	h.byKey[key] = id
	h.n.Store(id + 1)
	h.live.Add(1)
	return id, level, true, nil
}

// indexKeys builds byKey for a graph opened from a file; the caller holds
// allocMu. Opening skips it: a search never needs it.
func (h *Graph) indexKeys() {
	n := h.n.Load()
	h.byKey = make(map[int64]uint32, n)
	for i := range n {
		if !h.isDead(i) {
			h.byKey[h.key(i)] = i
		}
	}
}

// Has reports whether key is live.
func (h *Graph) Has(key int64) bool {
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	if h.byKey == nil {
		h.indexKeys()
	}
	_, ok := h.byKey[key]
	return ok
}

// Keys returns the live keys, in no order.
func (h *Graph) Keys() []int64 {
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	if h.byKey == nil {
		h.indexKeys()
	}
	keys := make([]int64, 0, len(h.byKey))
	for k := range h.byKey {
		keys = append(keys, k)
	}
	return keys
}

// Delete makes key's node a tombstone: it keeps routing searches and is
// never returned.
func (h *Graph) Delete(key int64) {
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	if h.byKey == nil {
		h.indexKeys()
	}
	if i, ok := h.byKey[key]; ok {
		h.setDead(i)
		delete(h.byKey, key)
		h.live.Add(-1)
	}
}

// Search returns up to k live keys nearest to q (unit length), nearest
// first, from a beam of ef (at least k) candidates found with the int8
// vectors and rescored with the float32 ones. A vector of an opened file
// that fails its checksum is ErrDamaged.
func (h *Graph) Search(q []float32, k, ef int) ([]Hit, error) {
	if len(q) != h.dim {
		return nil, fmt.Errorf("query has %d dimensions, the graph %d", len(q), h.dim)
	}
	h.rw.RLock()
	defer h.rw.RUnlock()
	h.entryMu.Lock()
	ep, top := h.entry, h.top
	h.entryMu.Unlock()
	if ep < 0 || k <= 0 {
		return nil, nil
	}
	ef = max(ef, k)
	if dead := h.Tombstones(); dead > 0 {
		ef += min(dead, ef/4+8) // tombstones may take places
	}
	qq := query{q: make([]int8, h.qdim)}
	qq.scale = quantize(qq.q, q)
	limit := h.n.Load()
	var found []cand
	if limit <= uint32(h.exactBelow) {
		found = h.scan(qq, ef, limit)
	} else {
		cur := cand{uint32(ep), h.dist(qq, uint32(ep))}
		for l := top; l > 0; l-- {
			cur = h.greedy(qq, cur, l, limit)
		}
		found = h.searchLayer(qq, []cand{cur}, ef, 0, limit)
	}
	hits := make([]Hit, 0, len(found))
	for _, c := range found {
		if h.isDead(c.id) {
			continue
		}
		v := h.vec(c.id)
		if b, j := h.node(c.id); b.vcrc != nil && crc32.Update(0, castagnoli, f32bytes(v)) != b.vcrc[j] {
			return nil, fmt.Errorf("%w: vector %d fails its checksum", ErrDamaged, b.keys[j])
		}
		hits = append(hits, Hit{h.key(c.id), 1 - vek32.Dot(q, v)})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(a.Dist, b.Dist); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return hits[:min(k, len(hits))], nil
}
