package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/units"
)

// bytesPerToken is how the prompt budget counts tokens: one per 3 bytes.
// Llama-family tokenizers average about 4 bytes a token on English prose,
// nearer 3 on source code, logs and JSON (what people pipe into lore ask)
// and fewer on other scripts. Counting low only leaves part of the window
// unused; counting high makes Ollama drop the start of the prompt (the
// rules and the best sources) without a word. So the budget errs low.
const bytesPerToken = 3

// messageOverhead is what a chat template wraps around each message (role
// header, end-of-turn markers): about 8 tokens.
const messageOverhead = 8 * bytesPerToken

// historyMessageMax caps each earlier message sent along, in bytes.
const historyMessageMax = 1500

// cutMarkMax is room kept for the two lines that say where text was cut.
const cutMarkMax = 2 * 64

const (
	contextLead  = "Context from the user:\n"
	questionLead = "\n\nQuestion: "
)

// Cut says what part of a prompt was shortened to fit the model's context
// window. Front ends show Note; Kept and Of count characters for the
// context and the question, passages for "passages", earlier exchanges for
// "history".
type Cut struct {
	Part     string // "context", "passages", "history" or "question"
	Kept, Of int
	Note     string
}

// prompt is what generate sends: the history, the sources the model sees
// (the only ones it may cite) and the user message, fitted to the window.
type prompt struct {
	history []Message
	sources []Source
	user    string
	cuts    []Cut
}

// contextTokens is the window the prompt must fit: num_ctx as sent, or the
// model's trained context length when that is smaller (Ollama caps num_ctx
// there).
func (c Config) contextTokens() int {
	if c.ModelContext > 0 && c.ModelContext < c.NumCtx {
		return c.ModelContext
	}
	return c.NumCtx
}

// fitPrompt builds the prompt of turn from sources within the context
// window, keeping room for the answer (AnswerTokens, at most a quarter of
// the window). When it does not fit, parts are cut in this order, each
// told in a Cut: the context the user gave (its beginning kept, at least a
// quarter of the room), the lowest-ranked sources (never the best one), the
// oldest history, and only then the question (its beginning and end kept,
// at least a quarter of the room); a question too long to fit even beside
// the best source alone is cut before the sources and history, which
// could not save it. In a window too small even for that,
// the best source, then the context, then the question give up the rest.
func (c Config) fitPrompt(turn Turn, sources []Source) prompt {
	window := c.contextTokens()
	room := (window-min(c.AnswerTokens, window/4))*bytesPerToken - len(systemPrompt) - 2*messageOverhead -
		len(sourcesOpen+sourcesClose) - len(contextLead+questionLead) - cutMarkMax

	hist := windowOf(turn.History, c.HistoryTurns)
	histSize := make([]int, len(hist))
	for i, m := range hist {
		histSize[i] = min(len(m.Content), historyMessageMax) + len("…") + messageOverhead
	}
	texts := make([]string, len(sources))
	entry := make([]int, len(sources))
	for i, s := range sources {
		texts[i] = neutralize(s.Text)
		entry[i] = len(sourceHead(s)) + len(texts[i]) + len("\n\n")
	}

	// What is kept: bytes of the question and of the context, sources,
	// the first history message sent, bytes of the best source's text.
	q, ctx, n, from, best := len(turn.Question), len(turn.Context), len(sources), 0, 0
	if n > 0 {
		best = len(texts[0])
	}
	over := func() int {
		size := q + ctx + sum(histSize[from:])
		if n > 0 {
			size += entry[0] - len(texts[0]) + best + sum(entry[1:n])
		}
		return size - room
	}
	floor := max(room/4, 0)
	shrink := func(kept *int, least int) {
		if o := over(); o > 0 {
			*kept = max(*kept-o, min(*kept, least))
		}
	}
	shrink(&ctx, floor)
	// Dropping passages and history cannot save a question that does not
	// fit beside the best passage alone: it is cut anyway, so it goes
	// first (down to its floor) and the sources and history stay.
	allN, allFrom := n, from
	n, from = min(n, 1), len(hist)
	alone := over() > 0
	n, from = allN, allFrom
	if alone {
		shrink(&q, floor)
	}
	for over() > 0 && n > 1 {
		n--
	}
	for over() > 0 && from < len(hist) {
		from += 2 - (len(hist)-from)%2 // an exchange, or a lone message first
	}
	shrink(&q, floor)
	if n > 0 {
		shrink(&best, 0)
	}
	shrink(&ctx, 0)
	shrink(&q, 0)

	var cuts []Cut
	limit := fmt.Sprintf("to fit %s's %d-token context", c.Model, window)
	context := turn.Context
	if ctx < len(context) {
		context = context[:excerpt.Cut(context, ctx)]
		kept, of := utf8.RuneCountInString(context), utf8.RuneCountInString(turn.Context)
		cuts = append(cuts, Cut{Part: "context", Kept: kept, Of: of,
			Note: fmt.Sprintf("the context you gave was cut to its first %s characters of %s %s", units.Count(kept), units.Count(of), limit)})
		context += fmt.Sprintf("\n[… %s more characters cut to fit]", units.Count(of-kept))
	}
	switch {
	case n > 0 && best < len(texts[0]):
		texts[0] = texts[0][:excerpt.Cut(texts[0], best)]
		kept := units.Count(utf8.RuneCountInString(texts[0]))
		texts[0] += "…"
		note := fmt.Sprintf("the passage was cut to its first %s characters %s", kept, limit)
		if len(sources) > 1 {
			note = fmt.Sprintf("only the best of %d passages was given to the model, cut to its first %s characters, %s", len(sources), kept, limit)
		}
		cuts = append(cuts, Cut{Part: "passages", Kept: 1, Of: len(sources), Note: note})
	case n < len(sources):
		note := fmt.Sprintf("only the best %d of %d passages were given to the model %s", n, len(sources), limit)
		if n == 1 {
			note = fmt.Sprintf("only the best of %d passages was given to the model %s", len(sources), limit)
		}
		cuts = append(cuts, Cut{Part: "passages", Kept: n, Of: len(sources), Note: note})
	}
	if from > 0 {
		of, kept := (len(hist)+1)/2, (len(hist)-from+1)/2
		cuts = append(cuts, Cut{Part: "history", Kept: kept, Of: of,
			Note: fmt.Sprintf("the %d oldest of %d earlier exchanges were left out %s", of-kept, of, limit)})
	}
	question := turn.Question
	if q < len(question) {
		var head, tail int
		question, head, tail = keepEnds(question, q)
		of := utf8.RuneCountInString(turn.Question)
		cuts = append(cuts, Cut{Part: "question", Kept: head + tail, Of: of,
			Note: fmt.Sprintf("the question was cut to its first %s and last %s characters of %s %s", units.Count(head), units.Count(tail), units.Count(of), limit)})
	}

	user := question
	if turn.Context != "" {
		user = contextLead + context + questionLead + question
	}
	return prompt{history: hist[from:], sources: sources[:n], cuts: cuts,
		user: renderSources(sources[:n], texts[:n]) + "\n\n" + user}
}

// keepEnds keeps about n bytes of s, half from its beginning and half from
// its end, and marks the cut; it returns the characters kept of each end.
func keepEnds(s string, n int) (string, int, int) {
	h := excerpt.Cut(s, n/2)
	t := len(s) - (n - h)
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	head, tail := s[:h], s[t:]
	cut := utf8.RuneCountInString(s) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	return head + fmt.Sprintf("\n[… %s characters cut to fit …]\n", units.Count(cut)) + tail,
		utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
}

// windowOf keeps the last n exchanges (2n messages) of the history, each
// message cut to historyMessageMax bytes.
func windowOf(h []Message, n int) []Message {
	if len(h) > 2*n {
		h = h[len(h)-2*n:]
	}
	out := make([]Message, len(h))
	for i, m := range h {
		out[i] = Message{Role: m.Role, Content: truncate(m.Content, historyMessageMax)}
	}
	return out
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// sourceHead is the line that opens a source in the prompt.
func sourceHead(s Source) string { return fmt.Sprintf("[%d] %s\n", s.N, s.Label()) }

// renderSources writes the numbered sources, with texts already
// neutralized (and fitted), inside delimiters.
func renderSources(sources []Source, texts []string) string {
	var b strings.Builder
	b.WriteString(sourcesOpen)
	for i, s := range sources {
		b.WriteString(sourceHead(s) + texts[i] + "\n\n")
	}
	b.WriteString(sourcesClose)
	return b.String()
}

const (
	sourcesOpen  = "<sources>\n"
	sourcesClose = "</sources>"
)
