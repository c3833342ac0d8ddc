package weaviatestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/index/weaviatestore"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// selfRSSMiB is this process's resident memory now.
func selfRSSMiB() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// spaceEmbedder gives every text its vector in a benchdata Space: the
// same vectors for every store, with the structure of real embeddings.
type spaceEmbedder struct{ s *benchdata.Space }

func (e spaceEmbedder) Model() string                      { return "bench-space" }
func (e spaceEmbedder) Check(context.Context) (int, error) { return e.s.Dim, nil }
func (e spaceEmbedder) EmbedQuery(_ context.Context, t string) ([]float32, error) {
	return e.s.TextVec(t), nil
}
func (e spaceEmbedder) EmbedDocuments(_ context.Context, ts []string) ([][]float32, error) {
	out := make([][]float32, len(ts))
	for i, t := range ts {
		out[i] = e.s.TextVec(t)
	}
	return out, nil
}

// BenchmarkStores imports one corpus with one set of vectors into the
// local store, a Weaviate node and a 3-node Weaviate cluster (replication
// 3), and times searches on each: import chunks/s, lexical, vector and
// hybrid query p50/p95, and memory and disk per chunk. All on this machine:
// the three nodes share its cores with lore and with each other, so the
// cluster's numbers are what replication costs here, not what three
// machines would give. LORE_BENCH_STORE_FILES sets the corpus size (each
// file is 50 chunks; default 200 files, 10,000 chunks).
func BenchmarkStores(b *testing.B) {
	files := 200
	if n, err := strconv.Atoi(os.Getenv("LORE_BENCH_STORE_FILES")); err == nil && n > 0 {
		files = n
	}
	corpus := b.TempDir()
	if err := benchdata.WriteCorpus(corpus, files, 50); err != nil {
		b.Fatal(err)
	}
	space := benchdata.NewSpace(384, 64)
	queries := space.Queries(200)
	emb := spaceEmbedder{space}
	for _, kind := range []string{"local", "weaviate-1", "weaviate-3"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			var st index.Store
			var mem func() (rss, disk float64)
			switch kind {
			case "local":
				dir := b.TempDir()
				st = local.Store{Parent: dir}
				mem = func() (float64, float64) { return selfRSSMiB(), float64(benchdata.DirSize(dir)) }
			default:
				n := 1
				if kind == "weaviate-3" {
					n = 3
				}
				c := weaviatetest.Start(b, n)
				ws, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints(), Replication: n})
				if err != nil {
					b.Fatal(err)
				}
				st = ws
				mem = func() (float64, float64) {
					var rss, disk float64
					for i := range n {
						rss += c.RSSMiB(i)
						disk += float64(benchdata.DirSize(c.DataDir(i)))
					}
					return rss, disk
				}
			}
			// Memory is what serving the index holds: a node's RSS from
			// before the import to after the queries; for the local store,
			// this process's from before the index is opened (its graph
			// is then in memory) to after the queries.
			rss0, disk0 := mem()
			t := time.Now()
			sum, err := st.Build(ctx, index.BuildOptions{Name: "bench", Paths: []string{corpus}, Embedder: emb, EmbedBatchSize: 256,
				Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(t)
			_, disk1 := mem()
			if kind == "local" {
				runtime.GC()
				debug.FreeOSMemory()
				rss0, _ = mem()
			}
			r, err := st.Open(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			chunks := float64(sum.TotalChunks)
			b.ReportMetric(chunks, "chunks")
			b.ReportMetric(chunks/took.Seconds(), "import-chunks/s")
			b.ReportMetric((disk1-disk0)/chunks, "disk-B/chunk")
			for _, mode := range []string{"lexical", "vector", "hybrid"} {
				var lat []time.Duration
				for _, q := range queries {
					opt := index.SearchOptions{Limit: 20, Depth: 50}
					var vec []float32
					if mode != "lexical" {
						vec = q.Vec
					}
					opt.NoLexical = mode == "vector"
					t := time.Now()
					res, err := r.SearchVector(ctx, q.Text, vec, opt, 0)
					if err != nil {
						b.Fatalf("%s %q: %v", mode, q.Text, err)
					}
					lat = append(lat, time.Since(t))
					if len(res.Hits) == 0 && mode != "lexical" {
						b.Fatalf("%s %q: no hits", mode, q.Text)
					}
				}
				b.ReportMetric(benchdata.Millis(lat, 50), mode+"-p50-ms")
				b.ReportMetric(benchdata.Millis(lat, 95), mode+"-p95-ms")
			}
			rss1, _ := mem()
			b.ReportMetric(max(rss1-rss0, 0)*1024*1024/chunks, "rss-B/chunk")
			// An incremental build: one file of the corpus changed (its
			// last section), the rest as they were.
			changed := filepath.Join(corpus, "d000", "f00000.md")
			fh, err := os.OpenFile(changed, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(fh, "Changed for the %s update.\n", kind)
			fh.Close()
			t = time.Now()
			upd, err := st.Build(ctx, index.BuildOptions{Name: "bench", Paths: []string{corpus}, Embedder: emb, EmbedBatchSize: 256,
				Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
			if err != nil || upd.FilesIndexed != 1 {
				b.Fatalf("update of one file: %+v %v", upd, err)
			}
			b.ReportMetric(float64(time.Since(t).Milliseconds()), "update-one-file-ms")
			fmt.Fprintf(os.Stderr, "%s: %d chunks in %v\n", kind, sum.TotalChunks, took.Round(time.Millisecond))
		})
	}
}
