package weaviatestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/lore-cli/lore/index"
)

// Live sync on the cluster. The watch lease and the Freshness it records
// are an object per index in a collection of their own (<prefix>Watch),
// not in the meta object: a build holds the meta object from BeginWrite
// to Close and writes it whole, so freshness kept there would be written
// over by the watcher's own builds. The lease works as the writers' does:
// renewed while held, taken over once it expires or its process is gone,
// read back a moment after it is written since Weaviate has no
// compare-and-set (leaseSettle).

// leaseSettle is how long a watcher, or a writer (BeginWrite), waits
// between writing its lease and reading it back. Two that start at once
// both find no lease and both write theirs; the cluster keeps the last
// write, but read back at once each found its own and both went on.
// Read back after the pause, both read the same, last, write, and one
// gives way, provided the other wrote within the pause of its read: a
// write takes milliseconds, and a replica applies it in less than the
// pause. A watcher slower than that is still caught: the lease read at
// every renewal names it, and the one it overwrote stops.
//
// Every live-sync batch takes the writer's lease, so the pause is in
// each save's time to search (issue 33: p95 under 2 s on a cluster; it
// was 0.45 to 0.94 s before the pause). Half a second still covers a
// contender whose read and write of the lease are milliseconds apart,
// which is the race; 2 s put every save over the goal.
var leaseSettle = 500 * time.Millisecond // a var: TestMain shortens it, before any Store runs

// watchKind names the watch collection in propsOf.
const watchKind = "Watch"

func watchClass(prefix string) string { return prefix + watchKind }

var watchProps = []prop{
	{"name", "text", "field", true},
	{"holder", "text", "field", false},
	{"expires", "int", "", false},
	{"freshness", "text", "field", false},
}

func watchID(name string) string { return objectID("watch", name) }

// watchObj is one index's watch object.
type watchObj struct {
	Holder    string
	Expires   int64 // unix milliseconds
	Freshness index.Freshness
}

// live tells whether the lease is held: by a holder whose lease has not
// run out and whose process, when it ran here, is still there.
func (o *watchObj) live() bool {
	return o != nil && o.Holder != "" && time.Now().UnixMilli() < o.Expires && !holderGone(o.Holder)
}

// freshnessJSON is Freshness as the object holds it (index.Freshness has
// no JSON tags: the wire package owns what is printed).
type freshnessJSON index.Freshness

func (s *Store) readWatch(ctx context.Context, name string) (*watchObj, error) {
	var obj *models.Object
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		objs, err := c.Data().ObjectsGetter().WithClassName(watchClass(s.cfg.CollectionPrefix)).WithID(watchID(name)).
			WithConsistencyLevel(s.cfg.WriteConsistency).Do(ctx)
		if statusCode(err) == http.StatusNotFound || isMissingClass(err) {
			obj = nil
			return nil
		}
		if err == nil && len(objs) == 1 {
			obj = objs[0]
		}
		return err
	})
	if err != nil || obj == nil {
		return nil, s.wrap(err, "read the watch lease of index "+strconv.Quote(name))
	}
	m, _ := obj.Properties.(map[string]any)
	o := &watchObj{}
	o.Holder, _ = m["holder"].(string)
	switch v := m["expires"].(type) {
	case float64:
		o.Expires = int64(v)
	case json.Number:
		o.Expires, _ = v.Int64()
	}
	if f, _ := m["freshness"].(string); f != "" {
		var fj freshnessJSON
		// A damaged one says nothing: the lease alone is what counts.
		if json.Unmarshal([]byte(f), &fj) == nil {
			o.Freshness = index.Freshness(fj)
		}
	}
	return o, nil
}

func (s *Store) writeWatch(ctx context.Context, name string, o watchObj) error {
	f, err := json.Marshal(freshnessJSON(o.Freshness))
	if err != nil {
		return err
	}
	obj := &models.Object{Class: watchClass(s.cfg.CollectionPrefix), ID: strfmt.UUID(watchID(name)), Properties: map[string]any{
		"name": name, "holder": o.Holder, "expires": o.Expires, "freshness": string(f),
	}}
	return s.insert(ctx, "write the watch lease of index "+strconv.Quote(name), []*models.Object{obj}, nil)
}

// Freshness reads what the watcher of name last recorded; with no live
// lease nobody watches, whatever the object still says.
func (s *Store) Freshness(ctx context.Context, name string) (index.Freshness, error) {
	o, err := s.readWatch(ctx, name)
	if err != nil {
		return index.Freshness{}, err
	}
	if !o.live() {
		return index.Freshness{State: index.WatchStopped}, nil
	}
	return o.Freshness, nil
}

// Watch takes the watch lease of the index name. The index must exist
// (a first build makes it): watching never creates a phantom index.
func (s *Store) Watch(ctx context.Context, name string) (index.WatchLease, error) {
	st, err := s.readState(ctx, name, s.cfg.WriteConsistency)
	if err != nil {
		return nil, err
	}
	if st == nil || st.Current == "" {
		return nil, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
	}
	if err := s.ensureClass(ctx, classDef(watchClass(s.cfg.CollectionPrefix), watchKind, max(1, st.gen(st.Current).Replication))); err != nil {
		return nil, s.wrap(err, "create the watch collection")
	}
	have, err := s.readWatch(ctx, name)
	if err != nil {
		return nil, err
	}
	if have.live() {
		return nil, fmt.Errorf("%w: %s is watching index %q (its lease runs until %s)",
			index.ErrLocked, clip(have.Holder), name, time.UnixMilli(have.Expires).Format("15:04:05"))
	}
	l := &watchLease{s: s, name: name, obj: watchObj{Holder: s.newHolder(), Freshness: index.Freshness{State: index.WatchIndexing, Since: time.Now()}},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	l.obj.Expires = s.lease.expiry()
	if err := s.writeWatch(ctx, name, l.obj); err != nil {
		return nil, err
	}
	err = s.settle(ctx, func(ctx context.Context) error {
		back, err := s.readWatch(ctx, name)
		if err != nil {
			return err
		}
		if back == nil || back.Holder != l.obj.Holder {
			holder := "another watcher"
			if back != nil && back.Holder != "" {
				holder = back.Holder
			}
			return fmt.Errorf("%w: %s began watching index %q at the same time", index.ErrLocked, clip(holder), name)
		}
		return nil
	}, func() { s.giveBackWatch(ctx, name, l.obj.Holder) })
	if err != nil {
		return nil, err
	}
	go l.renew()
	return l, nil
}

type watchLease struct {
	s             *Store
	name          string
	mu            sync.Mutex
	obj           watchObj
	closed        bool
	lost          bool // taken over or removed: never written again
	stop, stopped chan struct{}
}

// renew extends the lease until Close, or until it finds the lease
// taken over (write marks it lost).
func (l *watchLease) renew() {
	defer close(l.stopped)
	renewLoop(l.s.lease.renew, l.stop, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.lost {
			l.write(context.Background())
		}
		return l.lost
	})
}

// write saves the lease with a new expiry; under mu.
func (l *watchLease) write(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.s.cfg.Timeout)
	defer cancel()
	// Read first: a watcher whose lease lapsed (a laptop asleep) and was
	// taken over, or whose index was removed, must not write itself back.
	back, err := l.s.readWatch(ctx, l.name)
	if err != nil {
		return err
	}
	if back == nil || back.Holder != l.obj.Holder {
		l.lost = true
		return fmt.Errorf("%w: the watch lease of index %q was taken over or removed", index.ErrLocked, l.name)
	}
	l.obj.Expires = l.s.lease.expiry()
	return l.s.writeWatch(ctx, l.name, l.obj)
}

func (l *watchLease) Record(ctx context.Context, f index.Freshness) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("watch lease closed")
	}
	if l.lost {
		return fmt.Errorf("%w: the watch lease of index %q was taken over or removed", index.ErrLocked, l.name)
	}
	l.obj.Freshness = f
	return l.write(ctx)
}

// Close gives the lease back, unless it lapsed and another watcher took it.
func (l *watchLease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.stopped
	ctx, cancel := context.WithTimeout(context.Background(), l.s.cfg.Timeout)
	defer cancel()
	if back, err := l.s.readWatch(ctx, l.name); err != nil || back == nil || back.Holder != l.obj.Holder {
		return err
	}
	if st, err := l.s.readState(ctx, l.name, l.s.cfg.WriteConsistency); err == nil && st == nil {
		return l.s.deleteWatch(ctx, l.name) // the index was removed while watched
	}
	return l.s.writeWatch(ctx, l.name, watchObj{Freshness: index.Freshness{State: index.WatchStopped}})
}

// giveBackWatch marks name unwatched if holder still holds its watch
// lease, on a context of its own: the caller's may be the one that was
// cancelled. Left, the lease would refuse every other watcher until it
// expired.
func (s *Store) giveBackWatch(ctx context.Context, name, holder string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	back, err := s.readWatch(ctx, name)
	if err != nil || back == nil || back.Holder != holder {
		return
	}
	s.writeWatch(ctx, name, watchObj{Freshness: index.Freshness{State: index.WatchStopped}})
}

// deleteWatch drops name's watch object (the index is being removed).
func (s *Store) deleteWatch(ctx context.Context, name string) error {
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		err := c.Data().Deleter().WithClassName(watchClass(s.cfg.CollectionPrefix)).WithID(watchID(name)).
			WithConsistencyLevel(s.cfg.WriteConsistency).Do(ctx)
		if statusCode(err) == http.StatusNotFound || isMissingClass(err) {
			return nil
		}
		return err
	})
	return s.wrap(err, "remove the watch lease of index "+strconv.Quote(name))
}

// PendingVectors lists the files of source sourceID whose chunks went in
// without their vectors (a DeferVectors build: the embedder was down).
func (w *Writer) PendingVectors(_ context.Context, sourceID int64) (map[string]bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for _, p := range w.st.gen(w.gen).Pending {
		if p.SourceID == sourceID {
			out[p.Path] = true
		}
	}
	return out, nil
}
