package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// hostile are the bytes an answer, a file name or a server must not get to
// the terminal: an OSC 52 clipboard write, an OSC 0 window title, a CSI
// that clears the screen, an 8-bit CSI, a carriage return and a bell.
var hostile = []string{"\x1b", "\a", "\r", "\u009b", "52;c;", "cHduZWQ=", "owned"}

func checkNoHostile(t *testing.T, what, out string) {
	t.Helper()
	for _, h := range hostile {
		if strings.Contains(out, h) {
			t.Errorf("%s holds %q:\n%q", what, h, out)
		}
	}
}

// A model answer that carries escape sequences, split across stream
// chunks, reaches neither a pipe nor a terminal (issue 23, item 2); --json
// keeps it, escaped, and sessions show strips it from the saved turn.
func TestAskStripsEscapeSequences(t *testing.T) {
	e, srv := askEnv(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{
		"Use With\x1b]5", "2;c;cHduZWQ=", "\aTimeout\x1b]0;", "owned\x1b", "\\ to \x1b[2Jcancel\r [1].\r\n",
		"\u009b31mDone.",
	}})
	const question = "how do I cancel a context?\x1b]0;owned\a"
	want := "Use WithTimeout to cancel [1].\nDone."

	r := e.run(false, "ask", "--index", "go", question)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	checkNoHostile(t, "piped answer", r.stdout)
	if !strings.HasPrefix(r.stdout, want+"\n") {
		t.Errorf("piped answer:\n%q", r.stdout)
	}

	r = e.run(true, "ask", "--index", "go", question)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	plain := ansi.Strip(r.stdout)
	checkNoHostile(t, "answer on a terminal", plain)
	for _, h := range []string{"\x1b]", "\a", "\x1b[2J", "\u009b"} { // lore's own styles are CSI SGR only
		if strings.Contains(r.stdout, h) {
			t.Errorf("answer on a terminal holds %q:\n%q", h, r.stdout)
		}
	}
	if !strings.Contains(plain, "Use WithTimeout to cancel [1].") {
		t.Errorf("answer on a terminal:\n%s", plain)
	}

	r = e.run(false, "ask", "--json", "--index", "go", question)
	if strings.ContainsAny(r.stdout, "\x1b\a\r\u009b") {
		t.Errorf("--json holds raw control characters:\n%q", r.stdout)
	}
	out := askJSONOut(t, r.stdout)
	if !strings.Contains(out.Answer, "\x1b]52;c;cHduZWQ=\a") || !strings.Contains(out.Answer, "\u009b31m") {
		t.Errorf("--json is data and keeps the answer as the model wrote it: %q", out.Answer)
	}

	r = e.run(false, "sessions", "show", out.Session)
	checkNoHostile(t, "sessions show", r.stdout)
	if !strings.Contains(r.stdout, "## 1. how do I cancel a context?\n\n"+want) {
		t.Errorf("sessions show:\n%q", r.stdout)
	}
	r = e.run(false, "sessions", "list")
	checkNoHostile(t, "sessions list", r.stdout)
	if !strings.Contains(r.stdout, "how do I cancel a context?") {
		t.Errorf("sessions list:\n%q", r.stdout)
	}
	var raw []struct{ Title string }
	if r = e.run(false, "sessions", "list", "--json"); json.Unmarshal([]byte(r.stdout), &raw) != nil || len(raw) == 0 || raw[0].Title != question {
		t.Errorf("sessions list --json: %q", r.stdout)
	}
	if r = e.run(false, "sessions", "show", "--json", out.Session); strings.ContainsAny(r.stdout, "\x1b\a\r\u009b") || !strings.Contains(r.stdout, `\u009b31m`) {
		t.Errorf("sessions show --json holds raw control characters:\n%q", r.stdout)
	}
}

// lore eval -v prints questions and notes from a question file and a
// model: stripped of escapes like everything else.
func TestEvalVerboseStripsEscapeSequences(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	if r := e.run(false, "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Use \x1b]52;c;cHduZWQ=\aWithTimeout [1]", " and [9]\x1b]0;owned\a."}})
	qs := writeEvalSet(t, `{"id":"time\u001b[2Jout","question":"how do I cancel a context after a timeout\u001b]0;owned\u0007","kind":"howto","gold":[{"path":"context.md","lines":[5,5]}],"answer_keywords":["WithTimeout"]}`+"\n")
	r := e.run(false, "eval", qs, "-v")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkNoHostile(t, "eval -v", r.stdout)
	checkNoHostile(t, "eval -v stderr", r.stderr)
	if !strings.Contains(r.stdout, "timeout  hit at 1  [howto]\n  how do I cancel a context after a timeout\n") {
		t.Errorf("eval -v:\n%s", r.stdout)
	}
}

// An error that quotes a server's reply is printed without the escapes the
// reply carried.
func TestServerErrorStripsEscapeSequences(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	hostileSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/embed" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]string{"error": "out of memory\x1b]52;c;cHduZWQ=\a\x1b]0;owned\a\r\x1b[2K\u009b1m: try a smaller model"})
			return
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hostileSrv.Close)
	e.vars["OLLAMA_HOST"] = hostileSrv.URL
	r := e.run(false, "index", "-q", searchDocs(t))
	if r.code == 0 {
		t.Fatalf("index through a failing embedder: exit 0\n%s", r.stderr)
	}
	checkNoHostile(t, "the error", r.stderr)
	if !strings.Contains(r.stderr, "out of memory: try a smaller model") {
		t.Errorf("the error does not quote the server:\n%q", r.stderr)
	}
}

// File names and headings with escape sequences are printed stripped in
// lore search and lore index status: an ESC cannot colour or clear the
// terminal, a newline cannot split a result line (issue 11, item 9; issue
// 23, item 2).
func TestControlCharactersInNames(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"evil\x1b[31mred.md":      "# Zebra \x1b[2J heading\x1b]0;owned\a\n\nzebra crossing text\n",
		"two\nlines.md":           "# Zebra too\n\nzebra crossing again\n",
		"title\x1b]0;owned\a.txt": "zebra crossing at last\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Skip("this file system does not take such names")
		}
	}
	if r := e.run(false, "index", "--embedder", "none", dir); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	for _, tty := range []bool{false, true} {
		r := e.run(tty, "search", "zebra crossing")
		out := r.stdout
		if tty {
			out = ansi.Strip(out)
			if strings.Contains(r.stdout, "\x1b]") || strings.Contains(r.stdout, "\x1b[2J") || strings.Contains(r.stdout, "\x1b[31m") {
				t.Errorf("search on a terminal:\n%q", r.stdout)
			}
		}
		checkNoHostile(t, "search", out)
		for _, want := range []string{"evilred.md:", "> Zebra  heading", "two lines.md:", "title.txt:"} {
			if r.code != 0 || !strings.Contains(out, want) {
				t.Errorf("search (terminal %v): no %q in\n%q", tty, want, out)
			}
		}
	}
	// A warning that names a file (here: one that is not UTF-8).
	os.WriteFile(filepath.Join(dir, "latin\x1b]0;owned\a.txt"), []byte("caf\xe9 zebra\n"), 0o644)
	r := e.run(false, "index", "--embedder", "none", dir)
	checkNoHostile(t, "index warnings", r.stderr)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: latin.txt: invalid UTF-8") {
		t.Errorf("index: exit %d\n%q", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "evil\x1b[31mred.md"), []byte("# changed\n"), 0o644)
	r = e.run(false, "index", "status")
	checkNoHostile(t, "index status", r.stdout)
	if !strings.Contains(r.stdout, "evilred.md") {
		t.Errorf("index status:\n%q", r.stdout)
	}
}

// lore doctor quotes the server (its version) on its lines: without the
// escapes a hostile server put there, on a terminal or not.
func TestDoctorStripsEscapeSequences(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	srv.Version = "0.17.4\x1b]52;c;cHduZWQ=\a\x1b]0;owned\a\r\u009b2J"
	e.vars["OLLAMA_HOST"] = srv.URL
	for _, tty := range []bool{false, true} {
		r := e.run(tty, "doctor")
		out := r.stdout
		if tty {
			out = ansi.Strip(out)
			if strings.Contains(r.stdout, "\x1b]") {
				t.Errorf("doctor on a terminal:\n%q", r.stdout)
			}
		}
		checkNoHostile(t, "doctor", out)
		if !strings.Contains(out, "version 0.17.4\n") {
			t.Errorf("doctor (terminal %v):\n%s", tty, out)
		}
	}
}
