package local

import (
	"context"
	"math/rand/v2"

	"github.com/lore-cli/lore/index"
)

// SampleChunks returns up to n chunks chosen at random (reproducibly for a
// seed) among those of at least minChars characters: the material lore eval
// generate drafts questions from. Tiny chunks (a heading, a closing brace)
// make questions nobody would ask.
func (ix *Index) SampleChunks(ctx context.Context, n int, minChars int, seed uint64) ([]index.Hit, error) {
	rows, err := ix.st.db.QueryContext(ctx, `SELECT id FROM chunks WHERE length(text) >= ? ORDER BY id`, minChars)
	if err != nil {
		return nil, damaged(ix.name, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, damaged(ix.name, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, damaged(ix.name, err)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	hits, err := ix.chunkHits(ctx, ids[:min(n, len(ids))])
	return hits, damaged(ix.name, err)
}
