// Package agent answers a question from retrieved sources: an explicit
// state machine (condense → retrieve → rerank → route → web → generate)
// that reports typed events on a channel and never touches a terminal.
// It declares the small interfaces it needs; cmd/lore plugs in the index,
// the reranker, the web searcher and the Ollama client.
package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/internal/excerpt"
)

// Mode is offline (documents only; the Ollama host is the only peer) or
// online (a web search when the documents do not answer).
type Mode string

const (
	Offline Mode = "offline"
	Online  Mode = "online"
)

// Message is one turn of conversation history.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Passage is a retrieved chunk.
type Passage struct {
	Root, Path  string
	Name        string // Path made unambiguous (NamePassages); "" when Path is
	Start, End  int
	Heading     string
	Text        string
	Score       float64  // fused retrieval score
	LexicalRank int      // 0 when BM25 did not find it
	VectorRank  int      // 0 when the vector search did not
	Rerank      *float32 // cross-encoder logit, once reranked
	// Coverage is the share of the question's content words that the
	// passage holds (0..1; 0 when BM25 did not find it).
	Coverage float64
}

// Scored is a reranker's verdict on passage Index.
type Scored struct {
	Index int
	Score float32
}

// WebResult is a page a web search found.
type WebResult struct {
	URL, Title, Content string
	Score               float64
}

// Retriever finds up to n candidate passages, best first.
type Retriever interface {
	Retrieve(ctx context.Context, query string, n int) (Retrieval, error)
}

// Reranker scores passages for a query, best first (raw logits).
type Reranker interface {
	Rerank(ctx context.Context, query string, passages []string) ([]Scored, error)
}

// WebSearcher searches the web; nil in offline mode.
type WebSearcher interface {
	Name() string
	Search(ctx context.Context, query string) ([]WebResult, error)
}

// ChatClient is the part of *api.Client the agent uses.
type ChatClient interface {
	Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error
}

// Config tunes the agent.
type Config struct {
	Model  string
	NumCtx int // the model's context window, in tokens (num_ctx)
	// ModelContext is the context length the model was trained with
	// (/api/show), 0 when unknown; the prompt fits the smaller of the two.
	ModelContext int
	AnswerTokens int     // kept free for the answer
	Temperature  float64 // sampling temperature
	KeepAlive    time.Duration
	Mode         Mode
	Threshold    float32 // best rerank logit needed to answer from the docs
	Candidates   int     // passages retrieved for reranking
	TopK         int     // passages given to the model
	HistoryTurns int     // past exchanges sent along
	// StallTimeout bounds the wait for the next piece of an answer once it
	// has started (the first piece may take as long as loading the model).
	StallTimeout time.Duration
	// NoChat says why there is no Chat client, for the notice of a turn
	// answered with passages alone ("": no language model reachable).
	NoChat string
}

func (c *Config) defaults() {
	if c.NumCtx <= 0 {
		c.NumCtx = 8192
	}
	if c.AnswerTokens <= 0 {
		c.AnswerTokens = 1024
	}
	if c.Mode == "" {
		c.Mode = Offline
	}
	if c.Candidates <= 0 {
		c.Candidates = 20
	}
	if c.TopK <= 0 {
		c.TopK = 5
	}
	if c.HistoryTurns <= 0 {
		c.HistoryTurns = 4
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = 2 * time.Minute
	}
}

// Agent answers turns. Reranker, Web and Chat may be nil: no reranking,
// offline, and sources-only (no model reachable) respectively.
type Agent struct {
	Config    Config
	Retriever Retriever
	Reranker  Reranker
	Web       WebSearcher
	Chat      ChatClient
}

// Turn is one question.
type Turn struct {
	Question string
	Context  string // extra material (stdin, a file) placed before the question
	History  []Message
}

// Result is everything a turn produced.
type Result struct {
	Question       string
	Standalone     string
	Route          Route
	Mode           Mode
	Model          string
	BestScore      *float32
	Sources        []Source
	Candidates     []Passage // every retrieved passage, in ranked order
	Known          float64   // the share of the question's words the index holds (Retrieval.Known)
	Words          float64   // how many content words the question has (Retrieval.Words)
	Answer         string
	Invalid        []int // [n] markers pointing at no source
	Notice         string
	Cuts           []Cut // what was cut from the prompt to fit the context window
	Timings        map[Stage]time.Duration
	FirstToken     time.Duration
	Total          time.Duration
	PromptTokens   int
	AnswerTokens   int
	DoneReason     string
	RoutedOnSignal string // what routing was decided on
}

// NotInDocs is the answer of route none; NotInDocsNone when the search
// found no passage at all, so that no list is promised over nothing.
const (
	NotInDocs     = "The documents do not cover this. The closest passages are listed below."
	NotInDocsNone = "The documents do not cover this: no passage matched the question."
)

// Run answers turn on a goroutine of its own and returns its events; the
// channel closes after the final Done, Failed or Cancelled. Cancelling ctx
// stops the turn and keeps what streamed.
func (a *Agent) Run(ctx context.Context, turn Turn) <-chan Event {
	events := make(chan Event, 64)
	go func() {
		defer close(events)
		r := &run{a: a, cfg: a.Config, events: events, ctx: ctx}
		r.cfg.defaults()
		r.do(turn)
	}()
	return events
}

type run struct {
	a         *Agent
	cfg       Config
	ctx       context.Context
	events    chan Event // both ways: SendFinal may drop a buffered event to make room
	res       Result
	started   time.Time
	lastStage Stage
	prompt    prompt // what generate sends
}

// emit delivers an event unless the consumer is gone; final events always.
func (r *run) emit(e Event) {
	switch e.(type) {
	case Done, Failed, Cancelled:
		SendFinal(r.ctx, r.events, e)
		return
	}
	Send(r.ctx, r.events, e)
}

// Send delivers ev on ch unless ctx ends first, and reports whether it
// did. When ch has room it always delivers, even after ctx ended: a
// consumer that cancels and reads on still gets what was ready.
func Send(ctx context.Context, ch chan<- Event, ev Event) bool {
	select {
	case ch <- ev:
		return true
	default:
	}
	select {
	case ch <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// SendFinal delivers ev on the buffered channel ch and never blocks for
// good: while ctx lives it waits for the consumer; once ctx ended (the
// consumer may have stopped reading) it drops the oldest buffered events
// to make room. A consumer that reads to the end still gets ev, whose
// result holds everything the dropped tokens held.
func SendFinal(ctx context.Context, ch chan Event, ev Event) {
	for {
		select {
		case ch <- ev:
			return
		default:
		}
		if ctx.Err() == nil {
			select {
			case ch <- ev:
				return
			case <-ctx.Done():
			}
			continue
		}
		select {
		case <-ch:
		default:
		}
	}
}

// stage times fn as one node of the state machine.
func (r *run) stage(s Stage, fn func() error) error {
	r.lastStage = s
	r.emit(StageStarted{s})
	start := time.Now()
	err := fn()
	d := time.Since(start)
	r.res.Timings[s] = d
	r.emit(StageFinished{s, d})
	return err
}

func (r *run) finish(err error) {
	r.res.Total = time.Since(r.started)
	if len(r.res.Sources) > 0 && r.res.Answer != "" {
		cited, invalid := Citations(r.res.Answer, r.res.Sources)
		for _, n := range cited {
			r.res.Sources[n-1].Cited = true
		}
		r.res.Invalid = invalid
	}
	switch {
	case err == nil:
		r.emit(Done{r.res})
	case errors.Is(err, context.Canceled) || r.ctx.Err() != nil:
		r.emit(Cancelled{r.res})
	default:
		r.emit(Failed{Err: err, Result: r.res})
	}
}

func (r *run) do(turn Turn) {
	r.started = time.Now()
	r.res = Result{Question: turn.Question, Standalone: turn.Question, Mode: r.cfg.Mode, Model: r.cfg.Model, Timings: map[Stage]time.Duration{}}

	// 1. condense: rewrite a follow-up as a standalone query.
	if r.a.Chat != nil && needsCondense(turn.Question, turn.History) {
		err := r.stage(StageCondense, func() error {
			q, err := r.condense(turn)
			if err == nil && q != "" {
				r.res.Standalone = q
			}
			return err
		})
		if r.ctx.Err() != nil {
			r.finish(r.ctx.Err())
			return
		}
		if err != nil {
			r.res.Notice = "could not rewrite the follow-up, searched with it as asked: " + err.Error()
		}
	}

	// 2. retrieve and rerank.
	ranking, err := Rank(r.ctx, r.a.Retriever, r.a.Reranker, r.res.Standalone, r.cfg.Candidates, r.stage)
	if ranking.Notice != "" {
		r.emit(Notice{ranking.Notice})
	}
	if err != nil {
		r.finish(fmt.Errorf("%s: %w", r.lastStage, err))
		return
	}
	if r.ctx.Err() != nil {
		// A search cut short may find nothing without an error: that is
		// no reason to say the documents do not cover the question.
		r.finish(r.ctx.Err())
		return
	}
	passages := ranking.Passages
	r.res.Candidates = passages
	r.res.Sources = docSources(passages, r.cfg.TopK)
	r.res.BestScore = ranking.Best
	r.res.Known, r.res.Words = ranking.Known, ranking.Words

	// 3. route.
	var route Route
	r.stage(StageRoute, func() error {
		route = r.route(passages, ranking.Best)
		return nil
	})

	// 4. web search, online only.
	if route == RouteWeb {
		var found []WebResult
		err := r.stage(StageWeb, func() error {
			var err error
			found, err = r.a.Web.Search(r.ctx, r.res.Standalone)
			return err
		})
		switch {
		case r.ctx.Err() != nil:
			r.finish(r.ctx.Err())
			return
		// Without the web the turn is decided as offline: the documents
		// were already judged not to answer it, and answering "from the
		// docs" anyway put weak passages, or none, before the model with
		// citations pointing nowhere.
		case err != nil:
			r.addNotice("web search failed (" + err.Error() + "), so answered as offline: the documents do not cover this")
			route = RouteNone
		case len(found) == 0:
			r.addNotice("the web search found nothing, so answered as offline: the documents do not cover this")
			route = RouteNone
		default:
			r.res.Sources = webSources(found, r.cfg.TopK)
		}
	}
	if route == RouteNone && turn.Context != "" && r.a.Chat != nil {
		// The user handed over material to ask about: it is a source too.
		route = RouteDocs
		r.addNotice("the documents do not cover this well; answering from the context you gave")
	}
	if route == RouteDocs && len(r.res.Sources) == 0 && turn.Context == "" {
		// Never a prompt with an empty source list: nothing to answer from.
		route = RouteNone
	}
	if r.a.Chat == nil && route != RouteNone {
		route = RouteSourcesOnly
		why := r.a.Config.NoChat
		if why == "" {
			why = "no language model reachable"
		}
		r.addNotice(why + ": showing the best passages only")
	}
	if r.ctx.Err() != nil {
		r.finish(r.ctx.Err())
		return
	}
	r.res.Route = route
	if route == RouteDocs || route == RouteWeb {
		// Fitted before the sources are shown: a source the model never
		// saw must not be offered for citing, and the numbers stay the
		// ones it saw.
		r.prompt = r.cfg.fitPrompt(turn, r.res.Sources)
		r.res.Sources, r.res.Cuts = r.prompt.sources, r.prompt.cuts
		for _, c := range r.prompt.cuts {
			r.emit(Notice{c.Note})
		}
	}
	r.emit(SourcesChosen{Route: route, Sources: r.res.Sources, Notice: r.res.Notice})

	// 5. generate.
	switch route {
	case RouteNone:
		r.res.Answer = NotInDocs
		if len(r.res.Sources) == 0 {
			r.res.Answer = NotInDocsNone
		}
		r.finish(nil)
		return
	case RouteSourcesOnly:
		r.finish(nil)
		return
	}
	r.finish(r.stage(StageGenerate, func() error { return r.generate() }))
}

func (r *run) addNotice(n string) {
	if r.res.Notice != "" {
		r.res.Notice += "; "
	}
	r.res.Notice += n
}

// route decides where the answer comes from. With a reranker: the docs when
// the best logit reaches the threshold. Without one, the documented
// fallback signal is retrieval agreement (Agreement).
func (r *run) route(passages []Passage, best *float32) Route {
	confident := false
	switch {
	case len(passages) == 0:
		r.res.RoutedOnSignal = "no passages found"
	case best != nil:
		confident = *best >= r.cfg.Threshold
		r.res.RoutedOnSignal = fmt.Sprintf("best rerank score %.2f against threshold %.2f", *best, r.cfg.Threshold)
	default:
		confident = Agreement(r.res.Standalone, passages, r.res.Known, r.res.Words)
		r.res.RoutedOnSignal = agreementSignal(r.res.Standalone, passages, r.res.Known, r.res.Words)
	}
	switch {
	case confident:
		return RouteDocs
	case r.cfg.Mode == Online && r.a.Web != nil:
		return RouteWeb
	}
	return RouteNone
}

// AgreeTop is how near the top both retrievers must place the best
// passage for them to agree. "Found at all" meant nothing: the vector
// search returns its whole search depth (50) for any question, so on a
// small index every passage a keyword matched was "found by both", and
// off-topic questions were answered from the docs.
const AgreeTop = 3

// KnownFloor and CoverageKnown are the keyword-only route's floors, where
// there is no vector search to agree with and keyword search always has a
// first hit. A question about something else names words the index holds
// nowhere (GPU, Netflix, sourdough in lore's docs), whatever share of the
// rest one chunk matches: so the index must hold at least KnownFloor of
// the question's content words, and the best passage's share of them
// (Coverage) plus that Known share must reach CoverageKnown (all words
// known: the passage holds 15%; a quarter unknown: 40%). Measured
// keyword-only on five public sets with 12 off-topic questions added
// (docs/eval.md): 50 of 84 unanswerable questions refused and none of 133
// answerable ones, where a floor of a third of the words on coverage
// alone refused 43 and 5 answerable ones.
const (
	KnownFloor    = 0.75
	CoverageKnown = 1.15
)

// SharedWords is how many of the question's content words one of the
// top AgreeTop keyword matches must hold together, keyword-only (all of
// them when the question has fewer). Any two words a question shares with
// unrelated docs make a first hit: "How do I cancel a context after a
// timeout?" finds cancel and timeout in one Prometheus passage, a Netflix
// password question finds password and account; a passage that answers
// shares more. Measured keyword-only on five public sets with 14
// off-topic questions added (docs/eval.md): 63 of 84 unanswerable
// questions refused where the floors above alone refused 49, and still
// none of 133 answerable ones (the fewest an answerable question's passage
// held was three, of six and of seven words).
const SharedWords = 3.0

// Agreement is the routing signal without a reranker: the best passage is
// among the top AgreeTop of both keyword and vector search; in a
// lexical-only index (or while Ollama is down), among the top AgreeTop of
// keyword search, with known (Retrieval.Known) and its coverage over the
// floors above, SharedWords of the question's words (of words:
// Retrieval.Words) in one of those top passages, and, when the index
// lacks a word of the question, every name it gives held by one of the
// top NameTop (Unnamed): the word it lacks is then likely that name.
func Agreement(question string, passages []Passage, known float64, words float64) bool {
	if len(passages) == 0 {
		return false
	}
	top := passages[0]
	near := func(rank int) bool { return rank > 0 && rank <= AgreeTop }
	if lexicalOnly(passages) {
		return near(top.LexicalRank) && known >= KnownFloor && top.Coverage+known >= CoverageKnown && shareWords(passages, words) &&
			(known >= 1 || len(Unnamed(question, passages)) == 0)
	}
	return near(top.LexicalRank) && near(top.VectorRank)
}

// shareWords reports whether one of the top AgreeTop passages holds
// SharedWords of the question's words, or all of them when it has fewer.
func shareWords(passages []Passage, words float64) bool {
	need := min(SharedWords, words)
	for _, p := range passages[:min(AgreeTop, len(passages))] {
		// Coverage is held/words, held a count of words or of half
		// words (a CJK character): the margin undoes the division.
		if need > 0 && p.Coverage*words >= need-1e-9 {
			return true
		}
	}
	return false
}

func lexicalOnly(passages []Passage) bool {
	for _, p := range passages {
		if p.VectorRank > 0 {
			return false
		}
	}
	return true
}

// agreementSignal says what Agreement decided on, for --json and eval.
func agreementSignal(question string, passages []Passage, known float64, words float64) string {
	if lexicalOnly(passages) {
		most := 0.0
		for _, p := range passages[:min(AgreeTop, len(passages))] {
			most = max(most, p.Coverage*words)
		}
		s := fmt.Sprintf("no reranker, keyword search only: the index holds %.0f%% of the question's words (floor %.0f%%), the best passage %.0f%% (the two together at least %.0f%%); a top-%d passage holds %g of its %g words (at least %g)",
			100*known, 100*KnownFloor, 100*passages[0].Coverage, 100*CoverageKnown, AgreeTop, most, words, min(SharedWords, words))
		if missing := Unnamed(question, passages); known < 1 && len(missing) > 0 {
			s += fmt.Sprintf("; no top-%d passage names %s", NameTop, strings.Join(missing, ", "))
		}
		return s
	}
	return fmt.Sprintf("no reranker: retrieval agreement (the best passage in the top %d of both keyword and vector search)", AgreeTop)
}

// docSources numbers the best k passages (already in ranked order).
func docSources(passages []Passage, k int) []Source {
	out := make([]Source, 0, min(k, len(passages)))
	for _, p := range passages[:min(k, len(passages))] {
		out = append(out, Source{N: len(out) + 1, Root: p.Root, Path: p.Path, Name: p.Name, Start: p.Start, End: p.End, Heading: p.Heading, Text: p.Text,
			Score: p.Score, Rerank: p.Rerank, LexicalRank: p.LexicalRank, VectorRank: p.VectorRank})
	}
	return out
}

func webSources(found []WebResult, k int) []Source {
	var out []Source
	for _, w := range found {
		if len(out) == k {
			break
		}
		out = append(out, Source{N: len(out) + 1, URL: w.URL, Title: w.Title, Text: w.Content, Score: w.Score})
	}
	return out
}

// condense asks the model for a standalone query.
func (r *run) condense(turn Turn) (string, error) {
	msgs := []api.Message{{Role: "system", Content: condensePrompt}}
	for _, m := range windowOf(turn.History, r.cfg.HistoryTurns) {
		msgs = append(msgs, api.Message{Role: m.Role, Content: m.Content})
	}
	msgs = append(msgs, api.Message{Role: "user", Content: turn.Question})
	var b strings.Builder
	stream := false
	err := r.a.Chat.Chat(r.ctx, &api.ChatRequest{Model: r.cfg.Model, Messages: msgs, Stream: &stream, Options: map[string]any{"temperature": 0, "num_ctx": r.cfg.NumCtx, "num_predict": 64}},
		func(resp api.ChatResponse) error { b.WriteString(resp.Message.Content); return nil })
	q := strings.Trim(strings.TrimSpace(firstLine(b.String())), `"'`)
	return q, err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:excerpt.Cut(s, n)] + "…"
}

// generate streams the answer to the prompt fitted by fitPrompt.
func (r *run) generate() error {
	msgs := []api.Message{{Role: "system", Content: systemPrompt}}
	for _, m := range r.prompt.history {
		msgs = append(msgs, api.Message{Role: m.Role, Content: m.Content})
	}
	msgs = append(msgs, api.Message{Role: "user", Content: r.prompt.user})
	req := &api.ChatRequest{Model: r.cfg.Model, Messages: msgs, Options: map[string]any{"num_ctx": r.cfg.NumCtx, "temperature": r.cfg.Temperature}}
	if r.cfg.KeepAlive > 0 {
		req.KeepAlive = &api.Duration{Duration: r.cfg.KeepAlive}
	}
	// A server that stops mid-answer without closing the connection (stuck,
	// or a network that drops packets silently) would otherwise hold the
	// turn until TCP keepalive gives up, minutes later.
	ctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	stall := time.AfterFunc(time.Duration(math.MaxInt64), func() { cancel(ErrStalled) })
	defer stall.Stop()

	start := time.Now()
	var answer strings.Builder
	done := false
	err := r.a.Chat.Chat(ctx, req, func(resp api.ChatResponse) error {
		// Only the wait for Ollama counts: emit may block on a slow reader.
		stall.Stop()
		defer stall.Reset(r.cfg.StallTimeout)
		if tok := resp.Message.Content; tok != "" {
			if answer.Len() == 0 {
				r.res.FirstToken = time.Since(start)
			}
			answer.WriteString(tok)
			r.res.Answer = answer.String()
			r.emit(Token{tok})
		}
		if resp.Done {
			done = true
			r.res.DoneReason = resp.DoneReason
			r.res.PromptTokens, r.res.AnswerTokens = resp.PromptEvalCount, resp.EvalCount
		}
		return ctx.Err()
	})
	r.res.Answer = answer.String()
	if errors.Is(context.Cause(ctx), ErrStalled) && r.ctx.Err() == nil {
		return fmt.Errorf("%w for %s: is it overloaded or stuck? (`ollama ps`)", ErrStalled, r.cfg.StallTimeout)
	}
	// The ollama client returns nil when the stream is cut short (it does
	// not check the reader's error), so a missing final message is the only
	// sign that the server died or the turn was cancelled.
	if err == nil && !done {
		if err = r.ctx.Err(); err == nil {
			err = ErrStreamCut
		}
	}
	if err != nil && !done && r.ctx.Err() == nil && !errors.Is(err, ErrStreamCut) && answer.Len() > 0 {
		// Broken off mid-answer (Ollama's runner crashed, the connection
		// dropped): a bare "unexpected EOF" would not say whose stream.
		err = fmt.Errorf("%w after %d characters: %w", ErrStreamCut, answer.Len(), err)
	}
	return err
}

// ErrStalled means the answer started and then nothing came for
// Config.StallTimeout.
var ErrStalled = errors.New("Ollama stopped sending the answer")

// ErrStreamCut means the model's answer stopped before its final message.
var ErrStreamCut = errors.New("the answer stream ended before the model finished (Ollama stopped or the connection dropped)")
