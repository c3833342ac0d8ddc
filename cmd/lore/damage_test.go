package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/dbtest"
)

// indexFile is a file of the current generation of the env's default index.
func (e *env) indexFile(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.vars["XDG_DATA_HOME"], "lore", "indexes", "default")
	gen := local.CurrentGeneration(dir)
	if gen == "" {
		e.t.Fatal("no index built")
	}
	return filepath.Join(dir, gen, name)
}

// wantDamagedLine checks a command ended with one line saying that the
// index is damaged and how to rebuild it (notes may come before it, as
// ask's about Ollama), and exited with exitDamaged.
func wantDamagedLine(t *testing.T, what string, r run) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if r.code != exitDamaged || !strings.HasPrefix(last, `lore: index "default" is damaged (`) ||
		!strings.HasSuffix(last, "lore index --rebuild") || strings.Count(r.stderr, "lore: ") != 1 || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("%s: exit %d, stderr %q; want exit %d and one line saying the index is damaged and how to rebuild it", what, r.code, r.stderr, exitDamaged)
	}
}

// Every command on an index whose lexical pages are damaged says so with
// the fix; `lore index --rebuild` with no paths repairs it (issue 11, item 8).
func TestDamagedIndexCommands(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", "-q", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	db := e.indexFile("index.db")
	dbtest.SmashPages(t, db, dbtest.TablePages(t, db, "lex_postings"))

	r := e.run(false, "index", "--embedder", "none")
	wantDamagedLine(t, "index", r)
	if strings.Contains(r.stderr, "unchanged") {
		t.Errorf("index: %q", r.stderr)
	}
	r = e.run(false, "index", "status", "--check")
	if r.code != exitDamaged || strings.Contains(r.stdout, "up to date") || !strings.Contains(r.stdout, "damaged") ||
		!strings.Contains(r.stdout, "lore index --rebuild") || !strings.Contains(r.stdout, docs) {
		t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(false, "index", "status", "--check", "--json")
	var st index.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != exitDamaged || st.Damaged == "" || len(st.Sources) != 1 {
		t.Errorf("status --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	wantDamagedLine(t, "search", e.run(false, "search", "install"))
	wantDamagedLine(t, "ask", e.run(false, "ask", "how do I install?"))

	r = e.run(false, "index", "--rebuild")
	if r.code != 0 || !strings.Contains(r.stderr, "2 files indexed") {
		t.Fatalf("rebuild: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "search", "install"); r.code != 0 || !strings.Contains(r.stdout, "guide.md") {
		t.Errorf("search after the rebuild: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run(false, "index", "status"); r.code != 0 || !strings.Contains(r.stdout, "up to date") {
		t.Errorf("status after the rebuild: exit %d %q", r.code, r.stdout)
	}
}

// A database beyond reading is rebuilt from the folders and with the
// embedder it was built with, though the configuration says otherwise:
// here keyword-only, with Ollama (the configured embedder) down.
func TestRebuildOfUnreadableIndexKeepsItsEmbedder(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", "-q", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	db := e.indexFile("index.db")
	dbtest.SmashPages(t, db, dbtest.AllPages(t, db))
	wantDamagedLine(t, "search", e.run(false, "search", "install"))
	r := e.run(false, "index", "--rebuild")
	if r.code != 0 || !strings.Contains(r.stderr, "2 files indexed") || !strings.Contains(r.stderr, "embedder it was built with: none") {
		t.Fatalf("rebuild: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "search", "install"); r.code != 0 || !strings.Contains(r.stdout, "guide.md") {
		t.Errorf("search after the rebuild: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
