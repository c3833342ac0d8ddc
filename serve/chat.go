package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/session"
	"github.com/lore-cli/lore/wire"
)

// chatCompletions answers POST /v1/chat/completions: the last user message
// is the question, the messages before it the conversation it continues.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	// r.Body is capped by route (serve-max-body): past it, 413.
	if err := decodeBody(r, &req); err != nil {
		bodyError(w, err)
		return
	}
	if err := checkFormat("response_format", req.ResponseFormat); err != nil {
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "unsupported_response_format", err.Error())
		return
	}
	c := newCall(s, "chatcmpl-", req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	events, ok := c.start(w, r, req.Model, "invalid_messages", req.Messages)
	if !ok {
		return
	}
	defer c.cancel()
	r = r.WithContext(c.ctx)
	if req.Stream {
		c.stream(w, r, events)
		return
	}
	c.whole(w, r, events)
}

// start reads the model and the messages of a request and starts its
// turn, or answers why not (false). The turn ends with c.cancel, which
// the handler defers: the engine never runs on for a reply nobody will
// read.
func (c *call) start(w http.ResponseWriter, r *http.Request, modelID, badMessages string, msgs []chatMessage) (<-chan agent.Event, bool) {
	s := c.s
	mode, ix, err := parseModel(modelID)
	if err != nil {
		writeError(w, http.StatusNotFound, wire.InvalidRequest, "model_not_found", err.Error())
		return nil, false
	}
	if ix != "" {
		if err := config.CheckIndexName(ix); err != nil {
			writeError(w, http.StatusBadRequest, wire.InvalidRequest, "invalid_model", "model "+modelID+": index "+err.Error())
			return nil, false
		}
	}
	turn, err := readTurn(msgs)
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, badMessages, err.Error())
		return nil, false
	}
	c.model = modelName(mode, ix)
	in := info(r)
	in.index, in.question = s.indexName(ix), turn.Question
	c.index = in.index
	c.ctx, c.cancel = context.WithCancel(r.Context())
	// A request is not the user's own conversation: the client keeps its
	// history and sends it back, so nothing is saved in lore's sessions.
	_, events, err := s.eng.Ask(c.ctx, app.AskRequest{Index: ix, Mode: mode, Turn: turn, NoSave: true})
	if err != nil {
		c.cancel()
		s.failOn(w, ix, err)
		return nil, false
	}
	return events, true
}

// readTurn turns OpenAI's messages into a question and its history.
// System and developer messages are left out: lore's prompt is its own,
// grounded in the sources.
func readTurn(msgs []chatMessage) (agent.Turn, error) {
	var turn agent.Turn
	for i, m := range msgs {
		text, err := m.text()
		if err != nil {
			return turn, fmt.Errorf("messages[%d]: %v", i, err)
		}
		switch m.Role {
		case "user", "assistant":
			turn.History = append(turn.History, agent.Message{Role: m.Role, Content: text})
		case "system", "developer", "tool":
		default:
			return turn, fmt.Errorf("messages[%d]: role %q: use user, assistant or system", i, m.Role)
		}
	}
	n := len(turn.History)
	if n == 0 || turn.History[n-1].Role != "user" || strings.TrimSpace(turn.History[n-1].Content) == "" {
		return turn, errors.New("messages: the last message must be the user's question, and not empty")
	}
	turn.Question = turn.History[n-1].Content
	turn.History = turn.History[:n-1]
	return turn, nil
}

func (s *Server) indexName(ix string) string {
	if ix == "" {
		return s.eng.DefaultIndex()
	}
	return ix
}

// call is one chat completion being answered.
type call struct {
	s       *Server
	id      string
	created int64
	model   string
	index   string // the index the turn answers from
	usage   bool
	ctx     context.Context
	cancel  context.CancelFunc
	// idle, when set, is called whenever drain has no event waiting: a
	// stream flushes the tokens it wrote then, once for those that came
	// together.
	idle func() error
	// notices are what the turn said about how it ran (no web search,
	// lexical only...): lore ask prints them, a client reads them in the
	// text and in lore.notices.
	notices []string
}

// newCall is a call whose id starts with prefix (chatcmpl-, resp_).
func newCall(s *Server, prefix string, usage bool) *call {
	return &call{s: s, id: prefix + session.NewID(), created: time.Now().Unix(), usage: usage}
}

// whole answers without a stream: the turn runs to its end first.
func (c *call) whole(w http.ResponseWriter, r *http.Request, events <-chan agent.Event) {
	res, err := c.drain(r, events, nil, nil)
	if err != nil {
		c.s.fail(w, err)
		return
	}
	content, notes := c.render(res)
	writeJSON(w, http.StatusOK, completion{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices: []choice{{Message: responseMessage{Role: "assistant", Content: content, Annotations: notes}, FinishReason: "stop"}},
		Usage:   newUsage(res.PromptTokens, res.AnswerTokens),
		Lore:    c.extension(res),
	})
}

// drain reads events to the end of the turn, handing each token to onToken
// and each finished stage to the metrics; keepAlive, when set, is called
// whenever the turn was quiet for the keep-alive interval. The turn's
// result, or why it broke. Events and keep-alives come from this one
// goroutine: a response is never written by two.
func (c *call) drain(r *http.Request, events <-chan agent.Event, onToken func(string) error, keepAlive func() error) (agent.Result, error) {
	in := info(r)
	var tick <-chan time.Time
	if keepAlive != nil {
		t := time.NewTicker(c.s.opt.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	// A turn's first event comes once it holds its chat slot (app.Ask
	// waits for it on the turn's goroutine): until then it is queued, for
	// at most QueueTimeout.
	queued := time.NewTimer(c.s.opt.QueueTimeout)
	defer queued.Stop()
	waiting := queued.C
	defer c.s.answers.end(c)
	for {
		if c.idle != nil && len(events) == 0 {
			if err := c.idle(); err != nil {
				return agent.Result{}, err
			}
		}
		var ev agent.Event
		select {
		case <-c.s.cut:
			return agent.Result{}, errShuttingDown
		case <-waiting:
			return agent.Result{}, errQueueTimeout
		case <-tick:
			if err := keepAlive(); err != nil {
				return agent.Result{}, err
			}
			continue
		case e, ok := <-events:
			if !ok {
				return agent.Result{}, errors.New("the answer ended without a result")
			}
			ev = e
			if waiting != nil {
				waiting = nil
				c.s.answers.begin(c)
			}
		}
		switch ev := ev.(type) {
		case agent.StageFinished:
			c.s.metrics.stage(string(ev.Stage), ev.Duration)
		case agent.Notice:
			c.notice(ev.Text)
		case agent.Token:
			if onToken != nil {
				if err := onToken(ev.Text); err != nil {
					return agent.Result{}, err
				}
			}

		case agent.Done:
			in.answerRoute, in.tokens = string(ev.Result.Route), ev.Result.PromptTokens+ev.Result.AnswerTokens
			c.notice(ev.Result.Notice)
			return ev.Result, nil
		case agent.Failed:
			in.answerRoute, in.err = string(ev.Result.Route), ev.Err.Error()
			return ev.Result, ev.Err
		case agent.Cancelled:
			return ev.Result, context.Cause(r.Context())
		}
	}
}

// notice adds one of the turn's notices (a result's Notice may join
// several with "; ") unless it was said already.
func (c *call) notice(text string) {
	for n := range strings.SplitSeq(text, "; ") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(c.notices, n) {
			c.notices = append(c.notices, n)
		}
	}
}

// render is the answer as every client shows it (wire.Answer.Text: the
// text with its [n] markers, then a "Sources:" list, then the notices)
// and a url_citation for each listed source spanning its line of the
// list: the cited ones, or every passage of a reply that cites none (not
// in the documents, sources only).
func (c *call) render(res agent.Result) (string, []annotation) {
	lead, tail := "", ""
	if len(c.notices) > 0 {
		said := "lore: " + strings.Join(c.notices, "; ") + "."
		if strings.TrimSpace(res.Answer) == "" {
			// No answer was written (Ollama unreachable: sources only):
			// a client that shows only the text must learn why first.
			lead = said
		} else {
			tail = "\n\n" + said
		}
	}
	text, spans := wire.NewAnswer(res, "").Text(lead)
	notes := []annotation{}
	for _, sp := range spans {
		notes = append(notes, annotation{Type: "url_citation", URLCitation: urlCitation{
			URL: sourceURL(sp.Source), Title: strings.TrimPrefix(sp.Source.Citation(), fmt.Sprintf("[%d] ", sp.Source.N)),
			StartIndex: sp.Start, EndIndex: sp.End,
		}})
	}
	return text + tail, notes
}

// sourceURL is a web source's URL or a document's file:// URL with its
// lines.
func sourceURL(s wire.Source) string {
	if s.URL != nil {
		return *s.URL
	}
	var root, path string
	if s.Source != nil {
		root = *s.Source
	}
	if s.Path != nil {
		path = *s.Path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, path))}
	start, end := 0, 0
	if s.StartLine != nil && s.EndLine != nil {
		start, end = *s.StartLine, *s.EndLine
	}
	return u.String() + fmt.Sprintf("#L%d-L%d", start, end)
}

// loreExtension is the lore object beside OpenAI's fields: the route,
// the deciding score, every source with all its fields and the timings,
// in the shape of `lore ask --json`, and the turn's notices.
type loreExtension struct {
	wire.Answer
	Notices []string `json:"notices"` // never null
}

func (c *call) extension(res agent.Result) *loreExtension {
	ext := &loreExtension{Answer: wire.NewAnswer(res, ""), Notices: append([]string{}, c.notices...)}
	// Read after the answer, of the index it came from; the request may be
	// ending, the read is of two small files.
	if f, err := c.s.eng.Freshness(context.WithoutCancel(c.ctx), c.index); err == nil {
		ext.Sync = wire.NewSync(f)
	}
	return ext
}
