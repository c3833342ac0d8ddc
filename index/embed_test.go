package index

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

func embedderFor(t testing.TB, srvURL, model string) *OllamaEmbedder {
	u, _ := url.Parse(srvURL)
	return NewOllamaEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), u.String(), model)
}

func TestOllamaEmbedder(t *testing.T) {
	srv := ollamatest.New(t)
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
		reqs := srv.Requests()
		last := reqs[len(reqs)-2:]
		if last[0][0] != "search_document: a" || last[1][0] != "search_query: q" {
			t.Errorf("nomic prefixes not applied: %q", last)
		}
		e = embedderFor(t, srv.URL, "all-minilm")
		e.EmbedQuery(ctx, "q")
		if reqs := srv.Requests(); reqs[len(reqs)-1][0] != "q" {
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
		addr := ollamatest.ClosedAddr(t)
		_, err := embedderFor(t, "http://"+addr, "nomic-embed-text").Check(ctx)
		if !errors.Is(err, ollama.ErrUnreachable) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("transient errors are retried", func(t *testing.T) {
		srv.Fail.Store(2)
		before := len(srv.Requests())
		vs, err := embedderFor(t, srv.URL, "all-minilm").EmbedDocuments(ctx, []string{"x"})
		if err != nil || len(vs) != 1 {
			t.Fatalf("after two 503s: %v", err)
		}
		if n := len(srv.Requests()) - before; n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})

	t.Run("persistent errors give up with the server's message", func(t *testing.T) {
		srv.Fail.Store(100)
		defer srv.Fail.Store(0)
		_, err := embedderFor(t, srv.URL, "all-minilm").EmbedDocuments(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "server busy") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("a slow server is abandoned when the context ends", func(t *testing.T) {
		srv.SetDelay(time.Minute)
		defer srv.SetDelay(0)
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
	srv := ollamatest.New(t)
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	opt := testOptions(embedderFor(t, srv.URL, "nomic-embed-text"), src)
	sum := build(t, dir, opt)
	embedded := 0
	for _, r := range srv.Requests() {
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

// An embedding of absurd length, or the wrong number of them, is refused
// naming the host, and counts as Ollama unreachable: search goes on by
// keyword (issue 23, item 1).
func TestUnusableEmbeddingsAreRefused(t *testing.T) {
	for name, reply := range map[string]string{
		"10^6 dimensions": `{"embeddings":[[` + strings.Repeat("0,", 1_000_000) + `1]]}`,
		"none for one":    `{"embeddings":[]}`,
		"two for one":     `{"embeddings":[[1,0],[0,1]]}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Write([]byte(reply))
			}))
			defer srv.Close()
			_, err := embedderFor(t, srv.URL, "m").EmbedQuery(context.Background(), "q")
			if !errors.Is(err, ollama.ErrUnreachable) || !strings.Contains(err.Error(), "Ollama at "+srv.URL) {
				t.Fatalf("err = %v, want ErrUnreachable naming the host", err)
			}
		})
	}
}
