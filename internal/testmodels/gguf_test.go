package testmodels

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

// TestGGUFDecodes reads the tiny model back with Ollama's own decoder: the
// keys Ollama needs and every tensor must be there. (That a real server
// loads and runs it is the end-to-end tests' job.)
func TestGGUFDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := WriteGGUF(path, TinyLlama); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatal(err)
	}
	kv := m.KV()
	if kv.Architecture() != "llama" || kv.Uint("rope.dimension_count") != 16 || kv.Uint("embedding_length") != 64 || len(kv.Strings("tokenizer.ggml.tokens")) != 3+256+len(tinyPieces) {
		t.Fatalf("kv: arch %s rope %d", kv.Architecture(), kv.Uint("rope.dimension_count"))
	}
	if n := len(m.Tensors().Items()); n != 3+9*TinyLlama.Blocks {
		t.Fatalf("%d tensors", n)
	}
	// Deterministic: the same seed writes the same bytes.
	again := filepath.Join(t.TempDir(), "again.gguf")
	WriteGGUF(again, TinyLlama)
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Fatal("two writes differ")
	}
}
