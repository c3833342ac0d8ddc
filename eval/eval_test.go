package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lore-cli/lore/agent"
)

func TestReadRefusesWhatIsNotAQuestionSet(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"not json":            {`{"id":"a","question":"q","gold":[{"path":"a.md","lines":[1,2]}]}` + "\n{oops\n", "x.jsonl:2: not a JSON question"},
		"no question":         {`{"id":"a","gold":[{"path":"a.md","lines":[1,2]}]}`, `"question" is missing`},
		"answerable, no gold": {`{"id":"a","question":"q"}`, `needs "gold"`},
		"lines backwards":     {`{"id":"a","question":"q","gold":[{"path":"a.md","lines":[9,2]}]}`, "first <= last"},
		"lines zero":          {`{"id":"a","question":"q","gold":[{"path":"a.md","lines":[0,2]}]}`, "1-based"},
		"same id twice":       {`{"id":"a","question":"q","answerable":false}` + "\n" + `{"id":"a","question":"r","answerable":false}`, `id "a" is already used on line 1`},
		"empty":               {"\n\n", "no questions"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "x.jsonl")
			if err == nil || !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	qs, err := Read(strings.NewReader(`{"question":"q","answerable":false,"gold":[]}`+"\n\n"+`{"id":"b","question":"r","gold":[{"path":"a.md","lines":[3,3]}]}`), "x")
	if err != nil || len(qs) != 2 || qs[0].ID != "line-1" || qs[0].IsAnswerable() || !qs[1].IsAnswerable() {
		t.Fatalf("%+v %v", qs, err)
	}
}

// A field the format does not have is read past, and named: a typo such
// as "answer_keyword" would otherwise quietly score nothing.
func TestUnknownFieldsAreNamed(t *testing.T) {
	var in strings.Builder
	for i := range 8 {
		fmt.Fprintf(&in, `{"id":"q%d","question":"q","answerable":false,"answer_keyword":["x"]%s}`+"\n", i, map[bool]string{true: `,"notes":"n"`}[i == 2])
	}
	qs, err := Read(strings.NewReader(in.String()), "set.jsonl")
	if err != nil || len(qs) != 8 {
		t.Fatalf("%d questions, %v", len(qs), err)
	}
	got := UnknownFields(qs, "set.jsonl")
	want := []string{
		`set.jsonl: field "answer_keyword" (lines 1, 2, 3, 4, 5 and 3 more) is not part of the format and is ignored (docs/eval.md)`,
		`set.jsonl: field "notes" (line 3) is not part of the format and is ignored (docs/eval.md)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("UnknownFields:\n got %q\nwant %q", got, want)
	}
	full := `{"id":"a","question":"q","gold":[{"path":"a.md","section":"S","lines":[1,2]}],"answer_keywords":["k"],"kind":"lookup","answerable":true}`
	qs, err = Read(strings.NewReader(full), "set.jsonl")
	if err != nil || UnknownFields(qs, "set.jsonl") != nil {
		t.Errorf("every field of the format: %v, notes %q", err, UnknownFields(qs, "set.jsonl"))
	}
}

func TestScoreRetrieval(t *testing.T) {
	q := Question{Gold: []Gold{{Path: "a.md", Lines: [2]int{10, 12}}, {Path: "b.md", Lines: [2]int{1, 4}}}}
	found := []Span{
		{"a.md", 1, 9},   // the right file, the wrong lines: a miss
		{"a.md", 8, 10},  // gold A
		{"a.md", 11, 20}, // gold A again: not a second relevant result
		{"c.md", 1, 4},
		{"b.md", 4, 9}, // gold B
	}
	m := ScoreRetrieval(q, found, 3)
	ndcg := (1/math.Log2(3) + 1/math.Log2(6)) / (1 + 1/math.Log2(3))
	want := map[string]float64{MetricHit1: 0, MetricHit5: 1, MetricHit10: 1, MetricMRR: 0.5, "recall@3": 0.5, MetricNDCG10: ndcg}
	for k, v := range want {
		if !near(m[k], v) {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if m := ScoreRetrieval(q, found, 10); m["recall@10"] != 1 {
		t.Errorf("recall@10 %v", m["recall@10"])
	}
	// Found at rank 11: no hit@10, no MRR (MRR@10), no nDCG.
	far := append(make([]Span, 10), Span{"b.md", 1, 1})
	if m := ScoreRetrieval(q, far, 20); m[MetricHit10] != 0 || m[MetricMRR] != 0 || m[MetricNDCG10] != 0 || m["recall@20"] != 0.5 {
		t.Errorf("rank 11: %v", m)
	}
	if m := ScoreRetrieval(q, nil, 5); m[MetricHit1]+m[MetricHit10]+m[MetricMRR]+m[MetricNDCG10]+m["recall@5"] != 0 {
		t.Errorf("nothing found: %v", m)
	}
	// One chunk at rank 1 holds both gold ranges: a perfect result, and a
	// copy of it lower down earns nothing more.
	two := Question{Gold: []Gold{{Path: "a.md", Lines: [2]int{10, 12}}, {Path: "a.md", Lines: [2]int{14, 15}}}}
	if m := ScoreRetrieval(two, []Span{{"a.md", 8, 20}, {"a.md", 8, 20}}, 10); !near(m[MetricNDCG10], 1) || m["recall@10"] != 1 {
		t.Errorf("both gold ranges in the first chunk: %v", m)
	}
}

func TestVerdict(t *testing.T) {
	for score, want := range map[float64]string{0.80: Excellent, 0.95: Excellent, 0.7999: Acceptable, 0.60: Acceptable, 0.5999: Insufficient, 0: Insufficient} {
		if got := Verdict(score); got != want {
			t.Errorf("Verdict(%v) = %s, want %s", score, got, want)
		}
	}
}

// fakeEngine ranks from a table of question → passages; a question marked
// "fail" errors. It records the setups it ran.
type fakeEngine struct {
	mu      sync.Mutex
	ranked  map[string][]agent.Passage
	setups  map[string]int
	onCall  func()
	answers map[string]agent.Result
}

func (f *fakeEngine) Search(ctx context.Context, q string, k int, s Setup) (agent.Ranking, error) {
	f.mu.Lock()
	if f.setups == nil {
		f.setups = map[string]int{}
	}
	f.setups[s.Name]++
	f.mu.Unlock()
	if f.onCall != nil {
		f.onCall()
	}
	if err := ctx.Err(); err != nil {
		return agent.Ranking{}, err
	}
	if q == "fail" {
		return agent.Ranking{}, errors.New("index damaged")
	}
	ps := f.ranked[q]
	if s.NoRerank {
		ps = ps[len(ps)-1:]
	}
	var best *float32
	if len(ps) > 0 {
		best = ps[0].Rerank
	}
	r := agent.Ranking{Passages: ps, Best: best}
	r.Known = 1 // every word of the question is in the index
	r.Words = float64(len(strings.Fields(q)))
	return r, nil
}

func (f *fakeEngine) Ask(ctx context.Context, q string, s Setup) (agent.Result, error) {
	r, ok := f.answers[q]
	if !ok {
		return agent.Result{}, fmt.Errorf("no answer for %q", q)
	}
	return r, nil
}

func score(v float32) *float32 { return &v }

func TestRunScoresEveryQuestionAndCountsErrorsAsMisses(t *testing.T) {
	qs := []Question{
		{ID: "hit", Question: "first", Kind: "lookup", Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 5}}}},
		{ID: "second", Question: "second", Kind: "howto", Gold: []Gold{{Path: "b.md", Lines: [2]int{1, 5}}}},
		{ID: "broken", Question: "fail", Kind: "howto", Gold: []Gold{{Path: "b.md", Lines: [2]int{1, 5}}}},
		{ID: "none", Question: "nothing", Kind: "unanswerable", Answerable: new(bool)},
	}
	eng := &fakeEngine{ranked: map[string][]agent.Passage{
		"first":   {{Path: "a.md", Start: 2, End: 3, Rerank: score(4), LexicalRank: 1, Coverage: 1}}, // its one word
		"second":  {{Path: "x.md", Start: 1, End: 1, Rerank: score(1)}, {Path: "b.md", Start: 5, End: 9, Rerank: score(0.5)}},
		"nothing": {{Path: "x.md", Start: 1, End: 1, Rerank: score(-3)}},
	}}
	rep, err := Run(context.Background(), eng, qs, Options{Setups: Ablations[:2], Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	main := rep.Main()
	if len(main.Questions) != 4 || main.Questions[0].ID != "hit" || main.Questions[3].ID != "none" {
		t.Fatalf("outcomes out of order: %+v", main.Questions)
	}
	all := main.Overall
	// Three answerable questions: ranks 1, 2 and an error (a miss).
	if all.N != 4 || all.Errors != 1 || all.Count[MetricHit1] != 3 || !near(all.Metrics[MetricHit1], 1.0/3) || !near(all.Metrics[MetricMRR], 0.5) {
		t.Fatalf("overall %+v", all)
	}
	if h := main.ByKind["howto"]; h.N != 2 || !near(h.Metrics[MetricMRR], 0.25) {
		t.Fatalf("howto %+v", h)
	}
	if u := main.ByKind["unanswerable"]; u.N != 1 || len(u.Metrics) != 0 {
		t.Fatalf("unanswerable questions have no retrieval metrics: %+v", u)
	}
	if b := main.Questions[3].Best; b == nil || *b != -3 {
		t.Fatalf("best rerank score of the unanswerable question: %v", b)
	}
	if q := main.Questions[0]; !q.Agree || q.Coverage != 1 || main.Questions[1].Agree {
		t.Fatalf("agreement: %v (coverage %v) %v", q.Agree, q.Coverage, main.Questions[1].Agree)
	}
	// The ablation ran every question too, with its own numbers.
	if eng.setups["lore"] != 4 || eng.setups["no-rerank"] != 4 {
		t.Fatalf("setups run: %v", eng.setups)
	}
	if nr := rep.Setups[1].Overall; !near(nr.Metrics[MetricHit1], 2.0/3) {
		t.Fatalf("no-rerank %+v", nr)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HIT@1", "no-rerank", "unanswerable", "global score", Insufficient} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}

// hits are n questions, each found at rank 1.
func hits(n int) ([]Question, map[string][]agent.Passage) {
	var qs []Question
	ranked := map[string][]agent.Passage{}
	for i := range n {
		q := fmt.Sprintf("q%d", i)
		qs = append(qs, Question{ID: q, Question: q, Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 1}}}})
		ranked[q] = []agent.Passage{{Path: "a.md", Start: 1, End: 1}}
	}
	return qs, ranked
}

func TestRunInterruptedKeepsWhatFinished(t *testing.T) {
	qs, ranked := hits(20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	calls := 0
	eng := &fakeEngine{ranked: ranked, onCall: func() {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 5 {
			cancel() // Ctrl+C during the fifth question
		}
	}}
	rep, err := Run(ctx, eng, qs, Options{Parallel: 1})
	if !errors.Is(err, context.Canceled) || rep == nil || !rep.Interrupted {
		t.Fatalf("%v %+v", err, rep)
	}
	if n := rep.Main().Overall.N; n != 4 || rep.Total != 20 || rep.Main().Overall.Errors != 0 || rep.Main().Overall.Metrics[MetricHit1] != 1 {
		t.Fatalf("kept %d of %d: %+v", n, rep.Total, rep.Main().Overall)
	}
	var out bytes.Buffer
	rep.WriteText(&out, 0)
	if !strings.Contains(out.String(), "interrupted: 4 of 20 questions finished") {
		t.Fatalf("%s", out.String())
	}
}

func TestWriteMarkdown(t *testing.T) {
	qs := []Question{{ID: "a|b", Question: "first", Kind: "lookup", Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 5}}}}}
	eng := &fakeEngine{ranked: map[string][]agent.Passage{"first": {{Path: "a.md", Start: 1, End: 2}}}}
	rep, err := Run(context.Background(), eng, qs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteMarkdown(&out, "lore eval: q.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# lore eval: q.jsonl", "**EXCELLENT**: global score 1.000", "| lookup | 1 |", "| a\\|b |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, out.String())
		}
	}
}

// A kind no metric ran on (unanswerable questions without answers) has no
// score: n/a, not a 0 that reads as a failure.
func TestKindWithoutMetricsHasNoScore(t *testing.T) {
	qs := []Question{{ID: "a", Question: "first", Kind: "lookup", Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 5}}}},
		{ID: "u", Question: "second", Kind: "unanswerable", Answerable: new(bool)}}
	eng := &fakeEngine{ranked: map[string][]agent.Passage{"first": {{Path: "a.md", Start: 1, End: 2}}}}
	rep, err := Run(context.Background(), eng, qs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Main().ByKind["unanswerable"].Metrics); n != 0 {
		t.Fatalf("the unanswerable kind has %d metrics: the test needs none", n)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, "t"); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "| unanswerable |") && (strings.Contains(l, "0.000") || !strings.HasSuffix(l, "| – | 0 |")) {
			t.Errorf("markdown row of a kind without metrics: %q, want its score –", l)
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Setups []struct {
			Overall struct{ Score *float64 }
			ByKind  map[string]struct {
				Score   *float64
				Verdict *string
			} `json:"by_kind"`
		}
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if k := back.Setups[0].ByKind["unanswerable"]; k.Score != nil || k.Verdict != nil {
		t.Errorf("JSON of a kind without metrics has a score or verdict, want null:\n%s", js)
	}
	if s := back.Setups[0].Overall.Score; s == nil || *s != 1 {
		t.Errorf("JSON overall score %v, want 1", s)
	}
}

func TestWriteTextFitsTheWidth(t *testing.T) {
	rep := &Report{Total: 2, Setups: []SetupReport{{Setup: Ablations[0], Overall: Summary{
		N: 2, Score: 0.7, Verdict: Acceptable,
		Metrics: map[string]float64{MetricHit1: 0.5, MetricHit5: 1, MetricMRR: 0.75, MetricNDCG10: 0.6, MetricKeywords: 0.9, MetricCitations: 1},
		Count:   map[string]int{MetricHit1: 2, MetricHit5: 2, MetricMRR: 2, MetricNDCG10: 2, MetricKeywords: 2, MetricCitations: 2},
	}, ByKind: map[string]Summary{}}}}
	var wide bytes.Buffer
	rep.WriteText(&wide, 0)
	if lines := strings.Split(wide.String(), "\n"); !strings.HasPrefix(strings.TrimSpace(lines[1]), "all") ||
		!strings.Contains(lines[1], "0.500") || !strings.Contains(lines[1], "1.000") {
		t.Fatalf("with no width, one row holds every metric:\n%s", wide.String())
	}
	for _, width := range []int{40, 60} {
		var narrow bytes.Buffer
		rep.WriteText(&narrow, width)
		text := narrow.String()
		for _, line := range strings.Split(text, "\n") {
			if len(line) > width {
				t.Errorf("width %d: line of %d columns: %q", width, len(line), line)
			}
		}
		// Every metric is still there, each block led by the row names.
		for _, c := range []string{"HIT@1", "MRR", "NDCG@10", strings.ToUpper(MetricCitations), "SCORE", "ERRORS"} {
			if !strings.Contains(text, c) {
				t.Errorf("width %d: %s is missing:\n%s", width, c, text)
			}
		}
		if blocks := strings.Count(text, "  all "); blocks < 2 {
			t.Errorf("width %d: %d blocks, want the columns cut into several:\n%s", width, blocks, text)
		}
	}
}

type failingJudge struct{}

func (failingJudge) Score(context.Context, Question, agent.Result) (map[string]float64, []string, error) {
	return nil, nil, fmt.Errorf("%w: relevancy: the reply is not the JSON asked for", ErrJudge)
}

// A judge that fails leaves the question's other scores and one note that
// says what failed, once.
func TestRunKeepsAFailedJudgementAsANote(t *testing.T) {
	qs := []Question{{ID: "q", Question: "q", Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 1}}}, AnswerKeywords: []string{"alpha"}}}
	eng := &fakeEngine{
		ranked:  map[string][]agent.Passage{"q": {{Path: "a.md", Start: 1, End: 1}}},
		answers: map[string]agent.Result{"q": {Route: agent.RouteDocs, Answer: "alpha [1]", Sources: []agent.Source{{N: 1, Path: "a.md", Start: 1, End: 1}}}},
	}
	rep, err := Run(context.Background(), eng, qs, Options{Answers: true, Judge: failingJudge{}})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Main().Questions[0]
	if o.Scores[MetricKeywords] != 1 || o.Err != "" {
		t.Fatalf("%+v", o)
	}
	want := "judge: relevancy: the reply is not the JSON asked for"
	if !slices.Contains(o.Notes, want) || o.JudgeErr != want {
		t.Fatalf("notes %q, want %q", o.Notes, want)
	}
}

// When the turn reranked fewer passages than the metrics look at, the
// retrieval numbers come from the search, as without answers.
func TestAnswerModeScoresTheSearchPool(t *testing.T) {
	q := Question{ID: "q", Question: "q", Gold: []Gold{{Path: "gold.md", Lines: [2]int{1, 1}}}}
	var ranked []agent.Passage
	for i := range 10 {
		ranked = append(ranked, agent.Passage{Path: fmt.Sprintf("p%d.md", i), Start: 1, End: 1})
	}
	ranked[6].Path = "gold.md"
	eng := &fakeEngine{
		ranked:  map[string][]agent.Passage{"q": ranked},
		answers: map[string]agent.Result{"q": {Route: agent.RouteDocs, Answer: "x [1]", Candidates: ranked[:5]}},
	}
	for _, answers := range []bool{false, true} {
		rep, err := Run(context.Background(), eng, []Question{q}, Options{Answers: answers})
		if err != nil {
			t.Fatal(err)
		}
		if o := rep.Main().Questions[0]; o.Rank != 7 || o.Scores[MetricHit10] != 1 {
			t.Errorf("answers %v: rank %d, hit@10 %v", answers, o.Rank, o.Scores[MetricHit10])
		}
	}
}

// A turn that fails scores 0 on route (and on refusal when the question
// is unanswerable), as it does on retrieval: failures never raise a mean.
func TestFailedTurnCountsAgainstTheAnswerMetrics(t *testing.T) {
	qs := []Question{
		{ID: "a", Question: "a", Gold: []Gold{{Path: "a.md", Lines: [2]int{1, 1}}}},
		{ID: "u", Question: "u", Answerable: new(bool)},
	}
	rep, err := Run(context.Background(), &fakeEngine{}, qs, Options{Answers: true})
	if err != nil {
		t.Fatal(err)
	}
	all := rep.Main().Overall
	if all.Errors != 2 || all.Count[MetricRoute] != 2 || all.Metrics[MetricRoute] != 0 || all.Count[MetricRefusal] != 1 || all.Metrics[MetricRefusal] != 0 {
		t.Fatalf("%+v", all)
	}
}

func TestUnknownGold(t *testing.T) {
	qs := []Question{
		{Gold: []Gold{{Path: "a.md"}, {Path: "x.md"}}},
		{Gold: []Gold{{Path: "x.md"}, {Path: "y.md"}}},
		{Answerable: new(bool)},
	}
	got := UnknownGold(qs, func(p string) bool { return p == "a.md" })
	if !slices.Equal(got, []string{"x.md", "y.md"}) {
		t.Fatalf("%q", got)
	}
}

// Interrupted with several setups, every setup reports the same questions,
// so the side-by-side table compares like with like.
func TestRunInterruptedComparesTheSameQuestions(t *testing.T) {
	qs, ranked := hits(20)
	for _, stop := range []int{6, 7, 8} {
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		calls := 0
		eng := &fakeEngine{ranked: ranked, onCall: func() {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == stop {
				cancel()
			}
		}}
		rep, _ := Run(ctx, eng, qs, Options{Setups: Ablations[:3], Parallel: 1})
		cancel()
		n := rep.Setups[0].Overall.N
		if n == 0 || n >= 20 {
			t.Fatalf("stop at %d: %d questions kept", stop, n)
		}
		for _, sr := range rep.Setups {
			if sr.Overall.N != n || sr.Questions[n-1].ID != rep.Setups[0].Questions[n-1].ID {
				t.Errorf("stop at %d: %s has %d questions, %s has %d", stop, sr.Setup, sr.Overall.N, rep.Setups[0].Setup, n)
			}
		}
	}
}

// MRR@5 and the mean length of a top-5 result are reported beside the
// metrics: a gold passage at rank 6 counts for MRR but not MRR@5, every
// result of the top 5 counts once in the mean, and neither moves the
// global score (a mean of lines is no 0..1 score).
func TestTop5SummaryBesideTheMetrics(t *testing.T) {
	gold := []Gold{{Path: "g.md", Lines: [2]int{1, 5}}}
	qs := []Question{
		{ID: "first", Question: "first", Gold: gold},
		{ID: "sixth", Question: "sixth", Gold: gold},
		{ID: "none", Question: "nothing", Kind: "unanswerable", Answerable: new(bool)},
	}
	var sixth []agent.Passage
	for i := range 5 {
		sixth = append(sixth, agent.Passage{Path: fmt.Sprintf("x%d.md", i), Start: 1, End: 40})
	}
	sixth = append(sixth, agent.Passage{Path: "g.md", Start: 1, End: 2})
	eng := &fakeEngine{ranked: map[string][]agent.Passage{
		"first":   {{Path: "g.md", Start: 1, End: 10}, {Path: "x.md", Start: 1, End: 20}},
		"sixth":   sixth,
		"nothing": {{Path: "x.md", Start: 1, End: 1}},
	}}
	rep, err := Run(context.Background(), eng, qs, Options{Setups: Ablations[:1]})
	if err != nil {
		t.Fatal(err)
	}
	all := rep.Main().Overall
	if !near(all.Metrics[MetricMRR], (1+1.0/6)/2) {
		t.Fatalf("MRR %v", all.Metrics[MetricMRR])
	}
	// Over the two answerable questions, as the baseline's: ranks 1 and
	// none; lines 10 and 20, then five 40s (the sixth result is not read).
	if all.Top5 == nil || !near(all.Top5.MRR, 0.5) || !near(all.Top5.MeanLines, float64(10+20+5*40)/7) {
		t.Fatalf("top 5 %+v", all.Top5)
	}
	if _, ok := all.Metrics["mrr@5"]; ok || len(all.Metrics) != 6 {
		t.Fatalf("top 5 figures leaked into the scored metrics: %v", all.Metrics)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "top 5: MRR@5 0.500, mean 32.9 lines per result") {
		t.Errorf("text report lacks the top 5 line:\n%s", out.String())
	}
	b, err := json.Marshal(all)
	if err != nil || !strings.Contains(string(b), `"top5":{"mrr@5":0.5,"mean_lines":32.857142857142854}`) {
		t.Fatalf("JSON %s %v", b, err)
	}
}
