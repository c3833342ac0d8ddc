package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// servedEngine is an engine over an index of one file embedded by srv,
// with cfg's serve limits changed by tune.
func servedEngine(t *testing.T, srv *ollamatest.Server, tune func(*config.Config)) *Engine {
	t.Helper()
	cfg := testConfig(t, srv.URL)
	tune(&cfg)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// streamingTurn is an Ask whose answer has started to stream.
type streamingTurn struct {
	cancel context.CancelFunc
	events <-chan agent.Event
}

// startStreaming asks and reads until the first token: the generation
// holds its chat slot and its request to Ollama is open.
func startStreaming(t *testing.T, e *Engine) streamingTurn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // a failed test does not leave it hanging
	_, events, err := e.Ask(ctx, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: true})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range events {
		switch ev := ev.(type) {
		case agent.Token:
			return streamingTurn{cancel, events}
		case agent.Done, agent.Failed, agent.Cancelled:
			cancel()
			t.Fatalf("the turn ended before streaming: %#v", ev)
		}
	}
	cancel()
	t.Fatal("the turn ended before streaming")
	return streamingTurn{}
}

// warmUp opens what an engine keeps open between requests (the index, the
// sessions store), so that a leak check started after it sees only what a
// request leaves behind.
func warmUp(t *testing.T, e *Engine) {
	t.Helper()
	if _, err := e.Search(context.Background(), SearchRequest{Query: "widget"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sessions(); err != nil {
		t.Fatal(err)
	}
}

// leakOpts ignores the HTTP connections the client and the fake keep
// between requests: pooled, not the engine's.
var leakOpts = []goleak.Option{
	goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
}

// Chat generations are admitted serve-max-concurrent at a time with
// serve-queue waiting: the next waits, the one past the queue is refused
// at once with ErrBusy, a waiter that gives up frees its place, and a
// cancelled generation closes its Ollama request and hands its slot on.
func TestChatAdmission(t *testing.T) {
	srv := ollamatest.New(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout", " [1]."}, Hang: true})
	e := servedEngine(t, srv, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 4, 2 })
	warmUp(t, e)
	defer goleak.VerifyNone(t, append(leakOpts, goleak.IgnoreCurrent())...)

	var running []streamingTurn
	for range 4 {
		running = append(running, startStreaming(t, e))
	}
	if got := srv.Streaming(); got != 4 {
		t.Fatalf("%d answers streaming, want 4", got)
	}

	// The 5th and 6th are queued: Ask returns at once (a server can
	// start its answer) and the turn waits for a slot on its goroutine.
	ctx5, cancel5 := context.WithCancel(context.Background())
	defer cancel5()
	ctx6, cancel6 := context.WithCancel(context.Background())
	defer cancel6()
	_, fifth, err := e.Ask(ctx5, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: true})
	if err != nil {
		t.Fatalf("5th: %v", err)
	}
	_, sixth, err := e.Ask(ctx6, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: true})
	if err != nil {
		t.Fatalf("6th: %v", err)
	}
	if s := e.Load()[ResourceChat]; s.Waiting != 2 {
		t.Fatalf("the 5th and 6th should wait: %+v", s)
	}

	// The 7th is refused at once, saying what is busy.
	_, _, err = e.Ask(context.Background(), AskRequest{Turn: agent.Turn{Question: "seventh"}, NoSave: true})
	if !errors.Is(err, ErrBusy) || err.Error() != "lore is busy: 4 chat generations running and 2 waiting; try again shortly" {
		t.Fatalf("7th: %v", err)
	}
	if s := e.Load()[ResourceChat]; s.Running != 4 || s.Waiting != 2 || s.Limit != 4 || s.Queue != 2 {
		t.Fatalf("load %+v", s)
	}

	// The 6th gives up: its place is free.
	cancel6()
	var last agent.Event
	for ev := range sixth {
		last = ev
	}
	if _, ok := last.(agent.Cancelled); !ok {
		t.Fatalf("6th after cancel ended with %#v", last)
	}
	if s := e.Load()[ResourceChat]; s.Waiting != 1 {
		t.Fatalf("after the 6th gave up: %+v", s)
	}

	// The 1st is cancelled: Ollama sees its request closed, and the 5th
	// gets the slot.
	running[0].cancel()
	var final agent.Event
	for ev := range running[0].events {
		final = ev
	}
	if _, ok := final.(agent.Cancelled); !ok {
		t.Fatalf("the cancelled turn ended with %#v", final)
	}
	waitFor(t, "the 5th to stream", func() bool { return srv.Streaming() == 4 })
	running[0] = streamingTurn{cancel5, fifth}

	// Every generation cancelled: slots free, requests closed, nothing left.
	for _, r := range running {
		r.cancel()
		for range r.events {
		}
	}
	waitFor(t, "every request to Ollama to close", func() bool { return srv.Streaming() == 0 })
	if s := e.Load()[ResourceChat]; s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("load after all: %+v", s)
	}
}

// A consumer that cancels and stops reading (a client gone mid-answer)
// leaves no goroutine behind, even with the event buffer full, and frees
// its slot; the Ollama request is closed.
func TestAbandonedEventStreamLeaksNothing(t *testing.T) {
	srv := ollamatest.New(t)
	tokens := make([]string, 300)
	for i := range tokens {
		tokens[i] = "word "
	}
	srv.SetChat(ollamatest.ChatScript{Tokens: tokens})
	e := servedEngine(t, srv, func(c *config.Config) {})
	// A turn first, so that the connections pooled between requests exist.
	if ev, _ := ask(t, e, "warm up"); ev == nil {
		t.Fatal("no final event")
	}
	defer goleak.VerifyNone(t, append(leakOpts, goleak.IgnoreCurrent())...)

	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		_, events, err := e.Ask(ctx, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		// Read until the answer streams, then let the buffer fill.
		for ev := range events {
			if _, ok := ev.(agent.Token); ok {
				break
			}
		}
		waitFor(t, "the event buffer to fill", func() bool { return len(events) == cap(events) })
		cancel() // and never read again
	}
	waitFor(t, "the chat slots to free", func() bool { return e.Load()[ResourceChat].Running == 0 })
	waitFor(t, "the requests to Ollama to close", func() bool { return srv.Streaming() == 0 })
}

// A search past the embedding queue is refused with ErrBusy, not answered
// by keyword behind the user's back.
func TestBusyEmbeddingsRefuseASearch(t *testing.T) {
	srv := ollamatest.New(t)
	e := servedEngine(t, srv, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 0 })
	release, err := e.embed.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Search(context.Background(), SearchRequest{Query: "widget"})
	release()
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "query embeddings") {
		t.Fatalf("err = %v", err)
	}
	if res, err := e.Search(context.Background(), SearchRequest{Query: "widget"}); err != nil || res.Mode != "hybrid" {
		t.Fatalf("after the release: %v %q", err, res.Mode)
	}
}

// TestTurnTakesNoChatSlotWhileOllamaIsDown: with Ollama known to be down
// a turn lists passages without a chat slot, so a full chat queue does
// not refuse an answer that needs no model.
func TestTurnTakesNoChatSlotWhileOllamaIsDown(t *testing.T) {
	srv := ollamatest.New(t)
	e := servedEngine(t, srv, func(c *config.Config) { c.ServeMaxConcurrent, c.ServeQueue = 1, 0 })
	warmUp(t, e)
	srv.Close()
	ask := func() (agent.Result, error) {
		_, events, err := e.Ask(context.Background(), AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: true})
		if err != nil {
			return agent.Result{}, err
		}
		var res agent.Result
		for ev := range events {
			if d, ok := ev.(agent.Done); ok {
				res = d.Result
			}
		}
		return res, nil
	}
	if _, err := ask(); err != nil { // finds Ollama down
		t.Fatal(err)
	}
	release, err := e.chat.Acquire(context.Background()) // every slot held
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	res, err := ask()
	if err != nil || res.Route != agent.RouteSourcesOnly {
		t.Fatalf("a turn while Ollama is down and the chat slots are full: %v, route %q", err, res.Route)
	}
}
