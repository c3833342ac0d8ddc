package tui

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/units"
)

// layout sizes the input for what is typed and the terminal's width.
func (m *Model) layout() {
	m.input.SetWidth(max(m.width-2, 10))
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 6))
	m.help.SetWidth(m.width)
}

// transcriptWidth is the transcript's width: the whole terminal, less the
// sources panel when it sits beside.
func (m *Model) transcriptWidth() int {
	if m.panel != nil && m.width >= wide {
		return m.width - m.panelWidth()
	}
	return m.width
}

func (m *Model) panelWidth() int { return m.width * 45 / 100 }

func (m *Model) bannerText() string {
	var b []string
	if m.unbuilt() && !m.emptyIndexShown() {
		// The empty-index screen says this at length; once a note or a
		// command's output has replaced it, the banner keeps saying it.
		b = append(b, fmt.Sprintf("NO INDEX %q YET · /add PATH here, or lore index PATH in another terminal", m.info.Name))
	}
	if m.chatErr != nil {
		b = append(b, m.chatErrText())
	}
	return strings.Join(b, "\n")
}

// unbuilt is true when the chat's index has never been built.
func (m *Model) unbuilt() bool { return !m.info.Built && m.info.Name != "" }

// emptyIndexShown is true while the transcript is the empty-index screen.
func (m *Model) emptyIndexShown() bool { return m.unbuilt() && len(m.turns) == 0 }

func (m *Model) chatErrText() string {
	// The sentinel's words ("ollama unreachable: ") repeat what follows.
	msg := excerpt.FirstLine(m.chatErr.Error())
	for _, sentinel := range []error{ollama.ErrUnreachable, ollama.ErrModelMissing} {
		msg = strings.TrimPrefix(msg, sentinel.Error()+": ")
	}
	return "SOURCES ONLY · " + msg + " " + app.DoctorHint
}

// transcriptHeight is what is left for the transcript after the input,
// the hint or help line, the banner and the status bar.
func (m *Model) transcriptHeight() int {
	h := m.height - m.input.Height() - m.helpHeight() - 1 // and the status bar
	if b := m.bannerText(); b != "" {
		h -= lipgloss.Height(wrap(b, m.width-2))
	}
	return max(h, 1)
}

func (m *Model) helpHeight() int {
	if m.showHelp {
		return lipgloss.Height(m.helpView())
	}
	return 1
}

// helpView is the full key help in columns; where the columns do not fit
// side by side (at 40 cells all but the first were cut), every binding
// flows in lines instead.
func (m *Model) helpView() string {
	groups := m.keys.FullHelp()
	probe := m.help
	probe.SetWidth(0)
	if full := probe.FullHelpView(groups); lipgloss.Width(full) <= m.width {
		return full
	}
	st := m.help.Styles
	sep := st.FullSeparator.Render(" • ")
	var lines []string
	line, w := "", 0
	for _, g := range groups {
		for _, b := range g {
			item := st.FullKey.Render(b.Help().Key) + " " + st.FullDesc.Render(b.Help().Desc)
			iw := ansi.StringWidth(item)
			switch {
			case line == "":
				line, w = item, iw
			case w+3+iw <= m.width:
				line, w = line+sep+item, w+3+iw
			default:
				lines = append(lines, ansi.Truncate(line, m.width, "…"))
				line, w = item, iw
			}
		}
	}
	lines = append(lines, ansi.Truncate(line, m.width, "…"))
	return strings.Join(lines, "\n")
}

// transcript is every line of every turn at the transcript's width. The
// lines of finished turns are kept joined (flat); only the live turn is
// rendered per frame.
func (m *Model) transcript() []string {
	key := renderKey{m.transcriptWidth(), m.st.glamourStyle()}
	n := 0 // the finished prefix: output added during a turn comes after it
	for n < len(m.turns) && m.turns[n].finished() {
		n++
	}
	if m.flatKey != key || m.flatN > n {
		m.invalidate()
		m.flatKey = key
	}
	for _, t := range m.turns[m.flatN:n] {
		m.flat = append(m.flat, t.lines(key.width, m.st)...)
	}
	m.flatN = n
	if n == len(m.turns) {
		return m.flat
	}
	lines := m.flat[:len(m.flat):len(m.flat)]
	for _, t := range m.turns[n:] {
		lines = append(lines, t.lines(key.width, m.st)...)
	}
	return lines
}

// invalidate drops the joined lines of finished turns, after a change to
// one of them or to the list.
func (m *Model) invalidate() { m.flat, m.flatN = nil, 0 }

func (m *Model) scroll(delta int) {
	total := len(m.transcript())
	h := m.transcriptHeight()
	if m.follow {
		m.offset = max(total-h, 0)
	}
	m.offset += delta
	m.follow = m.offset >= total-h
	m.clampOffset()
}

func (m *Model) clampOffset() {
	total := len(m.transcript())
	h := m.transcriptHeight()
	m.offset = min(max(m.offset, 0), max(total-h, 0))
}

// View draws the chat. A panic while drawing is logged and shown as one
// line; it never leaves the terminal in a broken state.
func (m *Model) View() (v tea.View) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("chat: panic in view", "panic", r, "stack", string(debug.Stack()))
			v = tea.NewView("lore hit an internal error while drawing; details are in " + m.opts.LogPath + ". ctrl+d quits.")
			v.AltScreen = true
		}
	}()
	v = tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "lore · " + m.info.Name
	return v
}

// render is the screen as a string (the golden tests compare it).
func (m *Model) render() string {
	h := m.transcriptHeight()
	var main string
	switch {
	case m.picker != nil:
		main = m.pickerView(m.width, h)
	case m.panel != nil && m.width < wide:
		main = m.panelView(m.width, h)
	default:
		main = m.transcriptView(m.transcriptWidth(), h)
		if m.panel != nil {
			main = lipgloss.JoinHorizontal(lipgloss.Top, main, m.panelView(m.panelWidth(), h))
		}
	}
	parts := []string{main}
	if b := m.bannerText(); b != "" {
		parts = append(parts, m.st.banner.Render(wrap(b, m.width-2)))
	}
	parts = append(parts, m.input.View())
	if m.showHelp {
		parts = append(parts, m.helpView())
	} else {
		parts = append(parts, m.hintLine())
	}
	parts = append(parts, m.statusBar())
	return strings.Join(parts, "\n")
}

// transcriptView is the visible window of the transcript, exactly height
// lines, with a "↓ N new lines" marker when the user scrolled up while an
// answer streams below.
func (m *Model) transcriptView(width, height int) string {
	if m.emptyIndexShown() {
		return m.emptyIndexView(width, height)
	}
	lines := m.transcript()
	total := len(lines)
	if m.follow {
		m.offset = max(total-height, 0)
	}
	m.offset = min(max(m.offset, 0), max(total-height, 0))
	end := min(m.offset+height, total)
	window := make([]string, 0, height)
	window = append(window, lines[m.offset:end]...)
	for len(window) < height {
		window = append(window, "")
	}
	if below := total - end; below > 0 && !m.follow {
		window[height-1] = m.st.newLines.Render(fmt.Sprintf("↓ %d new lines · end follows", below))
	}
	// Every line exactly width cells: the panel beside it stays in place.
	for i, l := range window {
		switch w := ansi.StringWidth(l); {
		case w > width:
			window[i] = ansi.Truncate(l, width, "")
		case w < width:
			window[i] = l + strings.Repeat(" ", width-w)
		}
	}
	return strings.Join(window, "\n")
}

func (m *Model) emptyIndexView(width, height int) string {
	body := strings.Join([]string{
		m.st.panelTitle.Render(fmt.Sprintf("No index %q yet", m.info.Name)),
		"",
		"Index a folder of documents from here:",
		"",
		"    /add ~/notes ./docs",
		"",
		m.st.dim.Render("or in another terminal: lore index ~/notes ./docs"),
		"",
		m.st.dim.Render("Keyword search only, no Ollama needed:"),
		m.st.dim.Render("    lore index --embedder none PATH"),
		"",
		m.st.dim.Render("The chat picks the index up as soon as it is built."),
	}, "\n")
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, wrap(body, width-4))
}

func (m *Model) hintLine() string {
	if m.statusMsg != "" {
		return ansi.Truncate(m.st.notice.Render(m.statusMsg), m.width, "…")
	}
	return ansi.Truncate(m.help.ShortHelpView(m.keys.ShortHelp()), m.width, "…")
}

var stageLabel = map[agent.Stage]string{
	agent.StageCondense: "condensing",
	agent.StageRetrieve: "retrieving",
	agent.StageRerank:   "reranking",
	agent.StageRoute:    "routing",
	agent.StageWeb:      "searching the web",
	agent.StageGenerate: "generating",
}

// statusBar: the index and its size, the mode, the model; then what runs
// now with a spinner and its time, or how the last answer was made.
func (m *Model) statusBar() string {
	st := m.st
	mode := st.badgeOffline.Render("OFFLINE")
	if m.mode == "online" {
		mode = st.badgeOnline.Render("ONLINE")
	}
	chunks := ""
	if m.info.Built {
		chunks = " · " + units.Plural(m.info.Chunks, "chunk")
	} else if m.info.Name != "" {
		chunks = " · not built"
	}
	right := ""
	if t := m.live; t != nil && t.stage != "" {
		label := stageLabel[t.stage]
		if t.stage == agent.StageGenerate && !t.firstToken.IsZero() {
			if secs := m.now().Sub(t.firstToken).Seconds(); secs > 0.2 {
				label += fmt.Sprintf(" %.0f tok/s", float64(t.tokens)/secs)
			}
		}
		right = st.status.Render(fmt.Sprintf(" %s %s %.1fs ", m.spin.View(), label, m.now().Sub(t.started).Seconds()))
	} else if m.building != nil {
		right = st.status.Render(" " + m.spin.View() + m.building.status())
	} else if t := m.lastTurn(); t != nil && t.state != turnInfo && t != m.settled {
		right = m.routeBadge(t) + st.status.Render(m.decided(t))
	}
	// On a narrow terminal the route and the time matter more than the
	// chunk count and the model name: drop those first; how fresh the
	// index is goes before the name of the index.
	fresh := ""
	if s := m.freshness(); s != "" {
		fresh = st.status.Render(" " + s + " ")
	}
	var left string
	for _, l := range []string{
		st.statusKey.Render(" lore ") + st.status.Render(m.info.Name+chunks+" ") + mode + st.status.Render(" "+m.model+" ") + fresh,
		st.statusKey.Render(" lore ") + st.status.Render(m.info.Name+" ") + mode + st.status.Render(" "+m.model+" ") + fresh,
		st.statusKey.Render(" lore ") + st.status.Render(m.info.Name+" ") + mode + fresh,
		st.status.Render(" "+m.info.Name+" ") + mode + fresh,
		mode + fresh,
		mode,
	} {
		left = l
		if lipgloss.Width(l)+lipgloss.Width(right) <= m.width {
			break
		}
	}
	gap := max(m.width-lipgloss.Width(left)-lipgloss.Width(right), 0)
	if gap == 0 && lipgloss.Width(left)+lipgloss.Width(right) > m.width {
		return ansi.Truncate(left+right, m.width, "")
	}
	return left + st.status.Render(strings.Repeat(" ", gap)) + right
}

// freshness is how far the index is in step with its files, when a
// process keeps it so: "synced 3s ago", "indexing 12 files…", "vectors
// pending (Ollama down)"; "" when none does. Nothing of the watcher's own
// text (its name, its error: a file any process may write) is shown.
func (m *Model) freshness() string {
	f := m.fresh
	switch {
	case f.State == "" || f.State == index.WatchStopped:
		return ""
	case f.State == index.WatchIndexing || f.Pending > 0:
		if f.Pending == 0 {
			return "indexing…"
		}
		return "indexing " + units.Plural(f.Pending, "file") + "…"
	case f.State == index.WatchVectorsPending:
		return "vectors pending (Ollama down)"
	case f.SyncedAt.IsZero():
		return "watching"
	}
	d := max(m.now().Sub(f.SyncedAt), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("synced %ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("synced %dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("synced %dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("synced %dd ago", int(d.Hours()/24))
}

func (m *Model) routeBadge(t *turn) string {
	switch {
	case t.state == turnCancelled:
		return m.st.badgeNone.Render("CANCELLED")
	case t.state == turnFailed:
		return m.st.badgeNone.Render("ERROR")
	}
	switch t.route {
	case agent.RouteDocs:
		return m.st.badgeDocs.Render("DOCS")
	case agent.RouteWeb:
		return m.st.badgeWeb.Render("WEB")
	case agent.RouteNone:
		return m.st.badgeNone.Render("NOT IN DOCS")
	case agent.RouteSourcesOnly:
		return m.st.badgeSources.Render("SOURCES ONLY")
	}
	return ""
}

// decided says what routed the answer and how long it took.
func (m *Model) decided(t *turn) string {
	s := ""
	if t.best != nil {
		s = fmt.Sprintf(" best %+.2f", *t.best)
	}
	if t.total > 0 {
		s += fmt.Sprintf(" %.1fs", t.total.Seconds())
	}
	return s + " "
}
