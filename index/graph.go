package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"
)

// Vectors are normalised when stored, so cosine distance is 1 - dot product,
// which skips two norms per comparison.
func dotDistance(a, b []float32) float32 { return 1 - vek32.Dot(a, b) }

// HNSW parameters, measured in BENCHMARKS.md. M=16 links (32 on layer 0).
// efConstruction trades build speed for graph quality, and the quality
// shows at scale: at 100k vectors, efSearch=128 reaches recall@10 0.98
// (30x exact search) on a graph built with efConstruction=100 but only
// 0.92 with 64, which builds 1.5x faster. Recall wins: a real embedding
// model embeds far slower than either builds.
const (
	graphM              = 16
	graphEfConstruction = 100
	graphEfSearch       = 128
	graphMagic          = "LOREGRAPH4"
)

// The graph file is graphMagic, the tombstones, the HNSW graph, and a
// CRC-32C of all that: a flipped byte anywhere is found on load, not
// searched with.
var graphCRC = crc32.MakeTable(crc32.Castagnoli)

// errGraphVersion is a graph file from another version of lore: not
// damage, just rebuilt.
var errGraphVersion = errors.New("graph file from another version of lore")

// vectorGraph is the ANN graph over stored vectors, keyed by vectors.id,
// with a lock and the set of live keys. A removed vector becomes a
// tombstone: it stays in the graph (it may still route searches), is
// filtered out of results, and the graph is rebuilt once tombstones pass a
// quarter of it.
type vectorGraph struct {
	mu   sync.RWMutex
	h    *hnsw
	dim  int
	live map[int64]uint32 // key to node id
}

func newVectorGraph(dim int) *vectorGraph {
	return &vectorGraph{h: newHNSW(dim, graphM, graphEfConstruction), dim: dim, live: map[int64]uint32{}}
}

func (vg *vectorGraph) Len() int {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	return len(vg.live)
}

func (vg *vectorGraph) has(id int64) bool {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	_, ok := vg.live[id]
	return ok
}

func (vg *vectorGraph) add(id int64, v []float32) error {
	if len(v) != vg.dim {
		return fmt.Errorf("vector %d has %d dimensions, the graph %d", id, len(v), vg.dim)
	}
	vg.mu.Lock()
	defer vg.mu.Unlock()
	if _, ok := vg.live[id]; ok {
		return nil
	}
	vg.live[id] = uint32(vg.h.len())
	vg.h.add(id, v)
	return nil
}

func (vg *vectorGraph) remove(id int64) {
	vg.mu.Lock()
	defer vg.mu.Unlock()
	delete(vg.live, id)
}

// tombstones counts removed vectors still in the graph.
func (vg *vectorGraph) tombstones() int {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	return vg.h.len() - len(vg.live)
}

// search returns the keys of the k nearest live vectors, nearest first,
// with their distances. ef is the search breadth (at least k).
func (vg *vectorGraph) search(q []float32, k, ef int) ([]int64, []float32, error) {
	if len(q) != vg.dim {
		return nil, nil, fmt.Errorf("query has %d dimensions, the index %d", len(q), vg.dim)
	}
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	ef = max(ef, k)
	if dead := vg.h.len() - len(vg.live); dead > 0 {
		ef += min(dead, ef/4+8) // tombstones may take places
	}
	ids := make([]int64, 0, k)
	dist := make([]float32, 0, k)
	for _, c := range vg.h.search(q, ef) {
		key := vg.h.keys[c.id]
		if n, ok := vg.live[key]; !ok || n != c.id {
			continue
		}
		if ids, dist = append(ids, key), append(dist, c.d); len(ids) == k {
			break
		}
	}
	return ids, dist, nil
}

// writeFile saves the graph atomically: a temp file beside the target,
// fsynced, renamed over it, and the directory fsynced, so a crash leaves the
// old graph or the new one, never half of one.
func (vg *vectorGraph) writeFile(path string) error {
	return writeFileAtomic(path, vg.writeTo)
}

// writeTo writes the graph file's bytes, checksum last.
func (vg *vectorGraph) writeTo(out io.Writer) error {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	sum := crc32.New(graphCRC)
	w := io.MultiWriter(out, sum)
	err := func() error {
		var dead []uint32
		for i, key := range vg.h.keys {
			if n, ok := vg.live[key]; !ok || n != uint32(i) {
				dead = append(dead, uint32(i))
			}
		}
		for _, x := range []any{[]byte(graphMagic), uint32(len(dead)), dead} {
			if err := binary.Write(w, binary.LittleEndian, x); err != nil {
				return err
			}
		}
		return vg.h.writeTo(w)
	}()
	if err != nil {
		return err
	}
	return binary.Write(out, binary.LittleEndian, sum.Sum32())
}

// readGraphFile loads a graph written by writeFile. A file that is not
// there is an fs.ErrNotExist; one from another lore, errGraphVersion; any
// damage, an errGraphFormat.
func readGraphFile(path string, dim int) (*vectorGraph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readGraph(f, fi.Size(), dim)
}

// readGraph loads the size bytes of a graph file from r: it checks the
// checksum first, then every count against the bytes there are (a damaged
// count never allocates more than the file could hold) and every link.
func readGraph(r io.ReaderAt, size int64, dim int) (*vectorGraph, error) {
	magic := make([]byte, len(graphMagic))
	if n, _ := r.ReadAt(magic, 0); n == len(magic) && string(magic) != graphMagic && string(magic[:len(magic)-1]) == graphMagic[:len(graphMagic)-1] {
		return nil, errGraphVersion
	}
	const fixed = int64(len(graphMagic)) + 4 + 4 // magic, tombstone count, checksum
	if size < fixed {
		return nil, fmt.Errorf("%w: %d bytes", errGraphFormat, size)
	}
	body := size - 4
	var want [4]byte
	if _, err := r.ReadAt(want[:], body); err != nil {
		return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
	}
	sum := crc32.New(graphCRC)
	if _, err := io.Copy(sum, io.NewSectionReader(r, 0, body)); err != nil {
		return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
	}
	if sum.Sum32() != binary.LittleEndian.Uint32(want[:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errGraphFormat)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, body), int(min(body, 1<<20)))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != graphMagic {
		return nil, fmt.Errorf("%w: bad magic", errGraphFormat)
	}
	var nDead uint32
	if err := binary.Read(br, binary.LittleEndian, &nDead); err != nil || int64(nDead)*4 > size-fixed {
		return nil, fmt.Errorf("%w: tombstone count", errGraphFormat)
	}
	dead := make([]uint32, nDead)
	if err := binary.Read(br, binary.LittleEndian, dead); err != nil {
		return nil, fmt.Errorf("%w: %v", errGraphFormat, err)
	}
	h, err := readHNSW(br, size-fixed-4*int64(nDead))
	if err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes after the graph", errGraphFormat)
	}
	if h.dim != dim {
		return nil, fmt.Errorf("%w: graph has %d dimensions, the index %d", errGraphFormat, h.dim, dim)
	}
	vg := &vectorGraph{h: h, dim: dim, live: make(map[int64]uint32, h.len())}
	isDead := make(map[uint32]bool, len(dead))
	for _, d := range dead {
		isDead[d] = true
	}
	for i, key := range h.keys {
		if !isDead[uint32(i)] {
			vg.live[key] = uint32(i)
		}
	}
	return vg, nil
}

// syncGraph makes vg hold exactly the stored vectors: it adds the missing
// and removes the gone. It returns how many it added and removed.
func syncGraph(ctx context.Context, s *store, vg *vectorGraph, progress func(done, total int)) (added, removed int, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM vectors`)
	if err != nil {
		return 0, 0, err
	}
	inDB := map[int64]struct{}{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, 0, err
		}
		inDB[id] = struct{}{}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	vg.mu.RLock()
	var gone, missing []int64
	for k := range vg.live {
		if _, ok := inDB[k]; !ok {
			gone = append(gone, k)
		}
	}
	for k := range inDB {
		if _, ok := vg.live[k]; !ok {
			missing = append(missing, k)
		}
	}
	vg.mu.RUnlock()
	for _, k := range gone {
		vg.remove(k)
	}
	slices.Sort(missing)
	for i := 0; i < len(missing); i += 1000 {
		part := missing[i:min(i+1000, len(missing))]
		if err := ctx.Err(); err != nil {
			return added, len(gone), err
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, vec FROM vectors WHERE id BETWEEN ? AND ?`, part[0], part[len(part)-1])
		if err != nil {
			return added, len(gone), err
		}
		for rows.Next() {
			var id int64
			var blob []byte
			if err := rows.Scan(&id, &blob); err != nil {
				rows.Close()
				return added, len(gone), err
			}
			if vg.has(id) {
				continue
			}
			if len(blob) != 4*vg.dim {
				rows.Close()
				return added, len(gone), fmt.Errorf("%w: stored vector %d has %d bytes, not %d", errCorruptData, id, len(blob), 4*vg.dim)
			}
			if err := vg.add(id, decodeVector(blob)); err != nil {
				rows.Close()
				return added, len(gone), err
			}
			added++
			if progress != nil && added%256 == 0 {
				progress(added, len(missing))
			}
		}
		rows.Close()
	}
	return added, len(gone), nil
}

// writeFileAtomic writes path through a temp file, fsync and rename.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(w); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
