// Package admit bounds how many callers use a shared resource at once (the
// reranker, embedding calls, chat generations) and how many may wait for
// it. A caller past the queue is refused at once: under load a server
// answers "busy, try again" instead of piling up requests that would time
// out anyway, each holding a connection and a goroutine.
package admit

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrBusy is wrapped by every refusal: the resource is running at its
// limit and its queue is full.
var ErrBusy = errors.New("lore is busy")

// Stats is a limiter's load now, for gauges and for the refusal message.
type Stats struct {
	Running int // holders of a slot
	Waiting int // callers in the queue
	Limit   int // slots
	Queue   int // places in the queue
}

// Limiter admits at most limit holders at once and queues at most queue
// more, first come first served. The zero value is not usable: see New.
type Limiter struct {
	what         string // "chat generations", for the refusal message
	limit, queue int

	mu      sync.Mutex
	running int
	waiters []*waiter
}

// waiter is one queued caller. granted is set (under Limiter.mu) when a
// releasing holder hands its slot over, just before ready is closed: a
// waiter whose context ends at the same moment must give that slot back.
type waiter struct {
	ready   chan struct{}
	granted bool
}

// New returns a limiter of limit slots (at least 1) and a queue of queue
// places (at least 0). what names the holders in messages, in the plural.
func New(what string, limit, queue int) *Limiter {
	return &Limiter{what: what, limit: max(limit, 1), queue: max(queue, 0)}
}

// Acquire takes a slot, waiting in the queue for one if need be. It
// returns at once with an error wrapping ErrBusy when the queue is full,
// and with ctx's error when ctx ends while it waits (its place in the
// queue is freed). release gives the slot back; calling it more than once
// is harmless.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := l.Enqueue()
	if err != nil {
		return nil, err
	}
	return t.Wait(ctx)
}

// Ticket is a caller's claim: a slot already taken, or a place in the
// queue. Enqueue and Wait split Acquire so that a server can refuse a
// request at once yet answer the ones it queues (headers, keep-alives)
// while they wait.
type Ticket struct {
	l *Limiter
	w *waiter // nil: the slot is held already
}

// Enqueue takes a free slot or a place in the queue, or returns at once
// with an error wrapping ErrBusy when the queue is full. The ticket must
// be waited on (Wait), which gives the place back if its context ends.
func (l *Limiter) Enqueue() (*Ticket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running < l.limit && len(l.waiters) == 0 {
		l.running++
		return &Ticket{l: l}, nil
	}
	if len(l.waiters) >= l.queue {
		return nil, fmt.Errorf("%w: %d %s running and %d waiting; try again shortly", ErrBusy, l.running, l.what, len(l.waiters))
	}
	w := &waiter{ready: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	return &Ticket{l: l, w: w}, nil
}

// Wait waits for the ticket's slot. When ctx ends first it gives the
// place (or the slot) back and returns ctx's error.
func (t *Ticket) Wait(ctx context.Context) (release func(), err error) {
	l, w := t.l, t.w
	if w == nil {
		if err := ctx.Err(); err != nil {
			l.release()
			return nil, err
		}
		return l.releaser(), nil
	}
	select {
	case <-w.ready:
		return l.releaser(), nil
	case <-ctx.Done():
		l.mu.Lock()
		granted := w.granted
		if !granted {
			for i, x := range l.waiters {
				if x == w {
					l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
					break
				}
			}
		}
		l.mu.Unlock()
		if granted {
			// The slot arrived as ctx ended: pass it on, not lose it.
			l.release()
		}
		return nil, ctx.Err()
	}
}

func (l *Limiter) releaser() func() {
	var once sync.Once
	return func() { once.Do(l.release) }
}

// release hands the slot to the first waiter, or frees it.
func (l *Limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) > 0 {
		w := l.waiters[0]
		l.waiters = l.waiters[1:]
		w.granted = true
		close(w.ready)
		return
	}
	l.running--
}

// Stats is the limiter's load now.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Running: l.running, Waiting: len(l.waiters), Limit: l.limit, Queue: l.queue}
}
