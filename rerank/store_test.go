package rerank

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lore/internal/testmodels"
)

func copyModel(t *testing.T, dst string) {
	t.Helper()
	src := tinyModel(t)
	os.MkdirAll(dst, 0o755)
	for _, f := range []string{"model.onnx", "tokenizer.json", "special_tokens_map.json", "config.json"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStore(t *testing.T) {
	if raceEnabled {
		t.Skip("imports run hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	s := Store{Dir: filepath.Join(t.TempDir(), "models")}
	ctx := context.Background()
	if ms, err := s.List(); err != nil || len(ms) != 0 {
		t.Fatalf("empty store: %v %v", ms, err)
	}
	if _, err := s.Find(DefaultORTModel); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("find: %v", err)
	}

	src := filepath.Join(t.TempDir(), "usb", "ms-marco-MiniLM-L-6-v2")
	copyModel(t, src)
	m, err := s.Import(ctx, src, DefaultORTModel)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != DefaultORTModel || len(m.SHA256) != 64 || m.Bytes == 0 {
		t.Fatalf("installed %+v", m)
	}
	if dir, err := s.Find(DefaultORTModel); err != nil || dir != s.Path(DefaultORTModel) {
		t.Fatalf("find: %q %v", dir, err)
	}
	// Importing again replaces it in place; nothing is left beside it.
	if _, err := s.Import(ctx, src, DefaultORTModel); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Fatalf("store holds %d entries after a re-import", len(entries))
	}
	// A name is needed: from the folder when none is given.
	if m, err := s.Import(ctx, src, ""); err != nil || m.Name != "ms-marco-MiniLM-L-6-v2" {
		t.Fatalf("unnamed import: %+v %v", m, err)
	}
	if _, err := s.Import(ctx, src, "../evil"); err == nil {
		t.Fatal("a path as a model name was accepted")
	}
	ms, _ := s.List()
	if len(ms) != 2 {
		t.Fatalf("list: %+v", ms)
	}
}

func TestPull(t *testing.T) {
	if raceEnabled {
		t.Skip("imports run hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	s := Store{Dir: t.TempDir()}
	// A download lays the ONNX file out in onnx/, as Hugging Face repos do.
	dl := func(ctx context.Context, name, dest string) (string, error) {
		dir := filepath.Join(dest, strings.ReplaceAll(name, "/", "_"))
		copyModel(t, dir)
		os.MkdirAll(filepath.Join(dir, "onnx"), 0o755)
		return dir, os.Rename(filepath.Join(dir, "model.onnx"), filepath.Join(dir, "onnx", "model.onnx"))
	}
	m, err := s.Pull(context.Background(), DefaultHugotModel, dl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Path, "model.onnx")); err != nil {
		t.Fatal("the ONNX file was not moved beside the tokenizer")
	}
	// A failed download installs nothing.
	_, err = s.Pull(context.Background(), "org/other", func(context.Context, string, string) (string, error) {
		return "", errors.New("no route to huggingface.co")
	})
	if err == nil || !strings.Contains(err.Error(), "no route") {
		t.Fatalf("failed pull: %v", err)
	}
	if ms, _ := s.List(); len(ms) != 1 {
		t.Fatalf("store after a failed pull: %+v", ms)
	}
}

// An import loads the model and scores a pair before it installs it: a
// folder that looks right but cannot run is refused, naming the problem,
// and leaves nothing in the store (issue 11, item 6).
func TestStoreImportRefusesModelsThatCannotRun(t *testing.T) {
	if raceEnabled {
		t.Skip("runs hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	write := func(name, body string) func(string) {
		return func(dir string) { os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	}
	shaped := func(cfg testmodels.Config) func(string) {
		return func(dir string) { testmodels.WriteCrossEncoder(dir, cfg, nil) }
	}
	twoLabels, fewPositions := testmodels.Tiny, testmodels.Tiny
	twoLabels.Labels = 2
	fewPositions.MaxPos = 8
	for _, tt := range []struct {
		name  string
		spoil func(dir string)
		want  string
	}{
		{"garbage onnx", write("model.onnx", "this is not an ONNX model"), "model.onnx cannot be loaded"},
		{"truncated onnx", func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "model.onnx"))
			os.WriteFile(filepath.Join(dir, "model.onnx"), b[:len(b)/2], 0o644)
		}, "model.onnx cannot be loaded"},
		{"no tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, "tokenizer.json is missing"},
		{"tokenizer not JSON", write("tokenizer.json", "{"), "tokenizer.json is not valid JSON"},
		{"tokenizer without a vocabulary", write("tokenizer.json", `{"model":{"type":"WordPiece"}}`), "tokenizer.json"},
		// hugot's Go backend refuses the graph when it loads it; ONNX
		// Runtime loads it and the test pair shows the two values.
		{"two logits per pair", shaped(twoLabels), "model.onnx cannot be loaded|gives 2 values per pair, not one logit"},
		// config.json promises 512 positions, the graph has 8: short pairs
		// run, a passage of real length fails.
		{"fewer positions than config.json says", func(dir string) {
			shaped(fewPositions)(dir)
			write("config.json", `{"max_position_embeddings":512}`)(dir)
		}, "fails on a test pair"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Store{Dir: filepath.Join(t.TempDir(), "models")}
			src := filepath.Join(t.TempDir(), "model")
			copyModel(t, src)
			tt.spoil(src)
			_, err := s.Import(context.Background(), src, "org/broken")
			said := false
			for _, want := range strings.Split(tt.want, "|") {
				said = said || err != nil && strings.Contains(err.Error(), want)
			}
			if !errors.Is(err, ErrBadModel) || !said || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v; want one line with %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
				t.Fatalf("the store holds %v after a refused import", entries)
			}
		})
	}
}

// Remove takes a model out of the store in one rename, broken or not, and
// touches nothing outside the store whatever the name (issue 11, item 6).
func TestStoreRemove(t *testing.T) {
	root := t.TempDir()
	s := Store{Dir: filepath.Join(root, "models")}
	copyModel(t, s.Path("org/good"))
	os.MkdirAll(s.Path("org/broken"), 0o755) // no files: List does not show it
	os.MkdirAll(filepath.Join(root, "evil"), 0o755)

	for _, name := range []string{"org/good", "org/broken"} {
		if err := s.Remove(name); err != nil {
			t.Fatalf("remove %s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
		t.Fatalf("the store holds %v after removing everything", entries)
	}
	if err := s.Remove("org/good"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("removing it again: %v", err)
	}
	for _, name := range []string{"../evil", "..", "org/../../evil", "a/b/c", "/etc", `..\evil`, ""} {
		if err := s.Remove(name); !errors.Is(err, ErrBadName) {
			t.Errorf("remove %q: %v, want ErrBadName", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "evil")); err != nil {
		t.Fatal("a folder outside the store was removed")
	}
}
