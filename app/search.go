package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/websearch"
)

// SearchRequest is one search.
type SearchRequest struct {
	// Index names the index to search ("": the configured one).
	Index string
	Query string
	// K is how many passages to return (<= 0: top-k).
	K int
	// Stages switches parts of the search off.
	Stages Stages
}

// SearchResult is what Search found: the passages in ranked order.
type SearchResult struct {
	agent.Ranking
	Index    string // the index searched, by name
	Reranker string
	Total    time.Duration
}

// Stages switch parts of the one search path off, for ablations (lore eval
// --lexical-only, --vector-only, --no-rerank). The zero value runs them all.
type Stages struct {
	NoVector  bool // keyword search only
	NoLexical bool // vector search only: needs an index built with embeddings
	NoRerank  bool // keep the fused order
}

// ErrNoVectors means a vector-only search on an index without vectors, or
// with Ollama unreachable so that the query cannot be embedded.
var ErrNoVectors = errors.New("vector-only search needs query embeddings")

// Search runs the one retrieve-then-rerank path on the index req names and
// returns the best k passages. Notices (lexical only, no reranker) are in
// the result. An index that is not built is an error wrapping
// index.ErrNoIndex; a busy resource one wrapping ErrBusy.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (SearchResult, error) {
	start := time.Now()
	name, err := resolveIndex(e.cfg, req.Index)
	if err != nil {
		return SearchResult{}, err
	}
	k := req.K
	if k <= 0 {
		k = e.cfg.TopK
	}
	ranking, err := agent.Rank(ctx, retriever{e, name, req.Stages}, e.stageReranker(req.Stages), req.Query, max(k, e.rr.candidates), nil)
	if err != nil {
		return SearchResult{}, err
	}
	if len(ranking.Passages) > k {
		ranking.Passages = ranking.Passages[:k]
	}
	return SearchResult{Ranking: ranking, Index: name, Reranker: e.Reranker(), Total: time.Since(start)}, nil
}

// Notices are what the user should hear once per process about how
// searches run: no reranker model installed.
func (e *Engine) Notices() []string {
	if e.rr.notice != "" && e.once("rerank") {
		return []string{e.rr.notice}
	}
	return nil
}

// retriever is the engine as the agent's Retriever: hybrid search on the
// current generation of the index. Without Ollama the query cannot be
// embedded; keyword search still works, and says so.
type retriever struct {
	e     *Engine
	index string // resolved: never ""
	st    Stages
}

func (r retriever) Retrieve(ctx context.Context, query string, n int) (agent.Retrieval, error) {
	e := r.e
	o, err := e.acquire(ctx, r.index)
	if err != nil {
		return agent.Retrieval{}, err
	}
	defer e.release(o)
	cfg := e.cfg
	opt := index.SearchOptions{Limit: n, Depth: cfg.SearchDepth, RRFK: cfg.RRFK, Embedder: o.emb, NoLexical: r.st.NoLexical}
	var notice string
	switch {
	case r.st.NoVector:
		opt.Embedder = nil
	case r.st.NoLexical && o.emb == nil:
		return agent.Retrieval{}, fmt.Errorf("%w: index %s was built with --embedder none (lore index --rebuild --embedder ollama)", ErrNoVectors, r.index)
	case r.st.NoLexical && e.recentlyDown():
		return agent.Retrieval{}, fmt.Errorf("%w: %s", ErrNoVectors, lexicalWhileDown)
	case o.emb == nil:
		if e.once("lexical:" + o.ix.Generation()) {
			notice = "lexical search only: the index was built with --embedder none"
		}
	case e.recentlyDown():
		opt.Embedder = nil
		if e.onceThisOutage("lexical") {
			notice = lexicalWhileDown
		}
	}
	res, err := index.Search(ctx, o.ix, query, opt)
	if err != nil && opt.Embedder != nil && errors.Is(err, ollama.ErrUnreachable) && ctx.Err() == nil && !r.st.NoLexical {
		news := e.sawOllamaDown()
		if e.onceThisOutage("lexical") {
			notice = lexicalWhileDown
			if news { // the first to find it down says why
				notice += ": " + excerpt.FirstLine(err.Error())
			}
		}
		opt.Embedder = nil
		res, err = index.Search(ctx, o.ix, query, opt)
	} else if err == nil && opt.Embedder != nil {
		e.sawOllamaUp()
	}
	if err != nil {
		return agent.Retrieval{}, err
	}
	if res.Notice != "" {
		notice = strings.TrimPrefix(notice+"; "+res.Notice, "; ")
	}
	out := agent.Retrieval{Mode: res.Mode, Notice: notice, Known: res.Known, Words: analysis.Weight(analysis.QueryWords(query)), Passages: make([]agent.Passage, len(res.Hits)),
		Timings: map[string]time.Duration{"embed": res.Timings.Embed, "vector": res.Timings.Vector, "lexical": res.Timings.Lexical, "fuse": res.Timings.Fuse}}
	for i, h := range res.Hits {
		out.Passages[i] = agent.Passage{Root: h.Source, Path: h.Path, Start: h.Start, End: h.End, Heading: h.Heading, Text: h.Text,
			Score: h.Score, LexicalRank: h.LexicalRank, VectorRank: h.VectorRank, Coverage: h.Coverage}
	}
	agent.NamePassages(out.Passages)
	return out, nil
}

const lexicalWhileDown = "Ollama is not reachable, so this is lexical search only"

// recentlyDown is true for a while after Ollama was found unreachable.
func (e *Engine) recentlyDown() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.ollamaDown.IsZero() && time.Since(e.ollamaDown) < ollamaRetry
}

// rerankerAdapter is the engine's reranker as the agent's. One that fails
// is not run again in this process: the agent keeps the fused order and
// says why once; later searches do without it.
type rerankerAdapter struct{ e *Engine }

func (a rerankerAdapter) Rerank(ctx context.Context, query string, passages []string) ([]agent.Scored, error) {
	release, err := a.e.rerank.Acquire(ctx)
	if err != nil {
		return nil, err // busy, or ctx ended: the model did not fail
	}
	defer release()
	r := a.e.rr.r
	rs, err := r.Rerank(ctx, query, passages)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		slog.Warn("rerank failed", "model", r.Model(), "backend", r.Backend(), "err", err)
		a.e.mu.Lock()
		a.e.rrFailed = true
		a.e.mu.Unlock()
		return nil, fmt.Errorf("reranker model %s: %s: %s", r.Model(), excerpt.FirstLine(err.Error()), ModelFix(r.Model()))
	}
	out := make([]agent.Scored, len(rs))
	for i, r := range rs {
		out[i] = agent.Scored{Index: r.Index, Score: r.Score}
	}
	return out, err
}

type webAdapter struct{ w websearch.Searcher }

func (a webAdapter) Name() string { return a.w.Name() }

func (a webAdapter) Search(ctx context.Context, query string) ([]agent.WebResult, error) {
	rs, err := a.w.Search(ctx, query)
	out := make([]agent.WebResult, len(rs))
	for i, r := range rs {
		out[i] = agent.WebResult{URL: r.URL, Title: r.Title, Content: r.Content, Score: r.Score}
	}
	return out, err
}

// SampleChunks picks up to n passages of at least minChars at random from
// the default index (lore eval generate).
func (e *Engine) SampleChunks(ctx context.Context, n, minChars int, seed uint64) ([]agent.Passage, error) {
	o, err := e.acquire(ctx, "")
	if err != nil {
		return nil, err
	}
	defer e.release(o)
	hits, err := o.ix.SampleChunks(ctx, n, minChars, seed)
	out := make([]agent.Passage, len(hits))
	for i, h := range hits {
		out[i] = agent.Passage{Root: h.Source, Path: h.Path, Start: h.Start, End: h.End, Heading: h.Heading, Text: h.Text}
	}
	return out, err
}
