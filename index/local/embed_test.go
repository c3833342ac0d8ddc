package local

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

func embedderFor(t testing.TB, srvURL, model string) *ollama.Embedder {
	u, _ := url.Parse(srvURL)
	return ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), u.String(), model)
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
