package local

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

// An index whose keyword postings were keyed by segment (as lore wrote
// them before live sync) is read as it is, with the same ranking, and the
// next write converts it once: after that every word still finds exactly
// the chunks that hold it, and a save is applied on the new layout.
func TestSegmentKeyedPostingsAreUpgraded(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	vocab := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet retention storage scrape")
	files := map[string]string{}
	for i := range 40 {
		var b strings.Builder
		for s := range 3 {
			fmt.Fprintf(&b, "## Part %d\n\n", s)
			for j := range 30 {
				b.WriteString(vocab[(i*7+s*3+j*j)%len(vocab)] + " ")
			}
			b.WriteString("\n\n")
		}
		files[fmt.Sprintf("f%02d.md", i)] = b.String()
	}
	writeFiles(t, src, files)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	// A few refreshes: more than one segment, some dead chunks.
	for round := range 3 {
		writeFiles(t, src, map[string]string{fmt.Sprintf("f%02d.md", round): "## Edited\n\nbravo golf retention " + vocab[round] + "\n"})
		age(t, src)
		build(t, dir, testOptions(nil))
	}
	ranked := func() []string {
		t.Helper()
		ix, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var out []string
		for _, q := range []string{"bravo golf", "retention storage scrape", "alpha", "edited india"} {
			res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				out = append(out, fmt.Sprintf("%s %s:%d", q, h.Path, h.Start))
			}
		}
		return out
	}
	want := ranked()
	if segs, _, _, _ := keywordCounts(t, dir); segs < 2 {
		t.Fatalf("%d keyword segment: the test needs several", segs)
	}

	segmentKeyed(t, genPath(t, dir, dbFile))
	if got := ranked(); !slices.Equal(got, want) {
		t.Errorf("segment-keyed postings rank otherwise:\n%q\nwant\n%q", got, want)
	}
	checkKeywordIndex(t, dir, vocab)

	os.WriteFile(filepath.Join(src, "f10.md"), []byte("## Saved\n\nhotel juliet zulu\n"), 0o644)
	age(t, src)
	build(t, dir, testOptions(nil))
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	major, err := termMajor(context.Background(), ix.st.db)
	var index string
	ix.st.db.QueryRow(`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'lex_postings_seg'`).Scan(&index)
	ix.Close()
	if err != nil || !major || index == "" {
		t.Fatalf("after a write: keyed by term %v (%v), segment index %q", major, err, index)
	}
	checkKeywordIndex(t, dir, append(vocab, "zulu", "saved"))
	if lexicalCount(t, dir, "zulu") != 1 {
		t.Error("the save after the upgrade is not found")
	}
}

// segmentKeyed rewrites an index's postings into the layout keyed by
// segment first, as lore wrote it before.
func segmentKeyed(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`ALTER TABLE lex_postings RENAME TO lex_postings_term`,
		`CREATE TABLE lex_postings(term TEXT NOT NULL, seg INTEGER NOT NULL, df INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(seg, term)) WITHOUT ROWID`,
		`INSERT INTO lex_postings SELECT term, seg, df, data FROM lex_postings_term`,
		`DROP TABLE lex_postings_term`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if major, err := termMajor(context.Background(), db); err != nil || major {
		t.Fatalf("the rewritten postings still read as keyed by term (%v)", err)
	}
}
