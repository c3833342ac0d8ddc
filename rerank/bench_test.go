//go:build cgo

package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/lore-cli/lore/internal/testmodels"
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

// hostInt8 is the int8 export `lore models pull` picks on this CPU: uint8
// weights for AVX2, int8 for VNNI, AVX-512 and arm64.
func hostInt8() (testmodels.Quant, string) {
	ex := HostCPU().int8Exports()
	if len(ex) == 0 || strings.Contains(ex[0], "quint8") {
		return testmodels.QUInt8, "quint8"
	}
	return testmodels.QInt8, "qint8"
}

// agreement compares a variant's ranking with fp32's on the same inputs:
// how many of fp32's top 5 it also ranks top 5, whether the top passage
// is the same, the largest score difference, and fp32's score spread.
func agreement(fp32, other []Result) (top5 int, top1 bool, maxDiff, spread float64) {
	score := map[int]float32{}
	in5 := map[int]bool{}
	for i, r := range fp32 {
		score[r.Index] = r.Score
		in5[r.Index] = i < 5
	}
	for i, r := range other {
		if i < 5 && in5[r.Index] {
			top5++
		}
		maxDiff = max(maxDiff, math.Abs(float64(r.Score-score[r.Index])))
	}
	return top5, fp32[0].Index == other[0].Index, maxDiff, float64(fp32[0].Score - fp32[len(fp32)-1].Score)
}

// BenchmarkRerankInt8 measures fp32 against the int8 exports (qint8 and
// quint8, the same weights quantised as onnxruntime's dynamic
// quantisation does) of the MiniLM-L-6 and TinyBERT-L-2 shapes on ONNX
// Runtime, 20 passages x 256 tokens, the variants run in turn in each
// round so that the machine's noise falls on all of them; and how far the
// int8 scores are from fp32's on the same inputs.
func BenchmarkRerankInt8(b *testing.B) {
	lib := ortLibraryPath()
	if lib == "" {
		b.Skip("no ONNX Runtime library: run `make ort`")
	}
	tok := realTokenizer(b)
	ctx := context.Background()
	query := "how do I cancel a context after a timeout"
	passages := benchPassages()
	hostQuant, hostName := hostInt8()
	for range b.N {
		for _, shape := range []struct {
			cfg   testmodels.Config
			short string
		}{{testmodels.MiniLML6, "L6"}, {testmodels.TinyBERTL2, "TinyBERT"}} {
			quants := []testmodels.Quant{testmodels.FP32, testmodels.QInt8, testmodels.QUInt8}
			names := []string{"fp32", "qint8", "quint8"}
			rs := make([]Reranker, len(quants))
			for i, q := range quants {
				cfg := shape.cfg
				cfg.Quant = q
				dir := b.TempDir()
				if err := testmodels.WriteCrossEncoder(dir, cfg, tok); err != nil {
					b.Fatal(err)
				}
				r, err := New(Options{Backend: "onnxruntime", ModelDir: dir, ORTLibrary: lib, BatchSize: 20, MaxTokens: 256})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				rs[i] = r
			}
			results := make([][]Result, len(rs))
			times := make([][]time.Duration, len(rs))
			for round := range 6 {
				for i, r := range rs {
					start := time.Now()
					res, err := r.Rerank(ctx, query, passages)
					if err != nil {
						b.Fatal(err)
					}
					if round > 0 { // the first round warms up
						times[i] = append(times[i], time.Since(start))
					}
					results[i] = res
				}
			}
			fp32 := median(times[0])
			fmt.Printf("    %s shape, 20x256, ONNX Runtime: fp32 %.0f ms\n", shape.short, ms(fp32))
			b.ReportMetric(ms(fp32), shape.short+"-fp32-ms")
			for i := 1; i < len(rs); i++ {
				d := median(times[i])
				top5, top1, diff, spread := agreement(results[0], results[i])
				fmt.Printf("    %s shape, 20x256, ONNX Runtime: %s %.0f ms = %.2fx fp32; top 5 agree %d/5, top 1 same %v, max |score - fp32| %.3f (fp32 scores span %.3f)\n",
					shape.short, names[i], ms(d), float64(d)/float64(fp32), top5, top1, diff, spread)
				b.ReportMetric(float64(d)/float64(fp32), shape.short+"-"+names[i]+"/fp32")
				if quants[i] == hostQuant {
					b.ReportMetric(float64(d)/float64(fp32), shape.short+"-int8/fp32")
					b.ReportMetric(float64(top5), shape.short+"-int8-top5-agree")
					b.ReportMetric(diff, shape.short+"-int8-max-diff")
					b.ReportMetric(spread, shape.short+"-fp32-spread")
				}
			}
		}
	}
	fmt.Printf("    int8 is the %s export, the one lore models pull picks on this CPU\n", hostName)
}

// BenchmarkORTSessionOptions times ONNX Runtime sessions with other
// options than lore's (ONNX Runtime's defaults: intra-op threads = physical
// cores, all graph optimisations, the CPU arena, spinning threads) on the
// MiniLM-L-6 shape, fp32 and this CPU's int8, 20 x 256 tokens, the same
// tensors for all, each option in turn in every round.
func BenchmarkORTSessionOptions(b *testing.B) {
	lib := ortLibraryPath()
	if lib == "" {
		b.Skip("no ONNX Runtime library: run `make ort`")
	}
	if err := loadORT(lib); err != nil {
		b.Fatal(err)
	}
	tok := realTokenizer(b)
	hostQuant, hostName := hostInt8()
	options := []struct {
		name string
		set  func(*ort.SessionOptions) error
	}{
		{"default", func(*ort.SessionOptions) error { return nil }},
		{"threads-1", func(o *ort.SessionOptions) error { return o.SetIntraOpNumThreads(1) }},
		{"threads-2", func(o *ort.SessionOptions) error { return o.SetIntraOpNumThreads(2) }},
		{"opt-basic", func(o *ort.SessionOptions) error {
			return o.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableBasic)
		}},
		{"opt-extended", func(o *ort.SessionOptions) error {
			return o.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableExtended)
		}},
		{"no-arena", func(o *ort.SessionOptions) error { return o.SetCpuMemArena(false) }},
		{"no-spinning", func(o *ort.SessionOptions) error {
			return o.AddSessionConfigEntry("session.intra_op.allow_spinning", "0")
		}},
	}
	for range b.N {
		for _, v := range []struct {
			q    testmodels.Quant
			name string
		}{{testmodels.FP32, "fp32"}, {hostQuant, "int8"}} {
			cfg := testmodels.MiniLML6
			cfg.Quant = v.q
			dir := b.TempDir()
			if err := testmodels.WriteCrossEncoder(dir, cfg, tok); err != nil {
				b.Fatal(err)
			}
			ptok, err := newPairTokenizer(dir, 256, 512)
			if err != nil {
				b.Fatal(err)
			}
			q, docs, err := ptok.pairs("how do I cancel a context after a timeout", benchPassages())
			if err != nil {
				b.Fatal(err)
			}
			ids, mask, types, seq := ptok.encode(q, docs)
			shape := ort.NewShape(int64(len(docs)), int64(seq))
			sessions := make([]*ort.DynamicAdvancedSession, len(options))
			for i, o := range options {
				so, err := ort.NewSessionOptions()
				if err != nil {
					b.Fatal(err)
				}
				if err := o.set(so); err != nil {
					b.Fatal(err)
				}
				sessions[i], err = ort.NewDynamicAdvancedSession(filepath.Join(dir, "model.onnx"), []string{"input_ids", "attention_mask", "token_type_ids"}, []string{"logits"}, so)
				so.Destroy()
				if err != nil {
					b.Fatal(err)
				}
				defer sessions[i].Destroy()
			}
			runOnce := func(sess *ort.DynamicAdvancedSession) time.Duration {
				start := time.Now()
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
				return time.Since(start)
			}
			times := make([][]time.Duration, len(options))
			for round := range 5 {
				for i, s := range sessions {
					if d := runOnce(s); round > 0 {
						times[i] = append(times[i], d)
					}
				}
			}
			base := median(times[0])
			for i, o := range options {
				d := median(times[i])
				fmt.Printf("    MiniLM-L6 shape %s, 20x256, session option %-12s %6.0f ms = %.2fx default\n", v.name, o.name, ms(d), float64(d)/float64(base))
				if i > 0 {
					b.ReportMetric(float64(d)/float64(base), v.name+"-"+o.name+"/default")
				}
			}
		}
	}
	fmt.Printf("    int8 is the %s export; %d logical CPUs here, ONNX Runtime defaults to one intra-op thread per physical core\n", hostName, runtime.NumCPU())
}

// variedPassages are 20 passages of 20 to 320 words, the spread of
// lengths real chunks have, shuffled.
func variedPassages() []string {
	long := benchPassages()
	out := make([]string, len(long))
	for i := range out {
		words := strings.Fields(long[i])
		n := 20 + (i*7%20)*15
		out[i] = strings.Join(words[:n], " ")
	}
	return out
}

// BenchmarkRerankBatching measures what sorting pairs by length and
// splitting them into batches that pad less save: MiniLM-L-6 shape, ONNX
// Runtime, 20 passages of 20-320 words cut to 256 tokens, and 20 of 256
// tokens, where there is nothing to save.
func BenchmarkRerankBatching(b *testing.B) {
	lib := ortLibraryPath()
	if lib == "" {
		b.Skip("no ONNX Runtime library: run `make ort`")
	}
	tok := realTokenizer(b)
	dir := b.TempDir()
	if err := testmodels.WriteCrossEncoder(dir, testmodels.MiniLML6, tok); err != nil {
		b.Fatal(err)
	}
	defer func() { batching = batchAdaptive }()
	ctx := context.Background()
	type setup struct {
		name    string
		mode    batchMode
		batch   int
		uniform bool // 20 passages of 256 tokens
	}
	setups := []setup{
		{"one batch in input order", batchFixed, 20, false},
		{"sorted, batches of 5", batchSorted, 5, false},
		{"sorted, batches of 10", batchSorted, 10, false},
		{"sorted, split where it pads less", batchAdaptive, 20, false},
		{"one batch in input order", batchFixed, 20, true},
		{"sorted, batches of 5", batchSorted, 5, true},
		{"sorted, split where it pads less", batchAdaptive, 20, true},
	}
	for range b.N {
		r, err := New(Options{Backend: "onnxruntime", ModelDir: dir, ORTLibrary: lib, BatchSize: 20, MaxTokens: 256})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		times := make([][]time.Duration, len(setups))
		for round := range 6 {
			for i, s := range setups {
				batching = s.mode
				r.(*ortReranker).opt.BatchSize = s.batch
				in := variedPassages()
				if s.uniform {
					in = benchPassages()
				}
				start := time.Now()
				if _, err := r.Rerank(ctx, "how do I cancel a context after a timeout", in); err != nil {
					b.Fatal(err)
				}
				if round > 0 {
					times[i] = append(times[i], time.Since(start))
				}
			}
		}
		var base time.Duration
		for i, s := range setups {
			d := median(times[i])
			if s.mode == batchFixed {
				base = d
			}
			what, key := "20 passages of 20-320 words", "varied"
			if s.uniform {
				what, key = "20 passages of 256 tokens", "uniform"
			}
			fmt.Printf("    MiniLM-L6 shape, %s: %-34s %6.0f ms = %.2fx one batch\n", what, s.name, ms(d), float64(d)/float64(base))
			switch {
			case s.mode == batchAdaptive:
				b.ReportMetric(float64(d)/float64(base), key+"-split/one-batch")
			case s.mode == batchSorted:
				b.ReportMetric(float64(d)/float64(base), fmt.Sprintf("%s-batch%d/one-batch", key, s.batch))
			}
		}
	}
}
