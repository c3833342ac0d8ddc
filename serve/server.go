// Package serve is lore over HTTP: OpenAI's chat completions API (so any
// OpenAI client, Open WebUI or an editor can ask lore), a search route in
// the shape of `lore search --json`, health, readiness and Prometheus
// metrics. It is an adapter: every answer and search is the engine's, the
// JSON shapes it shares with the CLI are package wire's.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/admit"
	"github.com/lore-cli/lore/wire"
)

// Engine is what the server asks of lore's engine (app.Engine).
type Engine interface {
	Search(ctx context.Context, req app.SearchRequest) (app.SearchResult, error)
	Ask(ctx context.Context, req app.AskRequest) (string, <-chan agent.Event, error)
	IndexInfo(ctx context.Context, name string) (index.Info, error)
	ListIndexes(ctx context.Context) ([]index.Info, error)
	DefaultIndex() string
	// Freshness is how far an index is in step with its files: the sync
	// object of the lore extension.
	Freshness(ctx context.Context, name string) (index.Freshness, error)
	OllamaStatus(ctx context.Context) error
	Load() map[string]admit.Stats
}

// Options configure a Server.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// every /v1 route and /metrics. It is never logged.
	Token string
	// CORSOrigins are the browser origins allowed to call the API; none
	// (the default) answers no cross-origin request.
	CORSOrigins []string
	// MaxBody caps a request body in bytes.
	MaxBody int64
	// BodyBudget caps the bytes of request bodies being read and answered
	// at once (each counted at its declared length, or MaxBody when it
	// declares none until it has been read): past it a request is refused with 429 before its
	// body is read, so a flood of near-cap bodies cannot grow the
	// process by their size times their number. Default: 8 MiB, at
	// least twice MaxBody.
	BodyBudget int64
	// QueueTimeout bounds how long a request waits in the queue for a
	// chat slot (default 2 minutes); past it, 429 (a stream: an error
	// event, code queue_timeout).
	QueueTimeout time.Duration
	// MaxConns caps the connections open at once (default 1024): past it
	// new ones wait in the kernel's accept queue until one closes.
	MaxConns int
	// WriteTimeout bounds the wait for a client to take each write; a
	// stream is given it anew for every chunk.
	WriteTimeout time.Duration
	// KeepAlive is how often a stream with nothing to say yet sends an
	// SSE comment, so that proxies and clients do not give up on it.
	KeepAlive time.Duration
	// Log gets one line per request. Debug adds the questions to it.
	Log   *slog.Logger
	Debug bool
}

// Server answers lore's HTTP API.
type Server struct {
	eng        Engine
	opt        Options
	authorized func(*http.Request) bool
	metrics    *metrics
	draining   atomic.Bool
	mux        *http.ServeMux
	// cut is closed at the shutdown deadline: every answer still running
	// ends with an error its client can tell from an end (Shutdown).
	cut     chan struct{}
	bodies  *semaphore.Weighted // BodyBudget
	cutOnce sync.Once
	active  atomic.Int64 // requests being answered
	answers answers
}

// New returns a server over eng.
func New(eng Engine, opt Options) *Server {
	if opt.MaxBody <= 0 {
		opt.MaxBody = 1 << 20
	}
	if opt.BodyBudget <= 0 {
		opt.BodyBudget = max(8<<20, 2*opt.MaxBody)
	}
	if opt.QueueTimeout <= 0 {
		opt.QueueTimeout = 2 * time.Minute
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = 1024
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 2 * time.Minute
	}
	if opt.KeepAlive <= 0 {
		opt.KeepAlive = 10 * time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{eng: eng, opt: opt, metrics: newMetrics(eng), mux: http.NewServeMux(), authorized: TokenCheck(opt.Token),
		cut: make(chan struct{}), bodies: semaphore.NewWeighted(opt.BodyBudget)}
	s.route("POST /v1/chat/completions", true, s.chatCompletions)
	s.route("POST /v1/responses", true, s.responses)
	s.route("GET /v1/models", true, s.models)
	s.route("GET /v1/models/{id}", true, s.model)
	s.route("POST /v1/search", true, s.search)
	s.route("GET /v1/indexes", true, s.indexes)
	s.route("GET /metrics", true, s.metrics.handler().ServeHTTP)
	s.route("GET /healthz", false, s.healthz)
	s.route("GET /readyz", false, s.readyz)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, wire.NotFound, "unknown_route",
			fmt.Sprintf("no route %s %s: lore serves /v1/chat/completions, /v1/responses, /v1/models, /v1/models/{id}, /v1/search, /v1/indexes, /healthz, /readyz and /metrics", r.Method, r.URL.Path))
	})
	return s
}

// Handler is the whole API, middleware included.
func (s *Server) Handler() http.Handler { return s.cors(s.mux) }

// Drain makes every new request a 503 while the server shuts down: a
// client on a kept-alive connection learns to go elsewhere.
func (s *Server) Drain() { s.draining.Store(true) }

// errShuttingDown ends the answers still running at the shutdown deadline.
var errShuttingDown = errors.New("lore is shutting down: this answer was cut at the shutdown deadline (serve-shutdown-timeout); ask again in a moment or on another server")

// Shutdown stops hs as lore serve does on SIGTERM: no new connections, a
// 503 for new requests on kept-alive ones, and the answers in flight
// finish, for up to deadline. Past it each answer still running ends with
// an error (a stream's last event is code server_shutting_down, so that
// its client can tell a cut from an end), then stopEngine cancels what
// still runs and the connections close. The error is hs.Shutdown's: nil
// when everything finished in time.
func (s *Server) Shutdown(hs *http.Server, deadline time.Duration, stopEngine func()) error {
	s.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	err := hs.Shutdown(ctx)
	if err == nil {
		return nil
	}
	s.cutOnce.Do(func() { close(s.cut) })
	// The handlers write their error and return at once; a client that
	// does not read it is not waited for longer than this.
	for end := time.Now().Add(2 * time.Second); s.active.Load() > 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	stopEngine()
	hs.Close()
	return err
}

// HTTPServer is an http.Server for the API with every timeout set: a
// client that sends its headers or body slowly, or never reads, cannot
// hold a connection for ever. base is the context of every request:
// cancelling it stops the generations still running.
func (s *Server) HTTPServer(base context.Context) *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.opt.Log.Handler(), slog.LevelWarn),
	}
}

// route registers h for pattern behind the request log, the metrics, the
// body cap and, when private, the token.
func (s *Server) route(pattern string, private bool, h http.HandlerFunc) {
	_, path, _ := strings.Cut(pattern, " ")
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Add(-1)
		start := time.Now()
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		defer func() {
			d := time.Since(start)
			s.metrics.observe(path, rec.status, d)
			attrs := []any{"method", r.Method, "route", path, "status", rec.status, "duration_ms", d.Milliseconds()}
			if info.index != "" {
				attrs = append(attrs, "index", info.index)
			}
			if info.answerRoute != "" {
				attrs = append(attrs, "answer_route", info.answerRoute)
			}
			if info.tokens > 0 {
				attrs = append(attrs, "tokens", info.tokens)
			}
			if info.err != "" {
				// A stream that broke after its 200 says so here.
				attrs = append(attrs, "error", info.err)
			}
			if s.opt.Debug && info.question != "" {
				attrs = append(attrs, "question", info.question)
			}
			s.opt.Log.Info("request", attrs...)
		}()
		switch {
		case !s.hostAllowed(r.Host):
			writeError(rec, http.StatusForbidden, wire.InvalidRequest, "host_not_allowed",
				"Host "+r.Host+" is not this machine: without a token lore serve answers only localhost, 127.0.0.1 and [::1] (set serve-token to serve other names)")
			return
		case !s.originAllowed(r):
			writeError(rec, http.StatusForbidden, wire.InvalidRequest, "origin_not_allowed",
				"requests from web pages on "+strings.Join(r.Header.Values("Origin"), ", ")+" are refused: add the origin to serve-cors-origins")
			return
		case private && !s.authorized(r):
			rec.Header().Set("WWW-Authenticate", `Bearer realm="lore"`)
			writeError(rec, http.StatusUnauthorized, wire.Authentication, "invalid_api_key",
				"this lore server needs its token: send Authorization: Bearer TOKEN (the serve-token setting or LORE_SERVE_TOKEN)")
			return
		case s.draining.Load() && path != "/healthz":
			rec.Header().Set("Retry-After", "5")
			writeError(rec, http.StatusServiceUnavailable, wire.ServerError, "shutting_down", "lore is shutting down: try again on another server or in a moment")
			return
		}
		if n := s.bodySize(r); n > 0 {
			if r.ContentLength > s.opt.MaxBody {
				writeError(rec, http.StatusRequestEntityTooLarge, wire.InvalidRequest, "body_too_large", bodyTooLarge)
				return
			}
			// Admitted before a byte of the body is read: a decoded
			// body costs several times its size while it is answered.
			if !s.bodies.TryAcquire(n) {
				rec.Header().Set("Retry-After", "1")
				writeError(rec, http.StatusTooManyRequests, wire.RateLimit, "busy",
					"lore is busy: too many large request bodies are being answered at once; try again shortly")
				return
			}
			b := &budgetBody{ReadCloser: http.MaxBytesReader(rec, r.Body, s.opt.MaxBody), held: n, release: s.bodies.Release}
			defer b.releaseAll()
			r.Body = b
		} else {
			r.Body = http.MaxBytesReader(rec, r.Body, s.opt.MaxBody)
		}
		h(rec, r)
	})
}

// bodySize is what r's body counts against BodyBudget: its declared
// length, or the cap when it declares none (chunked).
func (s *Server) bodySize(r *http.Request) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return s.opt.MaxBody
	}
	return min(r.ContentLength, s.opt.MaxBody)
}

// budgetBody holds a request's share of BodyBudget while the request is
// answered, and gives back what was reserved and never sent once the body
// is read to its end: a chunked body is admitted at MaxBody, and nine
// small chunked requests in flight were refused with 429 for as long as
// their answers ran. The handler reads the body on its own goroutine
// before it answers, and releaseAll runs after it on that goroutine.
type budgetBody struct {
	io.ReadCloser
	read, held int64
	release    func(int64)
}

func (b *budgetBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err == io.EOF && b.held > b.read {
		b.release(b.held - b.read)
		b.held = b.read
	}
	return n, err
}

func (b *budgetBody) releaseAll() {
	if b.held > 0 {
		b.release(b.held)
		b.held = 0
	}
}

// Serve serves hs on ln, at most MaxConns connections at once: each holds
// a descriptor and buffers, and a client opening thousands must not run
// the process out of either.
func (s *Server) Serve(hs *http.Server, ln net.Listener) error {
	return hs.Serve(netutil.LimitListener(ln, s.opt.MaxConns))
}

// hostAllowed guards a server without a token against DNS rebinding: a
// web page whose name an attacker points at 127.0.0.1 would otherwise be
// same-origin with lore and read every indexed document. Without a token
// (loopback only) the Host must name this machine; with one, the token is
// the guard.
func (s *Server) hostAllowed(host string) bool {
	if s.opt.Token != "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed checks every Origin header a request carries, not the
// first: a browser sends one, so a request with an empty one then
// evil.example was crafted to slip past a check of the first.
func (s *Server) originAllowed(r *http.Request) bool {
	values := r.Header.Values("Origin")
	if len(values) > 1 {
		return false
	}
	for _, o := range values {
		if o != "" && !slices.Contains(s.opt.CORSOrigins, o) {
			return false
		}
	}
	return true
}

// cors answers the browser origins configured, and only those: a page on
// any other origin gets no Access-Control header and its browser refuses.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !slices.Contains(s.opt.CORSOrigins, origin) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			// OpenAI's browser clients send their own X-Stainless-* and
			// OpenAI-* headers besides Authorization: an allowed origin
			// may send whatever it asks for.
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Access-Control-Request-Headers")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestInfo is what a handler learns that the request log line reports.
type requestInfo struct {
	index, answerRoute, question string
	err                          string // why the answer failed
	tokens                       int
}

type infoKey struct{}

func info(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// recorder remembers the status written, for the log and the metrics.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (Flush, write
// deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
