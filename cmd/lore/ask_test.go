package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

// askEnv is a user with an index of searchDocs built through a fake Ollama.
func askEnv(t *testing.T) (*env, *ollamatest.Server) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	if r := e.run(false, "--index", "go", "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	return e, srv
}

// askJSONOut decodes `lore ask --json`, refusing fields outside the documented shape.
func askJSONOut(t *testing.T, s string) wire.Answer {
	t.Helper()
	var out wire.Answer
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, s)
	}
	return out
}

func TestAskJSONFromStdin(t *testing.T) {
	e, srv := askEnv(t)
	r := e.runIn("how do I cancel a context?\n", false, "ask", "--json", "--index", "go")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := askJSONOut(t, r.stdout)
	if out.Question != "how do I cancel a context?" || out.Answer != "Use WithTimeout [1]." || out.Route != "docs" || out.Mode != "offline" || out.Model != "llama3.2:3b" || out.Session == "" {
		t.Fatalf("%+v", out)
	}
	if len(out.Sources) == 0 || !out.Sources[0].Cited || *out.Sources[0].Path != "context.md" || out.Sources[0].URL != nil {
		t.Fatalf("sources %+v", out.Sources)
	}
	if out.Tokens["completion"] != 3 || out.Tokens["prompt"] == 0 || out.Timings["first_token"] <= 0 || out.Timings["total"] <= 0 {
		t.Fatalf("stats %+v %+v", out.Tokens, out.Timings)
	}
	chats := srv.Chats()
	user := chats[len(chats)-1].Messages[len(chats[len(chats)-1].Messages)-1].Content
	if !strings.Contains(user, "[1] context.md:") || !strings.Contains(user, "Question: how do I cancel") && !strings.HasSuffix(user, "how do I cancel a context?") {
		t.Fatalf("prompt:\n%s", user)
	}

	// A follow-up in the same session sends the history.
	r = e.run(false, "ask", "--json", "--index", "go", "--session", out.Session, "and on Windows?")
	if r.code != exitOK {
		t.Fatalf("follow-up: exit %d %s", r.code, r.stderr)
	}
	var sawHistory bool
	for _, c := range srv.Chats() {
		for _, m := range c.Messages {
			if m.Role == "assistant" && m.Content == "Use WithTimeout [1]." {
				sawHistory = true
			}
		}
	}
	if !sawHistory {
		t.Fatal("the follow-up did not send the conversation")
	}
	r = e.run(false, "sessions", "show", out.Session)
	if !strings.Contains(r.stdout, "## 2. and on Windows?") || !strings.Contains(r.stdout, "*[1] context.md") {
		t.Errorf("sessions show:\n%s", r.stdout)
	}
	if r = e.run(false, "sessions", "list"); !strings.Contains(r.stdout, out.Session) || !strings.Contains(r.stdout, " go ") {
		t.Errorf("sessions list:\n%s", r.stdout)
	}
}

func TestAskPlainAndTTY(t *testing.T) {
	e, _ := askEnv(t)
	r := e.run(false, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != 0 || strings.Contains(r.stdout, "\x1b") {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	if !strings.HasPrefix(r.stdout, "Use WithTimeout [1].\n\nSources:\n*[1] context.md:1-5 > Context > Timeouts") {
		t.Errorf("plain output:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "retrieve") {
		t.Errorf("status lines on a non-terminal stderr: %q", r.stderr)
	}
	r = e.run(true, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != 0 || !strings.Contains(r.stdout, "\x1b[") || !strings.Contains(r.stdout, "Sources:") || !strings.Contains(r.stderr, "generate") {
		t.Errorf("tty output:\n%q\nstderr %q", r.stdout, r.stderr)
	}
	// On a terminal, how to continue the conversation; never on stdout.
	if !regexp.MustCompile(`follow up with: lore ask --session [0-9a-f]+ "..."`).MatchString(r.stderr) || strings.Contains(r.stdout, "--session") {
		t.Errorf("no follow-up hint on stderr: %q", r.stderr)
	}
}

func TestAskContext(t *testing.T) {
	e, srv := askEnv(t)
	file := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(file, []byte("line1\nline2\nline3\nline4\n"), 0o644)
	r := e.runIn("piped selection", false, "ask", "--index", "go", "--context-file", file+":2-3", "-", "what does this do?")
	if r.code != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	chats := srv.Chats()
	user := chats[len(chats)-1].Messages[len(chats[len(chats)-1].Messages)-1].Content
	if !strings.Contains(user, "piped selection") || !strings.Contains(user, file+":2-3:\nline2\nline3") || !strings.Contains(user, "Question: what does this do?") {
		t.Fatalf("context not placed before the question:\n%s", user)
	}
	if r := e.run(false, "ask", "--index", "go", "--context-file", file+":3-1", "q"); r.code != exitUsage {
		t.Errorf("bad range: exit %d %s", r.code, r.stderr)
	}
	if r := e.run(false, "ask", "--index", "go"); r.code != exitUsage || !strings.Contains(r.stderr, "no question") {
		t.Errorf("no question: exit %d %s", r.code, r.stderr)
	}
}

func TestAskExitCodes(t *testing.T) {
	e, srv := askEnv(t)
	// A model that is not installed: passages, exit 4, and the fix.
	r := e.run(false, "ask", "--index", "go", "--model", "nope:7b", "how do I cancel a context?")
	if r.code != exitSourcesOnly || !strings.Contains(r.stderr, "ollama pull nope:7b` (lore doctor checks the whole setup)") || !strings.Contains(r.stdout, "[1] context.md") {
		t.Errorf("missing model: exit %d %q", r.code, r.stderr)
	}
	// Mid-stream failure: the partial answer is kept, then a clear error.
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Partial ", "answer"}, FailAfter: 1})
	r = e.run(false, "ask", "--index", "go", "cancel a context")
	if r.code != exitError || !strings.HasPrefix(r.stdout, "Partial ") || !strings.Contains(r.stderr, "unexpected EOF") {
		t.Errorf("mid-stream error: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// An HTML error page from a proxy: one line, no HTML.
	srv.SetChat(ollamatest.ChatScript{HTML502: true})
	r = e.run(false, "ask", "--index", "go", "cancel a context")
	if r.code != exitError || strings.Contains(r.stderr, "<html") || strings.Count(r.stderr, "\n") > 4 {
		t.Errorf("502 page: exit %d %q", r.code, r.stderr)
	}
	// Nothing in the docs, offline: exit 3.
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"x"}})
	r = e.run(false, "ask", "--index", "go", "zebra quantum marmalade")
	if r.code != exitNotInDocs || !strings.Contains(r.stdout, "do not cover") {
		t.Errorf("not in docs: exit %d %q", r.code, r.stdout)
	}
	// No Ollama at all: sources only, exit 4, a one-line notice.
	srv.Close()
	r = e.run(false, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != exitSourcesOnly || !strings.Contains(r.stdout, "[1] context.md") || !strings.Contains(r.stderr, "ollama serve") ||
		!strings.Contains(r.stderr, "lore doctor") || strings.Count(r.stderr, "lore doctor") != 1 {
		t.Errorf("no Ollama: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// No index: one line, the fix, and where to look next.
	r = e.run(false, "ask", "--index", "nope", "how do I cancel a context?")
	if r.code != exitError || r.stderr != "lore: no such index \"nope\": build it with `lore index PATH` (lore doctor checks the whole setup)\n" {
		t.Errorf("no index: exit %d %q", r.code, r.stderr)
	}
}

func TestAskOnlineWithFailingWeb(t *testing.T) {
	e, _ := askEnv(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer web.Close()
	e.vars["LORE_WEB_PROVIDER"] = "searxng"
	e.vars["LORE_SEARXNG_URL"] = web.URL
	// Without the web, offline's decision: not in the docs (issue 34, item 3).
	r := e.run(false, "ask", "--index", "go", "--online", "--json", "zebra quantum marmalade")
	out := askJSONOut(t, r.stdout)
	if r.code != exitNotInDocs || out.Mode != "online" || out.Route != "none" || !strings.Contains(r.stderr, "web search failed") || !strings.Contains(r.stderr, "answered as offline") {
		t.Fatalf("exit %d %+v\n%s", r.code, out, r.stderr)
	}
	e.vars["LORE_SEARXNG_URL"] = "http://127.0.0.1:1" // nothing listens
	r = e.run(false, "ask", "--index", "go", "--online", "--json", "what is the capital of France?")
	out = askJSONOut(t, r.stdout)
	if r.code != exitNotInDocs || out.Route != "none" {
		t.Fatalf("web unreachable: exit %d route %q\n%s", r.code, out.Route, r.stderr)
	}
}

// TestOfflineDialsOnlyOllama is the offline guarantee: with a web provider
// fully configured, an offline ask connects to the Ollama host and nothing else.
func TestOfflineDialsOnlyOllama(t *testing.T) {
	e, srv := askEnv(t)
	e.vars["TAVILY_API_KEY"] = "tvly-secret"
	checkDials := dialsOnlyTo(t, strings.TrimPrefix(srv.URL, "http://"))
	r := e.run(false, "ask", "--index", "go", "--json", "zebra quantum marmalade")
	if r.code != exitNotInDocs && r.code != exitOK {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	r = e.run(false, "ask", "--index", "go", "how do I cancel a context?")
	checkDials()
	if strings.Contains(r.stdout+r.stderr, "tvly-secret") {
		t.Fatal("the API key leaked")
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "data", "lore", "sessions.db*"))
	files = append(files, filepath.Join(e.home, "state", "lore", "lore.log"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "tvly-secret") {
			t.Fatalf("the API key was saved in %s", f)
		}
	}
}

// TestDebugLogsEveryDial: `lore --debug` shows each connection it opens, so
// a user can audit offline mode without strace.
func TestDebugLogsEveryDial(t *testing.T) {
	e, srv := askEnv(t)
	defer recordDials(nil)
	r := e.run(false, "--debug", "ask", "--index", "go", "how do I cancel a context?")
	if want := "msg=dial network=tcp addr=" + strings.TrimPrefix(srv.URL, "http://"); r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d; stderr lacks %q:\n%s", r.code, want, r.stderr)
	}
}

// TestOneModelForEmbeddingAndChat: when the chat model is the index's
// embedding model, the query is embedded with the chat num_ctx, so Ollama
// keeps one runner instead of restarting it for each request (measured
// against a real server: 767 ms of overhead instead of ~300, BENCHMARKS.md).
func TestOneModelForEmbeddingAndChat(t *testing.T) {
	e, srv := askEnv(t)
	e.vars["LORE_NUM_CTX"] = "6000"
	last := func() int { n := srv.EmbedNumCtx(); return n[len(n)-1] }
	if r := e.run(false, "ask", "--index", "go", "--model", "nomic-embed-text", "how do I cancel a context?"); r.code != 0 || last() != 6000 {
		t.Fatalf("exit %d %s; query embedded with num_ctx %d, want the chat's 6000", r.code, r.stderr, last())
	}
	if r := e.run(false, "ask", "--index", "go", "how do I cancel a context?"); r.code != 0 || last() == 6000 {
		t.Fatalf("exit %d %s; with another chat model the query should keep the embedding model's num_ctx", r.code, r.stderr)
	}
}

func TestAskSlowFirstToken(t *testing.T) {
	e, srv := askEnv(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"late [1]"}, FirstDelay: 300 * time.Millisecond})
	r := e.run(false, "ask", "--index", "go", "--json", "how do I cancel a context?")
	out := askJSONOut(t, r.stdout)
	if r.code != 0 || out.Answer != "late [1]" || out.Timings["first_token"] < 300 {
		t.Fatalf("exit %d %+v", r.code, out)
	}
}

// An ask that produced no answer (Ollama down: passages only) saves no
// session and offers no follow-up (issue 11, item 11).
func TestNoAnswerNoSession(t *testing.T) {
	e, srv := askEnv(t)
	srv.Close()
	r := e.run(true, "ask", "--index", "go", "--json", "how do I cancel a context?")
	if r.code != exitSourcesOnly {
		t.Fatalf("exit %d %q", r.code, r.stderr)
	}
	if out := askJSONOut(t, r.stdout); out.Session != "" {
		t.Errorf("session %q reported for a turn with no answer", out.Session)
	}
	r = e.run(true, "ask", "--index", "go", "how do I cancel a context?")
	if strings.Contains(r.stderr, "--session") {
		t.Errorf("a follow-up offered for a turn with no answer: %q", r.stderr)
	}
	if r := e.run(false, "sessions", "list"); strings.Contains(r.stdout, "cancel a context") {
		t.Errorf("a turn with no answer was saved:\n%s", r.stdout)
	}
}

// NO_COLOR and TERM=dumb on a terminal: no colour or style escapes from
// search or ask (issue 11, item 10).
func TestNoColorOnATerminal(t *testing.T) {
	e, _ := askEnv(t)
	for _, env := range []map[string]string{{"NO_COLOR": "1"}, {"TERM": "dumb"}} {
		for k, v := range env {
			e.vars[k] = v
		}
		for _, args := range [][]string{{"search", "--index", "go", "cancel a context"}, {"ask", "--index", "go", "how do I cancel a context?"}} {
			if r := e.run(true, args...); strings.Contains(r.stdout, "\x1b[") {
				t.Errorf("%v %v: escapes in %q", env, args, r.stdout)
			}
		}
		for k := range env {
			delete(e.vars, k)
		}
	}
	// Without them, a terminal still gets styles.
	if r := e.run(true, "search", "--index", "go", "cancel a context"); !strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("no styles on a terminal: %q", r.stdout)
	}
}

// FuzzContextFileRange: any FILE:RANGE spec is read or refused with an
// error naming --context-file; what is read is the lines asked for, under
// a header naming the file (and the range that exists).
func FuzzContextFileRange(f *testing.F) {
	for _, s := range []string{"", ":1-2", ":2-1", ":0-0", ":-1-3", ":1-", ":3-99999999999999999999", ":+1-+2", ":1-2:3-4", "::", ":1\x00-2"} {
		f.Add(s, "one\ntwo\nthree\n")
	}
	dir := f.TempDir()
	file := filepath.Join(dir, "ctx.txt")
	f.Fuzz(func(t *testing.T, suffix, content string) {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := readContextFile(file + suffix)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--context-file: ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if !strings.HasPrefix(out, file) {
			t.Fatalf("context %q does not start with the file name", out)
		}
		if _, body, _ := strings.Cut(out, ":\n"); !strings.Contains(content, body) {
			t.Fatalf("context %q is not a part of the file", body)
		}
	})
}

// A citation of no source is told on stderr, on a terminal and in a pipe
// alike (--json has invalid_citations).
func TestAskTellsInvalidCitations(t *testing.T) {
	res := agent.Result{Route: agent.RouteDocs, Answer: "Set it [1][7][9].\n", Invalid: []int{7, 9},
		Sources: []agent.Source{{N: 1, Path: "guide.md", Start: 3, End: 9, Cited: true}}}
	for _, tty := range []bool{true, false} {
		var out, errOut bytes.Buffer
		streams := &ioStreams{Out: &out, Err: &errOut, OutTTY: tty, Getenv: func(string) string { return "" },
			ErrWidth: func() int { return 80 }, DarkBackground: func() bool { return true }}
		printAnswer(streams, res, false, "auto")
		if got, want := errOut.String(), "note: the answer cites [7] and [9], which are not sources\n"; got != want {
			t.Errorf("tty %v: stderr %q, want %q", tty, got, want)
		}
		if strings.Contains(out.String(), "note:") {
			t.Errorf("tty %v: the note is in the answer:\n%s", tty, out.String())
		}
	}
	if got := invalidCitationsNote([]int{7}); got != "note: the answer cites [7], which is not a source" {
		t.Errorf("one: %q", got)
	}
}

// On a terminal the answer is rendered as markdown, in the style the
// terminal's background calls for (or --theme), without colour under
// NO_COLOR, then the sources are listed.
func TestAskRendersMarkdownOnATerminal(t *testing.T) {
	res := agent.Result{Route: agent.RouteDocs, Answer: "## Setup\n\nSet **timeout** first [1]:\n\n```go\nctx, cancel := context.WithTimeout(ctx, time.Second)\n```\n",
		Sources: []agent.Source{{N: 1, Path: "guide.md", Start: 3, End: 9, Cited: true}}}
	for _, c := range []struct {
		noColor, dark bool
		theme, want   string
	}{
		{false, true, "auto", "dark"},
		{false, false, "auto", "light"},
		{false, false, "dark", "dark"},
		{false, true, "light", "light"},
		{true, false, "auto", "notty"},
	} {
		env := map[string]string{}
		if c.noColor {
			env["NO_COLOR"] = "1"
		}
		var out bytes.Buffer
		streams := &ioStreams{Out: &out, Err: io.Discard, OutTTY: true, Getenv: func(k string) string { return env[k] },
			ErrWidth: func() int { return 80 }, DarkBackground: func() bool { return c.dark }}
		printAnswer(streams, res, false, c.theme)
		want, err := renderMarkdown(res.Answer, 80, c.want)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), strings.TrimRight(want, "\n")) {
			t.Errorf("%+v: not rendered in the %s style:\n%q", c, c.want, out.String())
		}
		s := ansi.Strip(out.String())
		// Without colour, glamour's notty style keeps emphasis as
		// written; code loses its fence either way.
		if strings.Contains(s, "```") || !c.noColor && strings.Contains(s, "**") {
			t.Errorf("%+v: markdown markup left in the answer:\n%s", c, s)
		}
		if !strings.Contains(s, "context.WithTimeout") || !strings.Contains(s, "*[1] guide.md:3-9") {
			t.Errorf("%+v: answer or sources missing:\n%s", c, s)
		}
		if colored := s != out.String(); colored == c.noColor {
			t.Errorf("%+v: coloured %v:\n%q", c, colored, out.String())
		}
	}
}

// A question or context far beyond the model's context (8192 tokens, from
// /api/show, below the num-ctx set) is cut to fit, and lore says so: a
// note on stderr, "cuts" in --json; a passage the model never saw is not
// a source. A small question is sent whole, without a note.
func TestAskFitsTheModelsContext(t *testing.T) {
	e, srv := askEnv(t)
	srv.ContextLength = map[string]int{"llama3.2:3b": 8192}
	e.vars["LORE_NUM_CTX"] = "32768"
	fits := func(t *testing.T) string {
		t.Helper()
		chats := srv.Chats()
		req := chats[len(chats)-1]
		size := 0
		for _, m := range req.Messages {
			size += len(m.Content) + 24 // a chat template's wrapping
		}
		// ~3 bytes a token (the budget's rule), 1024 tokens kept for the answer.
		if budget := (8192 - 1024) * 3; size > budget {
			t.Fatalf("sent %d bytes to an 8192-token model, over %d", size, budget)
		}
		return req.Messages[len(req.Messages)-1].Content
	}
	big := "START " + strings.Repeat("the build log says nothing useful here ", 2400) + " END" // 94 KB

	r := e.runIn(big, false, "ask", "--index", "go", "--context", "-", "how do I cancel a context?")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	user := fits(t)
	if !strings.Contains(user, "START the build log") || strings.Contains(user, " END") || !strings.HasSuffix(user, "Question: how do I cancel a context?") {
		t.Fatalf("the context's beginning and the whole question must be sent:\n%s", user[len(user)-300:])
	}
	if !regexp.MustCompile(`(?m)^note: the context you gave was cut to its first [0-9,]+ characters of ` + units.Count(len(big)) + ` to fit llama3\.2:3b's 8192-token context$`).MatchString(r.stderr) {
		t.Errorf("no note on stderr:\n%s", r.stderr)
	}

	r = e.runIn("how do I cancel a context? "+big, false, "ask", "--json", "--index", "go")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := askJSONOut(t, r.stdout)
	user = fits(t)
	if !strings.HasPrefix(user[strings.Index(user, "</sources>"):], "</sources>\n\nhow do I cancel a context? START") || !strings.HasSuffix(user, " END") {
		t.Fatalf("the question's start and end must be sent:\n%s", user[:400])
	}
	if len(out.Cuts) != 1 || out.Cuts[0].Part != "question" || out.Cuts[0].Of != len("how do I cancel a context? "+big) ||
		!strings.HasSuffix(out.Cuts[0].Note, "to fit llama3.2:3b's 8192-token context") || !strings.Contains(r.stderr, "note: "+out.Cuts[0].Note+"\n") {
		t.Fatalf("cuts %+v, stderr %q", out.Cuts, r.stderr)
	}

	// In a 2048-token model, passages of 1.4 KB do not all fit beside the
	// context: those left out are not sources, and [3] cites nothing.
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		os.WriteFile(filepath.Join(dir, name), []byte("# Cancel\n\n"+strings.Repeat("Call cancel to release a context's resources. ", 30)+"\n"), 0o644)
	}
	if r := e.run(false, "--index", "long", "index", "-q", dir); r.code != 0 {
		t.Fatal(r.stderr)
	}
	srv.ContextLength["llama3.2:3b"] = 2048
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Call cancel [1]", " [3]."}})
	r = e.runIn(big, false, "ask", "--json", "--index", "long", "--context", "-", "how do I release a context's resources?")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out = askJSONOut(t, r.stdout)
	chats := srv.Chats()
	user = chats[len(chats)-1].Messages[len(chats[len(chats)-1].Messages)-1].Content
	var parts []string
	for _, c := range out.Cuts {
		parts = append(parts, c.Part)
	}
	if strings.Join(parts, ",") != "context,passages" || out.Cuts[1].Of != 3 || len(out.Sources) != out.Cuts[1].Kept {
		t.Fatalf("cuts %+v, %d sources", out.Cuts, len(out.Sources))
	}
	if strings.Contains(user, "\n[3] ") || len(out.InvalidCitations) != 1 || out.InvalidCitations[0] != 3 || !out.Sources[0].Cited {
		t.Fatalf("sources %+v, invalid %v, prompt:\n%s", out.Sources, out.InvalidCitations, user)
	}

	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Use WithTimeout [1]."}})
	r = e.runIn("", false, "ask", "--json", "--index", "go", "how do I cancel a context?")
	// (the model's 2048 tokens still hold a small question whole)
	if out := askJSONOut(t, r.stdout); r.code != exitOK || len(out.Cuts) != 0 || strings.Contains(r.stderr, "to fit") || !strings.HasSuffix(fits(t), "</sources>\n\nhow do I cancel a context?") {
		t.Fatalf("a small question: exit %d, cuts %+v, stderr %q", r.code, out.Cuts, r.stderr)
	}
}
