package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/coder/hnsw"
	"github.com/viterin/vek/vek32"
)

// Vectors are normalised when stored, so cosine distance is 1 - dot product,
// which skips two norms per comparison.
func dotDistance(a, b []float32) float32 { return 1 - vek32.Dot(a, b) }

func init() { hnsw.RegisterDistanceFunc("lore-dot", dotDistance) }

// HNSW parameters. M and efConstruction trade build time for recall; they
// are measured in BENCHMARKS.md.
const (
	graphM              = 16
	graphEfConstruction = 64
	graphMagic          = "LOREHNSW"
	graphVersion        = 1
)

// vectorGraph is the ANN graph over stored vectors, keyed by vectors.id.
// coder/hnsw has no locks and no way to list its keys, so this wrapper
// keeps both. It never calls the library's Delete: in v0.6.1 a delete
// leaves one-way links to the removed node, which an Export/Import round
// trip turns into nil pointers and a panic. A removed vector becomes a
// tombstone instead: it stays in the graph, is filtered out of results,
// and the graph is rebuilt once tombstones pass a quarter of it.
type vectorGraph struct {
	mu   sync.RWMutex
	g    *hnsw.Graph[int64]
	dim  int
	keys map[int64]struct{}
}

func newVectorGraph(dim int) *vectorGraph {
	g := hnsw.NewGraph[int64]()
	g.M, g.EfSearch, g.Distance = graphM, graphEfConstruction, dotDistance
	g.Rng = rand.New(rand.NewSource(1))
	return &vectorGraph{g: g, dim: dim, keys: map[int64]struct{}{}}
}

func (vg *vectorGraph) Len() int {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	return len(vg.keys)
}

func (vg *vectorGraph) add(id int64, v []float32) error {
	if len(v) != vg.dim {
		return fmt.Errorf("vector %d has %d dimensions, the graph %d", id, len(v), vg.dim)
	}
	vg.mu.Lock()
	defer vg.mu.Unlock()
	vg.g.Add(hnsw.MakeNode(id, v))
	vg.keys[id] = struct{}{}
	return nil
}

func (vg *vectorGraph) remove(id int64) {
	vg.mu.Lock()
	defer vg.mu.Unlock()
	delete(vg.keys, id)
}

// tombstones counts removed vectors still in the graph.
func (vg *vectorGraph) tombstones() int {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	return vg.g.Len() - len(vg.keys)
}

// search returns the keys of the k nearest vectors, nearest first, with
// their distances.
func (vg *vectorGraph) search(q []float32, k, ef int) ([]int64, []float32, error) {
	if len(q) != vg.dim {
		return nil, nil, fmt.Errorf("query has %d dimensions, the index %d", len(q), vg.dim)
	}
	vg.mu.Lock() // Search reads EfSearch, which we set per call
	defer vg.mu.Unlock()
	if len(vg.keys) == 0 {
		return nil, nil, nil
	}
	// Ask for more when tombstones may take places in the result.
	want := k
	if dead := vg.g.Len() - len(vg.keys); dead > 0 {
		want = k + min(dead, k/4+8)
	}
	vg.g.EfSearch = max(ef, want)
	nodes := vg.g.Search(q, want)
	vg.g.EfSearch = graphEfConstruction
	ids := make([]int64, 0, k)
	dist := make([]float32, 0, k)
	for _, n := range nodes {
		if _, live := vg.keys[n.Key]; !live || len(ids) == k {
			continue
		}
		ids, dist = append(ids, n.Key), append(dist, dotDistance(q, n.Value))
	}
	return ids, dist, nil
}

// writeFile exports the graph atomically: a temp file beside the target,
// fsynced, renamed over it, and the directory fsynced, so a crash leaves the
// old graph or the new one, never half of one.
func (vg *vectorGraph) writeFile(path string) error {
	vg.mu.RLock()
	defer vg.mu.RUnlock()
	return writeFileAtomic(path, func(w io.Writer) error {
		keys := make([]int64, 0, len(vg.keys))
		for k := range vg.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		hdr := []any{[]byte(graphMagic), uint32(graphVersion), uint32(vg.dim), uint64(len(keys)), keys}
		for _, v := range hdr {
			if err := binary.Write(w, binary.LittleEndian, v); err != nil {
				return err
			}
		}
		if vg.g.Len() == 0 {
			return nil
		}
		return vg.g.Export(w)
	})
}

// readGraphFile loads a graph written by writeFile.
func readGraphFile(path string, dim int) (*vectorGraph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(graphMagic))
	var version, fileDim uint32
	var n uint64
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != graphMagic {
		return nil, errors.New("not a lore graph file")
	}
	for _, v := range []any{&version, &fileDim, &n} {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("graph header: %w", err)
		}
	}
	if version != graphVersion || int(fileDim) != dim || n > math.MaxInt32 {
		return nil, fmt.Errorf("graph version %d with %d dimensions does not match", version, fileDim)
	}
	keys := make([]int64, n)
	if err := binary.Read(r, binary.LittleEndian, keys); err != nil {
		return nil, fmt.Errorf("graph keys: %w", err)
	}
	vg := newVectorGraph(dim)
	for _, k := range keys {
		vg.keys[k] = struct{}{}
	}
	if _, err := r.Peek(1); err == nil {
		if err := vg.g.Import(r); err != nil {
			return nil, fmt.Errorf("graph: %w", err)
		}
		if vg.g.Len() < len(keys) {
			return nil, fmt.Errorf("graph holds %d nodes, its header %d", vg.g.Len(), len(keys))
		}
	}
	vg.g.Distance = dotDistance
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
	for k := range vg.keys {
		if _, ok := inDB[k]; !ok {
			gone = append(gone, k)
		}
	}
	for k := range inDB {
		if _, ok := vg.keys[k]; !ok {
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
			if _, ok := vg.keys[id]; ok {
				continue
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
