package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/eval"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/testmodels"
)

const evalSet = `{"id":"timeout","question":"how do I cancel a context after a timeout","kind":"howto","gold":[{"path":"context.md","lines":[5,5]}],"answer_keywords":["WithTimeout","cancel"]}
{"id":"host","question":"which variable points lore at the server","kind":"lookup","gold":[{"path":"env.md","lines":[3,3]}],"answer_keywords":["OLLAMA_HOST"]}
{"id":"mars","question":"what is the gravity on Mars","kind":"unanswerable","answerable":false,"gold":[]}
`

func writeEvalSet(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type evalOut struct {
	Answers bool
	Setups  []struct {
		Setup     eval.Setup
		Overall   eval.Summary
		Questions []eval.Outcome
	}
}

// With Ollama there, every question is asked through the agent lore ask
// runs and its answer scored; the questions are not saved as sessions.
func TestEvalAnswersThroughTheAgent(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	if r := e.run(false, "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	qs := writeEvalSet(t, evalSet)
	md := filepath.Join(t.TempDir(), "report.md")
	r := e.run(false, "eval", qs, "--json", "--markdown", md)
	var out evalOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("exit %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	// Mars is routed away from the documents (nothing agrees on it), so
	// the model is asked the two others.
	if !out.Answers || len(srv.Chats()) != 2 {
		t.Fatalf("answers %v, %d chats", out.Answers, len(srv.Chats()))
	}
	all := out.Setups[0].Overall
	byID := map[string]eval.Outcome{}
	for _, o := range out.Setups[0].Questions {
		byID[o.ID] = o
	}
	// The fake model says "Use WithTimeout [1]." to everything: right for
	// the timeout question, missing OLLAMA_HOST for the other.
	if s := byID["timeout"].Scores; s[eval.MetricKeywords] != 0.5 || s[eval.MetricCitations] != 1 || s[eval.MetricRoute] != 1 {
		t.Fatalf("timeout: %+v %v", s, byID["timeout"].Notes)
	}
	if s := byID["host"].Scores; s[eval.MetricKeywords] != 0 {
		t.Fatalf("host: %+v", s)
	}
	if m := byID["mars"]; m.Route != "none" || m.Scores[eval.MetricRefusal] != 1 || m.Scores[eval.MetricRoute] != 1 {
		t.Fatalf("mars: %+v", m)
	}
	if all.Count[eval.MetricKeywords] != 2 || all.Count[eval.MetricRoute] != 3 || all.Count[eval.MetricRefusal] != 1 {
		t.Fatalf("answer metrics %+v", all)
	}
	if all.Count[eval.MetricHit1] != 2 || all.Errors != 0 {
		t.Fatalf("retrieval %+v", all)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| timeout | howto |") {
		t.Fatalf("markdown report: %v\n%s", err, b)
	}
	if r := e.run(false, "sessions", "list"); strings.Contains(r.stdout, "timeout") {
		t.Fatalf("eval saved its questions as sessions:\n%s", r.stdout)
	}
	// --min-score: the run worked, the score is too low for CI: exit 3.
	r = e.run(false, "eval", qs, "--min-score", "0.99")
	if r.code != exitBelowMinScore || !strings.Contains(r.stderr, "below --min-score 0.990") || !strings.Contains(r.stdout, "global score") {
		t.Fatalf("min-score: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// A judge whose replies are not the JSON asked for (the fake model
	// answers prose to everything): the run says so, not just in notes.
	if r := e.run(false, "eval", qs, "--judge-model", "llama3.2:3b"); r.code != 0 || !strings.Contains(r.stderr, "the judge could not score 2 answers") {
		t.Fatalf("judge: exit %d\n%s", r.code, r.stderr)
	}
	// --model answers with another installed model.
	srv.Models["qwen2.5:7b"] = 0
	before := len(srv.Chats())
	if r := e.run(false, "eval", qs, "--model", "qwen2.5:7b"); r.code != 0 {
		t.Fatalf("--model: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range srv.Chats()[before:] {
		if c.Model != "qwen2.5:7b" {
			t.Fatalf("--model qwen2.5:7b, but the server was asked %s", c.Model)
		}
	}
	if len(srv.Chats()) == before {
		t.Fatal("--model: no question was answered")
	}
	r = e.run(false, "eval", qs, "--verbose", "--no-answers")
	if r.code != 0 || !strings.Contains(r.stdout, "timeout  hit at 1  [howto]") || strings.Contains(r.stdout, "KEYWORDS") {
		t.Fatalf("verbose, no answers: exit %d\n%s", r.code, r.stdout)
	}
}

// Without Ollama the retrieval metrics still run, and stderr says which
// metrics were skipped and why.
func TestEvalWithoutOllama(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	r := e.run(false, "eval", writeEvalSet(t, evalSet))
	if r.code != 0 || !strings.Contains(r.stderr, "answer metrics skipped") || !strings.Contains(r.stdout, "global score") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// MRR@5 and what a reader reads, for lore and for the baseline alike.
	top5 := regexp.MustCompile(`(?m)^top 5: MRR@5 [01]\.\d{3}, mean \d+\.\d lines per result$`)
	base := regexp.MustCompile(`(?m)^baseline .*, MRR@5 [01]\.\d{3}, mean \d+\.\d lines per result in the top 5$`)
	if !top5.MatchString(r.stdout) || !base.MatchString(r.stdout) {
		t.Fatalf("no top 5 figures:\n%s", r.stdout)
	}
	r = e.run(false, "eval", writeEvalSet(t, evalSet), "--json")
	var out struct {
		Setups   []struct{ Overall eval.Summary }
		Baseline *eval.Summary
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Setups) == 0 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if t5 := out.Setups[0].Overall.Top5; t5 == nil || t5.MeanLines <= 0 {
		t.Fatalf("lore's top 5: %+v", t5)
	}
	if b := out.Baseline; b == nil || b.Top5 == nil || b.Top5.MeanLines <= 0 || b.Top5.MeanLines > eval.BaselineWindow {
		t.Fatalf("baseline's top 5: %+v", b)
	}
}

// Only unanswerable questions and no answers: no metric runs, no score is
// made up, and --min-score says it has nothing to hold the run to.
// A gold path the index does not hold is named; the run goes on.
func TestEvalNamesAGoldPathNotIndexed(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://" + ollamatest.ClosedAddr(t)
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	r := e.run(false, "eval", writeEvalSet(t, strings.Replace(evalSet, `"path":"env.md"`, `"path":"envv.md"`, 1)))
	if r.code != 0 || !strings.Contains(r.stderr, "1 gold path is not in index default (the first: envv.md)") || !strings.Contains(r.stdout, "global score") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestEvalWithNoMetric(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://" + ollamatest.ClosedAddr(t)
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	qs := writeEvalSet(t, `{"id":"mars","question":"what is the gravity on Mars","kind":"unanswerable","answerable":false,"gold":[]}`+"\n")
	r := e.run(false, "eval", qs)
	if r.code != 0 || !strings.Contains(r.stdout, "no metric ran") || strings.Contains(r.stdout, eval.Insufficient) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(false, "eval", qs, "--min-score", "0.5")
	if r.code != exitError || !strings.Contains(r.stderr, "no metric ran") {
		t.Fatalf("--min-score: exit %d\n%s", r.code, r.stderr)
	}
}

func TestEvalBadInput(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	good := writeEvalSet(t, evalSet)
	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"no file":             {[]string{"eval"}, exitUsage, "eval needs a question set"},
		"missing file":        {[]string{"eval", "/nonexistent/q.jsonl"}, exitUsage, "no such file"},
		"bad line":            {[]string{"eval", writeEvalSet(t, evalSet+"{\"id\": 3,\n")}, exitUsage, "q.jsonl:4: not a JSON question"},
		"vector-only, no vec": {[]string{"eval", good, "--vector-only"}, exitUsage, "has no vectors"},
		"two ablations":       {[]string{"eval", good, "--compare", "--no-rerank"}, exitUsage, "--compare runs every ablation"},
		"plot alone":          {[]string{"eval", good, "--plot", "x.png"}, exitUsage, "go with --calibrate"},
		"min-score range":     {[]string{"eval", good, "--min-score", "7"}, exitUsage, "outside 0..1"},
		"no index":            {[]string{"--index", "nope", "eval", good}, exitError, `index "nope" is not built`},
		"gold from another folder": {[]string{"eval", writeEvalSet(t, strings.ReplaceAll(evalSet, `"path":"`, `"path":"docs/`))}, exitUsage,
			`no gold path of the question set is in index "default" ("docs/context.md" is not`},
	} {
		r := e.run(false, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d %q", name, r.code, r.stderr)
		}
	}
}

func TestEvalExplain(t *testing.T) {
	r := newEnv(t).run(false, "eval", "--explain")
	for _, want := range []string{"ndcg@10", "cited_gold", "--- prompt: faithfulness", "--- prompt: relevancy"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("--explain lacks %q (exit %d)", want, r.code)
		}
	}
}

// Drafts are questions about random passages, with the passage as gold and
// only keywords the passage holds; they read back as a question set.
func TestEvalGenerate(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	docs := t.TempDir()
	for _, n := range []string{"alpha", "beta", "gamma"} {
		para := "The " + n + " switch turns on the " + n + " mode, which keeps every file in memory and is meant for small folders only.\n"
		os.WriteFile(filepath.Join(docs, n+".md"), []byte("# "+n+"\n\n"+strings.Repeat(para, 3)), 0o644)
	}
	if r := e.run(false, "index", "-q", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{`{"question": "What does the switch turn on?", `, `"answer_keywords": ["switch", "not in the passage"]}`}})
	out := filepath.Join(t.TempDir(), "draft.jsonl")
	r := e.run(false, "eval", "generate", "--n", "2", "--seed", "3", "--out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "drafted 2 questions") {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	qs, err := eval.ReadFile(out)
	if err != nil || len(qs) != 2 {
		t.Fatalf("%v %+v", err, qs)
	}
	for _, q := range qs {
		if len(q.Gold) != 1 || !strings.HasSuffix(q.Gold[0].Path, ".md") || q.Gold[0].Lines[0] < 1 || q.Kind != "generated" ||
			strings.Join(q.AnswerKeywords, ",") != "switch" {
			t.Errorf("draft %+v", q)
		}
	}
	// Ollama unreachable: one line naming it, nothing written.
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	r = e.run(false, "eval", "generate", "--n", "2")
	if r.code != 1 || !strings.Contains(r.stderr, "could not connect to Ollama") || r.stdout != "" {
		t.Fatalf("no Ollama: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// --calibrate turns the reranker's scores into a threshold: the sweep,
// the histogram and the config line; --write sets it in the config file
// and keeps its comments; --plot draws a PNG. Named for make test's
// non-race run (the pure-Go reranker races under -race).
func TestEvalCalibrateWithReranker(t *testing.T) {
	if raceEnabled {
		t.Skip("the pure-Go reranker races under -race; make test runs this without")
	}
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	model := filepath.Join(t.TempDir(), "m")
	if err := testmodels.WriteCrossEncoder(model, testmodels.Tiny, nil); err != nil {
		t.Fatal(err)
	}
	if r := e.run(false, "models", "import", model, "--name", "org/m"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfgFile, []byte("# my settings\nrerank-model: org/m  # the tiny one\nweb-fallback-threshold: 0.0\n"), 0o644)
	png := filepath.Join(t.TempDir(), "scores.png")
	r := e.run(false, "--config", cfgFile, "eval", writeEvalSet(t, evalSet), "--calibrate", "--plot", png, "--write")
	if r.code != 0 || !strings.Contains(r.stdout, "Config line") || !strings.Contains(r.stdout, "Recommended: ") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(cfgFile)
	if !strings.HasPrefix(string(b), "# my settings\nrerank-model: org/m  # the tiny one\nweb-fallback-threshold: ") || strings.Contains(string(b), "threshold: 0.0\n") {
		t.Fatalf("config after --write:\n%s", b)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
	// The line written is the line printed.
	line := string(b[strings.Index(string(b), "web-fallback-threshold: "):])
	if !strings.Contains(r.stdout, strings.TrimSpace(line)) {
		t.Fatalf("wrote %q, printed:\n%s", line, r.stdout)
	}
}

// Without a reranker there is no score to tune: calibration says so and
// reports how the yes/no agreement signal routed the set.
func TestEvalCalibrateWithoutReranker(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	e.run(false, "index", "--embedder", "none", "-q", searchDocs(t))
	r := e.run(false, "eval", writeEvalSet(t, evalSet), "--calibrate")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to calibrate") || !strings.Contains(r.stdout, "lore models pull") || strings.Contains(r.stdout, "Config line") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(false, "eval", writeEvalSet(t, evalSet), "--calibrate", "--write")
	if r.code != 1 || !strings.Contains(r.stderr, "--write: nothing to write") {
		t.Fatalf("--write without scores: exit %d %q", r.code, r.stderr)
	}
}

// Ctrl+C during a run prints the table of the questions that finished and
// exits 130, with no baseline (it would score questions never reached);
// --calibrate --write then writes nothing.
func TestEvalInterruptedPrintsWhatFinished(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	if r := e.run(false, "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var set strings.Builder
	for i := range 30 {
		fmt.Fprintf(&set, `{"id":"q%02d","question":"how do I cancel a context after a timeout","kind":"howto","gold":[{"path":"context.md","lines":[5,5]}]}`+"\n", i)
	}
	questions := writeEvalSet(t, set.String())
	srv.SetDelay(30 * time.Millisecond) // each question's query embedding
	interrupt := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"eval", "--parallel", "1", questions}, args...)...)
		cmd.Env = []string{"LORE_TEST_MAIN=1"}
		for k, v := range e.vars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		before := srv.EmbeddedInputs()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for srv.EmbeddedInputs() < before+3 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitCancelled {
			t.Fatalf("%v: exit %d, want 130\n%s\n%s", args, code, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	out, errs := interrupt()
	if !strings.Contains(out, "of 30 questions finished") || !strings.Contains(out, "global score") || strings.Contains(out, "baseline") {
		t.Fatalf("stdout:\n%s", out)
	}
	if !strings.Contains(errs, "questions finished (reported above)") {
		t.Fatalf("stderr: %s", errs)
	}
	_, errs = interrupt("--calibrate", "--write")
	if !strings.Contains(errs, "nothing written: the run was interrupted") {
		t.Fatalf("--calibrate --write interrupted: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(e.vars["XDG_CONFIG_HOME"], "lore", "config.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a config file was written: %v", err)
	}
}
