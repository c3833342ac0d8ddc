package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

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

// KeepFresh keeps the indexes this engine opens in step with their
// sources until ctx ends (config watch; the chat, lore serve and lore mcp
// call it). For each index no other process watches, the engine takes the
// watch lease and applies changes as they are saved; for the others it
// follows their watcher and tells subscribers when it applied a batch,
// and takes over when that process ends.
func (e *Engine) KeepFresh(ctx context.Context) {
	e.mu.Lock()
	e.freshCtx = ctx
	e.keepers = map[string]bool{}
	e.mu.Unlock()
	e.keepFreshIndex(e.cfg.Index)
}

// keepFreshIndex starts keeping name fresh, once per name, when KeepFresh
// was called.
func (e *Engine) keepFreshIndex(name string) {
	e.mu.Lock()
	ctx := e.freshCtx
	if ctx == nil || ctx.Err() != nil || e.keepers[name] {
		e.mu.Unlock()
		return
	}
	e.keepers[name] = true
	e.mu.Unlock()
	go e.keep(ctx, name)
}

// Timings of KeepFresh.
var (
	// followEvery is how often another process's watcher is read.
	followEvery = 2 * time.Second
	// takeOverEvery is how often the lease is tried while another process
	// holds it, or while the index is not built.
	takeOverEvery = 30 * time.Second
)

// keep watches name, or follows the process that does, until ctx ends.
func (e *Engine) keep(ctx context.Context, name string) {
	told := ""
	for ctx.Err() == nil {
		err := e.Watch(ctx, WatchRequest{Index: name, OnEvent: func(ev WatchEvent) {
			switch ev.Kind {
			case WatchFailed:
				slog.Warn("watch", "index", name, "err", ev.Err)
			case WatchNotice:
				slog.Info("watch", "index", name, "notice", ev.Notice)
			}
		}})
		if ctx.Err() != nil {
			return
		}
		if err != nil && err.Error() != told {
			told = err.Error()
			slog.Info("watch: not watching here", "index", name, "why", err)
		}
		if errors.Is(err, index.ErrLocked) {
			e.follow(ctx, name, time.Now().Add(takeOverEvery))
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(takeOverEvery):
		}
	}
}

// follow reads the Freshness another process records for name until
// until, telling subscribers of each batch it applied.
func (e *Engine) follow(ctx context.Context, name string, until time.Time) {
	last, _ := e.store.Freshness(ctx, name)
	t := time.NewTicker(followEvery)
	defer t.Stop()
	for time.Now().Before(until) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f, err := e.store.Freshness(ctx, name)
		if err != nil {
			continue
		}
		if f.State == index.WatchStopped {
			return // its watcher ended: take over
		}
		if f.SyncedAt.After(last.SyncedAt) {
			e.publish(SyncEvent{Index: name, Freshness: f})
		}
		last = f
	}
}
