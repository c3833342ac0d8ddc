package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// rawDo sends raw, byte for byte, on a new connection to the fixture's
// server (127.0.0.1) and reads one response: what a hostile client sends
// is not what net/http's client would let it send.
func rawDo(t *testing.T, f *fixture, raw string) (*http.Response, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(f.http.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(body)
}

// post is a raw POST of body to path with extra header lines.
func post(path, body string, headers ...string) string {
	h := ""
	for _, x := range headers {
		h += x + "\r\n"
	}
	return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n" + h +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// errorCode is the code of an OpenAI error body.
func errorCode(body string) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// TestOneJSONValuePerBody: a chat or search body with bytes after its
// JSON object, or two objects, is refused, not answered from the first.
func TestOneJSONValuePerBody(t *testing.T) {
	f := newFixture(t, Options{})
	chat := `{"model":"lore","messages":[{"role":"user","content":"alpha widget"}]}`
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", chat + `garbage`},
		{"/v1/chat/completions", chat + "\n" + chat},
		{"/v1/chat/completions", chat + `]`},
		{"/v1/search", `{"query":"alpha"} {"query":"beta"}`},
	} {
		resp, body := rawDo(t, f, post(tc.path, tc.body))
		if resp.StatusCode != 400 || errorCode(body) != "invalid_json" || !strings.Contains(body, "one JSON object") {
			t.Errorf("%s %q: %d %s", tc.path, tc.body, resp.StatusCode, body)
		}
	}
	if resp, body := rawDo(t, f, post("/v1/chat/completions", chat+" \r\n\t")); resp.StatusCode != 200 {
		t.Errorf("trailing white space is still one value: %d %s", resp.StatusCode, body)
	}
}

// TestEveryOriginHeaderIsChecked: a second Origin header after an empty
// one does not slip past the origin check.
func TestEveryOriginHeaderIsChecked(t *testing.T) {
	f := newFixture(t, Options{CORSOrigins: []string{"https://chat.example"}})
	body := `{"query":"alpha widget"}`
	for _, tc := range []struct {
		headers []string
		want    int
	}{
		{[]string{"Origin: ", "Origin: https://evil.example"}, 403},
		{[]string{"Origin: https://chat.example", "Origin: https://evil.example"}, 403},
		{[]string{"Origin: https://evil.example", "Origin: "}, 403},
		{[]string{"Origin: https://chat.example"}, 200},
		{nil, 200},
	} {
		if resp, got := rawDo(t, f, post("/v1/search", body, tc.headers...)); resp.StatusCode != tc.want {
			t.Errorf("%q: %d, want %d: %s", tc.headers, resp.StatusCode, tc.want, got)
		}
	}
}

// TestRetrieveModel: the models /v1/models lists can each be retrieved
// (clients' models.retrieve, go-openai's GetModel); others are a 404.
func TestRetrieveModel(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	c := f.client()
	for _, id := range []string{"lore", "lore-online", "lore:default", "lore-online:default"} {
		m, err := c.Models.Get(context.Background(), id)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if m.ID != id || m.Object != "model" || m.OwnedBy != "lore" {
			t.Errorf("%s: %+v", id, m)
		}
	}
	for _, id := range []string{"gpt-4o", "lore:nothere"} {
		_, err := c.Models.Get(context.Background(), id)
		if ae := apiError(t, err); ae.StatusCode != 404 || ae.Code != "model_not_found" {
			t.Errorf("%s: %d %s", id, ae.StatusCode, ae.Code)
		}
	}
}

// TestResponseFormatIsRefused: a client asking for JSON output is told
// lore writes cited prose, not handed prose with a 200 that its own JSON
// parser then fails on.
func TestResponseFormatIsRefused(t *testing.T) {
	f := newFixture(t, Options{})
	for _, format := range []openai.ChatCompletionNewParamsResponseFormatUnion{
		{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}},
		{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer"}}},
	} {
		p := question("alpha widget")
		p.ResponseFormat = format
		_, err := f.client().Chat.Completions.New(context.Background(), p)
		if ae := apiError(t, err); ae.StatusCode != 400 || ae.Code != "unsupported_response_format" || !strings.Contains(ae.Message, "cited prose") {
			t.Errorf("%d %s %s", ae.StatusCode, ae.Code, ae.Message)
		}
	}
	p := question("alpha widget")
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfText: &openai.ResponseFormatTextParam{}}
	if _, err := f.client().Chat.Completions.New(context.Background(), p); err != nil {
		t.Errorf("type text is what lore writes: %v", err)
	}
}

// serveReal serves f's server with its own http.Server (every timeout
// set, as lore serve runs it) on 127.0.0.1; the test's cleanup closes it.
func serveReal(t *testing.T, f *fixture) (hs *http.Server, addr string, stopEngine func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, cancel := context.WithCancel(context.Background())
	hs = f.srv.HTTPServer(base)
	go f.srv.Serve(hs, ln)
	t.Cleanup(func() { cancel(); hs.Close() })
	return hs, ln.Addr().String(), cancel
}

// TestShutdownDeadlineEndsStreamsWithAnError: a stream still running at
// the shutdown deadline ends with an error event (server_shutting_down),
// so that its client can tell the cut from an answer's end.
func TestShutdownDeadlineEndsStreamsWithAnError(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	hs, addr, stopEngine := serveReal(t, f)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(conn, post("/v1/chat/completions", `{"model":"lore","stream":true,"messages":[{"role":"user","content":"How do I cancel a request after a timeout?"}]}`))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.Contains(lines.Text(), `"content":"Use "`) {
	}
	stopped := make(chan error, 1)
	go func() { stopped <- f.srv.Shutdown(hs, 50*time.Millisecond, stopEngine) }()
	var rest []string
	for lines.Scan() {
		if lines.Text() != "" {
			rest = append(rest, lines.Text())
		}
	}
	if err := <-stopped; err == nil {
		t.Error("Shutdown says every answer finished in time")
	}
	if len(rest) == 0 || !strings.Contains(rest[len(rest)-1], `"code":"server_shutting_down"`) ||
		!strings.HasPrefix(rest[len(rest)-1], `data: {"error":`) {
		t.Errorf("after the deadline the stream sent:\n%s", strings.Join(rest, "\n"))
	}
}

// TestLargeBodiesAreAdmittedBeforeTheyAreRead: once the bodies being
// read and answered reach the budget, the next large request is refused
// at once with a 429, before its body is read, instead of adding its
// decoded size to the process; when they end, requests pass again.
func TestLargeBodiesAreAdmittedBeforeTheyAreRead(t *testing.T) {
	f := newFixture(t, Options{MaxBody: 64 << 10, BodyBudget: 128 << 10})
	_, addr, _ := serveReal(t, f)
	body := `{"model":"lore","messages":[{"role":"user","content":"alpha widget ` + strings.Repeat("x", 60000) + `"}]}`
	head := func() string {
		return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n" +
			"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Two clients send their headers and half their bodies, then stall.
	var held []net.Conn
	for range 2 {
		c := dial()
		io.WriteString(c, head()+body[:len(body)/2])
		held = append(held, c)
	}
	waitFor(t, "both requests are being read", func() bool { return f.srv.active.Load() == 2 })
	c := dial()
	io.WriteString(c, head())
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a third large body while two are read: no answer before its body (%v)", err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || errorCode(string(got)) != "busy" {
		t.Errorf("a third large body: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), got)
	}
	for _, c := range held {
		io.WriteString(c, body[len(body)/2:])
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("a held request once its body came: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	waitFor(t, "the held requests end", func() bool { return f.srv.active.Load() == 0 })
	if resp, got := rawDo(t, f, post("/v1/chat/completions", body)); resp.StatusCode != 200 {
		t.Errorf("a large body once the others ended: %d %s", resp.StatusCode, got)
	}
	// A declared length over the cap is refused before it is read.
	c = dial()
	io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 413 {
		t.Errorf("a declared 100 MB body: %v %v", resp, err)
	}
}

// TestConnectionsAreCapped: past MaxConns a new connection is not served
// until one of those open closes.
func TestConnectionsAreCapped(t *testing.T) {
	f := newFixture(t, Options{MaxConns: 2})
	_, addr, _ := serveReal(t, f)
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	get := "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	var open []net.Conn
	for range 2 {
		c := dial()
		io.WriteString(c, get)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		open = append(open, c)
	}
	third := dial()
	io.WriteString(third, get)
	r := bufio.NewReader(third)
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("a third connection was served while two were open")
	}
	open[0].Close()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("the third connection once one closed: %v %v", resp, err)
	}
}

// TestQueuedRequestWaitsAtMostQueueTimeout: a request queued for a chat
// slot that stays taken is answered 429 queue_timeout (a stream: an error
// event) after QueueTimeout, not left waiting until its client gives up.
func TestQueuedRequestWaitsAtMostQueueTimeout(t *testing.T) {
	f := newFixture(t, Options{QueueTimeout: 50 * time.Millisecond}, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 4 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstToken(t, ctx, f.client()) // holds the only slot
	wait, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	_, err := f.client().Chat.Completions.New(wait, question("alpha widget"))
	if ae := apiError(t, err); ae.StatusCode != 429 || ae.Code != "queue_timeout" || ae.Response.Header.Get("Retry-After") == "" {
		t.Errorf("a whole answer past the queue timeout: %d %s %q", ae.StatusCode, ae.Code, ae.Response.Header.Get("Retry-After"))
	}
	_, body := rawDo(t, f, post("/v1/chat/completions", `{"model":"lore","stream":true,"messages":[{"role":"user","content":"alpha widget"}]}`))
	if !strings.Contains(body, `data: {"error":`) || !strings.Contains(body, `"code":"queue_timeout"`) {
		t.Errorf("a stream past the queue timeout:\n%s", body)
	}
	waitFor(t, "the queue is empty again", func() bool { return f.eng.Load()["chat"].Waiting == 0 })
}

// TestRetryAfterFollowsTheRunningAnswers: a 429's Retry-After says when
// the running answer should end, from how long answers take here, not a
// fixed second. (2.5 s answers leave the slow machine 1.5 s between the
// running answer's start and the refusal before 2 would be wrong.)
func TestRetryAfterFollowsTheRunningAnswers(t *testing.T) {
	f := newFixture(t, Options{}, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 0 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout [1]."}, FirstDelay: 2500 * time.Millisecond})
	if _, err := f.client().Chat.Completions.New(context.Background(), question("How do I cancel a request after a timeout?")); err != nil {
		t.Fatal(err)
	}
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstToken(t, ctx, f.client())
	_, err := f.client().Chat.Completions.New(context.Background(), question("alpha widget"))
	ae := apiError(t, err)
	if secs, _ := strconv.Atoi(ae.Response.Header.Get("Retry-After")); ae.StatusCode != 429 || secs < 2 {
		t.Errorf("answers here take 2.5 s and one just started: %d, Retry-After %q", ae.StatusCode, ae.Response.Header.Get("Retry-After"))
	}
}

// TestChunkedBodiesGiveBackTheirUnreadShare: a chunked body declares no
// length, so it is admitted at MaxBody; once it has been read, the part
// never sent is given back, so small chunked requests whose answers are
// still streaming do not fill the budget (two of them here refused a
// third with 429 for as long as they ran).
func TestChunkedBodiesGiveBackTheirUnreadShare(t *testing.T) {
	f := newFixture(t, Options{MaxBody: 64 << 10, BodyBudget: 128 << 10}, func(c *config.Config) { c.ServeMaxConcurrent = 4 })
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"The alpha ", "widget spins [1]."}, Hang: true})
	_, addr, _ := serveReal(t, f)
	body := `{"model":"lore","stream":true,"messages":[{"role":"user","content":"Which way does the alpha widget spin?"}]}`
	chunked := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	send := func() *http.Response {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, chunked)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for i := range 3 {
		resp := send()
		if resp.StatusCode != 200 {
			got, _ := io.ReadAll(resp.Body)
			t.Fatalf("chunked request %d with %d answering: %d %s", i+1, i, resp.StatusCode, got)
		}
		// The answer is under way (its body read) and stays so: the
		// fake chat hangs after its first token.
		waitFor(t, "the answer streams", func() bool { return f.ollama.Streaming() == i+1 })
	}
}
