package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// twoIndexes builds "default" and "work" from the sample documents.
func twoIndexes(t *testing.T, e *env) {
	t.Helper()
	docs := sampleDocs(t)
	for _, args := range [][]string{{"index", "--embedder", "none", "-q", docs}, {"--index", "work", "index", "--embedder", "none", "-q", docs}} {
		if r := e.run(false, args...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
}

func TestIndexList(t *testing.T) {
	e := newEnv(t)
	if r := e.run(false, "index", "list", "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("no indexes: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	twoIndexes(t, e)

	r := e.run(false, "index", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("exit %d, not JSON: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(list) != 2 || list[0]["name"] != "default" || list[1]["name"] != "work" {
		t.Fatalf("list: %s", r.stdout)
	}
	for _, k := range []string{"name", "path", "chunks", "size_bytes", "embedder", "built_at", "built", "damaged"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("lacks %q: %v", k, list[0])
		}
	}
	if list[0]["chunks"].(float64) < 2 || list[0]["size_bytes"].(float64) < 4096 || list[0]["embedder"] != "none" || list[0]["built_at"] == nil {
		t.Errorf("default: %v", list[0])
	}

	// A folder lore did not make, named with an 8-bit CSI: listed, but
	// never raw on stdout.
	cfg, err := config.Load("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(cfg.IndexesDir(), "odd\u009b31m"), 0o755)
	r = e.run(false, "index", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `\u009b`) || strings.ContainsRune(r.stdout, 0x9b) {
		t.Errorf("--json with an odd name: exit %d %q", r.code, r.stdout)
	}
	if r = e.run(true, "index", "list"); strings.ContainsRune(r.stdout, 0x9b) {
		t.Errorf("table with an odd name: %q", r.stdout)
	}
	os.Remove(filepath.Join(cfg.IndexesDir(), "odd\u009b31m"))

	r = e.run(false, "index", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "default ") ||
		!strings.HasPrefix(lines[2], "work ") || !strings.Contains(lines[1], " none") || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("plain table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestIndexListFitsTheTerminal(t *testing.T) {
	built := time.Date(2026, 11, 25, 16, 28, 0, 0, time.UTC)
	list := []index.Info{
		{Name: "default", Chunks: 1234, SizeBytes: 5 << 20, Embedder: "nomic-embed-text:latest", BuiltAt: &built, Built: true},
		{Name: "a-rather-long-index-name", Chunks: 5, SizeBytes: 40 << 10, Embedder: "none", BuiltAt: &built, Built: true},
		{Name: "half", SizeBytes: 4096},
	}
	for _, tt := range []struct {
		tty   bool
		width int
	}{{true, 40}, {true, 60}, {false, 40}} {
		var out, errb bytes.Buffer
		streams := &ioStreams{Out: &out, Err: &errb, OutTTY: tt.tty, Getenv: func(string) string { return "" }, OutWidth: func() int { return tt.width }}
		printIndexList(streams, list, built.Add(3*time.Hour))
		got := out.String()
		for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
			if w := ansi.StringWidth(l); tt.tty && w >= tt.width {
				t.Errorf("width %d: a line of %d columns: %q", tt.width, w, ansi.Strip(l))
			}
		}
		if tt.tty != strings.Contains(got, "\x1b[1m") {
			t.Errorf("tty %v: styled header %v:\n%s", tt.tty, !tt.tty, got)
		}
		if !tt.tty && (!strings.Contains(got, "nomic-embed-text:latest") || !strings.Contains(got, "(3h ago)") || !strings.Contains(got, "not built")) {
			t.Errorf("piped output is cut:\n%s", got)
		}
	}
}

// lore index list lists: it used to index a folder named list. ./list
// still indexes it.
func TestIndexListIsNotAPath(t *testing.T) {
	e := newEnv(t)
	twoIndexes(t, e)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "list"), 0o755)
	os.WriteFile(filepath.Join(dir, "list", "groceries.md"), []byte("# Groceries\n\nMilk and bread.\n"), 0o644)
	t.Chdir(dir)
	sources := func() string {
		r := e.run(false, "index", "status", "--json")
		var st struct{ Sources []string }
		json.Unmarshal([]byte(r.stdout), &st)
		return strings.Join(st.Sources, "\n")
	}
	before := sources()
	r := e.run(false, "index", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "work") || sources() != before {
		t.Fatalf("lore index list: exit %d\n%s%s\nsources now %s", r.code, r.stdout, r.stderr, sources())
	}
	if !strings.Contains(r.stderr, "lore index ./list") {
		t.Errorf("no hint for the folder named list: %q", r.stderr)
	}
	if r := e.run(false, "index", "--embedder", "none", "./list"); r.code != 0 || !strings.Contains(sources(), filepath.Join(dir, "list")) {
		t.Errorf("lore index ./list: exit %d %s; sources %s", r.code, r.stderr, sources())
	}
}

func TestIndexRm(t *testing.T) {
	e := newEnv(t)
	twoIndexes(t, e)
	cfg, err := config.Load("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	workDir := filepath.Join(cfg.IndexesDir(), "work")
	exists := func() bool { _, err := os.Stat(workDir); return err == nil }

	// Not on a terminal: refused without --yes, naming the flag.
	r := e.run(false, "index", "rm", "work")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--yes") || strings.Count(r.stderr, "\n") != 1 || !exists() {
		t.Errorf("no tty, no --yes: exit %d %q, still there %v", r.code, r.stderr, exists())
	}
	// On a terminal: asked; anything but yes keeps it.
	r = e.runIn("n\n", true, "index", "rm", "work")
	if r.code != 0 || !strings.Contains(r.stderr, "remove index work (") || !strings.Contains(r.stderr, "chunks, ") ||
		!strings.Contains(r.stderr, "? [y/N] ") || !exists() {
		t.Errorf("answered n: exit %d %q, still there %v", r.code, r.stderr, exists())
	}
	// Being written: refused, saying so.
	lf, err := os.OpenFile(filepath.Join(workDir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Flock(int(lf.Fd()), syscall.LOCK_EX)
	r = e.run(false, "index", "rm", "--yes", "work")
	lf.Close()
	if r.code != exitError || !strings.Contains(r.stderr, "updating this index") || !exists() {
		t.Errorf("locked: exit %d %q, still there %v", r.code, r.stderr, exists())
	}
	// Yes: gone, and lore says what went.
	r = e.runIn("y\n", true, "index", "rm", "work")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "removed index work (") || !strings.Contains(r.stdout, " chunks, ") || exists() {
		t.Errorf("answered y: exit %d %q %q, still there %v", r.code, r.stdout, r.stderr, exists())
	}
	if entries, _ := os.ReadDir(filepath.Dir(workDir)); len(entries) != 1 {
		t.Errorf("left in the indexes folder: %v", entries)
	}
	r = e.run(false, "index", "rm", "--yes", "work")
	if r.code != exitUsage || !strings.Contains(r.stderr, `no index named "work": the indexes are default`) {
		t.Errorf("gone: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "index", "rm", "--yes", "../default"); r.code != exitUsage || !strings.Contains(r.stderr, "not a valid name") {
		t.Errorf("a path for a name: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "index", "rm", "--yes", "default"); r.code != 0 || !strings.HasPrefix(r.stdout, "removed index default (") {
		t.Errorf("--yes: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
