package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

// panel lists every passage retrieved for a turn, with its scores and
// ranks: beside the transcript on a wide terminal, over it on a narrow one.
type panel struct {
	turn   *turn
	items  []agent.Passage
	cursor int
	show   bool // the passage under the cursor is shown in full
}

// wide is the width from which the panel sits beside the transcript.
const wide = 120

func (m *Model) openPanel() {
	t := m.lastTurn()
	if t == nil {
		m.statusMsg = "no sources yet: ask a question first"
		return
	}
	items := t.candidates
	if len(items) == 0 { // a resumed turn keeps its sources, not every candidate
		for _, s := range t.sources {
			items = append(items, agent.Passage{Root: s.Root, Path: s.Path, Name: s.Name, Start: s.Start, End: s.End, Heading: s.Heading, Text: s.Text,
				Score: s.Score, Rerank: s.Rerank, LexicalRank: s.LexicalRank, VectorRank: s.VectorRank})
		}
	}
	m.panel = &panel{turn: t, items: items}
	m.layout()
}

func (m *Model) panelKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	p := m.panel
	switch msg.String() {
	case "esc", "ctrl+s", "q":
		m.panel = nil
		m.layout()
	case "up", "k":
		p.cursor = max(p.cursor-1, 0)
	case "down", "j":
		p.cursor = min(p.cursor+1, max(len(p.items)-1, 0))
	case "space":
		p.show = !p.show
	case "enter":
		if len(p.items) == 0 {
			return m, nil
		}
		it := p.items[p.cursor]
		return m, m.openPassage(it.Root, it.Path, it.Start, "")
	case "ctrl+c":
		m.panel = nil
		m.layout()
		return m.key(msg)
	case "ctrl+d":
		return m.quit()
	}
	return m, nil
}

// cited reports whether passage p is one of t's cited sources.
func (t *turn) cited(p agent.Passage) (int, bool) {
	for _, s := range t.sources {
		if s.Path == p.Path && s.Start == p.Start && s.Root == p.Root {
			return s.N, s.Cited
		}
	}
	return 0, false
}

func (m *Model) panelView(width, height int) string {
	p := m.panel
	inner := max(width-4, 10)
	lines := []string{ansi.Truncate(m.st.panelTitle.Render(fmt.Sprintf("Sources · %d passages", len(p.items)))+
		m.st.dim.Render("  ↑/↓ move · space text · enter open · esc close"), inner, "…")}
	if len(p.items) == 0 {
		lines = append(lines, m.st.dim.Render("no passages were retrieved"))
	}
	var detail []string
	for i, it := range p.items {
		n, cited := p.turn.cited(it)
		mark := "  "
		switch {
		case cited:
			mark = "● "
		case n > 0:
			mark = "○ "
		}
		label := fmt.Sprintf("%s%2d. %s:%d-%d", mark, i+1, termsafe.Line(it.Shown()), it.Start, it.End)
		if it.Heading != "" {
			label += " > " + termsafe.Line(it.Heading)
		}
		row := []string{ansi.Truncate(label, inner, "…"), "     " + ansi.Truncate(scoreLine(it), inner-5, "…")}
		if i == p.cursor {
			row[0] = m.st.cursor.Render(row[0])
			if p.show {
				for _, l := range excerpt.Lines(it.Text, 30, inner-5) {
					detail = append(detail, "     "+m.st.dim.Render(l))
				}
				row = append(row, detail...)
			}
		} else {
			row[1] = m.st.dim.Render(row[1])
		}
		lines = append(lines, row...)
	}
	// Keep the cursor's rows in view.
	body := lines[1:]
	cursorLine := 0
	for i := 0; i < p.cursor && i < len(p.items); i++ {
		cursorLine += 2
	}
	avail := max(height-3, 1)
	start := 0
	if cursorLine+2+len(detail) > avail {
		start = min(cursorLine, max(len(body)-avail, 0))
	}
	end := min(start+avail, len(body))
	shown := append([]string{lines[0]}, body[start:end]...)
	box := m.st.panel.Width(width).Height(height)
	return box.Render(strings.Join(shown, "\n"))
}

// picker chooses a saved session: arrows move, typing filters, enter resumes.
type picker struct {
	index  string // the chat's index: only its sessions are listed
	all    []session.Session
	filter string
	cursor int
}

// newSessionPicker lists the sessions of index, and those saved before lore
// recorded the index of a session.
func newSessionPicker(index string, list []session.Session) *picker {
	p := &picker{index: index}
	for _, s := range list {
		if s.Index == index || s.Index == "" {
			p.all = append(p.all, s)
		}
	}
	return p
}

func (p *picker) visible() []session.Session {
	if p.filter == "" {
		return p.all
	}
	var out []session.Session
	for _, s := range p.all {
		if strings.Contains(strings.ToLower(sessionTitle(s)), strings.ToLower(p.filter)) {
			out = append(out, s)
		}
	}
	return out
}

func (m *Model) pickerKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	p := m.picker
	vis := p.visible()
	switch k := msg.String(); k {
	case "esc":
		m.picker = nil
	case "ctrl+c", "ctrl+d":
		m.picker = nil
		return m.key(msg)
	case "up":
		p.cursor = max(p.cursor-1, 0)
	case "down":
		p.cursor = min(p.cursor+1, max(len(vis)-1, 0))
	case "enter":
		if len(vis) == 0 {
			return m, nil
		}
		m.picker = nil
		return m, m.loadSession(vis[p.cursor].ID)
	case "backspace":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter = string(r[:len(r)-1])
			p.cursor = 0
		}
	default:
		if msg.Text != "" {
			p.filter += msg.Text
			p.cursor = 0
		}
	}
	return m, nil
}

func (m *Model) pickerView(width, height int) string {
	p := m.picker
	vis := p.visible()
	lines := []string{ansi.Truncate(m.st.panelTitle.Render(fmt.Sprintf("Sessions of %s · %d", p.index, len(vis)))+m.st.dim.Render("  type to filter · ↑/↓ · enter resume · esc close"), max(width-4, 10), "…"),
		"filter: " + p.filter + "▏"}
	if len(vis) == 0 {
		lines = append(lines, m.st.dim.Render("no sessions match"))
	}
	avail := max(height-4, 1)
	start := max(0, p.cursor-avail+1)
	for i := start; i < len(vis) && i < start+avail; i++ {
		row := ansi.Truncate(sessionRow(vis[i], width-4), max(width-4, 10), "…")
		if i == p.cursor {
			row = m.st.cursor.Render(row)
		}
		lines = append(lines, row)
	}
	return m.st.panel.Width(width).Height(height).Render(strings.Join(lines, "\n"))
}
