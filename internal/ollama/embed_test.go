package ollama

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

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
		if !errors.Is(err, ErrModelMissing) || !strings.Contains(err.Error(), "ollama pull nope") || !strings.Contains(err.Error(), "--embedder none") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("no server says how to start one", func(t *testing.T) {
		addr := ollamatest.ClosedAddr(t)
		_, err := embedderFor(t, "http://"+addr, "nomic-embed-text").Check(ctx)
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
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

func embedderFor(t testing.TB, srvURL, model string) *Embedder {
	u, _ := url.Parse(srvURL)
	return NewEmbedder(NewClient(u, nil, Timeouts{}), u.String(), model)
}

// An index records the model it was built with as the user spelled it;
// the same model spelled with its implied tag is no change.
func TestEmbedderSameModel(t *testing.T) {
	e := NewEmbedder(nil, "", "nomic-embed-text")
	for m, want := range map[string]bool{"nomic-embed-text": true, "nomic-embed-text:latest": true, "nomic-embed-text:v1.5": false, "all-minilm": false} {
		if got := e.SameModel(m); got != want {
			t.Errorf("SameModel(%q) = %v, want %v", m, got, want)
		}
	}
}
