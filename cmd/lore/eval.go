package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"lore/app"
	"lore/config"
)

// evalQuestion is one line of a question set (docs/eval.md).
type evalQuestion struct {
	ID         string `json:"id"`
	Question   string `json:"question"`
	Kind       string `json:"kind"`
	Answerable *bool  `json:"answerable"`
	Gold       []struct {
		Path  string `json:"path"`
		Lines [2]int `json:"lines"`
	} `json:"gold"`
}

type evalScore struct {
	N     int     `json:"n"`
	Hit1  float64 `json:"hit@1"`
	HitK  float64 `json:"hit@k"`
	MRR   float64 `json:"mrr"`
	Error int     `json:"errors"`
}

// runEval runs every answerable question through the same search as
// `lore search` and prints hit@1, hit@k and MRR overall and by kind. A
// result is a hit when its path is a gold path and its lines overlap.
func runEval(ctx context.Context, cfg config.Config, opts *searchOptions, streams *ioStreams) error {
	f, err := os.Open(opts.eval)
	if err != nil {
		return fmt.Errorf("question set: %w", err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var q evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return fmt.Errorf("%s:%d: %w", opts.eval, line, err)
		}
		if q.Answerable == nil || *q.Answerable {
			qs = append(qs, q)
		}
	}
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: opts.noRerank, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	for _, n := range eng.Notices() {
		fmt.Fprintf(streams.Err, "note: %s\n", n)
	}
	reranker := eng.Reranker()
	scores := map[string]*evalScore{"all": {}}
	for _, q := range qs {
		rank := 0
		res, err := eng.Search(ctx, q.Question, opts.k)
		for i, h := range res.Passages {
			for _, g := range q.Gold {
				if rank == 0 && h.Path == g.Path && h.Start <= g.Lines[1] && h.End >= g.Lines[0] {
					rank = i + 1
				}
			}
		}
		for _, key := range []string{"all", q.Kind} {
			sc := scores[key]
			if sc == nil {
				sc = &evalScore{}
				scores[key] = sc
			}
			sc.N++
			if err != nil {
				sc.Error++
				continue
			}
			if rank == 1 {
				sc.Hit1++
			}
			if rank > 0 {
				sc.HitK++
				sc.MRR += 1 / float64(rank)
			}
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, sc := range scores {
		n := float64(max(sc.N, 1))
		sc.Hit1, sc.HitK, sc.MRR = sc.Hit1/n, sc.HitK/n, sc.MRR/n
	}
	if opts.json {
		return json.NewEncoder(streams.Out).Encode(map[string]any{"k": opts.k, "reranker": reranker, "scores": scores})
	}
	kinds := make([]string, 0, len(scores))
	for k := range scores {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KIND\tN\tHIT@1\tHIT@%d\tMRR@%d\tERRORS\n", opts.k, opts.k)
	for _, k := range kinds {
		sc := scores[k]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%d\n", k, sc.N, sc.Hit1, sc.HitK, sc.MRR, sc.Error)
	}
	return tw.Flush()
}
