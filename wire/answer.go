package wire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lore-cli/lore/agent"
)

// Answer is what `lore ask --json` prints: one turn's answer, the sources
// it was given and which of them it cites.
type Answer struct {
	Question        string   `json:"question"`
	StandaloneQuery string   `json:"standalone_query"` // the question rewritten without the history, as searched
	Answer          string   `json:"answer"`
	Route           string   `json:"route"` // "docs", "web", "none" or "sources-only"
	Mode            string   `json:"mode"`  // "offline" or "online"
	Model           string   `json:"model"`
	BestScore       *float32 `json:"best_score"` // the best rerank logit; null without a reranker
	Sources         []Source `json:"sources"`    // never null
	// InvalidCitations are the [n] of the answer that point at no source.
	InvalidCitations []int              `json:"invalid_citations"` // never null
	Cuts             []Cut              `json:"cuts"`              // never null
	Timings          map[string]float64 `json:"timings_ms"`
	Tokens           map[string]int     `json:"tokens"`  // "prompt" and "completion"
	Session          string             `json:"session"` // the conversation this turn belongs to, "" for none
	// Cancelled is set when the turn was interrupted (Ctrl+C, SIGTERM, a
	// client gone): Answer is what streamed until then. Absent otherwise.
	Cancelled bool `json:"cancelled,omitempty"`
	// Sync is how fresh the index answered from was (NewSync); absent
	// when it could not be read.
	Sync *Sync `json:"sync,omitempty"`
}

// Source is a passage or a web page an Answer was given, numbered as the
// answer cites it. A document source has source, path, lines and heading
// (url and title null); a web source has url and title (the rest null).
type Source struct {
	N         int     `json:"n"`
	Source    *string `json:"source"`
	Path      *string `json:"path"`
	StartLine *int    `json:"start_line"`
	EndLine   *int    `json:"end_line"`
	Heading   *string `json:"heading"`
	URL       *string `json:"url"`
	Title     *string `json:"title"`
	Score     float64 `json:"score"`
	Cited     bool    `json:"cited"`

	// name is Path made unambiguous among the answer's sources (agent's
	// Source.Name), shown by Citation; it is not part of the JSON.
	name string
}

// Cut is a part of the prompt cut to fit the model's context window: Kept
// of Of characters (context, question), passages or earlier exchanges.
type Cut struct {
	Part string `json:"part"` // "context", "passages", "history" or "question"
	Kept int    `json:"kept"`
	Of   int    `json:"of"`
	Note string `json:"note"`
}

// NewAnswer is the Answer of the agent's final result r (of Done, Failed
// or Cancelled). session is the conversation the turn belongs to, if any.
func NewAnswer(r agent.Result, session string) Answer {
	out := Answer{Question: r.Question, StandaloneQuery: r.Standalone, Answer: r.Answer, Route: string(r.Route), Mode: string(r.Mode), Model: r.Model,
		BestScore: r.BestScore, Sources: make([]Source, 0, len(r.Sources)), InvalidCitations: r.Invalid, Cuts: make([]Cut, 0, len(r.Cuts)), Session: session,
		Timings: map[string]float64{"condense": ms(r.Timings[agent.StageCondense]), "retrieve": ms(r.Timings[agent.StageRetrieve]),
			"rerank": ms(r.Timings[agent.StageRerank]), "web": ms(r.Timings[agent.StageWeb]), "first_token": ms(r.FirstToken),
			"generate": ms(r.Timings[agent.StageGenerate]), "total": ms(r.Total)},
		Tokens: map[string]int{"prompt": r.PromptTokens, "completion": r.AnswerTokens}}
	if out.InvalidCitations == nil {
		out.InvalidCitations = []int{}
	}
	for _, c := range r.Cuts {
		out.Cuts = append(out.Cuts, Cut{Part: c.Part, Kept: c.Kept, Of: c.Of, Note: c.Note})
	}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, NewSource(s))
	}
	return out
}

// NewSource is the agent's source s as an Answer lists it.
func NewSource(s agent.Source) Source {
	out := Source{N: s.N, Score: s.Score, Cited: s.Cited, name: s.Name}
	if s.URL != "" {
		out.URL, out.Title = ptr(s.URL), ptr(s.Title)
	} else {
		out.Source, out.Path, out.StartLine, out.EndLine, out.Heading = ptr(s.Root), ptr(s.Path), ptr(s.Start), ptr(s.End), ptr(s.Heading)
	}
	return out
}

// Citation is the source as a line of a "Sources:" list: "[n]
// path:start-end > heading" for a passage, "[n] title — URL" (or "[n] URL"
// without a title) for a web page; the label is the agent's Source.Label,
// as the model saw it. It is not made safe for a terminal: a printer
// does that.
func (s Source) Citation() string {
	a := agent.Source{Name: s.name, Path: deref(s.Path), Start: deref(s.StartLine), End: deref(s.EndLine), Heading: deref(s.Heading),
		URL: deref(s.URL), Title: deref(s.Title)}
	return fmt.Sprintf("[%d] %s", s.N, a.Label())
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Span is where one source's line of a "Sources:" list sits in an
// answer's text, in Unicode code points (as OpenAI's annotation indexes
// count).
type Span struct {
	Source     Source
	Start, End int
}

// Text is the answer as a client that shows only text reads it, the same
// from lore serve and lore mcp: lead (why no answer was written, notes;
// "" for none), the answer with its [n] markers, then a "Sources:" list
// of the cited sources, or all of them when none is cited (not in the
// documents, sources only). spans locates each line of the list.
func (a Answer) Text(lead string) (text string, spans []Span) {
	var b strings.Builder
	b.WriteString(lead)
	b.WriteString(strings.TrimRight(a.Answer, " \n"))
	var listed []Source
	for _, s := range a.Sources {
		if s.Cited {
			listed = append(listed, s)
		}
	}
	if len(listed) == 0 {
		listed = a.Sources
	}
	if len(listed) == 0 {
		return b.String(), nil
	}
	b.WriteString("\n\nSources:")
	for _, s := range listed {
		b.WriteString("\n")
		start := utf8.RuneCountInString(b.String())
		b.WriteString(s.Citation())
		spans = append(spans, Span{Source: s, Start: start, End: utf8.RuneCountInString(b.String())})
	}
	return b.String(), spans
}
