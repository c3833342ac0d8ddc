package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"lore/config"
	"lore/index"
	"lore/internal/ollama"
	"lore/rerank"
)

type searchOptions struct {
	k        int
	noRerank bool
	json     bool
	eval     string
}

func newSearchCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &searchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Print the passages that best match a query, with scores",
		Long: `Search the index: keyword (BM25) and vector candidates fused with Reciprocal
Rank Fusion, then reordered by a cross-encoder when one is installed. No answer
is generated.

Rerank scores are the cross-encoder's raw logits: above 0 means the model
thinks the passage more likely relevant than not.`,
		Example: `  lore search "how do I cancel a context after a timeout"
  lore search -k 10 OLLAMA_HOST
  lore search --json "exec.LookPath" | jq '.results[0].path'
  lore search --eval questions.jsonl       # hit@k and MRR of a question set`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.eval == "" && len(args) == 0 {
				return usageError{errors.New("search needs a query: lore search \"how do I ...\"")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("k") {
				opts.k = cfg.TopK
			}
			if opts.eval != "" {
				return runEval(cmd.Context(), cfg, opts, streams)
			}
			return runSearch(cmd.Context(), cfg, strings.Join(args, " "), opts, streams)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&opts.k, "k", "k", 5, "how many passages to print")
	f.BoolVar(&opts.noRerank, "no-rerank", false, "keep the fused order; do not run the cross-encoder")
	f.BoolVar(&opts.json, "json", false, "print JSON")
	f.StringVar(&opts.eval, "eval", "", "score a JSONL question set (see ../shared/eval) instead of searching")
	f.String("reranker", "auto", "auto, onnxruntime, hugot or none")
	f.String("rerank-model", "", "installed reranker model to use")
	f.Int("rerank-candidates", 0, "how many fused results the reranker scores")
	f.Int("search-depth", 50, "candidates from each retriever")
	return cmd
}

// searcher runs retrieval for one index: the index, the query embedder
// and the reranker, opened once and used for many queries.
type searcher struct {
	ix     *index.Index
	emb    index.Embedder
	rr     rerankSetup
	cfg    config.Config
	notice func(string)
}

func openSearcher(ctx context.Context, cfg config.Config, noRerank bool, notice func(string)) (*searcher, error) {
	return openSearcherDial(ctx, cfg, noRerank, notice, dialer())
}

func openSearcherDial(ctx context.Context, cfg config.Config, noRerank bool, notice func(string), dial ollama.DialFunc) (*searcher, error) {
	ix, err := index.Open(cfg.IndexDir(), cfg.Index)
	if err != nil {
		return nil, err
	}
	s := &searcher{ix: ix, cfg: cfg, notice: notice}
	if model := ix.EmbedderModel(ctx); model != "none" {
		host, err := config.ParseOllamaHost(cfg.OllamaHost)
		if err != nil {
			ix.Close()
			return nil, err
		}
		emb := index.NewOllamaEmbedder(ollama.NewClient(host, dial), host.String(), model)
		if sameModel(model, cfg.ChatModel) {
			emb.QueryNumCtx = cfg.NumCtx
		}
		s.emb = emb
	} else {
		notice("lexical search only: the index was built with --embedder none")
	}
	if s.rr, err = openReranker(cfg, noRerank); err != nil {
		ix.Close()
		return nil, err
	}
	if s.rr.notice != "" {
		notice(s.rr.notice)
	}
	return s, nil
}

// sameModel compares Ollama model names, an untagged name meaning :latest.
func sameModel(a, b string) bool {
	tag := func(n string) string {
		if !strings.Contains(n[strings.LastIndexByte(n, '/')+1:], ":") {
			return n + ":latest"
		}
		return n
	}
	return tag(a) == tag(b)
}

func (s *searcher) Close() {
	s.rr.r.Close()
	s.ix.Close()
}

// scoredHit is a search result with its rerank score (nil when not reranked).
type scoredHit struct {
	index.Hit
	Rerank *float32
}

type searchResult struct {
	Mode    string
	Hits    []scoredHit
	Timings index.Timings
	Rerank  time.Duration
	Total   time.Duration
}

// retrieve runs hybrid retrieval for n candidates. Without Ollama the
// query cannot be embedded; keyword search still works, and says so.
func (s *searcher) retrieve(ctx context.Context, query string, n int) (index.Results, error) {
	opt := index.SearchOptions{Limit: n, Depth: s.cfg.SearchDepth, RRFK: s.cfg.RRFK, Embedder: s.emb}
	res, err := s.ix.Search(ctx, query, opt)
	if err != nil && s.emb != nil && errors.Is(err, ollama.ErrUnreachable) {
		s.notice("Ollama is not reachable, so this is lexical search only: " + firstLine(err.Error()))
		s.emb, opt.Embedder = nil, nil
		res, err = s.ix.Search(ctx, query, opt)
	}
	return res, err
}

// search retrieves candidates and reranks them, returning the best k.
func (s *searcher) search(ctx context.Context, query string, k int) (searchResult, error) {
	start := time.Now()
	res, err := s.retrieve(ctx, query, max(k, s.rr.candidates))
	if err != nil {
		return searchResult{}, err
	}
	out := searchResult{Mode: res.Mode, Timings: res.Timings}
	hits := make([]scoredHit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = scoredHit{Hit: h}
	}
	if _, none := s.rr.r.(rerank.None); !none && len(hits) > 0 {
		t := time.Now()
		passages := make([]string, len(hits))
		for i, h := range hits {
			passages[i] = h.Heading + "\n" + h.Text
		}
		scores, err := s.rr.r.Rerank(ctx, query, passages)
		if err != nil {
			return out, fmt.Errorf("rerank: %w", err)
		}
		reordered := make([]scoredHit, len(scores))
		for i, sc := range scores {
			score := sc.Score
			reordered[i] = hits[sc.Index]
			reordered[i].Rerank = &score
		}
		hits = reordered
		out.Rerank = time.Since(t)
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	out.Hits = hits
	out.Total = time.Since(start)
	return out, nil
}

func runSearch(ctx context.Context, cfg config.Config, query string, opts *searchOptions, streams *ioStreams) error {
	notice := func(msg string) {
		slog.Info(msg)
		if !opts.json || streams.ErrTTY {
			fmt.Fprintf(streams.Err, "note: %s\n", msg)
		}
	}
	s, err := openSearcher(ctx, cfg, opts.noRerank, notice)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.search(ctx, query, opts.k)
	if err != nil {
		return err
	}
	if opts.json {
		return writeSearchJSON(streams.Out, query, cfg.Index, s.rr.r.Backend(), res)
	}
	printSearch(streams.Out, res, streams.OutTTY)
	return nil
}

type searchJSON struct {
	Query    string             `json:"query"`
	Index    string             `json:"index"`
	Mode     string             `json:"mode"`
	Reranker string             `json:"reranker"`
	Results  []searchResultJSON `json:"results"`
	Timings  map[string]float64 `json:"timings_ms"`
}

type searchResultJSON struct {
	Rank        int      `json:"rank"`
	Source      string   `json:"source"`
	Path        string   `json:"path"`
	StartLine   int      `json:"start_line"`
	EndLine     int      `json:"end_line"`
	Heading     string   `json:"heading"`
	Text        string   `json:"text"`
	Score       float64  `json:"score"`
	RerankScore *float32 `json:"rerank_score"`
	LexicalRank *int     `json:"lexical_rank"`
	VectorRank  *int     `json:"vector_rank"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func rankPtr(r int) *int {
	if r == 0 {
		return nil
	}
	return &r
}

func writeSearchJSON(w io.Writer, query, indexName, reranker string, res searchResult) error {
	out := searchJSON{Query: query, Index: indexName, Mode: res.Mode, Reranker: reranker, Results: []searchResultJSON{},
		Timings: map[string]float64{"embed": ms(res.Timings.Embed), "vector": ms(res.Timings.Vector), "lexical": ms(res.Timings.Lexical),
			"fuse": ms(res.Timings.Fuse), "rerank": ms(res.Rerank), "total": ms(res.Total)}}
	for i, h := range res.Hits {
		out.Results = append(out.Results, searchResultJSON{Rank: i + 1, Source: h.Source, Path: h.Path, StartLine: h.Start, EndLine: h.End,
			Heading: h.Heading, Text: h.Text, Score: h.Score, RerankScore: h.Rerank, LexicalRank: rankPtr(h.LexicalRank), VectorRank: rankPtr(h.VectorRank)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func printSearch(w io.Writer, res searchResult, tty bool) {
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no matching passages")
		return
	}
	bold, dim, reset := "", "", ""
	if tty {
		bold, dim, reset = "\x1b[1m", "\x1b[2m", "\x1b[0m"
	}
	for i, h := range res.Hits {
		scores := fmt.Sprintf("fused %.4f", h.Score)
		if h.Rerank != nil {
			scores = fmt.Sprintf("rerank %+.2f  %s", *h.Rerank, scores)
		}
		ranks := ""
		if h.LexicalRank > 0 {
			ranks += fmt.Sprintf(" bm25 #%d", h.LexicalRank)
		}
		if h.VectorRank > 0 {
			ranks += fmt.Sprintf(" vector #%d", h.VectorRank)
		}
		fmt.Fprintf(w, "%s%2d. %s:%d-%d%s", bold, i+1, h.Path, h.Start, h.End, reset)
		if h.Heading != "" {
			fmt.Fprintf(w, " > %s", h.Heading)
		}
		fmt.Fprintf(w, "\n    %s%s%s%s\n", dim, scores, ranks, reset)
		for _, l := range excerpt(h.Text, 3, 100) {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintln(w)
	}
}

// excerpt is the first n non-blank lines of text, each cut to width.
func excerpt(text string, n, width int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if r := []rune(l); len(r) > width {
			l = string(r[:width-1]) + "…"
		}
		out = append(out, l)
		if len(out) == n {
			break
		}
	}
	return out
}
