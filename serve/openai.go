package serve

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The shapes of OpenAI's chat completions API that lore speaks. Only what
// lore reads or writes is here: a request's other fields (temperature,
// max_tokens, tools...) are tolerated and ignored, because lore's answer
// is grounded in its sources and its model is the one configured.

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

// checkFormat refuses a structured-output request (response_format
// json_object or json_schema, the Responses API's text.format): lore's
// answer is prose with [n] citations and a sources list, and a client
// that parses it as JSON would fail in its own parser on a 200. Text, or
// no format, is what lore writes anyway.
func checkFormat(field string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("%s: must be an object with a type", field)
	}
	if f.Type == "text" {
		return nil
	}
	return fmt.Errorf("%s %q: lore answers in cited prose, not structured output: leave %s out (or use {\"type\": \"text\"}) and read the text", field, f.Type, field)
}

// chatMessage is one message of a request. Content is a string or, in
// newer clients, a list of parts of which lore reads the text ones.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is the message's text: a string content, or its text parts joined.
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("a message's content must be a string or a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		// text in chat completions; input_text and output_text in the
		// Responses API's message items.
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func newUsage(prompt, completion int) *usage {
	return &usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// annotation is a url_citation: the source a span of the answer cites.
// The indexes count Unicode code points, as OpenAI's do.
type annotation struct {
	Type        string      `json:"type"`
	URLCitation urlCitation `json:"url_citation"`
}

type urlCitation struct {
	URL        string `json:"url"`
	Title      string `json:"title"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
}

type responseMessage struct {
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	Refusal     *string      `json:"refusal"`
	Annotations []annotation `json:"annotations"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	Logprobs     *struct{}       `json:"logprobs"`
}

// completion is a whole chat.completion (a request without stream).
type completion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []choice       `json:"choices"`
	Usage   *usage         `json:"usage"`
	Lore    *loreExtension `json:"lore,omitempty"`
}

type delta struct {
	Role        string       `json:"role,omitempty"`
	Content     *string      `json:"content,omitempty"`
	Annotations []annotation `json:"annotations,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

// chunk is one chat.completion.chunk of a stream. Choices is never nil:
// the usage chunk has an empty list, as OpenAI's clients expect.
type chunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []chunkChoice  `json:"choices"`
	Usage   *usage         `json:"usage,omitempty"`
	Lore    *loreExtension `json:"lore,omitempty"`
}

// model is an entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

// The model names: lore answers offline, lore-online may search the web;
// either may name its index after a colon.
const (
	modelOffline = "lore"
	modelOnline  = "lore-online"
)

// parseModel reads a request's model name: its mode and index ("" for the
// server's default index). An empty name is lore, offline.
func parseModel(name string) (mode, index string, err error) {
	base, ix, _ := strings.Cut(name, ":")
	switch base {
	case modelOffline, "":
		mode = "offline"
	case modelOnline:
		mode = "online"
	default:
		return "", "", fmt.Errorf("model %q does not exist: use lore, lore-online, lore:INDEX or lore-online:INDEX (GET /v1/models lists them)", name)
	}
	return mode, ix, nil
}

// modelName is the inverse of parseModel for the default index "".
func modelName(mode, index string) string {
	base := modelOffline
	if mode == "online" {
		base = modelOnline
	}
	if index == "" {
		return base
	}
	return base + ":" + index
}
