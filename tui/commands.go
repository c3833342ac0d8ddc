package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/clipboard"
	"github.com/lore-cli/lore/internal/editor"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
)

// commands are the chat's /commands with their one-line help, in the
// order /help lists them.
var commands = []struct{ name, args, help string }{
	{"/help", "", "commands and keys"},
	{"/mode", "offline|online", "online searches the web when the docs do not answer"},
	{"/model", "[NAME]", "list installed Ollama models, or switch"},
	{"/index", "[NAME]", "list indexes, or switch"},
	{"/search", "QUERY", "passages only, no model call"},
	{"/add", "PATH...", "index folders or files into this index (lore index PATH)"},
	{"/sources", "", "every retrieved passage with its scores (ctrl+s)"},
	{"/retry", "", "ask the last question again"},
	{"/new", "", "start a new session"},
	{"/sessions", "", "pick a saved session to resume"},
	{"/resume", "ID", "continue a saved session"},
	{"/copy", "[code N|all]", "copy the last answer's markdown, code block N, or with sources"},
	{"/theme", "dark|light|auto", "colours"},
	{"/quit", "", "leave (ctrl+d)"},
}

// command runs a /command line.
func (m *Model) command(line string) (tea.Model, tea.Cmd) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help":
		var b strings.Builder
		b.WriteString("commands:")
		for _, c := range commands {
			fmt.Fprintf(&b, "\n  %-9s %-16s %s", c.name, c.args, c.help)
		}
		b.WriteString("\nkeys: ? shows them all; tab completes commands")
		m.addInfo(b.String())
	case "/mode":
		if arg != "offline" && arg != "online" {
			m.addInfo(fmt.Sprintf("mode %q: use offline or online", arg))
			break
		}
		m.mode = arg
		m.addInfo("mode: " + arg)
	case "/model":
		if arg == "" {
			eng, ctx := m.eng, m.ctx
			return m, func() tea.Msg {
				names, err := eng.Models(ctx)
				return modelsMsg{names: names, err: err}
			}
		}
		m.model = arg
		m.addInfo("model: " + arg)
		return m, m.checkStatus(false)
	case "/index":
		if arg == "" {
			eng, current := m.eng, m.info.Name
			return m, func() tea.Msg {
				return infoMsg{text: indexList(eng.Indexes(), current)}
			}
		}
		// An index that is not built is accepted: the banner says how
		// to build it.
		if err := config.CheckIndexName(arg); err != nil {
			m.addInfo("index: " + err.Error())
			break
		}
		if arg != m.index && m.sessionID != "" {
			// A session keeps to one index (the engine refuses a
			// follow-up on another): the next question starts anew.
			cmd := m.detachTurn()
			m.turns, m.sessionID = nil, ""
			m.invalidate()
			m.index = arg
			m.addInfo("index: " + arg + " (a new session: a session keeps to one index)")
			return m, tea.Batch(cmd, m.checkStatus(false))
		}
		m.index = arg
		m.addInfo("index: " + arg)
		return m, m.checkStatus(false)
	case "/search":
		if arg == "" {
			m.addInfo("/search needs a query: /search how do I ...")
			break
		}
		return m, m.search(arg)
	case "/add":
		if arg == "" {
			m.addInfo("/add needs a folder: /add ~/notes ./docs")
			break
		}
		return m.build(arg)
	case "/sources":
		m.openPanel()
	case "/retry":
		if len(m.history) == 0 {
			m.addInfo("nothing to retry yet")
			break
		}
		return m.ask(m.history[len(m.history)-1])
	case "/new":
		cmd := m.detachTurn()
		m.turns, m.sessionID = nil, ""
		m.invalidate()
		m.addInfo("new session")
		return m, cmd
	case "/sessions":
		return m, m.listSessions()
	case "/resume":
		if arg == "" {
			return m, m.listSessions()
		}
		return m, m.loadSession(arg)
	case "/copy":
		return m, m.copyAnswer(arg)
	case "/theme":
		if arg != "dark" && arg != "light" && arg != "auto" {
			m.addInfo("/theme dark, light or auto")
			break
		}
		m.theme = arg
		m.applyTheme()
		if arg == "auto" {
			return m, tea.RequestBackgroundColor
		}
	case "/quit", "/exit", "/q":
		return m.quit()
	default:
		m.addInfo(fmt.Sprintf("unknown command %s: /help lists them", name))
	}
	return m, nil
}

// indexList is /index's answer.
func indexList(names []string, current string) string {
	var b strings.Builder
	b.WriteString("indexes (/index NAME switches):")
	for _, n := range names {
		mark := "  "
		if n == current {
			mark = "● "
		}
		b.WriteString("\n" + mark + n)
	}
	if len(names) == 0 {
		b.WriteString("\n  none yet: `lore index PATH` or /add PATH")
	}
	return b.String()
}

// complete fills in a /command name or its argument from what is typed.
func (m *Model) complete() {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") {
		return
	}
	name, arg, hasArg := strings.Cut(v, " ")
	if !hasArg {
		var names []string
		for _, c := range commands {
			if strings.HasPrefix(c.name, name) {
				names = append(names, c.name)
			}
		}
		if p := commonPrefix(names); len(p) > len(name) || len(names) == 1 {
			if len(names) == 1 {
				p += " "
			}
			m.input.SetValue(p)
		} else if len(names) > 1 {
			m.statusMsg = strings.Join(names, "  ")
		}
		return
	}
	var options []string
	switch name {
	case "/mode":
		options = []string{"offline", "online"}
	case "/theme":
		options = []string{"dark", "light", "auto"}
	case "/model":
		options = m.models
	case "/index":
		options = m.indexes
	case "/copy":
		options = []string{"all", "code "}
	}
	var match []string
	for _, o := range options {
		if strings.HasPrefix(o, arg) {
			match = append(match, o)
		}
	}
	if p := commonPrefix(match); len(p) > len(arg) {
		m.input.SetValue(name + " " + p)
	} else if len(match) > 1 {
		m.statusMsg = strings.Join(match, "  ")
	}
}

func commonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// openSource opens source n of t in the user's editor at its first line,
// suspending the chat until the editor exits (the screen is restored).
func (m *Model) openSource(t *turn, n int) tea.Cmd {
	if t == nil || n < 1 || n > len(t.sources) {
		m.statusMsg = fmt.Sprintf("no source [%d] in the last answer", n)
		return nil
	}
	return m.openPassage(t.sources[n-1].Root, t.sources[n-1].Path, t.sources[n-1].Start, t.sources[n-1].URL)
}

func (m *Model) openPassage(root, path string, line int, url string) tea.Cmd {
	if url != "" {
		m.statusMsg = "web source: " + url
		return nil
	}
	file, getenv := filepath.Join(root, path), m.opts.Getenv
	return func() tea.Msg {
		if _, err := os.Stat(file); err != nil {
			return openEditorMsg{err: fmt.Errorf("%s is gone from disk: `lore index` to refresh", file)}
		}
		cmd, err := editor.Command(getenv, file, line)
		return openEditorMsg{cmd: cmd, err: err}
	}
}

var fenceRe = regexp.MustCompile("(?ms)^[ \t]*(```+|~~~+)[^\n]*\n(.*?)^[ \t]*(```+|~~~+)[ \t]*$")

// copyAnswer copies the last answer as its original markdown ("" or
// "answer"), one code block ("code N"), or the answer with its sources as
// footnotes ("all"): through OSC 52 and the system clipboard where one
// exists.
func (m *Model) copyAnswer(what string) tea.Cmd {
	t := m.lastTurn()
	if t == nil || t.answer == "" {
		m.statusMsg = "nothing to copy: " + noAnswerWhy(t)
		return nil
	}
	text, label := t.answer, "the answer (markdown)"
	switch {
	case what == "all":
		var b strings.Builder
		b.WriteString(strings.TrimRight(t.answer, "\n") + "\n")
		for _, s := range t.sources {
			fmt.Fprintf(&b, "\n[%d]: %s", s.N, footnote(s))
		}
		text, label = b.String()+"\n", "the answer with its sources"
	case strings.HasPrefix(what, "code"):
		blocks := fenceRe.FindAllStringSubmatch(t.answer, -1)
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(what, "code")))
		if err != nil && len(blocks) == 1 {
			n, err = 1, nil
		}
		switch {
		case len(blocks) == 0 && (t.route == agent.RouteNone || t.route == agent.RouteSourcesOnly):
			m.statusMsg = "no code to copy: " + noAnswerWhy(t)
			return nil
		case len(blocks) == 0:
			m.statusMsg = "the last answer has no code block: /copy copies all of it"
			return nil
		case err != nil || n < 1 || n > len(blocks):
			m.statusMsg = fmt.Sprintf("the last answer has %s: /copy code 1 to %d", units.Plural(len(blocks), "code block"), len(blocks))
			return nil
		}
		text, label = blocks[n-1][2], fmt.Sprintf("code block %d", n)
	}
	osc := clipboard.OSC52(text, m.opts.Getenv("TMUX") != "")
	system := m.opts.SystemClipboard
	return tea.Batch(tea.Raw(osc), func() tea.Msg {
		how := "OSC 52: your terminal must allow clipboard writes"
		if tool, err := system(text); err == nil {
			how = "OSC 52 and " + tool
		}
		return copiedMsg{what: label, how: how}
	})
}

// noAnswerWhy says why the last turn t (nil: none) has no answer to copy.
// "nothing to copy yet" alone left the user guessing whether /copy, the
// block number or the chat was at fault.
func noAnswerWhy(t *turn) string {
	switch {
	case t == nil:
		return "no question asked yet; ask one, then /copy code N copies a code block of its answer"
	case t.state == turnInfo:
		return "the last turn is a /search: passages, not an answer"
	case t.state == turnRunning:
		return "the answer has not begun yet"
	case t.state == turnCancelled:
		return "the last answer was cancelled before its first word"
	case t.state == turnFailed:
		return "the last question failed before it was answered"
	case t.route == agent.RouteNone:
		return "the documents do not cover the last question, so there is no answer"
	case t.route == agent.RouteSourcesOnly:
		return "the last turn lists passages only (no chat model reachable), there is no answer"
	}
	return "the last answer is empty"
}

// footnote is a source as a markdown link target.
func footnote(s agent.Source) string {
	if s.URL != "" {
		return termsafe.Line(s.URL) + ` "` + termsafe.Line(s.Title) + `"`
	}
	l := fmt.Sprintf("%s:%d-%d", filepath.Join(s.Root, s.Path), s.Start, s.End)
	if s.Heading != "" {
		l += ` "` + termsafe.Line(s.Heading) + `"`
	}
	return l
}

// jumpToAnswer scrolls to the first line of the last answer.
func (m *Model) jumpToAnswer() {
	t := m.lastTurn()
	if t == nil {
		return
	}
	line := 0
	for _, u := range m.turns {
		if u == t {
			break
		}
		line += len(u.lines(m.width, m.st))
	}
	m.follow, m.offset = false, line+t.answerTop
	m.clampOffset()
}
