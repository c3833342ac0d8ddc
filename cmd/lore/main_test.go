package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// env is a test user's environment: XDG folders under a temp dir.
type env struct {
	t    testing.TB
	home string
	vars map[string]string
}

func newEnv(t testing.TB) *env {
	home := t.TempDir()
	return &env{t: t, home: home, vars: map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, "config"),
		"XDG_DATA_HOME":   filepath.Join(home, "data"),
		"XDG_STATE_HOME":  filepath.Join(home, "state"),
	}}
}

type run struct {
	code   int
	stdout string
	stderr string
}

func (e *env) run(tty bool, args ...string) run {
	e.t.Helper()
	return e.runIn("", tty, args...)
}

// runIn runs lore with stdin as a pipe holding stdin.
func (e *env) runIn(stdin string, tty bool, args ...string) run {
	e.t.Helper()
	// stderr is written by the command and, with --debug, by the log from
	// the HTTP client's goroutines (os.Stderr is safe for that; a Buffer is not).
	var out bytes.Buffer
	var errb lockedBuffer
	streams := &ioStreams{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		InTTY: tty, OutTTY: tty, ErrTTY: tty,
		Getenv:   func(k string) string { return e.vars[k] },
		ErrWidth: func() int { return 100 },
		OutWidth: func() int { return 100 },
	}
	code := Main(args, streams)
	return run{code: code, stdout: out.String(), stderr: errb.String()}
}

func sampleDocs(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"guide.md":   "# Guide\n\n## Install\n\nRun `make install`.\n",
		"ref/api.go": "package ref\n\n// Do does.\nfunc Do() {}\n",
		"logo.png":   "\x89PNG",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	return dir
}

func TestIndexJSONAndRefresh(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	r := e.run(false, "index", "--embedder", "none", "--json", docs)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"index", "files_indexed", "files_unchanged", "files_removed", "files_skipped", "chunks", "chunks_embedded", "seconds"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	if sum["files_indexed"].(float64) != 2 || sum["index"] != "default" {
		t.Errorf("summary %v", sum)
	}
	skipped := sum["files_skipped"].([]any)
	if len(skipped) != 1 || skipped[0].(map[string]any)["path"] != filepath.Join(docs, "logo.png") {
		t.Errorf("files_skipped %v", skipped)
	}

	// A refresh sorts files as status does: skipped stays skipped, not
	// "unchanged" (issue 11, item 12).
	r = e.run(false, "index", "--embedder", "none", "--json")
	sum = map[string]any{}
	json.Unmarshal([]byte(r.stdout), &sum)
	if r.code != 0 || sum["files_indexed"].(float64) != 0 || sum["files_unchanged"].(float64) != 2 {
		t.Fatalf("refresh: exit %d %v %s", r.code, sum, r.stderr)
	}

	r = e.run(false, "index", "status", "--json")
	var st map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("status: %v %s", err, r.stderr)
	}
	if fmt.Sprint(st["skipped"]) != fmt.Sprint(sum["files_skipped"]) || st["documents"] != sum["total_files"] {
		t.Errorf("status skipped %v, %v documents; refresh skipped %v, %v files", st["skipped"], st["documents"], sum["files_skipped"], sum["total_files"])
	}
	if st["documents"].(float64) != 2 || st["chunks"].(float64) < 2 || st["embedder"] != "none" {
		t.Errorf("status %v", st)
	}
}

func TestIndexTextOutput(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	r := e.run(false, "index", "--embedder", "none", docs)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, "2 files indexed") || strings.Contains(r.stderr, "\x1b") {
		t.Errorf("plain stderr summary expected, got %q", r.stderr)
	}
	r = e.run(false, "index", "--embedder", "none", "--quiet", docs)
	if r.code != 0 || r.stderr != "" {
		t.Errorf("--quiet printed %q", r.stderr)
	}
	r = e.run(true, "index", "status")
	for _, want := range []string{"documents  2 (code 1, markdown 1)", "embedder   none", "logo.png: unsupported file type", "up to date"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	os.WriteFile(filepath.Join(docs, "guide.md"), []byte("# Changed\n"), 0o644)
	if r = e.run(false, "index", "status"); !strings.Contains(r.stdout, "modified") {
		t.Errorf("status does not show the change:\n%s", r.stdout)
	}
}

func TestIndexWithOllama(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	docs := sampleDocs(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	r := e.run(false, "index", "--json", docs)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var sum struct {
		ChunksEmbedded int `json:"chunks_embedded"`
	}
	json.Unmarshal([]byte(r.stdout), &sum)
	if sum.ChunksEmbedded == 0 || sum.ChunksEmbedded != srv.EmbeddedInputs() {
		t.Fatalf("summary says %d embedded, server saw %d", sum.ChunksEmbedded, srv.EmbeddedInputs())
	}
	r = e.run(false, "index", "status", "--json")
	if !strings.Contains(r.stdout, `"embedder": "nomic-embed-text"`) || !strings.Contains(r.stdout, `"dimension": 8`) {
		t.Errorf("status: %s", r.stdout)
	}
	// A model change is refused with the fix.
	r = e.run(false, "index", "--embed-model", "all-minilm")
	if r.code != 1 || !strings.Contains(r.stderr, "--rebuild") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("model change: exit %d %q", r.code, r.stderr)
	}
	// Ollama gone: a clear one-line error naming the host and the fix.
	os.WriteFile(filepath.Join(docs, "new.md"), []byte("# New\n\ntext\n"), 0o644)
	srv.Close()
	r = e.run(false, "index")
	if r.code != 1 || !strings.Contains(r.stderr, "ollama serve") || !strings.Contains(r.stderr, "--embedder none") && !strings.Contains(r.stderr, srv.URL[len("http://"):]) {
		t.Errorf("no Ollama: exit %d %q", r.code, r.stderr)
	}
}

func TestUsageAndErrors(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"index", "--bogus"}, exitUsage, "unknown flag"},
		{[]string{"index", "status", "extra"}, exitUsage, "unknown command"},
		{[]string{"index", "--embedder", "none", "/no/such/folder"}, exitUsage, "/no/such/folder"},
		{[]string{"index", "--embedder", "none"}, exitError, "lore index ./docs"},
		{[]string{"index", "--embedder", "maybe", "."}, exitUsage, "embedder:"},
		{[]string{"--index", "../x", "index", "status"}, exitUsage, "index:"},
		{[]string{"index", "status"}, exitError, "lore index PATH"},
	}
	for _, tt := range tests {
		r := e.run(false, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and a line with %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}

func TestConfigFileAndEnv(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	cfg := filepath.Join(e.home, "lore.yaml")
	os.WriteFile(cfg, []byte("embedder: none\nindex: notes\n"), 0o644)
	if r := e.run(false, "--config", cfg, "index", "--quiet", docs); r.code != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "lore", "indexes", "notes")); err != nil {
		t.Fatal("index name from the config file not used")
	}
	e.vars["LORE_INDEX"] = "other"
	if r := e.run(false, "--config", cfg, "index", "status"); r.code != 1 || !strings.Contains(r.stderr, `"other"`) {
		t.Errorf("LORE_INDEX not applied over the file: %d %s", r.code, r.stderr)
	}
	if r := e.run(false, "--config", cfg, "--index", "notes", "index", "status"); r.code != 0 {
		t.Errorf("--index not applied over LORE_INDEX: %d %s", r.code, r.stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	e := newEnv(t)
	want := e.run(false, "version")
	if want.code != 0 || !strings.HasPrefix(want.stdout, "lore ") {
		t.Errorf("version: %d %q", want.code, want.stdout)
	}
	for _, flag := range []string{"--version", "-V"} { // the convention, as well as the command
		if r := e.run(false, flag); r.code != 0 || r.stdout != want.stdout {
			t.Errorf("%s: exit %d %q %q, want %q", flag, r.code, r.stdout, r.stderr, want.stdout)
		}
	}
	if r := e.run(false, "index", "--help"); r.code != 0 || !strings.Contains(r.stdout, "lore index ./docs ~/notes") {
		t.Errorf("help lacks examples: %q", r.stdout)
	}
	if r := e.run(false, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("completion: %d", r.code)
	}
}

func TestProgressLine(t *testing.T) {
	p := index.Progress{Phase: "index", FilesTotal: 100, FilesDone: 50, Chunks: 400, ChunksEmbedded: 300, Done: 0.5, Started: time.Now().Add(-10 * time.Second)}
	tty := progressLine(p, time.Now(), true, 120)
	if !strings.HasPrefix(tty, "[") || !strings.Contains(tty, "50/100 files") || !strings.Contains(tty, "emb/s") || !strings.Contains(tty, "ETA 10s") {
		t.Errorf("tty line %q", tty)
	}
	plain := progressLine(p, time.Now(), false, 120)
	if strings.ContainsAny(plain, "[█\x1b") || !strings.HasPrefix(plain, "indexing: 50/100 files") {
		t.Errorf("plain line %q", plain)
	}
	if narrow := progressLine(p, time.Now(), true, 40); strings.Contains(narrow, "█") {
		t.Errorf("a narrow terminal gets no bar: %q", narrow)
	}
	// A terminal line never wraps: a wrapped line is not erased by the
	// next one. The ETA is what stays longest.
	big := index.Progress{Phase: "index", FilesTotal: 123456, FilesDone: 61728, Chunks: 1234567, ChunksEmbedded: 1234000, Done: 0.5, Started: time.Now().Add(-10 * time.Minute)}
	for _, width := range []int{12, 20, 30, 40, 60, 80, 200} {
		for _, q := range []index.Progress{p, big, {Phase: "graph", GraphDone: 123456, GraphTotal: 1234567}} {
			line := progressLine(q, time.Now(), true, width)
			if ansi.StringWidth(line) >= width {
				t.Errorf("%d columns: line %q is %d wide", width, line, ansi.StringWidth(line))
			}
			if q.Phase == "index" && width >= 30 && !strings.Contains(line, "ETA") {
				t.Errorf("%d columns: no ETA in %q", width, line)
			}
		}
	}
	// The first group of files is still being embedded: nothing written
	// yet, but a quarter of the work is done.
	p.FilesDone, p.Done = 0, 0.25
	if first := progressLine(p, time.Now(), true, 120); !strings.Contains(first, "ETA 30s") || !strings.Contains(first, "[███████░") {
		t.Errorf("tty line while the first group embeds %q", first)
	}
}

// TestHostileFlags runs every command with numeric flags out of range and
// other bad values: each must end with one line naming the problem and
// exit 2 (usage) or 1, never a panic or a stack trace.
func TestHostileFlags(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"search", "-k", "-5", "x"}, {"search", "-k", "0", "x"}, {"search", "-k", "1000000", "x"},
		{"search", "--search-depth", "-1", "x"}, {"search", "--rerank-candidates", "-3", "x"},
		{"search", "--reranker", "bogus", "x"}, {"search", "-k", "NaN", "x"},
		{"ask", "-k", "-1", "q"}, {"ask", "-k", "0", "q"}, {"ask", "--mode", "sideways", "q"},
		{"ask", "--context-file", docs + "/guide.md:5-2", "q"}, {"ask", "--session", "../../etc/passwd", "q"},
		{"index", "--chunk-size", "0", docs}, {"index", "--chunk-overlap", "-1", docs},
		{"index", "--embed-batch-size", "0", docs}, {"index", "--max-file-size", "-1", docs},
		{"index", "--max-file-size", "lots", docs}, {"--index", "../escape", "search", "x"},
		{"sessions", "show", "nope"}, {"models", "path", "no/such-model"},
	} {
		r := e.run(false, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code == 0 || !strings.HasPrefix(lines[0], "lore: ") || strings.Contains(r.stderr, "goroutine ") || len(lines) > 2 {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	for _, k := range []string{"-5", "0", "1000000"} {
		if r := e.run(false, "search", "-k", k, "x"); r.code != exitUsage || !strings.Contains(r.stderr, "-k") {
			t.Errorf("-k %s: exit %d %q, want exit 2 naming -k", k, r.code, r.stderr)
		}
	}
}

// A query that looks like a flag is refused with the way to search for it,
// and that way works (issue 11, item 13).
func TestQueryThatLooksLikeAFlag(t *testing.T) {
	e := newEnv(t)
	docs := t.TempDir()
	os.WriteFile(filepath.Join(docs, "flags.md"), []byte("# Flags\n\nUse --keepalive to keep the model loaded.\n"), 0o644)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	r := e.run(false, "search", "--keepalive")
	if r.code != exitUsage || !strings.Contains(r.stderr, "lore search -- --keepalive") {
		t.Errorf("exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "search", "--", "--keepalive"); r.code != 0 || !strings.Contains(r.stdout, "flags.md") {
		t.Errorf("lore search -- --keepalive: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A bad value, index name or path is bad usage: exit 2, as the README
// says, wherever the value was set (issue 11, item 13).
func TestBadInputExitsTwo(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"index", "--chunk-size", "0", docs}, {"index", "--chunk-overlap", "-1", docs},
		{"index", "--embed-batch-size", "0", docs}, {"index", "--max-file-size", "lots", docs},
		{"--index", "../escape", "search", "x"}, {"--index", "", "index", "status"},
		{"--ollama-host", ":::", "search", "x"}, {"search", "--search-depth", "-1", "x"},
		{"search", "--reranker", "bogus", "x"}, {"ask", "--mode", "sideways", "q"},
		{"ask", "--context-file", docs + "/guide.md:5-2", "q"},
		{"index", "/dev/null"}, {"index", filepath.Join(docs, "no-such-folder")},
		{"search", ""}, {"search", " \t"}, {"ask", "  "},
		{"models", "bogus"}, {"sessions", "bogus"}, {"models", "pull", "../x"},
	} {
		if r := e.run(false, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	e.vars["LORE_TOP_K"] = "-4"
	if r := e.run(false, "search", "x"); r.code != exitUsage || !strings.Contains(r.stderr, "top-k") {
		t.Errorf("LORE_TOP_K=-4: exit %d %q", r.code, r.stderr)
	}
}

// A first build that fails because Ollama is down leaves nothing behind
// that blocks the next choice, and says both ways on (issue 11, item 1).
func TestFirstBuildWithoutOllama(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	docs := sampleDocs(t)
	r := e.run(false, "index", docs)
	if r.code != exitError || !strings.Contains(r.stderr, "ollama serve") || !strings.Contains(r.stderr, "--embedder none") {
		t.Fatalf("first build without Ollama: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("the keyword-only retry was refused: %d %q", r.code, r.stderr)
	}
}

// A refresh uses the index's own embedder unless the user asks for another
// (issue 11, item 2).
func TestRefreshUsesTheIndexEmbedder(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := e.run(false, "index"); r.code != 0 || !strings.Contains(r.stderr, "lexical only") {
		t.Fatalf("refresh of a keyword-only index (the summary must say what it holds): %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "index", docs); r.code != 0 {
		t.Fatalf("re-index of a keyword-only index: %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "index", "--embedder", "ollama"); r.code == 0 || !strings.Contains(r.stderr, "--rebuild") {
		t.Fatalf("asking for another embedder must say to rebuild: %d %q", r.code, r.stderr)
	}
}

// dialsOnlyTo records every connection lore makes from now on; the check
// it returns fails the test unless there was one and each went to addr
// (host:port): the offline guarantee.
func dialsOnlyTo(t *testing.T, addr string) (check func()) {
	t.Helper()
	var mu sync.Mutex
	var dialed []string
	recordDials(func(_, a string) {
		mu.Lock()
		defer mu.Unlock()
		dialed = append(dialed, a)
	})
	t.Cleanup(func() { recordDials(nil) })
	return func() {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(dialed) == 0 {
			t.Fatal("no dial was recorded: the hook is not wired")
		}
		for _, a := range dialed {
			if a != addr {
				t.Fatalf("dialed %s offline (Ollama is %s)", a, addr)
			}
		}
	}
}
