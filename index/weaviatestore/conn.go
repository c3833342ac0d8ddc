package weaviatestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	wvgrpc "github.com/weaviate/weaviate-go-client/v5/weaviate/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnreachable means no endpoint of the cluster answered.
var ErrUnreachable = errors.New("weaviate: no endpoint answered")

// ErrNoQuorum means the cluster answered but could not take a write at the
// consistency asked (too few replicas up).
var ErrNoQuorum = errors.New("weaviate: the cluster cannot take writes now")

// UnreachableError is ErrUnreachable with the endpoints tried. Its text is
// the reason and the fix; Last (one line, cut short) is what the last
// endpoint's failure was, for --debug.
type UnreachableError struct {
	Endpoints []string
	Last      string
	// GRPC is set when the nodes answered over HTTP but not over gRPC
	// (which batches use): Endpoints are then the gRPC addresses.
	GRPC bool
	// Slow are the endpoints that were ready but did not finish the call
	// in time: with nodes down, a node waits for replicas that do not
	// answer (a write needs a majority of them).
	Slow    []string
	SlowWhy string // what the last of them said, one line
	Timeout time.Duration
}

// dialFailed tells a node that could not be reached at all (refused,
// reset, no route) from one that answered with a failure.
func dialFailed(err error) bool {
	var ne *net.OpError
	if errors.As(err, &ne) {
		return true
	}
	m := strings.ToLower(err.Error())
	for _, s := range []string{"connection refused", "error while dialing", "connection reset", "no route to host", "no such host", "broken pipe", "eof"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (e *UnreachableError) Error() string {
	if len(e.Slow) > 0 {
		var down []string
		for _, ep := range e.Endpoints {
			if !slices.Contains(e.Slow, ep) {
				down = append(down, ep)
			}
		}
		msg := fmt.Sprintf("weaviate: %s is up but could not do it (%s)", strings.Join(e.Slow, ", "), e.SlowWhy)
		if len(down) > 0 {
			msg += "; " + strings.Join(down, ", ") + " did not answer"
		}
		return msg + ": with nodes down a node waits for replicas that do not answer (a write needs a majority of them): start the nodes that are down, then run it again (a build resumes)"
	}
	if e.GRPC {
		return fmt.Sprintf("%s over gRPC (%s): fix weaviate-grpc-endpoints (each node's GRPC_PORT)", ErrUnreachable, strings.Join(e.Endpoints, ", "))
	}
	return fmt.Sprintf("%s (%s): start the cluster or fix weaviate-endpoints", ErrUnreachable, strings.Join(e.Endpoints, ", "))
}

func (e *UnreachableError) Unwrap() error { return ErrUnreachable }

// endpoint is one node the store may talk to. The official client talks
// to one host, so the store keeps one client per endpoint, made on first
// use: making one asks the server its version, which a dead node would
// make every New pay for.
type endpoint struct {
	url  string // http://host:port
	host string // host:port
	grpc string // host:port

	mu     sync.Mutex
	client *wv.Client
	// versioned is set once a ready check passed on client: the client
	// learns the server's version then. Until it knows it, the client
	// prints a warning to standard output on every object call (lore's
	// output, --json included) and asks for the version again, so a
	// client made while its node was down is not used before that.
	versioned atomic.Bool
}

// errNotReady is an endpoint that answers but is not ready (starting,
// or shutting down): the next one is tried.
var errNotReady = errors.New("not ready")

// ready makes sure c knows its server's version (see versioned).
func (p *pool) ready(ctx context.Context, ep *endpoint, c *wv.Client) error {
	if ep.versioned.Load() {
		return nil
	}
	ok, err := c.Misc().ReadyChecker().Do(ctx)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s: %w", ep.url, errNotReady)
	}
	ep.versioned.Store(true)
	return nil
}

// pool is the cluster's endpoints in order and the one that answered last.
type pool struct {
	eps     []*endpoint
	cur     atomic.Int32
	timeout time.Duration
	headers map[string]string // the API key's header; never logged
}

// directTransport is http.DefaultTransport without a proxy: the cluster
// is named by address, and an HTTP(S)_PROXY in the environment must not
// receive the API key (sent as a header over plain HTTP).
var directTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	return t
}()

// maxReply caps what one REST reply may hold: the client reads bodies
// whole (io.ReadAll), and a peer that streams without end must not take
// the process's memory. The largest reply lore asks for is a page of
// chunks with their text, far below this.
const maxReply = 64 << 20

func (p *pool) client(ep *endpoint) (*wv.Client, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.client != nil {
		return ep.client, nil
	}
	headers := map[string]string{}
	for k, v := range p.headers {
		headers[k] = v
	}
	// StartupTimeout 0: NewClient does not wait for the server; its one
	// request (the version) is bound by the HTTP client's timeout.
	c, err := wv.NewClient(wv.Config{
		Host:             ep.host,
		Scheme:           "http",
		Headers:          headers,
		Timeout:          p.timeout,
		ConnectionClient: &http.Client{Timeout: p.timeout, Transport: cappedTransport{directTransport}},
		GrpcConfig:       &wvgrpc.Config{Host: ep.grpc},
	})
	if err != nil {
		return nil, err
	}
	ep.client = c
	return c, nil
}

// do runs fn against the endpoint that answered last and, when that one
// cannot be reached or does not answer in time, against the next ones in
// order, remembering the one that answers. Each attempt has its own
// deadline (Config.Timeout) inside ctx's. An error the server answered with
// is returned at once: another node would answer the same.
func (p *pool) do(ctx context.Context, fn func(ctx context.Context, c *wv.Client) error) error {
	start := int(p.cur.Load())
	var last error
	var slow []string
	slowWhy := ""
	grpcOnly := true
	for k := range p.eps {
		if err := ctx.Err(); err != nil {
			return err
		}
		i := (start + k) % len(p.eps)
		c, err := p.client(p.eps[i])
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, p.timeout)
			isReady := false
			if err = p.ready(actx, p.eps[i], c); err == nil {
				isReady = true
				err = fn(actx, c)
			}
			timedOut := actx.Err() != nil && ctx.Err() == nil
			if isReady && err != nil && (timedOut || !dialFailed(err)) {
				// Up, but it could not do it: with nodes down a node
				// cannot reach the replicas the call needs.
				slow = append(slow, p.eps[i].url)
				if slowWhy = fmt.Sprintf("timed out after %v", p.timeout); !timedOut {
					slowWhy = oneLine(err)
				}
			}
			if !isReady && errors.Is(err, errNotReady) {
				// It answered: with most nodes down a node says it is
				// not ready, and that is worth telling from a dead one.
				slow = append(slow, p.eps[i].url)
				slowWhy = "it says it is not ready"
			}
			cancel()
			if err == nil || (!timedOut && !unreachable(err)) {
				p.cur.Store(int32(i))
				return err
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var gs interface{ GRPCStatus() *status.Status }
		grpcOnly = grpcOnly && errors.As(err, &gs)
		last = err
	}
	ue := &UnreachableError{Last: oneLine(last), GRPC: grpcOnly && len(slow) == 0, Slow: slow, SlowWhy: slowWhy, Timeout: p.timeout}
	for _, ep := range p.eps {
		if ue.GRPC {
			ue.Endpoints = append(ue.Endpoints, ep.grpc)
		} else {
			ue.Endpoints = append(ue.Endpoints, ep.url)
		}
	}
	return ue
}

// unreachable tells whether err means the node did not answer (refused,
// reset, timed out, a proxy in front of it said so), as opposed to an
// answer: then another node is worth asking.
func unreachable(err error) bool {
	if errors.Is(err, errNotReady) {
		return true
	}
	for err != nil {
		var we *fault.WeaviateClientError
		if errors.As(err, &we) {
			if we.DerivedFromError == nil {
				// An answer: 502-504 come from a proxy, or from a node
				// still starting.
				return we.StatusCode == http.StatusBadGateway || we.StatusCode == http.StatusServiceUnavailable ||
					we.StatusCode == http.StatusGatewayTimeout
			}
			// The client's error does not unwrap: follow it by hand.
			err = we.DerivedFromError
			continue
		}
		var gs interface{ GRPCStatus() *status.Status }
		if errors.As(err, &gs) {
			switch gs.GRPCStatus().Code() {
			case codes.Unavailable, codes.DeadlineExceeded:
				return true
			}
			return false
		}
		var ue *url.Error
		var ne net.Error
		return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
	}
	return false
}

// statusCode is the HTTP status the server answered err with, 0 if none.
func statusCode(err error) int {
	var we *fault.WeaviateClientError
	for errors.As(err, &we) {
		if we.DerivedFromError == nil {
			return we.StatusCode
		}
		err = we.DerivedFromError
	}
	return 0
}

// transient tells whether a failed write is worth retrying as it is.
func transient(err error) bool {
	if unreachable(err) {
		return true
	}
	code := statusCode(err)
	if code == http.StatusTooManyRequests || code >= 500 {
		return true
	}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		switch gs.GRPCStatus().Code() {
		case codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
			return true
		}
	}
	return noQuorum(err.Error())
}

// noQuorum recognises the server's words for a write that too few
// replicas acknowledged.
func noQuorum(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "consistency level") || strings.Contains(m, "broadcast") ||
		strings.Contains(m, "replica") && (strings.Contains(m, "not") || strings.Contains(m, "fail"))
}

// maxReason is how much of a server's message an error keeps.
const maxReason = 200

// oneLine is err's text on one line, without control characters, cut to
// maxReason: a server's message can be long, multi-line, or hostile, and
// lore's errors are one line (callers sanitise for the terminal too).
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return clip(err.Error())
}

func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxReason {
		s = string(r[:maxReason]) + "…"
	}
	return s
}

// cappedTransport cuts every reply body at maxReply.
type cappedTransport struct{ base http.RoundTripper }

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: maxReply}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("weaviate: reply larger than %d MiB", maxReply>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
