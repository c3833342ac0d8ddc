package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/mcpserve"
	"github.com/lore-cli/lore/serve"
	"github.com/lore-cli/lore/wire"
)

// mcpHTTPTimeouts bound how long a client may hold a connection without
// finishing a request: the values of lore serve's server.
type mcpHTTPTimeouts struct {
	header time.Duration // to send the headers
	read   time.Duration // to send the headers and the body
	idle   time.Duration // between requests on a kept-alive connection
}

var defaultMCPHTTPTimeouts = mcpHTTPTimeouts{header: 10 * time.Second, read: time.Minute, idle: 2 * time.Minute}

// newMCPHTTPServer is the http.Server of lore mcp --http. There is no
// WriteTimeout: an ask streams its progress for as long as it runs.
// ReadTimeout is safe for such a stream: it bounds reading the request,
// and a request's context is not cancelled when it passes after the body
// was read.
func newMCPHTTPServer(h http.Handler, t mcpHTTPTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.header,
		ReadTimeout:       t.read,
		IdleTimeout:       t.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}

// serveMCPHTTP serves streamable HTTP at /mcp until ctx ends.
func serveMCPHTTP(ctx context.Context, newServer func() *mcp.Server, addr string, cfg config.Config, streams *ioStreams) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w: is another server on that port? choose another with --http", err)
	}
	log := slog.New(slog.NewJSONHandler(streams.Err, nil))
	hs := newMCPHTTPServer(newMCPHandler(newServer, mcpHTTPOptions{token: cfg.ServeToken, maxSessions: cfg.MCPMaxSessions, log: slog.Default()}), defaultMCPHTTPTimeouts)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	auth := "no token: loopback only"
	if cfg.ServeToken != "" {
		auth = "token required"
	}
	log.Info("listening", "addr", "http://"+ln.Addr().String()+"/mcp", "index", cfg.Index, "auth", auth)
	select {
	case err := <-done:
		return fmt.Errorf("mcp: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout())
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	log.Info("stopped")
	return nil
}

type mcpHTTPOptions struct {
	token       string
	maxSessions int
	log         *slog.Logger
	// idle and fresh: how long an established session, and one that sent
	// nothing after initialize, may stay idle; 0 is 10 minutes and 1.
	idle, fresh time.Duration
}

// modernProtocol is the first MCP version without sessions (SEP-2575): a
// client speaking it sends every request on its own, with the version in
// its Mcp-Protocol-Version header.
const modernProtocol = "2026-07-28"

// newMCPHandler is the MCP endpoint behind the token (when set) and the
// browser protections: the SDK's own refuses a request that reached a
// loopback address with a Host that is not (DNS rebinding), and the
// Origin check refuses a browser's cross-site POST.
//
// Two SDK handlers serve it. A client of a version with sessions (the
// TypeScript SDK, Claude Code) gets the stateful one, whose sessions are
// capped; a client of the sessionless version gets the stateless one: the
// stateful handler answers its server/discover with the versions it
// knows and then refuses the version it listed (-32022), which is how
// mark3labs/mcp-go's default client failed.
func newMCPHandler(newServer func() *mcp.Server, opt mcpHTTPOptions) http.Handler {
	if opt.log == nil {
		opt.log = slog.New(slog.DiscardHandler)
	}
	if opt.maxSessions <= 0 {
		opt.maxSessions = config.Defaults().MCPMaxSessions
	}
	if opt.idle <= 0 {
		opt.idle = 10 * time.Minute
	}
	if opt.fresh <= 0 {
		opt.fresh = time.Minute
	}
	sdkLog := mcpserve.SDKLog(opt.log)
	stateful := newServer()
	sessions := &mcpSessions{srv: stateful, max: opt.maxSessions, idle: opt.idle, fresh: opt.fresh, use: map[string]*sessionUse{}}
	withSessions := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stateful },
		&mcp.StreamableHTTPOptions{Logger: sdkLog, SessionTimeout: opt.idle, MaxRequestBodyBytes: 4 << 20})
	stateless := newServer()
	sessionless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stateless },
		&mcp.StreamableHTTPOptions{Logger: sdkLog, Stateless: true, MaxRequestBodyBytes: 4 << 20, PropagateRequestCancellation: true})
	authorized := serve.TokenCheck(opt.token)
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !authorized(r):
			w.Header().Set("WWW-Authenticate", `Bearer realm="lore"`)
			refuse(w, http.StatusUnauthorized, wire.NewError(wire.Authentication, "invalid_api_key",
				"this lore mcp server needs its token: send Authorization: Bearer TOKEN (the serve-token setting or LORE_SERVE_TOKEN)"))
			return
		case r.URL.Path != "/mcp":
			refuse(w, http.StatusNotFound, wire.NewError(wire.NotFound, "unknown_route", "lore mcp serves /mcp only"))
			return
		}
		if err := checkOrigins(cop, r); err != nil {
			refuse(w, http.StatusForbidden, wire.NewError(wire.InvalidRequest, "origin_not_allowed", err.Error()))
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") >= modernProtocol {
			sessionless.ServeHTTP(w, r)
			return
		}
		sessions.serve(withSessions, w, r)
	})
}

// refuse answers without reading the body, and closes the connection.
// Go's server reads an unread body (up to 256 KiB) before it sends the
// answer, and again when the handler returns: a client that announced a
// body and never sent it held the connection, unanswered, for as long as
// it liked. Connection: close skips the first read, the past read
// deadline ends the second at once.
func refuse(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
	http.NewResponseController(w).SetReadDeadline(time.Now())
}

// checkOrigins is Go's cross-origin protection for every Origin and
// Sec-Fetch-Site a request carries: the protection reads the first of
// each, and an empty Origin before evil.com passed it.
func checkOrigins(cop *http.CrossOriginProtection, r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return nil // safe methods, as the protection has it
	}
	sameSite := false
	for _, site := range r.Header.Values("Sec-Fetch-Site") {
		switch site {
		case "":
		case "same-origin", "none":
			sameSite = true
		default:
			return fmt.Errorf("cross-origin request refused (Sec-Fetch-Site %s): lore mcp answers no web page", site)
		}
	}
	if sameSite {
		return nil // a browser said the request is its page's own, as the protection trusts
	}
	for _, origin := range r.Header.Values("Origin") {
		probe := &http.Request{Method: r.Method, Host: r.Host, Header: http.Header{"Origin": {origin}}}
		if cop.Check(probe) != nil {
			return fmt.Errorf("requests from web pages on %s are refused: lore mcp answers only its own origin", strconv.Quote(origin))
		}
	}
	return nil
}

// mcpSessions caps the sessions of the stateful handler. The SDK keeps a
// session until it has been idle for SessionTimeout and has no cap: each
// initialize cost about 16 KB for 30 minutes. Here a new session past the
// cap closes the least recently used idle one (one that never sent a
// request after initialize first), and one that sent nothing within
// fresh of its initialize is closed at the next admission.
type mcpSessions struct {
	srv         *mcp.Server
	max         int
	idle, fresh time.Duration

	mu      sync.Mutex
	use     map[string]*sessionUse // by session id
	opening int                    // initializes admitted and not yet answered
}

type sessionUse struct {
	last        time.Time // the end of its last request, or its start while one runs
	inFlight    int       // requests running now, a GET stream included
	established bool      // it sent a request after initialize
	closing     bool
}

func (s *mcpSessions) serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		s.begin(id)
		defer s.end(id)
		h.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.ServeHTTP(w, r) // the SDK refuses it: no session to count
		return
	}
	victims, ok := s.admit()
	for _, ss := range victims {
		ss.Close() // its client gets 404 and, as the spec says, starts a new session
	}
	if !ok {
		w.Header().Set("Retry-After", "10")
		refuse(w, http.StatusServiceUnavailable, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000,
			"message": fmt.Sprintf("lore mcp holds its limit of %d sessions and every one is in use: try again shortly, or raise mcp-max-sessions", s.max)}})
		return
	}
	// Deferred: a handler that panics must not keep its opening slot.
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.opening--
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && s.use[id] == nil {
			s.use[id] = &sessionUse{last: time.Now()}
		}
	}()
	h.ServeHTTP(w, r)
}

func (s *mcpSessions) begin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.use[id]
	if u == nil {
		return // not a session this server opened: a made-up id must not grow the map
	}
	u.inFlight++
	u.last = time.Now()
	u.established = true
}

func (s *mcpSessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.use[id]; u != nil {
		u.inFlight--
		u.last = time.Now()
	}
}

// admit makes room for a new session: it returns the sessions to close
// and whether the new one may open.
func (s *mcpSessions) admit() ([]*mcp.ServerSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	live := map[string]*mcp.ServerSession{}
	for ss := range s.srv.Sessions() {
		if id := ss.ID(); id != "" {
			live[id] = ss
		}
	}
	for id := range s.use {
		if live[id] == nil {
			delete(s.use, id) // closed by its client or by the SDK's timeout
		}
	}
	var victims []*mcp.ServerSession
	count := s.opening
	var lru string
	for id, ss := range live {
		u := s.use[id]
		if u == nil { // initialize still running
			u = &sessionUse{last: now}
			s.use[id] = u
		}
		if u.closing {
			continue
		}
		limit := s.idle
		if !u.established {
			limit = s.fresh
		}
		if u.inFlight == 0 && now.Sub(u.last) > limit {
			u.closing = true
			victims = append(victims, ss)
			continue
		}
		count++
		if u.inFlight == 0 && (lru == "" || older(u, s.use[lru])) {
			lru = id
		}
	}
	if count >= s.max {
		if lru == "" {
			return victims, false
		}
		s.use[lru].closing = true
		victims = append(victims, live[lru])
	}
	s.opening++
	return victims, true
}

// older reports whether a should be closed before b: a session that never
// sent a request after initialize before one that did, then the least
// recently used.
func older(a, b *sessionUse) bool {
	if a.established != b.established {
		return !a.established
	}
	return a.last.Before(b.last)
}
