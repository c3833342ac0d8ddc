package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/dbtest"
)

// genPath is a file of the index's current generation.
func genPath(t testing.TB, dir, name string) string {
	t.Helper()
	gen := CurrentGeneration(dir)
	if gen == "" {
		t.Fatal("no current generation")
	}
	return filepath.Join(dir, gen, name)
}

func wantDamaged(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, index.ErrCorrupt) {
		t.Fatalf("%s: got %v, want the index reported damaged", what, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `index "test" is damaged`) || !strings.Contains(msg, "lore index --rebuild") || strings.Contains(msg, "\n") {
		t.Fatalf("%s: message %q does not say what happened and how to fix it in one line", what, msg)
	}
}

// An index whose lexical pages are damaged: search, status and a refresh
// all say so, with the fix, where before search said "malformed", status
// said "up to date" and the refresh "3 unchanged" (issue 11, item 8).
func TestDamagedPagesAreReported(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	db := genPath(t, dir, dbFile)
	dbtest.SmashPages(t, db, dbtest.TablePages(t, db, "lex_postings"))

	ix, err := Open(dir, "test")
	if err != nil {
		wantDamaged(t, "open", err)
	} else {
		_, err = ix.Search(context.Background(), "milk", index.SearchOptions{})
		wantDamaged(t, "search", err)
		st, err := ix.Status(context.Background())
		if err == nil && st.Damaged == "" {
			t.Fatalf("status of a damaged index: %+v", st)
		}
		ix.Close()
	}
	sum, err := Build(context.Background(), dir, testOptions(nil))
	wantDamaged(t, "refresh", err)
	if sum.FilesUnchanged != 0 {
		t.Fatalf("refresh of a damaged index counted %d files unchanged", sum.FilesUnchanged)
	}
}

// A database whose first page is gone is "not a database": same message.
func TestNotADatabaseIsReported(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	dbtest.SmashPages(t, genPath(t, dir, dbFile), []int64{1})
	_, err := Open(dir, "test")
	wantDamaged(t, "open", err)
	_, err = Build(context.Background(), dir, testOptions(nil))
	wantDamaged(t, "refresh", err)
}

// A run that did not end cleanly leaves its marker behind; the next reader
// checks the database before trusting it, and a clean one loses the marker.
func TestUncleanRunIsCheckedOnOpen(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	db := genPath(t, dir, dbFile)
	marker := genPath(t, dir, writingFile)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a build that ended cleanly left its marker")
	}
	const deadPID = "2147483647\n" // above any pid_max: no such process
	os.WriteFile(marker, []byte(deadPID), 0o644)
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatalf("a clean database after an unclean run: %v", err)
	}
	ix.Close()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the marker outlived a passed check")
	}

	// Damage no page that opening reads: only the check can see it.
	dbtest.SmashPages(t, db, dbtest.TablePages(t, db, "lex_postings"))
	os.WriteFile(marker, []byte(deadPID), 0o644)
	_, err = Open(dir, "test")
	wantDamaged(t, "open after an unclean run", err)

	// A marker whose writer is alive (this process) is a build in progress.
	os.WriteFile(marker, []byte("0\n"), 0o644)
	markWriting(filepath.Dir(marker))
	if ix, err := Open(dir, "test"); err != nil {
		t.Fatalf("open beside a running build: %v", err)
	} else {
		ix.Close()
	}
}

// --rebuild with no paths starts from the remembered folders and the
// embedder even when index.db is beyond reading.
func TestRebuildDamagedFromRememberedSources(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	r, err := ReadRemembered(dir)
	if err != nil || !slices.Equal(r.Sources, []string{src}) || r.Embedder != "fake" {
		t.Fatalf("sources.json: %+v, %v", r, err)
	}
	db := genPath(t, dir, dbFile)
	dbtest.SmashPages(t, db, dbtest.AllPages(t, db))

	opt := testOptions(emb)
	opt.Rebuild = true
	sum := build(t, dir, opt)
	if sum.FilesIndexed != 3 {
		t.Fatalf("rebuild: %+v", sum)
	}
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.Search(context.Background(), "milk", index.SearchOptions{Embedder: emb})
	if err != nil || len(res.Hits) == 0 || res.Mode != "hybrid" || res.Hits[0].Source != src {
		t.Fatalf("search after the rebuild: %+v %v", res, err)
	}
}

// A damaged graph file is never searched with: the search rebuilds the
// graph from the vectors in index.db, finds what the healthy graph found,
// and says so once; the next refresh saves a good graph (issue 11, item 8).
func TestDamagedGraphIsRebuiltFromVectors(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	search := func() index.Results {
		t.Helper()
		ix, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		res, err := ix.Search(context.Background(), "Remember the milk", index.SearchOptions{Embedder: emb})
		if err != nil || res.Mode != "hybrid" {
			t.Fatalf("search: %v %+v", err, res)
		}
		return res
	}
	want := search()
	if want.Notice != "" {
		t.Fatalf("notice on a healthy graph: %q", want.Notice)
	}
	path := genPath(t, dir, graphFile)
	good, _ := os.ReadFile(path)
	// Every vector in the file points the same way: a graph read as it is
	// would rank nothing by meaning.
	bad := slices.Clone(good)
	vg, _ := readGraphFile(path, 8)
	// The float32 vectors end the file.
	nodes := vg.Len() + vg.tombstones()
	for i := len(bad) - 4*8*nodes; i < len(bad); i += 4 {
		copy(bad[i:], []byte{0, 0, 0x80, 0x3f}) // 1.0
	}
	vg.close()
	os.WriteFile(path, bad, 0o644)

	got := search()
	if !strings.Contains(got.Notice, "graph") || !strings.Contains(got.Notice, "rebuilt") {
		t.Errorf("no notice that the graph was rebuilt: %q", got.Notice)
	}
	var ranks, wantRanks []int
	for _, h := range got.Hits {
		ranks = append(ranks, h.VectorRank)
	}
	for _, h := range want.Hits {
		wantRanks = append(wantRanks, h.VectorRank)
	}
	if !slices.Equal(ranks, wantRanks) {
		t.Errorf("vector ranks with the damaged graph %v, healthy %v", ranks, wantRanks)
	}

	var notices []string
	opt := testOptions(emb)
	opt.Notice = func(s string) { notices = append(notices, s) }
	build(t, dir, opt)
	if len(notices) != 1 || !strings.Contains(notices[0], "graph") {
		t.Errorf("refresh notices %q", notices)
	}
	if _, err := readGraphFile(path, 8); err != nil {
		t.Fatalf("the refresh did not save a good graph: %v", err)
	}
	if search().Notice != "" {
		t.Error("the saved graph is still called damaged")
	}
}

// A record that SQLite reads back fine but with a value lore never wrote
// there (a flipped byte that turned a line number into text) is damage,
// said as such, not a Scan error.
func TestValueOfTheWrongTypeIsDamage(t *testing.T) {
	ix := searchIndex(t, nil)
	if _, err := ix.st.db.Exec(`UPDATE chunks SET start_line = 'x7' WHERE id IN (SELECT id FROM chunks)`); err != nil {
		t.Fatal(err)
	}
	_, err := ix.Search(context.Background(), "cancel", index.SearchOptions{})
	wantDamaged(t, "search", err)
	if !strings.Contains(err.Error(), "a value of the wrong type in column start_line") {
		t.Errorf("the reason should name the column, not database/sql's message: %v", err)
	}
}

// A live-sync batch does not read every page of the index when this
// process published the database and nothing touched it since (a one-file
// save paid about 280 ms for that at 100k chunks); a page damaged after
// that, one the batch itself never reads, is still found by the next
// batch, and a failed batch leaves the next one to check again.
func TestBatchChecksPagesOnlyWhenTouched(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("f%03d.md", i)] = fmt.Sprintf("# File %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("word%d alpha beta gamma. ", i), 40))
	}
	writeFiles(t, src, files)
	age(t, src)
	build(t, dir, testOptions(nil, src))
	save := func(text string) error {
		writeFiles(t, src, map[string]string{"f000.md": "# File 0\n\n" + text + "\n"})
		opt := testOptions(nil)
		opt.Only = []string{filepath.Join(src, "f000.md")}
		_, err := Build(context.Background(), dir, opt)
		return err
	}
	before := pageChecks.Load()
	if err := save("Install lore with a kettle."); err != nil {
		t.Fatal(err)
	}
	if n := pageChecks.Load() - before; n != 0 {
		t.Errorf("a batch after this process's own build checked every page %d time(s)", n)
	}
	// A leaf of other files' chunks, half way through the table.
	db := genPath(t, dir, dbFile)
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var leaves []int64
	rows, err := conn.Query(`SELECT pageno FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf' ORDER BY path`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		leaves = append(leaves, p)
	}
	rows.Close()
	conn.Close()
	if len(leaves) < 10 {
		t.Fatalf("chunks has %d leaf pages, too few to damage one no batch reads", len(leaves))
	}
	dbtest.SmashPages(t, db, leaves[len(leaves)/2:len(leaves)/2+1])
	wantDamaged(t, "a batch after a page was smashed", save("Install lore with a teapot."))
	wantDamaged(t, "the batch after a failed one", save("Install lore with a samovar."))
}
