package mcpserve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/wire"
)

// fixture is an MCP client session on a server over a real engine: an
// index of a few documents embedded by a fake Ollama that also writes the
// answers.
type fixture struct {
	t      testing.TB
	ollama *ollamatest.Server
	cfg    config.Config
	eng    *app.Engine
	docs   string
	cs     *mcp.ClientSession

	// sync stands in for the engine's live sync: tests send SyncEvents
	// through it; the client's list_changed and updated notifications
	// arrive on listChanged and updated.
	sync        *syncEngine
	listChanged chan struct{}
	updated     chan string

	mu       sync.Mutex
	dialed   []string
	progress []string
}

// syncEngine is the real engine whose SyncEvents a test sends.
type syncEngine struct {
	*app.Engine
	mu  sync.Mutex
	fns []func(app.SyncEvent)
}

func (e *syncEngine) Subscribe(fn func(app.SyncEvent)) func() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fns = append(e.fns, fn)
	return func() {}
}

func (e *syncEngine) publish(ev app.SyncEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, fn := range e.fns {
		fn(ev)
	}
}

func (f *fixture) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	f.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func newFixture(t testing.TB, opt Options) *fixture {
	t.Helper()
	return newFixtureSpeaking(t, opt, "")
}

// newFixtureSpeaking is newFixture with a client that asks for protocol
// version proto ("": the SDK's latest).
func newFixtureSpeaking(t testing.TB, opt Options, proto string) *fixture {
	t.Helper()
	f := &fixture{t: t, ollama: ollamatest.New(t)}
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.OllamaHost = f.ollama.URL
	cfg.Reranker = "none"
	f.docs = t.TempDir()
	for name, body := range map[string]string{
		"timeouts.md":   "# Timeouts\n\nUse context.WithTimeout to cancel a request after a deadline.\nThe timeout is a duration.\n",
		"widgets.md":    "# Widgets\n\nThe alpha widget spins clockwise when powered.\n",
		"src/server.go": "package src\n\n// Serve answers.\nfunc Serve() {}\n",
	} {
		p := filepath.Join(f.docs, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(f.ollama.URL)
	emb := ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), f.ollama.URL, "nomic-embed-text")
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{f.docs},
		Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Open(app.Options{Config: cfg, Dial: f.dial})
	if err != nil {
		t.Fatal(err)
	}
	f.cfg, f.eng = cfg, eng
	f.sync = &syncEngine{Engine: eng}
	f.listChanged, f.updated = make(chan struct{}, 64), make(chan string, 64)
	srv := New(f.sync, opt)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, r.Params.Message)
			f.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case f.listChanged <- struct{}{}:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case f.updated <- r.Params.URI:
			default:
			}
		},
	})
	f.cs, err = client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.cs.Close()
		ss.Wait()
		eng.Close()
	})
	return f
}

// call calls tool with args and returns the result's text and its
// structured content decoded into out.
func (f *fixture) call(tool string, args map[string]any, out any) (*mcp.CallToolResult, string) {
	f.t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s: protocol error: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields() // the shape is wire's, field for field
		if err := dec.Decode(out); err != nil {
			f.t.Fatalf("%s: structured content: %v\n%s", tool, err, b)
		}
	}
	return res, strings.Join(text, "\n")
}

// toolError calls tool expecting a tool error whose text holds want.
func (f *fixture) toolError(tool string, args map[string]any, want ...string) {
	f.t.Helper()
	res, text := f.call(tool, args, nil)
	if !res.IsError {
		f.t.Errorf("%s %v: not an error: %s", tool, args, text)
		return
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			f.t.Errorf("%s %v: error %q does not say %q", tool, args, text, w)
		}
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestToolsAreListedWithSchemasAndAnnotations(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"search", "ask", "get_passage", "list_indexes", "index_status"} {
		tool := byName[name]
		if tool == nil {
			t.Fatalf("no tool %s", name)
		}
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: description, input or output schema missing", name)
		}
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v: want read-only, closed world", name, a)
		}
	}
	if byName["index_paths"] != nil {
		t.Error("index_paths is registered without AllowWrite")
	}
	schema, _ := json.Marshal(byName["search"].InputSchema)
	for _, want := range []string{`"required":["query"]`, `"minimum":1`, `"maximum":100`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("search input schema lacks %s: %s", want, schema)
		}
	}
}

func TestSearch(t *testing.T) {
	f := newFixture(t, Options{})
	var out wire.Search
	res, text := f.call("search", map[string]any{"query": "cancel a request after a timeout", "k": 2}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text)
	}
	if len(out.Results) == 0 || out.Results[0].Path != "timeouts.md" || out.Index != "default" {
		t.Fatalf("results: %+v", out)
	}
	if len(out.Results) > 2 {
		t.Errorf("k 2 gave %d results", len(out.Results))
	}
	if !strings.Contains(text, "[1] timeouts.md:1-4 > Timeouts") || !strings.Contains(text, "context.WithTimeout") {
		t.Errorf("text:\n%s", text)
	}

	// Nothing found is a result that says so, not an error. (Vector
	// search always finds some nearest passage: with Ollama down the
	// search is lexical only, and says so.)
	f.ollama.Close()
	res, text = f.call("search", map[string]any{"query": "zyzzyva"}, &out)
	if res.IsError || len(out.Results) != 0 || !strings.Contains(text, "No passage") || !strings.Contains(text, "lexical") {
		t.Errorf("empty search: error %v, %d results, text %q", res.IsError, len(out.Results), text)
	}
}

func TestSearchErrors(t *testing.T) {
	f := newFixture(t, Options{})
	f.toolError("search", map[string]any{}, "query")
	f.toolError("search", map[string]any{"query": ""}, "query")
	f.toolError("search", map[string]any{"query": "   "}, "query")
	f.toolError("search", map[string]any{"query": "x", "k": 0}, "k")
	f.toolError("search", map[string]any{"query": "x", "k": 101}, "k")
	f.toolError("search", map[string]any{"query": "x", "k": "ten"}, "k")
	f.toolError("search", map[string]any{"query": "x", "index": "nope"}, "nope", "lore index")
	f.toolError("search", map[string]any{"query": "x", "index": "../etc"}, "index")
}

func TestAsk(t *testing.T) {
	f := newFixture(t, Options{})
	var out wire.Answer
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask",
		Arguments: map[string]any{"question": "How do I cancel a request after a timeout?"},
		Meta:      mcp.Meta{"progressToken": "p1"}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if out.Answer != "Use WithTimeout [1]." || out.Route != "docs" || out.Mode != "offline" || len(out.Sources) == 0 {
		t.Errorf("answer: %+v", out)
	}
	if !strings.HasPrefix(text, "Use WithTimeout [1].\n\nSources:\n[1] timeouts.md:") {
		t.Errorf("text:\n%s", text)
	}
	if out.Session != "" {
		t.Errorf("an agent's question was saved as session %s", out.Session)
	}
	if n, _ := f.eng.ListSessions(context.Background()); len(n) != 0 {
		t.Errorf("sessions saved: %d", len(n))
	}
	// The client handles notifications on goroutines of its own: the
	// last may land just after the result.
	var progress string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		progress = strings.Join(f.progress, ",")
		f.mu.Unlock()
		if strings.Contains(progress, "retrieve") && strings.Contains(progress, "generate") {
			break
		}
	}
	if !strings.Contains(progress, "retrieve") || !strings.Contains(progress, "generate") {
		t.Errorf("progress: %s", progress)
	}
	// Offline: nothing but Ollama was dialed.
	for _, a := range f.dialed {
		if !strings.Contains(f.ollama.URL, a) {
			t.Errorf("dialed %s", a)
		}
	}
}

func TestAskErrors(t *testing.T) {
	f := newFixture(t, Options{})
	f.toolError("ask", map[string]any{}, "question")
	f.toolError("ask", map[string]any{"question": " "}, "question")
	f.toolError("ask", map[string]any{"question": "q", "index": "nope"}, "nope")
	f.toolError("ask", map[string]any{"question": "q", "online": true}, "offline only", "--online")
}

func TestAskWithoutOllamaListsSources(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.Close() // Ollama down: the passages, and why
	var out wire.Answer
	res, text := f.call("ask", map[string]any{"question": "How do I cancel a request after a timeout?"}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text)
	}
	if out.Route != "sources-only" || len(out.Sources) == 0 || !strings.Contains(text, "Sources:\n[1] timeouts.md") || !strings.Contains(text, "No answer was written") {
		t.Errorf("route %s, text:\n%s", out.Route, text)
	}
}

func TestAskIsCancelledWithTheCall(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "it"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "timeout?"}})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.ollama.Streaming() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled call returned no error")
	}
	// The client's cancellation reached the engine: Ollama's stream closed.
	for f.ollama.Streaming() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.ollama.Streaming() != 0 || f.ollama.Abandoned() != 1 {
		t.Errorf("the generation went on: streaming %d, abandoned %d", f.ollama.Streaming(), f.ollama.Abandoned())
	}
}

func TestGetPassage(t *testing.T) {
	f := newFixture(t, Options{})
	var out wire.Passage
	res, text := f.call("get_passage", map[string]any{"path": "timeouts.md", "start_line": 3, "end_line": 4}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text)
	}
	want := "Use context.WithTimeout to cancel a request after a deadline.\nThe timeout is a duration."
	if out.Text != want || out.StartLine != 3 || out.EndLine != 4 || out.From != "file" || out.Lines != 4 {
		t.Errorf("passage: %+v", out)
	}
	if !strings.HasPrefix(text, "timeouts.md:3-4 ") || !strings.HasSuffix(text, want) {
		t.Errorf("text:\n%s", text)
	}
	// The absolute path works too; the whole file without a range.
	_, _ = f.call("get_passage", map[string]any{"path": filepath.Join(f.docs, "src/server.go")}, &out)
	if out.Path != "src/server.go" || out.StartLine != 1 || out.EndLine != 4 {
		t.Errorf("absolute: %+v", out)
	}
	// A file changed on disk since indexed: the indexed text, from the chunks.
	os.WriteFile(filepath.Join(f.docs, "widgets.md"), []byte("# Gadgets\n\nnew text\n"), 0o644)
	_, text = f.call("get_passage", map[string]any{"path": "widgets.md"}, &out)
	if out.From != "chunks" || !strings.Contains(out.Text, "alpha widget") || !strings.Contains(text, "changed on disk") {
		t.Errorf("changed file: %+v\n%s", out, text)
	}
}

func TestGetPassageRefusesWhatTheIndexDoesNotHold(t *testing.T) {
	f := newFixture(t, Options{})
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	os.WriteFile(secret, []byte("# Secret\n\npassword\n"), 0o644)
	// A symlink in a source that points out of it, indexed before the
	// file behind it was swapped: refused all the same.
	os.Symlink(secret, filepath.Join(f.docs, "link.md"))
	if _, err := f.eng.Build(context.Background(), app.BuildRequest{}); err != nil {
		t.Fatal(err)
	}
	f.toolError("get_passage", map[string]any{"path": "link.md"}, "outside its source folder")
	f.toolError("get_passage", map[string]any{"path": "../" + filepath.Base(outside) + "/secret.md"}, "outside")
	f.toolError("get_passage", map[string]any{"path": secret}, "not a file it holds")
	f.toolError("get_passage", map[string]any{"path": "/etc/passwd"}, "not a file it holds")
	f.toolError("get_passage", map[string]any{"path": "missing.md"}, "not a file it holds", "search")
	f.toolError("get_passage", map[string]any{}, "path")
	f.toolError("get_passage", map[string]any{"path": "timeouts.md", "start_line": 4, "end_line": 2}, "start_line")
	f.toolError("get_passage", map[string]any{"path": "timeouts.md", "start_line": 0}, "start_line")
	f.toolError("get_passage", map[string]any{"path": "timeouts.md", "start_line": 50}, "4 lines")
	f.toolError("get_passage", map[string]any{"path": "timeouts.md", "index": "nope"}, "nope")
}

func TestListIndexesAndStatus(t *testing.T) {
	f := newFixture(t, Options{})
	var list IndexList
	res, text := f.call("list_indexes", nil, &list)
	if res.IsError || list.Default != "default" || len(list.Indexes) != 1 || list.Indexes[0].Chunks == 0 || list.Indexes[0].Embedder != "nomic-embed-text" {
		t.Fatalf("list: %+v\n%s", list, text)
	}
	if !strings.HasPrefix(text, "default (default): ") {
		t.Errorf("text: %s", text)
	}
	var st wire.IndexStatus
	res, text = f.call("index_status", map[string]any{}, &st)
	if res.IsError || st.Documents != 3 || len(st.Sources) != 1 || !strings.Contains(text, "up to date") {
		t.Errorf("status: %+v\n%s", st, text)
	}
	f.toolError("index_status", map[string]any{"index": "nope"}, "nope", "lore index")
}

func TestIndexPaths(t *testing.T) {
	f := newFixture(t, Options{AllowWrite: true})
	more := t.TempDir()
	os.WriteFile(filepath.Join(more, "gears.md"), []byte("# Gears\n\nGears mesh.\n"), 0o644)
	var sum wire.IndexSummary
	res, text := f.call("index_paths", map[string]any{"paths": []string{more}, "index": "extra"}, &sum)
	if res.IsError || sum.TotalFiles != 1 || sum.Index != "extra" || !strings.Contains(text, "1 file indexed") {
		t.Fatalf("build: %+v\n%s", sum, text)
	}
	var out wire.Search
	f.call("search", map[string]any{"query": "gears", "index": "extra"}, &out)
	if len(out.Results) != 1 || out.Results[0].Path != "gears.md" {
		t.Errorf("search of the new index: %+v", out.Results)
	}
	f.toolError("index_paths", map[string]any{"paths": []string{"/nonexistent/folder"}, "index": "extra"}, "nonexistent")
	f.toolError("index_paths", map[string]any{"paths": []string{more}}, "index")
}

func TestResources(t *testing.T) {
	f := newFixture(t, Options{})
	resourcePage = 2
	t.Cleanup(func() { resourcePage = 200 })
	var uris []string
	for r, err := range f.cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	want := []string{"lore://default/src/server.go", "lore://default/timeouts.md", "lore://default/widgets.md"}
	if strings.Join(uris, " ") != strings.Join(want, " ") {
		t.Errorf("resources (2 a page): %v, want %v", uris, want)
	}
	res, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lore://default/timeouts.md"})
	if err != nil || len(res.Contents) != 1 || !strings.HasPrefix(res.Contents[0].Text, "# Timeouts\n") || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read: %v %+v", err, res)
	}
	for _, uri := range []string{"lore://default/missing.md", "lore://nope/timeouts.md", "lore://default/../../etc/passwd"} {
		if _, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s: read", uri)
		}
	}
	if _, err := f.cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: "garbage!"}); err == nil {
		t.Error("a bad cursor was accepted")
	}
}

// rpcCode is the JSON-RPC error code of err, or 0 when err is not one.
func rpcCode(err error) int64 {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr.Code
	}
	return 0
}

// TestResourcesRefuseABadCursor: the cursor comes back from the client,
// which may have written it itself; a negative offset once indexed the
// documents at -1 and killed the server.
func TestResourcesRefuseABadCursor(t *testing.T) {
	f := newFixture(t, Options{})
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{enc(`{"i":"default","o":-1}`), enc(`{"i":"","o":-5}`), enc(`{"i":"../x","o":0}`), enc(`[]`), "garbage!"} {
		_, err := f.cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: c})
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "invalid cursor") {
			t.Errorf("cursor %q: %v, want -32602 invalid cursor", c, err)
		}
	}
	// The server lives on: a listing from the start still works.
	if res, err := f.cs.ListResources(context.Background(), nil); err != nil || len(res.Resources) == 0 {
		t.Fatalf("list after bad cursors: %v %+v", err, res)
	}
	// A cursor past the end is the end, not an error.
	if res, err := f.cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: enc(`{"i":"default","o":1000}`)}); err != nil || len(res.Resources) != 0 {
		t.Errorf("cursor past the end: %v %+v", err, res)
	}
}

// TestReadResourceErrorsHaveCodes: code 0 is no JSON-RPC code; a URI that
// names no index this server could list is the client's mistake.
func TestReadResourceErrorsHaveCodes(t *testing.T) {
	f := newFixture(t, Options{})
	for uri, want := range map[string]int64{
		"lore://../x":               jsonrpc.CodeInvalidParams,
		"lore://a b/x":              jsonrpc.CodeInvalidParams,
		"http://default/x":          jsonrpc.CodeInvalidParams,
		"lore://default/missing.md": jsonrpc.CodeInvalidParams,
		"lore://nope/timeouts.md":   jsonrpc.CodeInvalidParams,
		"\x00":                      jsonrpc.CodeInvalidParams, // its reply was not JSON: the session died
		"lore://default/a\x01b":     jsonrpc.CodeInvalidParams,
	} {
		_, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if got := rpcCode(err); got != want {
			t.Errorf("%q: code %d (%v), want %d", uri, got, err, want)
		}
		if err := f.cs.Ping(context.Background(), nil); err != nil {
			t.Fatalf("%q: the session died: %v", uri, err)
		}
	}
}

// TestSearchDescribesItsRealDefaultK: the description said "usually 8"
// when the default was 5; a model that believes it asks for too much.
func TestSearchDescribesItsRealDefaultK(t *testing.T) {
	for _, k := range []int{0, 12} {
		f := newFixture(t, Options{DefaultK: k})
		res, err := f.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := k
		if k == 0 {
			want = config.Defaults().TopK
		}
		for _, tool := range res.Tools {
			if tool.Name != "search" {
				continue
			}
			schema, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(schema), fmt.Sprintf("default %d (the user's top-k setting)", want)) || strings.Contains(string(schema), "usually") {
				t.Errorf("DefaultK %d: search's k is described as: %s", k, schema)
			}
		}
	}
}

// TestAskSaysWhatBrokeWhenOllamaDropsTheStream: an Ollama that dies
// mid-answer cuts its chunked reply; the client once read only "unexpected
// EOF".
func TestAskSaysWhatBrokeWhenOllamaDropsTheStream(t *testing.T) {
	f := newFixture(t, Options{})
	target, _ := url.Parse(f.ollama.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			proxy.ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":"Use "},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no last chunk: the client reads an unexpected EOF
		}
	}))
	defer cut.Close()
	cfg := f.cfg
	cfg.OllamaHost = cut.URL
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(eng, Options{}).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "How do I cancel a request after a timeout?"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "Ollama") || !strings.Contains(text, "broke off") || !strings.Contains(text, "lore doctor") {
		t.Errorf("isError %v: %s", res.IsError, text)
	}
}
