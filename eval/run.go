package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lore-cli/lore/agent"
)

// Setup is one configuration a question set runs under: the whole
// pipeline, or an ablation of it.
type Setup struct {
	Name      string `json:"name"`
	NoVector  bool   `json:"no_vector,omitempty"`  // keyword search only
	NoLexical bool   `json:"no_lexical,omitempty"` // vector search only
	NoRerank  bool   `json:"no_rerank,omitempty"`  // fused order
}

// Ablations are the setups --compare puts side by side, the whole pipeline
// first.
var Ablations = []Setup{
	{Name: "lore"},
	{Name: "no-rerank", NoRerank: true},
	{Name: "lexical-only", NoVector: true},
	{Name: "vector-only", NoLexical: true},
}

// Engine is lore's one engine as eval runs it (app.Engine in the binary):
// the search of `lore search` and the agent of `lore ask`, never a copy.
type Engine interface {
	// Search ranks passages for question, at least k of them when there
	// are that many.
	Search(ctx context.Context, question string, k int, s Setup) (agent.Ranking, error)
	// Ask answers question as `lore ask` would, without saving a session.
	Ask(ctx context.Context, question string, s Setup) (agent.Result, error)
}

// Scorer adds metrics to an answered question: the judge.
type Scorer interface {
	Score(ctx context.Context, q Question, r agent.Result) (map[string]float64, []string, error)
}

// Options tune a run.
type Options struct {
	// K is recall@k's k; at least 10 passages are always ranked, for
	// hit@10 and nDCG@10.
	K int
	// Setups run over every question; the first is the one answers,
	// calibration and the verdict use. Empty: the whole pipeline.
	Setups []Setup
	// Answers asks the chat model every question and scores its answers.
	Answers bool
	// Judge, when set, scores each answer with a second model.
	Judge Scorer
	// Parallel is how many questions run at once (default 2).
	Parallel int
	// Progress, when set, hears of every finished question.
	Progress func(done, total int)
}

// Outcome is what one question produced under one setup.
type Outcome struct {
	ID         string             `json:"id"`
	Question   string             `json:"question"`
	Kind       string             `json:"kind,omitempty"`
	Answerable bool               `json:"answerable"`
	Rank       int                `json:"rank"` // first passage overlapping gold, 0 for none
	Scores     map[string]float64 `json:"scores"`
	Notes      []string           `json:"notes,omitempty"`
	// Best is the best rerank logit (nil without a reranker); Agree the
	// retrieval-agreement signal routing uses without one.
	Best  *float64 `json:"best_rerank,omitempty"`
	Agree bool     `json:"agreement"`
	// Coverage is the best passage's share of the question's words, the
	// floor of agreement in a keyword-only index.
	Coverage float64 `json:"coverage"`
	// Known is the share of the question's words the index holds at all.
	Known  float64 `json:"known"`
	Route  string  `json:"route,omitempty"`
	Answer string  `json:"answer,omitempty"`
	Top    []Span  `json:"top,omitempty"`
	// Lines is the length in lines of each of the top 5 passages: what
	// a reader (or the model) has to read, which a metric over overlaps
	// rewards bigger passages for.
	Lines []int  `json:"lines_top5,omitempty"`
	Err   string `json:"error,omitempty"`
	// JudgeErr is why the judge could not score the answer: its metrics
	// are then missing, not zero, so the run says so on its own.
	JudgeErr string `json:"judge_error,omitempty"`
}

// ErrNoQuestions means nothing was left to run.
var ErrNoQuestions = errors.New("no questions to run")

// Run runs every question under every setup, Parallel at a time. When ctx
// is cancelled it stops starting questions and returns what finished, with
// Interrupted set (and ctx's error).
func Run(ctx context.Context, eng Engine, qs []Question, opt Options) (*Report, error) {
	if len(qs) == 0 {
		return nil, ErrNoQuestions
	}
	if opt.K <= 0 {
		opt.K = 10
	}
	if len(opt.Setups) == 0 {
		opt.Setups = Ablations[:1]
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 2
	}
	type job struct{ s, q int }
	outs := make([][]*Outcome, len(opt.Setups))
	for s := range opt.Setups {
		outs[s] = make([]*Outcome, len(qs))
	}
	// Question by question, every setup in turn: a run cut short has the
	// setups side by side over (nearly) the same questions.
	var jobs []job
	for q := range qs {
		for s := range opt.Setups {
			jobs = append(jobs, job{s, q})
		}
	}

	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	next := make(chan job)
	for range min(opt.Parallel, len(jobs)) {
		wg.Go(func() {
			for j := range next {
				o := runOne(ctx, eng, qs[j.q], opt, j.s)
				if ctx.Err() != nil {
					continue // cut short: not a result
				}
				mu.Lock()
				outs[j.s][j.q] = o
				done++
				if opt.Progress != nil {
					opt.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	rep := &Report{K: opt.K, Answers: opt.Answers, Judged: opt.Judge != nil, Total: len(qs), Interrupted: ctx.Err() != nil}
	// A question some setup did not finish is left out of every setup,
	// so that the setups compare over the same questions.
	finished := func(q int) bool {
		for s := range opt.Setups {
			if outs[s][q] == nil {
				return false
			}
		}
		return true
	}
	for s, setup := range opt.Setups {
		sr := SetupReport{Setup: setup}
		for q, o := range outs[s] {
			if finished(q) {
				sr.Questions = append(sr.Questions, *o)
			}
		}
		sr.summarise()
		rep.Setups = append(rep.Setups, sr)
	}
	return rep, ctx.Err()
}

// runOne runs a question: the search for the retrieval metrics and, for
// the main setup when asked, the agent for the answer metrics. The answer's
// candidates come from the same ranking the search makes (agent.Rank), so
// a question asked is not searched twice unless the turn ranked too few.
func runOne(ctx context.Context, eng Engine, q Question, opt Options, s int) *Outcome {
	o := &Outcome{ID: q.ID, Question: q.Question, Kind: q.Kind, Answerable: q.IsAnswerable(), Scores: map[string]float64{}}
	setup, main := opt.Setups[s], s == 0
	need := max(opt.K, 10)
	var passages []agent.Passage
	var best *float32
	var known float64
	var words float64
	if main && opt.Answers {
		r, err := eng.Ask(ctx, q.Question, setup)
		if err != nil {
			o.fail(q, opt.K, err)
			// A turn that failed took no right route and refused
			// nothing: it counts against the answer metrics too.
			o.Scores[MetricRoute] = 0
			if !o.Answerable {
				o.Scores[MetricRefusal] = 0
			}
			return o
		}
		// Best is what routed the turn. The passages are the search's
		// when the turn reranked fewer than the metrics look at
		// (rerank-candidates below -k): retrieval numbers are then the
		// same with and without answers.
		passages, best, known, words = r.Candidates, bestOf(r.Candidates), r.Known, r.Words
		if len(passages) < need {
			ranking, err := eng.Search(ctx, q.Question, need, setup)
			if err != nil {
				o.fail(q, opt.K, err)
				return o
			}
			passages = ranking.Passages
		}
		o.Route, o.Answer = string(r.Route), r.Answer
		scores, notes := ScoreAnswer(q, r)
		o.add(scores, notes)
		if opt.Judge != nil && r.Route != agent.RouteNone && r.Answer != "" {
			scores, notes, err := opt.Judge.Score(ctx, q, r)
			if err != nil {
				// The error names the scorer ("judge: relevancy: ...").
				o.JudgeErr = err.Error()
				o.Notes = append(o.Notes, err.Error())
			}
			o.add(scores, notes)
		}
	} else {
		ranking, err := eng.Search(ctx, q.Question, need, setup)
		if err != nil {
			o.fail(q, opt.K, err)
			return o
		}
		passages, best, known, words = ranking.Passages, ranking.Best, ranking.Known, ranking.Words
	}
	if best != nil {
		b := float64(*best)
		o.Best = &b
	}
	o.Agree, o.Known = agent.Agreement(q.Question, passages, known, words), known
	if len(passages) > 0 {
		o.Coverage = passages[0].Coverage
	}
	found := make([]Span, len(passages))
	for i, p := range passages {
		found[i] = Span{p.Path, p.Start, p.End}
	}
	o.Top = found[:min(3, len(found))]
	for _, f := range found[:min(5, len(found))] {
		o.Lines = append(o.Lines, f.End-f.Start+1)
	}
	if o.Answerable {
		o.Rank = FirstHit(q, found)
		o.add(ScoreRetrieval(q, found, opt.K), nil)
	}
	return o
}

// bestOf is the best rerank score of ranked passages (nil when none was
// reranked).
func bestOf(ps []agent.Passage) *float32 {
	if len(ps) == 0 {
		return nil
	}
	return ps[0].Rerank
}

// fail records an error: an answerable question scores 0 on every
// retrieval metric, as if nothing was found, so errors cannot raise a score.
func (o *Outcome) fail(q Question, k int, err error) {
	o.Err = err.Error()
	if o.Answerable {
		o.add(ScoreRetrieval(q, nil, k), nil)
	}
}

func (o *Outcome) add(scores map[string]float64, notes []string) {
	for k, v := range scores {
		o.Scores[k] = v
	}
	o.Notes = append(o.Notes, notes...)
}

// String names a setup for a table.
func (s Setup) String() string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("vector=%t lexical=%t rerank=%t", !s.NoVector, !s.NoLexical, !s.NoRerank)
}
