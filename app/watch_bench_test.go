package app

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// BenchmarkWatchSaveToSearch100k is live sync end to end on a 100k-chunk
// index (10,000 files of 10 sections; LORE_BENCH_SYNC_FILES scales it),
// on the local store and on one Weaviate node, keyword only and with a
// stand-in embedder (ollamatest, 768-d, over
// HTTP as Ollama is spoken to): one engine watches the index; a second,
// opened apart as another process would be, searches.
//
//   - 100 saves of one file, each a new word in one paragraph: the time
//     from the write until the other engine's search finds that word
//     in its top 5, p50 and p95 (the stand-in answers at once: a real model adds
//     its time for each changed chunk, stated apart).
//   - a burst of 2,000 files saved as fast as possible (a branch switch):
//     the time from the last write until every one is applied, against a
//     fresh build of the same tree with the same embedder.
func BenchmarkWatchSaveToSearch100k(b *testing.B) {
	files := envInt(b, "LORE_BENCH_SYNC_FILES", 10000)
	for _, mode := range []string{"keyword", "embedder"} {
		b.Run("local/"+mode, func(b *testing.B) {
			for range b.N {
				benchSaveToSearch(b, "local", mode, files, nil)
			}
		})
	}
	// One node; LORE_BENCH_SYNC_WEAVIATE_FILES sizes its tree.
	for _, mode := range []string{"keyword", "embedder"} {
		b.Run("weaviate/"+mode, func(b *testing.B) {
			if _, err := weaviatetest.Binary(); err != nil {
				b.Skipf("no Weaviate server: %v", err)
			}
			c := weaviatetest.Start(b, 1)
			for range b.N {
				benchSaveToSearch(b, "weaviate", mode, envInt(b, "LORE_BENCH_SYNC_WEAVIATE_FILES", files), c)
			}
		})
	}
}

func envInt(b *testing.B, key string, def int) int {
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s=%q: %v", key, s, err)
	}
	return n
}

func benchSaveToSearch(b *testing.B, store, mode string, files int, c *weaviatetest.Cluster) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := ollamatest.New(b)
	srv.Models["nomic-embed-text:latest"] = 768
	cfg := config.Defaults()
	cfg.DataDir, cfg.OllamaHost, cfg.Reranker, cfg.Watch = b.TempDir(), srv.URL, "none", false
	cfg.Index, cfg.Embedder = mode, "ollama"
	if mode == "keyword" {
		cfg.Embedder = "none"
	}
	if c != nil {
		cfg.Store, cfg.WeaviateEndpoints, cfg.WeaviateGRPCEndpoints = "weaviate", strings.Join(c.Endpoints(), ","), strings.Join(c.GRPCEndpoints(), ",")
	}
	src := b.TempDir()
	if err := benchdata.WriteCorpus(src, files, 10); err != nil {
		b.Fatal(err)
	}
	writer, err := Open(Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer writer.Close()
	start := time.Now()
	sum, err := writer.Build(ctx, BuildRequest{Paths: []string{src}})
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	events := make(chan WatchEvent, 1<<14)
	done := make(chan error, 1)
	go func() {
		done <- writer.Watch(ctx, WatchRequest{OnEvent: func(ev WatchEvent) { events <- ev }})
	}()
	defer func() { cancel(); <-done }()
	for ev := range events {
		if ev.Kind == WatchStarted {
			break
		}
	}
	reader, err := Open(Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer reader.Close()

	rng := rand.New(rand.NewSource(11))
	fileOf := func(n int) (abs, rel string) {
		rel = filepath.Join(fmt.Sprintf("d%03d", n/100), fmt.Sprintf("f%05d.md", n))
		return filepath.Join(src, rel), rel
	}
	var found, applied, searched []time.Duration
	var embedded int
	for i := range 100 {
		abs, rel := fileOf(rng.Intn(files))
		word := fmt.Sprintf("savedword%dx", i)
		if err := saveWord(abs, rng, word); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for {
			t := time.Now()
			res, err := reader.Search(ctx, SearchRequest{Query: word, K: 5})
			took := time.Since(t)
			if err == nil && slices.ContainsFunc(res.Passages, func(p agent.Passage) bool { return p.Path == rel && strings.Contains(p.Text, word) }) {
				searched = append(searched, took)
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatalf("save %d (%s) not found after a minute: %v", i, rel, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		found = append(found, time.Since(start))
	}
	for drained := false; !drained; {
		select {
		case ev := <-events:
			embedded += ev.Summary.ChunksEmbedded
			if ev.Kind == WatchSynced {
				applied = append(applied, ev.Took)
			}
		default:
			drained = true
		}
	}

	// The branch switch.
	burst := map[string]bool{}
	for len(burst) < min(2000, files) {
		abs, rel := fileOf(rng.Intn(files))
		if burst[rel] {
			continue
		}
		burst[rel] = true
		if err := saveWord(abs, rng, "burstword"); err != nil {
			b.Fatal(err)
		}
	}
	last := time.Now()
	left := len(burst)
	for left > 0 {
		select {
		case ev := <-events:
			for _, f := range ev.Summary.Updated {
				if burst[f.Path] {
					burst[f.Path] = false
					left--
				}
			}
		case <-time.After(5 * time.Minute):
			b.Fatalf("the burst: %d files not applied after 5 minutes", left)
		}
	}
	inStep := time.Since(last)
	fcfg := cfg
	fcfg.Index = mode + "-fresh"
	fe, err := Open(Options{Config: fcfg})
	if err != nil {
		b.Fatal(err)
	}
	defer fe.Close()
	start = time.Now()
	if _, err := fe.Build(ctx, BuildRequest{Paths: []string{src}}); err != nil {
		b.Fatal(err)
	}
	fresh := time.Since(start)

	embedOne := time.Duration(0)
	if mode == "embedder" {
		emb := ollamaEmbedder(b, srv)
		start := time.Now()
		if _, err := emb.EmbedDocuments(ctx, []string{"one paragraph of a page"}); err != nil {
			b.Fatal(err)
		}
		embedOne = time.Since(start)
	}
	slices.Sort(found)
	slices.Sort(applied)
	slices.Sort(searched)
	p := benchdata.Millis
	fmt.Printf("    %s %s: built %d chunks in %.1f s\n", store, mode, sum.TotalChunks, first.Seconds())
	fmt.Printf("    %s %s, %d chunks: save → found by another engine p50 %.0f ms, p95 %.0f ms, max %.0f ms (100 saves, %d chunks embedded; the stand-in embeds one text in %.1f ms)\n",
		store, mode, sum.TotalChunks, p(found, 50), p(found, 95), p(found, 100), embedded, float64(embedOne)/float64(time.Millisecond))
	fmt.Printf("    %s %s: a batch applied in p50 %.0f ms, p95 %.0f ms; the search that found it took p50 %.0f ms, p95 %.0f ms\n",
		store, mode, p(applied, 50), p(applied, 95), p(searched, 50), p(searched, 95))
	fmt.Printf("    %s %s: %d files saved at once in step %.1f s after the last write; a fresh build of the tree %.1f s (%.2f×)\n",
		store, mode, len(burst), inStep.Seconds(), fresh.Seconds(), inStep.Seconds()/fresh.Seconds())
	b.ReportMetric(p(found, 50), store+"-"+mode+"-found-p50-ms")
	b.ReportMetric(p(found, 95), store+"-"+mode+"-found-p95-ms")
	b.ReportMetric(inStep.Seconds(), store+"-"+mode+"-burst-s")
	b.ReportMetric(fresh.Seconds(), store+"-"+mode+"-fresh-s")
}

// saveWord writes word into one line of one section of the file, as an
// editor's save of one paragraph would.
func saveWord(path string, rng *rand.Rand, word string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	for {
		i := rng.Intn(len(lines))
		if lines[i] != "" && !strings.HasPrefix(lines[i], "#") {
			lines[i] = word + " " + lines[i]
			break
		}
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}
