package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/lore-cli/lore/agent"
)

// stream answers with server-sent events as OpenAI's clients read them:
// chat.completion.chunk objects under one id, the role in the first delta,
// the tokens as they come, the sources list, finish_reason "stop" on the
// last choice chunk, the usage chunk when asked, then [DONE]. While the
// search runs, comment lines keep the connection alive.
func (c *call) stream(w http.ResponseWriter, r *http.Request, events <-chan agent.Event) {
	out := newSSE(w, c.s.opt.WriteTimeout)
	w.WriteHeader(http.StatusOK)
	if out.send(c.chunk(delta{Role: "assistant", Content: ptr("")}, nil)) != nil {
		return
	}

	var streamed strings.Builder
	res, err := c.drain(r, events, func(text string) error {
		streamed.WriteString(text)
		return out.send(c.chunk(delta{Content: ptr(text)}, nil))
	}, func() error { return out.comment("keep-alive") })
	if r.Context().Err() != nil {
		return // nobody is reading any more
	}
	if err != nil {
		// The status line is long gone: OpenAI's clients raise an
		// error event's message as an exception.
		e, _ := classify(err)
		out.send(e)
		return
	}
	content, notes := c.render(res)
	// What the tokens did not say (the not-in-the-documents statement, a
	// sources-only answer) and the sources list close the text.
	if rest, ok := strings.CutPrefix(content, streamed.String()); ok && rest != "" {
		if out.send(c.chunk(delta{Content: ptr(rest), Annotations: notes}, nil)) != nil {
			return
		}
	}
	last := c.chunk(delta{}, ptr("stop"))
	last.Lore = c.extension(res)
	if out.send(last) != nil {
		return
	}
	if c.usage {
		u := c.chunk(delta{}, nil)
		u.Choices, u.Usage = []chunkChoice{}, newUsage(res.PromptTokens, res.AnswerTokens)
		if out.send(u) != nil {
			return
		}
	}
	out.done()
}

// chunk is one chunk of this call with one choice.
func (c *call) chunk(d delta, finish *string) chunk {
	ch := chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
	return ch
}

func ptr[T any](v T) *T { return &v }

// sse writes server-sent events, each flushed at once and each given the
// write timeout anew: a client that stops reading is dropped, not waited
// on for ever.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// newSSE sets a stream's headers; the caller writes the status.
func newSSE(w http.ResponseWriter, timeout time.Duration) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would hold the stream back
	return &sse{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// send writes v as a data-only event (chat completions).
func (s *sse) send(v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "path > heading" reads better than \u003e in a raw stream
	if err := enc.Encode(v); err != nil {
		return err
	}
	return s.write("data: " + strings.TrimSuffix(b.String(), "\n") + "\n\n")
}

// event writes v as an event named name (the Responses API's typed
// events).
func (s *sse) event(name string, v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return s.write("event: " + name + "\ndata: " + strings.TrimSuffix(b.String(), "\n") + "\n\n")
}

func (s *sse) comment(text string) error { return s.write(": " + text + "\n\n") }

func (s *sse) done() error { return s.write("data: [DONE]\n\n") }

func (s *sse) write(text string) error {
	s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	return s.rc.Flush()
}
