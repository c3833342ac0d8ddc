// Package chromem compares lore's vector stage with chromem-go, the
// embedded vector store Go RAG projects reach for, on the same vectors and
// queries in the same run. It is a separate module so that chromem-go stays
// out of lore's own go.mod.
package chromem

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/benchdata"
)

// recorder embeds with the benchmark space and keeps every vector, so that
// chromem-go gets exactly what lore stored.
type recorder struct {
	s    *benchdata.Space
	vecs map[string][]float32
}

func (r *recorder) Model() string                      { return "bench-space" }
func (r *recorder) Check(context.Context) (int, error) { return r.s.Dim, nil }
func (r *recorder) EmbedQuery(_ context.Context, q string) ([]float32, error) {
	return r.s.TextVec(q), nil
}
func (r *recorder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = r.s.TextVec(t)
		r.vecs[t] = out[i]
	}
	return out, nil
}

func BenchmarkVectorStage(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("%dk", files*10/1000), func(b *testing.B) {
			for range b.N {
				compare(b, files)
			}
		})
	}
}

func compare(b *testing.B, files int) {
	ctx := context.Background()
	src, dir := b.TempDir(), b.TempDir()
	if err := benchdata.WriteCorpus(src, files, 10); err != nil {
		b.Fatal(err)
	}
	rec := &recorder{s: benchdata.NewSpace(768, 500), vecs: map[string][]float32{}}
	if _, err := local.Build(ctx, dir, index.BuildOptions{Name: "bench", Paths: []string{src}, Embedder: rec, EmbedBatchSize: 64,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}); err != nil {
		b.Fatal(err)
	}
	ix, err := local.Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()

	col, err := chromem.NewDB().CreateCollection("bench", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]chromem.Document, 0, len(rec.vecs))
	for text, v := range rec.vecs {
		docs = append(docs, chromem.Document{ID: strconv.Itoa(len(docs)), Embedding: v, Content: text})
	}
	if err := col.AddDocuments(ctx, docs, 2); err != nil {
		b.Fatal(err)
	}

	qs := rec.s.Queries(200)
	opt := index.SearchOptions{Limit: 20, Depth: 50}
	ix.SearchVector(ctx, qs[0].Text, qs[0].Vec, opt, 0) // loads the graph
	var loreVec, loreTotal, chrom []time.Duration
	for _, q := range qs {
		start := time.Now()
		res, err := ix.SearchVector(ctx, q.Text, q.Vec, opt, 0)
		if err != nil {
			b.Fatal(err)
		}
		loreTotal = append(loreTotal, time.Since(start))
		loreVec = append(loreVec, res.Timings.Vector)
		start = time.Now()
		if _, err := col.QueryEmbedding(ctx, q.Vec, 50, nil, nil); err != nil {
			b.Fatal(err)
		}
		chrom = append(chrom, time.Since(start))
	}
	p := benchdata.Millis
	b.ReportMetric(p(loreVec, 50), "lore-vector-p50-ms")
	b.ReportMetric(p(loreVec, 95), "lore-vector-p95-ms")
	b.ReportMetric(p(chrom, 50), "chromem-p50-ms")
	b.ReportMetric(p(chrom, 95), "chromem-p95-ms")
	b.ReportMetric(p(chrom, 50)/p(loreVec, 50), "chromem/lore")
	b.ReportMetric(p(loreTotal, 50), "lore-hybrid-p50-ms")
	fmt.Printf("    %d chunks: lore vector stage p50 %.2f ms p95 %.2f ms; chromem-go p50 %.2f ms p95 %.2f ms (%.1fx); lore whole hybrid search p50 %.2f ms\n",
		len(rec.vecs), p(loreVec, 50), p(loreVec, 95), p(chrom, 50), p(chrom, 95), p(chrom, 50)/p(loreVec, 50), p(loreTotal, 50))
}
