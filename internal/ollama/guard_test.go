package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// hostile starts a server on loopback that answers every request with h.
// Its deadlines are short, for the tests of a hung server.
func hostile(t *testing.T, h http.HandlerFunc) (*Client, string) {
	return hostileWithin(t, h, 300*time.Millisecond)
}

func hostileWithin(t *testing.T, h http.HandlerFunc, d time.Duration) (*Client, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return NewClient(u, nil, Timeouts{Reply: d, Embed: d, FirstToken: d}), srv.URL
}

// endless writes a reply of ctype that never ends, until the client goes.
func endless(ctype, start, repeat string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write([]byte(start))
		chunk := []byte(strings.Repeat(repeat, max(64<<10/len(repeat), 1)))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// hang accepts the request and never answers. It reads the request first:
// only then does the server notice the client going.
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// calls are the api client's calls lore makes, one of each kind of reply.
var calls = map[string]func(context.Context, *Client) error{
	"/api/version": func(ctx context.Context, c *Client) error { _, err := c.Version(ctx); return err },
	"/api/show": func(ctx context.Context, c *Client) error {
		_, err := c.Show(ctx, &api.ShowRequest{Model: "m"})
		return err
	},
	"/api/embed": func(ctx context.Context, c *Client) error {
		_, err := c.Embed(ctx, &api.EmbedRequest{Model: "m", Input: []string{"a", "b"}})
		return err
	},
	"/api/chat": func(ctx context.Context, c *Client) error {
		return c.Chat(ctx, &api.ChatRequest{Model: "m"}, func(api.ChatResponse) error { return nil })
	},
}

// A reply past its cap is refused in one line naming the host and the cap,
// and counts as unreachable, so every caller falls back as for a server
// that is down (issue 23, item 1).
func TestEndlessReplyIsRefused(t *testing.T) {
	defer func(n int64) { streamCap = n }(streamCap)
	streamCap = 4 << 20 // 64 MiB of chat lines take a minute under -race
	for path, call := range calls {
		t.Run(path, func(t *testing.T) {
			ctype, start, repeat := "application/json; charset=utf-8", `{"embeddings":[[`, "0.123456789,"
			if path == "/api/chat" {
				// Long lines: the stream's cap is reached in a thousand.
				ctype, start, repeat = "application/x-ndjson", "", `{"model":"m","message":{"role":"assistant","content":"`+strings.Repeat("x", 60<<10)+`"},"done":false}`+"\n"
			}
			c, host := hostileWithin(t, endless(ctype, start, repeat), time.Minute)
			err := call(context.Background(), c)
			if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrReplyTooLarge) {
				t.Fatalf("err = %v, want ErrUnreachable and ErrReplyTooLarge", err)
			}
			msg := Explain(err, host, "m").Error()
			if !strings.Contains(msg, "Ollama at "+host+" sent more than ") || !strings.Contains(msg, " "+path+": ") || strings.Contains(msg, "\n") {
				t.Errorf("message %q does not name the host, the cap and the call in one line", msg)
			}
		})
	}
}

// One endless line of a stream is refused at the line cap, long before the
// stream's.
func TestEndlessStreamLineIsRefused(t *testing.T) {
	c, host := hostile(t, endless("application/x-ndjson", `{"model":"m","message":{"content":"`, "x"))
	err := calls["/api/chat"](context.Background(), c)
	if !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "Ollama at "+host+" sent a line of more than 1.0 MiB") {
		t.Fatalf("err = %v, want the line cap", err)
	}
}

// A server that accepts and never answers ends each call at its deadline
// with an error that says so and counts as unreachable (issue 23, item 3).
func TestHungServerMeetsTheDeadline(t *testing.T) {
	for path, call := range calls {
		t.Run(path, func(t *testing.T) {
			c, host := hostile(t, hang)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := call(ctx, c)
			if ctx.Err() != nil {
				t.Fatal("the call waited for the caller's context, not lore's deadline")
			}
			if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrNoAnswer) {
				t.Fatalf("err = %v, want ErrUnreachable and ErrNoAnswer", err)
			}
			if msg := Explain(err, host, "m").Error(); !strings.HasPrefix(msg, "Ollama at "+host+" did not answer within 300ms for ") || !strings.Contains(msg, " "+path+": ") {
				t.Errorf("message %q", msg)
			}
			if Transient(err) {
				t.Error("a hung server is retried")
			}
		})
	}
}

// A stream whose headers came but whose first line does not is held to the
// first-token deadline too.
func TestStreamWithoutFirstLineMeetsTheDeadline(t *testing.T) {
	c, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		hang(w, r)
	})
	if err := calls["/api/chat"](context.Background(), c); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err = %v, want ErrNoAnswer", err)
	}
}

// The caller's own cancellation stays a cancellation.
func TestCallerCancelIsNotLoresDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hang))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := NewClient(u, nil, Timeouts{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Version(ctx); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
}

// An HTML page with status 200 (a login page, a captive portal) is not
// Ollama: the message names the host, the status and the Content-Type
// (issue 23, item 4).
func TestHTML200IsNotOllama(t *testing.T) {
	for path, call := range calls {
		t.Run(path, func(t *testing.T) {
			c, host := hostile(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte("<!DOCTYPE html><html><body>Sign in to the network</body></html>"))
			})
			err := call(context.Background(), c)
			if !errors.Is(err, ErrNotOllama) || !errors.Is(err, ErrUnreachable) {
				t.Fatalf("err = %v, want ErrNotOllama", err)
			}
			msg := Explain(err, host, "m").Error()
			for _, want := range []string{host, "200 OK", "text/html"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

// What the real server sends is accepted: JSON with a charset, NDJSON,
// and the plain text at / (server/routes.go).
func TestRealOllamaTypesAreAccepted(t *testing.T) {
	c, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("Ollama is running"))
		case "/api/chat":
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Write([]byte(`{"message":{"content":"hi"},"done":false}` + "\n" + `{"done":true}` + "\n"))
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write([]byte(`{"version":"0.17.4","embeddings":[[1,0],[0,1]]}`))
		}
	})
	if err := c.Heartbeat(context.Background()); err != nil {
		t.Error(err)
	}
	for path, call := range calls {
		if err := call(context.Background(), c); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// A stream that stops in the middle of a line is an error that says so,
// not the half line as the message.
func TestStreamCutMidLine(t *testing.T) {
	c, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write([]byte(`{"message":{"content":"hi"},"done":false}` + "\n" + `{"message":{"cont`))
	})
	var got string
	err := c.Chat(context.Background(), &api.ChatRequest{Model: "m"}, func(r api.ChatResponse) error { got += r.Message.Content; return nil })
	if !errors.Is(err, ErrCutMidLine) || !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "cont") {
		t.Fatalf("err = %v, want ErrCutMidLine", err)
	}
	if got != "hi" {
		t.Errorf("tokens before the cut: %q", got)
	}
}

// A declared length past the cap is refused before reading.
func TestDeclaredLengthPastTheCap(t *testing.T) {
	c, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000000000")
		w.WriteHeader(http.StatusOK)
	})
	if _, err := c.Version(context.Background()); !errors.Is(err, ErrReplyTooLarge) {
		t.Fatalf("err = %v, want ErrReplyTooLarge", err)
	}
}
