//go:build cgo

package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"lore/internal/testmodels"
)

// realTokenizer is the WordPiece tokenizer.json of all-MiniLM-L6-v2, the
// vocabulary of the ms-marco MiniLM cross-encoders, as shipped in the Go
// module github.com/daulet/tokenizers (data only; its code needs Rust).
func realTokenizer(b *testing.B) []byte {
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/daulet/tokenizers@v1.24.0").Output()
	if err != nil {
		b.Skipf("cannot fetch the tokenizer module: %v", err)
	}
	var mod struct{ Dir string }
	json.Unmarshal(out, &mod)
	data, err := os.ReadFile(filepath.Join(mod.Dir, "test", "data", "all-minilm-l6-v2.json"))
	if err != nil {
		b.Skip(err)
	}
	return data
}

// benchPassages are 20 passages of ordinary English, each longer than 256
// tokens, so every pair is cut to exactly the budget.
func benchPassages() []string {
	words := strings.Fields(`the context package carries deadlines cancellation signals and other values across
		api boundaries between processes servers should create a context for every request and pass it down the
		call chain a function that receives a context should check whether it is done before long work`)
	out := make([]string, 20)
	for i := range out {
		var b strings.Builder
		for j := range 320 {
			b.WriteString(words[(i*7+j)%len(words)])
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func timeIt(runs int, fn func()) time.Duration {
	fn() // warm-up: sessions, shape compilation, caches
	var ds []time.Duration
	for range runs {
		start := time.Now()
		fn()
		ds = append(ds, time.Since(start))
	}
	return median(ds)
}

// BenchmarkRerank measures 1 query x 20 passages x 256 tokens on generated
// models of the real shapes: the onnxruntime backend against a bare
// onnxruntime_go session on the same tensors (lore's overhead), hugot's Go
// backend against ONNX Runtime, and each shape's cost on each backend.
func BenchmarkRerank(b *testing.B) {
	lib := ortLibraryPath()
	if lib == "" {
		b.Skip("no ONNX Runtime library: run `make ort`")
	}
	tok := realTokenizer(b)
	ctx := context.Background()
	query := "how do I cancel a context after a timeout"
	passages := benchPassages()
	type row struct {
		model, backend string
		n              int
		d              time.Duration
	}
	var rows []row
	for range b.N {
		for _, cfg := range []testmodels.Config{testmodels.MiniLML6, testmodels.MiniLML2, testmodels.TinyBERTL2} {
			dir := b.TempDir()
			if err := testmodels.WriteCrossEncoder(dir, cfg, tok); err != nil {
				b.Fatal(err)
			}
			for _, backend := range []string{"onnxruntime", "hugot"} {
				for _, n := range []int{20, 10} {
					if backend == "onnxruntime" && n == 10 {
						continue
					}
					r, err := New(Options{Backend: backend, ModelDir: dir, ORTLibrary: lib, BatchSize: n, MaxTokens: 256})
					if err != nil {
						b.Fatal(err)
					}
					runs := 5
					if backend == "hugot" && cfg.Hidden == 384 && cfg.Layers == 6 {
						runs = 2 // several seconds a run
					}
					d := timeIt(runs, func() {
						if _, err := r.Rerank(ctx, query, passages[:n]); err != nil {
							b.Fatal(err)
						}
					})
					rows = append(rows, row{cfg.Name, backend, n, d})
					if cfg.Name == testmodels.MiniLML6.Name && backend == "onnxruntime" {
						bare := bareSession(b, r.(*ortReranker), dir, query, passages)
						fmt.Printf("    MiniLM-L6 shape, 20x256: lore onnxruntime backend %.0f ms, bare onnxruntime_go session %.0f ms: %.3fx\n",
							ms(d), ms(bare), float64(d)/float64(bare))
						b.ReportMetric(float64(d)/float64(bare), "lore/bare-ort")
					}
					r.Close()
				}
			}
		}
	}
	var ortL6, hugotL6 time.Duration
	for _, r := range rows {
		fmt.Printf("    %-34s %-12s %2d passages x 256 tokens: %7.0f ms\n", r.model, r.backend, r.n, ms(r.d))
		if r.model == testmodels.MiniLML6.Name && r.n == 20 {
			if r.backend == "onnxruntime" {
				ortL6 = r.d
			} else {
				hugotL6 = r.d
			}
		}
	}
	fmt.Printf("    MiniLM-L6 shape, 20x256: hugot Go backend / onnxruntime = %.1fx\n", float64(hugotL6)/float64(ortL6))
	b.ReportMetric(float64(hugotL6)/float64(ortL6), "hugot/ort")
	b.ReportMetric(ms(ortL6), "ort-L6-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// bareSession times ONNX Runtime alone on the tensors lore would build:
// tokenised once up front, one session, one Run per call.
func bareSession(b *testing.B, r *ortReranker, dir, query string, passages []string) time.Duration {
	q, docs, err := r.tok.pairs(query, passages)
	if err != nil {
		b.Fatal(err)
	}
	ids, mask, types, seq := r.tok.encode(q, docs)
	sess, err := ort.NewDynamicAdvancedSession(filepath.Join(dir, "model.onnx"), []string{"input_ids", "attention_mask", "token_type_ids"}, []string{"logits"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Destroy()
	shape := ort.NewShape(int64(len(docs)), int64(seq))
	return timeIt(5, func() {
		var in []ort.Value
		for _, data := range [][]int64{ids, mask, types} {
			t, _ := ort.NewTensor(shape, data)
			defer t.Destroy()
			in = append(in, t)
		}
		out := []ort.Value{nil}
		if err := sess.Run(in, out); err != nil {
			b.Fatal(err)
		}
		out[0].Destroy()
	})
}
