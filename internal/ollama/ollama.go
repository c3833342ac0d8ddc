// Package ollama builds clients for the Ollama server and turns its errors
// into messages that say what to do. It is shared by the index (embeddings)
// and the agent (chat), which must agree on both.
package ollama

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Sentinel errors callers can test with errors.Is.
var (
	ErrUnreachable  = errors.New("ollama unreachable")
	ErrModelMissing = errors.New("model not installed")
)

// DialFunc dials a network address. Tests and the offline guard wrap it to
// see every connection lore makes.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Client is the api client for one Ollama host, its replies bounded in
// size and time (see guard).
type Client struct {
	*api.Client
	hc   *http.Client // the api client's, for Chat's own stream
	base *url.URL
}

// NewClient returns a client for base. dial may be nil for the default
// dialer. Each call has a deadline of its kind (ReplyTimeout, t.Embed,
// t.FirstToken); a stream, once it has started, runs as long as the
// caller's context allows.
func NewClient(base *url.URL, dial DialFunc, t Timeouts) *Client {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:               nil, // the Ollama host is local or named exactly; never a proxy
		DialContext:         loopbackFast(dial),
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	t.Reply = cmp.Or(t.Reply, ReplyTimeout)
	t.Embed = cmp.Or(t.Embed, DefaultEmbedTimeout)
	t.FirstToken = cmp.Or(t.FirstToken, DefaultFirstTokenTimeout)
	g := &guard{next: tr, host: base.Redacted(), t: t}
	hc := &http.Client{Transport: g}
	return &Client{Client: api.NewClient(base, hc), hc: hc, base: base}
}

// Chat is api.Client.Chat, but a stream that lore stopped reading (too
// large, too slow, cut mid-line) is an error, not a quiet end.
func (c *Client) Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error {
	slot := &errSlot{}
	var err error
	if c.hc == nil || c.base.Hostname() == "ollama.com" || envconfig.UseAuth() {
		err = c.Client.Chat(context.WithValue(ctx, slotKey{}, slot), req, fn) // signed requests
	} else {
		err = c.chat(context.WithValue(ctx, slotKey{}, slot), req, fn)
	}
	if serr := slot.get(); serr != nil && ctx.Err() == nil {
		return serr // the api client's own error, if any, is the partial line
	}
	return err
}

// chat is api.Client.Chat's stream, read as it reads it, without the 8 MB
// line buffer it allocates and clears for every call (a millisecond of
// each answer lore serves, and 8 MB of garbage): lines are read into a
// buffer that starts small and grows to the same cap.
func (c *Client) chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.JoinPath("/api/chat").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	hreq.Header.Set("User-Agent", "lore (Go "+runtime.Version()+")")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 4<<10), maxChatLine)
	for lines.Scan() {
		line := lines.Bytes()
		var e struct {
			Error string `json:"error,omitempty"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			if resp.StatusCode >= http.StatusBadRequest {
				return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(line)}
			}
			return errors.New(string(line))
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status}
		case resp.StatusCode >= http.StatusBadRequest:
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: e.Error}
		case e.Error != "":
			return errors.New(e.Error)
		}
		var r api.ChatResponse
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	// As api.Client's stream: a cut stream ends quietly here; the guard's
	// slot holds what cut it, and a caller that saw no final message
	// knows the answer is incomplete.
	return nil
}

// maxChatLine is api.Client's line cap.
const maxChatLine = 8 << 20

// loopbackDialTimeout bounds a connect to this machine: one that answers
// does so in microseconds, so a connect still pending after this is a
// firewall dropping packets, and waiting the full remote timeout would only
// delay the keyword-search fallback.
const loopbackDialTimeout = time.Second

func loopbackFast(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && isLoopback(host) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, loopbackDialTimeout)
			defer cancel()
		}
		return dial(ctx, network, addr)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Explain turns an error from the Ollama client into one that names the
// problem and the fix. Errors it does not recognise pass through.
func Explain(err error, host, model string) error {
	var pe *peerError
	var no notOllamaError
	switch {
	case errors.As(err, &pe): // lore's own deadline or cap: says it all
		return pe
	case errors.As(err, &no):
		return no
	case err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	}
	if IsUnreachable(err) {
		return fmt.Errorf("%w: could not connect to Ollama at %s: start it with `ollama serve` (or set ollama-host / OLLAMA_HOST)", ErrUnreachable, host)
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := strings.ToLower(se.ErrorMessage)
		switch {
		case strings.Contains(msg, "<html") || strings.Contains(msg, "<!doctype"),
			se.StatusCode == http.StatusNotFound && !strings.Contains(msg, "model"):
			return notOllamaError{host: host, status: se.Status}
		case se.StatusCode == http.StatusNotFound && model != "" && strings.Contains(msg, "not found"):
			return fmt.Errorf("%w: model %q is not installed in Ollama at %s: run `ollama pull %s`", ErrModelMissing, model, host, model)
		}
	}
	return err
}

// ErrNotOllama means something answered at the Ollama host, but not Ollama.
var ErrNotOllama = errors.New("not an Ollama server")

// notOllamaError is a web server (a proxy's page, another service) where
// Ollama should be. It counts as unreachable: lore falls back the same way.
type notOllamaError struct{ host, status, contentType string }

func (e notOllamaError) Error() string {
	what := ""
	switch {
	case e.contentType != "":
		what = fmt.Sprintf(" (%s, %s)", e.status, e.contentType)
	case e.status != "":
		what = fmt.Sprintf(" (%s)", e.status)
	}
	return fmt.Sprintf("OLLAMA_HOST (%s) answered%s, but it is not an Ollama server: point ollama-host or OLLAMA_HOST at Ollama (default http://127.0.0.1:11434)", e.host, what)
}

func (e notOllamaError) Is(target error) bool {
	return target == ErrUnreachable || target == ErrNotOllama
}

// IsUnreachable reports whether err means nothing answered at the host,
// or nothing lore could use: not Ollama, too slow, too large.
func IsUnreachable(err error) bool {
	var pe *peerError
	if errors.As(err, &pe) || errors.Is(err, ErrNotOllama) {
		return true
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dns) ||
		(errors.As(err, &op) && op.Op == "dial")
}

// Transient reports whether err is worth retrying: a dropped connection, a
// timeout, 429 or a 5xx. A missing model or a bad request is not.
func Transient(err error) bool {
	var pe *peerError
	if err == nil || errors.Is(err, context.Canceled) || errors.As(err, &pe) || errors.Is(err, ErrNotOllama) {
		return false // a reply lore refused would be refused again
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "EOF")
}

// Retry calls fn until it succeeds, fails for good, or attempts run out,
// sleeping 250 ms, 500 ms, 1 s, ... between tries. An error wrapped by
// Permanent is returned (unwrapped) without another try.
func Retry(ctx context.Context, attempts int, fn func() error) error {
	delay := 250 * time.Millisecond
	var err error
	for i := 0; i < attempts; i++ {
		err = fn()
		if p, ok := err.(permanent); ok {
			return p.err
		}
		if err == nil || !Transient(err) || i == attempts-1 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
	return err
}

// Permanent marks an error Retry must not retry.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }

// Checker is the part of *api.Client that Check uses.
type Checker interface {
	Heartbeat(ctx context.Context) error
	Show(ctx context.Context, req *api.ShowRequest) (*api.ShowResponse, error)
}

// Check makes sure the server answers and has model, with errors that say
// how to fix either. It returns the model's trained context length (0 when
// the server does not say).
func Check(ctx context.Context, c Checker, host, model string) (int, error) {
	if err := c.Heartbeat(ctx); err != nil {
		return 0, Explain(err, host, model)
	}
	info, err := c.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return 0, Explain(err, host, model)
	}
	return ContextLength(info), nil
}

// ContextLength is the context length a model was trained with, from
// /api/show's model_info ("llama.context_length" and the like), 0 when
// the server does not say.
func ContextLength(info *api.ShowResponse) int {
	for k, v := range info.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if n, ok := v.(float64); ok {
				return int(n)
			}
		}
	}
	return 0
}

// FullName names a model the way the server lists it (/api/tags, /api/ps):
// an untagged name means :latest. A colon in a registry host's port
// ("host:5000/m") is not a tag.
func FullName(name string) string {
	if !strings.Contains(name[strings.LastIndexByte(name, '/')+1:], ":") {
		return name + ":latest"
	}
	return name
}
