package wire

import (
	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
)

// Search is what `lore search --json` prints: a query's passages after
// retrieval and reranking, best first.
type Search struct {
	Query    string             `json:"query"`
	Index    string             `json:"index"`
	Mode     string             `json:"mode"`     // "hybrid" or "lexical"
	Reranker string             `json:"reranker"` // the cross-encoder that ran, or "none"
	Results  []Result           `json:"results"`  // never null
	Timings  map[string]float64 `json:"timings_ms"`
}

// Result is one passage of a Search. The scores and ranks are null when
// their stage did not run or did not find the passage.
type Result struct {
	Rank        int      `json:"rank"`   // 1-based
	Source      string   `json:"source"` // the folder Path is relative to
	Path        string   `json:"path"`
	StartLine   int      `json:"start_line"`
	EndLine     int      `json:"end_line"`
	Heading     string   `json:"heading"`
	Text        string   `json:"text"`
	Score       float64  `json:"score"`        // fused (RRF) retrieval score
	RerankScore *float32 `json:"rerank_score"` // cross-encoder logit
	LexicalRank *int     `json:"lexical_rank"`
	VectorRank  *int     `json:"vector_rank"`
}

// NewSearch is the Search of query on the index named indexName.
func NewSearch(query, indexName string, res app.SearchResult) Search {
	out := Search{Query: query, Index: indexName, Mode: res.Mode, Reranker: res.Reranker, Results: make([]Result, 0, len(res.Passages)),
		Timings: map[string]float64{"embed": ms(res.Timings["embed"]), "vector": ms(res.Timings["vector"]), "lexical": ms(res.Timings["lexical"]),
			"fuse": ms(res.Timings["fuse"]), "rerank": ms(res.Rerank), "total": ms(res.Total)}}
	for i, p := range res.Passages {
		out.Results = append(out.Results, NewResult(i+1, p))
	}
	return out
}

// NewResult is passage p at rank (1-based).
func NewResult(rank int, p agent.Passage) Result {
	return Result{Rank: rank, Source: p.Root, Path: p.Path, StartLine: p.Start, EndLine: p.End, Heading: p.Heading, Text: p.Text,
		Score: p.Score, RerankScore: p.Rerank, LexicalRank: rankPtr(p.LexicalRank), VectorRank: rankPtr(p.VectorRank)}
}

// rankPtr is a 1-based rank, nil for 0 (not found by that retriever).
func rankPtr(r int) *int {
	if r == 0 {
		return nil
	}
	return &r
}
