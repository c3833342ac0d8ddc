package local

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/benchdata"
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
		e.pool = append(e.pool, unitVector(v))
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
		unitVector(v)
		out[i] = v
		e.next++
	}
	return out, nil
}

func genCorpus(tb testing.TB, dir string, files, sections int) {
	tb.Helper()
	if err := benchdata.WriteCorpus(dir, files, sections); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkIndex100k indexes 100k chunks with 768-dimensional vectors from
// a fixed-cost embedder: everything lore does except run a model.
func BenchmarkIndex100k(b *testing.B) {
	src := b.TempDir()
	genCorpus(b, src, 10000, 10)
	for range b.N {
		dir := b.TempDir()
		opt := index.BuildOptions{Name: "bench", Paths: []string{src}, Embedder: newConstEmbedder(768), EmbedBatchSize: 64,
			Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
		start := time.Now()
		sum, err := Build(context.Background(), dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Chunks), "chunks")
		b.ReportMetric(float64(sum.Chunks)/time.Since(start).Seconds(), "chunks/s")
		b.ReportMetric(float64(benchdata.DirSize(dir))/(1<<20), "MiB-on-disk")
		b.ReportMetric(benchdata.PeakRSSMiB(), "peak-RSS-MiB")
	}
}

// BenchmarkGraphInsert100k measures HNSW inserts alone, from every core as
// a build makes them: 100k 768-d vectors of the structured space the
// search benchmarks use.
func BenchmarkGraphInsert100k(b *testing.B) {
	space := benchdata.NewSpace(768, 500)
	ids := make([]int64, 100000)
	vecs := make([][]float32, len(ids))
	for i := range vecs {
		ids[i], vecs[i] = int64(i+1), space.Vec(uint64(i))
	}
	b.ResetTimer()
	for range b.N {
		vg := newVectorGraph(768)
		start := time.Now()
		if err := vg.addAll(ids, vecs); err != nil {
			b.Fatal(err)
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
		sum, err := Build(context.Background(), dir, index.BuildOptions{Name: "bench", Paths: []string{src},
			Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Chunks)/time.Since(start).Seconds(), "chunks/s")
		b.ReportMetric(float64(benchdata.DirSize(dir))/(1<<20), "MiB-on-disk")
	}
}

// BenchmarkNoopReindex10k refreshes an index of 10k unchanged files.
func BenchmarkNoopReindex10k(b *testing.B) {
	src, dir := b.TempDir(), b.TempDir()
	genCorpus(b, src, 10000, 1)
	opt := index.BuildOptions{Name: "bench", Paths: []string{src}, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
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

// spaceEmbedder embeds texts as structured vectors (see benchdata.Space).
type spaceEmbedder struct{ s *benchdata.Space }

func (e spaceEmbedder) Model() string                      { return "bench-space" }
func (e spaceEmbedder) Check(context.Context) (int, error) { return e.s.Dim, nil }
func (e spaceEmbedder) EmbedQuery(_ context.Context, q string) ([]float32, error) {
	return e.s.TextVec(q), nil
}
func (e spaceEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.s.TextVec(t)
	}
	return out, nil
}

// BenchmarkSearch measures hybrid retrieval (query embedding excluded) at
// 10k and 100k chunks of 768-d vectors: latency percentiles per stage, and
// the HNSW graph's recall@10 and speed against exact search for several
// search breadths.
func BenchmarkSearch(b *testing.B) {
	for _, files := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("%dk", files*10/1000), func(b *testing.B) {
			if files == 100000 && os.Getenv("LORE_BENCH_LARGE") == "" {
				b.Skip("1M chunks: make bench-large")
			}
			for range b.N {
				benchSearch(b, files)
			}
		})
	}
}

func benchSearch(b *testing.B, files int) {
	ctx := context.Background()
	src, dir := b.TempDir(), b.TempDir()
	genCorpus(b, src, files, 10)
	space := benchdata.NewSpace(768, 500)
	if _, err := Build(ctx, dir, index.BuildOptions{Name: "bench", Paths: []string{src}, Embedder: spaceEmbedder{space}, EmbedBatchSize: 64,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}); err != nil {
		b.Fatal(err)
	}
	ix, err := Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	g, err := ix.vectorGraph(ctx)
	if err != nil {
		b.Fatal(err)
	}
	qs := space.Queries(200)
	var total, vec, lex, fuse []time.Duration
	for _, q := range qs {
		start := time.Now()
		res, err := ix.SearchVector(ctx, q.Text, q.Vec, index.SearchOptions{Limit: 20, Depth: 50}, 0)
		if err != nil {
			b.Fatal(err)
		}
		total = append(total, time.Since(start))
		vec, lex, fuse = append(vec, res.Timings.Vector), append(lex, res.Timings.Lexical), append(fuse, res.Timings.Fuse)
	}
	p := benchdata.Millis
	b.ReportMetric(p(total, 50), "p50-ms")
	b.ReportMetric(p(total, 95), "p95-ms")
	b.ReportMetric(p(vec, 50), "vector-p50-ms")
	b.ReportMetric(p(lex, 50), "lexical-p50-ms")
	b.ReportMetric(p(fuse, 50), "fuse-p50-ms")

	// Exact top-10 by brute force over every stored vector.
	ids, vecs := allVectors(b, ix)
	exact := make([]map[int64]bool, len(qs))
	start := time.Now()
	for i, q := range qs {
		exact[i] = exactTop(q.Vec, ids, vecs, 10)
	}
	exactPer := time.Since(start) / time.Duration(len(qs))
	for _, ef := range []int{16, 32, 64, 128} {
		found := 0
		start := time.Now()
		for i, q := range qs {
			got, _, _ := g.search(q.Vec, 10, ef)
			for _, id := range got {
				if exact[i][id] {
					found++
				}
			}
		}
		per := time.Since(start) / time.Duration(len(qs))
		fmt.Printf("    %dk chunks, M=%d ef=%d: recall@10 %.3f, %.3f ms/query, %.0fx exact (%.2f ms)\n",
			files*10/1000, graphM, ef, float64(found)/float64(10*len(qs)), float64(per.Microseconds())/1000, float64(exactPer)/float64(per), float64(exactPer.Microseconds())/1000)
		if ef == graphEfSearch {
			b.ReportMetric(float64(found)/float64(10*len(qs)), "recall@10")
			b.ReportMetric(float64(exactPer)/float64(per), "x-exact")
		}
	}
}

func allVectors(b *testing.B, ix *Index) ([]int64, [][]float32) {
	rows, err := ix.st.db.Query(`SELECT id, vec FROM vectors`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	var vecs [][]float32
	for rows.Next() {
		var id int64
		var blob []byte
		rows.Scan(&id, &blob)
		ids, vecs = append(ids, id), append(vecs, decodeVector(blob))
	}
	return ids, vecs
}

func exactTop(q []float32, ids []int64, vecs [][]float32, k int) map[int64]bool {
	type sc struct {
		id int64
		d  float32
	}
	best := make([]sc, 0, k+1)
	for i, v := range vecs {
		d := dotDistance(q, v)
		if len(best) < k || d < best[len(best)-1].d {
			best = append(best, sc{ids[i], d})
			slices.SortFunc(best, func(a, b sc) int { return cmp.Compare(a.d, b.d) })
			if len(best) > k {
				best = best[:k]
			}
		}
	}
	out := map[int64]bool{}
	for _, s := range best {
		out[s.id] = true
	}
	return out
}

// unitVector scales v to unit length in place, as the Ollama embedder does.
func unitVector(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// BenchmarkKeywordLiveSync100k is keyword search under live sync: a
// 100k-chunk lexical index takes LORE_BENCH_SYNC_BATCHES (default 1,000)
// saves of one file each, every one a scoped refresh (BuildOptions.Only)
// as the watcher makes them; then BM25 top-50 with the proximity re-rank,
// the keyword stage of Search/100k over its queries, runs against it and
// against a fresh build of the same final files, side by side. It reports
// the write cost of a batch (the whole Build call) and both latencies.
func BenchmarkKeywordLiveSync100k(b *testing.B) {
	batches := 1000
	if s := os.Getenv("LORE_BENCH_SYNC_BATCHES"); s != "" {
		if _, err := fmt.Sscan(s, &batches); err != nil {
			b.Fatalf("LORE_BENCH_SYNC_BATCHES=%q: %v", s, err)
		}
	}
	for range b.N {
		benchKeywordLiveSync(b, 10000, batches)
	}
}

func benchKeywordLiveSync(b *testing.B, files, batches int) {
	ctx := context.Background()
	src, live, fresh := b.TempDir(), b.TempDir(), b.TempDir()
	genCorpus(b, src, files, 10)
	opt := index.BuildOptions{Name: "bench", Paths: []string{src}, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
	if _, err := Build(ctx, live, opt); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	var write []time.Duration
	for i := range batches {
		p := filepath.Join(src, fmt.Sprintf("d%03d", rng.Intn(files)/100))
		names, _ := os.ReadDir(p)
		p = filepath.Join(p, names[rng.Intn(len(names))].Name())
		if err := editWords(p, rng, i); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		sum, err := Build(ctx, live, index.BuildOptions{Name: "bench", Only: []string{p}, Chunk: opt.Chunk, MaxFileSize: opt.MaxFileSize})
		if err != nil {
			b.Fatal(err)
		}
		write = append(write, time.Since(start))
		if sum.FilesIndexed != 1 {
			b.Fatalf("batch %d: %+v", i, sum)
		}
	}
	if _, err := Build(ctx, fresh, opt); err != nil {
		b.Fatal(err)
	}
	ixs := make([]*Index, 2)
	for i, dir := range []string{live, fresh} {
		ix, err := Open(dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		ixs[i] = ix
	}
	var segs, dead int
	ixs[0].st.db.QueryRow(`SELECT (SELECT count(*) FROM lex_segments), (SELECT count(*) FROM lex_deleted)`).Scan(&segs, &dead)
	// Interleaved, three rounds, so the machine's noise falls on both alike.
	qs := benchdata.NewSpace(8, 1).Queries(200)
	took := make([][]time.Duration, 2)
	for range 3 {
		for _, q := range qs {
			for i, ix := range ixs {
				start := time.Now()
				if _, err := ix.lexicalIDs(ctx, q.Text, 50, true); err != nil {
					b.Fatal(err)
				}
				took[i] = append(took[i], time.Since(start))
			}
		}
	}
	p := benchdata.Millis
	livep50, freshp50 := p(took[0], 50), p(took[1], 50)
	fmt.Printf("    %d batches of 1 file: write p50 %.1f ms, p95 %.1f ms, max %.1f ms; %d segments, %d dead chunk ids\n",
		batches, p(write, 50), p(write, 95), p(write, 100), segs, dead)
	fmt.Printf("    BM25 p50 %.3f ms live, %.3f ms fresh (%.3f); p95 %.3f ms live, %.3f ms fresh\n",
		livep50, freshp50, livep50/freshp50, p(took[0], 95), p(took[1], 95))
	b.ReportMetric(float64(batches), "batches")
	b.ReportMetric(p(write, 50), "write-p50-ms")
	b.ReportMetric(p(write, 95), "write-p95-ms")
	b.ReportMetric(p(write, 100), "write-max-ms")
	b.ReportMetric(float64(segs), "segments")
	b.ReportMetric(livep50, "live-p50-ms")
	b.ReportMetric(freshp50, "fresh-p50-ms")
	b.ReportMetric(livep50/freshp50, "live/fresh-p50")
	b.ReportMetric(p(took[0], 95), "live-p95-ms")
	b.ReportMetric(p(took[1], 95), "fresh-p95-ms")
}

// editWords is a save that changes words, not lengths: every fifth word of
// the file's sections becomes another, so its chunks are replaced.
func editWords(path string, rng *rand.Rand, n int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		ws := strings.Fields(l)
		for j := rng.Intn(5); j < len(ws)-1; j += 5 {
			ws[j] = fmt.Sprintf("w%d", 20+rng.Intn(2000))
		}
		lines[i] = strings.Join(ws, " ")
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		return err
	}
	// A distinct mtime per save, out of the racy window.
	t := time.Now().Add(-time.Hour + time.Duration(n)*time.Second)
	return os.Chtimes(path, t, t)
}

// BenchmarkVectorLiveSync100k is a one-file save under live sync on a
// 100k-chunk index with 768-d vectors: LORE_BENCH_SYNC_BATCHES (default 20)
// edits of one file, each a scoped refresh (BuildOptions.Only, which
// publishes as a Batch), timed as the whole Build call; then as many again
// published as a full refresh would be (Batch off: the graph file loaded,
// verified and saved, every vector scanned for garbage), which is what
// every save cost before live-sync batches. It also times the unscoped
// vector garbage collection alone.
func BenchmarkVectorLiveSync100k(b *testing.B) {
	batches := 20
	if s := os.Getenv("LORE_BENCH_SYNC_BATCHES"); s != "" {
		if _, err := fmt.Sscan(s, &batches); err != nil {
			b.Fatalf("LORE_BENCH_SYNC_BATCHES=%q: %v", s, err)
		}
	}
	for range b.N {
		benchVectorLiveSync(b, 10000, batches)
	}
}

func benchVectorLiveSync(b *testing.B, files, batches int) {
	ctx := context.Background()
	src, dir := b.TempDir(), b.TempDir()
	genCorpus(b, src, files, 10)
	emb := newConstEmbedder(768)
	opt := index.BuildOptions{Name: "bench", Paths: []string{src}, Embedder: emb, EmbedBatchSize: 64,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
	if _, err := Build(ctx, dir, opt); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	save := func(i int, t index.Target) time.Duration {
		p := filepath.Join(src, fmt.Sprintf("d%03d", rng.Intn(files)/100))
		names, _ := os.ReadDir(p)
		p = filepath.Join(p, names[rng.Intn(len(names))].Name())
		if err := editWords(p, rng, i); err != nil {
			b.Fatal(err)
		}
		o := opt
		o.Paths, o.Only = nil, []string{p}
		start := time.Now()
		sum, err := index.BuildTo(ctx, t, o)
		if err != nil {
			b.Fatal(err)
		}
		if sum.FilesIndexed != 1 || sum.ChunksEmbedded == 0 {
			b.Fatalf("save %d: %+v", i, sum)
		}
		return time.Since(start)
	}
	var batch, full []time.Duration
	for i := range batches {
		batch = append(batch, save(i, localTarget{dir: dir}))
	}
	for i := range batches {
		full = append(full, save(batches+i, fullPublish{localTarget{dir: dir}}))
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, CurrentGeneration(dir), "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var gc []time.Duration
	for range 5 {
		start := time.Now()
		if _, err := (&database{db: db}).gcVectors(ctx); err != nil {
			b.Fatal(err)
		}
		gc = append(gc, time.Since(start))
	}
	slices.Sort(batch)
	slices.Sort(full)
	slices.Sort(gc)
	p := benchdata.Millis
	fmt.Printf("    %d one-file saves as batches: p50 %.1f ms, p95 %.1f ms, max %.1f ms\n", batches, p(batch, 50), p(batch, 95), p(batch, 100))
	fmt.Printf("    %d one-file saves published in full: p50 %.1f ms, p95 %.1f ms, max %.1f ms\n", batches, p(full, 50), p(full, 95), p(full, 100))
	fmt.Printf("    unscoped vector gc alone: p50 %.1f ms\n", p(gc, 50))
	b.ReportMetric(p(batch, 50), "batch-p50-ms")
	b.ReportMetric(p(batch, 95), "batch-p95-ms")
	b.ReportMetric(p(full, 50), "full-p50-ms")
	b.ReportMetric(p(full, 95), "full-p95-ms")
	b.ReportMetric(p(gc, 50), "gc-ms")
}

// fullPublish is a target whose writer publishes as a full refresh does,
// whatever the build: the cost of a save before live-sync batches.
type fullPublish struct{ index.Target }

func (t fullPublish) BeginWrite(ctx context.Context, req index.WriteRequest) (index.Writer, error) {
	w, err := t.Target.BeginWrite(ctx, req)
	if err != nil {
		return nil, err
	}
	return fullWriter{w}, nil
}

type fullWriter struct{ index.Writer }

func (w fullWriter) Publish(ctx context.Context, p index.PublishOptions) (int, int, error) {
	p.Batch = false
	return w.Writer.Publish(ctx, p)
}
