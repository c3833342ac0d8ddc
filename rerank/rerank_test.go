package rerank

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/lore-cli/lore/internal/testmodels"
)

var (
	tinyOnce sync.Once
	tinyDir  string
	tinyErr  error
)

// tinyModel writes the tiny generated cross-encoder once per test run.
func tinyModel(t testing.TB) string {
	t.Helper()
	tinyOnce.Do(func() {
		tinyDir, tinyErr = os.MkdirTemp("", "lore-tiny-model-")
		if tinyErr == nil {
			tinyErr = testmodels.WriteCrossEncoder(tinyDir, testmodels.Tiny, nil)
		}
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyDir != "" {
		os.RemoveAll(tinyDir)
	}
	os.Exit(code)
}

// ortLibraryPath is the ONNX Runtime library for tests: `make ort`
// installs it and the Makefile exports its path. Empty when absent, or
// in a build without cgo.
func ortLibraryPath() string {
	if !cgoEnabled {
		return ""
	}
	lib := os.Getenv("LORE_TEST_ORT_LIB")
	if lib == "" {
		lib, _ = filepath.Abs("../.cache/ort/libonnxruntime.so.1")
	}
	if _, err := os.Stat(lib); err != nil {
		return ""
	}
	return lib
}

var passages = []string{
	"A context carries a deadline, a cancellation signal, and other values across API boundaries.",
	"It rains a lot in the autumn.",
	"Set OLLAMA_HOST to the address of the server.",
	"Call the cancel function to release resources after a timeout.",
	"",
	"The weather is nice.",
	strings.Repeat("tokens run long in this passage ", 400),
}

const query = "how do I cancel a context after a timeout?"

func testBackends(t *testing.T) map[string]Options {
	dir := tinyModel(t)
	out := map[string]Options{}
	if !raceEnabled {
		out["hugot"] = Options{Backend: "hugot", ModelDir: dir, BatchSize: 4, MaxTokens: 128}
	}
	if lib := ortLibraryPath(); lib != "" {
		out["onnxruntime"] = Options{Backend: "onnxruntime", ModelDir: dir, BatchSize: 4, MaxTokens: 128, ORTLibrary: lib}
	}
	return out
}

func TestRerankPlumbing(t *testing.T) {
	for name, opt := range testBackends(t) {
		t.Run(name, func(t *testing.T) {
			r, err := New(opt)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Backend() != name {
				t.Fatalf("backend %q", r.Backend())
			}
			res, err := r.Rerank(context.Background(), query, passages)
			if err != nil {
				t.Fatal(err)
			}
			// A permutation of the input indices, best first.
			var idx []int
			for i, x := range res {
				idx = append(idx, x.Index)
				if i > 0 && res[i-1].Score < x.Score {
					t.Fatalf("not sorted: %v", res)
				}
				if math.IsNaN(float64(x.Score)) {
					t.Fatalf("NaN score: %v", res)
				}
			}
			sort.Ints(idx)
			for i := range idx {
				if idx[i] != i {
					t.Fatalf("indices %v are not a permutation of 0..%d", idx, len(passages)-1)
				}
			}
			// Raw logits: a random model gives some negative and some
			// positive; a sigmoid would give (0, 1) only.
			if res[0].Score <= 1 && res[len(res)-1].Score >= 0 {
				t.Errorf("scores look like probabilities, not logits: %v", res)
			}
			// Batch size does not change scores.
			one := opt
			one.BatchSize = 1
			r1, err := New(one)
			if err != nil {
				t.Fatal(err)
			}
			defer r1.Close()
			res1, err := r1.Rerank(context.Background(), query, passages)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, res, res1, 1e-4)
			// A long passage is cut to the token budget: scoring it equals
			// scoring its first tokens.
			long := passages[len(passages)-1]
			a, _ := r.Rerank(context.Background(), query, []string{long})
			b, _ := r.Rerank(context.Background(), query, []string{long + strings.Repeat(" more words at the end", 100)})
			compare(t, a, b, 1e-4)
		})
	}
}

func TestBackendsAgree(t *testing.T) {
	bs := testBackends(t)
	if len(bs) < 2 {
		t.Skip("needs both backends: ONNX Runtime (`make ort`) and hugot (not under -race)")
	}
	var got [][]Result
	for _, name := range []string{"hugot", "onnxruntime"} {
		r, err := New(bs[name])
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Rerank(context.Background(), query, passages)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}
	compare(t, got[0], got[1], 1e-4)
}

// compare checks that two result lists give each passage the same score.
func compare(t *testing.T, a, b []Result, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d results vs %d", len(a), len(b))
	}
	score := map[int]float32{}
	for _, r := range a {
		score[r.Index] = r.Score
	}
	for _, r := range b {
		if d := math.Abs(float64(score[r.Index] - r.Score)); d > tol {
			t.Fatalf("passage %d: %v vs %v (diff %g)", r.Index, score[r.Index], r.Score, d)
		}
	}
}

func TestNoneKeepsOrder(t *testing.T) {
	r, _ := New(Options{Backend: "none"})
	res, _ := r.Rerank(context.Background(), "q", []string{"a", "b", "c"})
	for i, x := range res {
		if x.Index != i || x.Score != 0 {
			t.Fatalf("%v", res)
		}
	}
}

func TestBadModelDirs(t *testing.T) {
	src := tinyModel(t)
	for _, missing := range []string{"model.onnx", "tokenizer.json", "special_tokens_map.json", "config.json"} {
		t.Run(missing, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"model.onnx", "tokenizer.json", "special_tokens_map.json", "config.json"} {
				if f != missing {
					b, _ := os.ReadFile(filepath.Join(src, f))
					os.WriteFile(filepath.Join(dir, f), b, 0o644)
				}
			}
			_, err := CheckModelDir(dir)
			want := missing
			if missing == "model.onnx" {
				want = "no *.onnx"
			}
			if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v", err)
			}
		})
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "special_tokens_map.json"), []byte(`{"cls_token":"[CLS]"}`), 0o644)
	for _, f := range []string{"model.onnx", "tokenizer.json", "config.json"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	if _, err := CheckModelDir(dir); err == nil || !strings.Contains(err.Error(), "sep_token") {
		t.Fatalf("no sep_token: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "other.onnx"), []byte("x"), 0o644)
	if _, err := CheckModelDir(dir); err == nil || !strings.Contains(err.Error(), "2 *.onnx") {
		t.Fatalf("two models: %v", err)
	}
}

func TestORTLibraryErrors(t *testing.T) {
	_, err := New(Options{Backend: "onnxruntime", ModelDir: tinyModel(t), ORTLibrary: "/nonexistent/libonnxruntime.so"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
	if _, err := New(Options{Backend: "bogus"}); err == nil || !strings.Contains(err.Error(), "auto, hugot, onnxruntime, none") {
		t.Fatalf("got %v", err)
	}
}

// Quantised and fp16 exports are recognised from their graphs; ONNX
// Runtime runs them all, close to the fp32 scores of the same weights;
// the pure-Go backend refuses them in one line that says what to do,
// instead of crashing in GoMLX (issue 13).
func TestVariants(t *testing.T) {
	lib := ortLibraryPath()
	var fp32 []Result
	for _, tt := range []struct {
		name  string
		quant testmodels.Quant
		want  string
		say   string
	}{
		{"fp32", testmodels.FP32, VariantFP32, ""},
		{"qint8", testmodels.QInt8, VariantInt8, "int8-quantised (MatMulInteger)"},
		{"quint8", testmodels.QUInt8, VariantInt8, "int8-quantised (MatMulInteger)"},
		{"fp16", testmodels.FP16, VariantFP16, "is fp16"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testmodels.Tiny
			cfg.Quant = tt.quant
			dir := t.TempDir()
			if err := testmodels.WriteCrossEncoder(dir, cfg, nil); err != nil {
				t.Fatal(err)
			}
			facts, err := inspectONNX(filepath.Join(dir, "model.onnx"))
			if err != nil || facts.variant() != tt.want {
				t.Fatalf("read as %q (%+v, %v), want %q", facts.variant(), facts, err, tt.want)
			}
			if !raceEnabled {
				r, err := New(Options{Backend: "hugot", ModelDir: dir, ModelName: "org/m"})
				switch {
				case tt.say == "" && err != nil:
					t.Fatalf("pure Go on fp32: %v", err)
				case tt.say == "":
					r.Close()
				case !errors.Is(err, ErrNeedsORT) || !strings.Contains(err.Error(), tt.say) ||
					!strings.Contains(err.Error(), "lore models pull org/m --variant fp32") || strings.Contains(err.Error(), "\n"):
					t.Fatalf("pure Go on %s: %v", tt.want, err)
				}
			}
			if lib == "" {
				return
			}
			r, err := New(Options{Backend: "onnxruntime", ModelDir: dir, ORTLibrary: lib, BatchSize: 8, MaxTokens: 128})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			res, err := r.Rerank(context.Background(), query, passages)
			if err != nil || len(res) != len(passages) {
				t.Fatalf("onnxruntime on %s: %v %v", tt.want, res, err)
			}
			if tt.quant == testmodels.FP32 {
				fp32 = res
				return
			}
			// The tiny model's scores span 0.5; int8 moves them by up to
			// 0.2 (qint8 on AVX2, whose u8s8 kernel saturates), 0.1 for
			// quint8. A wrong scale or zero point would move them by more.
			score := map[int]float32{}
			for _, r := range fp32 {
				score[r.Index] = r.Score
			}
			for _, r := range res {
				if d := math.Abs(float64(r.Score - score[r.Index])); d > 0.3 {
					t.Errorf("passage %d: %s scores %.3f, fp32 %.3f", r.Index, tt.want, r.Score, score[r.Index])
				}
			}
		})
	}
}

// Passages are tokenised only as far as the budget reaches; the tokens
// must be exactly those of the whole text, cut (what both backends score).
func TestTokenizePrefixIsExact(t *testing.T) {
	tok, err := newPairTokenizer(tinyModel(t), 512, 0)
	if err != nil {
		t.Fatal(err)
	}
	texts := append([]string{
		"context cancel timeout",
		"  leading and\ttrailing\nspace   ",
		"punctuation, splits: words (into) more-tokens!",
		"\u200b\u200b \u200b word after invisible words \u200b and more words",
		"\x00\x01 \x02 control words then real ones",
		"déjà vu — unicode résumé naïve",
		strings.Repeat("unknownwordxyz ", 50),
	}, passages...)
	for _, text := range texts {
		full, err := tok.tokenize(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 2, 3, 5, 7, 8, 13, 40, 100, 253, len(full.ids) - 1, len(full.ids), len(full.ids) + 1} {
			got, err := tok.tokenizePrefix(text, n)
			want := full.prefix(n)
			// The tokenizer's offsets drift after non-ASCII characters
			// in a whole text (cutting first drifts less); the ids, what
			// ONNX Runtime scores, must be the same.
			ascii := strings.IndexFunc(text, func(r rune) bool { return r > 127 }) < 0
			sameText := got.text == want.text || !ascii
			if err != nil || !sameText || !slices.Equal(got.ids, want.ids) {
				t.Fatalf("%q cut to %d: got %q %v, want %q %v (%v)", text, n, got.text, got.ids, want.text, want.ids, err)
			}
		}
	}
}

// Pairs sorted by length are cut into batches that pad less: like lengths
// stay in one batch, a few long pairs do not make many short ones wait at
// their length, and no batch is over the batch size.
func TestSplitBatches(t *testing.T) {
	uniform := slices.Repeat([]int{256}, 20)
	varied := []int{30, 32, 35, 40, 45, 50, 60, 70, 80, 90, 100, 120, 140, 160, 180, 200, 220, 240, 256, 256}
	for _, tt := range []struct {
		name    string
		lens    []int
		size    int
		batches int
	}{
		{"uniform: one batch", uniform, 20, 1},
		{"uniform, batch size 8", uniform, 8, 3},
		{"none", nil, 20, 0},
		{"one", []int{50}, 20, 1},
	} {
		if got := splitBatches(tt.lens, tt.size); len(got) != tt.batches || len(got) > 0 && got[len(got)-1] != len(tt.lens) {
			t.Errorf("%s: %v, want %d batches", tt.name, got, tt.batches)
		}
	}
	ends := splitBatches(varied, 20)
	slots, lo := 0, 0
	for _, hi := range ends {
		if hi-lo > 20 || hi <= lo {
			t.Fatalf("bad batches %v", ends)
		}
		slots += (hi - lo) * varied[hi-1]
		lo = hi
	}
	if len(ends) < 2 || lo != len(varied) || slots+len(ends)*batchCost >= len(varied)*256+batchCost {
		t.Fatalf("varied lengths: batches %v run %d slots, one batch %d", ends, slots, len(varied)*256)
	}
	// Results come back in score order with their input positions.
	r, err := New(Options{Backend: "onnxruntime", ModelDir: tinyModel(t), ORTLibrary: ortLibraryPath(), BatchSize: 3, MaxTokens: 128})
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	split, err := r.Rerank(context.Background(), query, passages)
	if err != nil {
		t.Fatal(err)
	}
	batching = batchFixed
	defer func() { batching = batchAdaptive }()
	fixed, _ := r.Rerank(context.Background(), query, passages)
	for i := range fixed {
		if fixed[i].Index != split[i].Index || math.Abs(float64(fixed[i].Score-split[i].Score)) > 1e-4 {
			t.Fatalf("split batches %v, input order %v", split, fixed)
		}
	}
}
