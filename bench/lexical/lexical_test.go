// Package lexical compares lore's lexical (BM25) stage, today an FTS5
// bm25() query, with bleve v2 under BM25 scoring and with a prototype of
// BM25 in Go over posting lists stored in SQLite, on the corpus and queries
// of index.BenchmarkSearch, in one run. It is in the bench module so that
// bleve stays out of lore's own go.mod.
package lexical

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"lore/index"
	"lore/internal/benchdata"
)

func BenchmarkLexicalStage(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("%dk", files*10/1000), func(b *testing.B) {
			for range b.N {
				compare(b, files)
			}
		})
	}
}

// engine is one way to get the top k chunk ids of a query.
type engine struct {
	name  string
	top   func(q string, k int) ([]int64, error)
	times []time.Duration
	alloc uint64
	top10 float64 // overlap with exact BM25, summed over queries
	top50 float64
}

func compare(b *testing.B, files int) {
	ctx := context.Background()
	src, dir := b.TempDir(), b.TempDir()
	if err := benchdata.WriteCorpus(src, files, 10); err != nil {
		b.Fatal(err)
	}
	// (a) lore's own build, lexical only: walking, chunking, the chunks
	// table and FTS5.
	start := time.Now()
	sum, err := index.Build(ctx, dir, index.BuildOptions{Name: "bench", Paths: []string{src},
		Chunk: index.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	loreBuild := time.Since(start)
	ix, err := index.Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	gen, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		b.Fatal(err)
	}
	loreDB, err := sql.Open("sqlite", "file:"+filepath.Join(dir, strings.TrimSpace(string(gen)), "index.db")+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer loreDB.Close()
	var ftsBytes int64
	if err := loreDB.QueryRow(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'chunks_fts%'`).Scan(&ftsBytes); err != nil {
		b.Logf("FTS5 size unknown: %v", err)
	}
	chunks := readChunks(b, loreDB)

	// (c) the prototype: posting lists in a SQLite table of their own.
	pdb, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "postings.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer pdb.Close()
	start = time.Now()
	if err := buildPostings(ctx, pdb, chunks); err != nil {
		b.Fatal(err)
	}
	protoBuild := time.Since(start)
	if _, err := pdb.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	protoBytes := fileSize(filepath.Join(dir, "postings.db"))

	// (b) bleve, scorch on disk, BM25 over the same four fields.
	start = time.Now()
	blevePath := filepath.Join(dir, "bleve")
	if err := buildBleve(blevePath, chunks); err != nil {
		b.Fatal(err)
	}
	bleveBuild := time.Since(start)
	bleveBytes := benchdata.DirSize(blevePath)
	nChunks := len(chunks)
	chunks = nil

	// Memory each engine keeps once open (Go heap; bleve's mmapped
	// segments are page cache, not counted), after one query to load what
	// a first search loads.
	heap0 := heapInUse()
	pst, err := openPostings(ctx, pdb)
	if err != nil {
		b.Fatal(err)
	}
	pst.topK(ctx, "warm up", 50)
	heap1 := heapInUse()
	bl, err := bleve.Open(blevePath)
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	searchBleve(ctx, bl, "warm up", 50)
	protoHeap, bleveHeap := heap1-heap0, heapInUse()-heap1

	qs := benchdata.NewSpace(768, 500).Queries(200)
	opt := index.SearchOptions{Limit: 50, Depth: 50}
	var lastLexical time.Duration
	engines := []*engine{
		{name: "fts5", top: func(q string, k int) ([]int64, error) {
			// lore's own lexical stage: Timings.Lexical is the FTS5 query
			// alone; loading the hits is not counted.
			res, err := ix.SearchVector(ctx, q, nil, opt, 0)
			ids := make([]int64, len(res.Hits))
			for i, h := range res.Hits {
				ids[i] = h.ChunkID
			}
			lastLexical = res.Timings.Lexical
			return ids, err
		}},
		{name: "bleve", top: func(q string, k int) ([]int64, error) { return searchBleve(ctx, bl, q, k) }},
		{name: "proto", top: func(q string, k int) ([]int64, error) { return pst.topK(ctx, q, k) }},
		{name: "exact", top: func(q string, k int) ([]int64, error) { return pst.exact(ctx, q, k) }},
	}
	exact := make([][]int64, len(qs))
	for i, q := range qs {
		exact[i], _ = pst.exact(ctx, q.Text, 50)
	}
	for _, e := range engines {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i, q := range qs {
			start := time.Now()
			got, err := e.top(q.Text, 50)
			took := time.Since(start)
			if err != nil {
				b.Fatalf("%s: %v", e.name, err)
			}
			if e.name == "fts5" {
				took = lastLexical
			}
			e.times = append(e.times, took)
			e.top10 += overlap(got, exact[i], 10)
			e.top50 += overlap(got, exact[i], 50)
		}
		runtime.ReadMemStats(&m1)
		e.alloc = (m1.TotalAlloc - m0.TotalAlloc) / uint64(len(qs))
	}

	p := benchdata.Millis
	n := float64(len(qs))
	for _, e := range engines {
		p50, p95 := p(e.times, 50), p(e.times, 95)
		b.ReportMetric(p50, e.name+"-p50-ms")
		b.ReportMetric(p95, e.name+"-p95-ms")
		if e.name != "exact" {
			b.ReportMetric(e.top10/n, e.name+"-top10")
			b.ReportMetric(e.top50/n, e.name+"-top50")
		}
		fmt.Printf("    lexical %d chunks: %-5s p50 %6.3f ms  p95 %6.3f ms  top-10 %.3f  top-50 %.3f of exact BM25  %5.0f KiB allocated/query\n",
			nChunks, e.name, p50, p95, e.top10/n, e.top50/n, float64(e.alloc)/1024)
	}
	fts, bl50, pr50 := p(engines[0].times, 50), p(engines[1].times, 50), p(engines[2].times, 50)
	b.ReportMetric(bl50/fts, "bleve/fts5")
	b.ReportMetric(pr50/fts, "proto/fts5")
	per := func(d time.Duration) float64 { return float64(nChunks) / d.Seconds() }
	b.ReportMetric(per(loreBuild), "fts5-build-chunks/s")
	b.ReportMetric(per(bleveBuild), "bleve-build-chunks/s")
	b.ReportMetric(per(protoBuild), "proto-build-chunks/s")
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(ftsBytes), "fts5-MiB")
	b.ReportMetric(mib(bleveBytes), "bleve-MiB")
	b.ReportMetric(mib(protoBytes), "proto-MiB")
	fmt.Printf("    lexical %d chunks: build lore (walk, chunk, store, FTS5) %.1f s = %.0f chunks/s, FTS5 tables %.1f MiB; bleve %.1f s = %.0f chunks/s, %.1f MiB on disk, %.2f MiB heap open; postings %.1f s = %.0f chunks/s, %.1f MiB, %.2f MiB heap open\n",
		sum.Chunks, loreBuild.Seconds(), per(loreBuild), mib(ftsBytes), bleveBuild.Seconds(), per(bleveBuild), mib(bleveBytes), float64(bleveHeap)/(1<<20),
		protoBuild.Seconds(), per(protoBuild), mib(protoBytes), float64(protoHeap)/(1<<20))
	b.ReportMetric(benchdata.PeakRSSMiB(), "peak-RSS-MiB")
}

func readChunks(b *testing.B, db *sql.DB) []chunk {
	rows, err := db.Query(`SELECT c.id, d.path, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.id`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []chunk
	for rows.Next() {
		var c chunk
		var path, heading, text string
		if err := rows.Scan(&c.id, &path, &heading, &text); err != nil {
			b.Fatal(err)
		}
		c.cols = index.LexicalColumns(path, heading, text)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// bleveMapping indexes lore's four columns with FTS5's tokenizer rules
// (runs of letters and digits, lowercased, Porter-stemmed) under BM25.
// Words are searched in _all (every field, as FTS5 pools the columns);
// identifiers in idents alone.
func bleveMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bindex.BM25Scoring
	if err := im.AddCustomTokenizer("unicode61", map[string]any{"type": regexp.Name, "regexp": `[\p{L}\p{N}]+`}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer("lore", map[string]any{"type": custom.Name, "tokenizer": "unicode61",
		"token_filters": []any{lowercase.Name, porter.Name}}); err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = "lore"
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range []string{"path", "heading", "text", "idents"} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = "lore"
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.DocValues = false
		doc.AddFieldMappingsAt(f, fm)
	}
	im.DefaultMapping = doc
	return im, nil
}

func buildBleve(path string, chunks []chunk) error {
	im, err := bleveMapping()
	if err != nil {
		return err
	}
	idx, err := bleve.New(path, im)
	if err != nil {
		return err
	}
	batch := idx.NewBatch()
	for _, c := range chunks {
		if err := batch.Index(strconv.FormatInt(c.id, 10), map[string]any{
			"path": c.cols[0], "heading": c.cols[1], "text": c.cols[2], "idents": c.cols[3]}); err != nil {
			return err
		}
		if batch.Size() == 1000 {
			if err := idx.Batch(batch); err != nil {
				return err
			}
			batch.Reset()
		}
	}
	if err := idx.Batch(batch); err != nil {
		return err
	}
	return idx.Close() // waits for the segments to be persisted
}

func searchBleve(ctx context.Context, idx bleve.Index, q string, k int) ([]int64, error) {
	words, idents := index.LexicalTerms(q)
	var qs []query.Query
	for _, w := range words {
		m := bleve.NewMatchQuery(w)
		m.SetField("_all")
		qs = append(qs, m)
	}
	for _, id := range idents {
		m := bleve.NewMatchQuery(id)
		m.SetField("idents")
		qs = append(qs, m)
	}
	if len(qs) == 0 {
		return nil, nil
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), k, 0, false)
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res.Hits))
	for i, h := range res.Hits {
		ids[i], _ = strconv.ParseInt(h.ID, 10, 64)
	}
	return ids, nil
}

// overlap is the share of exact's top k that got's top k holds.
func overlap(got, exact []int64, k int) float64 {
	want := map[int64]bool{}
	for _, id := range exact[:min(k, len(exact))] {
		want[id] = true
	}
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, id := range got[:min(k, len(got))] {
		if want[id] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// heapInUse is the live Go heap: what a full collection leaves.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
