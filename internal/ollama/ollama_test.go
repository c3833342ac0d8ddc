package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

func TestExplain(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	err := Explain(fmt.Errorf("post: %w", refused), "http://127.0.0.1:11434", "llama3.2:3b")
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), "127.0.0.1:11434") {
		t.Errorf("refused: %v", err)
	}
	missing := api.StatusError{StatusCode: 404, ErrorMessage: `model "llama3.2:3b" not found, try pulling it first`}
	err = Explain(missing, "h", "llama3.2:3b")
	if !errors.Is(err, ErrModelMissing) || !strings.Contains(err.Error(), "ollama pull llama3.2:3b") {
		t.Errorf("missing: %v", err)
	}
	for _, e := range []error{context.Canceled, errors.New("other")} {
		if got := Explain(e, "h", "m"); got != e {
			t.Errorf("%v rewritten to %v", e, got)
		}
	}
}

func TestTransient(t *testing.T) {
	for err, want := range map[error]bool{
		api.StatusError{StatusCode: 503}:                    true,
		api.StatusError{StatusCode: 429}:                    true,
		api.StatusError{StatusCode: 404}:                    false,
		api.StatusError{StatusCode: 400}:                    false,
		context.Canceled:                                    false,
		fmt.Errorf("read: %w", syscall.ECONNRESET):          true,
		&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}: true,
	} {
		if got := Transient(err); got != want {
			t.Errorf("Transient(%v) = %v, want %v", err, got, want)
		}
	}
	calls := 0
	err := Retry(context.Background(), 3, func() error { calls++; return api.StatusError{StatusCode: 404} })
	if calls != 1 || err == nil {
		t.Errorf("a permanent error was retried: %d calls", calls)
	}
}

func TestExplainNotOllama(t *testing.T) {
	for _, tt := range []struct {
		err       error
		notOllama bool
		missing   bool
	}{
		{api.StatusError{StatusCode: 404, ErrorMessage: "<!DOCTYPE HTML><html>nginx</html>"}, true, false},
		{api.StatusError{StatusCode: 502, ErrorMessage: "<html><body>Bad Gateway</body></html>"}, true, false},
		{api.StatusError{StatusCode: 404, ErrorMessage: "404 page not found\n"}, true, false},
		{api.StatusError{StatusCode: 404}, true, false},
		{api.StatusError{StatusCode: 404, ErrorMessage: `model "llama3.2:3b" not found, try pulling it first`}, false, true},
		{api.StatusError{StatusCode: 500, ErrorMessage: "llama runner process has terminated"}, false, false},
	} {
		err := Explain(tt.err, "http://h:1", "llama3.2:3b")
		if got := errors.Is(err, ErrNotOllama); got != tt.notOllama || errors.Is(err, ErrUnreachable) != tt.notOllama {
			t.Errorf("%v: not Ollama %v, want %v (%v)", tt.err, got, tt.notOllama, err)
		}
		if got := errors.Is(err, ErrModelMissing); got != tt.missing {
			t.Errorf("%v: model missing %v, want %v", tt.err, got, tt.missing)
		}
		if tt.notOllama && strings.Contains(err.Error(), "<") {
			t.Errorf("HTML in the message: %q", err)
		}
	}
}

// A connect to this machine gets a short deadline of its own (a dropped SYN
// must not cost the remote timeout before keyword search takes over); a
// remote host keeps the dialer's (issue 11, item 7).
func TestLoopbackDialIsBounded(t *testing.T) {
	for host, bounded := range map[string]bool{"127.0.0.1:11434": true, "[::1]:11434": true, "localhost:11434": true, "ollama.lan:11434": false, "10.0.0.7:11434": false} {
		var deadline time.Time
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			deadline, _ = ctx.Deadline()
			return nil, errors.New("no network in this test")
		}
		u, _ := url.Parse("http://" + host)
		NewClient(u, dial, Timeouts{}).Heartbeat(context.Background())
		if got := !deadline.IsZero() && time.Until(deadline) <= loopbackDialTimeout; got != bounded {
			t.Errorf("%s: bounded dial %v, want %v", host, got, bounded)
		}
	}
}

func TestFullName(t *testing.T) {
	for in, want := range map[string]string{
		"llama3.2":                     "llama3.2:latest",
		"llama3.2:3b":                  "llama3.2:3b",
		"registry.local:5000/team/m":   "registry.local:5000/team/m:latest",
		"registry.local:5000/team/m:q": "registry.local:5000/team/m:q",
	} {
		if got := FullName(in); got != want {
			t.Errorf("FullName(%q) = %q, want %q", in, got, want)
		}
	}
}
