// Package tui is lore's chat: a Bubble Tea model over the engine. It
// renders agent events and never runs a turn itself: every question goes
// through the engine's Ask, so the chat answers exactly as `lore ask` does.
package tui

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/clipboard"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

// Engine is what the chat needs of app.Engine.
type Engine interface {
	Ask(ctx context.Context, req app.AskRequest) (string, <-chan agent.Event, error)
	Search(ctx context.Context, req app.SearchRequest) (app.SearchResult, error)
	IndexInfo(ctx context.Context, name string) (index.Info, error)
	ChatStatus(ctx context.Context, model string) error
	Models(ctx context.Context) ([]string, error)
	Indexes() []string
	Notices() []string
	Config() config.Config
	DefaultIndex() string
	Session(ctx context.Context, id string) (session.Session, error)
	ListSessions(ctx context.Context) ([]session.Session, error)
	Build(ctx context.Context, req app.BuildRequest) (index.Summary, error)
	Changed(ctx context.Context, index string, sources []agent.Source) (map[int]bool, error)
	// Freshness is how far an index is in step with its files, from
	// whichever process watches it (the status bar says it).
	Freshness(ctx context.Context, name string) (index.Freshness, error)
}

// Options start a chat.
type Options struct {
	// Resume continues this session; "" starts a new one.
	Resume string
	// Theme is "dark", "light" or "auto" (from the terminal's background).
	Theme string
	// NoColor is set when NO_COLOR is.
	NoColor bool
	// NoLinks turns OSC 8 hyperlinks off, for terminals that would print
	// them (the Linux console, TERM=dumb).
	NoLinks bool
	// Getenv reads the environment (the editor, tmux, the display).
	Getenv func(string) string
	// LogPath is where details of errors go, for the messages that say so.
	LogPath string
	// SystemClipboard copies to the system clipboard and names the tool;
	// nil uses wl-copy, xclip, xsel or pbcopy (clipboard.System).
	SystemClipboard func(text string) (string, error)
}

// frame is how long token deltas are gathered before the screen updates.
const frame = 30 * time.Millisecond

// Model is the chat.
type Model struct {
	eng  Engine
	opts Options
	ctx  context.Context

	width, height int
	st            styles
	theme         string // dark, light or auto
	bgDark        bool   // the terminal's background, when it told us
	keys          keyMap
	help          help.Model
	showHelp      bool
	input         textarea.Model
	spin          spinner.Model

	turns     []*turn
	sessionID string
	history   []string // questions asked, for Up/Down
	histPos   int

	// The running turn: one at a time, with its own context.
	seq    int
	cancel context.CancelFunc
	live   *turn
	events <-chan agent.Event

	// Scrolling: offset is the first transcript line shown; follow keeps
	// the bottom in view while an answer streams.
	offset int
	follow bool

	info      index.Info
	fresh     index.Freshness // of m.index, as last read (State "" until then)
	chatErr   error           // why the model cannot answer (banner), nil when it can
	statusMsg string
	// The chat's index, mode and model: passed on every call (the engine
	// keeps none), switched by /index, /mode, /model and a resume.
	index string
	mode  string
	model string

	building *building // an index build started with /add
	// settled is a failed turn whose ERROR badge a later successful /add
	// made stale: the status bar no longer shows it.
	settled  *turn
	panel    *panel
	picker   *picker
	openNext bool     // ctrl+o was pressed: the next digit opens that source
	polling  bool     // a status check is scheduled while the index is not built
	indexes  []string // built indexes, for /index completion
	quitting bool
	models   []string // for /model completion

	// flat holds the lines of turns[:flatN], all finished, at flatKey.
	flat    []string
	flatN   int
	flatKey renderKey

	now func() time.Time // the clock; tests fix it
}

// New returns the chat model over eng.
func New(ctx context.Context, eng Engine, opts Options) *Model {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Theme == "" {
		opts.Theme = "auto"
	}
	if opts.SystemClipboard == nil {
		getenv := opts.Getenv
		opts.SystemClipboard = func(text string) (string, error) { return clipboard.System(text, getenv) }
	}
	cfg := eng.Config()
	m := &Model{eng: eng, opts: opts, ctx: ctx, theme: opts.Theme, bgDark: true, follow: true,
		index: eng.DefaultIndex(), mode: cfg.Mode, model: cfg.ChatModel, sessionID: opts.Resume, width: 80, height: 24, now: time.Now}
	m.keys = newKeyMap("ctrl+j")
	m.help = help.New()
	m.input = textarea.New()
	m.input.Placeholder = "Ask about your documents…  (/help for commands)"
	m.input.ShowLineNumbers = false
	m.input.Prompt = "┃ "
	m.input.SetHeight(1)
	m.input.MaxHeight = 6
	m.input.KeyMap.InsertNewline = m.keys.Newline
	m.input.Focus()
	m.spin = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m.applyTheme()
	return m
}

func (m *Model) dark() bool {
	switch m.theme {
	case "dark":
		return true
	case "light":
		return false
	}
	return m.bgDark
}

func (m *Model) applyTheme() {
	m.invalidate()
	m.st = newStyles(m.dark(), m.opts.NoColor)
	m.st.links = !m.opts.NoLinks
	ts := textarea.DefaultStyles(m.dark())
	m.help.Styles = help.DefaultStyles(m.dark())
	if m.opts.NoColor {
		// The terminal would drop the colours anyway (Bubble Tea honours
		// NO_COLOR); plain styles keep the layout the same without them.
		plain := textarea.StyleState{Selection: lipgloss.NewStyle().Reverse(true)}
		ts.Focused, ts.Blurred, ts.Cursor.Color = plain, plain, nil
		m.help.Styles = help.Styles{}
	}
	m.input.SetStyles(ts)
}

// Messages from commands (all I/O happens in commands, never in Update).
type (
	statusMsg struct {
		indexes []string
		models  []string
		info    index.Info
		err     error
		chatErr error
		notices []string
	}
	turnStartedMsg struct {
		seq     int
		session string
		events  <-chan agent.Event
		chatErr error
		err     error
	}
	eventsMsg struct {
		seq    int
		events []agent.Event
		closed bool
	}
	changedMsg struct {
		t       *turn
		changed map[int]bool
	}
	infoMsg struct {
		text string
		err  error
	}
	searchMsg struct {
		query string
		res   app.SearchResult
		err   error
	}
	modelsMsg struct {
		names []string
		err   error
	}
	sessionsMsg struct {
		list []session.Session
		err  error
	}
	resumeMsg struct {
		id  string
		se  session.Session
		err error
	}
	editorDoneMsg struct{ err error }
	openEditorMsg struct {
		cmd *exec.Cmd
		err error
	}
	copiedMsg struct {
		what, how string
		err       error
	}
	quitNowMsg    struct{}
	pollStatusMsg struct{}
	// freshMsg is an index's freshness as read; pollFreshMsg reads it
	// again.
	freshMsg struct {
		index string
		f     index.Freshness
	}
	pollFreshMsg struct{}
)

// freshEvery is how often the chat reads its index's freshness: the
// watcher may be another process, which tells it nothing.
var freshEvery = 2 * time.Second

func (m *Model) checkFresh() tea.Cmd {
	eng, ctx, name := m.eng, m.ctx, m.index
	return func() tea.Msg {
		f, err := eng.Freshness(ctx, name)
		if err != nil {
			f = index.Freshness{} // unknown: the status bar says nothing
		}
		return freshMsg{index: name, f: f}
	}
}

// Init asks the terminal for its background and keyboard, and the engine
// for the index and the model.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.checkStatus(true), m.checkFresh(), textarea.Blink}
	if m.theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.sessionID != "" {
		cmds = append(cmds, m.loadSession(m.sessionID))
	}
	return tea.Batch(cmds...)
}

func (m *Model) checkStatus(withNotices bool) tea.Cmd {
	eng, ctx, name, model := m.eng, m.ctx, m.index, m.model
	return func() tea.Msg {
		info, err := eng.IndexInfo(ctx, name)
		msg := statusMsg{info: info, err: err, chatErr: eng.ChatStatus(ctx, model), indexes: eng.Indexes()}
		if withNotices { // once, at start: notices, and model names for /model completion
			msg.notices = eng.Notices()
			if msg.chatErr == nil {
				msg.models, _ = eng.Models(ctx)
			}
		}
		return msg
	}
}

// Update is the chat's state machine. It recovers from a panic in any
// branch: the terminal stays usable and the log says what happened.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("chat: panic in update", "panic", r, "stack", string(debug.Stack()))
			m.statusMsg = "internal error (details in " + m.opts.LogPath + ")"
			cmd = nil
		}
	}()
	return m.update(msg)
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.BackgroundColorMsg:
		m.bgDark = msg.IsDark()
		m.applyTheme()
		return m, nil
	case tea.KeyboardEnhancementsMsg:
		if msg.SupportsKeyDisambiguation() {
			m.keys = newKeyMap("shift+enter")
			m.input.KeyMap.InsertNewline = m.keys.Newline
		}
		return m, nil
	case spinner.TickMsg:
		// The spinner turns only while a turn runs: an idle chat draws nothing.
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		if m.live == nil && m.building == nil {
			cmd = nil
		}
		return m, cmd
	case statusMsg:
		m.info = msg.info
		if msg.indexes != nil {
			m.indexes = msg.indexes
		}
		if msg.models != nil {
			m.models = msg.models
		}
		m.chatErr = msg.chatErr
		if msg.err != nil {
			m.statusMsg = excerpt.FirstLine(msg.err.Error())
		}
		for _, n := range msg.notices {
			m.addInfo("note: " + n)
		}
		if !msg.info.Built && !m.polling {
			// Watch for the index a `lore index` in another terminal builds.
			m.polling = true
			return m, tea.Tick(2*time.Second, func(time.Time) tea.Msg { return pollStatusMsg{} })
		}
		return m, nil
	case freshMsg:
		// One read at a time, each followed by the next: the chain
		// Init started.
		next := tea.Tick(freshEvery, func(time.Time) tea.Msg { return pollFreshMsg{} })
		if msg.index != m.index {
			return m, next // read before /index switched: read again
		}
		synced := !msg.f.SyncedAt.IsZero() && !msg.f.SyncedAt.Equal(m.fresh.SyncedAt) && m.fresh.State != ""
		m.fresh = msg.f
		if synced && m.building == nil {
			// New documents: the chunk count in the status bar follows.
			return m, tea.Batch(next, m.checkStatus(false))
		}
		return m, next
	case pollFreshMsg:
		return m, m.checkFresh()
	case pollStatusMsg:
		m.polling = false
		if m.info.Built {
			return m, nil
		}
		return m, m.checkStatus(false)
	case turnStartedMsg:
		return m.turnStarted(msg)
	case eventsMsg:
		return m.handleEvents(msg)
	case changedMsg:
		msg.t.changed = msg.changed
		msg.t.cache = nil
		m.invalidate()
		return m, nil
	case infoMsg:
		if msg.err != nil {
			m.addInfo(excerpt.FirstLine(msg.err.Error()))
		} else {
			m.addInfo(msg.text)
		}
		return m, nil
	case searchMsg:
		m.addSearch(msg)
		return m, nil
	case modelsMsg:
		return m.modelsLoaded(msg)
	case sessionsMsg:
		if msg.err != nil {
			m.addInfo(excerpt.FirstLine(msg.err.Error()))
			return m, nil
		}
		m.picker = newSessionPicker(m.index, msg.list)
		return m, nil
	case resumeMsg:
		return m.resumed(msg)
	case openEditorMsg:
		if msg.err != nil {
			m.statusMsg = msg.err.Error()
			return m, nil
		}
		return m, tea.ExecProcess(msg.cmd, func(err error) tea.Msg { return editorDoneMsg{err: err} })
	case editorDoneMsg:
		if msg.err != nil {
			m.statusMsg = "editor: " + excerpt.FirstLine(msg.err.Error())
		}
		return m, nil
	case copiedMsg:
		switch {
		case msg.err != nil:
			m.statusMsg = msg.err.Error()
		default:
			m.statusMsg = "copied " + msg.what + " (" + msg.how + ")"
		}
		return m, nil
	case buildMsg:
		return m.buildUpdate(msg)
	case quitNowMsg:
		return m, tea.Quit
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(-3)
		case tea.MouseWheelDown:
			m.scroll(3)
		}
		return m, nil
	case tea.PasteMsg:
		// Bracketed paste goes into the input, newlines and all: it never sends.
		// The input grows first: one that is still one line high when the
		// text goes in scrolls to its last line and stays there.
		m.input.SetHeight(min(m.input.LineCount()+strings.Count(msg.Content, "\n"), 6))
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		m.layout()
		return m, cmd
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

func (m *Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	m.statusMsg = "" // a key press means the last message was seen
	if m.picker != nil {
		return m.pickerKey(msg)
	}
	if m.panel != nil {
		return m.panelKey(msg)
	}
	if m.openNext {
		m.openNext, m.statusMsg = false, ""
		if n := int(msg.Code - '0'); msg.Code >= '1' && msg.Code <= '9' {
			return m, m.openSource(m.lastTurn(), n)
		}
	}
	switch {
	case k == "ctrl+c":
		if m.live != nil {
			m.cancelTurn()
			return m, nil
		}
		return m.quit()
	case k == "ctrl+d":
		return m.quit()
	case k == "esc":
		switch {
		case m.showHelp:
			m.showHelp = false
		case m.live != nil:
			m.cancelTurn()
		case m.building != nil:
			m.building.cancel()
		}
		return m, nil
	case k == "enter":
		return m.submit()
	case k == "pgup":
		m.scroll(-max(m.transcriptHeight()-2, 1))
		return m, nil
	case k == "pgdown":
		m.scroll(max(m.transcriptHeight()-2, 1))
		return m, nil
	case k == "home":
		m.follow, m.offset = false, 0
		return m, nil
	case k == "end":
		m.follow = true
		return m, nil
	case k == "ctrl+t":
		m.jumpToAnswer()
		return m, nil
	case k == "ctrl+s":
		m.openPanel()
		return m, nil
	case k == "ctrl+o":
		m.openNext = true
		m.statusMsg = "open which source? press its number"
		return m, nil
	case k == "ctrl+y":
		return m, m.copyAnswer("answer")
	case strings.HasPrefix(k, "alt+") && len(k) == 5 && k[4] >= '1' && k[4] <= '9':
		return m, m.openSource(m.lastTurn(), int(k[4]-'0'))
	case k == "tab":
		m.complete()
		return m, nil
	case k == "?" && m.input.Value() == "":
		m.showHelp = !m.showHelp
		return m, nil
	case (k == "up" || k == "down") && (m.input.Value() == "" || m.histPos < len(m.history)) && m.input.LineCount() <= 1:
		m.recall(k == "up")
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	m.layout()
	return m, cmd
}

// recall puts an earlier question in the input (Up), or a later one (Down).
func (m *Model) recall(up bool) {
	if len(m.history) == 0 {
		return
	}
	if up {
		m.histPos = max(m.histPos-1, 0)
	} else {
		m.histPos = min(m.histPos+1, len(m.history))
	}
	if m.histPos == len(m.history) {
		m.input.Reset()
	} else {
		m.input.SetValue(m.history[m.histPos])
	}
	m.layout()
}

func (m *Model) quit() (tea.Model, tea.Cmd) {
	if m.building != nil {
		m.building.cancel() // what it indexed is saved; the next /add finishes
	}
	if m.live == nil {
		return m, tea.Quit
	}
	// Let the turn end so that what streamed is saved, then quit; the
	// agent stops within a moment of its context ending, but never wait
	// on it for long.
	m.quitting = true
	m.cancelTurn()
	return m, tea.Tick(3*time.Second, func(time.Time) tea.Msg { return quitNowMsg{} })
}

func (m *Model) cancelTurn() {
	if m.cancel != nil {
		m.cancel()
	}
}

// detachTurn cancels the running turn and stops showing it, for /new and
// a resume: its events are drained in the background (the engine still
// saves what it has, in its own session) and never touch this one.
func (m *Model) detachTurn() tea.Cmd {
	if m.live == nil {
		return nil
	}
	m.cancelTurn()
	events := m.events
	m.live, m.cancel, m.events = nil, nil, nil
	m.seq++ // a late turnStartedMsg or batch of the old turn is ignored
	if events == nil {
		return nil
	}
	return func() tea.Msg {
		for range events {
		}
		return nil
	}
}

// submit sends the input: a /command, or a question.
func (m *Model) submit() (tea.Model, tea.Cmd) {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return m, nil
	}
	m.input.Reset()
	m.layout()
	m.showHelp = false
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	return m.ask(text)
}

// ask starts a turn for question. One turn runs at a time.
func (m *Model) ask(question string) (tea.Model, tea.Cmd) {
	if m.live != nil {
		m.statusMsg = "an answer is still running: esc cancels it"
		m.input.SetValue(question)
		return m, nil
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != question {
		m.history = append(m.history, question)
	}
	m.histPos = len(m.history)
	t := &turn{question: question, started: m.now()}
	m.turns = append(m.turns, t)
	m.live = t
	m.follow = true
	m.statusMsg = ""
	m.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel = cancel
	seq, eng, sessionID, name, mode, model := m.seq, m.eng, m.sessionID, m.index, m.mode, m.model
	return m, func() tea.Msg {
		// The model is checked again on every send: starting Ollama or
		// pulling the model needs no restart. Without it the turn shows
		// passages (the banner says why) and the engine does not check again.
		chatErr := eng.ChatStatus(ctx, model)
		req := app.AskRequest{SessionID: sessionID, Turn: agent.Turn{Question: question}, Index: name, Mode: mode, Model: model,
			SourcesOnly: chatErr != nil}
		id, events, err := eng.Ask(ctx, req)
		return turnStartedMsg{seq: seq, session: id, events: events, chatErr: chatErr, err: err}
	}
}

func (m *Model) turnStarted(msg turnStartedMsg) (tea.Model, tea.Cmd) {
	if msg.seq != m.seq || m.live == nil {
		return m, nil
	}
	m.chatErr = msg.chatErr
	if msg.err != nil {
		m.live.state, m.live.err = turnFailed, excerpt.FirstLine(msg.err.Error())
		m.endTurn()
		return m, nil
	}
	// The session becomes this conversation's when the turn is saved (the
	// Saved event): a first turn cancelled before it found anything is
	// saved nowhere, and its id must not be reused.
	m.events = msg.events
	return m, tea.Batch(waitEvents(msg.seq, msg.events), m.spin.Tick)
}

// waitEvents reads the next events of a turn. Tokens that arrive within a
// frame are delivered together, so a fast model does not redraw the
// screen per token; anything else ends the batch, and the final event is
// always delivered.
func waitEvents(seq int, ch <-chan agent.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{seq: seq, closed: true}
		}
		msg := eventsMsg{seq: seq, events: []agent.Event{ev}}
		if _, tok := ev.(agent.Token); !tok {
			return msg
		}
		deadline := time.NewTimer(frame)
		defer deadline.Stop()
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					msg.closed = true
					return msg
				}
				msg.events = append(msg.events, ev)
				if _, tok := ev.(agent.Token); !tok {
					return msg
				}
			case <-deadline.C:
				return msg
			}
		}
	}
}

// handleEvents applies a batch of the running turn's events and arms the
// wait for the next batch.
func (m *Model) handleEvents(msg eventsMsg) (tea.Model, tea.Cmd) {
	t := m.live
	if msg.seq != m.seq || t == nil {
		return m, nil
	}
	var final bool
	for _, ev := range msg.events {
		switch ev := ev.(type) {
		case agent.StageStarted:
			t.stage, t.stageStarted = ev.Stage, m.now()
		case agent.Notice:
			t.notices = append(t.notices, termsafe.Text(ev.Text))
		case agent.SourcesChosen:
			t.route, t.sources = ev.Route, ev.Sources
			if ev.Notice != "" {
				t.notices = append(t.notices, termsafe.Text(ev.Notice))
			}
		case agent.Token:
			if t.firstToken.IsZero() {
				t.firstToken = m.now()
			}
			t.answer += t.safe.String(ev.Text)
			t.tokens++
		case agent.Saved:
			m.sessionID = ev.SessionID
		case agent.Done:
			t.state = turnDone
			m.finishTurn(t, ev.Result)
			final = true
		case agent.Cancelled:
			t.state = turnCancelled
			m.finishTurn(t, ev.Result)
			final = true
		case agent.Failed:
			t.state, t.err = turnFailed, explain(ev.Err, ev.Result.Answer != "")
			m.finishTurn(t, ev.Result)
			final = true
		}
	}
	if final || msg.closed {
		if t.state == turnRunning {
			t.state, t.err = turnFailed, "the answer ended without a result"
		}
		m.endTurn()
		if m.quitting {
			return m, tea.Quit
		}
		// The chunk count may have changed: a refresh can run beside the chat.
		return m, tea.Batch(checkChanged(m.ctx, m.eng, m.index, t), m.checkStatus(false))
	}
	return m, waitEvents(msg.seq, m.events)
}
