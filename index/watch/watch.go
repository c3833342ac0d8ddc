// Package watch tells which paths under an index's sources changed, as
// they change, so that the sync loop can hand exactly those to a scoped
// build (index.BuildOptions.Only).
//
// It watches, with fsnotify, every folder that the index's own walk
// enters (ignore files, links and bounds as ingest walks them), so a
// symbolic link never leads it outside a source. Events are coalesced per
// path and sent as a Batch once the tree has been quiet for a moment (an
// editor's atomic save, a branch switch's thousands of writes), or at the
// latest a second after the first; a new folder is watched as it appears;
// an ignore file's change widens the batch to its folder. The watcher
// never drops a change: while the consumer applies one batch the next
// one grows, and when the kernel's queue overflows the batch says All.
//
// Past the OS's watch limit (inotify's max_user_watches), or where events
// cannot be had, it polls instead: it walks the sources and compares each
// file's size and mtime with the walk before, at an interval that keeps
// the walks to a small share of one core. Either way an idle tree costs
// nothing but, when polling, the walks.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/lore-cli/lore/index/ingest"
)

// Options say what to watch and how quickly to report.
type Options struct {
	// Roots are the index's sources (folders or files), absolute.
	Roots []string
	// Walk is the index's walk: which links it follows, its bounds.
	Walk ingest.WalkOptions
	// Quiet is how long the tree must be still before a batch is sent
	// (default 100ms); MaxWait bounds how long a batch waits for that
	// while changes keep coming (default 1s).
	Quiet, MaxWait time.Duration
	// Poll is the shortest interval between two polling walks (default
	// 2s); a walk that takes long stretches it (see pollEvery).
	Poll time.Duration
	// MaxWatches bounds the folders watched by events; past it the
	// watcher polls. 0 leaves the bound to the OS.
	MaxWatches int
	// ForcePoll, when set, polls from the start and says why (a file
	// system known to send no events).
	ForcePoll string
	// Recheck is how often a missing source is looked for (default 5s).
	Recheck time.Duration
}

// Batch is what changed since the last one.
type Batch struct {
	// Paths are absolute, sorted and unique; a folder stands for all that
	// is below it.
	Paths []string
	// All says changes may have been lost (the kernel's queue overflowed,
	// or more paths changed than are worth listing): every source is to
	// be compared again.
	All bool
	// Missing are the roots that are not there now (an unmounted disk, a
	// deleted checkout).
	Missing []string
	// Notice is a line for the user about this batch ("" none).
	Notice string
}

// maxPending is how many paths a batch lists before it becomes All: a
// whole-source comparison is then cheaper than a scope of that size.
const maxPending = 20_000

// Watcher reports changes under its roots on Batches until Close.
type Watcher struct {
	opt     Options
	fs      *fsnotify.Watcher // nil while polling
	out     chan Batch
	stop    context.CancelFunc
	done    chan struct{}
	polling atomic.Pointer[string]
	watched atomic.Int64
	pending atomic.Int64

	mu      sync.Mutex // the state below, shared with the walks' OnDir
	dirs    map[string]bool
	missing map[string]bool
	limit   error // the OS refused a watch
}

// New starts watching opt.Roots. It walks them once to add the watches
// (or, polling, to take the first snapshot); the walk ends with ctx.
func New(ctx context.Context, opt Options) (*Watcher, error) {
	if opt.Quiet <= 0 {
		opt.Quiet = 100 * time.Millisecond
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = time.Second
	}
	if opt.Poll <= 0 {
		opt.Poll = 2 * time.Second
	}
	if opt.Recheck <= 0 {
		opt.Recheck = 5 * time.Second
	}
	runCtx, stop := context.WithCancel(context.Background())
	w := &Watcher{opt: opt, out: make(chan Batch), stop: stop, done: make(chan struct{}), dirs: map[string]bool{}, missing: map[string]bool{}}
	reason := opt.ForcePoll
	if reason == "" {
		fs, err := fsnotify.NewWatcher()
		if err != nil {
			reason = fmt.Sprintf("file events are not available (%v)", err)
		} else {
			w.fs = fs
			for _, r := range opt.Roots {
				if err := w.watchTree(ctx, r); err != nil {
					stop()
					fs.Close()
					return nil, err
				}
			}
			if w.limit != nil {
				reason = limitReason(w.limit, len(w.dirs), opt.MaxWatches)
				fs.Close()
				w.fs = nil
			}
		}
	}
	if reason != "" {
		w.polling.Store(&reason)
		p, err := newPoller(ctx, opt)
		if err != nil {
			stop()
			return nil, err
		}
		go w.poll(runCtx, p)
		return w, nil
	}
	go w.run(runCtx)
	return w, nil
}

// limitReason says why events gave way to polling, and how to raise the
// limit.
func limitReason(err error, dirs, max int) string {
	if max > 0 && dirs >= max {
		return fmt.Sprintf("the sources hold more than %d folders (the watch bound)", max)
	}
	if errors.Is(err, syscall.ENOSPC) {
		limit := "its limit"
		if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
			limit = strings.TrimSpace(string(b))
		}
		return fmt.Sprintf("the OS's inotify watch limit (fs.inotify.max_user_watches = %s) is reached after %d folders: raise it, e.g. `sudo sysctl fs.inotify.max_user_watches=524288`", limit, dirs)
	}
	return fmt.Sprintf("a folder could not be watched (%v)", err)
}

// Batches delivers the changes. A batch waits there until it is taken,
// growing meanwhile: nothing is dropped.
func (w *Watcher) Batches() <-chan Batch { return w.out }

// Polling says why the watcher polls, "" when it is told of changes.
func (w *Watcher) Polling() string {
	if p := w.polling.Load(); p != nil {
		return *p
	}
	return ""
}

// Watched counts the folders watched by events.
func (w *Watcher) Watched() int { return int(w.watched.Load()) }

// Pending counts the paths seen changed and not yet taken.
func (w *Watcher) Pending() int { return int(w.pending.Load()) }

// Close stops the watcher and releases its watches.
func (w *Watcher) Close() error {
	w.stop()
	<-w.done
	if w.fs != nil {
		return w.fs.Close()
	}
	return nil
}

// watchTree adds a watch on every folder the index's walk enters below
// root (a file root: its folder, whose events are filtered). A missing
// root is remembered and looked for again. A folder inside a source is
// walked from the source, scoped to it, so that the ignore files of the
// folders above it hold; once the watch bound is met nothing is walked.
func (w *Watcher) watchTree(ctx context.Context, root string) error {
	w.mu.Lock()
	full := w.limit != nil
	w.mu.Unlock()
	if full {
		return nil
	}
	fi, err := os.Stat(root)
	if err != nil {
		w.mu.Lock()
		w.missing[root] = true
		w.mu.Unlock()
		return nil
	}
	if !fi.IsDir() {
		w.add(filepath.Dir(root))
		return nil
	}
	walk := w.opt.Walk
	walk.OnDir = w.add
	// The innermost source holding it: with nested sources (/a and
	// /a/b) the index reads /a/b with its own rules, not /a's.
	from := root
	for _, r := range w.opt.Roots {
		if s := ingest.Scope(r, []string{root}); s != nil && s[0] != "" && (from == root || len(r) > len(from)) {
			from, walk.Only = r, []string{root}
		}
	}
	_, err = ingest.WalkRoots(ctx, []string{from}, walk)
	return err
}

func (w *Watcher) watching(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dirs[dir]
}

// add watches one folder, unless the OS's limit or the bound was met.
func (w *Watcher) add(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fs == nil || w.limit != nil || w.dirs[dir] {
		return
	}
	if w.opt.MaxWatches > 0 && len(w.dirs) >= w.opt.MaxWatches {
		w.limit = errors.New("watch bound")
		return
	}
	if err := w.fs.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			w.limit = err
			return
		}
		return // gone or unreadable meanwhile: its parent's event tells
	}
	w.dirs[dir] = true
	w.watched.Store(int64(len(w.dirs)))
}

// relevant tells whether p lies in a root or is one of them.
func (w *Watcher) relevant(p string) bool {
	for _, r := range w.opt.Roots {
		if ingest.Scope(r, []string{p}) != nil {
			return true
		}
	}
	return false
}

func (w *Watcher) isRoot(p string) bool { return slices.Contains(w.opt.Roots, p) }

// run turns events into batches until ctx ends.
func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	pend := newPending()
	var quiet, deadline <-chan time.Time
	var recheck *time.Ticker
	var recheckC <-chan time.Time
	defer func() {
		if recheck != nil {
			recheck.Stop()
		}
	}()
	ready := false
	for {
		w.mu.Lock()
		if len(w.missing) > 0 && recheck == nil {
			recheck = time.NewTicker(w.opt.Recheck)
			recheckC = recheck.C
		}
		w.mu.Unlock()
		var out chan Batch
		var b Batch
		if ready {
			out, b = w.out, pend.batch(w.missingRoots())
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if !w.event(ctx, ev, pend) {
				continue
			}
			if quiet == nil && deadline == nil {
				deadline = time.After(w.opt.MaxWait)
			}
			quiet = time.After(w.opt.Quiet)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// The kernel dropped events: compare everything, and
				// watch again any folder made meanwhile.
				pend.all("the kernel's event queue overflowed: comparing every file again")
				for _, r := range w.opt.Roots {
					w.watchTree(ctx, r)
				}
				ready = true
				continue
			}
			slog.Warn("watch", "err", err)
		case <-quiet:
			quiet, deadline, ready = nil, nil, true
		case <-deadline:
			quiet, deadline, ready = nil, nil, true
		case <-recheckC:
			if w.recheck(ctx, pend) {
				ready = true
			}
			w.mu.Lock()
			if len(w.missing) == 0 {
				recheck.Stop()
				recheck, recheckC = nil, nil
			}
			w.mu.Unlock()
		case out <- b:
			pend.reset()
			ready = false
		}
		w.pending.Store(int64(pend.len()))
	}
}

// event notes one fsnotify event; false when it concerns nothing the
// index holds.
func (w *Watcher) event(ctx context.Context, ev fsnotify.Event, pend *pending) bool {
	p := filepath.Clean(ev.Name)
	if !w.relevant(p) {
		return false
	}
	name := filepath.Base(p)
	switch {
	case name == ".gitignore" || name == ".loreignore":
		// Its rules decide what of its folder the index holds, and which
		// folders are watched.
		dir := filepath.Dir(p)
		pend.add(dir)
		w.watchTree(ctx, dir)
	case ev.Has(fsnotify.Create):
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			w.watchTree(ctx, p)
		}
		pend.add(p)
	case ev.Has(fsnotify.Chmod):
		// A folder unreadable until now could not be watched: it is
		// once it can be read.
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && !w.watching(p) {
			w.watchTree(ctx, p)
		}
		pend.add(p)
	default:
		pend.add(p)
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && w.isRoot(p) {
		w.mu.Lock()
		w.missing[p] = true
		w.mu.Unlock()
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.mu.Lock()
		for d := range w.dirs {
			if d == p || strings.HasPrefix(d, p+string(filepath.Separator)) {
				// Dropped now, before the folder's new name is watched: a
				// moved folder keeps its kernel watch, which the new name
				// would share and fsnotify would then drop with the old.
				w.fs.Remove(d)
				delete(w.dirs, d)
			}
		}
		w.watched.Store(int64(len(w.dirs)))
		w.mu.Unlock()
	}
	return true
}

// recheck looks for missing roots; true when one came back (its whole
// tree is then compared).
func (w *Watcher) recheck(ctx context.Context, pend *pending) bool {
	back := false
	for _, r := range w.missingRoots() {
		if _, err := os.Stat(r); err != nil {
			continue
		}
		w.mu.Lock()
		delete(w.missing, r)
		w.mu.Unlock()
		if w.fs != nil {
			w.watchTree(ctx, r)
		}
		pend.add(r)
		back = true
	}
	return back
}

func (w *Watcher) missingRoots() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for r := range w.missing {
		if _, err := os.Stat(r); err == nil && w.fs != nil && w.dirs[r] {
			continue
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// pending gathers the paths of the next batch.
type pending struct {
	paths  map[string]bool
	wide   bool
	notice string
}

func newPending() *pending { return &pending{paths: map[string]bool{}} }

func (p *pending) add(path string) {
	if p.wide {
		return
	}
	p.paths[path] = true
	if len(p.paths) > maxPending {
		p.all(fmt.Sprintf("more than %d paths changed at once: comparing every file again", maxPending))
	}
}

func (p *pending) all(notice string) {
	p.wide, p.notice, p.paths = true, notice, map[string]bool{}
}

func (p *pending) len() int { return len(p.paths) }

func (p *pending) reset() { p.paths, p.wide, p.notice = map[string]bool{}, false, "" }

// batch is what is pending, folders standing for what lies below them.
func (p *pending) batch(missing []string) Batch {
	b := Batch{All: p.wide, Missing: missing, Notice: p.notice}
	if p.wide {
		return b
	}
	paths := make([]string, 0, len(p.paths))
	for q := range p.paths {
		paths = append(paths, q)
	}
	slices.Sort(paths)
	for _, q := range paths {
		if n := len(b.Paths); n > 0 {
			last := b.Paths[n-1]
			if q == last || strings.HasPrefix(q, last+string(filepath.Separator)) {
				continue
			}
		}
		b.Paths = append(b.Paths, q)
	}
	return b
}
