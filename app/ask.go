package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/admit"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/session"
)

// ErrSessionIndex is a follow-up asked on another index than its
// session's: a session keeps to the documents it was asked about.
var ErrSessionIndex = errors.New("another index's session")

// AskRequest is one question for Ask.
type AskRequest struct {
	// SessionID continues a saved conversation; "" starts a new one.
	SessionID string
	Turn      agent.Turn
	// Index names the index to answer from ("": the configured one).
	Index string
	// Mode and Model override the configuration for this turn ("": as
	// configured).
	Mode, Model string
	// K is how many sources the model is given (0: top-k).
	K int
	// SourcesOnly answers with the passages alone, without the model.
	SourcesOnly bool
	// Stages switches parts of the search off (lore eval's ablations).
	Stages Stages
	// NoSave keeps the turn out of the sessions (lore eval's questions are
	// not the user's conversations).
	NoSave bool
}

// Ask answers a question on a goroutine of its own: it loads the session's
// history, runs the agent, saves the turn when it ends (an agent.Saved event
// says so, just before the final event) and returns the session id and the
// events. The channel closes after the final Done, Failed or Cancelled;
// cancelling ctx stops the turn (and its request to Ollama) and keeps what
// streamed.
//
// A generation holds a chat slot from Ask until its channel closes; Ask
// waits for one in the queue, and fails at once with ErrBusy when the
// queue is full. A consumer that cancels ctx may stop reading: the
// engine's goroutines end all the same.
func (e *Engine) Ask(ctx context.Context, req AskRequest) (string, <-chan agent.Event, error) {
	cfg := e.cfg
	name, err := resolveIndex(cfg, req.Index)
	if err != nil {
		return "", nil, err
	}
	cfg.Index = name
	if req.Mode != "" {
		cfg.Mode = req.Mode
	}
	if req.Model != "" {
		cfg.ChatModel = req.Model
	}
	if req.K <= 0 {
		req.K = cfg.TopK
	}
	// A store that cannot open costs the saving, not the answer; only a
	// follow-up, which needs its history, fails for it.
	sessions, sessErr := e.Sessions()
	note, lost := e.sessionsNotice()
	id := req.SessionID
	turn := req.Turn
	if id != "" {
		if sessErr != nil {
			return "", nil, sessErr
		}
		se, err := sessions.Get(ctx, id)
		switch {
		case err == nil && se.Index != "" && se.Index != name:
			// Its follow-ups would be answered from other documents, and
			// the session would be relabelled with this index.
			return "", nil, fmt.Errorf("%w: session %s was asked on index %q, not %q: add --index %s, or leave out the session to start a new one",
				ErrSessionIndex, id, se.Index, name, se.Index)
		case err == nil:
			turn.History = History(se)
		case lost && errors.Is(err, session.ErrNotFound):
			// The session went with the file removed under this chat:
			// it goes on, under the same id, without its history.
			note = strings.TrimPrefix(note+"; this conversation's earlier turns went with the old file", "; ")
		default:
			return "", nil, err
		}
	} else {
		id = session.NewID()
	}
	o, err := e.acquire(ctx, name) // the index must exist before a turn starts
	if err != nil {
		return "", nil, err
	}
	e.release(o)
	// A full queue refuses the turn now (ErrBusy: HTTP 429); a place in
	// it is waited for on the turn's goroutine, so that a server can
	// start its answer (headers, keep-alives) while the turn waits.
	// While Ollama is known to be down the turn will list passages only:
	// it takes no chat slot (which would refuse answers that need none),
	// and takes one after all if Ollama turns out to be back.
	var ticket *admit.Ticket
	knownDown := e.recentlyDown()
	if !req.SourcesOnly && !knownDown {
		if ticket, err = e.chat.Enqueue(); err != nil {
			return "", nil, err
		}
	}

	out := make(chan agent.Event, 64)
	e.turns.Add(1)
	go func() {
		defer e.turns.Done()
		defer close(out)
		if ticket != nil {
			release, err := ticket.Wait(ctx)
			if err != nil {
				agent.SendFinal(ctx, out, agent.Cancelled{Result: agent.Result{Question: turn.Question, Mode: agent.Mode(cfg.Mode), Model: cfg.ChatModel}})
				return
			}
			defer release()
		}
		a := &agent.Agent{
			Config: agent.Config{Model: cfg.ChatModel, NumCtx: cfg.NumCtx, Temperature: cfg.Temperature, Mode: agent.Mode(cfg.Mode),
				Threshold: float32(cfg.WebFallbackThreshold), Candidates: e.rr.candidates, TopK: req.K},
			Retriever: retriever{e, name, req.Stages},
			Reranker:  e.stageReranker(req.Stages),
		}
		a.Config.KeepAlive, _ = time.ParseDuration(cfg.KeepAlive)
		// Events are delivered unless the consumer is gone (ctx ended);
		// final ones (and Saved) always, even to a consumer that stopped
		// reading: agent.SendFinal makes room rather than block.
		send := func(ev agent.Event) bool { return agent.Send(ctx, out, ev) }
		final := func(ev agent.Event) { agent.SendFinal(ctx, out, ev) }
		for _, n := range e.Notices() {
			send(agent.Notice{Text: n})
		}
		if note != "" {
			send(agent.Notice{Text: note})
		}
		if !req.SourcesOnly {
			switch err := e.ChatStatus(ctx, cfg.ChatModel); {
			case err == nil && ticket == nil:
				// Back since it was found down: wait for a slot as any
				// turn would have.
				release, err := e.chat.Acquire(ctx)
				if err != nil {
					final(agent.Failed{Err: err, Result: agent.Result{Question: turn.Question, Mode: agent.Mode(cfg.Mode), Model: cfg.ChatModel}})
					return
				}
				defer release()
				a.Chat = e.client
				a.Config.ModelContext = e.modelContext(cfg.ChatModel)
			case err == nil:
				a.Chat = e.client
				a.Config.ModelContext = e.modelContext(cfg.ChatModel)
			case errors.Is(err, ollama.ErrUnreachable):
				// Passages, and the line that says how to get answers,
				// once an outage (the chat shows it in its banner too).
				if e.onceThisOutage("chat") {
					send(agent.Notice{Text: excerpt.FirstLine(err.Error()) + " " + DoctorHint})
				}
			case errors.Is(err, ollama.ErrModelMissing):
				// Ollama answers: "unreachable" would send the user to
				// the wrong fix.
				a.Config.NoChat = "chat model " + cfg.ChatModel + " not pulled"
				send(agent.Notice{Text: excerpt.FirstLine(err.Error()) + " " + DoctorHint})
			case ctx.Err() != nil:
			default:
				final(agent.Failed{Err: err, Result: agent.Result{Question: turn.Question, Mode: agent.Mode(cfg.Mode), Model: cfg.ChatModel}})
				return
			}
		}
		if cfg.Mode == "online" {
			if web, err := e.webSearcher(cfg); err != nil {
				send(agent.Notice{Text: "online mode without a web search: " + err.Error()})
			} else {
				a.Web = webAdapter{web}
			}
		}
		for ev := range a.Run(ctx, turn) {
			var res agent.Result
			switch f := ev.(type) {
			case agent.Done:
				res = f.Result
			case agent.Failed:
				res = f.Result
				if ollama.IsUnreachable(f.Err) || errors.Is(f.Err, agent.ErrStreamCut) {
					e.markChatDown(cfg.ChatModel)
				}
				if errors.Is(f.Err, ollama.ErrUnreachable) && res.Answer == "" && len(res.Sources) > 0 && ctx.Err() == nil {
					// Hung, or not Ollama, before the first token: the
					// passages, as when it is down.
					send(agent.Notice{Text: excerpt.FirstLine(f.Err.Error()) + " " + DoctorHint})
					res.Route = agent.RouteSourcesOnly
					ev = agent.Done{Result: res}
					break
				}
				f.Err = explainChat(f.Err) // explained once, for every front end
				if d := (*index.DamagedError)(nil); errors.As(f.Err, &d) {
					f.Err = d // the line every command gives, without the stage it broke in
				}
				ev = f
			case agent.Cancelled:
				res = f.Result
			default:
				send(ev)
				continue
			}
			// Only a turn with an answer is saved: passages alone (no model)
			// are not a conversation to follow up.
			if res.Answer != "" && !req.NoSave {
				n, err := 0, sessErr
				if err == nil {
					t := SessionTurn(res)
					t.Index = name // /sessions lists a chat's own; resuming goes back to it
					_, t.Cancelled = ev.(agent.Cancelled)
					n, err = sessions.Append(context.WithoutCancel(ctx), id, t)
				}
				if err != nil {
					slog.Warn("save session", "err", err)
					final(agent.Notice{Text: "could not save this turn: " + err.Error()})
				} else {
					final(agent.Saved{SessionID: id, Turn: n})
				}
			}
			final(ev)
		}
	}()
	return id, out, nil
}

// explainChat rewrites an error from the chat model as what to do about it.
func explainChat(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "<html") || strings.Contains(msg, "<!DOCTYPE") {
		return errors.New("Ollama (or a proxy in front of it) answered with an HTML error page: check ollama-host")
	}
	return err
}

// History turns a saved session into the agent's conversation history.
func History(se session.Session) []agent.Message {
	var h []agent.Message
	for _, t := range se.Turns {
		h = append(h, agent.Message{Role: "user", Content: t.Question}, agent.Message{Role: "assistant", Content: t.Answer})
	}
	return h
}

// SessionTurn is what a session keeps of a turn.
func SessionTurn(r agent.Result) session.Turn {
	t := session.Turn{Question: r.Question, Standalone: r.Standalone, Answer: r.Answer, Route: string(r.Route), Mode: string(r.Mode), Model: r.Model}
	for _, s := range r.Sources {
		t.Sources = append(t.Sources, session.Source{N: s.N, Label: s.Label(), Root: s.Root, Path: s.Path, Start: s.Start, End: s.End,
			Heading: s.Heading, URL: s.URL, Title: s.Title, Cited: s.Cited})
	}
	return t
}
