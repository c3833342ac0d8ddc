package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testToken = "s3cret-token-for-tests"

// fixture is a running server over a real engine: an index of two
// documents embedded by a fake Ollama that also writes the answers.
type fixture struct {
	t      *testing.T
	ollama *ollamatest.Server
	cfg    config.Config
	eng    *app.Engine
	srv    *Server
	http   *httptest.Server
	log    *logBuffer

	mu     sync.Mutex
	dialed []string // every address the engine connected to
}

func (f *fixture) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	f.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (f *fixture) dials() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dialed...)
}

func newFixture(t *testing.T, opt Options, tune ...func(*config.Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, ollama: ollamatest.New(t), log: &logBuffer{}}
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.OllamaHost = f.ollama.URL
	cfg.Reranker = "none"
	for _, fn := range tune {
		fn(&cfg)
	}
	docs := t.TempDir()
	for name, body := range map[string]string{
		"timeouts.md": "# Timeouts\n\nUse context.WithTimeout to cancel a request after a deadline.\nThe timeout is a duration.\n",
		"widgets.md":  "# Widgets\n\nThe alpha widget spins clockwise when powered.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(f.ollama.URL)
	emb := ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), f.ollama.URL, "nomic-embed-text")
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{docs},
		Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Open(app.Options{Config: cfg, Dial: f.dial})
	if err != nil {
		t.Fatal(err)
	}
	f.cfg, f.eng = cfg, eng
	opt.Log = slog.New(slog.NewJSONHandler(f.log, nil))
	f.srv = New(eng, opt)
	f.http = httptest.NewServer(f.srv.Handler())
	t.Cleanup(func() {
		f.http.Close()
		eng.Close()
	})
	return f
}

func (f *fixture) client(opts ...option.RequestOption) *openai.Client {
	c := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(f.http.URL + "/v1/"), option.WithAPIKey(testToken),
		option.WithMaxRetries(0)}, opts...)...)
	return &c
}

func question(q string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "lore", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)}}
}

func TestOpenAIClientGetsACitedAnswer(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	c := f.client()
	res, err := c.Chat.Completions.New(context.Background(), question("How do I cancel a request after a timeout?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 1 {
		t.Fatalf("%d choices", len(res.Choices))
	}
	msg := res.Choices[0].Message
	// The fake model answers "Use WithTimeout [1]."
	if !strings.HasPrefix(msg.Content, "Use WithTimeout [1].") || !strings.Contains(msg.Content, "\n\nSources:\n[1] timeouts.md:") {
		t.Errorf("content:\n%s", msg.Content)
	}
	if res.Choices[0].FinishReason != "stop" || res.Object != "chat.completion" || res.Model != "lore" {
		t.Errorf("finish %q object %q model %q", res.Choices[0].FinishReason, res.Object, res.Model)
	}
	if len(msg.Annotations) != 1 {
		t.Fatalf("annotations: %+v", msg.Annotations)
	}
	cite := msg.Annotations[0].URLCitation
	runes := []rune(msg.Content)
	if !strings.HasPrefix(cite.URL, "file://") || !strings.Contains(cite.URL, "timeouts.md#L") ||
		!strings.HasPrefix(string(runes[cite.StartIndex:cite.EndIndex]), "[1] timeouts.md:") {
		t.Errorf("citation %+v spans %q", cite, string(runes[cite.StartIndex:cite.EndIndex]))
	}
	if res.Usage.CompletionTokens != 3 || res.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v", res.Usage)
	}
	var ext struct {
		Route   string `json:"route"`
		Sources []struct {
			Path  string `json:"path"`
			Cited bool   `json:"cited"`
		} `json:"sources"`
		Timings map[string]float64 `json:"timings_ms"`
	}
	if err := json.Unmarshal([]byte(res.JSON.ExtraFields["lore"].Raw()), &ext); err != nil {
		t.Fatal(err)
	}
	if ext.Route != "docs" || len(ext.Sources) == 0 || ext.Sources[0].Path != "timeouts.md" || !ext.Sources[0].Cited || ext.Timings["total"] == 0 {
		t.Errorf("lore extension: %+v", ext)
	}
}

func TestOpenAIClientStreamsWithUsage(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	c := f.client()
	params := question("How do I cancel a request after a timeout?")
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	acc := openai.ChatCompletionAccumulator{}
	var ids []string
	var roles, finishes []string
	usageChunks := 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		ids = append(ids, ch.ID)
		if len(ch.Choices) == 0 {
			usageChunks++
			if ch.Usage.CompletionTokens != 3 {
				t.Errorf("usage chunk %+v", ch.Usage)
			}
			continue
		}
		if ch.Choices[0].Delta.Role != "" {
			roles = append(roles, ch.Choices[0].Delta.Role)
		}
		if ch.Choices[0].FinishReason != "" {
			finishes = append(finishes, ch.Choices[0].FinishReason)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("chunk ids differ: %v", ids)
		}
	}
	if len(roles) != 1 || roles[0] != "assistant" || len(finishes) != 1 || finishes[0] != "stop" || usageChunks != 1 {
		t.Errorf("roles %v, finishes %v, usage chunks %d", roles, finishes, usageChunks)
	}
	got := acc.Choices[0].Message.Content
	if !strings.HasPrefix(got, "Use WithTimeout [1].") || !strings.Contains(got, "Sources:\n[1] timeouts.md:") {
		t.Errorf("streamed content:\n%s", got)
	}
}

// TestStreamTranscript pins the bytes of a stream: the order of the
// chunks, the keep-alive-free happy path, the usage chunk, [DONE].
func TestStreamTranscript(t *testing.T) {
	f := newFixture(t, Options{})
	body := `{"model":"lore","stream":true,"stream_options":{"include_usage":true},"temperature":0.3,"max_tokens":50,"some_new_field":{"x":1},
		"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"How do I cancel a request after a timeout?"}]}]}`
	resp, err := http.Post(f.http.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	raw, _ := io.ReadAll(resp.Body)
	got := regexp.MustCompile(`chatcmpl-[0-9a-z]+`).ReplaceAllString(string(raw), "chatcmpl-ID")
	got = regexp.MustCompile(`"created":\d+`).ReplaceAllString(got, `"created":0`)
	got = regexp.MustCompile(`"(total|retrieve|lexical|vector|fuse|embed|rerank|condense|generate|first_token|route)":[0-9.e-]+`).ReplaceAllString(got, `"$1":0`)
	got = regexp.MustCompile(`file://[^"#]*/timeouts.md`).ReplaceAllString(got, "file:///DOCS/timeouts.md")
	got = regexp.MustCompile(`"(source)":"[^"]*"`).ReplaceAllString(got, `"$1":"/DOCS"`)
	golden(t, "testdata/stream.golden", got)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./serve -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

func TestModelsListsEveryIndexInBothModes(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	c := f.client()
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "lore lore-online lore:default lore-online:default" {
		t.Errorf("models: %v", ids)
	}
}

func TestSearchRouteMatchesLoreSearchJSON(t *testing.T) {
	f := newFixture(t, Options{})
	resp, err := http.Post(f.http.URL+"/v1/search", "application/json", strings.NewReader(`{"query":"alpha widget","k":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Query   string `json:"query"`
		Index   string `json:"index"`
		Results []struct {
			Rank      int    `json:"rank"`
			Path      string `json:"path"`
			StartLine int    `json:"start_line"`
			Text      string `json:"text"`
		} `json:"results"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || out.Index != "default" || len(out.Results) != 1 || out.Results[0].Path != "widgets.md" || out.Results[0].Rank != 1 {
		t.Errorf("status %d, %+v", resp.StatusCode, out)
	}
}

// apiError is what an OpenAI client makes of an error reply.
func apiError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	return ae
}

func TestErrorsInOpenAIShape(t *testing.T) {
	f := newFixture(t, Options{Token: testToken, MaxBody: 4 << 10})
	ctx := context.Background()

	_, err := f.client(option.WithAPIKey("wrong")).Chat.Completions.New(ctx, question("hi"))
	if ae := apiError(t, err); ae.StatusCode != 401 || ae.Type != "authentication_error" {
		t.Errorf("wrong token: %d %s", ae.StatusCode, ae.Type)
	}
	p := question("hi")
	p.Model = "gpt-4o"
	_, err = f.client().Chat.Completions.New(ctx, p)
	if ae := apiError(t, err); ae.StatusCode != 404 || ae.Code != "model_not_found" || !strings.Contains(ae.Message, "lore-online") {
		t.Errorf("unknown model: %d %s %s", ae.StatusCode, ae.Code, ae.Message)
	}
	p.Model = "lore:nothere"
	_, err = f.client().Chat.Completions.New(ctx, p)
	if ae := apiError(t, err); ae.StatusCode != 404 || ae.Code != "index_not_found" {
		t.Errorf("unknown index: %d %s %s", ae.StatusCode, ae.Code, ae.Message)
	}
	_, err = f.client().Chat.Completions.New(ctx, question(strings.Repeat("long ", 2000)))
	if ae := apiError(t, err); ae.StatusCode != 413 {
		t.Errorf("big body: %d %s", ae.StatusCode, ae.Message)
	}

	for _, tc := range []struct{ body, code string }{
		{`{"model":"lore","messages":[{"role":"user","content":"hi"}`, "invalid_json"},
		{`{"model":"lore","messages":[]}`, "invalid_messages"},
		{`{"model":"lore","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ho"}]}`, "invalid_messages"},
	} {
		req, _ := http.NewRequest("POST", f.http.URL+"/v1/chat/completions", strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Message, Type, Code string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error.Code != tc.code || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
			t.Errorf("%s: %d %+v", tc.body, resp.StatusCode, e)
		}
	}
}

func TestHealthIsOpenButMetricsNeedTheToken(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 401, "/v1/models": 401, "/v1/indexes": 401} {
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without a token: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestMetricsCountRequests(t *testing.T) {
	f := newFixture(t, Options{})
	if _, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`lore_http_requests_total{code="200",route="/v1/chat/completions"} 1`,
		`lore_http_requests_in_flight 1`, // this scrape
		`lore_stage_duration_seconds_count{stage="retrieve"} 1`,
		`lore_queue_depth{resource="chat"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestTokenAndQuestionsStayOutOfTheLog(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	if _, err := f.client().Chat.Completions.New(context.Background(), question("what does the secret-project-x widget do")); err != nil {
		t.Fatal(err)
	}
	f.client(option.WithAPIKey("wrong-"+testToken)).Chat.Completions.New(context.Background(), question("hi"))
	log := f.log.String()
	if strings.Contains(log, testToken) || strings.Contains(log, "secret-project-x") {
		t.Errorf("the log holds the token or the question:\n%s", log)
	}
	if !strings.Contains(log, `"route":"/v1/chat/completions","status":200`) || !strings.Contains(log, `"status":401`) {
		t.Errorf("one line per request expected:\n%s", log)
	}
}

func TestCORSOnlyForConfiguredOrigins(t *testing.T) {
	f := newFixture(t, Options{Token: testToken, CORSOrigins: []string{"https://chat.example"}})
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", f.http.URL+"/v1/chat/completions", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, x-stainless-os")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	ok := preflight("https://chat.example")
	if ok.StatusCode != 204 || ok.Header.Get("Access-Control-Allow-Origin") != "https://chat.example" ||
		!strings.Contains(ok.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("allowed origin: %d %v", ok.StatusCode, ok.Header)
	}
	if other := preflight("https://evil.example"); other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin was allowed: %v", other.Header)
	}
}

func TestDrainingAnswers503(t *testing.T) {
	f := newFixture(t, Options{})
	f.srv.Drain()
	_, err := f.client().Chat.Completions.New(context.Background(), question("alpha"))
	if ae := apiError(t, err); ae.StatusCode != 503 {
		t.Errorf("draining: %d", ae.StatusCode)
	}
}

// logBuffer holds the log lines; the handlers write while the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// firstToken starts a streamed question and reads until the first token
// of the answer arrives: the generation is then running.
func firstToken(t *testing.T, ctx context.Context, c *openai.Client) {
	t.Helper()
	params := question("How do I cancel a request after a timeout?")
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			return
		}
	}
	t.Fatalf("the stream ended before a token: %v", stream.Err())
}

// waitFor polls cond for at most 10 seconds: what it waits on happens
// asynchronously, and the test fails only if it never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never happened: %s", what)
}

func TestClientDisconnectCancelsTheGeneration(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	firstToken(t, ctx, f.client())
	cancel()
	waitFor(t, "Ollama sees the generation closed", func() bool { return f.ollama.Abandoned() == 1 })
	waitFor(t, "the chat slot is free again", func() bool { return f.eng.Load()["chat"].Running == 0 })
}

func TestBusyServerAnswers429(t *testing.T) {
	f := newFixture(t, Options{}, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 0 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstToken(t, ctx, f.client())
	_, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget"))
	ae := apiError(t, err)
	if ae.StatusCode != 429 || ae.Type != "rate_limit_error" || ae.Response.Header.Get("Retry-After") == "" {
		t.Errorf("second request while the only slot is taken: %d %s %q", ae.StatusCode, ae.Type, ae.Response.Header.Get("Retry-After"))
	}
	cancel()
	waitFor(t, "the slot is freed", func() bool { return f.eng.Load()["chat"].Running == 0 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"ok"}})
	if _, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget")); err != nil {
		t.Errorf("after the first request ended: %v", err)
	}
}

// TestOfflineModelNeverReachesTheWeb: a server configured for online mode
// still answers model lore offline: the only peer is Ollama. lore-online
// on the same server does search the web, so the test can tell.
func TestOfflineModelNeverReachesTheWeb(t *testing.T) {
	var webHits atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		webHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"results":[{"url":"https://example.org/moon","title":"Moon","content":"The moon is made of rock."}]}`)
	}))
	defer web.Close()
	f := newFixture(t, Options{}, func(c *config.Config) {
		c.Mode, c.WebProvider, c.SearXNGURL, c.WebFallbackThreshold = "online", "searxng", web.URL, 1000
	})
	ollamaAddr := strings.TrimPrefix(f.ollama.URL, "http://")
	p := question("What is the moon made of?")
	if _, err := f.client().Chat.Completions.New(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, addr := range f.dials() {
		if addr != ollamaAddr {
			t.Errorf("model lore connected to %s; only Ollama (%s) may be reached offline", addr, ollamaAddr)
		}
	}
	p.Model = "lore-online"
	if _, err := f.client().Chat.Completions.New(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if webHits.Load() == 0 {
		t.Errorf("lore-online never searched the web: the offline check above proves nothing")
	}
}

func TestReadinessReportsOllamaWithoutFailing(t *testing.T) {
	readyz := func(f *fixture) (int, map[string]string) {
		resp, err := http.Get(f.http.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]string
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	f := newFixture(t, Options{})
	if code, out := readyz(f); code != 200 || out["ollama"] != "ok" || out["index"] != "default" {
		t.Errorf("with Ollama up: %d %v", code, out)
	}
	f.ollama.Close()
	if code, out := readyz(f); code != 200 || out["ollama"] == "ok" || out["ollama"] == "" {
		t.Errorf("with Ollama down the index still answers, and Ollama's state is told: %d %v", code, out)
	}
	cfg := f.cfg
	cfg.Index = "unbuilt"
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	unbuilt := httptest.NewServer(New(eng, Options{}).Handler())
	defer unbuilt.Close()
	if code, out := readyz(&fixture{http: unbuilt}); code != 503 || !strings.Contains(out["problem"], "lore index") {
		t.Errorf("default index not built: %d %v", code, out)
	}
	c := openai.NewClient(option.WithBaseURL(unbuilt.URL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	_, err = c.Chat.Completions.New(context.Background(), question("alpha"))
	if ae := apiError(t, err); ae.StatusCode != 503 || ae.Code != "not_ready" || !strings.Contains(ae.Message, "lore index") {
		t.Errorf("a question before the default index is built: %d %s %s", ae.StatusCode, ae.Code, ae.Message)
	}
}

func TestSourcesOnlyAnswerSaysWhy(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.Close()
	res, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget"))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Choices[0].Message.Content
	if !strings.HasPrefix(got, "lore: ") || !strings.Contains(got, "no language model reachable") || !strings.Contains(got, "Sources:\n[1] widgets.md:") {
		t.Errorf("content:\n%s", got)
	}
}

// TestKeepAliveWhileTheAnswerIsSlow: before the first token, a stream
// sends SSE comments, so proxies and clients do not drop a quiet line.
func TestKeepAliveWhileTheAnswerIsSlow(t *testing.T) {
	f := newFixture(t, Options{KeepAlive: 5 * time.Millisecond})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"late"}, FirstDelay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.http.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"lore","stream":true,"messages":[{"role":"user","content":"alpha widget"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if lines.Text() == ": keep-alive" {
			return
		}
		if strings.Contains(lines.Text(), `"content":"late"`) {
			break
		}
	}
	t.Fatal("no keep-alive comment before the first token")
}

// TestQueuedStreamStartsAtOnce: a request that waits for a free slot gets
// its stream's headers and first chunk at once (then keep-alives), not
// minutes of silence that a proxy would cut.
func TestQueuedStreamStartsAtOnce(t *testing.T) {
	f := newFixture(t, Options{}, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 1 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstToken(t, ctx, f.client()) // holds the only slot
	req, _ := http.NewRequestWithContext(ctx, "POST", f.http.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"lore","stream":true,"messages":[{"role":"user","content":"alpha widget"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if resp.StatusCode != 200 || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("queued stream: %d %q", resp.StatusCode, line)
	}
	if s := f.eng.Load()["chat"]; s.Running != 1 || s.Waiting != 1 {
		t.Errorf("the second request should be waiting for the slot: %+v", s)
	}
	cancel()
	waitFor(t, "both requests end", func() bool { s := f.eng.Load()["chat"]; return s.Running == 0 && s.Waiting == 0 })
}

// TestBrowserAttacksAreRefused: without a token lore serve answers only
// requests addressed to this machine (a rebound DNS name is refused), and
// no request from a web page of another origin, even one that needs no
// preflight (a text/plain POST).
func TestBrowserAttacksAreRefused(t *testing.T) {
	f := newFixture(t, Options{CORSOrigins: []string{"https://chat.example"}})
	do := func(host, origin, ctype string) int {
		req, _ := http.NewRequest("POST", f.http.URL+"/v1/search", strings.NewReader(`{"query":"alpha widget"}`))
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		host, origin, ctype string
		want                int
	}{
		{"", "", "application/json", 200},
		{"localhost:8765", "", "application/json", 200},
		{"[::1]:8765", "", "application/json", 200},
		{"rebind.attacker.example:8765", "", "application/json", 403},
		{"", "https://attacker.example", "text/plain", 403},
		{"", "https://chat.example", "application/json", 200},
	} {
		if got := do(tc.host, tc.origin, tc.ctype); got != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, got, tc.want)
		}
	}
	// With a token the token is the guard: any Host name, lower-case scheme.
	g := newFixture(t, Options{Token: testToken})
	req, _ := http.NewRequest("GET", g.http.URL+"/v1/models", nil)
	req.Host = "lore.team.example"
	req.Header.Set("Authorization", "bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a team name with the token (scheme in lower case): %d", resp.StatusCode)
	}
}
