package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/lore-cli/lore/internal/units"
)

// What lore reads from the Ollama host, at most. A peer that sends more is
// refused like one that is down: a proxy's endless page or a broken server
// must not take the memory of the machine (an endless 200 body grew lore
// search to 22 GB before these caps).
const (
	// MaxReply caps a JSON reply other than embeddings: version, tags,
	// show (a model's license and template are tens of KiB), ps, errors.
	MaxReply = 8 << 20
	// MaxEmbeddingDim is the longest embedding lore accepts; the largest
	// embedding models in use have 4096 dimensions.
	MaxEmbeddingDim = 8192
	// embedValueBytes is the JSON of one number of an embedding with its
	// comma, generously: a float32 prints in at most 15 ("-1.2345678e-05,").
	embedValueBytes = 24
	// embedBase is an embed reply's JSON besides the numbers: the model's
	// name, the durations, the brackets.
	embedBase = 1 << 20
	// MaxStreamLine caps one NDJSON line of a chat stream (a token and its
	// metadata are a few hundred bytes; the final line has the counts).
	MaxStreamLine = 1 << 20
	// MaxStream caps a whole chat stream: over 200,000 lines of tokens.
	MaxStream = 64 << 20
)

// ReplyTimeout bounds a call with a small reply (version, tags, show, ps),
// from the request to the end of the reply: these answer in milliseconds,
// so one that takes longer is stuck. A variable so that tests of a hung
// server need not wait it out.
var ReplyTimeout = 10 * time.Second

// streamCap is MaxStream; tests lower it to reach it quickly.
var streamCap int64 = MaxStream

// Deadlines, unless Timeouts says otherwise.
const (
	// DefaultEmbedTimeout bounds one /api/embed request: a batch on a slow
	// CPU, and loading the model first.
	DefaultEmbedTimeout = 2 * time.Minute
	// DefaultFirstTokenTimeout bounds the wait for the first line of a chat
	// reply: loading the model and reading the prompt. Later lines are
	// bounded by the agent's stall limit.
	DefaultFirstTokenTimeout = 2 * time.Minute
)

// Timeouts are the configurable deadlines of a client; zero means the
// default.
type Timeouts struct {
	Reply      time.Duration // small replies: ReplyTimeout (tests shorten it)
	Embed      time.Duration // embed-timeout
	FirstToken time.Duration // first-token-timeout
}

// ErrReplyTooLarge means the host sent more than lore reads of that kind
// of reply; ErrNoAnswer means it did not answer within lore's deadline.
// Both count as ErrUnreachable: the same fallbacks follow.
var (
	ErrReplyTooLarge = errors.New("reply too large")
	ErrNoAnswer      = errors.New("no answer in time")
	ErrCutMidLine    = errors.New("reply cut mid-line")
)

// peerError is a reply lore refused, in one line that names the host.
type peerError struct {
	kind error
	msg  string
}

func (e *peerError) Error() string { return e.msg }

func (e *peerError) Is(target error) bool { return target == ErrUnreachable || target == e.kind }

// guard is the transport under every call of the api client: it bounds
// each reply by size and time and refuses what is not Ollama, so that no
// call site can forget to.
type guard struct {
	next http.RoundTripper
	host string // for messages, without a password
	t    Timeouts
}

// kind is what a path answers with, and so the caps and deadline it gets.
type kind int

const (
	small  kind = iota // a JSON reply read whole
	embed              // /api/embed: sized by the inputs
	stream             // /api/chat, /api/generate: NDJSON, or one JSON object
)

func kindOf(path string) kind {
	switch path {
	case "/api/embed", "/api/embeddings":
		return embed
	case "/api/chat", "/api/generate":
		return stream
	}
	return small
}

// errLoreDeadline is the cause of a context lore cancelled on its deadline,
// told apart from the caller's own cancellation.
var errLoreDeadline = errors.New("lore's deadline")

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	k := kindOf(req.URL.Path)
	path := req.Method + " " + req.URL.Path
	limit, deadline := int64(MaxReply), g.t.Reply
	switch k {
	case embed:
		limit = embedBase + int64(countInputs(req))*MaxEmbeddingDim*embedValueBytes
		deadline = g.t.Embed
	case stream:
		limit, deadline = streamCap, g.t.FirstToken
	}
	parent := req.Context()
	ctx, cancel := context.WithCancelCause(parent)
	timer := time.AfterFunc(deadline, func() { cancel(errLoreDeadline) })
	b := &body{g: g, path: path, kind: k, ctx: ctx, parent: parent, cancel: cancel, timer: timer, deadline: deadline, max: limit, slot: slotOf(parent)}
	resp, err := g.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, b.explain(err)
	}
	if resp.StatusCode < 300 && !isOllamaType(req.URL.Path, resp) {
		resp.Body.Close()
		timer.Stop()
		cancel(nil)
		return nil, notOllamaError{host: g.host, status: resp.Status, contentType: resp.Header.Get("Content-Type")}
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		timer.Stop()
		cancel(nil)
		return nil, b.tooLarge()
	}
	if k == stream {
		b.firstByte = true
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/x-ndjson" {
			b.maxLine = MaxStreamLine
		}
	}
	b.rc = resp.Body
	resp.Body = b
	return resp, nil
}

// isOllamaType reports whether a successful reply is one Ollama sends: JSON
// or NDJSON (server/routes.go: c.JSON, streamResponse), or the plain
// "Ollama is running" at /. A login page or a captive portal is HTML.
func isOllamaType(path string, resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if ct == "" && resp.ContentLength == 0 {
		return true
	}
	mt, _, _ := mime.ParseMediaType(ct)
	switch mt {
	case "application/json", "application/x-ndjson":
		return true
	case "text/plain":
		return path == "/" || path == ""
	}
	return false
}

// countInputs is how many texts an embed request asks for: its reply is
// capped by that many of the longest embeddings.
func countInputs(req *http.Request) int {
	if req.GetBody == nil {
		return 1
	}
	rc, err := req.GetBody()
	if err != nil {
		return 1
	}
	defer rc.Close()
	var r struct {
		Input json.RawMessage `json:"input"`
	}
	if json.NewDecoder(rc).Decode(&r) != nil {
		return 1
	}
	var list []json.RawMessage
	if json.Unmarshal(r.Input, &list) == nil {
		return max(len(list), 1)
	}
	return 1
}

// body is a reply's body under its caps and deadline.
type body struct {
	g        *guard
	rc       io.ReadCloser
	path     string // method and path, for messages
	kind     kind
	ctx      context.Context
	parent   context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	deadline time.Duration
	slot     *errSlot

	firstByte bool  // the deadline ends with the first byte (a stream)
	n, max    int64 // read so far, and the cap
	line      int64 // bytes since the last newline
	maxLine   int64 // 0: no line cap
	last      byte
	err       error
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if n > 0 && b.firstByte {
		b.firstByte = false
		b.timer.Stop()
	}
	if over := b.n + int64(n) - b.max; over > 0 {
		n -= int(over)
		err = b.tooLarge()
	}
	b.n += int64(n)
	if b.maxLine > 0 && n > 0 {
		if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
			b.line = int64(n - i - 1)
		} else {
			b.line += int64(n)
		}
		if b.line > b.maxLine && err == nil {
			err = b.fail(ErrReplyTooLarge, fmt.Sprintf("Ollama at %s sent a line of more than %s in the stream for %s: stopped reading (is ollama-host an Ollama server?)",
				b.g.host, units.Bytes(b.maxLine), b.path))
		}
	}
	if n > 0 {
		b.last = p[n-1]
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) && b.maxLine > 0 && b.n > 0 && b.last != '\n':
		err = b.fail(ErrCutMidLine, fmt.Sprintf("Ollama at %s stopped in the middle of a line of the stream for %s: did it crash? (`ollama ps`, or restart `ollama serve`)", b.g.host, b.path))
	case !errors.Is(err, io.EOF):
		err = b.explain(err)
	}
	if err != nil {
		b.err = err
		if !errors.Is(err, io.EOF) {
			b.slot.set(err)
		}
	}
	return n, err
}

func (b *body) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

func (b *body) fail(kind error, msg string) error {
	err := &peerError{kind: kind, msg: msg}
	b.slot.set(err)
	return err
}

func (b *body) tooLarge() error {
	return b.fail(ErrReplyTooLarge, fmt.Sprintf("Ollama at %s sent more than %s for %s: stopped reading (is ollama-host an Ollama server?)",
		b.g.host, units.Bytes(b.max), b.path))
}

// explain turns the cancellation by lore's own deadline into an error that
// says so; the caller's cancellation and other errors pass through.
func (b *body) explain(err error) error {
	if context.Cause(b.ctx) != errLoreDeadline || b.parent.Err() != nil {
		return err
	}
	fix := "is it stuck or overloaded? (`ollama ps`, or restart `ollama serve`)"
	switch b.kind {
	case embed:
		fix += "; embed-timeout sets this limit"
	case stream:
		fix += "; first-token-timeout sets this limit"
	}
	return b.fail(ErrNoAnswer, fmt.Sprintf("Ollama at %s did not answer within %s for %s: %s", b.g.host, b.deadline, b.path, fix))
}

// errSlot carries a stream's read error past the api client, which ends a
// stream quietly when its reader fails (it does not check the scanner's
// error): without it a refused stream would look like a finished one.
type errSlot struct {
	mu  sync.Mutex
	err error
}

func (s *errSlot) set(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *errSlot) get() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

type slotKey struct{}

func slotOf(ctx context.Context) *errSlot {
	s, _ := ctx.Value(slotKey{}).(*errSlot)
	return s
}
