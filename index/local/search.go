package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
)

// EmbedderModel is the model that embedded this index, or "none".
func (ix *Index) EmbedderModel(ctx context.Context) string {
	m, _ := ix.st.meta(ctx, "embedder")
	if m == "" {
		return "none"
	}
	return m
}

// Search finds the chunks that best match query (the package func Search
// over this local index): BM25 candidates and, when the index has vectors
// and an embedder is given, HNSW candidates, fused with Reciprocal Rank
// Fusion.
func (ix *Index) Search(ctx context.Context, query string, opt index.SearchOptions) (index.Results, error) {
	return index.Search(ctx, ix, query, opt)
}

// SearchVector is Search with the query already embedded (vec may be nil
// for lexical only). Benchmarks and callers that embed elsewhere use it.
// A damaged index is ErrCorrupt.
func (ix *Index) SearchVector(ctx context.Context, query string, vec []float32, opt index.SearchOptions, embed time.Duration) (index.Results, error) {
	res, err := ix.searchVector(ctx, query, vec, opt, embed)
	return res, damaged(ix.name, err)
}

func (ix *Index) searchVector(ctx context.Context, query string, vec []float32, opt index.SearchOptions, embed time.Duration) (index.Results, error) {
	opt = opt.WithDefaults()
	res := index.Results{Mode: "lexical", Timings: index.Timings{Embed: embed}}
	var vecIDs []int64
	if vec != nil {
		t := time.Now()
		g, err := ix.vectorGraph(ctx)
		if err != nil {
			return res, err
		}
		if g != nil { // nil: no vector stored yet, keyword search only
			ef := opt.EfSearch
			if ef <= 0 {
				ef = graphEfSearch
			}
			ids, _, err := g.search(vec, opt.Depth, ef)
			if errors.Is(err, errGraphFormat) {
				// A vector of the file failed its checksum: search again
				// with a graph rebuilt from the stored vectors.
				if g, err = ix.replaceDamagedGraph(ctx, g); err != nil {
					return res, err
				}
				ids, _, err = g.search(vec, opt.Depth, ef)
			}
			if err != nil {
				return res, fmt.Errorf("%w: %v", index.ErrDimension, err)
			}
			res.Notice = ix.takeGraphNotice()
			vecIDs = ids
			res.Mode = "hybrid"
			res.Timings.Vector = time.Since(t)
		}
	}
	var lex []int64
	var cover []float64
	if !opt.NoLexical {
		t := time.Now()
		var err error
		if lex, cover, res.Known, err = ix.lexical(ctx, query, opt.Depth, !opt.NoProximity); err != nil {
			return res, err
		}
		res.Timings.Lexical = time.Since(t)
	} else if res.Mode == "hybrid" {
		res.Mode = "vector"
	}

	t := time.Now()
	byChunk, err := ix.chunksForVectors(ctx, vecIDs)
	if err != nil {
		return res, err
	}
	vecRanks := make([][]int64, len(vecIDs))
	for i, vid := range vecIDs {
		vecRanks[i] = byChunk[vid]
	}
	fused := index.FuseRRF(lex, cover, vecRanks, opt.RRFK, opt.Limit)
	ids := make([]int64, len(fused))
	byID := make(map[int64]index.Fused, len(fused))
	for i, c := range fused {
		ids[i], byID[c.ID] = c.ID, c
	}
	hits, err := ix.chunkHits(ctx, ids)
	if err != nil {
		return res, err
	}
	// chunkHits leaves out a chunk that is gone (a writer's race, or a
	// damaged row): match by id, not by position.
	for i := range hits {
		c := byID[hits[i].ChunkID]
		hits[i].Score, hits[i].LexicalRank, hits[i].VectorRank, hits[i].Coverage = c.Score, c.Lexical, c.Vector, c.Coverage
	}
	res.Hits = hits
	res.Timings.Fuse = time.Since(t)
	return res, nil
}

// chunksForVectors maps vector ids to the chunks that share them.
func (ix *Index) chunksForVectors(ctx context.Context, vecIDs []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(vecIDs) == 0 {
		return out, nil
	}
	rows, err := ix.st.db.QueryContext(ctx, `SELECT v.id, c.id FROM vectors v JOIN chunks c ON c.hash = v.hash WHERE v.id IN (`+placeholders(len(vecIDs))+`) ORDER BY c.id`, int64Args(vecIDs)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var vid, cid int64
		if err := rows.Scan(&vid, &cid); err != nil {
			return nil, err
		}
		out[vid] = append(out[vid], cid)
	}
	return out, rows.Err()
}

// chunkHits loads chunks by id, in the order given.
func (ix *Index) chunkHits(ctx context.Context, ids []int64) ([]index.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := ix.st.db.QueryContext(ctx, `SELECT c.id, s.root, d.path, c.start_line, c.end_line, c.heading, c.kind, c.text
		FROM chunks c JOIN documents d ON d.id = c.doc_id JOIN sources s ON s.id = d.source_id
		WHERE c.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[int64]index.Hit{}
	for rows.Next() {
		var h index.Hit
		if err := rows.Scan(&h.ChunkID, &h.Source, &h.Path, &h.Start, &h.End, &h.Heading, &h.Kind, &h.Text); err != nil {
			return nil, err
		}
		h.Source = ingest.SourceDir(h.Source, h.Path)
		byID[h.ChunkID] = h
	}
	out := make([]index.Hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := byID[id]; ok { // a chunk deleted since the ids were read is dropped
			out = append(out, h)
		}
	}
	return out, rows.Err()
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// vectorGraph returns the index's graph, loading it on first use and
// catching up with vectors that a `lore index` running beside this process
// has stored since (a long-lived chat must see them). A load that fails or
// is cancelled caches nothing: the next search tries again with its own
// context. A reader never writes the file: a missing, corrupt or stale graph
// is repaired in memory from the stored vectors, and the next `lore index`
// writes it back.
func (ix *Index) vectorGraph(ctx context.Context) (*vectorGraph, error) {
	ix.graphMu.Lock()
	defer ix.graphMu.Unlock()
	version, err := ix.st.vectorVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("load vector graph: %w", err)
	}
	if ix.graph != nil && version == ix.graphVersion {
		return ix.graph, nil
	}
	g := ix.graph
	if g == nil {
		d, _ := ix.st.meta(ctx, "dim")
		dim, _ := strconv.Atoi(d)
		if dim == 0 {
			// No vector stored yet (a first build still scanning, or an
			// empty folder): nothing to search by meaning.
			return nil, nil
		}
		if ix.graphBad {
			g = newVectorGraph(dim)
		} else if g, err = readGraphFile(filepath.Join(ix.dir, ix.gen, graphFile), dim); err != nil {
			if errors.Is(err, errGraphFormat) {
				ix.graphNotice = graphDamagedNotice + " (the next `lore index` saves it)"
			}
			g = newVectorGraph(dim)
		}
	}
	// syncGraph is idempotent, so a half-done catch-up is kept and finished
	// by the next call. A graph saved at this very version needs none: that
	// saves reading every vector id on each start.
	ix.graph = g
	if g.synced != version {
		if _, _, err := syncGraph(ctx, ix.st, g, nil); err != nil {
			return nil, fmt.Errorf("load vector graph: %w", err)
		}
		g.synced = version
		if g.tooSparse() {
			if g, err = ix.denserGraph(ctx, g); err != nil {
				return nil, fmt.Errorf("load vector graph: %w", err)
			}
			ix.graph = g
		}
	}
	ix.graphVersion = version
	return g, nil
}

// denserGraph stands in for g, caught up and found too sparse (a reader
// open across deletes): the graph file, when the build that made the
// deletes saved it compacted, which costs a mapping and a catch-up;
// otherwise a graph built anew from the stored vectors, which costs
// about a third of a millisecond per live 768-d node. A search beside
// this one may be walking g: it is not closed.
func (ix *Index) denserGraph(ctx context.Context, g *vectorGraph) (*vectorGraph, error) {
	if !ix.graphBad {
		if f, err := readGraphFile(filepath.Join(ix.dir, ix.gen, graphFile), g.dim); err == nil {
			if f.synced != g.synced {
				if _, _, err := syncGraph(ctx, ix.st, f, nil); err != nil {
					f.close()
					return nil, err
				}
				f.synced = g.synced
			}
			if !f.tooSparse() {
				return f, nil
			}
			f.close()
		}
	}
	return compactGraph(ctx, ix.st, g, true)
}

// replaceDamagedGraph drops a graph found damaged while searching it and
// builds one from the stored vectors in its place (said once). The damaged
// one is not closed: a search beside this one may still be reading it.
func (ix *Index) replaceDamagedGraph(ctx context.Context, bad *vectorGraph) (*vectorGraph, error) {
	ix.graphMu.Lock()
	if ix.graph == bad {
		ix.graph = nil
		ix.graphNotice = graphDamagedNotice + " (the next `lore index` saves it)"
		ix.graphBad = true
	}
	ix.graphMu.Unlock()
	return ix.vectorGraph(ctx)
}

// vectorVersion changes whenever vectors are added (a higher id) or a build
// finishes (which is when unused vectors are dropped). Both are index
// lookups, cheap enough to run before every vector search.
func (s *database) vectorVersion(ctx context.Context) (string, error) {
	var maxID int64
	var built string
	err := s.db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(id) FROM vectors), 0), coalesce((SELECT value FROM meta WHERE key = 'built_at'), '')`).Scan(&maxID, &built)
	return strconv.FormatInt(maxID, 10) + "/" + built, err
}

// graphState is embedded in Index.
type graphState struct {
	graphMu      sync.Mutex
	graph        *vectorGraph
	graphVersion string
	graphNotice  string // said once, by the search that loaded the graph
	graphBad     bool   // the file failed a check: rebuild from the store
}

// graphDamagedNotice is said when a damaged graph file was replaced. The
// graph is derived from the vectors in index.db: rebuilding it costs CPU
// time, not a single embedding, so lore repairs it rather than stop.
const graphDamagedNotice = "the vector graph file was damaged: rebuilt it from the stored vectors"

func (ix *Index) takeGraphNotice() string {
	ix.graphMu.Lock()
	defer ix.graphMu.Unlock()
	n := ix.graphNotice
	ix.graphNotice = ""
	return n
}
