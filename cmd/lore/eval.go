package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/eval"
	"github.com/lore-cli/lore/internal/atomicfile"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
)

// exitBelowMinScore is lore eval's exit code when the global score is
// under --min-score: the run worked, the documents or settings did not.
const exitBelowMinScore = 3

type evalOptions struct {
	file        string
	k           int
	lexicalOnly bool
	vectorOnly  bool
	noRerank    bool
	compare     bool
	noAnswers   bool
	judgeModel  string
	explain     bool
	minScore    float64
	json        bool
	markdown    string
	verbose     bool
	parallel    int
	calibrate   bool
	plot        string
	write       bool
}

func newEvalCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval QUESTIONS.jsonl",
		Short: "Measure retrieval and answers on a question set; calibrate the web fallback",
		Long: `Run a question set (JSONL, format in docs/eval.md) through the same search and
the same agent as lore search and lore ask, and score them:

  retrieval   hit@1, hit@5, hit@10, recall@k, MRR, nDCG@10 (no model needed)
  answers     keyword coverage, code presence, code validity, citation validity,
              cited passages on gold, refusals of unanswerable questions, route
              (with the chat model; skipped with a note when Ollama is not ready)
  judge       faithfulness and relevancy, with --judge-model (prompts: --explain)

The global score is the mean of the metrics that ran: EXCELLENT from 0.80,
ACCEPTABLE from 0.60, else INSUFFICIENT. Questions run --parallel at a time;
Ctrl+C prints what finished.

--calibrate records each question's best rerank score and recommends the
web-fallback-threshold that best separates answerable from unanswerable ones.

Exit codes: 0 done, 1 error, 2 usage, 3 the global score is below --min-score,
130 interrupted (after printing what finished).`,
		Example: `  lore eval questions.jsonl
  lore eval questions.jsonl --compare --no-answers   # retrieval ablations side by side
  lore eval questions.jsonl --judge-model qwen2.5:7b --markdown eval-report.md
  lore eval questions.jsonl --min-score 0.7 --json    # in CI
  lore eval questions.jsonl --calibrate --plot scores.png --write
  lore eval generate --n 50 > draft.jsonl             # questions to review by hand`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.explain {
				return cobra.MaximumNArgs(1)(cmd, args)
			}
			if len(args) != 1 {
				return usageError{errors.New("eval needs a question set: lore eval questions.jsonl (format: docs/eval.md; drafts: lore eval generate)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.explain {
				return explainEval(streams.Out)
			}
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if m, _ := cmd.Flags().GetString("model"); m != "" {
				cfg.ChatModel = m
			}
			if err := opts.check(cfg); err != nil {
				return err
			}
			opts.file = args[0]
			return runEvalCmd(cmd.Context(), cfg, g, opts, streams)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&opts.k, "k", "k", 10, "recall@k's k")
	f.BoolVar(&opts.lexicalOnly, "lexical-only", false, "keyword search only (an ablation)")
	f.BoolVar(&opts.vectorOnly, "vector-only", false, "vector search only (an ablation)")
	f.BoolVar(&opts.noRerank, "no-rerank", false, "keep the fused order (an ablation)")
	f.BoolVar(&opts.compare, "compare", false, "run the whole pipeline and each ablation, side by side (retrieval metrics)")
	f.BoolVar(&opts.noAnswers, "no-answers", false, "retrieval metrics only: do not ask the chat model")
	f.StringVar(&opts.judgeModel, "judge-model", "", "Ollama model that judges faithfulness and relevancy (config judge-model)")
	f.BoolVar(&opts.explain, "explain", false, "print how each metric is computed and the judge's prompts, then exit")
	f.Float64Var(&opts.minScore, "min-score", 0, "exit 3 when the global score is below this (0..1)")
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	f.StringVar(&opts.markdown, "markdown", "", "also write the report as Markdown to this file")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print every question's ranks, scores and notes")
	f.IntVar(&opts.parallel, "parallel", 2, "questions run at once")
	f.BoolVar(&opts.calibrate, "calibrate", false, "recommend web-fallback-threshold from the rerank scores")
	f.StringVar(&opts.plot, "plot", "", "with --calibrate: draw both score distributions to this PNG file")
	f.BoolVar(&opts.write, "write", false, "with --calibrate: set the recommended threshold in the config file")
	f.String("reranker", "auto", "auto, onnxruntime, hugot or none")
	f.String("rerank-model", "", "installed reranker model to use")
	f.String("model", "", "chat model to answer with (config chat-model)")
	cmd.AddCommand(newEvalGenerateCmd(g, streams))
	return cmd
}

func (o *evalOptions) check(cfg config.Config) error {
	switch {
	case o.k < 1 || o.k > 100:
		return usageError{fmt.Errorf("-k %d is outside 1..100", o.k)}
	case o.lexicalOnly && o.vectorOnly:
		return usageError{errors.New("--lexical-only and --vector-only exclude each other")}
	case o.compare && (o.lexicalOnly || o.vectorOnly || o.noRerank):
		return usageError{errors.New("--compare runs every ablation already: drop --lexical-only, --vector-only and --no-rerank")}
	case o.minScore < 0 || o.minScore > 1:
		return usageError{fmt.Errorf("--min-score %g is outside 0..1", o.minScore)}
	case o.parallel < 1 || o.parallel > 64:
		return usageError{fmt.Errorf("--parallel %d is outside 1..64", o.parallel)}
	case (o.plot != "" || o.write) && !o.calibrate:
		return usageError{errors.New("--plot and --write go with --calibrate")}
	}
	if o.judgeModel == "" {
		o.judgeModel = cfg.JudgeModel
	}
	return nil
}

// setups are the configurations the flags ask for, the scored one first.
func (o *evalOptions) setups() []eval.Setup {
	if o.compare {
		return eval.Ablations
	}
	s := eval.Setup{Name: "lore", NoVector: o.lexicalOnly, NoLexical: o.vectorOnly, NoRerank: o.noRerank}
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{o.lexicalOnly, "lexical-only"}, {o.vectorOnly, "vector-only"}, {o.noRerank, "no-rerank"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) > 0 {
		s.Name = strings.Join(parts, "+")
	}
	return []eval.Setup{s}
}

func runEvalCmd(ctx context.Context, cfg config.Config, g *globalOptions, opts *evalOptions, streams *ioStreams) error {
	qs, err := eval.ReadFile(opts.file)
	if err != nil {
		return usageError{err}
	}
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: opts.noRerank, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	note := func(msg string) {
		slog.Info(msg)
		fmt.Fprintf(streams.Err, "note: %s\n", termsafe.Text(msg))
	}
	for _, msg := range eval.UnknownFields(qs, opts.file) {
		note(msg)
	}
	info, err := eng.IndexInfo(ctx, "")
	if err != nil {
		return err
	}
	if !info.Built {
		return fmt.Errorf("index %q is not built: lore --index %s index PATH (the folder the question set's paths are relative to)", info.Name, info.Name)
	}
	files, err := indexFiles(ctx, cfg)
	if err != nil {
		return err
	}
	switch msg, err := eval.CheckGold(qs, files, cfg.Index); {
	case err != nil:
		return usageError{err}
	case msg != "":
		note(msg)
	}

	run := eval.Options{K: opts.k, Setups: opts.setups(), Parallel: opts.parallel}
	if info.Embedder == "none" && opts.vectorOnly {
		return usageError{fmt.Errorf("--vector-only: index %s was built with --embedder none, it has no vectors", info.Name)}
	}
	for _, n := range eng.Notices() {
		note(n)
	}
	// An ablation that cannot differ from the whole pipeline is left out
	// rather than shown as a copy of it (or as a column of errors).
	run.Setups = slices.DeleteFunc(run.Setups, func(s eval.Setup) bool {
		switch {
		case opts.compare && s.NoLexical && info.Embedder == "none":
			note("vector-only left out: index " + info.Name + " has no vectors (built with --embedder none)")
			return true
		case opts.compare && s.NoVector && info.Embedder == "none":
			note("lexical-only left out: index " + info.Name + " is keyword-only already")
			return true
		case opts.compare && s.NoRerank && eng.Reranker() == "none":
			note("no-rerank left out: no reranker runs here (lore doctor says why)")
			return true
		}
		return false
	})
	if !opts.noAnswers && !opts.calibrate {
		switch err := eng.ChatStatus(ctx, cfg.ChatModel); {
		case err == nil:
			run.Answers = true
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			note("answer metrics skipped: " + excerpt.FirstLine(err.Error()) + " (retrieval metrics only; lore doctor checks the setup)")
		}
	}
	if run.Answers && opts.judgeModel != "" {
		chat, err := eng.ChatClient(ctx, opts.judgeModel)
		if err != nil {
			return fmt.Errorf("judge model: %w", err)
		}
		run.Judge = eval.Judge{Chat: chat, Model: opts.judgeModel, NumCtx: cfg.NumCtx}
	}
	bar := newEvalProgress(streams)
	run.Progress = bar.update
	rep, err := eval.Run(ctx, evalEngine{eng}, qs, run)
	bar.finish()
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		return err
	}
	if opts.calibrate {
		if err := writeCalibration(cfg, g, opts, rep, streams); err != nil {
			return err
		}
	} else if err := writeEvalReport(ctx, cfg, opts, qs, rep, streams); err != nil {
		return err
	}
	judgeFailed, firstJudgeErr := 0, ""
	for _, o := range rep.Main().Questions {
		if o.JudgeErr != "" {
			if judgeFailed++; firstJudgeErr == "" {
				firstJudgeErr = termsafe.Line(o.ID) + ": " + excerpt.FirstLine(o.JudgeErr)
			}
		}
	}
	if judgeFailed > 0 {
		fmt.Fprintf(streams.Err, "lore: the judge could not score %d answers (faithfulness and relevancy leave them out); the first, %s\n", judgeFailed, firstJudgeErr)
	}
	if main := rep.Main(); main.Overall.Errors > 0 {
		for _, o := range main.Questions {
			if o.Err != "" {
				fmt.Fprintf(streams.Err, "lore: %d of %d questions failed; the first, %s: %s\n", main.Overall.Errors, main.Overall.N, termsafe.Line(o.ID), excerpt.FirstLine(o.Err))
				break
			}
		}
		if !interrupted {
			return exitCode(exitError)
		}
	}
	if interrupted {
		fmt.Fprintf(streams.Err, "lore: interrupted: %d of %d questions finished (reported above)\n", rep.Main().Overall.N, rep.Total)
		return exitCode(exitCancelled)
	}
	if opts.minScore > 0 && len(rep.Main().Overall.Metrics) == 0 {
		fmt.Fprintln(streams.Err, "lore: --min-score: no metric ran (only unanswerable questions, and no answers asked for?): nothing to hold to it")
		return exitCode(exitError)
	}
	if opts.minScore > 0 && rep.Main().Overall.Score < opts.minScore {
		fmt.Fprintf(streams.Err, "lore: global score %.3f is below --min-score %.3f\n", rep.Main().Overall.Score, opts.minScore)
		return exitCode(exitBelowMinScore)
	}
	return nil
}

func writeEvalReport(ctx context.Context, cfg config.Config, opts *evalOptions, qs []eval.Question, rep *eval.Report, streams *ioStreams) error {
	// Interrupted, there is no baseline: it would score questions the run
	// never reached.
	var base *eval.Summary
	files, err := indexFiles(ctx, cfg)
	if err == nil {
		s := eval.Baseline(files, qs, opts.k)
		base = &s
	}
	switch {
	case ctx.Err() != nil:
		base = nil
	case err != nil:
		// The report stands without its yardstick.
		base = nil
		fmt.Fprintf(streams.Err, "note: no baseline: %s\n", excerpt.FirstLine(err.Error()))
	}
	if opts.markdown != "" {
		if err := atomicfile.Write(opts.markdown, 0o644, func(w io.Writer) error {
			return rep.WriteMarkdown(w, "lore eval: "+filepath.Base(opts.file))
		}); err != nil {
			return fmt.Errorf("--markdown: %w", err)
		}
	}
	if opts.json {
		return writeJSON(streams.Out, evalJSON{Report: rep, Index: cfg.Index, Baseline: base})
	}
	// Question ids, questions, kinds and notes come from the question
	// file and the model; the report has no styles of its own.
	out := termsafe.NewWriter(streams.Out)
	defer out.Close()
	if opts.verbose {
		if err := rep.WriteVerbose(out); err != nil {
			return err
		}
	}
	// Piped, rows stay whole for scripts; on a terminal, they fit it.
	width := streams.width(0)
	if err := rep.WriteText(out, width); err != nil {
		return err
	}
	if base == nil {
		return nil
	}
	line := fmt.Sprintf("baseline (BM25 over %d-line windows every %d lines): hit@1 %.3f, hit@5 %.3f, hit@10 %.3f, MRR %.3f",
		eval.BaselineWindow, eval.BaselineStride, base.Metrics[eval.MetricHit1], base.Metrics[eval.MetricHit5], base.Metrics[eval.MetricHit10], base.Metrics[eval.MetricMRR])
	if t := base.Top5; t != nil {
		line += fmt.Sprintf(", MRR@5 %.3f, mean %.1f lines per result in the top 5", t.MRR, t.MeanLines)
	}
	_, err = fmt.Fprintln(out, eval.Wrap(line, width, "  "))
	return err
}

// evalJSON is lore eval --json.
type evalJSON struct {
	*eval.Report
	Index    string        `json:"index"`
	Baseline *eval.Summary `json:"baseline,omitempty"`
}

// evalEngine is the engine as eval runs it: lore search's Search and lore
// ask's Ask, the latter without saving a session.
type evalEngine struct{ e *app.Engine }

func stages(s eval.Setup) app.Stages {
	return app.Stages{NoVector: s.NoVector, NoLexical: s.NoLexical, NoRerank: s.NoRerank}
}

func (a evalEngine) Search(ctx context.Context, q string, k int, s eval.Setup) (agent.Ranking, error) {
	res, err := a.e.Search(ctx, app.SearchRequest{Query: q, K: k, Stages: stages(s)})
	return res.Ranking, err
}

func (a evalEngine) Ask(ctx context.Context, q string, s eval.Setup) (agent.Result, error) {
	_, events, err := a.e.Ask(ctx, app.AskRequest{Turn: agent.Turn{Question: q}, Stages: stages(s), NoSave: true})
	if err != nil {
		return agent.Result{}, err
	}
	var res agent.Result
	err = errors.New("the turn ended without a result")
	for ev := range events {
		switch f := ev.(type) {
		case agent.Done:
			res, err = f.Result, nil
		case agent.Failed:
			res, err = f.Result, f.Err
		case agent.Cancelled:
			res, err = f.Result, context.Canceled
		}
	}
	return res, err
}

// evalProgress draws "12/40 questions" on stderr when it is a terminal.
type evalProgress struct {
	mu      sync.Mutex
	bar     *progressBar
	started time.Time
	streams *ioStreams
}

func newEvalProgress(streams *ioStreams) *evalProgress {
	if !streams.ErrTTY {
		return &evalProgress{}
	}
	return &evalProgress{bar: newProgressBar(streams.Err, true, streams.ErrWidth), started: time.Now(), streams: streams}
}

func (p *evalProgress) update(done, total int) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%d/%d questions", done, total)
	if elapsed := time.Since(p.started); done > 0 && done < total {
		line += "  ETA " + (elapsed * time.Duration(total-done) / time.Duration(done)).Round(time.Second).String()
	}
	width := p.streams.ErrWidth()
	barWidth := min(30, width-len(line)-4)
	if barWidth >= 5 {
		filled := barWidth * done / max(total, 1)
		line = "[" + strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled) + "] " + line
	}
	fmt.Fprintf(p.streams.Err, "\r\x1b[2K%s", line)
	p.bar.drawn = true
}

func (p *evalProgress) finish() {
	if p.bar != nil {
		p.mu.Lock()
		p.bar.finish()
		p.mu.Unlock()
	}
}

// explainEval prints how each metric is computed and the judge's prompts.
func explainEval(w io.Writer) error {
	fmt.Fprint(w, eval.MetricsHelp)
	for _, p := range eval.Prompts() {
		fmt.Fprintf(w, "\n--- prompt: %s ---\n%s\n", p.Name, strings.TrimSpace(p.Text))
	}
	return nil
}

// indexFiles lists the files the configured index holds, for the gold
// check and the baseline.
func indexFiles(ctx context.Context, cfg config.Config) ([]eval.IndexedFile, error) {
	ix, err := openIndex(ctx, cfg)
	if err != nil {
		return nil, err
	}
	files, err := ix.Files(ctx)
	ix.Close()
	if err != nil {
		return nil, err
	}
	out := make([]eval.IndexedFile, len(files))
	for i, f := range files {
		out[i] = eval.IndexedFile{Root: f.Source, Path: f.Path}
	}
	return out, nil
}
