package local

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
)

// TestKeywordIndexThroughRefreshes edits, adds and deletes files over many
// refreshes, so segments are written, merged by the fanout and purged of
// replaced chunks, and checks after each that every word finds exactly the
// live chunks that hold it, and that the stats agree with the chunks.
func TestKeywordIndexThroughRefreshes(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	r := rand.New(rand.NewPCG(7, 11))
	vocab := strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
		november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu retention
		storage scrape target alert rule query label metric series sample chunk block compaction`)
	page := func() string {
		var b strings.Builder
		for s := range 3 + r.IntN(6) {
			fmt.Fprintf(&b, "## Part %d\n\n", s)
			for range 20 + r.IntN(60) {
				b.WriteString(vocab[r.IntN(len(vocab))])
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		return b.String()
	}
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.md", i)] = page()
	}
	writeFiles(t, src, files)
	for round := range 25 {
		age(t, src)
		build(t, dir, testOptions(nil, src))
		checkKeywordIndex(t, dir, vocab)
		if t.Failed() {
			t.Fatalf("after round %d", round)
		}
		ix, _ := Open(dir, "test")
		var segs int
		ix.st.db.QueryRow(`SELECT count(*) FROM lex_segments`).Scan(&segs)
		var dead, chunks int
		ix.st.db.QueryRow(`SELECT count(*), (SELECT count(*) FROM chunks) FROM lex_deleted`).Scan(&dead, &chunks)
		ix.Close()
		if segs > 2*mergeFanout {
			t.Fatalf("round %d: %d segments: merges are not keeping up", round, segs)
		}
		if dead > 256+chunks/3 {
			t.Fatalf("round %d: %d of %d chunk ids in the postings are dead: merges do not purge them", round, dead, chunks)
		}
		// Edit a third of the files, delete two, add two.
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if r.IntN(3) == 0 {
				files[n] = page()
				os.WriteFile(filepath.Join(src, n), []byte(files[n]), 0o644)
			}
		}
		for range 2 {
			n := names[r.IntN(len(names))]
			delete(files, n)
			os.Remove(filepath.Join(src, n))
		}
		for i := range 2 {
			n := fmt.Sprintf("r%02d-%d.md", round, i)
			files[n] = page()
			os.WriteFile(filepath.Join(src, n), []byte(files[n]), 0o644)
		}
	}
}

func checkKeywordIndex(t *testing.T, dir string, vocab []string) {
	t.Helper()
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	holds := map[string][]int64{}
	var docs, body, idents int64
	rows, err := ix.st.db.Query(`SELECT c.id, d.path, c.heading, c.text, c.lex_body, c.lex_idents FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, nb, ni int64
		var f analysis.Fields
		rows.Scan(&id, &f.Path, &f.Heading, &f.Body, &nb, &ni)
		d := analysis.Analyze(f)
		if int64(d.BodyLen) != nb || int64(d.IdentsLen) != ni {
			t.Errorf("chunk %d: stored lengths %d, %d, analysed %d, %d", id, nb, ni, d.BodyLen, d.IdentsLen)
		}
		docs, body, idents = docs+1, body+nb, idents+ni
		for _, tf := range d.Terms {
			holds[tf.Term] = append(holds[tf.Term], id)
		}
	}
	rows.Close()
	var sd, sb, si int64
	if err := ix.st.db.QueryRow(`SELECT docs, body, idents FROM lex_stats`).Scan(&sd, &sb, &si); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if sd != docs || sb != body || si != idents {
		t.Errorf("lex_stats says %d chunks of %d words and %d identifiers; the chunks are %d of %d and %d", sd, sb, si, docs, body, idents)
	}
	for _, w := range vocab {
		got, err := ix.lexicalIDs(ctx, w, 1<<20, false)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		var want []int64
		for _, term := range analysis.Query(w) {
			want = append(want, holds[term]...)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q finds %d chunks %v, %d hold it %v", w, len(got), got, len(want), want)
		}
	}
}

// The format-1 tables, as the previous lore wrote them.
const schemaV1Chunks = `
CREATE TABLE chunks(
	id INTEGER PRIMARY KEY,
	doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	ord INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
	heading TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, hash TEXT NOT NULL
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(path, heading, body, idents, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2');
`

// An index written by the previous lore (FTS5, format 1): a reader says to
// run `lore index`, which upgrades it in place without embedding anything
// again, after which keyword and vector search both work.
func TestFormat1IsUpgraded(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	downgradeToV1(t, genPath(t, dir, dbFile))

	_, err := Open(dir, "test")
	if !errors.Is(err, index.ErrOldFormat) || !strings.HasPrefix(err.Error(), `index "test" was built by an older lore: run `+"`lore index`"+` to upgrade it`) {
		t.Fatalf("opening a format-1 index: %v", err)
	}
	before := emb.total()
	sum := build(t, dir, testOptions(emb))
	if emb.total() != before || sum.ChunksEmbedded != 0 {
		t.Errorf("the upgrade embedded %d chunks again", emb.total()-before)
	}
	if lexicalCount(t, dir, "milk") != 1 || lexicalCount(t, dir, "ollamahost") != 1 {
		t.Error("the upgraded index does not find its words")
	}
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.Search(context.Background(), "eggs", index.SearchOptions{Embedder: emb})
	if err != nil || res.Mode != "hybrid" || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Text, "eggs") {
		t.Fatalf("search after the upgrade: %v %+v", err, res)
	}
}

// downgradeToV1 rewrites an index's tables into format 1, with its FTS5
// table filled as the previous lore filled it.
func downgradeToV1(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`DROP TABLE lex_postings`, `DROP TABLE lex_segments`, `DROP TABLE lex_deleted`, `DROP TABLE lex_stats`,
		`ALTER TABLE chunks RENAME TO chunks_new`,
		schemaV1Chunks,
		`INSERT INTO chunks SELECT id, doc_id, ord, start_line, end_line, heading, kind, text, hash FROM chunks_new`,
		`DROP TABLE chunks_new`,
		`INSERT INTO chunks_fts(rowid, path, heading, body, idents) SELECT c.id, d.path, c.heading, c.text, '' FROM chunks c JOIN documents d ON d.id = c.doc_id`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// A build killed after writing chunks but before their keyword segment
// leaves them unfound by keyword, never half-found; the next `lore index`
// writes the segment before anything else.
func TestInterruptedBuildCatchesUpKeywords(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	// What a build dying between its write transactions leaves behind.
	st, err := openStore(genPath(t, dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	var srcID int64
	st.db.QueryRow(`SELECT id FROM sources`).Scan(&srcID)
	f := index.FileUpdate{SourceID: srcID, Path: "late.md", Hash: "x", Status: index.StatusIndexed,
		Chunks: []ingest.Chunk{{Start: 1, End: 1, Heading: "Late", Kind: "prose", Text: "zeppelin maintenance"}}}
	prepare(&f)
	if _, err := st.writeFiles(context.Background(), []index.FileUpdate{f}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if n := lexicalCount(t, dir, "zeppelin"); n != 0 {
		t.Fatalf("a chunk outside every segment was found %d times", n)
	}
	os.WriteFile(filepath.Join(src, "late.md"), []byte("# Late\n\nzeppelin maintenance\n"), 0o644)
	build(t, dir, testOptions(nil, src))
	checkKeywordIndex(t, dir, []string{"zeppelin", "milk", "ollamahost"})
	if n := lexicalCount(t, dir, "zeppelin"); n != 1 {
		t.Fatalf("after the next build, zeppelin is found %d times, want 1", n)
	}
}

// The chunk that says the query's words together outranks a slightly
// shorter one that says each of them far apart, which plain BM25F prefers.
func TestProximityBeatsScatteredRepeats(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	filler := strings.Repeat("Nothing to see on this line.\n", 6)
	writeFiles(t, src, map[string]string{
		"scattered.md": "# Notes\n\nRetention.\n" + filler + "Blocks.\n" + filler + "Compaction.\n",
		"answer.md":    "# Storage\n\nCompaction merges blocks past retention.\n" + filler + filler + "One more line.\n",
		"other.md":     "# Other\n\nUnrelated words about scraping.\n",
	})
	opt := testOptions(nil, src)
	opt.Chunk.Size = 4000 // a chunk a file
	build(t, dir, opt)
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	top := func(noProximity bool) string {
		res, err := ix.Search(context.Background(), "compaction of blocks and retention", index.SearchOptions{Limit: 3, NoProximity: noProximity})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("search: %v %+v", err, res)
		}
		return res.Hits[0].Path
	}
	if got := top(true); got != "scattered.md" {
		t.Fatalf("without proximity %s comes first: the case no longer tells proximity apart", got)
	}
	if got := top(false); got != "answer.md" {
		t.Errorf("with proximity %s comes first, want answer.md", got)
	}
}

// A question in words finds the camelCase identifier that names them, and
// a question naming the identifier ranks it above a text that only has
// its words spread out.
func TestCamelCasePartsAreFound(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"pool.md":   "# Pool\n\nSet `maxIdleConns` to bound the pool.\n",
		"spread.md": "# Limits\n\nThe max size is fixed.\n\nIdle workers sleep.\n\nConns are counted per host.\n",
		"other.md":  "# Other\n\nUnrelated words about scraping.\n",
	})
	opt := testOptions(nil, src)
	opt.Chunk.Size = 4000 // a chunk a file
	build(t, dir, opt)
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	paths := func(q string) []string {
		res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 3})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Path)
		}
		return out
	}
	for _, q := range []string{"idle conns", "max idle connections"} {
		if got := paths(q); !slices.Contains(got, "pool.md") {
			t.Errorf("%q finds %q, not pool.md's maxIdleConns", q, got)
		}
	}
	if got := paths("maxIdleConns"); len(got) == 0 || got[0] != "pool.md" {
		t.Errorf("maxIdleConns finds %q, want pool.md first", got)
	}
	if got := paths("what is maxIdleConns for"); len(got) == 0 || got[0] != "pool.md" {
		t.Errorf("a question naming maxIdleConns finds %q, want pool.md first", got)
	}
}

// syncSaves builds an index of files pages and saves one file at a time
// through scoped refreshes, as live sync does: each save swaps words for
// others, so lengths, and with them the averages every impact was
// computed with, stay as a fresh build of the final files sees them.
func syncSaves(t *testing.T, files, saves int) (src, dir string, vocab []string) {
	t.Helper()
	src, dir = t.TempDir(), t.TempDir()
	r := rand.New(rand.NewPCG(3, 5))
	vocab = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
		november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu retention
		storage scrape target alert rule query label metric series sample chunk block compaction`)
	page := map[string]string{}
	for i := range files {
		var b strings.Builder
		for s := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\n", s)
			for range 40 {
				b.WriteString(vocab[r.IntN(len(vocab))] + " ")
			}
			b.WriteString("\n\n")
		}
		page[fmt.Sprintf("f%03d.md", i)] = b.String()
	}
	writeFiles(t, src, page)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	for i := range saves {
		name := fmt.Sprintf("f%03d.md", r.IntN(files))
		ws := strings.Split(page[name], " ")
		for j := range ws {
			if slices.Contains(vocab, ws[j]) && r.IntN(4) == 0 {
				ws[j] = vocab[r.IntN(len(vocab))]
			}
		}
		page[name] = strings.Join(ws, " ")
		p := filepath.Join(src, name)
		os.WriteFile(p, []byte(page[name]), 0o644)
		mt := time.Now().Add(-time.Hour + time.Duration(i)*time.Second)
		os.Chtimes(p, mt, mt)
		opt := testOptions(nil)
		opt.Only = []string{p}
		build(t, dir, opt)
	}
	return src, dir, vocab
}

// keywordCounts is how many segments and dead chunk ids the index holds,
// and its chunks and postings.
func keywordCounts(t *testing.T, dir string) (segs, dead, chunks, postings int) {
	t.Helper()
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.st.db.QueryRow(`SELECT (SELECT count(*) FROM lex_segments), (SELECT count(*) FROM lex_deleted), (SELECT count(*) FROM chunks),
		(SELECT coalesce(sum(postings), 0) FROM lex_segments)`).Scan(&segs, &dead, &chunks, &postings)
	return
}

// After many one-file saves, keyword search scores every chunk as a fresh
// build of the same files does: replaced chunks neither match nor count
// in a word's document frequency.
func TestSyncedKeywordsScoreAsRebuilt(t *testing.T) {
	src, dir, vocab := syncSaves(t, 60, 150)
	fresh := t.TempDir()
	build(t, fresh, testOptions(nil, src))
	type scored struct {
		key   string
		score float64
	}
	results := func(dir, q string) []scored {
		ix, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		hits, _, _, err := ix.lexicalHits(context.Background(), q, 1<<20, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []scored
		for _, h := range hits {
			var path string
			var ord int
			ix.st.db.QueryRow(`SELECT d.path, c.ord FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?`, h.ID).Scan(&path, &ord)
			out = append(out, scored{fmt.Sprintf("%s#%d", path, ord), h.Score})
		}
		// Equal scores are ordered by chunk id, which differ between
		// the two indexes.
		slices.SortFunc(out, func(a, b scored) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return strings.Compare(a.key, b.key)
		})
		return out
	}
	queries := append([]string{"alpha bravo", "retention of storage blocks", "query label metric", "zulu"}, vocab[:8]...)
	for _, q := range queries {
		got, want := results(dir, q), results(fresh, q)
		if len(got) != len(want) {
			t.Errorf("%q: %d hits after the saves, %d in a fresh build", q, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i].key != want[i].key || math.Abs(got[i].score-want[i].score) > 1e-9 {
				t.Errorf("%q: hit %d is %s %.6f after the saves, %s %.6f in a fresh build", q, i, got[i].key, got[i].score, want[i].key, want[i].score)
				break
			}
		}
	}
}

// Saves leave few segments, O(log n) of the postings, and merges purge
// the postings of replaced chunks: never more than about purgeShare of
// the chunks the segments name are dead.
func TestSyncedKeywordSegmentsStayFewAndPurged(t *testing.T) {
	_, dir, _ := syncSaves(t, 60, 150)
	segs, dead, chunks, postings := keywordCounts(t, dir)
	classes := 1 + int(math.Log(float64(max(postings, mergeUnit))/mergeUnit)/math.Log(mergeFanout))
	if limit := (mergeFanout - 1) * classes; segs > limit {
		t.Errorf("%d segments for %d postings, more than %d", segs, postings, limit)
	}
	if limit := int(1.5 * purgeShare * float64(chunks+dead)); dead > limit {
		t.Errorf("%d of the %d chunk ids in the postings are dead, more than %d: merges do not purge them", dead, chunks+dead, limit)
	}
}
