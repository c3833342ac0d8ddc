package index

import "sort"

// Fused is one candidate of a reciprocal rank fusion.
type Fused struct {
	ID       int64   // the chunk's id
	Score    float64 // the sum of 1/(k+rank) over the rankings that hold it
	Lexical  int     // its rank in the lexical ranking, 1-based; 0 if absent
	Vector   int     // its rank in the vector ranking, 1-based; 0 if absent
	Coverage float64 // the share of the query's words it holds (lexical only)
}

// FuseRRF fuses a lexical ranking (chunk ids, best first, with each one's
// query-word coverage) and a vector ranking (best first; one rank may
// name several chunks, those that share a vector) by reciprocal rank
// fusion with constant k, and returns the best limit, ties broken by id
// so that equal scores always come back in one order. Every store's
// hybrid search that fuses two lists uses it, so they rank alike.
func FuseRRF(lexical []int64, coverage []float64, vector [][]int64, k float64, limit int) []Fused {
	cands := map[int64]*Fused{}
	get := func(id int64) *Fused {
		c, ok := cands[id]
		if !ok {
			c = &Fused{ID: id}
			cands[id] = c
		}
		return c
	}
	for i, id := range lexical {
		c := get(id)
		c.Lexical, c.Score = i+1, c.Score+1/(k+float64(i+1))
		if i < len(coverage) {
			c.Coverage = coverage[i]
		}
	}
	for i, ids := range vector {
		for _, id := range ids {
			if c := get(id); c.Vector == 0 {
				c.Vector, c.Score = i+1, c.Score+1/(k+float64(i+1))
			}
		}
	}
	out := make([]Fused, 0, len(cands))
	for _, c := range cands {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
