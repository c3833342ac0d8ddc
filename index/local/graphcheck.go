package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/hnsw"
)

// CheckGraph opens the graph file, verifies every checksum in it (the
// links, the int8 and the full vectors: it reads the whole file) and
// compares its keys with the vectors stored in index.db.
func (ix *Index) CheckGraph(ctx context.Context) (index.GraphStatus, error) {
	var gs index.GraphStatus
	d, _ := ix.st.meta(ctx, "dim")
	dim, _ := strconv.Atoi(d)
	if err := ix.st.db.QueryRowContext(ctx, `SELECT count(*) FROM vectors`).Scan(&gs.Vectors); err != nil {
		return gs, damaged(ix.name, err)
	}
	if dim == 0 && gs.Vectors == 0 {
		return gs, nil
	}
	gs.Needed = true
	vg, err := readGraphFile(filepath.Join(ix.dir, ix.gen, graphFile), dim)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		gs.Problem = "the graph file is missing"
		return gs, nil
	case errors.Is(err, errGraphVersion):
		gs.Present, gs.Problem = true, "the graph file was written by another version of lore"
		return gs, nil
	case errors.Is(err, errGraphFormat):
		gs.Present, gs.Problem = true, graphDamage(err)
		return gs, nil
	case err != nil:
		return gs, fmt.Errorf("read the vector graph: %w", err)
	}
	defer vg.close()
	gs.Present, gs.Nodes = true, vg.Len()
	if err := vg.g.Verify(); err != nil {
		gs.Problem = graphDamage(err)
		return gs, nil
	}
	rows, err := ix.st.db.QueryContext(ctx, `SELECT id FROM vectors`)
	if err != nil {
		return gs, damaged(ix.name, err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return gs, damaged(ix.name, err)
		}
		if vg.has(id) {
			seen++
		} else {
			gs.Missing++
		}
	}
	if err := rows.Err(); err != nil {
		return gs, damaged(ix.name, err)
	}
	gs.Extra = gs.Nodes - seen
	// Batches since the file was saved counted what they added and dropped
	// (graphLagged): a file behind by no more is as live sync left it.
	lagS, _ := ix.st.meta(ctx, "graph_lag")
	if lag, _ := strconv.Atoi(lagS); gs.Missing+gs.Extra <= lag {
		gs.Lag = gs.Missing + gs.Extra
	}
	switch {
	case gs.Lag == 0 && (gs.Missing > 0 || gs.Extra > 0):
		gs.Problem = fmt.Sprintf("the graph file is out of step with index.db (%d vectors missing from it, %d it should not hold)", gs.Missing, gs.Extra)
	case vg.tooSparse():
		gs.Problem = fmt.Sprintf("the graph file holds %d deleted nodes for %d live ones, more than vector search can route around (it misses true neighbours; `lore index` saves it compacted)", vg.tombstones(), vg.Len())
	}
	return gs, nil
}

// graphDamage says what is wrong with a graph file, without repeating
// hnsw's "damaged graph file".
func graphDamage(err error) string {
	return "the graph file is damaged (" + strings.TrimPrefix(err.Error(), hnsw.ErrDamaged.Error()+": ") + ")"
}
