package eval

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/agent"
)

//go:embed prompts/generate.txt
var generatePrompt string

// ErrNothingToAsk means the model found no question in a passage (a
// licence, a table of contents): the caller moves on to another.
var ErrNothingToAsk = errors.New("no question in this passage")

// Draft asks model for one question that passage p answers, with answer
// keywords found verbatim in it; the gold is p itself. Drafts are for a
// person to review: the model can ask badly, and only a reader can tell.
func Draft(ctx context.Context, chat agent.ChatClient, model string, p agent.Passage) (Question, error) {
	user := fmt.Sprintf("File: %s (lines %d-%d)\nSection: %s\n\n%s", p.Path, p.Start, p.End, p.Heading, p.Text)
	reply, err := chatJSON(ctx, chat, model, generatePrompt, user)
	if err != nil {
		return Question{}, err
	}
	var d struct {
		Question       string   `json:"question"`
		AnswerKeywords []string `json:"answer_keywords"`
	}
	if err := json.Unmarshal([]byte(jsonObject(reply)), &d); err != nil {
		return Question{}, fmt.Errorf("the model's draft is not the JSON asked for: %w", err)
	}
	d.Question = strings.TrimSpace(d.Question)
	if d.Question == "" {
		return Question{}, ErrNothingToAsk
	}
	q := Question{Question: d.Question, Kind: "generated", AnswerKeywords: []string{},
		Gold: []Gold{{Path: p.Path, Section: p.Heading, Lines: [2]int{p.Start, p.End}}}}
	// A keyword the passage does not hold would fail every correct answer.
	text := strings.ToLower(p.Text)
	for _, k := range d.AnswerKeywords {
		if k = strings.TrimSpace(k); k != "" && strings.Contains(text, strings.ToLower(k)) {
			q.AnswerKeywords = append(q.AnswerKeywords, k)
		}
	}
	return q, nil
}

// chatJSON sends one system+user exchange at temperature 0, asking Ollama
// for JSON, and returns the reply.
func chatJSON(ctx context.Context, chat agent.ChatClient, model, system, user string) (string, error) {
	stream := false
	req := &api.ChatRequest{Model: model, Stream: &stream, Format: json.RawMessage(`"json"`),
		Messages: []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Options:  map[string]any{"temperature": 0}}
	var b strings.Builder
	err := chat.Chat(ctx, req, func(r api.ChatResponse) error { b.WriteString(r.Message.Content); return nil })
	return b.String(), err
}

// jsonObject is the outermost {...} of a reply: models wrap JSON in code
// fences or a sentence even when asked not to.
func jsonObject(s string) string {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}
