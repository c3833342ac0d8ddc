package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/mcpserve"
)

// mcpListen serves lore mcp --http's server (its http.Server, timeouts
// included) on 127.0.0.1, over an engine on a keyword-only index.
func mcpListen(t *testing.T, opt mcpHTTPOptions, timeouts mcpHTTPTimeouts) string {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Reranker = "none"
	cfg.OllamaHost = ollamatest.ClosedAddr(t)
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{sampleDocs(t)},
		MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newMCPHTTPServer(newMCPHandler(func() *mcp.Server { return mcpserve.New(eng, mcpserve.Options{Log: opt.log}) }, opt), timeouts)
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		eng.Close()
	})
	return ln.Addr().String()
}

// stalled opens n connections that send the headers of a POST /mcp
// announcing a body of 1000 bytes, and never send the body. It returns
// what each read back before the server closed it, or the error of a
// read that waited 30 s (the server never answered nor closed).
func stalled(t *testing.T, addr string, n int, headers string) []string {
	t.Helper()
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				out[i] = err.Error()
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n%s\r\n", addr, headers)
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			b, err := io.ReadAll(c)
			out[i] = string(b)
			if err != nil {
				out[i] += " (" + err.Error() + ")"
			}
		})
	}
	wg.Wait()
	return out
}

// TestMCPHTTPRefusesAMissingTokenWithoutWaitingForTheBody: 300 clients
// without the token that announced a body and sent none were held 70 s
// and never got their 401: Go's server reads an unread body before it
// answers.
func TestMCPHTTPRefusesAMissingTokenWithoutWaitingForTheBody(t *testing.T) {
	addr := mcpListen(t, mcpHTTPOptions{token: "s3cret-token-for-tests"}, defaultMCPHTTPTimeouts)
	for i, got := range stalled(t, addr, 50, "") {
		if !strings.HasPrefix(got, "HTTP/1.1 401") || strings.Contains(got, "timeout") {
			t.Fatalf("connection %d: %q, want a 401 and the connection closed", i, got)
		}
	}
}

// TestMCPHTTPClosesConnectionsThatNeverSendTheirBody: 1,000 connections
// announcing a body they never sent stayed open 100 s (fds 11 → 1,011):
// the server had no read timeout.
func TestMCPHTTPClosesConnectionsThatNeverSendTheirBody(t *testing.T) {
	// Short timeouts, so that the test ends soon; the server's are serve's.
	addr := mcpListen(t, mcpHTTPOptions{}, mcpHTTPTimeouts{header: time.Second, read: 2 * time.Second, idle: 2 * time.Second})
	for i, got := range stalled(t, addr, 50, "") {
		if strings.Contains(got, "timeout") {
			t.Fatalf("connection %d: still open: %q", i, got)
		}
	}
	if defaultMCPHTTPTimeouts.read <= 0 || defaultMCPHTTPTimeouts.idle <= 0 || defaultMCPHTTPTimeouts.header <= 0 {
		t.Errorf("lore mcp --http's timeouts: %+v", defaultMCPHTTPTimeouts)
	}
}

// TestMCPHTTPChecksEveryOrigin: an empty Origin before evil.com passed
// the check, which reads the first.
func TestMCPHTTPChecksEveryOrigin(t *testing.T) {
	addr := mcpListen(t, mcpHTTPOptions{}, defaultMCPHTTPTimeouts)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"empty then evil", http.Header{"Origin": {"", "http://evil.com"}}, http.StatusForbidden},
		{"own then evil", http.Header{"Origin": {"http://" + addr, "http://evil.com"}}, http.StatusForbidden},
		{"evil", http.Header{"Origin": {"http://evil.com"}}, http.StatusForbidden},
		{"same-origin then cross-site", http.Header{"Sec-Fetch-Site": {"same-origin", "cross-site"}}, http.StatusForbidden},
		{"own origin", http.Header{"Origin": {"http://" + addr}}, http.StatusOK},
		{"no origin (not a browser)", http.Header{}, http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header = c.header
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

// rawMCP posts one JSON-RPC message as a client of a version with
// sessions; it returns the status and the session the server named.
func rawMCP(t *testing.T, addr, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

const (
	rawInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	rawInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	rawPing        = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
)

// TestMCPHTTPCapsSessions: 25,000 initialize calls each kept a session
// for 30 minutes (RSS 77 → 472 MB).
func TestMCPHTTPCapsSessions(t *testing.T) {
	const max = 4
	addr := mcpListen(t, mcpHTTPOptions{maxSessions: max}, defaultMCPHTTPTimeouts)
	// A client in use: initialized, and asking.
	status, used := rawMCP(t, addr, "", rawInitialize)
	if status != http.StatusOK || used == "" {
		t.Fatalf("initialize: %d %q", status, used)
	}
	rawMCP(t, addr, used, rawInitialized)
	// A flood of initialize calls that go no further.
	var flood []string
	for i := range 40 {
		status, id := rawMCP(t, addr, "", rawInitialize)
		if status != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: %d: a new client must get a session (an idle one makes room)", i, status)
		}
		flood = append(flood, id)
		if i%10 == 0 {
			if status, _ := rawMCP(t, addr, used, rawPing); status != http.StatusOK {
				t.Fatalf("after %d initialize calls the session in use is gone: %d", i, status)
			}
		}
	}
	live := 0
	for _, id := range append(flood, used) {
		if status, _ := rawMCP(t, addr, id, rawPing); status == http.StatusOK {
			live++
		}
	}
	if live > max {
		t.Errorf("%d sessions live, want at most %d", live, max)
	}
	// Every session busy (each holds its stream open): a new client is
	// told why, not queued.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range max {
		_, id := rawMCP(t, addr, "", rawInitialize)
		rawMCP(t, addr, id, rawInitialized)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", err, resp)
		}
		defer resp.Body.Close()
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(rawInitialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "mcp-max-sessions") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("initialize with every session busy: %d %s", resp.StatusCode, b)
	}
}

// TestMCPHTTPSessionsDoNotFillTheLog: the SDK logged two lines at Info per
// session into lore.log (6.7 MB for 25,000 initialize calls).
func TestMCPHTTPSessionsDoNotFillTheLog(t *testing.T) {
	var log lockedBuffer
	addr := mcpListen(t, mcpHTTPOptions{log: slog.New(slog.NewTextHandler(&log, nil)), maxSessions: 8}, defaultMCPHTTPTimeouts)
	for range 100 {
		if status, _ := rawMCP(t, addr, "", rawInitialize); status != http.StatusOK {
			t.Fatalf("initialize: %d", status)
		}
	}
	if n := strings.Count(log.String(), "\n"); n > 10 {
		t.Errorf("100 initialize calls logged %d lines:\n%s", n, log.String())
	}
}

// TestMCPHTTPClosesSessionsThatNeverWentOn: a session that sent nothing
// after initialize is closed sooner than one in use (the SDK kept both
// 30 minutes).
func TestMCPHTTPClosesSessionsThatNeverWentOn(t *testing.T) {
	addr := mcpListen(t, mcpHTTPOptions{fresh: 100 * time.Millisecond}, defaultMCPHTTPTimeouts)
	_, abandoned := rawMCP(t, addr, "", rawInitialize)
	_, used := rawMCP(t, addr, "", rawInitialize)
	rawMCP(t, addr, used, rawInitialized)
	time.Sleep(300 * time.Millisecond) // past fresh, well within idle
	if status, _ := rawMCP(t, addr, "", rawInitialize); status != http.StatusOK {
		t.Fatalf("initialize: %d", status)
	}
	if status, _ := rawMCP(t, addr, abandoned, rawPing); status != http.StatusNotFound {
		t.Errorf("the session that never went on: %d, want 404 (closed)", status)
	}
	if status, _ := rawMCP(t, addr, used, rawPing); status != http.StatusOK {
		t.Errorf("the session in use: %d, want 200", status)
	}
}
