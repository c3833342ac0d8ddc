package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const secret = "tvly-SECRET-key-123"

// tavilyServer answers like api.tavily.com/search.
func tavilyServer(t *testing.T, status int, body string) (*httptest.Server, *http.Request) {
	var got http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = *r
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		got.Form = map[string][]string{"query": {req["query"].(string)}, "depth": {req["search_depth"].(string)}}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

const tavilyOK = `{"query":"go context","follow_up_questions":null,"answer":null,"images":[],
 "results":[{"title":"context package","url":"https://pkg.go.dev/context","content":"Package context defines the Context type.","score":0.93,"raw_content":null},
            {"title":"no url","url":"","content":"x","score":0.1},
            {"title":"blog","url":"https://go.dev/blog/context","content":"Go Concurrency Patterns: Context","score":0.81,"raw_content":null}],
 "response_time":1.09}`

func TestTavily(t *testing.T) {
	srv, got := tavilyServer(t, 200, tavilyOK)
	tv, err := NewTavily(TavilyOptions{APIKey: secret, Endpoint: srv.URL, Depth: "advanced"})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := tv.Search(context.Background(), "go context")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].URL != "https://pkg.go.dev/context" || rs[0].Title != "context package" || rs[1].Score != 0.81 {
		t.Fatalf("results %+v", rs)
	}
	if got.Method != "POST" || got.Header.Get("Authorization") != "Bearer "+secret || got.Form.Get("depth") != "advanced" || got.Form.Get("query") != "go context" {
		t.Fatalf("request %s %v %v", got.Method, got.Header, got.Form)
	}
}

func TestTavilyErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		is     error
		want   string
	}{
		{401, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`, ErrAuth, "TAVILY_API_KEY"},
		{429, `{"detail":{"error":"Rate limit exceeded"}}`, ErrRateLimited, "Rate limit exceeded"},
		{432, `{"detail":{"error":"This request exceeds your plan's set usage limit."}}`, ErrRateLimited, "plan"},
		{502, `<html><body><h1>502 Bad Gateway</h1></body></html>`, ErrUnavailable, "502"},
		{500, `{"detail":{"error":"Internal Server Error"}}`, ErrUnavailable, "try again later"},
		{200, `{"results": [`, ErrUnavailable, "cannot read"},
	}
	for _, tt := range tests {
		srv, _ := tavilyServer(t, tt.status, tt.body)
		tv, _ := NewTavily(TavilyOptions{APIKey: secret, Endpoint: srv.URL})
		_, err := tv.Search(context.Background(), "q")
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%d: got %v, want %v containing %q", tt.status, err, tt.is, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "<html")) {
			t.Errorf("%d: error leaks the key or HTML: %v", tt.status, err)
		}
		if strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%d: error is not one line: %q", tt.status, err)
		}
	}
	// No key is not a refused one (issue 34): the message says which.
	if _, err := NewTavily(TavilyOptions{}); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "TAVILY_API_KEY") || strings.Contains(err.Error(), "refused") {
		t.Errorf("no key: %v", err)
	}
}

func TestTavilyTimeoutAndUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	tv, _ := NewTavily(TavilyOptions{APIKey: secret, Endpoint: srv.URL, Timeout: 100 * time.Millisecond})
	if _, err := tv.Search(context.Background(), "q"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "in time") {
		t.Errorf("timeout: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	tv, _ = NewTavily(TavilyOptions{APIKey: secret, Endpoint: "http://" + addr + "/search"})
	if _, err := tv.Search(context.Background(), "q"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), secret) {
		t.Errorf("unreachable: %v", err)
	}
}

func TestSearXNG(t *testing.T) {
	var gotQuery, gotFormat, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery, gotFormat = r.URL.Path, r.URL.Query().Get("q"), r.URL.Query().Get("format")
		if r.URL.Query().Get("q") == "forbidden" {
			w.WriteHeader(403)
			w.Write([]byte("<html>403 Forbidden</html>"))
			return
		}
		w.Write([]byte(`{"query":"go context","number_of_results":0,"results":[
			{"url":"https://pkg.go.dev/context","title":"context","content":"Package context","engine":"duckduckgo","score":2.5,"category":"general"}],
			"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`))
	}))
	defer srv.Close()
	sx, err := NewSearXNG(SearXNGOptions{URL: srv.URL + "/searx/"})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := sx.Search(context.Background(), "go context")
	if err != nil || len(rs) != 1 || rs[0].Title != "context" || rs[0].Score != 2.5 {
		t.Fatalf("%+v %v", rs, err)
	}
	if gotPath != "/searx/search" || gotQuery != "go context" || gotFormat != "json" {
		t.Fatalf("request %s q=%q format=%q", gotPath, gotQuery, gotFormat)
	}
	if _, err := sx.Search(context.Background(), "forbidden"); err == nil || !strings.Contains(err.Error(), "search.formats") {
		t.Fatalf("403: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "not a url"} {
		if _, err := NewSearXNG(SearXNGOptions{URL: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDialHook(t *testing.T) {
	srv, _ := tavilyServer(t, 200, tavilyOK)
	var dialed []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tv, _ := NewTavily(TavilyOptions{APIKey: secret, Endpoint: srv.URL, Dial: dial})
	if _, err := tv.Search(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	if len(dialed) != 1 || dialed[0] != srv.Listener.Addr().String() {
		t.Fatalf("dialed %v", dialed)
	}
}

// A reply that never ends, and a web page with status 200 (a proxy's login
// page), are refused in one line naming the host and never the key; the
// agent then answers from the documents (issue 23, items 1 and 4).
func TestHostileSearchReplies(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"endless": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"results":[`)
			item := strings.Repeat(`{"url":"https://example.com","title":"t","content":"c"},`, 1000)
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, item); err != nil {
					return
				}
			}
		},
		"html": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!DOCTYPE html><html><body>Sign in</body></html>")
		},
	}
	for name, h := range handlers {
		srv := httptest.NewServer(h)
		host := strings.TrimPrefix(srv.URL, "http://")
		tv, _ := NewTavily(TavilyOptions{APIKey: secret, Endpoint: srv.URL + "/search", Timeout: time.Minute})
		sx, _ := NewSearXNG(SearXNGOptions{URL: srv.URL, Timeout: time.Minute})
		for _, s := range []Searcher{tv, sx} {
			_, err := s.Search(context.Background(), "q")
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), host) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: %v", name, s.Name(), err)
			}
			if name == "endless" && !strings.Contains(err.Error(), "more than 4 MiB") {
				t.Errorf("%s, %s: %v does not name the cap", name, s.Name(), err)
			}
		}
		srv.Close()
	}
}
