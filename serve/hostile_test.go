package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

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
	go hs.Serve(ln)
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
