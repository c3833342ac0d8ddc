package hnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// The file is little-endian and laid out to be memory-mapped: a 256-byte
// header, then sections each aligned to 64 bytes:
//
//	keys    n int64
//	levels  n uint8
//	scales  n float32
//	vcrc    n uint32, the CRC-32C of each float32 vector
//	links0  n × (1+2M) uint32: a count, then the slots
//	upper   per node above layer 0, per layer: a count, then M slots
//	dead    the tombstones' node ids, uint32
//	meta    the caller's bytes (lore: the stored vectors it is in step with)
//	q       n × qdim int8
//	vecs    n × dim float32
//
// The header's CRC covers the header and every section up to meta but the
// layer-0 links: what a search trusts without looking. The links (164 MiB
// at 1M nodes) and the vectors are too big to check on every open: links
// are bounds-checked where they are followed, a search checks the vcrc of
// each vector it returns, and Verify checks everything. Damaged links or
// int8 vectors can only steer a walk, never change a score, and a graph of
// up to exactBelow nodes is scanned, not walked.
const (
	magic      = "LOREGRAPH5"
	headerSize = 256
	align      = 64
)

// ErrVersion is a graph file from another version of lore: not damage,
// just rebuilt.
var ErrVersion = errors.New("graph file from another version of lore")

type header struct {
	Magic                [16]byte
	Dim, QDim, M, EfCons uint32
	N                    uint64
	Entry                int64
	NDead                uint64
	MetaLen              uint64
	UpperLen             uint64 // uint32s in the upper section
	QCRC, VecCRC         uint32
	LinksCRC             uint32
	_                    [164]byte
	CRC                  uint32 // of the header before it and the sections up to meta
	_                    uint32
}

func init() {
	if binary.Size(header{}) != headerSize {
		panic("hnsw: header size")
	}
}

type layout struct{ keys, levels, scales, vcrc, links0, upper, dead, meta, q, vecs, end int64 }

func pad(x int64) int64 { return (x + align - 1) &^ (align - 1) }

func (hd *header) layout() layout {
	n := int64(hd.N)
	var l layout
	l.keys = headerSize
	l.levels = pad(l.keys + 8*n)
	l.scales = pad(l.levels + n)
	l.vcrc = pad(l.scales + 4*n)
	l.links0 = pad(l.vcrc + 4*n)
	l.upper = pad(l.links0 + 4*n*int64(1+2*hd.M+uint32(linkSlack)))
	l.dead = pad(l.upper + 4*int64(hd.UpperLen))
	l.meta = pad(l.dead + 4*int64(hd.NDead))
	l.q = pad(l.meta + int64(hd.MetaLen))
	l.vecs = pad(l.q + n*int64(hd.QDim))
	l.end = l.vecs + 4*n*int64(hd.Dim)
	return l
}

func f32bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// WriteTo writes the graph file, with meta stored in it. Concurrent adds
// must have finished.
func (h *Graph) WriteTo(w io.Writer, meta []byte) error {
	if !littleEndian {
		return errors.New("graph files are little-endian; this machine is not")
	}
	h.rw.RLock()
	defer h.rw.RUnlock()
	n := h.n.Load()
	hd := header{Dim: uint32(h.dim), QDim: uint32(h.qdim), M: uint32(h.m), EfCons: uint32(h.efCons), N: uint64(n), Entry: int64(h.entry), MetaLen: uint64(len(meta))}
	copy(hd.Magic[:], magic)
	var dead []uint32
	qcrc, vcrc := crc32.New(castagnoli), crc32.New(castagnoli)
	for i := range n {
		if h.isDead(i) {
			dead = append(dead, i)
		}
		hd.UpperLen += uint64(h.level(i) * (h.m + 1))
		qv, _ := h.quant(i)
		qcrc.Write(i8bytes(qv))
		vcrc.Write(f32bytes(h.vec(i)))
	}
	hd.NDead = uint64(len(dead))
	hd.QCRC, hd.VecCRC = qcrc.Sum32(), vcrc.Sum32()
	lcrc := crc32.New(castagnoli)
	for i := range n {
		lcrc.Write(u32bytes(h.slots(i, 0)))
	}
	hd.LinksCRC = lcrc.Sum32()
	lay := hd.layout()

	// The header's CRC is over what follows it: write the structure to the
	// checksum first, then everything to w.
	structure := func(out io.Writer) error {
		each := func(write func(i uint32) []byte) {
			for i := range n {
				out.Write(write(i))
			}
		}
		padTo := func(at *int64, to int64) {
			out.Write(make([]byte, to-*at))
			*at = to
		}
		at := int64(headerSize)
		var b8 [8]byte
		each(func(i uint32) []byte { binary.LittleEndian.PutUint64(b8[:], uint64(h.key(i))); return b8[:] })
		at += 8 * int64(n)
		padTo(&at, lay.levels)
		each(func(i uint32) []byte { b8[0] = uint8(h.level(i)); return b8[:1] })
		at += int64(n)
		padTo(&at, lay.scales)
		each(func(i uint32) []byte {
			_, s := h.quant(i)
			binary.LittleEndian.PutUint32(b8[:], math.Float32bits(s))
			return b8[:4]
		})
		at += 4 * int64(n)
		padTo(&at, lay.vcrc)
		each(func(i uint32) []byte {
			binary.LittleEndian.PutUint32(b8[:], crc32.Update(0, castagnoli, f32bytes(h.vec(i))))
			return b8[:4]
		})
		at += 4 * int64(n)
		padTo(&at, lay.links0)
		each(func(i uint32) []byte { return u32bytes(h.slots(i, 0)) })
		at += 4 * int64(n) * int64(h.stride)
		padTo(&at, lay.upper)
		each(func(i uint32) []byte { b, j := h.node(i); return u32bytes(h.upperOf(b, j)) })
		at += 4 * int64(hd.UpperLen)
		padTo(&at, lay.dead)
		out.Write(u32bytes(dead))
		at += 4 * int64(len(dead))
		padTo(&at, lay.meta)
		out.Write(meta)
		at += int64(len(meta))
		padTo(&at, lay.q)
		return nil
	}
	var hb [headerSize]byte
	encodeHeader(hb[:], &hd)
	sum := &skipHash{at: headerSize, skipFrom: lay.links0, skipTo: lay.upper, sum: crc32.Update(0, castagnoli, hb[:headerSize-8])}
	structure(sum)
	hd.CRC = sum.sum
	encodeHeader(hb[:], &hd)

	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(hb[:])
	structure(bw)
	for i := range n {
		qv, _ := h.quant(i)
		bw.Write(i8bytes(qv))
	}
	bw.Write(make([]byte, lay.vecs-lay.q-int64(n)*int64(h.qdim)))
	for i := range n {
		if _, err := bw.Write(f32bytes(h.vec(i))); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func encodeHeader(dst []byte, hd *header) {
	b, _ := binary.Append(dst[:0], binary.LittleEndian, hd)
	copy(dst, b)
}

func u32bytes(v []uint32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func i8bytes(v []int8) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Open maps the graph file at path and returns it with the meta bytes it
// was written with. Opening checks the header, the sizes and the checksum
// of the structure, not the vectors (see Verify); a file from another
// version is ErrVersion, any damage ErrDamaged. Close the graph when done.
func Open(path string) (*Graph, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	var hb [headerSize]byte
	if _, err := f.ReadAt(hb[:len(magic)], 0); err == nil && string(hb[:len(magic)-1]) == magic[:len(magic)-1] && hb[len(magic)-1] != magic[len(magic)-1] {
		return nil, nil, ErrVersion
	}
	if size < headerSize {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrDamaged, size)
	}
	if !littleEndian {
		return nil, nil, ErrVersion
	}
	data, release, err := mapFile(f, size)
	if err != nil {
		return nil, nil, err
	}
	// Once only: a second munmap of the same address could hit a newer
	// mapping placed there.
	unmap := sync.OnceValue(release)
	h, meta, err := attach(data)
	if err != nil {
		unmap()
		return nil, nil, err
	}
	h.unmap = unmap
	// A graph dropped without Close still gives its mapping back.
	runtime.AddCleanup(h, func(u func() error) { u() }, unmap)
	return h, meta, nil
}

// Close releases an opened graph's mapping. The graph must not be used
// after.
func (h *Graph) Close() error {
	h.rw.Lock()
	defer h.rw.Unlock()
	if h.unmap == nil {
		return nil
	}
	u := h.unmap
	h.unmap, h.blocks, h.entry = nil, make([]*block, maxBlocks), -1
	h.n.Store(0)
	h.live.Store(0)
	return u()
}

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrDamaged}, args...)...)
}

// attach builds a frozen graph over the bytes of a graph file.
func attach(data []byte) (*Graph, []byte, error) {
	var hd header
	if _, err := binary.Decode(data[:headerSize], binary.LittleEndian, &hd); err != nil {
		return nil, nil, damaged("%v", err)
	}
	if string(hd.Magic[:len(magic)]) != magic {
		return nil, nil, damaged("bad magic")
	}
	// M below 2 makes the level multiplier infinite; efConstruction is a
	// search breadth (0 finds nothing, 2^32 allocates 64 GiB).
	if hd.Dim == 0 || hd.Dim > 1<<16 || hd.QDim != (hd.Dim+31)&^31 || hd.M < 2 || hd.M > 1024 || hd.EfCons == 0 || hd.EfCons > 1<<16 ||
		hd.N > maxBlocks*blockSize || hd.Entry < -1 || hd.Entry >= int64(hd.N) || (hd.N > 0) != (hd.Entry >= 0) ||
		hd.NDead > hd.N || hd.MetaLen > 1<<20 || hd.UpperLen > hd.N*maxLevel*uint64(hd.M+1) {
		return nil, nil, damaged("header")
	}
	lay := hd.layout()
	if lay.end != int64(len(data)) {
		return nil, nil, damaged("%d bytes, the header says %d", len(data), lay.end)
	}
	if structureCRC(data[:headerSize], data[headerSize:lay.q], lay) != hd.CRC {
		return nil, nil, damaged("checksum mismatch")
	}
	n := int(hd.N)
	h := New(int(hd.Dim), Options{M: int(hd.M), EfConstruction: int(hd.EfCons)})
	h.byKey, h.frozen = nil, true
	h.linksCRC, h.qCRC = hd.LinksCRC, hd.QCRC
	keys := cast[int64](data[lay.keys:], n)
	levels := data[lay.levels : lay.levels+int64(n)]
	scales := cast[float32](data[lay.scales:], n)
	vcrc := cast[uint32](data[lay.vcrc:], n)
	links0 := cast[uint32](data[lay.links0:], n*h.stride)
	upper := cast[uint32](data[lay.upper:], int(hd.UpperLen))
	q := cast[int8](data[lay.q:], n*h.qdim)
	vecs := cast[float32](data[lay.vecs:], n*h.dim)
	for b := 0; b*blockSize < n; b++ {
		lo, hi := b*blockSize, min((b+1)*blockSize, n)
		h.blocks[b] = &block{
			keys: keys[lo:hi], levels: levels[lo:hi:hi], scales: scales[lo:hi], vcrc: vcrc[lo:hi],
			q: q[lo*h.qdim : hi*h.qdim], vecs: vecs[lo*h.dim : hi*h.dim], links0: links0[lo*h.stride : hi*h.stride],
			upOff: make([]uint32, hi-lo), dead: make([]uint32, blockSize/32),
		}
	}
	off := 0
	per := h.m + 1
	for i := range n {
		lv := int(levels[i])
		if lv > maxLevel || off+lv*per > len(upper) {
			return nil, nil, damaged("node %d is on %d layers", i, lv)
		}
		if lv > 0 {
			h.blocks[i>>blockShift].upOff[i&(blockSize-1)] = uint32(off)
			off += lv * per
		}
	}
	if off != len(upper) {
		return nil, nil, damaged("upper layers")
	}
	h.upper = upper
	h.n.Store(uint32(n))
	for _, d := range cast[uint32](data[lay.dead:], int(hd.NDead)) {
		if d >= uint32(n) || h.isDead(d) {
			return nil, nil, damaged("tombstone %d", d)
		}
		h.setDead(d)
	}
	h.live.Store(int64(n) - int64(hd.NDead))
	h.entry, h.top = int32(hd.Entry), 0
	if hd.Entry >= 0 {
		h.top = int(levels[hd.Entry])
	}
	meta := append([]byte(nil), data[lay.meta:lay.meta+int64(hd.MetaLen)]...)
	return h, meta, nil
}

func cast[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// Verify checks what opening did not, the layer-0 links and the vectors,
// against the checksums of the file: a writer does before it adds to a
// graph and saves it again. Only a graph just opened can be verified.
func (h *Graph) Verify() error {
	h.rw.RLock()
	defer h.rw.RUnlock()
	if !h.frozen {
		return nil
	}
	n := h.n.Load()
	links, q := crc32.New(castagnoli), crc32.New(castagnoli)
	for i := range n {
		b, j := h.node(i)
		if crc32.Update(0, castagnoli, f32bytes(h.vec(i))) != b.vcrc[j] {
			return damaged("vector of node %d fails its checksum", i)
		}
		links.Write(u32bytes(h.slots(i, 0)))
		qv, _ := h.quant(i)
		q.Write(i8bytes(qv))
	}
	if links.Sum32() != h.linksCRC || q.Sum32() != h.qCRC {
		return damaged("links or int8 vectors fail their checksum")
	}
	return nil
}

// thaw turns a graph opened from a file into one that takes inserts: the
// mapping is private and writable, so links are changed in place (copied
// on write, never written back); the last, partial block moves to the heap
// so that new nodes fit in it.
func (h *Graph) thaw() error {
	h.rw.RLock()
	frozen := h.frozen
	h.rw.RUnlock()
	if !frozen {
		return nil
	}
	h.rw.Lock()
	defer h.rw.Unlock()
	if !h.frozen {
		return nil
	}
	n := int(h.n.Load())
	if n%blockSize != 0 {
		old := h.blocks[n>>blockShift]
		b := h.newBlock()
		k := n & (blockSize - 1)
		copy(b.keys, old.keys)
		copy(b.levels, old.levels)
		copy(b.scales, old.scales)
		copy(b.q, old.q)
		for j := range k {
			b.vrefs[j] = old.vecs[j*h.dim : (j+1)*h.dim : (j+1)*h.dim]
		}
		copy(b.links0, old.links0)
		for j := range k {
			b.upper[j] = h.upperOf(old, j)
		}
		copy(b.dead, old.dead)
		for j := range k {
			if crc32.Update(0, castagnoli, f32bytes(b.vrefs[j])) != old.vcrc[j] {
				return damaged("vector of node %d fails its checksum", n-k+j)
			}
		}
		h.blocks[n>>blockShift] = b
	}
	h.frozen = false
	return nil
}

// skipHash computes the header's CRC as WriteTo streams the structure,
// passing over the layer-0 links.
type skipHash struct {
	at, skipFrom, skipTo int64
	sum                  uint32
}

func (h *skipHash) Write(p []byte) (int, error) {
	lo, hi := h.at, h.at+int64(len(p))
	if a, b := max(lo, h.skipFrom), min(hi, h.skipTo); a < b {
		h.sum = crc32.Update(h.sum, castagnoli, p[:a-lo])
		h.sum = crc32.Update(h.sum, castagnoli, p[b-lo:])
	} else {
		h.sum = crc32.Update(h.sum, castagnoli, p)
	}
	h.at = hi
	return len(p), nil
}

// structureCRC is the header's CRC: of the header before the CRC field
// and of the sections from keys to meta (body, which starts at keys) less
// the layer-0 links.
func structureCRC(hdr, body []byte, lay layout) uint32 {
	sum := crc32.Update(0, castagnoli, hdr[:headerSize-8])
	sum = crc32.Update(sum, castagnoli, body[:lay.links0-headerSize])
	return crc32.Update(sum, castagnoli, body[lay.upper-headerSize:])
}

func decodeHeader(data []byte, hd *header) (int, error) {
	return binary.Decode(data[:headerSize], binary.LittleEndian, hd)
}
