package rerank

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lore-cli/lore/internal/testmodels"
)

// FuzzModelDir feeds model folders with hostile tokenizer.json,
// special_tokens_map.json and config.json to the code that reads them (the
// folder check, the store's describe, the tokenizer every backend shares)
// and tokenises a pair with what loaded. A folder lore cannot use must be
// refused with ErrBadModel, never crash lore; one it accepts must keep
// pairs within the token budget.
func FuzzModelDir(f *testing.F) {
	// A model of its own: each fuzz worker is a process, and the shared
	// one is removed by TestMain, which a worker does not reach.
	src := f.TempDir()
	if err := testmodels.WriteCrossEncoder(src, testmodels.Tiny, nil); err != nil {
		f.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read("tokenizer.json"), read("special_tokens_map.json"), read("config.json"), "Call cancel to release resources after a timeout.")
	f.Fuzz(func(t *testing.T, tokenizer, special, config []byte, passage string) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"model.onnx": []byte("onnx"), "tokenizer.json": tokenizer,
			"special_tokens_map.json": special, "config.json": config} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := describe("fuzz", dir); err != nil && !errors.Is(err, ErrBadModel) {
			t.Fatalf("describe: an error that is not ErrBadModel: %v", err)
		}
		const budget = 64
		_, tok, err := openModel(Options{ModelDir: dir, MaxTokens: budget})
		if err != nil {
			if !errors.Is(err, ErrBadModel) {
				t.Fatalf("open: an error that is not ErrBadModel: %v", err)
			}
			return
		}
		q, docs, err := tok.pairs("how do I cancel a context?", []string{passage, passage + " [SEP] " + passage})
		if err != nil {
			return
		}
		if _, _, _, seq := tok.encode(q, docs); seq > budget {
			t.Fatalf("a pair of %d tokens is over the budget of %d", seq, budget)
		}
	})
}

// FuzzONNXGraph feeds hostile bytes to the reader that tells a model's
// variant from its graph without loading it (models list, the pure-Go
// backend's check): it must return, with an error or not, never crash.
func FuzzONNXGraph(f *testing.F) {
	for _, q := range []testmodels.Quant{testmodels.FP32, testmodels.QInt8, testmodels.FP16} {
		dir := f.TempDir()
		cfg := testmodels.Tiny
		cfg.Quant, cfg.Layers = q, 1
		if err := testmodels.WriteCrossEncoder(dir, cfg, nil); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("onnx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "model.onnx")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := inspectONNX(file); err != nil && !errors.Is(err, ErrBadModel) {
			t.Fatalf("an error that is not ErrBadModel: %v", err)
		}
	})
}
