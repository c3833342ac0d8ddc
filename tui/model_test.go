package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/session"
)

// clock is a test's time: it moves only when the test says.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

type harness struct {
	tb  testing.TB
	m   *Model
	eng *app.Engine
	clk *clock
}

// newHarness is the chat at width × height over a real engine (on an empty
// data folder: the tests feed the engine's events themselves, so that the
// screens are deterministic).
func newHarness(t *testing.T, width, height int, theme string) *harness {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.StateDir = t.TempDir()
	cfg.Index = "docs"
	cfg.Reranker = "none"
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	m := New(context.Background(), eng, Options{Theme: theme, Getenv: func(string) string { return "" }, LogPath: "lore.log"})
	m.now = clk.now
	h := &harness{tb: t, m: m, eng: eng, clk: clk}
	h.send(tea.WindowSizeMsg{Width: width, Height: height})
	h.send(statusMsg{info: index.Info{Name: "docs", Built: true, Chunks: 1234, Embedder: "nomic-embed-text"}})
	return h
}

func (h *harness) send(msg tea.Msg) tea.Cmd {
	h.tb.Helper()
	_, cmd := h.m.Update(msg)
	return cmd
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(k tea.Key) tea.Cmd { return h.send(tea.KeyPressMsg(k)) }

// screen is what the user sees, without colours.
func (h *harness) screen() string { return ansi.Strip(h.m.render()) }

// ask types a question, presses Enter and returns the turn's sequence
// number (the engine is not called: the test plays its events).
func (h *harness) ask(q string) int {
	h.typeText(q)
	if cmd := h.press(tea.Key{Code: tea.KeyEnter}); cmd == nil {
		h.tb.Fatal("enter did not start a turn")
	}
	h.send(turnStartedMsg{seq: h.m.seq, session: "3f9a1c0e2b7d", events: make(chan agent.Event)})
	return h.m.seq
}

func (h *harness) events(seq int, evs ...agent.Event) {
	h.send(eventsMsg{seq: seq, events: evs})
}

func score(f float32) *float32 { return &f }

var testSources = []agent.Source{
	{N: 1, Root: "/home/ana/docs", Path: "context/context.go", Start: 410, End: 452, Heading: "WithTimeout", Text: "func WithTimeout(parent Context, timeout time.Duration)", Score: 0.0325, Rerank: score(4.1), LexicalRank: 1, VectorRank: 2},
	{N: 2, Root: "/home/ana/docs", Path: "guides/cancellation.md", Start: 12, End: 40, Heading: "Cancellation > Deadlines", Text: "Deadlines bound how long work may take.", Score: 0.0311, Rerank: score(1.7), LexicalRank: 3, VectorRank: 1},
	{N: 3, Root: "/home/ana/docs", Path: "net/http/client.go", Start: 90, End: 120, Heading: "Client > Timeout", Text: "Timeout specifies a time limit for requests.", Score: 0.0290, Rerank: score(-0.4), LexicalRank: 2},
}

const testAnswer = "Use `context.WithTimeout` [1]; the returned `cancel` must be called [2].\n\n" +
	"```go\nctx, cancel := context.WithTimeout(ctx, 2*time.Second)\ndefer cancel()\n```\n\n" +
	"- the deadline is **inherited** by child contexts [2]\n- HTTP clients have their own `Timeout` field\n"

// streamAnswer plays a docs turn up to the middle of its answer.
func (h *harness) streamAnswer() int {
	seq := h.ask("how do I cancel a context after a timeout?")
	h.events(seq, agent.StageStarted{Stage: agent.StageRetrieve})
	h.clk.advance(15 * time.Millisecond)
	h.events(seq, agent.StageFinished{Stage: agent.StageRetrieve}, agent.SourcesChosen{Route: agent.RouteDocs, Sources: testSources},
		agent.StageStarted{Stage: agent.StageGenerate})
	h.clk.advance(400 * time.Millisecond)
	half := len(testAnswer) / 2
	for _, tok := range splitTokens(testAnswer[:half]) {
		h.events(seq, agent.Token{Text: tok})
	}
	h.clk.advance(time.Second)
	return seq
}

func splitTokens(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(4, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func doneResult() agent.Result {
	srcs := append([]agent.Source(nil), testSources...)
	srcs[0].Cited, srcs[1].Cited = true, true
	cands := make([]agent.Passage, len(srcs))
	for i, s := range srcs {
		cands[i] = agent.Passage{Root: s.Root, Path: s.Path, Start: s.Start, End: s.End, Heading: s.Heading, Text: s.Text, Score: s.Score, Rerank: s.Rerank, LexicalRank: s.LexicalRank, VectorRank: s.VectorRank}
	}
	return agent.Result{Question: "how do I cancel a context after a timeout?", Route: agent.RouteDocs, Answer: testAnswer, Sources: srcs,
		Candidates: cands, BestScore: score(4.1), Total: 2300 * time.Millisecond, Mode: agent.Offline}
}

func (h *harness) finishAnswer(seq int) {
	for _, tok := range splitTokens(testAnswer[len(testAnswer)/2:]) {
		h.events(seq, agent.Token{Text: tok})
	}
	h.events(seq, agent.Saved{SessionID: "3f9a1c0e2b7d", Turn: 1}, agent.Done{Result: doneResult()})
}

func TestGoldenEmptyIndex(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	h.send(statusMsg{info: index.Info{Name: "docs"}})
	golden.RequireEqual(t, h.screen())
}

// A note at startup (here the reranker's) takes the empty-index screen's
// place: the banner still says that the index is not built and how to
// build it.
func TestGoldenUnbuiltIndexAfterANote(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	h.send(statusMsg{info: index.Info{Name: "docs"}, notices: []string{"no reranker model installed, results are in fused order"}})
	s := h.screen()
	if !strings.Contains(s, `NO INDEX "docs" YET`) || !strings.Contains(s, "lore index PATH") || !strings.Contains(s, "no reranker model") {
		t.Fatalf("no banner saying the index is not built, or the note is lost:\n%s", s)
	}
	golden.RequireEqual(t, s)
	// Once built, the banner goes.
	h.send(statusMsg{info: index.Info{Name: "docs", Built: true, Chunks: 3}})
	if s := h.screen(); strings.Contains(s, "NO INDEX") {
		t.Fatalf("banner left after the build:\n%s", s)
	}
}

func TestGoldenStreaming(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	h.streamAnswer()
	s := h.screen()
	if !strings.Contains(s, "generating") || !strings.Contains(s, "context.WithTimeout") {
		t.Fatalf("mid-stream screen lacks the stage or the partial answer:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGoldenAnswerWithSources(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	h.finishAnswer(h.streamAnswer())
	s := h.screen()
	// Cited sources first and marked; the route badge and its score.
	if i, j := strings.Index(s, "● [1]"), strings.Index(s, "  [3]"); i < 0 || j < i {
		t.Fatalf("cited sources not first:\n%s", s)
	}
	if !strings.Contains(s, "DOCS") || !strings.Contains(s, "best +4.10") {
		t.Fatalf("no route badge:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGoldenSourcesPanelWide(t *testing.T) {
	h := newHarness(t, 140, 30, "dark")
	h.finishAnswer(h.streamAnswer())
	h.press(tea.Key{Code: 's', Mod: tea.ModCtrl})
	h.press(tea.Key{Code: tea.KeyDown})
	h.press(tea.Key{Code: tea.KeySpace})
	golden.RequireEqual(t, h.screen())
}

func TestGoldenSourcesPanelNarrow(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.finishAnswer(h.streamAnswer())
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	s := h.screen()
	if !strings.Contains(s, "Sources · 3 passages") || strings.Contains(s, "Use context.WithTimeout") {
		t.Fatalf("narrow panel should cover the transcript:\n%s", s)
	}
	golden.RequireEqual(t, s)
	h.press(tea.Key{Code: tea.KeyEscape})
	if strings.Contains(h.screen(), "Sources · 3 passages") {
		t.Fatal("esc did not close the panel")
	}
}

func TestGoldenCancelled(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	seq := h.streamAnswer()
	cancelled := false
	h.m.cancel = func() { cancelled = true }
	h.press(tea.Key{Code: tea.KeyEscape})
	if !cancelled {
		t.Fatal("esc did not cancel the running turn")
	}
	res := doneResult()
	res.Answer = testAnswer[:len(testAnswer)/2]
	h.events(seq, agent.Saved{SessionID: "3f9a1c0e2b7d", Turn: 1}, agent.Cancelled{Result: res})
	s := h.screen()
	if !strings.Contains(s, "cancelled") || !strings.Contains(s, "CANCELLED") || !strings.Contains(s, "context.WithTimeout") {
		t.Fatalf("a cancelled turn must keep its partial answer and say so:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGoldenErrorMidStream(t *testing.T) {
	h := newHarness(t, 100, 30, "dark")
	seq := h.streamAnswer()
	res := doneResult()
	res.Answer = testAnswer[:len(testAnswer)/2]
	h.events(seq, agent.Failed{Err: agent.ErrStreamCut, Result: res})
	s := h.screen()
	if !strings.Contains(s, "the answer broke off") || !strings.Contains(s, "ERROR") {
		t.Fatalf("error mid-stream:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGoldenNarrow(t *testing.T) {
	h := newHarness(t, 40, 30, "dark")
	h.finishAnswer(h.streamAnswer())
	s := h.screen()
	for i, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Fatalf("line %d is %d cells wide at 40 columns: %q", i, w, l)
		}
	}
	golden.RequireEqual(t, s)
}

// At 40×20 the chat stays usable: the cancel line wraps instead of being
// cut, the key help shows every binding (only its first column fitted),
// and a session's question shows in the picker (it had three characters).
func TestGolden40x20Cancelled(t *testing.T) {
	h := newHarness(t, 40, 20, "dark")
	seq := h.streamAnswer()
	h.m.cancel = func() {}
	h.press(tea.Key{Code: tea.KeyEscape})
	res := doneResult()
	res.Answer = testAnswer[:len(testAnswer)/2]
	h.events(seq, agent.Saved{SessionID: "3f9a1c0e2b7d", Turn: 1}, agent.Cancelled{Result: res})
	s := h.screen()
	if !strings.Contains(strings.Join(strings.Fields(s), " "), "the partial answer above is kept") {
		t.Fatalf("the cancel line is cut at 40 columns:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGolden40x20Help(t *testing.T) {
	h := newHarness(t, 40, 20, "dark")
	h.typeText("?")
	s := h.screen()
	for _, b := range slices.Concat(h.m.keys.FullHelp()...) {
		if !strings.Contains(s, b.Help().Desc) {
			t.Errorf("the help at 40 columns lacks %q", b.Help().Desc)
		}
	}
	for i, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d is %d cells wide", i, w)
		}
	}
	golden.RequireEqual(t, s)
}

func TestGolden40x20Sessions(t *testing.T) {
	h := newHarness(t, 40, 20, "dark")
	store, _ := h.eng.Sessions()
	if _, err := store.Append(context.Background(), session.NewID(), session.Turn{Question: "how do I cancel a context after a timeout?", Answer: "…", Route: "docs"}); err != nil {
		t.Fatal(err)
	}
	msg := h.m.listSessions()().(sessionsMsg)
	msg.list[0].ID, msg.list[0].Updated = "000000000001", time.Date(2026, 11, 20, 10, 0, 0, 0, time.Local)
	h.send(msg)
	s := h.screen()
	if !strings.Contains(s, "how do I cancel a cont") {
		t.Fatalf("the session's question does not show at 40 columns:\n%s", s)
	}
	golden.RequireEqual(t, s)
	if row := sessionRow(session.Session{Title: "saved\x1b]0;owned\x07 question"}, 36); strings.ContainsAny(row, "\x1b\x07") {
		t.Errorf("narrow session row: %q", row)
	}
}

// The light theme is checked with its colours: stripped, it reads the same.
func TestGoldenLightTheme(t *testing.T) {
	h := newHarness(t, 80, 24, "light")
	h.finishAnswer(h.streamAnswer())
	dark := newHarness(t, 80, 24, "dark")
	dark.finishAnswer(dark.streamAnswer())
	if h.m.render() == dark.m.render() {
		t.Fatal("light and dark themes render the same")
	}
	golden.RequireEqual(t, []byte(h.m.render()))
}

func TestGoldenSessionsList(t *testing.T) {
	h := newHarness(t, 80, 16, "dark")
	ctx := context.Background()
	for _, q := range []string{"how do I cancel a context?", "what does exec.LookPath return?", "where are indexes kept?"} {
		store, _ := h.eng.Sessions()
		if _, err := store.Append(ctx, session.NewID(), session.Turn{Question: q, Answer: "…", Route: "docs"}); err != nil {
			t.Fatal(err)
		}
	}
	h.typeText("/sessions")
	cmd := h.press(tea.Key{Code: tea.KeyEnter})
	msg := cmd().(sessionsMsg)
	sort.Slice(msg.list, func(i, j int) bool { return msg.list[i].Title < msg.list[j].Title })
	for i := range msg.list { // ids and dates differ per run: fix them for the golden file
		msg.list[i].ID = fmt.Sprintf("%012d", i+1)
		msg.list[i].Updated = time.Date(2026, 11, 20+i, 10, 0, 0, 0, time.Local)
	}
	h.send(msg)
	h.typeText("exec")
	s := h.screen()
	if !strings.Contains(s, "exec.LookPath") || strings.Contains(s, "cancel a context") {
		t.Fatalf("typing should filter the sessions:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func TestGoldenOllamaDown(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	down := ollama.Explain(fmt.Errorf("dial tcp 127.0.0.1:11434: %w", syscall.ECONNREFUSED), "http://127.0.0.1:11434", "llama3.2:3b")
	h.send(statusMsg{info: index.Info{Name: "docs", Built: true, Chunks: 1234}, chatErr: down})
	s := h.screen()
	if !strings.Contains(s, "SOURCES ONLY") || !strings.Contains(s, "ollama serve") || !strings.Contains(s, "lore doctor") {
		t.Fatalf("no banner naming the fix and lore doctor:\n%s", s)
	}
	golden.RequireEqual(t, s)
}

func ansiStrip(s string) string { return ansi.Strip(s) }

// isTimer reports messages of timers that re-arm forever.
func isTimer(msg tea.Msg) bool {
	switch msg.(type) {
	case spinner.TickMsg, pollStatusMsg, pollFreshMsg:
		return true
	}
	return strings.Contains(fmt.Sprintf("%T", msg), "blink")
}

// A turn that fails for want of an index points at lore doctor, once.
func TestTurnErrorPointsAtDoctor(t *testing.T) {
	err := fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, "docs")
	if got := explain(err, false); !strings.HasSuffix(got, "`lore index PATH` (lore doctor checks the whole setup)") {
		t.Errorf("%q", got)
	}
	if got := explain(errors.New("boom"), false); strings.Contains(got, "doctor") {
		t.Errorf("not a setup problem: %q", got)
	}
}
