package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/indextest"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/wordvec"
)

// The build pipeline's own rules, on the in-memory store: what BuildTo
// decides is the same whatever store it drives (the stores' part is
// checked by index/storetest).

// embedder is wordvec under another model name, or one that is down.
type embedder struct {
	wordvec.Embedder
	model string
	down  error
}

func (e embedder) Model() string { return e.model }

// SameModel is Ollama's naming rule, as the real embedder answers it: the
// builder asks the embedder whether a recorded name is its model.
func (e embedder) SameModel(m string) bool { return ollama.FullName(m) == ollama.FullName(e.model) }

func (e embedder) Check(ctx context.Context) (int, error) {
	if e.down != nil {
		return 0, e.down
	}
	return e.Embedder.Check(ctx)
}

func (e embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if e.down != nil {
		return nil, e.down
	}
	return e.Embedder.EmbedDocuments(ctx, texts)
}

func model(name string, dim int) embedder {
	return embedder{Embedder: wordvec.Embedder{Dim: dim}, model: name}
}

func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var docs = map[string]string{
	"a.md": "# A\n\nThe first file holds the word aardvark.\n",
	"b.md": "# B\n\nThe second file holds the word bandicoot.\n",
}

func options(emb index.Embedder, paths ...string) index.BuildOptions {
	o := index.BuildOptions{Name: "docs", Paths: paths, Chunk: ingest.ChunkOptions{Size: 300}, MaxFileSize: 1 << 20}
	if emb != nil {
		o.Embedder = emb
	}
	return o
}

// An index answers queries embedded by the model that embedded it: any
// other (or none) is refused with the fix, a dimension change too; the
// same model under its implied tag is no change; --rebuild switches.
func TestBuildRefusesAnotherEmbedder(t *testing.T) {
	ctx := context.Background()
	s := indextest.New()
	src := folder(t, docs)
	if _, err := index.BuildTo(ctx, s, options(model("nomic-embed-text", 16), src)); err != nil {
		t.Fatal(err)
	}
	if _, err := index.BuildTo(ctx, s, options(model("nomic-embed-text:latest", 16))); err != nil {
		t.Errorf("nomic-embed-text:latest is nomic-embed-text: %v", err)
	}
	for _, c := range []struct {
		emb  index.Embedder
		want []string
	}{
		{model("all-minilm", 16), []string{"nomic-embed-text", "all-minilm", "--rebuild"}},
		{nil, []string{"none (lexical only)", "--rebuild"}},
	} {
		if _, err := index.BuildTo(ctx, s, options(c.emb)); err == nil || !containsAll(err.Error(), c.want) {
			t.Errorf("a build with %v: %v, want it refused naming %q", c.emb, err, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "c.md"), []byte("# C\n\nNew.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := index.BuildTo(ctx, s, options(model("nomic-embed-text", 8))); err == nil || !containsAll(err.Error(), []string{"16-dimensional", "--rebuild"}) {
		t.Errorf("a dimension change: %v", err)
	}
	opt := options(model("all-minilm", 8))
	opt.Rebuild = true
	sum, err := index.BuildTo(ctx, s, opt)
	if err != nil || sum.FilesIndexed != 3 || sum.Embedder != "all-minilm" {
		t.Fatalf("a rebuild with the new model: %+v %v", sum, err)
	}
	r, err := s.Open(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m := r.EmbedderModel(ctx); m != "all-minilm" {
		t.Errorf("after the rebuild the index is embedded by %s", m)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestBuildNeedsSources(t *testing.T) {
	ctx := context.Background()
	s := indextest.New()
	if _, err := index.BuildTo(ctx, s, options(nil)); !errors.Is(err, index.ErrNoSources) || !strings.Contains(err.Error(), "lore index ./docs") {
		t.Errorf("a first build without folders: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := index.BuildTo(ctx, s, options(nil, missing)); !errors.Is(err, index.ErrBadSource) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a folder that is not there: %v", err)
	}
	if names, _ := s.Names(ctx); len(names) != 0 {
		t.Errorf("the refused builds left %v", names)
	}
}

// A folder named while the embedder is down does not join the index's
// sources: it was never indexed, and a later build must not think so.
func TestNewSourceWithEmbedderDownIsNotRemembered(t *testing.T) {
	ctx := context.Background()
	s := indextest.New()
	src, more := folder(t, docs), folder(t, map[string]string{"extra.md": "# Extra\n\nMore.\n"})
	if _, err := index.BuildTo(ctx, s, options(model("m", 16), src)); err != nil {
		t.Fatal(err)
	}
	down := model("m", 16)
	down.down = errors.New("could not connect to Ollama")
	if _, err := index.BuildTo(ctx, s, options(down, more)); !errors.Is(err, down.down) {
		t.Fatalf("a build whose embedder is down: %v", err)
	}
	rem, err := s.Remembered(ctx, "docs")
	if err != nil || !slices.Equal(rem.Sources, []string{src}) {
		t.Errorf("remembered %v (%v), want only %s", rem.Sources, err, src)
	}
}

// A store whose Publish finds chunks missing that it took (a node lost
// them) forgets their files and says index.ErrIncomplete: BuildTo writes
// them again in a second pass, and says so; a store that keeps losing
// them fails the build rather than loop.
func TestBuildWritesLostChunksAgain(t *testing.T) {
	ctx := context.Background()
	s := indextest.New()
	var mu sync.Mutex
	lost := 0
	s.Lose = func(path string, ord int) bool {
		mu.Lock()
		defer mu.Unlock()
		if path == "b.md" && lost == 0 {
			lost++
			return true
		}
		return false
	}
	var notices []string
	opt := options(model("m", 16), folder(t, docs))
	opt.Notice = func(n string) { notices = append(notices, n) }
	sum, err := index.BuildTo(ctx, s, opt)
	if err != nil {
		t.Fatalf("the build with a lost chunk: %v", err)
	}
	if lost != 1 || sum.TotalFiles != 2 || sum.TotalChunks != 2 {
		t.Errorf("after the second pass: %+v (%d chunks lost)", sum, lost)
	}
	if !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "b.md") && strings.Contains(n, "writing them again") }) {
		t.Errorf("notices %q do not say what was written again", notices)
	}
	r, err := s.Open(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if res, err := r.SearchVector(ctx, "bandicoot", nil, index.SearchOptions{}, 0); err != nil || len(res.Hits) != 1 || res.Hits[0].Path != "b.md" {
		t.Errorf("the lost chunk after the second pass: %+v %v", res.Hits, err)
	}

	always := indextest.New()
	always.Lose = func(path string, _ int) bool { return path == "b.md" }
	if _, err := index.BuildTo(ctx, always, options(model("m", 16), folder(t, docs))); !errors.Is(err, index.ErrIncomplete) {
		t.Errorf("a store that loses b.md every time: %v, want ErrIncomplete", err)
	}
}
