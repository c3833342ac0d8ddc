package watch

import (
	"context"
	"os"
	"time"

	"github.com/lore-cli/lore/index/ingest"
)

// poller compares walks: what a file's size, mtime or skip reason was in
// the walk before tells whether it changed.
type poller struct {
	opt  Options
	last map[string]stamp
	took time.Duration // the last walk's duration
}

type stamp struct {
	size   int64
	mtime  int64
	reason string
}

func newPoller(ctx context.Context, opt Options) (*poller, error) {
	p := &poller{opt: opt}
	snap, _, err := p.walk(ctx)
	if err != nil {
		return nil, err
	}
	p.last = snap
	return p, nil
}

// walk takes a snapshot of every root; missing lists the roots not there.
func (p *poller) walk(ctx context.Context) (map[string]stamp, []string, error) {
	start := time.Now()
	walked, err := ingest.WalkRoots(ctx, p.opt.Roots, p.opt.Walk)
	if err != nil {
		return nil, nil, err
	}
	snap := map[string]stamp{}
	var missing []string
	for i, w := range walked {
		if w.Err != nil {
			if _, err := os.Stat(p.opt.Roots[i]); err != nil {
				missing = append(missing, p.opt.Roots[i])
			}
			continue
		}
		for _, e := range w.Entries {
			snap[e.Abs] = stamp{e.Size, e.MTime.UnixNano(), e.Reason}
		}
	}
	p.took = time.Since(start)
	return snap, missing, nil
}

// pollEvery is the interval after a walk that took took: at least min,
// and long enough that the walks use at most a twentieth of a core.
func pollEvery(min, took time.Duration) time.Duration {
	return max(min, 20*took)
}

// poll walks at intervals and sends what changed until ctx ends.
func (w *Watcher) poll(ctx context.Context, p *poller) {
	defer close(w.done)
	pend := newPending()
	var missing []string
	ready := false
	timer := time.NewTimer(pollEvery(w.opt.Poll, p.took))
	defer timer.Stop()
	for {
		var out chan Batch
		var b Batch
		if ready {
			out, b = w.out, pend.batch(missing)
		}
		select {
		case <-ctx.Done():
			return
		case out <- b:
			pend.reset()
			ready = false
			w.pending.Store(0)
		case <-timer.C:
			snap, miss, err := p.walk(ctx)
			if err != nil {
				return // ctx ended
			}
			// A missing root's files stay as they were: no deletions are
			// reported for them (the sync loop keeps them, marked missing).
			for _, r := range miss {
				for path, s := range p.last {
					if ingest.Scope(r, []string{path}) != nil {
						snap[path] = s
					}
				}
			}
			for path, s := range snap {
				if old, ok := p.last[path]; !ok || old != s {
					pend.add(path)
				}
			}
			for path := range p.last {
				if _, ok := snap[path]; !ok {
					pend.add(path)
				}
			}
			if pend.len() > 0 || pend.wide || !sameStrings(miss, missing) {
				ready = true
			}
			p.last, missing = snap, miss
			w.pending.Store(int64(pend.len()))
			timer.Reset(pollEvery(w.opt.Poll, p.took))
		}
	}
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
