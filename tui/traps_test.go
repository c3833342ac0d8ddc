package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/session"
)

// /index to another index in the middle of a session starts a new one:
// a session keeps to one index, and the engine refuses a follow-up on
// another (issue 34).
func TestIndexSwitchStartsANewSession(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	h.finishAnswer(h.streamAnswer())
	h.m.sessionID = "01d5e5510000"
	h.typeText("/index notes")
	h.press(tea.Key{Code: tea.KeyEnter})
	if h.m.index != "notes" || h.m.sessionID != "" {
		t.Fatalf("index %q, session %q", h.m.index, h.m.sessionID)
	}
	if s := h.screen(); !strings.Contains(s, "index: notes (a new session") {
		t.Fatalf("the new session is not told:\n%s", s)
	}
}

// A question that failed for want of an index shows ERROR in the status
// bar; a successful /add afterwards clears it (issue 34).
func TestAddClearsAStaleError(t *testing.T) {
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
	typeAndEnter := func(s string) {
		for _, r := range s {
			m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		run(t, m, cmd)
	}
	typeAndEnter("how does the widget spin?")
	if s := stripped(m); !strings.Contains(s, "ERROR") {
		t.Fatalf("a question without an index:\n%s", s)
	}
	typeAndEnter("/add " + docs)
	if s := stripped(m); !strings.Contains(s, "indexed: 1 file,") || strings.Contains(s, "ERROR") {
		t.Fatalf("after a successful /add:\n%s", s)
	}
}

// A resumed session shows an answer that was cancelled as cancelled, not
// as complete (issue 34).
func TestResumedCancelledTurnSaysSo(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	store, err := h.eng.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []session.Turn{
		{Question: "first?", Answer: "A whole answer.", Route: "docs", Index: "docs"},
		{Question: "second?", Answer: "A partial ans", Route: "docs", Index: "docs", Cancelled: true},
	} {
		if _, err := store.Append(ctx, "cccccccccccc", tt); err != nil {
			t.Fatal(err)
		}
	}
	run(t, h.m, h.m.loadSession("cccccccccccc"))
	s := h.screen()
	if strings.Count(s, "cancelled") != 1 || !strings.Contains(s, "partial answer above is kept") || strings.Index(s, "cancelled") < strings.Index(s, "A partial ans") {
		t.Fatalf("resumed:\n%s", s)
	}
}

// At 40 columns a source with a long path keeps its line range: the path
// loses its beginning instead (issue 34).
func TestGolden40x20LongPathKeepsLines(t *testing.T) {
	h := newHarness(t, 40, 20, "dark")
	seq := h.ask("where is the cache?")
	res := doneResult()
	res.Answer = "In the cache [1].\n"
	res.Sources = []agent.Source{{N: 1, Root: "/home/ana/docs", Path: "internal/generators/pathcache/pathcache_generated.go", Start: 5, End: 40, Heading: "package pathcache", Cited: true}}
	h.events(seq, agent.Done{Result: res})
	s := h.screen()
	if !strings.Contains(s, "_generated.go:5-40") {
		t.Errorf("the line range is lost:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

// A multi-line paste shows all its lines (up to the input's six), not
// only the last one (issue 34).
func TestMultiLinePasteShowsEveryLine(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.send(tea.PasteMsg{Content: "first pasted line\nsecond pasted line\nthird pasted line"})
	s := h.screen()
	for _, l := range []string{"first pasted line", "second pasted line", "third pasted line"} {
		if !strings.Contains(s, l) {
			t.Errorf("%q is not shown:\n%s", l, s)
		}
	}
}

// /copy code 3 with no answer to copy says why, on screen: before any
// question, after a question the documents do not cover, and past the
// answer's last code block (issue 34: "nothing to copy yet" left the
// user guessing).
func TestCopyWithNoAnswerSaysWhy(t *testing.T) {
	h := newHarness(t, 100, 20, "dark")
	copyCode3 := func() string {
		h.typeText("/copy code 3")
		if cmd := h.press(tea.Key{Code: tea.KeyEnter}); cmd != nil {
			t.Fatal("/copy code 3 copied something")
		}
		return h.screen()
	}
	if s := copyCode3(); !strings.Contains(s, "no question asked yet") {
		t.Errorf("before any question:\n%s", s)
	}
	seq := h.ask("what is the capital of Peru?")
	h.events(seq, agent.Done{Result: agent.Result{Route: agent.RouteNone}})
	if s := copyCode3(); !strings.Contains(s, "the documents do not cover the last question") {
		t.Errorf("after a question not in the docs:\n%s", s)
	}
	h.finishAnswer(h.streamAnswer())
	if s := copyCode3(); !strings.Contains(s, "the last answer has 1 code block: /copy code 1 to 1") {
		t.Errorf("past the last code block:\n%s", s)
	}
}
