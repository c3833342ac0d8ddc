package app

import (
	"context"
	"sync"

	"github.com/lore-cli/lore/index"
)

// SyncEvent tells that documents of an index changed under the engine:
// its own watcher applied a batch, or it noticed that another process's
// watcher (or a `lore index`) did.
type SyncEvent struct {
	Index string
	// Changed are the documents added or modified, Removed those that left
	// the index. Both are nil when the engine does not know which (another
	// process applied the change): then any document may have changed.
	Changed, Removed []index.File
	Freshness        index.Freshness
}

// subscribers hold the functions Subscribe registered.
type subscribers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(SyncEvent)
}

// Subscribe calls fn for each SyncEvent until the returned cancel is
// called. fn runs on the engine's goroutine: it must not block.
func (e *Engine) Subscribe(fn func(SyncEvent)) (cancel func()) {
	s := &e.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		s.fns = map[int]func(SyncEvent){}
	}
	id := s.next
	s.next++
	s.fns[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fns, id)
	}
}

// publish tells every subscriber of ev.
func (e *Engine) publish(ev SyncEvent) {
	s := &e.subs
	s.mu.Lock()
	fns := make([]func(SyncEvent), 0, len(s.fns))
	for _, fn := range s.fns {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// Freshness is how far the index name ("" the default) is in step with
// its sources, as the process watching it last recorded (State
// index.WatchStopped when none does).
func (e *Engine) Freshness(ctx context.Context, name string) (index.Freshness, error) {
	name, err := resolveIndex(e.cfg, name)
	if err != nil {
		return index.Freshness{}, err
	}
	return e.store.Freshness(ctx, name)
}

// KeepFresh keeps the local indexes this engine opens in step with their
// sources until ctx ends (config watch; the chat, lore serve and lore mcp
// call it): for each index no other process watches, the engine takes the
// watch lease and applies changes as they are saved; for the others it
// tells subscribers when their watcher applied a batch.
func (e *Engine) KeepFresh(ctx context.Context) {
	// The watchers start as indexes open (see watch.go).
	e.keepFresh.Store(true)
	go func() { <-ctx.Done(); e.keepFresh.Store(false) }()
}
