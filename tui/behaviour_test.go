package tui

import (
	"cmp"
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/session"
)

// Scrolled up while an answer streams, the user is not dragged down: a
// marker counts the new lines, and End follows again.
func TestScrollUpWhileStreaming(t *testing.T) {
	h := newHarness(t, 80, 12, "dark")
	seq := h.streamAnswer()
	h.press(tea.Key{Code: tea.KeyPgUp})
	before := h.screen()
	h.events(seq, agent.Token{Text: "\n\nmore\n\nand more\n\nand even more lines\n\nto push the bottom\n"})
	after := h.screen()
	if !strings.Contains(after, "new lines") {
		t.Fatalf("no new-lines marker after scrolling up:\n%s", after)
	}
	if strings.SplitN(before, "\n", 2)[0] != strings.SplitN(after, "\n", 2)[0] {
		t.Fatalf("the view moved while the user was scrolled up:\n%s\n---\n%s", before, after)
	}
	h.press(tea.Key{Code: tea.KeyEnd})
	if s := h.screen(); strings.Contains(s, "new lines") || !strings.Contains(s, "to push the bottom") {
		t.Fatalf("end did not follow the bottom:\n%s", s)
	}
}

func TestHistoryRecallAndPaste(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	seq := h.ask("first question")
	h.events(seq, agent.Done{Result: agent.Result{Route: agent.RouteNone}})
	h.press(tea.Key{Code: tea.KeyUp})
	if got := h.m.input.Value(); got != "first question" {
		t.Fatalf("up recalled %q", got)
	}
	h.press(tea.Key{Code: tea.KeyDown})
	if got := h.m.input.Value(); got != "" {
		t.Fatalf("down should come back to an empty input, got %q", got)
	}
	// A pasted text with newlines goes into the input and is not sent.
	turns := len(h.m.turns)
	h.send(tea.PasteMsg{Content: "line one\nline two\n"})
	if len(h.m.turns) != turns || !strings.Contains(h.m.input.Value(), "line two") {
		t.Fatalf("paste sent or lost: turns %d->%d, input %q", turns, len(h.m.turns), h.m.input.Value())
	}
	// ctrl+j inserts a newline rather than sending.
	h.press(tea.Key{Code: 'j', Mod: tea.ModCtrl})
	if len(h.m.turns) != turns {
		t.Fatal("ctrl+j sent the question")
	}
}

func TestCopyCodeBlockSendsOSC52(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	var system string
	h.m.opts.SystemClipboard = func(text string) (string, error) { system = text; return "xclip", nil }
	h.finishAnswer(h.streamAnswer())
	h.typeText("/copy code 1")
	cmd := h.press(tea.Key{Code: tea.KeyEnter})
	var raw string
	for _, c := range cmd().(tea.BatchMsg) {
		if r, ok := c().(tea.RawMsg); ok {
			raw = r.Msg.(string)
		}
	}
	want := base64.StdEncoding.EncodeToString([]byte("ctx, cancel := context.WithTimeout(ctx, 2*time.Second)\ndefer cancel()\n"))
	if !strings.Contains(raw, want) {
		t.Fatalf("OSC 52 does not carry the code block: %q", raw)
	}
	if system != "ctx, cancel := context.WithTimeout(ctx, 2*time.Second)\ndefer cancel()\n" {
		t.Fatalf("system clipboard got %q", system)
	}
}

func TestQuitKeys(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	if cmd := h.press(tea.Key{Code: 'c', Mod: tea.ModCtrl}); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("ctrl+c when idle should quit")
	}
	// While a turn runs, ctrl+c cancels it and does not quit.
	seq := h.streamAnswer()
	cancelled := false
	h.m.cancel = func() { cancelled = true }
	if cmd := h.press(tea.Key{Code: 'c', Mod: tea.ModCtrl}); cmd != nil || !cancelled {
		t.Fatal("ctrl+c while answering should cancel the turn only")
	}
	// ctrl+d while a turn runs waits for its final event (which saves it).
	h.press(tea.Key{Code: 'd', Mod: tea.ModCtrl})
	_, cmd := h.m.Update(eventsMsg{seq: seq, events: []agent.Event{agent.Saved{SessionID: "x"}, agent.Cancelled{Result: doneResult()}}})
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("quit did not follow the final event")
	}
}

// A whole turn against the real engine and an Ollama double speaking its
// NDJSON: the chat's commands run as Bubble Tea would run them.
func TestTurnThroughEngine(t *testing.T) {
	srv := ollamatest.New(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Spin ", "the widget ", "[1]."}})
	eng := widgetEngine(t, srv.URL)
	m := New(context.Background(), eng, Options{Theme: "dark", Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m, m.checkStatus(true))
	for _, r := range "how does the widget spin?" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(t, m, cmd)
	s := stripped(m)
	if !strings.Contains(s, "Spin the widget [1].") || !strings.Contains(s, "a.md:1-3 > Widgets") || !strings.Contains(s, "· 1 chunk ") {
		t.Fatalf("turn through the engine:\n%s", s)
	}
	if m.sessionID == "" {
		t.Fatal("no session")
	}
	if msg := checkChanged(context.Background(), eng, "", m.lastTurn())(); msg != nil {
		t.Fatalf("an unchanged file is flagged as changed: %+v", msg)
	}
	se, err := eng.Session(context.Background(), m.sessionID)
	if err != nil || len(se.Turns) != 1 || se.Turns[0].Answer != "Spin the widget [1]." {
		t.Fatalf("turn not saved: %v %+v", err, se)
	}
	// A second chat resumes it.
	m2 := New(context.Background(), eng, Options{Resume: m.sessionID, Getenv: func(string) string { return "" }})
	m2.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m2, m2.loadSession(m.sessionID))
	if s := stripped(m2); !strings.Contains(s, "how does the widget spin?") || !strings.Contains(s, "resumed session") {
		t.Fatalf("resume:\n%s", s)
	}
}

func stripped(m *Model) string { return strings.Join(strings.Fields(ansiStrip(m.render())), " ") }

// run executes cmd and everything it leads to, as the Bubble Tea runtime
// would, except the timers (spinner, cursor blink) that never end.
func run(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("commands did not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
			continue
		case nil:
			continue
		}
		if isTimer(msg) {
			continue
		}
		_, next := m.Update(msg)
		queue = append(queue, next)
	}
}

// A resize while an answer streams redraws everything at the new width.
func TestResizeMidStream(t *testing.T) {
	h := newHarness(t, 120, 30, "dark")
	seq := h.streamAnswer()
	for _, w := range []int{40, 200, 60} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 30})
		h.events(seq, agent.Token{Text: " more text that wraps at the new width of the terminal"})
		for i, l := range strings.Split(h.screen(), "\n") {
			if lw := ansi.StringWidth(l); lw > w {
				t.Fatalf("width %d: line %d is %d wide: %q", w, i, lw, l)
			}
		}
	}
	h.finishAnswer(seq)
	if !strings.Contains(h.screen(), "Sources:") {
		t.Fatal("the answer did not finish after resizes")
	}
}

// A cited file edited since it was indexed is flagged on its source line;
// freshly indexed HTML and non-UTF-8 files, whose passages are extracted
// text and not the file's lines, and a file touched but not edited, are not.
func TestChangedSourceIsFlagged(t *testing.T) {
	docs := t.TempDir()
	for name, body := range map[string]string{
		"a.md":       "# A\n\nThe widget spins.\n",
		"b.md":       "# B\n\nThe widget hums.\n",
		"page.html":  "<html><body><h1>Widgets</h1><p>The <b>widget</b> &amp; its caf&eacute; glow.</p></body></html>\n",
		"latin1.txt": "The caf\xe9 widget is open.\n",
	} {
		os.WriteFile(filepath.Join(docs, name), []byte(body), 0o644)
	}
	old := time.Now().Add(-time.Hour) // indexed well after the last edit
	for _, name := range []string{"a.md", "b.md", "page.html", "latin1.txt"} {
		os.Chtimes(filepath.Join(docs, name), old, old)
	}
	cfg := config.Defaults()
	cfg.DataDir, cfg.StateDir = t.TempDir(), t.TempDir()
	cfg.Embedder, cfg.Reranker = "none", "none"
	cfg.OllamaHost = "http://127.0.0.1:1"
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Build(context.Background(), app.BuildRequest{Paths: []string{docs}}); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Search(context.Background(), app.SearchRequest{Query: "widget", K: 10})
	if err != nil || len(res.Passages) != 4 {
		t.Fatalf("%v: %d passages", err, len(res.Passages))
	}
	tr := &turn{}
	n := map[string]int{}
	for i, p := range res.Passages {
		tr.sources = append(tr.sources, agent.Source{N: i + 1, Root: p.Root, Path: p.Path, Start: p.Start, End: p.End, Heading: p.Heading, Text: p.Text})
		n[p.Path] = i + 1
	}
	if msg := checkChanged(context.Background(), eng, "", tr)(); msg != nil {
		t.Fatalf("freshly indexed files flagged as changed: %+v (sources %v)", msg.(changedMsg).changed, n)
	}
	os.WriteFile(filepath.Join(docs, "b.md"), []byte("# B\n\nThe widget is silent now.\n"), 0o644)
	os.Chtimes(filepath.Join(docs, "a.md"), time.Now(), time.Now())
	msg, ok := checkChanged(context.Background(), eng, "", tr)().(changedMsg)
	if !ok || len(msg.changed) != 1 || !msg.changed[n["b.md"]] {
		t.Fatalf("want only b.md [%d] changed, got %+v", n["b.md"], msg.changed)
	}
	tr.changed, tr.state, tr.route = msg.changed, turnDone, agent.RouteDocs
	if s := ansi.Strip(strings.Join(tr.lines(100, newStyles(true, true)), "\n")); !strings.Contains(s, "b.md:1-3 > B (changed since indexed)") {
		t.Fatalf("source line does not say the file changed:\n%s", s)
	}
}

// With no index yet, /add builds one from the chat and the chat uses it.
func TestAddBuildsTheIndex(t *testing.T) {
	cfg := config.Defaults()
	cfg.DataDir, cfg.StateDir = t.TempDir(), t.TempDir()
	cfg.Embedder, cfg.Reranker = "none", "none"
	cfg.OllamaHost = "http://127.0.0.1:1"
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	docs := t.TempDir()
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Widgets\n\nThe widget spins.\n"), 0o644)
	m := New(context.Background(), eng, Options{Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m, m.checkStatus(false))
	if s := stripped(m); !strings.Contains(s, `No index "default" yet`) || !strings.Contains(s, "/add") {
		t.Fatalf("empty index screen:\n%s", s)
	}
	for _, r := range "/add " + docs {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(t, m, cmd)
	if s := stripped(m); !strings.Contains(s, "indexed: 1 file,") || !strings.Contains(s, "default · 1 chunk ") {
		t.Fatalf("after /add:\n%s", s)
	}
}

// Each [n] of an answer links to its source (OSC 8), the second of [1][2]
// too; arr[1] and xs[2] do not.
func TestCitationsAreLinks(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	seq := h.ask("q")
	res := doneResult()
	res.Answer = "Use WithTimeout [1][2]; `arr[1]` is code, and xs[2] an index.\n"
	h.events(seq, agent.Done{Result: res})
	out := h.m.render()
	for _, n := range []string{"context/context.go", "guides/cancellation.md"} {
		if c := strings.Count(out, "\x1b]8;;file:///home/ana/docs/"+n); c != 2 { // the [n] and the source line
			t.Errorf("%s linked %d times, want 2", n, c)
		}
	}
	h.m.opts.NoLinks = true
	h.m.applyTheme()
	h.m.turns[len(h.m.turns)-1].cache = nil
	h.m.invalidate()
	if strings.Contains(h.m.render(), "\x1b]8;;") {
		t.Error("links drawn with NoLinks")
	}
}

// NO_COLOR: no colour escape at all, emphasis only.
func TestNoColor(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	h.m.opts.NoColor = true
	h.m.applyTheme()
	h.finishAnswer(h.streamAnswer())
	if out := h.m.render(); strings.Contains(out, "\x1b[38;") || strings.Contains(out, "\x1b[48;") {
		t.Fatalf("colour escapes with NO_COLOR:\n%q", out)
	}
}

// A panic while drawing is caught: one line names the log, the log has
// the details, and the program goes on.
func TestPanicInViewIsLogged(t *testing.T) {
	var logged strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(prev)
	h := newHarness(t, 80, 20, "dark")
	h.m.turns = append(h.m.turns, nil) // a turn that cannot be drawn
	v := h.m.View()
	if !strings.Contains(v.Content, "internal error while drawing") || !strings.Contains(v.Content, "lore.log") {
		t.Fatalf("view after a panic: %q", v.Content)
	}
	if !strings.Contains(logged.String(), "panic in view") || !strings.Contains(logged.String(), "stack=") {
		t.Fatalf("log after a panic: %q", logged.String())
	}
}

// Output added while an answer streams (a /command) goes below it, and the
// answer keeps updating above.
func TestOutputDuringATurn(t *testing.T) {
	h := newHarness(t, 100, 40, "dark")
	seq := h.streamAnswer()
	h.typeText("/mode online")
	h.press(tea.Key{Code: tea.KeyEnter})
	h.events(seq, agent.Token{Text: " zebra-marker"})
	s := h.screen()
	if !strings.Contains(s, "zebra-marker") || strings.Index(s, "zebra-marker") > strings.Index(s, "mode: online") {
		t.Fatalf("the streaming answer froze or moved below later output:\n%s", s)
	}
}

// A first turn cancelled before anything was saved leaves no session
// behind: the next question starts one instead of asking for a session
// that does not exist.
func TestUnsavedFirstTurnStartsNoSession(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	seq := h.ask("first")
	h.press(tea.Key{Code: tea.KeyEscape})
	h.events(seq, agent.Cancelled{Result: agent.Result{Question: "first"}})
	if h.m.sessionID != "" {
		t.Fatalf("session %q adopted without a saved turn", h.m.sessionID)
	}
	seq = h.ask("second")
	h.events(seq, agent.Saved{SessionID: "5e55100aaaaa", Turn: 1}, agent.Done{Result: agent.Result{Route: agent.RouteNone}})
	if h.m.sessionID != "5e55100aaaaa" {
		t.Fatalf("a saved turn did not set the session: %q", h.m.sessionID)
	}
}

// /new while an answer streams: the old turn is cancelled and saved in
// its own session, and nothing of it reaches the new conversation.
func TestNewDuringATurn(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	h.m.sessionID = "01d5e5510000"
	seq := h.streamAnswer()
	cancelled := false
	h.m.cancel = func() { cancelled = true }
	h.typeText("/new")
	h.press(tea.Key{Code: tea.KeyEnter})
	h.events(seq, agent.Saved{SessionID: "01d5e5510000", Turn: 2}, agent.Cancelled{Result: doneResult()})
	if !cancelled || h.m.sessionID != "" || h.m.live != nil || strings.Contains(h.screen(), "context.WithTimeout") {
		t.Fatalf("after /new: cancelled %v, session %q, live %v\n%s", cancelled, h.m.sessionID, h.m.live != nil, h.screen())
	}
}

// Every screen fills the terminal exactly: the status bar on the last line.
func TestScreenFillsTerminal(t *testing.T) {
	for _, size := range [][2]int{{40, 12}, {80, 24}, {200, 50}} {
		h := newHarness(t, size[0], size[1], "dark")
		h.finishAnswer(h.streamAnswer())
		h.press(tea.Key{Code: 's', Mod: tea.ModCtrl})
		if n := len(strings.Split(h.screen(), "\n")); n != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], n)
		}
	}
}

// Tab completes commands and their arguments, model names included (read
// from Ollama when the chat starts).
func TestTabCompletion(t *testing.T) {
	srv := ollamatest.New(t)
	m := New(context.Background(), widgetEngine(t, srv.URL), Options{Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m, m.checkStatus(true))
	for in, want := range map[string]string{"/he": "/help ", "/mode on": "/mode online", "/model llama": "/model llama3.2:3b", "/theme l": "/theme light"} {
		m.input.SetValue(in)
		m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		if got := m.input.Value(); got != want {
			t.Errorf("tab after %q: %q, want %q", in, got, want)
		}
	}
}

// /search shows why its results are narrower than asked (a reranker that
// failed, keyword search only): in the chat too, the user hears it.
func TestSearchShowsItsNotice(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	h.send(searchMsg{query: "widget", res: app.SearchResult{Ranking: agent.Ranking{Retrieval: agent.Retrieval{Mode: "hybrid",
		Notice: "reranking failed, results are in fused order: reranker model org/broken: boom"}}}})
	if s := h.screen(); !strings.Contains(s, "note: reranking failed, results are in fused order") {
		t.Fatalf("the notice is not shown:\n%s", s)
	}
}

// An answer, a notice, a web title or URL and a resumed session carrying
// escape sequences reach the screen without them, also when a sequence is
// split across tokens (issue 23, item 2). lore's own styles and links stay.
func TestEscapeSequencesNeverReachTheScreen(t *testing.T) {
	h := newHarness(t, 100, 40, "dark")
	seq := h.ask("how do I cancel a context?")
	web := agent.Source{N: 1, URL: "https://evil.example/\x07\x1b]0;owned\x07", Title: "Docs\x1b]52;c;cHduZWQ=\x07 page"}
	h.events(seq, agent.Notice{Text: "web search: \x1b[2Jserver said\x1b]0;owned\x07 no"},
		agent.SourcesChosen{Route: agent.RouteWeb, Sources: []agent.Source{web}}, agent.StageStarted{Stage: agent.StageGenerate})
	answer := "Use With\x1b]52;c;cHduZWQ=\x07Timeout\x1b]0;owned\x1b\\ to \x1b[2Jcancel\r [1].\u009b31m"
	for _, tok := range splitTokens(answer) {
		h.events(seq, agent.Token{Text: tok})
	}
	check := func(when string) {
		t.Helper()
		screen := h.m.render()
		for _, bad := range []string{"\x1b]52", "\x1b]0;", "\r", "\u009b", "\x1b[2J", "owned", "cHduZWQ="} {
			if strings.Contains(screen, bad) {
				t.Errorf("%s: the screen holds %q:\n%q", when, bad, screen)
			}
		}
		if strings.ContainsAny(ansi.Strip(screen), "\x07\x1b") { // lore's own links end with BEL
			t.Errorf("%s: a control character outside lore's own sequences:\n%q", when, screen)
		}
	}
	check("streaming")
	if s := h.screen(); !strings.Contains(s, "Use WithTimeout to cancel [1].") || !strings.Contains(s, "server said no") {
		t.Errorf("streaming:\n%s", s)
	}
	res := agent.Result{Question: "how do I cancel a context?", Route: agent.RouteWeb, Answer: answer, Sources: []agent.Source{web}}
	res.Sources[0].Cited = true
	h.events(seq, agent.Done{Result: res})
	check("done")
	if s := h.screen(); !strings.Contains(s, "Docs page") {
		t.Errorf("done:\n%s", s)
	}
	if h.m.turns[len(h.m.turns)-1].answer != "Use WithTimeout to cancel [1]." {
		t.Errorf("/copy would copy %q", h.m.turns[len(h.m.turns)-1].answer)
	}

	h.send(resumeMsg{id: "3f9a1c0e2b7d", se: session.Session{ID: "3f9a1c0e2b7d", Turns: []session.Turn{{N: 1,
		Question: "saved\x1b]0;owned\x07 question", Answer: answer, Route: "docs",
		Sources: []session.Source{{N: 1, Path: "evil\x1b[2J.md", Heading: "Head\x1b]0;owned\x07ing", Start: 1, End: 2, Cited: true}}}}}})
	check("resumed")
	h.send(modelsMsg{names: []string{"llama3.2:3b", "evil\x1b]0;owned\x07:7b"}})
	check("models")
	if s := h.screen(); !strings.Contains(s, "evil:7b") {
		t.Errorf("models:\n%s", s)
	}
	if title := sessionTitle(session.Session{ID: "3f9a1c0e2b7d", Title: "saved\x1b]0;owned\x07 question"}); strings.ContainsAny(title, "\x1b\x07") {
		t.Errorf("session picker: %q", title)
	}
	if s := h.screen(); !strings.Contains(s, "saved question") || !strings.Contains(s, "evil.md:1-2 > Heading") {
		t.Errorf("resumed:\n%s", s)
	}
}

// /sessions lists the chat's own index's sessions (and those saved before
// sessions knew their index); resuming one of another index switches to it,
// and one whose index is not built is refused, saying so.
func TestSessionsBelongToTheirIndex(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	ctx := context.Background()
	store, err := h.eng.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	for id, idx := range map[string]string{"aaaaaaaaaaaa": "docs", "bbbbbbbbbbbb": "notes", "cccccccccccc": "", "dddddddddddd": "gone"} {
		if _, err := store.Append(ctx, id, session.Turn{Question: "question of " + cmp.Or(idx, "no index"), Answer: "…", Route: "docs", Index: idx}); err != nil {
			t.Fatal(err)
		}
	}
	msg := h.m.listSessions()().(sessionsMsg)
	h.send(msg)
	s := h.screen()
	if !strings.Contains(s, "question of docs") || !strings.Contains(s, "question of no index") || strings.Contains(s, "question of notes") {
		t.Fatalf("/sessions should list the sessions of docs only:\n%s", s)
	}
	h.press(tea.Key{Code: tea.KeyEscape})

	// "notes" is built: resuming its session switches the chat to it.
	cfg := h.eng.Config()
	cfg.Index = "notes"
	docs := t.TempDir()
	os.WriteFile(filepath.Join(docs, "n.md"), []byte("# Notes\n\nbuy milk\n"), 0o644)
	if _, err := local.Build(ctx, cfg.IndexDir(), index.BuildOptions{Name: "notes", Paths: []string{docs}, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
	run(t, h.m, h.m.loadSession("bbbbbbbbbbbb"))
	if got := h.m.index; got != "notes" {
		t.Fatalf("resumed a session of notes on index %q", got)
	}
	if s := h.screen(); !strings.Contains(s, "index: notes (the session's)") {
		t.Fatalf("the switch is not told:\n%s", s)
	}

	// "gone" is not built: refused, and the chat stays where it was.
	run(t, h.m, h.m.loadSession("dddddddddddd"))
	if got := h.m.index; got != "notes" || h.m.sessionID != "bbbbbbbbbbbb" {
		t.Fatalf("index %q, session %q after refusing", got, h.m.sessionID)
	}
	if s := h.screen(); !strings.Contains(s, `asked on index "gone"`) {
		t.Fatalf("the refusal is not told:\n%s", s)
	}
}
