package index

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// constEmbedder is the fixed-cost embedder of the throughput benchmarks: it
// hands out pre-made random unit vectors, so the numbers measure lore and not
// a model.
type constEmbedder struct {
	dim  int
	pool [][]float32
	next int
}

func newConstEmbedder(dim int) *constEmbedder {
	rng := rand.New(rand.NewSource(7))
	e := &constEmbedder{dim: dim}
	for range 4096 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		normalize(v)
		e.pool = append(e.pool, v)
	}
	return e
}

func (e *constEmbedder) Model() string                      { return "bench" }
func (e *constEmbedder) Check(context.Context) (int, error) { return e.dim, nil }
func (e *constEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return e.pool[0], nil
}
func (e *constEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		// A fresh copy per chunk: vectors are distinct objects, as from a model.
		v := append([]float32(nil), e.pool[e.next%len(e.pool)]...)
		v[e.next%e.dim] += float32(e.next) * 1e-6
		normalize(v)
		out[i] = v
		e.next++
	}
	return out, nil
}

var benchWords = strings.Fields(`the server client request response context cancel timeout deadline index chunk
	vector graph search query token model embed stream config file folder path heading section code table
	install build test run flag option value error retry backoff lock commit rename delete update`)

// genCorpus writes files markdown files of sections sections each, every
// section about 900 bytes: one chunk each at the default budget.
func genCorpus(tb testing.TB, dir string, files, sections int) {
	tb.Helper()
	rng := rand.New(rand.NewSource(1))
	old := time.Now().Add(-time.Hour)
	for f := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", f)
		for s := range sections {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", f, s)
			for range 6 {
				for range 22 {
					b.WriteString(benchWords[rng.Intn(len(benchWords))])
					b.WriteByte(' ')
				}
				b.WriteString("OLLAMA_HOST.\n")
			}
			b.WriteString("\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("d%03d", f/100), fmt.Sprintf("f%05d.md", f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkIndex100k indexes 100k chunks with 768-dimensional vectors from
// a fixed-cost embedder: everything lore does except run a model.
func BenchmarkIndex100k(b *testing.B) {
	src := b.TempDir()
	genCorpus(b, src, 10000, 10)
	for range b.N {
		dir := b.TempDir()
		opt := BuildOptions{Name: "bench", Paths: []string{src}, Embedder: newConstEmbedder(768), EmbedBatchSize: 64,
			Chunk: ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
		start := time.Now()
		sum, err := Build(context.Background(), dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Chunks), "chunks")
		b.ReportMetric(float64(sum.Chunks)/time.Since(start).Seconds(), "chunks/s")
		b.ReportMetric(float64(dirSize(dir))/(1<<20), "MiB-on-disk")
		b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
	}
}

// BenchmarkGraphInsert100k measures HNSW inserts alone: 100k 768-d vectors.
func BenchmarkGraphInsert100k(b *testing.B) {
	e := newConstEmbedder(768)
	vecs, _ := e.EmbedDocuments(context.Background(), make([]string, 100000))
	b.ResetTimer()
	for range b.N {
		vg := newVectorGraph(768)
		start := time.Now()
		for i, v := range vecs {
			vg.add(int64(i+1), v)
		}
		b.ReportMetric(float64(len(vecs))/time.Since(start).Seconds(), "inserts/s")
	}
}

// BenchmarkIndexLexical100k is the same corpus with --embedder none.
func BenchmarkIndexLexical100k(b *testing.B) {
	src := b.TempDir()
	genCorpus(b, src, 10000, 10)
	for range b.N {
		dir := b.TempDir()
		start := time.Now()
		sum, err := Build(context.Background(), dir, BuildOptions{Name: "bench", Paths: []string{src},
			Chunk: ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Chunks)/time.Since(start).Seconds(), "chunks/s")
		b.ReportMetric(float64(dirSize(dir))/(1<<20), "MiB-on-disk")
	}
}

// BenchmarkNoopReindex10k refreshes an index of 10k unchanged files.
func BenchmarkNoopReindex10k(b *testing.B) {
	src, dir := b.TempDir(), b.TempDir()
	genCorpus(b, src, 10000, 1)
	opt := BuildOptions{Name: "bench", Paths: []string{src}, Chunk: ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
	if _, err := Build(context.Background(), dir, opt); err != nil {
		b.Fatal(err)
	}
	opt.Paths = nil
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		sum, err := Build(context.Background(), dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		if sum.FilesUnchanged != 10000 {
			b.Fatalf("%+v", sum)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/refresh")
	}
}
