package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/dbtest"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/testmodels"
	"github.com/lore-cli/lore/session"
	"github.com/lore-cli/lore/wire"
)

// A command that fails before a first build begins leaves no index
// behind: `index list` and completion would offer a phantom "not built"
// (issue 34, smaller traps).
func TestFailedFirstBuildLeavesNoIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(docs string) []string
	}{
		{"no paths", func(string) []string { return []string{"--index", "ghost", "index"} }},
		{"ollama down", func(docs string) []string { return []string{"--index", "ghost", "index", docs} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
			if r := e.run(false, tc.args(sampleDocs(t))...); r.code == 0 {
				t.Fatalf("the build succeeded: %q", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(e.home, "data", "lore", "indexes", "ghost")); !os.IsNotExist(err) {
				t.Errorf("the failed build left its index folder: %v", err)
			}
			if r := e.run(false, "index", "list"); strings.Contains(r.stdout, "ghost") {
				t.Errorf("index list shows the phantom:\n%s", r.stdout)
			}
			// The retry that works is not hindered by the first attempt.
			if r := e.run(false, "--index", "ghost", "index", "--embedder", "none", sampleDocs(t)); r.code != 0 {
				t.Errorf("retry: exit %d %q", r.code, r.stderr)
			}
		})
	}
}

// An index folder with nothing built in it (left by an older lore) is
// removed as "not built", not with the size of the lock the removal
// itself holds.
func TestRemovePhantomIndex(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.home, "data", "lore", "indexes", "ghost")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "lock"), nil, 0o644)
	r := e.run(false, "index", "rm", "--yes", "ghost")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "removed index ghost (not built)" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Without HOME, lore refuses with the fix rather than writing its indexes
// and log under ./.local of whatever folder it was started in.
func TestNoHomeRefuses(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv("HOME", "") // os.UserHomeDir, the fallback, reads it
	for _, args := range [][]string{
		{"index", "list"},
		{"index", "--embedder", "none", sampleDocs(t)},
		{"sessions", "list"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			e := &env{t: t, vars: map[string]string{}}
			r := e.run(false, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "HOME is not set") || !strings.Contains(r.stderr, "XDG_DATA_HOME") {
				t.Errorf("exit %d, stderr %q", r.code, r.stderr)
			}
			if left, _ := os.ReadDir(wd); len(left) > 0 {
				t.Errorf("wrote into the working directory: %v", left)
			}
		})
	}
	// lore doctor reports it, and writes no log there either.
	e := &env{t: t, vars: map[string]string{"OLLAMA_HOST": "http://127.0.0.1:1"}}
	if r := e.run(false, "doctor"); r.code != exitError || !strings.Contains(r.stdout, "HOME is not set") {
		t.Errorf("doctor: exit %d, stdout %q", r.code, r.stdout)
	}
	if left, _ := os.ReadDir(wd); len(left) > 0 {
		t.Errorf("doctor wrote into the working directory: %v", left)
	}
	// With the XDG folders set, no home is needed.
	home := t.TempDir()
	e = &env{t: t, vars: map[string]string{"XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_STATE_HOME": filepath.Join(home, "state")}}
	if r := e.run(false, "index", "list"); r.code != 0 {
		t.Errorf("with XDG folders: exit %d %q", r.code, r.stderr)
	}
}

// A touch that keeps a file's bytes is no change, in index status as in a
// build; new bytes of the same size are (issue 34).
func TestStatusComparesBytesWhenOnlyMTimeMoved(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	guide := filepath.Join(docs, "guide.md")
	later := time.Now().Add(time.Hour)
	changed := func() string {
		t.Helper()
		r := e.run(false, "index", "status", "--json")
		var st struct {
			Changed []struct{ Path, Change string } `json:"changed"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status: %v %q", err, r.stderr)
		}
		return fmt.Sprint(st.Changed)
	}
	os.Chtimes(guide, later, later)
	if got := changed(); got != "[]" {
		t.Errorf("after a touch: changed %s", got)
	}
	body, _ := os.ReadFile(guide)
	os.WriteFile(guide, bytes.ToUpper(body), 0o644)
	os.Chtimes(guide, later.Add(time.Hour), later.Add(time.Hour))
	if got, want := changed(), fmt.Sprintf("[{%s modified}]", guide); got != want {
		t.Errorf("after an edit of the same size: changed %s, want %s", got, want)
	}
}

// saveSessionOn stores a one-turn session asked on index name and returns
// its id.
func saveSessionOn(t *testing.T, e *env, name, question string) string {
	t.Helper()
	cfg, err := config.Load("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cfg.DataDir, 0o755)
	st, err := session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := session.NewID()
	if _, err := st.Append(context.Background(), id, session.Turn{Question: question, Answer: "an answer", Index: name}); err != nil {
		t.Fatal(err)
	}
	return id
}

// A follow-up on another index than its session's is refused: it would be
// answered from other documents and relabel the session (issue 34).
func TestAskSessionOfAnotherIndex(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	id := saveSessionOn(t, e, "work", "how do I deploy?")
	for _, args := range [][]string{
		{"--index", "notes", "ask", "--session", id, "and on Windows?"},
		{"--index", "notes", "ask", "--json", "--session", id, "and on Windows?"},
	} {
		r := e.run(false, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, `was asked on index "work", not "notes"`) || !strings.Contains(r.stderr, "--index work") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := e.run(false, "sessions", "show", "--json", id)
	if !strings.Contains(r.stdout, `"index": "work"`) || strings.Contains(r.stdout, "Windows") {
		t.Errorf("the session changed:\n%s", r.stdout)
	}
}

// sessions list --index lists that index's sessions, as the chat's
// /sessions does; without it, every session.
func TestSessionsListByIndex(t *testing.T) {
	e := newEnv(t)
	work := saveSessionOn(t, e, "work", "how do I deploy?")
	notes := saveSessionOn(t, e, "notes", "where are my notes?")
	old := saveSessionOn(t, e, "", "saved before sessions knew their index")
	for _, tc := range []struct {
		args       []string
		want, hide []string
	}{
		{[]string{"sessions", "list"}, []string{work, notes, old}, nil},
		{[]string{"--index", "work", "sessions", "list"}, []string{work, old}, []string{notes}},
		{[]string{"--index", "notes", "sessions", "list", "--json"}, []string{notes, old}, []string{work}},
	} {
		r := e.run(false, tc.args...)
		for _, id := range tc.want {
			if !strings.Contains(r.stdout, id) {
				t.Errorf("%v does not list %s:\n%s", tc.args, id, r.stdout)
			}
		}
		for _, id := range tc.hide {
			if strings.Contains(r.stdout, id) {
				t.Errorf("%v lists %s:\n%s", tc.args, id, r.stdout)
			}
		}
	}
}

// Messages that name the problem and the fix (issue 34, "Messages").
func TestMessagesSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // in stderr
	}{
		{"did you mean", nil, []string{"serch", "foo"}, exitUsage, `unknown command "serch" for "lore" (did you mean search`},
		{"did you mean a subcommand", nil, []string{"sessions", "lsit"}, exitUsage, `(did you mean list?)`},
		{"missing argument", nil, []string{"sessions", "rm"}, exitUsage, "missing ID: lore sessions rm ID"},
		{"too many arguments", nil, []string{"index", "rm", "a", "b"}, exitUsage, "2 arguments where lore index rm takes one NAME"},
		{"size without B", nil, []string{"index", "--embedder", "none", "--max-file-size", "10M", "DOCS"}, exitOK, ""},
		{"not a size", nil, []string{"index", "--embedder", "none", "--max-file-size", "10X", "DOCS"}, exitUsage, `"10X" is not a size`},
		{"chunk size in bytes", nil, []string{"index", "--chunk-size", "10", "DOCS"}, exitUsage, "outside 200..20000 bytes (set by --chunk-size)"},
		{"env var named", map[string]string{"LORE_CHUNK_SIZE": "-1"}, []string{"index", "DOCS"}, exitUsage, "(set by LORE_CHUNK_SIZE)"},
		{"dash path", nil, []string{"index", "-dash.md"}, exitUsage, "a path that starts with - goes after --: lore index -- -dash.md"},
		{"hidden index name", nil, []string{"--index", ".hidden", "index", "list"}, exitUsage, "starting with a letter or digit"},
		{"one file", nil, []string{"index", "--embedder", "none", "ONE"}, exitOK, "1 file indexed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			maps.Copy(e.vars, tc.env)
			docs := sampleDocs(t)
			args := slices.Clone(tc.args)
			for i, a := range args {
				switch a {
				case "DOCS":
					args[i] = docs
				case "ONE":
					args[i] = filepath.Join(docs, "guide.md")
				}
			}
			r := e.run(false, args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q, want %q in it", r.code, tc.code, r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "1 files") || strings.Contains(r.stderr, "1 chunks") {
				t.Errorf("plural of one: %q", r.stderr)
			}
		})
	}
}

// The graph phase begins before its total is known: no "0/0".
func TestProgressLineGraphWithoutTotal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		if got := progressLine(index.Progress{Phase: "graph"}, time.Now(), tty, 80); got != "updating vector graph…" {
			t.Errorf("tty %v: %q", tty, got)
		}
		if got := progressLine(index.Progress{Phase: "graph", GraphDone: 5, GraphTotal: 10}, time.Now(), tty, 80); got != "updating vector graph 5/10" {
			t.Errorf("tty %v: %q", tty, got)
		}
	}
}

// A --json command that fails prints the wire error shape on stdout as
// well as its line on stderr, so that `lore search --json … | jq` sees
// why (issue 34).
func TestJSONCommandsFailInJSON(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		typ, ecode string
	}{
		{[]string{"--index", "nosuch", "search", "--json", "foo"}, exitError, "not_found_error", "index_not_found"},
		{[]string{"--index", "nosuch", "ask", "--json", "foo"}, exitError, "not_found_error", "index_not_found"},
		{[]string{"--index", "nosuch", "index", "status", "--json"}, exitError, "not_found_error", "index_not_found"},
		{[]string{"search", "--json", "-k", "0", "foo"}, exitUsage, "invalid_request_error", "usage"},
		{[]string{"index", "--json"}, exitError, "invalid_request_error", "no_sources"},
		{[]string{"index", "--json", "/nonexistent/folder"}, exitUsage, "invalid_request_error", "bad_source"},
		{[]string{"sessions", "show", "--json", "0123456789ab"}, exitError, "not_found_error", "session_not_found"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			e := newEnv(t)
			e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
			saveSessionOn(t, e, "default", "another session")
			r := e.run(false, tc.args...)
			var got wire.Error
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%q (stderr %q)", err, r.stdout, r.stderr)
			}
			line := strings.TrimPrefix(strings.TrimSpace(r.stderr), "lore: ")
			if r.code != tc.code || got.Error.Type != wire.ErrorType(tc.typ) || got.Error.Code != tc.ecode || got.Error.Message != line {
				t.Errorf("exit %d (want %d), %+v; stderr %q", r.code, tc.code, got, r.stderr)
			}
		})
	}
	// Without --json, stdout stays empty.
	e := newEnv(t)
	if r := e.run(false, "--index", "nosuch", "search", "foo"); r.stdout != "" || r.code != exitError {
		t.Errorf("without --json: exit %d, stdout %q", r.code, r.stdout)
	}
}

// lore ask --json stopped by SIGTERM prints the partial answer and says
// it was cancelled (issue 34).
func TestAskJSONSaysCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e, srv := askEnv(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"The partial ", "never sent"}, Hang: true})
	cmd := exec.Command(os.Args[0], "ask", "--json", "--index", "go", "how do I cancel a context?")
	cmd.Env = []string{"LORE_TEST_MAIN=1"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.Streaming() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("lore ask did not stop on SIGTERM")
	}
	out := askJSONOut(t, stdout.String())
	if code := cmd.ProcessState.ExitCode(); code != exitCancelled || !out.Cancelled {
		t.Fatalf("exit %d, %+v, stderr %q", code, out, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"cancelled": true`) {
		t.Errorf("stdout does not say cancelled:\n%s", stdout.String())
	}
	// The session keeps the partial answer as a cancelled one.
	if out.Session == "" {
		t.Fatal("the partial answer was not saved")
	}
	if r := e.run(false, "sessions", "show", "--json", out.Session); !strings.Contains(r.stdout, `"cancelled": true`) {
		t.Errorf("sessions show: exit %d\n%s", r.code, r.stdout)
	}
	if r := e.run(false, "sessions", "show", out.Session); !strings.Contains(r.stdout, "(cancelled: the answer above is partial)") {
		t.Errorf("sessions show: exit %d\n%s", r.code, r.stdout)
	}
}

// index status reads the index's numbers, not every page: the full
// integrity check, which takes seconds on a large index, is --check's and
// doctor's (issue 34). Damage in pages status does not read shows the
// difference.
func TestStatusLeavesTheDeepCheckToCheck(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	if r := e.run(false, "index", "--embedder", "none", "-q", sampleDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	db := e.indexFile("index.db")
	dbtest.SmashPages(t, db, dbtest.TablePages(t, db, "lex_postings"))
	if r := e.run(false, "index", "status"); r.code != exitOK || strings.Contains(r.stdout, "damaged") {
		t.Errorf("status ran the deep check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(false, "index", "status", "--check"); r.code != exitDamaged || !strings.Contains(r.stdout, "damaged") || !strings.Contains(r.stdout, "lore index --rebuild") {
		t.Errorf("status --check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(false, "doctor"); !strings.Contains(r.stdout, "quick_check") || r.code != exitError {
		t.Errorf("doctor: exit %d\n%s", r.code, r.stdout)
	}
}

// With Ollama up and the chat model not pulled, ask answers with passages
// and says the model is missing, not that no model is reachable (issue 34).
func TestAskWithModelMissingSaysSo(t *testing.T) {
	e, _ := askEnv(t)
	r := e.run(false, "ask", "--index", "go", "-m", "nosuch:1b", "how do I cancel a context?")
	if r.code != exitSourcesOnly || strings.Contains(r.stderr, "no language model reachable") || !strings.Contains(r.stderr, "chat model nosuch:1b not pulled") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// An int8 folder refused by models import on the pure-Go backend is told
// to import an fp32 export: it came from no hub to pull from (issue 34).
func TestImportInt8AdvisesAnImport(t *testing.T) {
	e := newEnv(t)
	e.vars["LORE_RERANKER"] = "hugot"
	folder := filepath.Join(t.TempDir(), "m-int8")
	cfg := testmodels.Tiny
	cfg.Quant = testmodels.QInt8
	if err := testmodels.WriteCrossEncoder(folder, cfg, nil); err != nil {
		t.Fatal(err)
	}
	r := e.run(false, "models", "import", folder, "--name", "org/q")
	if r.code != exitUsage || !strings.Contains(r.stderr, "int8-quantised") || strings.Contains(r.stderr, "models pull") || !strings.Contains(r.stderr, "import an fp32 export") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// models rm of the model in use, with a model of another name left, says
// how to rerank with that one rather than advising a download (issue 34).
func TestModelsRmNamesWhatIsLeft(t *testing.T) {
	e := newEnv(t)
	e.vars["LORE_RERANKER"] = "hugot"
	models := filepath.Join(e.home, "data", "lore", "models")
	for _, name := range []string{"cross-encoder/ms-marco-TinyBERT-L-2-v2", "org/mine"} {
		if err := testmodels.WriteCrossEncoder(filepath.Join(models, strings.ReplaceAll(name, "/", "__")), testmodels.Tiny, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(false, "models", "rm", "cross-encoder/ms-marco-TinyBERT-L-2-v2")
	if r.code != 0 || !strings.Contains(r.stdout, "set rerank-model: org/mine") || strings.Contains(r.stdout, "models pull") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// sessions show before any session was saved says there is none, rather
// than SQLite's "unable to open database file", and creates nothing.
func TestSessionsShowBeforeAnySession(t *testing.T) {
	e := newEnv(t)
	r := e.run(false, "sessions", "show", "abc123")
	if r.code == 0 || !strings.Contains(r.stderr, "no such session") || strings.Contains(r.stderr, "unable to open") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
