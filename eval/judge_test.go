package eval

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// fakeChat answers each request with the next reply and records it.
type fakeChat struct {
	mu      sync.Mutex
	replies []string
	err     error
	reqs    []*api.ChatRequest
}

func (f *fakeChat) Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return f.err
	}
	reply := ""
	if len(f.replies) > 0 {
		reply, f.replies = f.replies[0], f.replies[1:]
	}
	return fn(api.ChatResponse{Message: api.Message{Role: "assistant", Content: reply}, Done: true})
}

const (
	twoOfThree = `{"claims": [{"claim": "logs are kept 15d", "supported": true}, {"claim": "rotation is daily", "supported": true}, {"claim": "logs are gzipped", "supported": false}]}`
	rated4     = `{"reason": "answers it with an extra remark", "score": 4}`
)

func judgeResult() agent.Result {
	r := docsResult("Logs are kept for 15d [1]; see also [3]. They are gzipped.")
	r.Sources[0].Text = "Logs are kept for 15d. PASSAGE-ONE"
	r.Sources[1].Text = "PASSAGE-TWO"
	r.Sources[2].Text = "Rotation is daily. PASSAGE-THREE"
	return r
}

func TestJudgeScore(t *testing.T) {
	chat := &fakeChat{replies: []string{twoOfThree, rated4}}
	j := Judge{Chat: chat, Model: "judge:7b", NumCtx: 4096}
	scores, notes, err := j.Score(context.Background(), answerable(), judgeResult())
	if err != nil {
		t.Fatal(err)
	}
	if !near(scores[MetricFaithfulness], 2.0/3) || scores[MetricRelevancy] != 0.75 || len(scores) != 2 {
		t.Errorf("scores = %v, want faithfulness 2/3, relevancy 0.75", scores)
	}
	for _, want := range []string{`faithfulness: not supported: "logs are gzipped"`, "relevancy: 4/5: answers it with an extra remark"} {
		if !hasNote(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if len(chat.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(chat.reqs))
	}
	for i, req := range chat.reqs {
		if req.Model != "judge:7b" || req.Stream == nil || *req.Stream || req.Options["temperature"] != 0 || req.Options["num_ctx"] != 4096 {
			t.Errorf("request %d: model %q stream %v options %v", i, req.Model, req.Stream, req.Options)
		}
		var schema map[string]any
		if err := json.Unmarshal(req.Format, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("request %d: format %s is not a JSON schema", i, req.Format)
		}
		if len(req.Messages) != 1 || !strings.Contains(req.Messages[0].Content, "How long are logs kept?") || !strings.Contains(req.Messages[0].Content, "They are gzipped.") {
			t.Errorf("request %d lacks the question or the answer:\n%s", i, req.Messages[0].Content)
		}
		if strings.Contains(req.Messages[0].Content, "{{") {
			t.Errorf("request %d has an unfilled placeholder", i)
		}
	}
	faith := chat.reqs[0].Messages[0].Content
	for _, want := range []string{"[1] guide/logs.md:12-18", "PASSAGE-ONE", "[3] guide/other.md:1-9", "PASSAGE-THREE"} {
		if !strings.Contains(faith, want) {
			t.Errorf("faithfulness prompt lacks the cited passage %q", want)
		}
	}
	if strings.Contains(faith, "PASSAGE-TWO") {
		t.Error("faithfulness prompt holds a passage the answer does not cite")
	}
	if rel := chat.reqs[1].Messages[0].Content; strings.Contains(rel, "PASSAGE-") {
		t.Error("relevancy prompt holds passages")
	}
}

func TestJudgeUncitedAnswer(t *testing.T) {
	chat := &fakeChat{replies: []string{twoOfThree, rated4}}
	r := judgeResult()
	r.Answer = "Logs are kept for 15d."
	scores, notes, err := Judge{Chat: chat, Model: "j"}.Score(context.Background(), answerable(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := scores[MetricFaithfulness]; !ok {
		t.Errorf("no faithfulness: %v", scores)
	}
	if !hasNote(notes, "cites no source: judged against all 3") {
		t.Errorf("notes %q", notes)
	}
	if p := chat.reqs[0].Messages[0].Content; !strings.Contains(p, "PASSAGE-TWO") || chat.reqs[0].Options["num_ctx"] != 8192 {
		t.Errorf("an uncited answer should be judged against every source, in 8192 tokens")
	}
}

func TestJudgeSkips(t *testing.T) {
	tests := []struct {
		name string
		r    agent.Result
		note string
	}{
		{"route none", agent.Result{Route: agent.RouteNone, Answer: agent.NotInDocs}, "judge: skipped: route none"},
		{"sources only", agent.Result{Route: agent.RouteSourcesOnly}, "judge: skipped: route sources-only"},
		{"refusal on the docs route", docsResult("I couldn't find anything about that in your notes."), "judge: skipped: the answer is a refusal"},
		{"empty answer", docsResult(" "), "judge: skipped: no answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := &fakeChat{replies: []string{twoOfThree, rated4}}
			scores, notes, err := Judge{Chat: chat, Model: "j"}.Score(context.Background(), unanswerable(), tt.r)
			if err != nil || len(scores) != 0 || len(chat.reqs) != 0 {
				t.Errorf("scores %v, err %v, %d requests; want nothing asked", scores, err, len(chat.reqs))
			}
			if !hasNote(notes, tt.note) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
}

func TestJudgeReplies(t *testing.T) {
	tests := []struct {
		name         string
		faith, rel   string
		faithfulness float64 // -1: absent
		relevancy    float64 // -1: absent
		err          string
	}{
		{"fenced with prose", "Here is my verdict:\n```json\n" + twoOfThree + "\n```\nHope this helps {really}.", rated4, 2.0 / 3, 0.75, ""},
		{"prose with a brace before the JSON", "Claims {as asked}: " + twoOfThree, rated4, 2.0 / 3, 0.75, ""},
		{"verdict words", `{"claims": [{"claim": "a", "verdict": "yes"}, {"claim": "b", "supported": "partially supported"}]}`, rated4, 0.5, 0.75, ""},
		{"score as a string", twoOfThree, `{"reason": "direct", "score": "5"}`, 2.0 / 3, 1, ""},
		{"lowest score", twoOfThree, `{"reason": "off topic", "score": 1}`, 2.0 / 3, 0, ""},
		{"no claims found", `{"claims": []}`, rated4, -1, 0.75, ""},
		{"not JSON", "All claims are supported.", rated4, -1, -1, `judge: faithfulness: the reply is not the JSON asked for: "All claims are supported."`},
		{"broken JSON", `{"claims": [{"claim": "a", "supported": tru`, rated4, -1, -1, "judge: faithfulness: the reply is not the JSON asked for"},
		{"no claims key", `{"supported": 3}`, rated4, -1, -1, `judge: faithfulness: the reply has no "claims"`},
		{"claim without verdict", `{"claims": [{"claim": "a"}]}`, rated4, -1, -1, "claim 1 has no verdict"},
		{"unknown verdict", `{"claims": [{"claim": "a", "supported": "maybe"}]}`, rated4, -1, -1, `"maybe" is not a verdict`},
		{"score out of range", twoOfThree, `{"reason": "x", "score": 0.8}`, 2.0 / 3, -1, "judge: relevancy: the reply has no score from 1 to 5"},
		{"score NaN", twoOfThree, `{"reason": "x", "score": "NaN"}`, 2.0 / 3, -1, "judge: relevancy: the reply has no score from 1 to 5"},
		{"score missing", twoOfThree, `{"reason": "x"}`, 2.0 / 3, -1, "judge: relevancy: the reply has no score from 1 to 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := &fakeChat{replies: []string{tt.faith, tt.rel}}
			scores, notes, err := Judge{Chat: chat, Model: "j"}.Score(context.Background(), answerable(), judgeResult())
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.err != "" && (err == nil || !errors.Is(err, ErrJudge) || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("err = %v, want ErrJudge with %q", err, tt.err)
			}
			for metric, want := range map[string]float64{MetricFaithfulness: tt.faithfulness, MetricRelevancy: tt.relevancy} {
				got, ok := scores[metric]
				if want < 0 && ok || want >= 0 && (!ok || !near(got, want)) {
					t.Errorf("%s = %v (present %v), want %v; notes %q", metric, got, ok, want, notes)
				}
			}
		})
	}
}

func TestJudgeChatError(t *testing.T) {
	chat := &fakeChat{err: errors.New(`model "judge" not found, try pulling it first`)}
	_, _, err := Judge{Chat: chat, Model: "judge"}.Score(context.Background(), answerable(), judgeResult())
	if !errors.Is(err, ErrJudge) || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "model judge") {
		t.Errorf("err = %v", err)
	}
}

// Passages too long for the judge's context are cut, and it says so.
func TestJudgePassagesCut(t *testing.T) {
	chat := &fakeChat{replies: []string{twoOfThree, rated4}}
	r := judgeResult()
	r.Sources[0].Text = strings.Repeat("long passage ", 5000)
	_, notes, err := Judge{Chat: chat, Model: "j", NumCtx: 2048}.Score(context.Background(), answerable(), r)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(notes, "passages cut to fit the judge's 2048-token context") {
		t.Errorf("notes %q", notes)
	}
	if n := len(chat.reqs[0].Messages[0].Content); n > (2048-replyTokens)*4 {
		t.Errorf("faithfulness prompt is %d characters, over the %d-token context", n, 2048)
	}
}

func TestPrompts(t *testing.T) {
	ps := Prompts()
	if len(ps) != 2 || ps[0].Name != MetricFaithfulness || ps[1].Name != MetricRelevancy {
		t.Fatalf("prompts %v", ps)
	}
	for _, p := range ps {
		for _, ph := range []string{"{{question}}", "{{answer}}", "JSON"} {
			if !strings.Contains(p.Text, ph) {
				t.Errorf("%s prompt lacks %s", p.Name, ph)
			}
		}
	}
	if !strings.Contains(ps[0].Text, "{{passages}}") {
		t.Error("faithfulness prompt lacks {{passages}}")
	}
}

// The real wire path: the ollama client against a server that speaks
// /api/chat as Ollama does. The fake answers every request alike, so the
// reply carries both metrics' fields.
func TestJudgeOllamaWire(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Models["judge:1b"] = 0
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{`{"claims": [{"claim": "15d", "supported": true},`, ` {"claim": "gzip", "supported": false}],`, ` "reason": "direct", "score": 5}`}})
	u, _ := url.Parse(srv.URL)
	j := Judge{Chat: api.NewClient(u, srv.Client()), Model: "judge:1b", NumCtx: 4096}
	scores, _, err := j.Score(context.Background(), answerable(), judgeResult())
	if err != nil {
		t.Fatal(err)
	}
	if scores[MetricFaithfulness] != 0.5 || scores[MetricRelevancy] != 1 {
		t.Errorf("scores = %v", scores)
	}
	chats := srv.Chats()
	if len(chats) != 2 {
		t.Fatalf("%d chats, want 2", len(chats))
	}
	for i, c := range chats {
		if c.Model != "judge:1b" || c.Stream == nil || *c.Stream || c.Options["temperature"] != float64(0) || c.Options["num_ctx"] != float64(4096) {
			t.Errorf("chat %d: model %q stream %v options %v", i, c.Model, c.Stream, c.Options)
		}
		if !json.Valid(c.Format) || !strings.Contains(string(c.Format), `"required"`) {
			t.Errorf("chat %d: format %s", i, c.Format)
		}
	}
	if !strings.Contains(chats[0].Messages[0].Content, "PASSAGE-ONE") {
		t.Error("the passages did not reach the server")
	}

	srv.SetChat(ollamatest.ChatScript{HTML502: true})
	if _, _, err := j.Score(context.Background(), answerable(), judgeResult()); !errors.Is(err, ErrJudge) {
		t.Errorf("a proxy's error page: err = %v, want ErrJudge", err)
	}
}
