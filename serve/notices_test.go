package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// TestBrokenOllamaStreamSaysWhatBroke: an answer whose Ollama stream
// breaks off reaches the client as an error naming Ollama, not a bare
// "unexpected EOF", and the request's log line carries the error.
func TestBrokenOllamaStreamSaysWhatBroke(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout", " [1]."}, FailAfter: 2})
	resp, body := rawDo(t, f, post("/v1/chat/completions", `{"model":"lore","stream":true,"messages":[{"role":"user","content":"How do I cancel a request after a timeout?"}]}`))
	lines := strings.Split(strings.TrimSpace(body), "\n\n")
	last := lines[len(lines)-1]
	if resp.StatusCode != 200 || !strings.HasPrefix(last, `data: {"error":`) || !strings.Contains(last, "Ollama") {
		t.Errorf("the stream's last event: %s", last)
	}
	_, whole := rawDo(t, f, post("/v1/chat/completions", `{"model":"lore","messages":[{"role":"user","content":"How do I cancel a request after a timeout?"}]}`))
	if !strings.Contains(whole, "Ollama") {
		t.Errorf("a whole answer: %s", whole)
	}
	var logged bool
	for line := range strings.Lines(f.log.String()) {
		var l map[string]any
		json.Unmarshal([]byte(line), &l)
		if l["route"] == "/v1/chat/completions" {
			if e, _ := l["error"].(string); !strings.Contains(e, "Ollama") {
				t.Errorf("the log line does not say what broke: %s", line)
			}
			logged = true
		}
	}
	if !logged {
		t.Errorf("no request logged:\n%s", f.log.String())
	}
}

// TestOnlineWithoutWebSaysWhy: lore-online on a server with no web
// provider answers from the documents and says why it did not search the
// web, in the text and in the lore extension, as lore ask --online does.
func TestOnlineWithoutWebSaysWhy(t *testing.T) {
	f := newFixture(t, Options{}, func(c *config.Config) { c.WebProvider, c.WebFallbackThreshold = "", 1000 })
	p := question("What is the moon made of?")
	p.Model = "lore-online"
	res, err := f.client().Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	content := res.Choices[0].Message.Content
	if !strings.Contains(content, "without a web search") {
		t.Errorf("the text does not say why the web was not searched:\n%s", content)
	}
	var ext struct {
		Notices []string `json:"notices"`
	}
	json.Unmarshal([]byte(res.JSON.ExtraFields["lore"].Raw()), &ext)
	if len(ext.Notices) == 0 || !strings.Contains(strings.Join(ext.Notices, " "), "without a web search") {
		t.Errorf("lore.notices: %q", ext.Notices)
	}
}

// TestSourcesOnlyAnswerAnnotatesItsPassages: a reply with passages and no
// written answer (Ollama down) has a url_citation for each listed line.
func TestSourcesOnlyAnswerAnnotatesItsPassages(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.Close()
	res, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget"))
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Choices[0].Message
	if n := strings.Count(msg.Content, "\n["); len(msg.Annotations) == 0 || len(msg.Annotations) != n {
		t.Fatalf("%d annotations for %d listed passages:\n%s", len(msg.Annotations), n, msg.Content)
	}
	runes := []rune(msg.Content)
	for _, a := range msg.Annotations {
		if span := string(runes[a.URLCitation.StartIndex:a.URLCitation.EndIndex]); !strings.HasPrefix(span, "[") {
			t.Errorf("annotation spans %q", span)
		}
	}
}

// TestNoPassagesNoPromiseOfThem: a question on an index where nothing
// matches does not say "the closest passages are listed below" over an
// empty list.
func TestNoPassagesNoPromiseOfThem(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.Close() // lexical search only: a word in no document finds nothing
	res, err := f.client().Chat.Completions.New(context.Background(), question("zzqx"))
	if err != nil {
		t.Fatal(err)
	}
	content := res.Choices[0].Message.Content
	if strings.Contains(content, "listed below") && !strings.Contains(content, "Sources:") {
		t.Errorf("promises passages it does not list:\n%s", content)
	}
}
