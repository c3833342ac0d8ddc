package serve

import (
	"bytes"
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
	// Every token's chunk is the same but for the token: encoded once
	// around a marker, each token then costs the encoding of its text.
	frame, err := out.encode(c.chunk(delta{Content: ptr(tokenMark)}, nil))
	if err != nil {
		return
	}
	before, after, _ := strings.Cut(frame, `"`+tokenMark+`"`)
	c.idle = out.flushPending
	res, err := c.drain(r, events, func(text string) error {
		streamed.WriteString(text)
		return out.data(before, text, after)
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
	buf     bytes.Buffer // the event being written, reused
	pending bool         // written, not flushed yet
}

// newSSE sets a stream's headers; the caller writes the status.
func newSSE(w http.ResponseWriter, timeout time.Duration) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would hold the stream back
	return &sse{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// tokenMark stands for a token in a chunk encoded once per stream.
const tokenMark = "lore:token-goes-here"

// encode is v as one line of JSON.
func (s *sse) encode(v any) (string, error) {
	s.buf.Reset()
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false) // "path > heading" reads better than \u003e in a raw stream
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(s.buf.String(), "\n"), nil
}

// send writes v as a data-only event (chat completions).
func (s *sse) send(v any) error {
	line, err := s.encode(v)
	if err != nil {
		return err
	}
	return s.write("data: ", line, "\n\n")
}

// data writes a data-only event of before, text as a JSON string, after.
func (s *sse) data(before, text, after string) error {
	return s.text("data: "+before, text, after)
}

// text writes head, text as a JSON string, then after and the event's
// end. It is flushed by the next flush or flushPending: tokens that
// arrived together leave in one write.
func (s *sse) text(head, text, after string) error {
	s.buf.Reset()
	s.buf.WriteString(head)
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	enc.Encode(text)
	s.buf.Truncate(s.buf.Len() - 1) // Encode's newline
	s.buf.WriteString(after)
	s.buf.WriteString("\n\n")
	s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := s.w.Write(s.buf.Bytes())
	s.pending = err == nil
	return err
}

// flushPending sends what text wrote.
func (s *sse) flushPending() error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.rc.Flush()
}

// event writes v as an event named name (the Responses API's typed
// events).
func (s *sse) event(name string, v any) error {
	line, err := s.encode(v)
	if err != nil {
		return err
	}
	return s.write("event: "+name+"\ndata: ", line, "\n\n")
}

func (s *sse) comment(text string) error { return s.write(": ", text, "\n\n") }

func (s *sse) done() error { return s.write("data: [DONE]\n\n", "", "") }

// write writes an event made of three pieces (none of them buf's).
func (s *sse) write(a, b, c string) error {
	s.buf.Reset()
	s.buf.WriteString(a)
	s.buf.WriteString(b)
	s.buf.WriteString(c)
	return s.flush()
}

// flush sends the event in buf, with the write timeout anew.
func (s *sse) flush() error {
	s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	s.pending = false
	return s.rc.Flush()
}
