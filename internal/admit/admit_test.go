package admit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// waitFor polls cond, failing the test if it does not hold within a
// generous bound (no timing is asserted, only that it happens).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// limit run, queue wait, the next is refused at once; a release hands the
// slot to the first waiter; a cancelled waiter frees its place.
func TestLimiter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := New("chat generations", 2, 2)
	ctx := context.Background()
	var held []func()
	for range 2 {
		release, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}

	// Two wait: one that will be served, one that gives up.
	got := make(chan error, 1)
	var served func()
	go func() {
		var err error
		served, err = l.Acquire(ctx)
		got <- err
	}()
	waitFor(t, "the first waiter", func() bool { return l.Stats().Waiting == 1 })
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := l.Acquire(cctx)
		gaveUp <- err
	}()
	waitFor(t, "the second waiter", func() bool { return l.Stats().Waiting == 2 })

	// The queue is full: refused at once, saying what is busy.
	_, err := l.Acquire(ctx)
	if !errors.Is(err, ErrBusy) || err.Error() != "lore is busy: 2 chat generations running and 2 waiting; try again shortly" {
		t.Fatalf("err = %v", err)
	}

	// Cancelling a waiter frees its place: another may queue.
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if s := l.Stats(); s != (Stats{Running: 2, Waiting: 1, Limit: 2, Queue: 2}) {
		t.Fatalf("after the cancel: %+v", s)
	}

	// A release hands its slot to the first waiter.
	held[0]()
	held[0]() // twice is harmless
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Running != 2 || s.Waiting != 0 {
		t.Fatalf("after the hand-over: %+v", s)
	}
	served()
	held[1]()
	if s := l.Stats(); s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("after every release: %+v", s)
	}
}

// A context already ended is not admitted, even with a slot free.
func TestLimiterEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New("x", 1, 0).Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// Under contention no slot is lost or duplicated: waiters cancelled as a
// slot reaches them pass it on.
func TestLimiterStress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := New("things", 3, 50)
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*100*time.Microsecond)
			defer cancel()
			if i%2 == 0 {
				ctx = context.Background()
			}
			release, err := l.Acquire(ctx)
			if err != nil {
				if !errors.Is(err, ErrBusy) && !errors.Is(err, context.DeadlineExceeded) {
					t.Error(err)
				}
				return
			}
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(50 * time.Microsecond)
			mu.Lock()
			running--
			mu.Unlock()
			release()
		}()
	}
	wg.Wait()
	if most > 3 {
		t.Errorf("%d ran at once, limit 3", most)
	}
	if s := l.Stats(); s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("after all: %+v", s)
	}
}

func TestBusyMessageNamesTheResource(t *testing.T) {
	l := New("reranker passes", 1, 0)
	release, _ := l.Acquire(context.Background())
	defer release()
	_, err := l.Acquire(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 reranker passes running and 0 waiting") {
		t.Fatalf("err = %v", err)
	}
}
