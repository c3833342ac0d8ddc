package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
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

func TestMCPOffLoopbackNeedsAToken(t *testing.T) {
	e := newEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8766"} {
		r := e.run(false, "mcp", "--http", addr)
		if r.code != exitUsage || !strings.Contains(r.stderr, "LORE_SERVE_TOKEN") {
			t.Errorf("mcp --http %s: exit %d: %s", addr, r.code, r.stderr)
		}
	}
}

// TestMCPStdioRoundTrip runs `lore mcp` as a process of its own, as a
// client starts it: stdout must carry the protocol and nothing else, or
// the client's decoder breaks on the first stray byte.
func TestMCPStdioRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e := newEnv(t)
	srv := ollamatest.New(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("index: %s", r.stderr)
	}
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = []string{"LORE_TEST_MAIN=1", "OLLAMA_HOST=" + srv.URL, "LORE_RERANKER=none"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "lore" {
		t.Errorf("server %q", got)
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return res, out
	}
	res, out := call("search", map[string]any{"query": "make install"})
	if res.IsError || len(out["results"].([]any)) == 0 {
		t.Fatalf("search: %+v", res)
	}
	if first := out["results"].([]any)[0].(map[string]any); first["path"] != "guide.md" {
		t.Errorf("first result: %v", first)
	}
	if res, out = call("get_passage", map[string]any{"path": "guide.md", "start_line": 5, "end_line": 5}); res.IsError || out["text"] != "Run `make install`." {
		t.Errorf("get_passage: %+v %v", res, out)
	}
	if res, _ = call("list_indexes", nil); res.IsError {
		t.Errorf("list_indexes: %+v", res)
	}
	if res, _ = call("search", map[string]any{"query": "x", "index": "nope"}); !res.IsError {
		t.Errorf("unknown index: %+v", res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("lore mcp did not exit cleanly when stdin closed: %v; stderr %s", cmd.ProcessState, stderr.String())
	}
	// Its log went to lore's log file, not the terminal.
	if strings.TrimSpace(stderr.String()) != "" {
		t.Errorf("stderr: %s", stderr.String())
	}
	if b, _ := os.ReadFile(e.vars["XDG_STATE_HOME"] + "/lore/lore.log"); !strings.Contains(string(b), "mcp: serving on stdio") {
		t.Errorf("lore.log: %s", b)
	}
}

// mcpHTTP serves mcpHandler over an engine on a keyword-only index.
func mcpHTTP(t *testing.T, token string) *httptest.Server {
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
	hs := httptest.NewServer(newMCPHandler(func() *mcp.Server { return mcpserve.New(eng, mcpserve.Options{}) }, mcpHTTPOptions{token: token}))
	t.Cleanup(func() {
		hs.Close()
		eng.Close()
	})
	return hs
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestMCPStreamableHTTP(t *testing.T) {
	const token = "s3cret-token-for-tests"
	connect := func(url, token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: http.DefaultTransport}
		if token != "" {
			hc.Transport = bearer{token, http.DefaultTransport}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
		return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	}
	search := func(t *testing.T, cs *mcp.ClientSession) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "make install"}})
		if err != nil || res.IsError {
			t.Fatalf("search: %v %+v", err, res)
		}
		cs.Close()
	}
	t.Run("no token", func(t *testing.T) {
		hs := mcpHTTP(t, "")
		cs, err := connect(hs.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		search(t, cs)
	})
	t.Run("token", func(t *testing.T) {
		hs := mcpHTTP(t, token)
		for _, bad := range []string{"", "wrong"} {
			if _, err := connect(hs.URL, bad); err == nil {
				t.Errorf("token %q: connected", bad)
			}
		}
		req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("no token: %d", resp.StatusCode)
		}
		cs, err := connect(hs.URL, token)
		if err != nil {
			t.Fatal(err)
		}
		search(t, cs)
	})
	t.Run("DNS rebinding and cross-origin", func(t *testing.T) {
		hs := mcpHTTP(t, "")
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		for name, set := range map[string]func(*http.Request){
			"rebound host": func(r *http.Request) { r.Host = "evil.example:80" },
			"cross-site":   func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		} {
			req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", name, resp.StatusCode)
			}
		}
	})
}

// TestMCPStdioAnswersPipedRequests: `printf '…' | lore mcp` exited 0
// without a reply, and one malformed line ended it with exit 1.
func TestMCPStdioAnswersPipedRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e := newEnv(t)
	if r := e.run(false, "index", "--embedder", "none", sampleDocs(t)); r.code != 0 {
		t.Fatalf("index: %s", r.stderr)
	}
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = []string{"LORE_TEST_MAIN=1", "OLLAMA_HOST=" + ollamatest.ClosedAddr(t), "LORE_RERANKER=none"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"make install"}}}`,
	}, "\n"))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		<-ctx.Done()
		if cmd.Process != nil {
			cmd.Process.Kill() // only the process this test started
		}
	}()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lore mcp: %v; stderr %s", err, stderr.String())
	}
	var replies []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		code := 0
		if r.Error != nil {
			code = r.Error.Code
		}
		replies = append(replies, fmt.Sprintf("%s:%d", r.ID, code))
	}
	slices.Sort(replies) // a refused frame is answered as it is read, before earlier requests may be
	if got := strings.Join(replies, " "); got != "1:0 2:0 null:-32700" {
		t.Errorf("replies %q, want the initialize, a parse error and the search", got)
	}
}
