package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/watch"
	"github.com/lore-cli/lore/internal/ollama"
)

// WatchRequest is one watcher of one index: `lore index --watch`, or a
// front end's KeepFresh.
type WatchRequest struct {
	Index string
	// Progress is the first refresh's progress.
	Progress func(index.Progress)
	// OnEvent is told of each batch applied and each failure, from the
	// watcher's goroutine.
	OnEvent func(WatchEvent)
	// ForcePoll polls from the start, saying why; MaxWatches bounds the
	// folders watched by events (0: the OS's limit). Both are for file
	// systems without events, and for tests.
	ForcePoll  string
	MaxWatches int
	// FillEvery is how often vectors left pending while the embedder was
	// down are tried again (default 10s); RetryEvery how soon a failed
	// batch is (default 2s: another process writing the index, say).
	FillEvery, RetryEvery time.Duration
}

// Kinds of WatchEvent.
const (
	WatchStarted = "started" // the first refresh is done; watching
	WatchSynced  = "synced"  // a batch of changes was applied
	WatchFailed  = "error"   // a batch failed; it is tried again
	WatchNotice  = "notice"  // a line for the user (a source missing, polling, …)
)

// WatchEvent is what a watcher did.
type WatchEvent struct {
	Kind    string
	Index   string
	Summary index.Summary
	// ChunksRemoved counts the chunks that left the index in this batch.
	ChunksRemoved int
	Took          time.Duration
	Err           error
	Notice        string
	Freshness     index.Freshness
}

// embedderDown tells whether err means the embedder cannot work now:
// the batch then goes in for keyword search, its vectors pending.
func embedderDown(err error) bool {
	return errors.Is(err, ollama.ErrUnreachable) || errors.Is(err, ollama.ErrNoAnswer) ||
		errors.Is(err, ollama.ErrNotOllama) || errors.Is(err, ollama.ErrModelMissing)
}

// Watch keeps the index req.Index in step with its sources until ctx
// ends: it takes the index's watch lease (index.ErrLocked when another
// process watches it), starts watching, refreshes the index once, then
// applies each batch of changes as a scoped build. Every batch is
// committed as it is applied: ending ctx loses nothing applied.
func (e *Engine) Watch(ctx context.Context, req WatchRequest) error {
	name, err := resolveIndex(e.cfg, req.Index)
	if err != nil {
		return err
	}
	if req.FillEvery <= 0 {
		req.FillEvery = 10 * time.Second
	}
	if req.RetryEvery <= 0 {
		req.RetryEvery = 2 * time.Second
	}
	lease, err := e.store.Watch(ctx, name)
	if err != nil {
		return err
	}
	defer lease.Close()
	s := &syncLoop{e: e, name: name, req: req, lease: lease}
	return s.run(ctx)
}

// syncLoop is one watcher's state.
type syncLoop struct {
	e       *Engine
	name    string
	req     WatchRequest
	lease   index.WatchLease
	w       *watch.Watcher
	fresh   index.Freshness
	total   int             // chunks in the index after the last batch
	missing map[string]bool // sources said missing
	gone    bool            // the index was removed (lore index rm)
}

func (s *syncLoop) emit(ev WatchEvent) {
	ev.Index, ev.Freshness = s.name, s.fresh
	if s.req.OnEvent != nil {
		s.req.OnEvent(ev)
	}
}

func (s *syncLoop) record(ctx context.Context) {
	if err := s.lease.Record(ctx, s.fresh); err != nil && ctx.Err() == nil {
		slog.Warn("watch: record freshness", "index", s.name, "err", err)
	}
}

func (s *syncLoop) run(ctx context.Context) error {
	rem, err := s.e.store.Remembered(ctx, s.name)
	if err != nil {
		return err
	}
	cfg := s.e.cfg
	cfg.Index = s.name
	if _, _, err := s.e.rememberedSettings(ctx, &cfg, nil); err != nil {
		return err
	}
	host, _ := os.Hostname()
	s.fresh = index.Freshness{Watcher: fmt.Sprintf("lore (pid %d on %s)", os.Getpid(), host), State: index.WatchIndexing, Since: time.Now()}
	s.record(ctx)
	// Watch before the first refresh: what changes during it is in the
	// first batch, not lost between the two.
	w, err := watch.New(ctx, watch.Options{Roots: rem.Sources, Walk: ingest.WalkOptions{FollowSymlinks: cfg.FollowSymlinks},
		ForcePoll: s.req.ForcePoll, MaxWatches: s.req.MaxWatches})
	if err != nil {
		return err
	}
	defer w.Close()
	s.w = w
	if p := w.Polling(); p != "" {
		s.fresh.Polling = p
		s.emit(WatchEvent{Kind: WatchNotice, Notice: "polling for changes: " + p})
	}
	sum, took, err := s.apply(ctx, BuildRequest{Index: s.name, Progress: s.req.Progress, FillVectors: true})
	if err != nil {
		return err
	}
	s.total = sum.TotalChunks
	s.synced(ctx)
	s.emit(WatchEvent{Kind: WatchStarted, Summary: sum, Took: took})
	s.e.publish(SyncEvent{Index: s.name, Freshness: s.fresh})

	var retry []string // paths of failed batches, tried again
	var retryAll bool
	var retryC, fillC <-chan time.Time
	for {
		if s.fresh.VectorsPending > 0 && fillC == nil {
			fillC = time.After(s.req.FillEvery)
		}
		select {
		case <-ctx.Done():
			return nil
		case b := <-w.Batches():
			s.noteMissing(b.Missing)
			if b.Notice != "" {
				s.emit(WatchEvent{Kind: WatchNotice, Notice: b.Notice})
			}
			only := b.Paths
			if b.All || retryAll {
				only = nil
			} else {
				only = mergePaths(only, retry)
			}
			if !s.batch(ctx, only, b.All || retryAll) {
				if s.gone {
					return fmt.Errorf("%w %q: it was removed while watched", index.ErrNoIndex, s.name)
				}
				retry, retryAll = only, only == nil
				retryC = time.After(s.req.RetryEvery)
			} else {
				retry, retryAll, retryC = nil, false, nil
			}
		case <-retryC:
			if s.batch(ctx, retry, retryAll) {
				retry, retryAll, retryC = nil, false, nil
			} else {
				retryC = time.After(s.req.RetryEvery)
			}
		case <-fillC:
			fillC = nil
			s.fill(ctx)
		}
	}
}

// batch applies one batch of changes; false when it failed (it is then
// tried again).
func (s *syncLoop) batch(ctx context.Context, only []string, all bool) bool {
	if all {
		only = nil // every source compared again
	} else if len(only) == 0 {
		return true
	}
	s.fresh.State, s.fresh.Pending = index.WatchIndexing, len(only)
	s.record(ctx)
	sum, took, err := s.apply(ctx, BuildRequest{Index: s.name, Only: only, KeepEmptied: true})
	if ctx.Err() != nil {
		return true
	}
	if err != nil {
		s.gone = errors.Is(err, index.ErrNoIndex) || errors.Is(err, index.ErrNoSources)
		s.fresh.Error, s.fresh.State = err.Error(), index.WatchWatching
		s.fresh.Pending = len(only) + s.w.Pending()
		s.record(ctx)
		s.emit(WatchEvent{Kind: WatchFailed, Err: err})
		return false
	}
	removed := 0
	if sum.TotalChunks > 0 || len(sum.Updated)+len(sum.Deleted) > 0 {
		removed = max(0, s.total+sum.Chunks-sum.TotalChunks)
		s.total = sum.TotalChunks
	}
	s.noteMissing(sum.Missing)
	s.synced(ctx)
	if len(sum.Updated)+len(sum.Deleted) > 0 || sum.ChunksEmbedded > 0 {
		s.emit(WatchEvent{Kind: WatchSynced, Summary: sum, ChunksRemoved: removed, Took: took})
		s.e.publish(SyncEvent{Index: s.name, Changed: sum.Updated, Removed: sum.Deleted, Freshness: s.fresh})
	}
	return true
}

// apply runs one build; with the embedder down it goes in for keyword
// search and leaves its vectors pending.
func (s *syncLoop) apply(ctx context.Context, req BuildRequest) (index.Summary, time.Duration, error) {
	start := time.Now()
	req.DeferVectors = s.fresh.VectorsPending > 0 && req.Only != nil
	sum, err := s.e.Build(ctx, req)
	if err != nil && embedderDown(err) && !req.DeferVectors {
		if s.fresh.VectorsPending == 0 {
			s.emit(WatchEvent{Kind: WatchNotice, Notice: fmt.Sprintf("the embedder is not answering (%v): changes are searchable by keyword now, their vectors follow when it answers", shortErr(err))})
		}
		req.DeferVectors, req.FillVectors = true, false
		sum, err = s.e.Build(ctx, req)
	}
	if err == nil && sum.VectorsPending > 0 {
		s.fresh.VectorsPending += sum.VectorsPending
	}
	return sum, time.Since(start), err
}

// fill embeds the vectors left pending, once the embedder answers.
func (s *syncLoop) fill(ctx context.Context) {
	s.fresh.State = index.WatchIndexing
	s.record(ctx)
	sum, err := s.e.Build(ctx, BuildRequest{Index: s.name, FillVectors: true, KeepEmptied: true})
	if ctx.Err() != nil {
		return
	}
	if err == nil {
		s.fresh.VectorsPending = 0
	}
	s.synced(ctx)
	switch {
	case err == nil && sum.ChunksEmbedded > 0:
		s.emit(WatchEvent{Kind: WatchSynced, Summary: sum})
	case err != nil && !embedderDown(err):
		s.emit(WatchEvent{Kind: WatchFailed, Err: err})
	}
}

// synced records the index as in step with what the watcher has seen.
func (s *syncLoop) synced(ctx context.Context) {
	s.fresh.State, s.fresh.Error, s.fresh.Pending = index.WatchWatching, "", s.w.Pending()
	if s.fresh.VectorsPending > 0 {
		s.fresh.State = index.WatchVectorsPending
	}
	s.fresh.SyncedAt = time.Now()
	s.record(ctx)
}

// noteMissing says once when a source goes missing and when it is back.
func (s *syncLoop) noteMissing(missing []string) {
	if s.missing == nil {
		s.missing = map[string]bool{}
	}
	now := map[string]bool{}
	for _, m := range missing {
		now[m] = true
		if !s.missing[m] {
			s.emit(WatchEvent{Kind: WatchNotice, Notice: fmt.Sprintf("source %s is not on this machine now: its documents stay in the index, marked missing, until it is back (or `lore index` drops them)", m)})
		}
	}
	for m := range s.missing {
		if !now[m] {
			s.emit(WatchEvent{Kind: WatchNotice, Notice: fmt.Sprintf("source %s is back", m)})
		}
	}
	s.missing = now
	s.fresh.Missing = slices.Sorted(func(yield func(string) bool) {
		for m := range now {
			if !yield(m) {
				return
			}
		}
	})
}

// mergePaths is a ∪ b.
func mergePaths(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

func shortErr(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}
