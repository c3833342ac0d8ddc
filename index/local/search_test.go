package local

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollamatest"
)

var searchCorpus = map[string]string{
	"config.md":  "# Configuration\n\n## Host\n\nSet OLLAMA_HOST to the address of the server.\n\n## Flags\n\nPass --keepalive to keep the model loaded.\n",
	"exec.go":    "package exec\n\n// LookPath searches for an executable named file in the\n// directories named by the PATH environment variable.\nfunc LookPath(file string) (string, error) {\n\treturn \"\", nil\n}\n",
	"snake.py":   "def snake_case_name():\n    return 1\n",
	"cancel.md":  "# Cancellation\n\nA context can be cancelled after a timeout with WithTimeout; call the cancel function to release resources.\n",
	"weather.md": "# Weather\n\nIt rains a lot in the autumn.\n",
}

func searchIndex(t testing.TB, emb index.Embedder) *Index {
	t.Helper()
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, searchCorpus)
	build(t, dir, testOptions(emb, src))
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestLexicalSearchFindsIdentifiers(t *testing.T) {
	ix := searchIndex(t, nil)
	for q, want := range map[string]string{
		"OLLAMA_HOST":                      "config.md",
		"what does --keepalive do":         "config.md",
		"exec.LookPath":                    "exec.go",
		"snake_case_name":                  "snake.py",
		"how do I cancel after a timeout?": "cancel.md",
	} {
		res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 3})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if res.Mode != "lexical" || len(res.Hits) == 0 || res.Hits[0].Path != want {
			t.Errorf("%q: top hit %v, want %s", q, res.Hits, want)
			continue
		}
		if h := res.Hits[0]; h.LexicalRank != 1 || h.VectorRank != 0 || h.Start < 1 || h.Score <= 0 {
			t.Errorf("%q: hit fields %+v", q, h)
		}
	}
}

func TestHybridSearch(t *testing.T) {
	emb := newFakeEmbedder("fake", 16)
	ix := searchIndex(t, emb)
	// The fake embeds equal texts equally: querying with a chunk's exact
	// embedding text must bring that chunk first by vector, whatever BM25 says.
	var text string
	ix.st.db.QueryRow(`SELECT heading || char(10) || char(10) || text FROM chunks WHERE text LIKE '%autumn%'`).Scan(&text)
	vec := ollamatest.Vector(text, 16)
	unitVector(vec)
	res, err := ix.SearchVector(context.Background(), "zzz unrelated words", vec, index.SearchOptions{Limit: 5, Depth: 5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "hybrid" || len(res.Hits) == 0 || res.Hits[0].Path != "weather.md" || res.Hits[0].VectorRank != 1 || res.Hits[0].LexicalRank != 0 {
		t.Fatalf("hybrid: %+v", res)
	}
	// A chunk found by both retrievers outranks one found by either alone.
	res, _ = ix.SearchVector(context.Background(), "autumn rains", vec, index.SearchOptions{Limit: 5, Depth: 5}, 0)
	if h := res.Hits[0]; h.Path != "weather.md" || h.LexicalRank != 1 || h.VectorRank != 1 || h.Score != 2.0/61 {
		t.Fatalf("fused: %+v", h)
	}
	// Search embeds the query through the embedder.
	if _, err := ix.Search(context.Background(), "anything", index.SearchOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	// A query vector of the wrong size is an error, not a panic.
	if _, err := ix.SearchVector(context.Background(), "x", make([]float32, 3), index.SearchOptions{}, 0); err == nil {
		t.Fatal("wrong dimension accepted")
	}
}

func TestSearchSurvivesHostileQueries(t *testing.T) {
	ix := searchIndex(t, nil)
	for _, q := range []string{
		`"unbalanced`, `a*`, `col:umn`, `-neg`, `NEAR(a b)`, `(((`, `)`, `AND OR NOT`, `🦀 emoji ✨`, `'; DROP TABLE chunks; --`,
		``, `   `, `^start`, `a + b`, `{x y}`, `\`, strings.Repeat("word ", 2000), strings.Repeat("x", 10000),
	} {
		if _, err := ix.Search(context.Background(), q, index.SearchOptions{}); err != nil {
			t.Errorf("%.40q: %v", q, err)
		}
	}
}

func FuzzQuery(f *testing.F) {
	ix := searchIndex(f, nil)
	for _, s := range []string{`"a`, `x:y`, `NEAR(`, `a OR`, `*`, `OLLAMA_HOST`, `--flag`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if !utf8.ValidString(q) {
			return
		}
		if _, err := ix.Search(context.Background(), q, index.SearchOptions{}); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
	})
}

// A first vector search that is cancelled while the graph loads must not
// leave the index without vector search for the rest of the process (the
// chat keeps one Index open for hours).
func TestCancelledGraphLoadIsNotCached(t *testing.T) {
	emb := newFakeEmbedder("fake", 16)
	ix := searchIndex(t, emb)
	vec := ollamatest.Vector("autumn", 16)
	unitVector(vec)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.SearchVector(ctx, "autumn", vec, index.SearchOptions{Limit: 5}, 0); err == nil {
		t.Fatal("a cancelled search succeeded")
	}
	res, err := ix.SearchVector(context.Background(), "autumn", vec, index.SearchOptions{Limit: 5}, 0)
	if err != nil || res.Mode != "hybrid" || len(res.Hits) == 0 {
		t.Fatalf("search after a cancelled one: %v %+v", err, res)
	}
}

// An index whose embedder has stored no vector yet (a first build still
// scanning, or a folder of files with no text) answers keyword searches
// instead of failing on the query vector's dimension.
func TestSearchBeforeAnyVector(t *testing.T) {
	emb := newFakeEmbedder("fake", 16)
	src, dir := t.TempDir(), t.TempDir()
	build(t, dir, testOptions(emb, src)) // an empty folder
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.Search(context.Background(), "anything", index.SearchOptions{Embedder: emb})
	if err != nil || res.Mode != "lexical" {
		t.Fatalf("search before any vector: %v %+v", err, res)
	}
}

// A chunk that postings name but the chunks table no longer holds (a
// damaged row, or a race with a writer) is left out of the results; the
// others keep their own scores and ranks.
func TestSearchSkipsChunksThatAreGone(t *testing.T) {
	ix := searchIndex(t, nil)
	ctx := context.Background()
	before, err := ix.Search(ctx, "cancel the server named file in the autumn", index.SearchOptions{Limit: 5})
	if err != nil || len(before.Hits) < 2 {
		t.Fatalf("search: %v %+v", err, before)
	}
	gone := before.Hits[0]
	if _, err := ix.st.db.Exec(`DELETE FROM chunks WHERE id = ?`, gone.ChunkID); err != nil {
		t.Fatal(err)
	}
	after, err := ix.Search(ctx, "cancel the server named file in the autumn", index.SearchOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range after.Hits {
		if h.ChunkID == gone.ChunkID {
			t.Fatalf("the removed chunk came back: %+v", h)
		}
		if i+1 < len(before.Hits) && (h.ChunkID != before.Hits[i+1].ChunkID || h.LexicalRank != before.Hits[i+1].LexicalRank) {
			t.Errorf("hit %d is %d (lexical rank %d), want %d (rank %d)", i, h.ChunkID, h.LexicalRank, before.Hits[i+1].ChunkID, before.Hits[i+1].LexicalRank)
		}
	}
}

// Coverage says how much of a question the chunk holds: keyword search
// ranks a chunk first however little of the question matched, so routing
// needs this to tell an off-topic question from one the docs answer.
func TestSearchCoverage(t *testing.T) {
	ix := searchIndex(t, nil)
	for _, tc := range []struct {
		q, path string
		want    float64
	}{
		{"how do I cancel after a timeout?", "cancel.md", 1},
		{"what does --keepalive do", "config.md", 1},                     // the word is in the text as an identifier
		{"what is the capital of Peru in autumn", "weather.md", 1.0 / 3}, // capit, peru, autumn
	} {
		res, err := ix.Search(context.Background(), tc.q, index.SearchOptions{Limit: 3})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("%q: %v %v", tc.q, res.Hits, err)
		}
		if h := res.Hits[0]; h.Path != tc.path || h.Coverage != tc.want {
			t.Errorf("%q: top hit %s with coverage %.2f, want %s with %.2f", tc.q, h.Path, h.Coverage, tc.path, tc.want)
		}
	}
}
