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
	"lore/index"
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
		res, err := eng.Search(ctx, q.Question, opts.k)
		var found []evalSpan
		for _, h := range res.Passages {
			found = append(found, evalSpan{h.Path, h.Start, h.End})
		}
		rank := q.rank(found)
		for _, key := range []string{"all", q.Kind} {
			sc := scores[key]
			if sc == nil {
				sc = &evalScore{}
				scores[key] = sc
			}
			if err != nil {
				sc.N++
				sc.Error++
				continue
			}
			sc.add(rank)
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, sc := range scores {
		sc.average()
	}
	base, err := baselineScore(ctx, cfg, qs, opts.k)
	if err != nil {
		return err
	}
	if opts.json {
		return json.NewEncoder(streams.Out).Encode(map[string]any{"k": opts.k, "reranker": reranker, "scores": scores, "baseline": base})
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
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "\nbaseline (BM25 over %d-line windows): hit@1 %.3f  hit@%d %.3f  MRR@%d %.3f\n", baselineWindow, base.Hit1, opts.k, base.HitK, opts.k, base.MRR)
	return err
}

// evalSpan is where a result lies: lines start to end of a file.
type evalSpan struct {
	path       string
	start, end int
}

// rank is the 1-based rank of the first result that is a hit, 0 for none:
// a result on a gold path whose lines overlap the gold range.
func (q evalQuestion) rank(found []evalSpan) int {
	for i, h := range found {
		for _, g := range q.Gold {
			if h.path == g.Path && h.start <= g.Lines[1] && h.end >= g.Lines[0] {
				return i + 1
			}
		}
	}
	return 0
}

func (sc *evalScore) add(rank int) {
	sc.N++
	if rank == 1 {
		sc.Hit1++
	}
	if rank > 0 {
		sc.HitK++
		sc.MRR += 1 / float64(rank)
	}
}

func (sc *evalScore) average() {
	n := float64(max(sc.N, 1))
	sc.Hit1, sc.HitK, sc.MRR = sc.Hit1/n, sc.HitK/n, sc.MRR/n
}

// baselineScore scores the question set with the naive baseline over the
// files of the configured index.
func baselineScore(ctx context.Context, cfg config.Config, qs []evalQuestion, k int) (*evalScore, error) {
	ix, err := index.Open(cfg.IndexDir(), cfg.Index)
	if err != nil {
		return nil, err
	}
	files, err := ix.Files(ctx)
	ix.Close()
	if err != nil {
		return nil, err
	}
	bx := newBaseline(files)
	sc := &evalScore{}
	for _, q := range qs {
		var found []evalSpan
		for _, w := range bx.search(q.Question, k) {
			found = append(found, evalSpan{w.path, w.start, w.end})
		}
		sc.add(q.rank(found))
	}
	sc.average()
	return sc, nil
}
