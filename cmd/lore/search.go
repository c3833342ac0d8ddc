package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/wire"
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
  lore search -- --keepalive               # a query that starts with -
  lore search --eval questions.jsonl       # = lore eval --no-answers (docs/eval.md)`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.eval == "" && strings.TrimSpace(strings.Join(args, "")) == "" {
				return usageError{errors.New("search needs a query: lore search \"how do I ...\"")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if opts.k, err = topK(cmd, opts.k, cfg.TopK); err != nil {
				return err
			}
			if opts.eval != "" {
				// The retrieval part of lore eval, with lore search's -k.
				return runEvalCmd(cmd.Context(), cfg, g, &evalOptions{file: opts.eval, k: opts.k, noRerank: opts.noRerank,
					noAnswers: true, json: opts.json, parallel: 2}, streams)
			}
			return runSearch(cmd.Context(), cfg, strings.Join(args, " "), opts, streams)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&opts.k, "k", "k", 5, "how many passages to print")
	f.BoolVar(&opts.noRerank, "no-rerank", false, "keep the fused order; do not run the cross-encoder")
	f.BoolVar(&opts.json, "json", false, "print JSON")
	f.StringVar(&opts.eval, "eval", "", "score a JSONL question set: the retrieval part of lore eval (docs/eval.md)")
	f.String("reranker", "auto", "auto, onnxruntime, hugot or none")
	f.String("rerank-model", "", "installed reranker model to use")
	f.Int("rerank-candidates", 0, "how many fused results the reranker scores")
	f.Int("search-depth", 50, "candidates from each retriever")
	return cmd
}

// topK is -k when given (checked like the top-k setting), else top-k.
func topK(cmd *cobra.Command, k, configured int) (int, error) {
	if !cmd.Flags().Changed("k") {
		return configured, nil
	}
	if k < 1 || k > 100 {
		return 0, usageError{fmt.Errorf("-k %d is outside 1..100", k)}
	}
	return k, nil
}

func runSearch(ctx context.Context, cfg config.Config, query string, opts *searchOptions, streams *ioStreams) error {
	notice := func(msg string) {
		slog.Info(msg)
		if !opts.json || streams.ErrTTY {
			fmt.Fprintf(streams.Err, "note: %s\n", termsafe.Text(msg))
		}
	}
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: opts.noRerank, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	res, err := eng.Search(ctx, app.SearchRequest{Query: query, K: opts.k, Stages: app.Stages{NoRerank: opts.noRerank}})
	if err != nil {
		return err
	}
	for _, n := range eng.Notices() {
		notice(n)
	}
	if res.Notice != "" {
		notice(res.Notice)
	}
	if opts.json {
		return writeJSON(streams.Out, wire.NewSearch(query, cfg.Index, res))
	}
	printSearch(streams.Out, res, streams.styled(streams.OutTTY))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func printSearch(w io.Writer, res app.SearchResult, tty bool) {
	if len(res.Passages) == 0 {
		fmt.Fprintln(w, "no matching passages")
		return
	}
	bold, dim, reset := "", "", ""
	if tty {
		bold, dim, reset = "\x1b[1m", "\x1b[2m", "\x1b[0m"
	}
	for i, h := range res.Passages {
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
		fmt.Fprintf(w, "%s%2d. %s:%d-%d%s", bold, i+1, termsafe.Line(h.Shown()), h.Start, h.End, reset)
		if h.Heading != "" {
			fmt.Fprintf(w, " > %s", termsafe.Line(h.Heading))
		}
		fmt.Fprintf(w, "\n    %s%s%s%s\n", dim, scores, ranks, reset)
		for _, l := range excerpt.Lines(h.Text, 3, 100) {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintln(w)
	}
}
