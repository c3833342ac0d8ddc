package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/session"
	"github.com/lore-cli/lore/wire"
)

// OpenAI's Responses API, the one its newer SDKs and Codex speak: the same
// turn as a chat completion, in the response object's shape. lore keeps no
// responses (store is ignored), so a conversation is sent whole as input;
// previous_response_id is refused.

// responsesRequest is the body of POST /v1/responses.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
	Text               *struct {
		Format json.RawMessage `json:"format"`
	} `json:"text"`
}

// inputItem is one item of a request's input list. Only messages are
// read; other items (tool calls and their outputs, reasoning) are left
// out, as chat completions leave out tool messages.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messages is the request's input as chat messages: a string is the
// user's question; a list holds message items.
func (req responsesRequest) messages() ([]chatMessage, error) {
	in := req.Input
	if len(in) == 0 || string(in) == "null" {
		return nil, errors.New(`input: missing: send "input": "your question" or a list of messages`)
	}
	if in[0] == '"' {
		return []chatMessage{{Role: "user", Content: in}}, nil
	}
	var items []inputItem
	if err := json.Unmarshal(in, &items); err != nil {
		return nil, errors.New("input: must be a string or a list of message items")
	}
	var msgs []chatMessage
	for _, it := range items {
		if it.Type == "" || it.Type == "message" {
			msgs = append(msgs, chatMessage{Role: it.Role, Content: it.Content})
		}
	}
	return msgs, nil
}

// response is a Response object.
type response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              *respError        `json:"error"`
	IncompleteDetails  *struct{}         `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []outputMessage   `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              bool              `json:"store"`
	Temperature        *float64          `json:"temperature"`
	Text               respText          `json:"text"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []struct{}        `json:"tools"`
	TopP               *float64          `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *respUsage        `json:"usage"`
	Metadata           map[string]string `json:"metadata"`
	Lore               *loreExtension    `json:"lore,omitempty"`
}

type respError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respText struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
}

// outputMessage is the one output item lore writes: the assistant's
// message with its text.
type outputMessage struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string           `json:"type"`
	Text        string           `json:"text"`
	Annotations []respAnnotation `json:"annotations"`
	Logprobs    []struct{}       `json:"logprobs"`
}

// respAnnotation is a url_citation as the Responses API writes it: flat,
// where chat completions nest it.
type respAnnotation struct {
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// responses answers POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	if err := decodeBody(r, &req); err != nil {
		bodyError(w, err)
		return
	}
	if req.PreviousResponseID != "" {
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "previous_response_not_found",
			"previous_response_id: lore keeps no responses: send the whole conversation as input")
		return
	}
	if req.Text != nil {
		if err := checkFormat("text.format", req.Text.Format); err != nil {
			writeError(w, http.StatusBadRequest, wire.InvalidRequest, "unsupported_response_format", err.Error())
			return
		}
	}
	msgs, err := req.messages()
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "invalid_input", err.Error())
		return
	}
	c := newCall(s, "resp_", true)
	events, ok := c.start(w, r, req.Model, "invalid_input", msgs)
	if !ok {
		return
	}
	defer c.cancel()
	r = r.WithContext(c.ctx)
	rc := &respCall{call: c, msgID: "msg_" + session.NewID()}
	if req.Stream {
		rc.stream(w, r, events)
		return
	}
	res, err := c.drain(r, events, nil, nil)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rc.response(&res))
}

// respCall is a call answered in the Responses API's shape.
type respCall struct {
	*call
	msgID string
}

// response is the Response object: in progress with no output (res nil),
// or completed with the turn's message, usage and lore extension.
func (c *respCall) response(res *agent.Result) response {
	out := response{ID: c.id, Object: "response", CreatedAt: c.created, Status: "in_progress", Model: c.model,
		Output: []outputMessage{}, ToolChoice: "none", Tools: []struct{}{}, Truncation: "disabled", Metadata: map[string]string{}}
	out.Text.Format.Type = "text"
	if res == nil {
		return out
	}
	text, notes := c.render(*res)
	out.Status = "completed"
	out.Output = []outputMessage{c.message("completed", &outputText{Type: "output_text", Text: text, Annotations: respAnnotations(notes), Logprobs: []struct{}{}})}
	u := respUsage{InputTokens: res.PromptTokens, OutputTokens: res.AnswerTokens, TotalTokens: res.PromptTokens + res.AnswerTokens}
	out.Usage = &u
	out.Lore = c.extension(*res)
	return out
}

// message is the output item, with its one part or none yet.
func (c *respCall) message(status string, part *outputText) outputMessage {
	m := outputMessage{Type: "message", ID: c.msgID, Status: status, Role: "assistant", Content: []outputText{}}
	if part != nil {
		m.Content = append(m.Content, *part)
	}
	return m
}

func respAnnotations(notes []annotation) []respAnnotation {
	out := make([]respAnnotation, len(notes))
	for i, n := range notes {
		out[i] = respAnnotation{Type: "url_citation", URL: n.URLCitation.URL, Title: n.URLCitation.Title,
			StartIndex: n.URLCitation.StartIndex, EndIndex: n.URLCitation.EndIndex}
	}
	return out
}

// textDelta is a response.output_text.delta event: one per token, so a
// struct of its own rather than a map.
type textDelta struct {
	Type           string     `json:"type"`
	ItemID         string     `json:"item_id"`
	OutputIndex    int        `json:"output_index"`
	ContentIndex   int        `json:"content_index"`
	Delta          string     `json:"delta"`
	Logprobs       []struct{} `json:"logprobs"`
	SequenceNumber int        `json:"sequence_number"`
}

// stream answers with the Responses API's typed events, in the order
// OpenAI's SDKs accumulate them: response.created and in_progress, the
// message item and its output_text part added, a delta per token (then
// the rest of the text: the sources list, the notices), an annotation
// per listed source, the text, part and item done, response.completed
// with the usage and the lore extension. A turn that breaks ends with an
// error event.
func (c *respCall) stream(w http.ResponseWriter, r *http.Request, events <-chan agent.Event) {
	out := newSSE(w, c.s.opt.WriteTimeout)
	w.WriteHeader(http.StatusOK)
	seq := 0
	send := func(typ string, fields map[string]any) error {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return out.event(typ, fields)
	}
	where := func(fields map[string]any) map[string]any {
		fields["item_id"], fields["output_index"], fields["content_index"] = c.msgID, 0, 0
		return fields
	}
	emptyPart := outputText{Type: "output_text", Annotations: []respAnnotation{}, Logprobs: []struct{}{}}
	start := c.response(nil)
	if send("response.created", map[string]any{"response": start}) != nil ||
		send("response.in_progress", map[string]any{"response": start}) != nil ||
		send("response.output_item.added", map[string]any{"output_index": 0, "item": c.message("in_progress", nil)}) != nil ||
		send("response.content_part.added", where(map[string]any{"part": emptyPart})) != nil {
		return
	}
	var streamed strings.Builder
	// Every delta is the same but for its text and number: encoded once.
	frame, err := out.encode(textDelta{Type: "response.output_text.delta", ItemID: c.msgID, Delta: tokenMark, Logprobs: []struct{}{}})
	if err != nil {
		return
	}
	before, after, _ := strings.Cut(frame, `"`+tokenMark+`"`)
	after, _, _ = strings.Cut(after, `"sequence_number":`)
	head := "event: response.output_text.delta\ndata: " + before
	delta := func(text string) error {
		streamed.WriteString(text)
		n := seq
		seq++
		return out.text(head, text, after+`"sequence_number":`+strconv.Itoa(n)+"}")
	}
	c.idle = out.flushPending
	res, err := c.drain(r, events, delta, func() error { return out.comment("keep-alive") })
	if r.Context().Err() != nil {
		return // nobody is reading any more
	}
	if err != nil {
		e, _ := classify(err)
		send("error", map[string]any{"code": e.Error.Code, "message": e.Error.Message, "param": nil,
			// OpenAI's SDKs raise an event with an error object as an
			// exception carrying its message.
			"error": e.Error})
		return
	}
	done := c.response(&res)
	part := done.Output[0].Content[0]
	if rest, ok := strings.CutPrefix(part.Text, streamed.String()); ok && rest != "" {
		if delta(rest) != nil {
			return
		}
	}
	for i, a := range part.Annotations {
		if send("response.output_text.annotation.added", where(map[string]any{"annotation_index": i, "annotation": a})) != nil {
			return
		}
	}
	if send("response.output_text.done", where(map[string]any{"text": part.Text, "logprobs": []struct{}{}})) != nil ||
		send("response.content_part.done", where(map[string]any{"part": part})) != nil ||
		send("response.output_item.done", map[string]any{"output_index": 0, "item": done.Output[0]}) != nil ||
		send("response.completed", map[string]any{"response": done}) != nil {
		return
	}
}
