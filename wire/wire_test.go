package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/session"
)

// Fixed values behind the golden files: every field set, pointers both
// nil and not, a web source beside document ones, and characters that
// encoding/json escapes (<, >, &, a newline).

func f32(v float32) *float32 { return &v }

func fixedTime() *time.Time {
	t := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	return &t
}

func fixedSearch() app.SearchResult {
	return app.SearchResult{
		Ranking: agent.Ranking{
			Retrieval: agent.Retrieval{
				Mode:    "hybrid",
				Timings: map[string]time.Duration{"embed": 12345678 * time.Nanosecond, "vector": 1500 * time.Microsecond, "lexical": 2 * time.Millisecond, "fuse": 999 * time.Nanosecond},
			},
			Passages: []agent.Passage{
				{Root: "/home/ann/docs", Path: "go/context.md", Name: "docs/go/context.md", Start: 3, End: 17, Heading: "Context > Timeouts",
					Text: "Use WithTimeout:\n\n```go\nctx, cancel := context.WithTimeout(ctx, d) // <&>\n```", Score: 0.0327868852459, LexicalRank: 1, VectorRank: 2, Rerank: f32(4.25), Coverage: 1},
				{Root: "/home/ann/docs", Path: "env.md", Start: 1, End: 3, Heading: "", Text: "Set OLLAMA_HOST.", Score: 0.016129032258, LexicalRank: 0, VectorRank: 1, Rerank: f32(-1.5)},
				{Root: "/srv/notes", Path: "rain.txt", Start: 10, End: 10, Text: "It rains \"a lot\".", Score: 0.015873015873, LexicalRank: 3},
			},
			Rerank: 41250 * time.Microsecond,
		},
		Reranker: "onnxruntime ms-marco-MiniLM-L6-v2",
		Total:    57*time.Millisecond + 321*time.Microsecond,
	}
}

func fixedAnswer() agent.Result {
	return agent.Result{
		Question:   "and with a deadline <now>?",
		Standalone: "how do I cancel a context with a deadline?",
		Route:      agent.RouteWeb,
		Mode:       agent.Online,
		Model:      "llama3.2:3b",
		BestScore:  f32(3.5),
		Sources: []agent.Source{
			{N: 1, Root: "/home/ann/docs", Path: "go/context.md", Name: "docs/go/context.md", Start: 3, End: 17, Heading: "Context > Timeouts", Text: "Use WithDeadline.", Score: 0.0327868852459, Rerank: f32(3.5), LexicalRank: 1, Cited: true},
			{N: 2, Root: "/home/ann/docs", Path: "env.md", Start: 1, End: 3, Text: "Set OLLAMA_HOST.", Score: 0.016129032258},
			{N: 3, URL: "https://pkg.go.dev/context#WithDeadline", Title: "context package - Go & more", Text: "WithDeadline returns...", Score: 0.87, Cited: true},
			{N: 4, URL: "https://example.com/untitled", Score: 0.5},
		},
		Answer:       "Use `context.WithDeadline` [1][3]; see also [7].\n\nCall cancel.",
		Invalid:      []int{7},
		Cuts:         []agent.Cut{{Part: "passages", Kept: 3, Of: 5, Note: "2 lowest-ranked passages left out to fit num_ctx 4096"}, {Part: "context", Kept: 1000, Of: 25000, Note: "context cut"}},
		Timings:      map[agent.Stage]time.Duration{agent.StageCondense: 210 * time.Millisecond, agent.StageRetrieve: 35 * time.Millisecond, agent.StageRerank: 40 * time.Millisecond, agent.StageWeb: 812 * time.Millisecond, agent.StageGenerate: 2*time.Second + 5*time.Microsecond},
		FirstToken:   1234567 * time.Microsecond,
		Total:        3*time.Second + 100*time.Millisecond,
		PromptTokens: 1820,
		AnswerTokens: 96,
	}
}

func fixedIndexes() []index.Info {
	return []index.Info{
		{Name: "default", Path: "/home/ann/.local/share/lore/indexes/default", Chunks: 581, SizeBytes: 12345678, Embedder: "nomic-embed-text", BuiltAt: fixedTime(), Built: true},
		{Name: "go", Path: "/home/ann/.local/share/lore/indexes/go", Chunks: 0, SizeBytes: 4096, Embedder: "none", BuiltAt: fixedTime(), Built: true, Damaged: "database disk image is malformed"},
		{Name: "new", Path: "/home/ann/.local/share/lore/indexes/new", SizeBytes: 0},
	}
}

func fixedStatus() index.Status {
	return index.Status{
		Index: "default", Path: "/home/ann/.local/share/lore/indexes/default/gen-3", Sources: []string{"/home/ann/docs", "/srv/notes"},
		Documents: 42, Chunks: 581, Vectors: 581, SizeBytes: 12345678, Embedder: "nomic-embed-text", Dimension: 768, Chunker: "v7",
		BuiltAt:         fixedTime(),
		Skipped:         []index.SkippedFile{{Path: "/home/ann/docs/big.bin", Reason: "binary"}},
		Changed:         []index.Change{{Path: "/home/ann/docs/env.md", Change: "modified"}, {Path: "/srv/notes/new.txt", Change: "new"}},
		ChunksByKind:    map[string]int{ingest.KindProse: 500, ingest.KindCode: 70, ingest.KindTable: 11},
		DocumentsByKind: map[string]int{"markdown": 40, "text": 2},
	}
}

// indented is v as the CLI prints it (json.Encoder, two-space indent).
// The golden files were first written by cmd/lore's own writers, before
// the shapes moved here: equal files mean unchanged --json output.
func indented(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// strict decodes s into a T refusing unknown fields, and checks that it
// encodes back to s: the type holds the whole shape.
func strict[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if again := indented(t, v); again != s {
		t.Errorf("decoded and encoded again:\n%s\nwant:\n%s", again, s)
	}
	return v
}

func TestSearchJSON(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		out := indented(t, NewSearch("cancel a context <after> a timeout & more", "default", fixedSearch()))
		golden.RequireEqual(t, out)
		strict[Search](t, out)
	})
	t.Run("empty", func(t *testing.T) {
		out := indented(t, NewSearch("nothing", "go", app.SearchResult{Ranking: agent.Ranking{Retrieval: agent.Retrieval{Mode: "lexical"}}, Reranker: "none"}))
		golden.RequireEqual(t, out)
		strict[Search](t, out)
	})
}

func TestAnswerJSON(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		a := NewAnswer(fixedAnswer(), "3f9a1c0e2b7d")
		a.Sync = NewSync(fixedFreshness())
		out := indented(t, a)
		golden.RequireEqual(t, out)
		strict[Answer](t, out)
	})
	t.Run("empty", func(t *testing.T) {
		out := indented(t, NewAnswer(agent.Result{Question: "q", Route: agent.RouteNone, Mode: agent.Offline, Answer: agent.NotInDocs}, ""))
		golden.RequireEqual(t, out)
		strict[Answer](t, out)
	})
}

func TestIndexJSON(t *testing.T) {
	t.Run("list", func(t *testing.T) {
		out := indented(t, NewIndexList(fixedIndexes()))
		golden.RequireEqual(t, out)
		strict[[]IndexInfo](t, out)
	})
	t.Run("list_empty", func(t *testing.T) {
		golden.RequireEqual(t, indented(t, NewIndexList(nil)))
	})
	t.Run("status", func(t *testing.T) {
		st := NewIndexStatus(fixedStatus())
		st.Sync = NewSync(fixedFreshness())
		out := indented(t, st)
		golden.RequireEqual(t, out)
		strict[IndexStatus](t, out)
	})
	t.Run("status_damaged", func(t *testing.T) {
		s := fixedStatus()
		s = index.Status{Index: s.Index, Path: s.Path, Sources: s.Sources, Skipped: []index.SkippedFile{}, Changed: []index.Change{},
			ChunksByKind: map[string]int{}, DocumentsByKind: map[string]int{}, Damaged: "file is not a database"}
		golden.RequireEqual(t, indented(t, NewIndexStatus(s)))
	})
}

func fixedFreshness() index.Freshness {
	return index.Freshness{Watcher: "ann-laptop pid 4242", State: index.WatchVectorsPending, Since: fixedTime().Add(-time.Hour),
		SyncedAt: fixedTime().In(time.FixedZone("CET", 3600)), Pending: 3, VectorsPending: 120, Polling: "inotify watches exhausted",
		Missing: []string{"/media/usb/notes"}, Error: "embed: Ollama is not running"}
}

// TestSyncJSON: the one shape of an index's freshness, watched (every
// field, times in UTC) and not (watching false, state stopped, no times).
func TestSyncJSON(t *testing.T) {
	t.Run("watched", func(t *testing.T) {
		out := indented(t, NewSync(fixedFreshness()))
		golden.RequireEqual(t, out)
		strict[Sync](t, out)
	})
	t.Run("stopped", func(t *testing.T) {
		for _, f := range []index.Freshness{{}, {State: index.WatchStopped}} {
			out := indented(t, NewSync(f))
			golden.RequireEqual(t, out)
			strict[Sync](t, out)
		}
	})
}

func TestErrorJSON(t *testing.T) {
	out := indented(t, NewError(NotFound, "index_not_found", `no such index "docs"`))
	golden.RequireEqual(t, out)
	strict[Error](t, out)
}

func TestErrorFrom(t *testing.T) {
	for _, c := range []struct {
		err    error
		typ    ErrorType
		code   string
		status int
	}{
		{fmt.Errorf("open: %w", index.ErrNoIndex), NotFound, "index_not_found", http.StatusNotFound},
		{fmt.Errorf("%w %q", session.ErrNotFound, "3f9a"), NotFound, "session_not_found", http.StatusNotFound},
		{&index.DamagedError{Index: "go", Reason: "malformed"}, ServerError, "index_damaged", http.StatusInternalServerError},
		{fmt.Errorf("embed: %w", context.DeadlineExceeded), ServerError, "timeout", http.StatusInternalServerError},
		{context.Canceled, ServerError, "cancelled", http.StatusInternalServerError},
		{fmt.Errorf("chat: %w", app.ErrBusy), RateLimit, "busy", http.StatusTooManyRequests},
		{errors.New("boom"), ServerError, "internal", http.StatusInternalServerError},
	} {
		e := ErrorFrom(c.err)
		if e.Error.Type != c.typ || e.Error.Code != c.code || e.Error.Message != c.err.Error() || e.Error.Type.HTTPStatus() != c.status {
			t.Errorf("%v: %+v, status %d", c.err, e, e.Error.Type.HTTPStatus())
		}
	}
	for typ, status := range map[ErrorType]int{InvalidRequest: 400, Authentication: 401, NotFound: 404, RateLimit: 429, ServerError: 500} {
		if got := typ.HTTPStatus(); got != status {
			t.Errorf("%s: status %d, want %d", typ, got, status)
		}
	}
}

func TestCitation(t *testing.T) {
	r := fixedAnswer()
	want := []string{
		"[1] docs/go/context.md:3-17 > Context > Timeouts", // the unambiguous name, not the bare path
		"[2] env.md:1-3",
		"[3] context package - Go & more — https://pkg.go.dev/context#WithDeadline",
		"[4] https://example.com/untitled",
	}
	for i, s := range NewAnswer(r, "").Sources {
		if got := s.Citation(); got != want[i] {
			t.Errorf("source %d: %q, want %q", i+1, got, want[i])
		}
		// The line the model saw its source under, the same label.
		if label := r.Sources[i].Label(); !strings.HasSuffix(want[i], "] "+label) {
			t.Errorf("source %d: agent label %q", i+1, label)
		}
	}
	// A source decoded from JSON has no name: it shows its path.
	s := strict[Source](t, indented(t, NewSource(r.Sources[0])))
	if got := s.Citation(); got != "[1] go/context.md:3-17 > Context > Timeouts" {
		t.Errorf("decoded source: %q", got)
	}
}
