package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/lore-cli/lore/index/hnsw"
	"github.com/lore-cli/lore/internal/atomicfile"
)

// Vectors are normalised when stored, so cosine distance is 1 - dot product,
// which skips two norms per comparison.
func dotDistance(a, b []float32) float32 { return 1 - vek32.Dot(a, b) }

// HNSW parameters, measured in BENCHMARKS.md. M=16 links (32 on layer 0).
// efConstruction trades build speed for graph quality, and the quality
// shows at scale: efConstruction 64 built 1.4x faster than 100 but lost a
// point of recall@10 at 20k vectors already (0.986 against 0.997, ef 128);
// at 100k, 100 gives 0.973 at 36x exact search (BenchmarkSearch).
const (
	graphM              = 16
	graphEfConstruction = 100
	graphEfSearch       = 128
)

// A damaged graph file is rebuilt from the vectors in index.db; one from
// another version of lore is rebuilt without a word.
var (
	errGraphFormat  = hnsw.ErrDamaged
	errGraphVersion = hnsw.ErrVersion
)

// vectorGraph is the ANN graph over stored vectors, keyed by vectors.id. A
// removed vector becomes a tombstone: it stays in the graph (it may still
// route searches), is filtered out of results, and the graph is rebuilt
// once tombstones outnumber live nodes (tooSparse).
type vectorGraph struct {
	g   *hnsw.Graph
	dim int
	// synced is the vector version (Index.vectorVersion) the graph was
	// saved in step with: a reader that finds the store at that version
	// skips reading every vector id to check.
	synced string
}

func newVectorGraph(dim int) *vectorGraph {
	return &vectorGraph{g: hnsw.New(dim, hnsw.Options{M: graphM, EfConstruction: graphEfConstruction}), dim: dim}
}

func (vg *vectorGraph) Len() int          { return vg.g.Len() }
func (vg *vectorGraph) has(id int64) bool { return vg.g.Has(id) }
func (vg *vectorGraph) remove(id int64)   { vg.g.Delete(id) }
func (vg *vectorGraph) tombstones() int   { return vg.g.Tombstones() }
func (vg *vectorGraph) close() error      { return vg.g.Close() }

// add inserts a vector; safe to call from several goroutines at once.
func (vg *vectorGraph) add(id int64, v []float32) error { return vg.g.Add(id, v) }

// addAll inserts vectors from every core.
func (vg *vectorGraph) addAll(ids []int64, vecs [][]float32) error {
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ids) && errs[w] == nil; i += workers {
				errs[w] = vg.add(ids[i], vecs[i])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// search returns the keys of the k nearest live vectors, nearest first,
// with their distances. ef is the search breadth (at least k). A vector
// that fails its checksum is errGraphFormat.
func (vg *vectorGraph) search(q []float32, k, ef int) ([]int64, []float32, error) {
	if len(q) != vg.dim {
		return nil, nil, fmt.Errorf("query has %d dimensions, the index %d", len(q), vg.dim)
	}
	hits, err := vg.g.Search(q, k, ef)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]int64, len(hits))
	dist := make([]float32, len(hits))
	for i, h := range hits {
		ids[i], dist[i] = h.Key, h.Dist
	}
	return ids, dist, nil
}

// writeFile saves the graph atomically: a temp file beside the target,
// fsynced, renamed over it, and the directory fsynced, so a crash leaves the
// old graph or the new one, never half of one. Readers that mapped the old
// file keep it until they let go.
func (vg *vectorGraph) writeFile(path string) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error { return vg.g.WriteTo(w, []byte(vg.synced)) })
}

// readGraphFile maps a graph written by writeFile. A file that is not there
// is an fs.ErrNotExist; one from another lore, errGraphVersion; damage
// found on opening, an errGraphFormat.
func readGraphFile(path string, dim int) (*vectorGraph, error) {
	g, meta, err := hnsw.Open(path)
	if err != nil {
		return nil, err
	}
	if g.Dim() != dim {
		g.Close()
		return nil, fmt.Errorf("%w: graph has %d dimensions, the index %d", errGraphFormat, g.Dim(), dim)
	}
	return &vectorGraph{g: g, dim: dim, synced: string(meta)}, nil
}

// syncGraph makes vg hold exactly the stored vectors: it adds the missing
// and removes the gone. It returns how many it added and removed.
func syncGraph(ctx context.Context, s *database, vg *vectorGraph, progress func(done, total int)) (added, removed int, err error) {
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
	var gone, missing []int64
	for _, k := range vg.g.Keys() {
		if _, ok := inDB[k]; !ok {
			gone = append(gone, k)
		}
	}
	for k := range inDB {
		if !vg.has(k) {
			missing = append(missing, k)
		}
	}
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
		var ids []int64
		var vecs [][]float32
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
			ids, vecs = append(ids, id), append(vecs, decodeVector(blob))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return added, len(gone), err
		}
		if err := vg.addAll(ids, vecs); err != nil {
			return added, len(gone), err
		}
		added += len(ids)
		if progress != nil {
			progress(added, len(missing))
		}
	}
	return added, len(gone), nil
}

// tooSparse tells whether deleted nodes outweigh what a search can route
// around. Measured by BenchmarkRecallAfterDeletes (index/hnsw, 20k nodes,
// ef 128, recall@10 over the live ones; BENCHMARKS.md): with nodes deleted
// by region, the worst order, recall stays 0.998-1.000 up to as many dead
// as live, 0.994-0.998 at 1.5 dead per live, 0.93-0.99 at 3 and 0.73-0.86
// at 9; deleted at random it holds to 3. So a graph is compacted once its
// dead outnumber its live, the last point measured at full recall: a
// quarter or a third would rebuild two or three times as often for no
// recall, and a rebuild costs about a third of a millisecond per live
// 768-d node on two cores. Below 64 tombstones it is never worth it.
func (vg *vectorGraph) tooSparse() bool { return vg.tombstones() > max(64, vg.Len()) }

// compactGraph returns vg, or, when it is too sparse, a graph built anew
// from the stored vectors (vg is then closed, unless a search may still
// read it: keep says so).
func compactGraph(ctx context.Context, s *database, vg *vectorGraph, keep bool) (*vectorGraph, error) {
	if !vg.tooSparse() {
		return vg, nil
	}
	fresh := newVectorGraph(vg.dim)
	if _, _, err := syncGraph(ctx, s, fresh, nil); err != nil {
		fresh.close()
		return vg, err
	}
	fresh.synced = vg.synced
	if !keep {
		vg.close()
	}
	return fresh, nil
}
