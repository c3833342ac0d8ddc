package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/wire"
)

// TestCorruptionSuite damages a real index at random, seed by seed: bytes
// flipped in random pages of index.db, or in graph.hnsw, and runs every
// command on it. Each must work (exit 0, or ask's 3 and 4, with plausible
// output) or say in one line that the index is damaged and how to rebuild
// it (exit 5). None may panic, and none may call the index "up to date" or
// "unchanged" when SQLite's quick_check finds it damaged. The rebuild it
// advises must then work. A damaged graph must not change what a search
// finds.
//
// SQLite is C translated to Go: under -race it runs about ten times
// slower, which made this suite a minute long. It tests no concurrency, so
// it skips under -race; `make test` runs it again without.
func TestCorruptionSuite(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under -race; make test runs it without")
	}
	srv := ollamatest.New(t)
	base := newEnv(t)
	base.vars["OLLAMA_HOST"] = srv.URL
	docs := t.TempDir()
	for i := range 24 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Lantern %d\n\n", i)
		for s := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\nThe lantern number %d keeps section %d of topic%d lit; wick%d and oil%d are refilled at dusk.\n\n", s, i, s, i, i*7+s, s)
		}
		os.WriteFile(filepath.Join(docs, fmt.Sprintf("lantern%02d.md", i)), []byte(b.String()), 0o644)
	}
	if r := base.run(false, "index", "-q", docs); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	baseIndex := filepath.Join(base.vars["XDG_DATA_HOME"], "lore", "indexes")
	// What a search finds on the intact index: a damaged graph must not
	// change it (the graph is rebuilt from the vectors, never searched).
	want := base.run(false, "search", "--json", "-k", "10", "--no-rerank", "oil and wick at dusk")
	if want.code != 0 || !strings.Contains(want.stdout, `"mode": "hybrid"`) {
		t.Fatalf("search: %d %s", want.code, want.stdout+want.stderr)
	}
	wantOrder := resultOrder(t, want.stdout)

	const seeds = 24
	for _, target := range []string{"index.db", "graph.hnsw"} {
		detected, rebuilds := 0, 0
		for seed := int64(1); seed <= seeds; seed++ {
			e := newEnv(t)
			e.vars["OLLAMA_HOST"] = srv.URL
			copyTree(t, baseIndex, filepath.Join(e.vars["XDG_DATA_HOME"], "lore", "indexes"))
			file := e.indexFile(target)
			what := flipBytes(t, file, target == "index.db", rand.New(rand.NewSource(seed)))
			damaged := target == "index.db" && quickCheckFails(t, file)
			pagesDamaged := target == "index.db" && pagesCheckFails(t, file)
			if damaged {
				detected++
			}
			name := fmt.Sprintf("%s seed %d (%s)", target, seed, what)
			if target == "graph.hnsw" {
				r := e.run(false, "search", "--json", "-k", "10", "--no-rerank", "oil and wick at dusk")
				if got := resultOrder(t, r.stdout); r.code != 0 || !slices.Equal(got, wantOrder) {
					t.Errorf("%s: search ranks %v (exit %d), the intact index %v\n%s", name, got, r.code, wantOrder, r.stderr)
				}
			}
			if checkCommands(t, e, name, target == "index.db", seed%4 == 1, damaged, pagesDamaged) && rebuilds < 3 {
				// The rebuild the message advises works (three times per target is enough).
				rebuilds++
				if r := e.run(false, "index", "-q", "--rebuild"); r.code != 0 {
					t.Errorf("%s: the advised rebuild failed: exit %d %s", name, r.code, r.stderr)
				} else if r := e.run(false, "search", "lantern oil"); r.code != 0 || !strings.Contains(r.stdout, "lantern") {
					t.Errorf("%s: search after the rebuild: exit %d %s", name, r.code, r.stdout+r.stderr)
				}
			}
		}
		t.Logf("%s: %d seeds, %d damaged as quick_check sees it", target, seeds, detected)
	}
}

// resultOrder is the passages of `lore search --json`, in order.
func resultOrder(t testing.TB, stdout string) []string {
	var out wire.Search
	json.Unmarshal([]byte(stdout), &out)
	var order []string
	for _, r := range out.Results {
		order = append(order, fmt.Sprintf("%s:%d", r.Path, r.StartLine))
	}
	return order
}

// checkCommands runs commands on a damaged copy of the index and reports
// whether one said it is damaged: search, a refresh and search again; and
// for a damaged database status too, and ask when asked.
//
// damaged is quick_check's verdict, which status --check gives; pagesDamaged is the
// b-tree check a refresh runs before writing (FTS5's check of its own
// records, which would cost a no-change refresh ten times its time, is
// left to status and to the search that reads such a record).
func checkCommands(t *testing.T, e *env, name string, db, ask, damaged, pagesDamaged bool) bool {
	t.Helper()
	sawDamage := false
	cmds := [][]string{{"search", "lantern oil"}, {"index", "-q"}, {"search", "lantern oil"}}
	if db {
		cmds = append([][]string{{"index", "status", "--check"}}, cmds...)
	}
	if ask {
		cmds = append(cmds, []string{"ask", "which lantern keeps topic3 lit?"})
	}
	for _, args := range cmds {
		r := e.run(false, args...)
		out := r.stdout + r.stderr
		if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") || strings.Contains(out, "internal error") {
			t.Fatalf("%s: %q panicked:\n%s", name, args, out)
		}
		if r.code == exitDamaged {
			sawDamage = true
			if args[1] == "status" {
				if !strings.Contains(r.stdout, "damaged") || !strings.Contains(r.stdout, "lore index --rebuild") || strings.Contains(r.stdout, "up to date") {
					t.Errorf("%s: status of a damaged index:\n%s", name, r.stdout)
				}
				continue
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, `index "default" is damaged`) || !strings.HasSuffix(last, "rebuild it: lore index --rebuild") {
				t.Errorf("%s: %q exit 5 without the line that says how to rebuild:\n%s", name, args, r.stderr)
			}
			continue
		}
		ok := r.code == exitOK || args[0] == "ask" && (r.code == exitNotInDocs || r.code == exitSourcesOnly)
		if !ok {
			t.Errorf("%s: %q neither worked nor said the index is damaged: exit %d\n%s", name, args, r.code, out)
			continue
		}
		if args[0] == "index" && (args[1] == "status" && damaged || pagesDamaged) {
			t.Errorf("%s: %q succeeded on an index quick_check calls damaged:\n%s", name, args, out)
		}
		switch args[0] {
		case "search":
			if !strings.Contains(r.stdout, "lantern") || !strings.Contains(r.stdout, ".md") {
				t.Errorf("%s: search found nothing plausible:\n%s", name, out)
			}
		case "ask":
			if r.code == exitOK && !strings.Contains(r.stdout, "WithTimeout") {
				t.Errorf("%s: ask printed no answer:\n%s", name, out)
			}
		}
		// A byte flipped inside a value ("indexed" → "indexee") leaves a
		// record SQLite calls well formed: no check can see it, and status
		// may count a document less. It must still describe the index.
		if m := regexp.MustCompile(`documents  (\d+)`).FindStringSubmatch(r.stdout); args[1] == "status" && (m == nil || atoi(m[1]) < 20 || atoi(m[1]) > 24) {
			t.Errorf("%s: status of a healthy index:\n%s", name, r.stdout)
		}
	}
	if damaged && !sawDamage {
		t.Errorf("%s: quick_check finds damage that no command reported", name)
	}
	return sawDamage
}

// flipBytes damages a file: for a database, 1 to 16 bytes in each of 1 to
// 3 random pages (any page, the header's included); for the graph, 1 to 16
// bytes anywhere. It says what it did.
func flipBytes(t testing.TB, path string, pages bool, rng *rand.Rand) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var did []string
	flip := func(at int) {
		b[at] ^= byte(1 + rng.Intn(255))
	}
	if pages {
		n := len(b) / 4096
		for range 1 + rng.Intn(3) {
			p := rng.Intn(n)
			for range 1 + rng.Intn(16) {
				flip(p*4096 + rng.Intn(4096))
			}
			did = append(did, fmt.Sprintf("page %d/%d", p+1, n))
		}
	} else {
		for range 1 + rng.Intn(16) {
			at := rng.Intn(len(b))
			flip(at)
			did = append(did, fmt.Sprintf("byte %d/%d", at, len(b)))
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Join(did, ", ")
}

// quickCheckFails runs SQLite's quick_check on a database, as an outsider.
func quickCheckFails(t testing.TB, db string) bool {
	return checkFails(t, db, `PRAGMA quick_check`)
}

// pagesCheckFails is quick_check of each ordinary table's b-tree, without
// FTS5's own check of its records: what a refresh checks before it writes.
func pagesCheckFails(t testing.TB, db string) bool {
	for _, table := range []string{"meta", "sources", "documents", "vectors", "chunks", "lex_segments", "lex_postings", "lex_deleted", "lex_stats"} {
		if checkFails(t, db, `PRAGMA quick_check(`+table+`)`) {
			return true
		}
	}
	return false
}

func checkFails(t testing.TB, db, pragma string) bool {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var res string
	err = conn.QueryRow(pragma).Scan(&res)
	return err != nil || res != "ok"
}

// copyTree copies a folder of regular files.
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
