package tui

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/tui/mdstream"
)

// turnState is where a turn is in its life.
type turnState int

const (
	turnRunning turnState = iota
	turnDone
	turnCancelled
	turnFailed
	turnInfo // not a question: a command's output (/search, /help, a notice)
)

// turn is one exchange in the transcript.
type turn struct {
	question string
	answer   string          // the markdown without escape sequences, what /copy copies
	safe     termsafe.Filter // the answer streams through it: a sequence may span tokens
	info     string          // turnInfo: preformatted text
	state    turnState
	err      string

	route      agent.Route
	best       *float32
	sources    []agent.Source
	candidates []agent.Passage
	changed    map[int]bool // source N's file changed on disk since indexed
	notices    []string

	stage        agent.Stage
	stageStarted time.Time
	started      time.Time
	firstToken   time.Time
	tokens       int
	total        time.Duration

	// The rendering, cached per width and theme: finished turns are never
	// rendered again while the user scrolls or new turns stream.
	md        *mdstream.Renderer
	mdOpt     mdstream.Options
	cacheKey  renderKey
	cache     []string
	answerTop int // line of the answer's first line within the turn
}

// renderKey is what a cached rendering depends on.
type renderKey struct {
	width int
	style string
}

// finished reports whether the turn will not change any more.
func (t *turn) finished() bool { return t.state != turnRunning }

// lines renders the turn at width with st, from the cache when it is
// still valid.
func (t *turn) lines(width int, st styles) []string {
	key := renderKey{width, st.glamourStyle()}
	if t.finished() && t.cacheKey == key && t.cache != nil {
		return t.cache
	}
	out := t.render(width, st)
	if t.finished() {
		t.cacheKey, t.cache, t.md = key, out, nil
	}
	return out
}

func (t *turn) render(width int, st styles) []string {
	var out []string
	add := func(s string) { out = append(out, strings.Split(s, "\n")...) }
	if t.state == turnInfo {
		add(wrap(st.dim.Render(t.info), width))
		add("")
		return out
	}
	add(wrap(st.user.Render("❯ ")+st.question.Render(termsafe.Text(t.question)), width))
	for _, n := range t.notices {
		add(wrap(st.notice.Render("note: "+n), width))
	}
	t.answerTop = len(out)
	if t.answer != "" {
		add(t.renderAnswer(width, st))
	} else if t.state == turnRunning {
		add("")
	}
	switch t.state {
	case turnCancelled:
		if t.answer == "" {
			add(wrap(st.notice.Render("⊘ cancelled before the answer started"), width))
		} else {
			add(wrap(st.notice.Render("⊘ cancelled — the partial answer above is kept"), width))
		}
	case turnFailed:
		add(wrap(st.errText.Render("✗ "+t.err), width))
	}
	if len(t.sources) > 0 && (t.finished() || t.route != agent.RouteDocs) {
		add(t.renderSources(width, st))
	}
	add("")
	return out
}

// renderAnswer renders the markdown answer; while it streams, only the
// tail after the last closed block is rendered again (mdstream).
func (t *turn) renderAnswer(width int, st styles) string {
	opt := mdstream.Options{Style: st.glamourStyle(), Width: max(width-2, 20)}
	if t.md == nil || t.mdOpt != opt {
		t.md, t.mdOpt = mdstream.New(opt), opt
	}
	out, err := t.md.Render(t.answer)
	if err != nil {
		return wrap(t.answer, width)
	}
	out = strings.Trim(out, "\n")
	if st.links {
		out = t.linkCitations(out)
	}
	return out
}

// citationRe finds [n] in rendered text, where styles may sit between the
// brackets and the number (glamour splits "[1]" into runs).
var citationRe = regexp.MustCompile(`\[(?:\x1b\[[0-9;]*m)*(\d{1,2})(?:\x1b\[[0-9;]*m)*\]`)

// linkCitations makes each [n] of the rendered answer a link to source n.
// An index such as arr[1] is not a citation (agent.IsIndex).
func (t *turn) linkCitations(out string) string {
	var b strings.Builder
	last := 0
	for _, m := range citationRe.FindAllStringSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(out[m[2]:m[3]])
		if n < 1 || n > len(t.sources) || sourceLink(t.sources[n-1]) == "" {
			continue
		}
		if agent.IsIndex(ansi.Strip(out[max(m[0]-64, 0):m[0]])) {
			continue
		}
		b.WriteString(out[last:m[0]])
		b.WriteString(ansi.SetHyperlink(sourceLink(t.sources[n-1])) + out[m[0]:m[1]] + ansi.ResetHyperlink())
		last = m[1]
	}
	b.WriteString(out[last:])
	return b.String()
}

// sourceLink is where a source's link points: the file, or the page.
func sourceLink(s agent.Source) string {
	switch {
	case s.URL != "":
		return termsafe.Line(s.URL) // inside an OSC 8: a BEL or ESC would end it early
	case s.Root != "":
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(s.Root, s.Path))}).String()
	}
	return ""
}

// renderSources lists the sources after the answer: cited ones first and
// marked, web pages apart from files, labels as OSC 8 links.
func (t *turn) renderSources(width int, st styles) string {
	title := "Sources"
	if t.route == agent.RouteNone || t.route == agent.RouteSourcesOnly {
		title = "Closest passages"
	}
	lines := []string{st.dim.Render(title + ":")}
	ordered := make([]agent.Source, 0, len(t.sources))
	for _, s := range t.sources {
		if s.Cited {
			ordered = append(ordered, s)
		}
	}
	for _, s := range t.sources {
		if !s.Cited {
			ordered = append(ordered, s)
		}
	}
	for _, s := range ordered {
		lines = append(lines, sourceLine(s, t.changed[s.N], width, st))
		if t.route == agent.RouteSourcesOnly {
			for _, l := range excerpt.Lines(s.Text, 3, width-8) {
				lines = append(lines, "      "+st.dim.Render(l))
			}
		}
	}
	return strings.Join(lines, "\n")
}

func sourceLine(s agent.Source, changed bool, width int, st styles) string {
	mark, style := "  ", st.uncited
	if s.Cited {
		mark, style = "● ", st.cited
	}
	label, link, kind := termsafe.Line(s.Label()), sourceLink(s), ""
	if s.URL != "" {
		style, kind = st.web, "web "
	}
	num := fmt.Sprintf("[%d] ", s.N)
	avail := max(width-ansi.StringWidth(mark+num+kind)-1, 10)
	if changed {
		avail -= len(" (changed since indexed)")
	}
	label = fitLabel(s, label, max(avail, 10))
	body := style.Render(label)
	if link != "" && st.links {
		body = ansi.SetHyperlink(link) + body + ansi.ResetHyperlink()
	}
	line := style.Render(mark+num) + st.dim.Render(kind) + body
	if changed {
		line += st.notice.Render(" (changed since indexed)")
	}
	return line
}

// fitLabel fits a source's label to avail cells. The heading goes first;
// a document's line range is what opens it at the place, so when even
// path:start-end is too wide the path loses its beginning, not the range:
// "…ors/pathcache.go:5-40".
func fitLabel(s agent.Source, label string, avail int) string {
	if s.URL != "" || ansi.StringWidth(label) <= avail {
		return ansi.Truncate(label, avail, "…")
	}
	path, lines := termsafe.Line(s.Shown()), fmt.Sprintf(":%d-%d", s.Start, s.End)
	if ansi.StringWidth(path+lines) < avail {
		return ansi.Truncate(label, avail, "…") // only the heading is cut
	}
	keep := avail - ansi.StringWidth(lines) - 1 // 1 for the "…"
	if keep < 4 {
		return ansi.Truncate(label, avail, "…")
	}
	return "…" + ansi.TruncateLeft(path, ansi.StringWidth(path)-keep, "") + lines
}

// wrap folds s to width cells, keeping ANSI styles.
func wrap(s string, width int) string {
	return lipgloss.Wrap(s, max(width, 10), " ")
}
