package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

// finishTurn takes what the final event says as the truth about the turn.
func (m *Model) finishTurn(t *turn, r agent.Result) {
	if r.Answer != "" || t.answer == "" {
		t.answer = termsafe.Text(r.Answer)
	}
	if len(r.Sources) > 0 {
		t.sources = r.Sources
	}
	t.candidates = r.Candidates
	if r.Route != "" {
		t.route = r.Route
	}
	t.best = r.BestScore
	t.total = r.Total
	if t.total == 0 {
		t.total = m.now().Sub(t.started)
	}
	if t.route == agent.RouteNone && t.answer == "" {
		t.answer = agent.NotInDocs
	}
}

func (m *Model) endTurn() {
	if m.cancel != nil {
		m.cancel()
	}
	m.live, m.cancel, m.events = nil, nil, nil
}

// explain is a failed turn's one line: what broke and the fix.
func explain(err error, partial bool) string {
	msg := excerpt.FirstLine(err.Error())
	if partial {
		return "the answer broke off: " + msg
	}
	if app.SetupProblem(err) {
		msg += " " + app.DoctorHint
	}
	return msg
}

// checkChanged asks the index which sources' files changed on disk since
// they were indexed, so that a source line can say so. The index compares
// what it recorded (size, mtime, hash): the passage text is extracted (HTML,
// PDF, another encoding) and is not the file's lines.
func checkChanged(ctx context.Context, eng Engine, index string, t *turn) tea.Cmd {
	sources := t.sources
	return func() tea.Msg {
		changed, err := eng.Changed(ctx, index, sources)
		if err != nil || len(changed) == 0 {
			return nil // no index to compare with: nothing to flag
		}
		return changedMsg{t: t, changed: changed}
	}
}

// addInfo appends a line of output that is not an answer.
func (m *Model) addInfo(text string) {
	m.turns = append(m.turns, &turn{state: turnInfo, info: text})
	m.follow = true
}

func (m *Model) lastTurn() *turn {
	for i := len(m.turns) - 1; i >= 0; i-- {
		if m.turns[i].state != turnInfo || len(m.turns[i].candidates) > 0 {
			return m.turns[i]
		}
	}
	return nil
}

// addSearch shows /search results: passages and scores, no model call.
func (m *Model) addSearch(msg searchMsg) {
	if msg.err != nil {
		m.addInfo("search: " + excerpt.FirstLine(msg.err.Error()))
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "search %q (%s, %d ms)", msg.query, msg.res.Mode, msg.res.Total.Milliseconds())
	if msg.res.Notice != "" {
		b.WriteString("\nnote: " + msg.res.Notice)
	}
	if len(msg.res.Passages) == 0 {
		b.WriteString("\nno matching passages")
	}
	t := &turn{state: turnInfo}
	for i, p := range msg.res.Passages {
		fmt.Fprintf(&b, "\n%2d. %s:%d-%d", i+1, termsafe.Line(p.Shown()), p.Start, p.End)
		if p.Heading != "" {
			b.WriteString(" > " + termsafe.Line(p.Heading))
		}
		b.WriteString("\n    " + scoreLine(p))
		t.sources = append(t.sources, passageSource(i+1, p))
	}
	t.info = b.String()
	t.candidates = msg.res.Passages
	m.turns = append(m.turns, t)
	m.follow = true
}

func passageSource(n int, p agent.Passage) agent.Source {
	return agent.Source{N: n, Root: p.Root, Path: p.Path, Name: p.Name, Start: p.Start, End: p.End, Heading: p.Heading, Text: p.Text,
		Score: p.Score, Rerank: p.Rerank, LexicalRank: p.LexicalRank, VectorRank: p.VectorRank}
}

// scoreLine is a passage's scores and ranks, as the sources panel shows them.
func scoreLine(p agent.Passage) string {
	s := fmt.Sprintf("fused %.4f", p.Score)
	if p.Rerank != nil {
		s = fmt.Sprintf("rerank %+.2f  %s", *p.Rerank, s)
	}
	if p.LexicalRank > 0 {
		s += fmt.Sprintf("  bm25 #%d", p.LexicalRank)
	}
	if p.VectorRank > 0 {
		s += fmt.Sprintf("  vector #%d", p.VectorRank)
	}
	return s
}

func (m *Model) loadSession(id string) tea.Cmd {
	eng, ctx, current := m.eng, m.ctx, m.index
	return func() tea.Msg {
		se, err := eng.Session(ctx, id)
		if err == nil && se.Index != "" && se.Index != current && !slices.Contains(eng.Indexes(), se.Index) {
			// Its passages and follow-ups belong to that index: answering
			// them from another would mix two sets of documents.
			err = fmt.Errorf("session %s was asked on index %q, which is not built (/index lists the indexes)", se.ID, se.Index)
		}
		return resumeMsg{id: id, se: se, err: err}
	}
}

// resumed shows a saved session's turns and continues it.
func (m *Model) resumed(msg resumeMsg) (tea.Model, tea.Cmd) {
	if msg.err != nil {
		if m.sessionID == msg.id { // lore chat --resume ID: start afresh instead
			m.sessionID = ""
		}
		m.addInfo(fmt.Sprintf("could not resume: %s (/sessions lists them)", excerpt.FirstLine(msg.err.Error())))
		return m, nil
	}
	cmd := m.detachTurn()
	m.turns = nil
	m.invalidate()
	m.sessionID = msg.se.ID
	for _, st := range msg.se.Turns {
		t := &turn{question: st.Question, answer: termsafe.Text(st.Answer), state: turnDone, route: agent.Route(st.Route)}
		if st.Cancelled {
			t.state = turnCancelled // a partial answer, shown as one
		}
		for _, s := range st.Sources {
			t.sources = append(t.sources, agent.Source{N: s.N, Root: s.Root, Path: s.Path, Start: s.Start, End: s.End,
				Heading: s.Heading, URL: s.URL, Title: s.Title, Cited: s.Cited})
		}
		agent.NameSources(t.sources)
		m.turns = append(m.turns, t)
		m.history = append(m.history, st.Question)
	}
	m.histPos = len(m.history)
	m.addInfo(fmt.Sprintf("resumed session %s (%d turns, started %s)", msg.se.ID, len(msg.se.Turns), msg.se.Created.Format("2006-01-02 15:04")))
	m.follow = true
	if idx := msg.se.Index; idx != "" && idx != m.index {
		// A follow-up is answered from the session's own documents.
		if err := config.CheckIndexName(idx); err != nil {
			m.addInfo("index: " + err.Error())
			return m, cmd
		}
		m.index = idx
		m.addInfo("index: " + idx + " (the session's)")
		return m, tea.Batch(cmd, m.checkStatus(false))
	}
	return m, cmd
}

func (m *Model) listSessions() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		list, err := eng.ListSessions(ctx)
		return sessionsMsg{list: list, err: err}
	}
}

func (m *Model) search(query string) tea.Cmd {
	eng, ctx, name, k := m.eng, m.ctx, m.index, m.eng.Config().TopK
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		res, err := eng.Search(ctx, app.SearchRequest{Index: name, Query: query, K: k})
		return searchMsg{query: query, res: res, err: err}
	}
}

func (m *Model) modelsLoaded(msg modelsMsg) (tea.Model, tea.Cmd) {
	if msg.err != nil {
		m.addInfo("models: " + excerpt.FirstLine(msg.err.Error()))
		return m, nil
	}
	m.models = msg.names
	var b strings.Builder
	b.WriteString("installed Ollama models (/model NAME switches):")
	for _, n := range msg.names {
		mark := "  "
		if n == m.model || strings.TrimSuffix(n, ":latest") == m.model {
			mark = "● "
		}
		b.WriteString("\n" + mark + termsafe.Line(n)) // names come from the server
	}
	if len(msg.names) == 0 {
		b.WriteString("\n  none: `ollama pull llama3.2:3b`")
	}
	m.addInfo(b.String())
	return m, nil
}

// sessionRow is a session's line in the picker, width cells at most: in
// a narrow window the id and the year go, so that the question shows (at
// 40 cells it had three characters).
func sessionRow(s session.Session, width int) string {
	if width < 60 {
		return s.Updated.Format("01-02 15:04") + "  " + termsafe.Line(s.Title)
	}
	return sessionTitle(s)
}

// sessionTitle is how the picker shows a session, and what typing filters.
func sessionTitle(s session.Session) string {
	return fmt.Sprintf("%s  %s  %s", s.ID, s.Updated.Format("2006-01-02 15:04"), termsafe.Line(s.Title))
}
