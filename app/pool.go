package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollama"
)

// openIndex is one generation of one index and the embedder for its
// queries. Neither changes after it is opened, so concurrent requests
// share it without locks.
type openIndex struct {
	ix   index.Reader
	name string
	emb  index.Embedder // nil for an index built with --embedder none
	// refs counts the requests using it; a retired generation (replaced
	// by a rebuild, evicted, idle, or the engine closing) closes when the
	// count reaches 0. refs, retired and used are guarded by pool.mu.
	refs    int
	retired bool
	used    time.Time // last acquired or released, for LRU and idle closing
}

// pool holds the open indexes by name, shared by every request: opening
// an index reads SQLite and its vector graph, too slow to do per request,
// and each open one holds file descriptors and memory, so at most max stay
// open and one unused for idle is closed.
type pool struct {
	max  int
	idle time.Duration
	// open builds an openIndex for name; the engine's, so that it can
	// attach the query embedder.
	open func(ctx context.Context, name string) (*openIndex, error)
	// generation is the store's Generation: what open would read now.
	generation func(ctx context.Context, name string) string

	mu     sync.Mutex
	byName map[string]*openIndex
	// closing are the handles retired under mu, closed by unlock once mu
	// is released: closing the last reader of a replaced generation
	// deletes its folder, which for a large index takes seconds that every
	// other request's acquire would wait out.
	closing []index.Reader
	timer   *time.Timer // the next idle sweep; nil when none is due
	closed  bool
	live    int // index handles open, current or retired: 0 after close once requests end
	now     func() time.Time
}

// defaultIdle is how long an index nobody uses stays open.
const defaultIdle = 5 * time.Minute

var errClosed = errors.New("lore is shutting down")

func newPool(max int, idle time.Duration, open func(ctx context.Context, name string) (*openIndex, error), generation func(ctx context.Context, name string) string) *pool {
	return &pool{max: max, idle: idle, open: open, generation: generation, byName: map[string]*openIndex{}, now: time.Now}
}

// acquire returns the current generation of the index name,
// counted as in use until release. A `lore index --rebuild` by any process
// publishes a new generation: the next acquire opens it, and the old one
// closes as soon as no request uses it any more.
func (p *pool) acquire(ctx context.Context, name string) (*openIndex, error) {
	current := p.generation(ctx, name) // a small file or one object: read outside the lock
	p.mu.Lock()
	if p.closed {
		p.unlock()
		return nil, errClosed
	}
	if o := p.byName[name]; o != nil && o.ix.Generation() == current {
		o.refs++
		o.used = p.now()
		p.unlock()
		return o, nil
	}
	p.unlock()

	// Opening reads SQLite: done outside the lock, so that requests on
	// other indexes do not wait on it.
	o, err := p.open(ctx, name)
	if err != nil {
		return nil, err
	}
	o.refs, o.used = 1, p.now()

	p.mu.Lock()
	defer p.unlock()
	p.live++
	if p.closed {
		p.closeIndex(o)
		return nil, errClosed
	}
	if cur := p.byName[name]; cur != nil && cur.ix.Generation() == o.ix.Generation() {
		p.closeIndex(o) // another request opened the same generation meanwhile
		cur.refs++
		cur.used = p.now()
		return cur, nil
	}
	p.retire(p.byName[name])
	p.byName[name] = o
	p.evict()
	p.arm()
	return o, nil
}

// release ends a use of o that acquire counted.
func (p *pool) release(o *openIndex) {
	p.mu.Lock()
	defer p.unlock()
	o.refs--
	o.used = p.now()
	if o.retired && o.refs == 0 {
		p.closeIndex(o)
		return
	}
	p.evict() // indexes all in use when the limit was passed may go now
}

// retire closes o now, or when its last user releases it, and forgets it.
// p.mu is held.
func (p *pool) retire(o *openIndex) {
	if o == nil || o.retired {
		return
	}
	o.retired = true
	if p.byName[o.name] == o {
		delete(p.byName, o.name)
	}
	if o.refs == 0 {
		p.closeIndex(o)
	}
}

// closeIndex closes o's handle once p.mu is released (unlock). p.mu is
// held.
func (p *pool) closeIndex(o *openIndex) {
	p.closing = append(p.closing, o.ix)
}

// unlock releases p.mu, then closes the handles retired under it: a
// Close that deletes an old generation holds up only the request that
// retired it, not every acquire and release of the pool. live counts a
// handle until its Close has returned.
func (p *pool) unlock() {
	todo := p.closing
	p.closing = nil
	p.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	for _, ix := range todo {
		ix.Close()
	}
	p.mu.Lock()
	p.live -= len(todo)
	p.mu.Unlock()
}

// evict closes the least recently used indexes nobody uses while more
// than max are open. Indexes in use are never closed under a request: the
// pool goes over max until they are released. p.mu is held.
func (p *pool) evict() {
	for len(p.byName) > p.max {
		var lru *openIndex
		for _, o := range p.byName {
			if o.refs == 0 && (lru == nil || o.used.Before(lru.used)) {
				lru = o
			}
		}
		if lru == nil {
			return
		}
		p.retire(lru)
	}
}

// arm schedules the idle sweep, if one is not already due. The timer runs
// no goroutine while it waits. p.mu is held.
func (p *pool) arm() {
	if p.timer != nil || p.closed || len(p.byName) == 0 {
		return
	}
	p.timer = time.AfterFunc(p.idle, p.sweep)
}

// sweep closes the indexes nobody has used for idle.
func (p *pool) sweep() {
	p.mu.Lock()
	defer p.unlock()
	p.timer = nil
	now := p.now()
	for _, o := range p.byName {
		if o.refs == 0 && now.Sub(o.used) >= p.idle {
			p.retire(o)
		}
	}
	p.arm()
}

// names lists the open indexes (not those retired), and counts the index
// handles open, retired ones still in use included.
func (p *pool) names() ([]string, int) {
	p.mu.Lock()
	defer p.unlock()
	var names []string
	for n := range p.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, p.live
}

// close closes every open index; those still in use close when their
// requests release them. Later acquires fail.
func (p *pool) close() {
	p.mu.Lock()
	defer p.unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	for _, o := range p.byName {
		p.retire(o)
	}
}

// resolveIndex is the index a request names: "" is the configured one.
// A name is checked as the index setting is, so that a request cannot
// reach outside the indexes directory.
func resolveIndex(cfg config.Config, name string) (string, error) {
	if name == "" {
		return cfg.Index, nil
	}
	if err := config.CheckIndexName(name); err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	return name, nil
}

// openIndexFor opens the current generation of the index name with the
// embedder its queries need.
func (e *Engine) openIndexFor(ctx context.Context, name string) (*openIndex, error) {
	ix, err := e.store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	e.keepFreshIndex(name)
	o := &openIndex{ix: ix, name: name}
	// What the index was built with is read once per generation: a
	// cancelled first caller must not make it look keyword-only for good.
	if model := ix.EmbedderModel(context.WithoutCancel(ctx)); model != "none" {
		emb := ollama.NewEmbedder(e.client, e.hostLabel(), model)
		if ollama.FullName(model) == ollama.FullName(e.cfg.ChatModel) {
			// Ollama restarts a runner whenever num_ctx changes: embed the
			// query with the chat's, or every question would restart it twice.
			emb.QueryNumCtx = e.cfg.NumCtx
		}
		o.emb = admittedEmbedder{emb, e.embed}
	}
	return o, nil
}

// acquire is the pool's acquire for the index a request names.
func (e *Engine) acquire(ctx context.Context, name string) (*openIndex, error) {
	name, err := resolveIndex(e.cfg, name)
	if err != nil {
		return nil, err
	}
	return e.pool.acquire(ctx, name)
}

func (e *Engine) release(o *openIndex) { e.pool.release(o) }
