package serve

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"time"
)

// errQueueTimeout ends a turn that waited Options.QueueTimeout for a chat
// slot: its client learns lore is busy (429) instead of waiting until it
// gives up by itself.
var errQueueTimeout = errors.New("lore is busy: this request waited too long for a free answer slot (every serve-max-concurrent slot stayed taken); try again later")

// answers are the answers this server is generating: when each got its
// slot, and how long finished ones took. A refused client is told when a
// slot is likely to free (Retry-After) from them, not a fixed second it
// would spend retrying in vain while every slot holds a minute-long
// answer.
type answers struct {
	mu      sync.Mutex
	running map[*call]time.Time
	avg     time.Duration // moving average of finished answers, slot to end
}

func (a *answers) begin(c *call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running == nil {
		a.running = map[*call]time.Time{}
	}
	a.running[c] = time.Now()
}

func (a *answers) end(c *call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	start, ok := a.running[c]
	if !ok {
		return
	}
	delete(a.running, c)
	d := time.Since(start)
	if a.avg == 0 {
		a.avg = d
	} else {
		a.avg = (3*a.avg + d) / 4
	}
}

// retryAfter is the Retry-After of a 429, in seconds: when the answer
// running longest should end, by the average of finished answers (or,
// before any finished, after as long again as it has run); at least 1,
// at most 10 minutes.
func (a *answers) retryAfter() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var oldest time.Duration
	for _, start := range a.running {
		oldest = max(oldest, time.Since(start))
	}
	expect := a.avg
	if expect == 0 {
		expect = 2 * oldest
	}
	secs := math.Ceil((expect - oldest).Seconds())
	return strconv.Itoa(int(min(max(secs, 1), 600)))
}
