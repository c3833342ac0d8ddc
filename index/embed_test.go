package index

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lore/internal/ollama"
)

// fakeOllama speaks the parts of Ollama's HTTP API the embedder uses, with
// the JSON shapes of the real server.
type fakeOllama struct {
	models  map[string]int // model name to dimension
	mu      sync.Mutex
	inputs  [][]string // the input of every /api/embed request, in order
	fail    atomic.Int32
	failFn  func(w http.ResponseWriter) bool
	delay   time.Duration
	started chan struct{}
}

func newFakeOllama(t testing.TB) (*fakeOllama, *httptest.Server) {
	f := &fakeOllama{models: map[string]int{"nomic-embed-text:latest": 8, "all-minilm:latest": 4}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Ollama is running"))
	case "/api/show":
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		if _, ok := f.model(req.Model); !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"model '` + req.Model + `' not found"}`))
			return
		}
		w.Write([]byte(`{"modelfile":"","details":{"family":"nomic-bert"}}`))
	case "/api/embed":
		var req struct {
			Model string
			Input []string
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid input type"}`))
			return
		}
		f.mu.Lock()
		f.inputs = append(f.inputs, req.Input)
		f.mu.Unlock()
		if f.started != nil {
			select {
			case f.started <- struct{}{}:
			default:
			}
		}
		if f.fail.Load() > 0 {
			f.fail.Add(-1)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"server busy, please try again.  maximum pending requests exceeded"}`))
			return
		}
		dim, ok := f.model(req.Model)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"model \"` + req.Model + `\" not found, try pulling it first"}`))
			return
		}
		if f.delay > 0 {
			select {
			case <-time.After(f.delay):
			case <-r.Context().Done():
				return
			}
		}
		resp := struct {
			Model           string      `json:"model"`
			Embeddings      [][]float32 `json:"embeddings"`
			TotalDuration   int64       `json:"total_duration"`
			PromptEvalCount int         `json:"prompt_eval_count"`
		}{Model: req.Model, TotalDuration: 14143917, PromptEvalCount: 8}
		for _, in := range req.Input {
			v := fakeVector(in, dim)
			for i := range v {
				v[i] *= 3 // the real server's vectors are normalised; lore must not rely on it
			}
			resp.Embeddings = append(resp.Embeddings, v)
		}
		json.NewEncoder(w).Encode(resp)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOllama) model(name string) (int, bool) {
	if !strings.Contains(name, ":") {
		name += ":latest"
	}
	d, ok := f.models[name]
	return d, ok
}

func (f *fakeOllama) requests() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.inputs...)
}

func embedderFor(t testing.TB, srvURL, model string) *OllamaEmbedder {
	u, _ := url.Parse(srvURL)
	return NewOllamaEmbedder(ollama.NewClient(u, nil), u.String(), model)
}

func TestOllamaEmbedder(t *testing.T) {
	f, srv := newFakeOllama(t)
	ctx := context.Background()

	t.Run("check, prefixes and normalisation", func(t *testing.T) {
		e := embedderFor(t, srv.URL, "nomic-embed-text")
		dim, err := e.Check(ctx)
		if err != nil || dim != 8 {
			t.Fatalf("Check = %d, %v", dim, err)
		}
		vs, err := e.EmbedDocuments(ctx, []string{"a", "b"})
		if err != nil || len(vs) != 2 {
			t.Fatalf("EmbedDocuments: %v", err)
		}
		var norm float32
		for _, x := range vs[0] {
			norm += x * x
		}
		if norm < 0.999 || norm > 1.001 {
			t.Errorf("vector not normalised: |v|^2 = %f", norm)
		}
		if _, err := e.EmbedQuery(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		reqs := f.requests()
		last := reqs[len(reqs)-2:]
		if last[0][0] != "search_document: a" || last[1][0] != "search_query: q" {
			t.Errorf("nomic prefixes not applied: %q", last)
		}
		e = embedderFor(t, srv.URL, "all-minilm")
		e.EmbedQuery(ctx, "q")
		if reqs := f.requests(); reqs[len(reqs)-1][0] != "q" {
			t.Errorf("a model without prefixes got %q", reqs[len(reqs)-1][0])
		}
	})

	t.Run("missing model says how to pull it", func(t *testing.T) {
		_, err := embedderFor(t, srv.URL, "nope").Check(ctx)
		if !errors.Is(err, ollama.ErrModelMissing) || !strings.Contains(err.Error(), "ollama pull nope") || !strings.Contains(err.Error(), "--embedder none") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("no server says how to start one", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		_, err := embedderFor(t, "http://"+addr, "nomic-embed-text").Check(ctx)
		if !errors.Is(err, ollama.ErrUnreachable) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("transient errors are retried", func(t *testing.T) {
		f.fail.Store(2)
		before := len(f.requests())
		vs, err := embedderFor(t, srv.URL, "all-minilm").EmbedDocuments(ctx, []string{"x"})
		if err != nil || len(vs) != 1 {
			t.Fatalf("after two 503s: %v", err)
		}
		if n := len(f.requests()) - before; n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})

	t.Run("persistent errors give up with the server's message", func(t *testing.T) {
		f.fail.Store(100)
		defer f.fail.Store(0)
		_, err := embedderFor(t, srv.URL, "all-minilm").EmbedDocuments(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "server busy") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("a slow server is abandoned when the context ends", func(t *testing.T) {
		f.delay = time.Minute
		defer func() { f.delay = 0 }()
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := embedderFor(t, srv.URL, "all-minilm").EmbedDocuments(ctx, []string{"x"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("did not return when the context ended")
		}
	})
}

func TestBuildWithOllama(t *testing.T) {
	f, srv := newFakeOllama(t)
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	opt := testOptions(embedderFor(t, srv.URL, "nomic-embed-text"), src)
	sum := build(t, dir, opt)
	embedded := 0
	for _, r := range f.requests() {
		if len(r) > opt.EmbedBatchSize {
			t.Errorf("request of %d inputs, batch size %d", len(r), opt.EmbedBatchSize)
		}
		if r[0] != "dimension probe" {
			embedded += len(r)
		}
	}
	if embedded != sum.ChunksEmbedded || sum.ChunksEmbedded != sum.Chunks {
		t.Fatalf("server embedded %d inputs, summary says %d of %d chunks", embedded, sum.ChunksEmbedded, sum.Chunks)
	}
	// With the server gone, a refresh with nothing to do still works...
	srv.Close()
	if sum := build(t, dir, testOptions(embedderFor(t, srv.URL, "nomic-embed-text"))); sum.FilesUnchanged != 3 {
		t.Fatalf("no-op refresh: %+v", sum)
	}
	// ...and one with work fails before writing anything, saying what to do.
	writeFiles(t, src, map[string]string{"new.md": "# New\n\ntext\n"})
	_, err := Build(context.Background(), dir, testOptions(embedderFor(t, srv.URL, "nomic-embed-text")))
	if !errors.Is(err, ollama.ErrUnreachable) {
		t.Fatalf("got %v", err)
	}
}
