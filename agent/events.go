package agent

import "time"

// Stage names a node of the state machine.
type Stage string

const (
	StageCondense Stage = "condense"
	StageRetrieve Stage = "retrieve"
	StageRerank   Stage = "rerank"
	StageRoute    Stage = "route"
	StageWeb      Stage = "web"
	StageGenerate Stage = "generate"
)

// Event is what the agent reports while it works. Consumers (the ask
// printer, the TUI, a server) render events; the agent never prints.
type Event interface{ event() }

// StageStarted and StageFinished bracket each node that runs.
type StageStarted struct{ Stage Stage }

type StageFinished struct {
	Stage    Stage
	Duration time.Duration
}

// SourcesChosen says what the answer may cite and why.
type SourcesChosen struct {
	Route   Route
	Sources []Source
	// Notice explains a route that is not plainly "docs": the web search
	// failed, no reranker was available, Ollama is down...
	Notice string
}

// Notice is something the user should know about how the turn ran: the
// search was lexical only, no reranker is installed, Ollama is down. It is
// information, not a failure.
type Notice struct{ Text string }

// Saved says the finished turn is stored in a session (sent just before
// the final event, by the engine that saves it).
type Saved struct {
	SessionID string
	Turn      int
}

// Token is a piece of the answer as it streams.
type Token struct{ Text string }

// Done ends a turn that produced an answer (or, route none/sources-only,
// a statement that there is none).
type Done struct{ Result Result }

// Failed ends a turn that broke; Result holds what was done before.
type Failed struct {
	Err    error
	Result Result
}

// Cancelled ends a turn stopped by its context; Result keeps the partial answer.
type Cancelled struct{ Result Result }

func (StageStarted) event()  {}
func (StageFinished) event() {}
func (SourcesChosen) event() {}
func (Token) event()         {}
func (Notice) event()        {}
func (Saved) event()         {}
func (Done) event()          {}
func (Failed) event()        {}
func (Cancelled) event()     {}
