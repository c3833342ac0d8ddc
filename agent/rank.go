package agent

import (
	"context"
	"errors"
	"time"

	"github.com/lore-cli/lore/internal/admit"
)

// Retrieval is what a Retriever found for one query.
type Retrieval struct {
	Passages []Passage // best first by fused score
	Mode     string    // "hybrid" or "lexical"
	// Known is the share of the query's content words the index holds
	// anywhere (index.Results.Known): the keyword-only route's signal.
	Known float64
	// Words is how many content words of the query Coverage and Known
	// count (analysis.Weight: a CJK character is half a word): a
	// passage's Coverage times Words is how many of them it holds.
	Words float64
	// Notice says why the search was narrower than asked (no embedder,
	// Ollama down): shown to the user once, as a Notice event.
	Notice string
	// Timings of the retriever's own steps (embed, vector, lexical, fuse).
	Timings map[string]time.Duration
}

// Ranking is a query's passages after the one retrieve-then-rerank path.
type Ranking struct {
	Retrieval
	// Passages is Retrieval.Passages reordered by the reranker, each with
	// its Rerank score set (unchanged when no reranker ran).
	Passages []Passage
	Best     *float32 // the best rerank logit; nil without a reranker
	Rerank   time.Duration
}

// RerankText is what the cross-encoder reads of a passage.
func RerankText(p Passage) string { return p.Heading + "\n" + p.Text }

// Rank retrieves n candidates for query and reorders them with rr (nil, or
// an rr that fails, keeps the fused order). It is lore's one
// retrieve-then-rerank path: every turn, `lore search` and `lore search
// --eval` call it, so what eval measures is what ask does. stage, when not
// nil, wraps each step (the agent times them as events).
func Rank(ctx context.Context, ret Retriever, rr Reranker, query string, n int, stage func(Stage, func() error) error) (Ranking, error) {
	if stage == nil {
		stage = func(_ Stage, fn func() error) error { return fn() }
	}
	var out Ranking
	if err := stage(StageRetrieve, func() error {
		var err error
		out.Retrieval, err = ret.Retrieve(ctx, query, n)
		return err
	}); err != nil {
		return out, err
	}
	// The reranker reads every piece of a long line, and the one it likes
	// best stands for the line.
	out.Passages = out.Retrieval.Passages
	if rr == nil || len(out.Passages) == 0 {
		out.Passages = oncePerLine(out.Passages)
		return out, nil
	}
	var scores []Scored
	start := time.Now()
	if err := stage(StageRerank, func() error {
		texts := make([]string, len(out.Passages))
		for i, p := range out.Passages {
			texts[i] = RerankText(p)
		}
		var err error
		scores, err = rr.Rerank(ctx, query, texts)
		return err
	}); err != nil {
		// A busy reranker refuses the request (a server answers 429): a
		// fused order under load would be a silently worse answer.
		if ctx.Err() != nil || errors.Is(err, admit.ErrBusy) {
			return out, err
		}
		// A broken reranker costs the ordering, not the search or the
		// answer: the fused order stands, unscored, and the user hears why.
		if out.Notice != "" {
			out.Notice += "; "
		}
		out.Notice += "reranking failed, results are in fused order: " + err.Error()
		out.Passages = oncePerLine(out.Passages)
		return out, nil
	}
	out.Rerank = time.Since(start)
	ranked := make([]Passage, 0, len(scores))
	for _, s := range scores {
		if s.Index < 0 || s.Index >= len(out.Passages) {
			continue
		}
		p := out.Passages[s.Index]
		score := s.Score
		p.Rerank = &score
		ranked = append(ranked, p)
	}
	out.Passages = oncePerLine(ranked)
	if len(out.Passages) > 0 {
		out.Best = out.Passages[0].Rerank
	}
	return out, nil
}

// oncePerLine keeps the first of passages that cite the same lines of the
// same file. Only the pieces of one line too long for a chunk (a generated
// table, minified code) do: lore cites lines, so listing each piece would
// show one citation several times over and crowd out other files.
func oncePerLine(ps []Passage) []Passage {
	type cite struct {
		root, path string
		start, end int
	}
	seen := make(map[cite]bool, len(ps))
	out := ps[:0:0]
	for _, p := range ps {
		c := cite{p.Root, p.Path, p.Start, p.End}
		if !seen[c] {
			seen[c] = true
			out = append(out, p)
		}
	}
	return out
}
