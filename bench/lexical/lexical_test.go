// Package lexical compares lore's keyword stage (BM25F over its own
// posting lists with MaxScore, then the proximity re-rank) with the FTS5
// bm25() query lore used before, and with bleve v2 under BM25 scoring, on
// the corpus and queries of index.BenchmarkSearch, in one run. It is in the
// bench module so that bleve stays out of lore's own go.mod.
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
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/benchdata"
)

func BenchmarkLexicalStage(b *testing.B) {
	for _, files := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("%dk", files*10/1000), func(b *testing.B) {
			if files == 100000 && os.Getenv("LORE_BENCH_LARGE") == "" {
				b.Skip("1M chunks: set LORE_BENCH_LARGE=1 (make bench-large)")
			}
			for range b.N {
				compare(b, files)
			}
		})
	}
}

// engine is one way to get the top k chunk ids of a query.
type engine struct {
	name  string
	top   func(q string, k int) ([]int64, time.Duration, error)
	times []time.Duration
	alloc uint64
	top10 float64 // overlap with FTS5's top 10, summed over queries
}

// chunk is one row to index elsewhere: lore's chunk id and its four
// fields as lore's FTS5 table held them.
type chunk struct {
	id   int64
	cols [4]string
}

func compare(b *testing.B, files int) {
	ctx := context.Background()
	src, dir := b.TempDir(), b.TempDir()
	if err := benchdata.WriteCorpus(src, files, 10); err != nil {
		b.Fatal(err)
	}
	// (a) lore's own build, lexical only: walking, chunking, the chunks
	// table and the posting lists.
	start := time.Now()
	sum, err := local.Build(ctx, dir, index.BuildOptions{Name: "bench", Paths: []string{src},
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	loreBuild := time.Since(start)
	ix, err := local.Open(dir, "bench")
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
	var loreBytes int64
	if err := loreDB.QueryRow(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'lex_%'`).Scan(&loreBytes); err != nil {
		b.Logf("posting list size unknown: %v", err)
	}
	// At 1M chunks only lore's own stage: FTS5 and bleve would take a
	// quarter of an hour more to build, for what 100k already shows.
	if sum.TotalChunks >= 1000000 {
		loreOnly(b, ix, sum.TotalChunks, loreBuild, loreBytes)
		return
	}
	chunks := readChunks(b, loreDB)

	// (b) the FTS5 table of the previous lore, in a database of its own.
	fdb, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "fts5.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer fdb.Close()
	start = time.Now()
	if err := buildFTS5(ctx, fdb, chunks); err != nil {
		b.Fatal(err)
	}
	ftsBuild := time.Since(start)
	var ftsBytes int64
	if err := fdb.QueryRow(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'chunks_fts%'`).Scan(&ftsBytes); err != nil {
		b.Logf("FTS5 size unknown: %v", err)
	}

	// (c) bleve, scorch on disk, BM25 over the same four fields.
	start = time.Now()
	blevePath := filepath.Join(dir, "bleve")
	if err := buildBleve(blevePath, chunks); err != nil {
		b.Fatal(err)
	}
	bleveBuild := time.Since(start)
	bleveBytes := benchdata.DirSize(blevePath)
	nChunks := len(chunks)
	chunks = nil
	heap0 := heapInUse()
	bl, err := bleve.Open(blevePath)
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	searchBleve(ctx, bl, "warm up", 50)
	bleveHeap := heapInUse() - heap0

	qs := benchdata.NewSpace(768, 500).Queries(200)
	lore := func(noProximity bool) func(q string, k int) ([]int64, time.Duration, error) {
		opt := index.SearchOptions{Limit: 50, Depth: 50, NoProximity: noProximity}
		return func(q string, k int) ([]int64, time.Duration, error) {
			// Timings.Lexical is the keyword stage alone; loading the
			// hits for the caller is not counted.
			res, err := ix.SearchVector(ctx, q, nil, opt, 0)
			ids := make([]int64, len(res.Hits))
			for i, h := range res.Hits {
				ids[i] = h.ChunkID
			}
			return ids, res.Timings.Lexical, err
		}
	}
	timed := func(f func(q string, k int) ([]int64, error)) func(q string, k int) ([]int64, time.Duration, error) {
		return func(q string, k int) ([]int64, time.Duration, error) {
			start := time.Now()
			ids, err := f(q, k)
			return ids, time.Since(start), err
		}
	}
	engines := []*engine{
		{name: "fts5", top: timed(func(q string, k int) ([]int64, error) { return searchFTS5(ctx, fdb, q, k) })},
		{name: "bleve", top: timed(func(q string, k int) ([]int64, error) { return searchBleve(ctx, bl, q, k) })},
		{name: "bm25f", top: lore(true)},
		{name: "lore", top: lore(false)},
	}
	ref := make([][]int64, len(qs))
	for i, q := range qs {
		ref[i], _ = searchFTS5(ctx, fdb, q.Text, 50)
	}
	for _, e := range engines {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i, q := range qs {
			got, took, err := e.top(q.Text, 50)
			if err != nil {
				b.Fatalf("%s: %v", e.name, err)
			}
			e.times = append(e.times, took)
			e.top10 += overlap(got, ref[i], 10)
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
		fmt.Printf("    lexical %d chunks: %-5s p50 %6.3f ms  p95 %6.3f ms  top-10 shared with FTS5 %.3f  %5.0f KiB allocated/query\n",
			nChunks, e.name, p50, p95, e.top10/n, float64(e.alloc)/1024)
	}
	fts := p(engines[0].times, 50)
	b.ReportMetric(p(engines[1].times, 50)/fts, "bleve/fts5")
	b.ReportMetric(p(engines[2].times, 50)/fts, "bm25f/fts5")
	b.ReportMetric(p(engines[3].times, 50)/fts, "lore/fts5")
	per := func(d time.Duration) float64 { return float64(nChunks) / d.Seconds() }
	b.ReportMetric(per(loreBuild), "lore-build-chunks/s")
	b.ReportMetric(per(ftsBuild), "fts5-insert-chunks/s")
	b.ReportMetric(per(bleveBuild), "bleve-build-chunks/s")
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(loreBytes), "lore-postings-MiB")
	b.ReportMetric(mib(ftsBytes), "fts5-MiB")
	b.ReportMetric(mib(bleveBytes), "bleve-MiB")
	fmt.Printf("    lexical %d chunks: lore's build (walk, chunk, store, postings) %.1f s = %.0f chunks/s, postings %.1f MiB; FTS5 inserts alone %.1f s = %.0f chunks/s, %.1f MiB; bleve %.1f s = %.0f chunks/s, %.1f MiB on disk, %.2f MiB heap open\n",
		sum.Chunks, loreBuild.Seconds(), per(loreBuild), mib(loreBytes), ftsBuild.Seconds(), per(ftsBuild), mib(ftsBytes),
		bleveBuild.Seconds(), per(bleveBuild), mib(bleveBytes), float64(bleveHeap)/(1<<20))
	b.ReportMetric(benchdata.PeakRSSMiB(), "peak-RSS-MiB")
}

// loreOnly is compare for lore's keyword stage alone.
func loreOnly(b *testing.B, ix *local.Index, nChunks int, build time.Duration, postings int64) {
	ctx := context.Background()
	qs := benchdata.NewSpace(768, 500).Queries(200)
	for _, noProx := range []bool{true, false} {
		opt := index.SearchOptions{Limit: 50, Depth: 50, NoProximity: noProx}
		var times []time.Duration
		for _, q := range qs {
			res, err := ix.SearchVector(ctx, q.Text, nil, opt, 0)
			if err != nil {
				b.Fatal(err)
			}
			times = append(times, res.Timings.Lexical)
		}
		name := "lore"
		if noProx {
			name = "bm25f"
		}
		p50, p95 := benchdata.Millis(times, 50), benchdata.Millis(times, 95)
		b.ReportMetric(p50, name+"-p50-ms")
		b.ReportMetric(p95, name+"-p95-ms")
		fmt.Printf("    lexical %d chunks: %-5s p50 %6.3f ms  p95 %6.3f ms\n", nChunks, name, p50, p95)
	}
	per := float64(nChunks) / build.Seconds()
	b.ReportMetric(per, "lore-build-chunks/s")
	b.ReportMetric(float64(postings)/(1<<20), "lore-postings-MiB")
	b.ReportMetric(benchdata.PeakRSSMiB(), "peak-RSS-MiB")
	fmt.Printf("    lexical %d chunks: lore's build %.0f s = %.0f chunks/s, postings %.1f MiB\n", nChunks, build.Seconds(), per, float64(postings)/(1<<20))
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
		c.cols = lexicalColumns(path, heading, text)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// buildFTS5 fills the previous lore's FTS5 table, as it did.
func buildFTS5(ctx context.Context, db *sql.DB, chunks []chunk) error {
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE chunks_fts USING fts5(path, heading, body, idents,
		content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`); err != nil {
		return err
	}
	for len(chunks) > 0 {
		n := min(len(chunks), 512) // a transaction per flush, as lore's were
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, c := range chunks[:n] {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, path, heading, body, idents) VALUES(?, ?, ?, ?, ?)`,
				c.id, c.cols[0], c.cols[1], c.cols[2], c.cols[3]); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		chunks = chunks[n:]
	}
	return nil
}

// searchFTS5 is the previous lore's query: the words and identifiers of
// the query, quoted, OR'ed, identifiers in their column only.
func searchFTS5(ctx context.Context, db *sql.DB, q string, k int) ([]int64, error) {
	words, idents := queryTerms(q)
	var parts []string
	for _, w := range words {
		parts = append(parts, `"`+w+`"`)
	}
	for _, id := range idents {
		parts = append(parts, `idents:"`+id+`"`)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?`, strings.Join(parts, " OR "), k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// queryTerms are the previous lore's query terms: lowercase words of two
// letters or more without lore's stopwords (FTS5 stems them itself), and
// the squashed identifiers.
func queryTerms(q string) (words, idents []string) {
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 1 && !analysis.IsStopword(w) && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	analysis.Identifiers(q, func(id string) { idents = append(idents, id) })
	return words, idents
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
	words, idents := queryTerms(q)
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
