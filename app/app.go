// Package app is lore's one engine: it opens the configuration, the index,
// the query embedder, the reranker, the Ollama client, the web client and
// the sessions once per process, and every front end (lore ask, lore
// search, the chat, later a server) is a thin adapter over Ask and Search.
//
// An Engine lives as long as its process, hours for the chat or a server,
// so nothing in it is bound to the first caller: every call names its
// index, mode and model (none is "current" in the engine), open indexes are
// shared between calls and reopened when a rebuild publishes a new
// generation, the vector graph catches up with a refresh running beside it,
// and an Ollama that was down at start is used as soon as it answers. Each
// shared resource (the reranker, query embeddings, chat generations) admits
// a bounded number of callers and queues a bounded number more; past that
// a call is refused at once with ErrBusy.
package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/admit"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/rerank"
	"github.com/lore-cli/lore/session"
	"github.com/lore-cli/lore/websearch"
)

// Options open an Engine.
type Options struct {
	Config config.Config
	// NoRerank keeps the fused order (lore search --no-rerank).
	NoRerank bool
	// Dial is the one dial function every network client uses; the offline
	// guarantee is tested on it. nil dials directly.
	Dial ollama.DialFunc
	// Store is where the indexes live; nil opens the one Config names.
	Store index.Store
}

// Engine answers and searches. It is safe for concurrent use.
type Engine struct {
	dial   ollama.DialFunc
	host   *url.URL
	client *ollama.Client
	rr     rerankSetup

	// cfg is the configuration the engine opened with: the defaults of
	// every request. It never changes.
	cfg   config.Config
	store index.Store
	pool  *pool
	// Admission of the shared resources (see Load).
	rerank, embed, chat *admit.Limiter

	mu       sync.Mutex
	sessions *session.Store
	// sessionsLost is set once the sessions file was found removed or
	// replaced under this process: a chat's session may then be missing
	// from the new file. sessionsNote says so at the next turn.
	sessionsLost bool
	sessionsNote string
	turns        sync.WaitGroup // Ask goroutines still running: Close lets them save
	chatReady    map[string]bool
	ollamaDown   time.Time // when Ollama was last found unreachable; zero while it answers
	outages      int       // outages seen, so that each is told once
	rrFailed     bool      // the reranker failed at run time: searches keep the fused order
	told         map[string]bool
	subs         subscribers // Subscribe's functions
	// freshCtx is KeepFresh's context (nil: not called); keepers the
	// indexes it keeps fresh.
	freshCtx context.Context
	keepers  map[string]bool
	// chatCtx is the trained context length of each model found ready
	// (0: the server did not say): a prompt must fit it.
	chatCtx map[string]int
}

// ollamaRetry is how long a search stays lexical after Ollama was found
// unreachable, so that a chat with Ollama down does not wait on it for
// every question, yet uses it again soon after it starts.
var ollamaRetry = 10 * time.Second

// Open opens the engine. A missing index is not an error here (the chat
// opens on it and says how to build one); Search and Ask report it.
func Open(opt Options) (*Engine, error) {
	cfg := opt.Config
	host, err := config.ParseOllamaHost(cfg.OllamaHost)
	if err != nil {
		return nil, err
	}
	e := &Engine{dial: opt.Dial, host: host, client: ollama.NewClient(host, opt.Dial, OllamaTimeouts(cfg)), cfg: cfg,
		chatReady: map[string]bool{}, told: map[string]bool{},
		// The reranker backends run one batch at a time (a model is not
		// safe for concurrent use), so its queue holds every request the
		// chat slots and their queue let through.
		rerank: admit.New("reranker passes", 1, cfg.ServeMaxConcurrent+cfg.ServeQueue),
		embed:  admit.New("query embeddings", cfg.ServeMaxConcurrent, cfg.ServeQueue),
		chat:   admit.New("chat generations", cfg.ServeMaxConcurrent, cfg.ServeQueue)}
	if e.store = opt.Store; e.store == nil {
		if e.store, err = OpenStore(cfg); err != nil {
			return nil, err
		}
	}
	e.pool = newPool(max(cfg.MaxOpenIndexes, 1), defaultIdle, e.openIndexFor, e.store.Generation)
	if e.rr, err = openReranker(cfg, opt.NoRerank); err != nil {
		return nil, err
	}
	return e, nil
}

// OllamaTimeouts are the deadlines cfg sets for calls to Ollama.
func OllamaTimeouts(cfg config.Config) ollama.Timeouts {
	embed, firstToken := cfg.OllamaTimeouts()
	return ollama.Timeouts{Embed: embed, FirstToken: firstToken}
}

// Close releases everything the engine opened. Turns still running (their
// contexts cancelled by the caller) get a few seconds to save what they
// have.
func (e *Engine) Close() error {
	done := make(chan struct{})
	go func() { e.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	e.pool.close()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rr.r.Close()
	if e.sessions != nil {
		return e.sessions.Close()
	}
	return nil
}

// Config is the configuration the engine opened with: the defaults that
// a request's empty fields stand for.
func (e *Engine) Config() config.Config { return e.cfg }

// DefaultIndex is the index a request that names none works on.
func (e *Engine) DefaultIndex() string { return e.cfg.Index }

// Indexes lists the indexes that have been built, by name.
func (e *Engine) Indexes() []string {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	all, _ := e.store.Names(ctx)
	var names []string
	for _, n := range all {
		if e.store.Generation(ctx, n) != "" {
			names = append(names, n)
		}
	}
	return names
}

// Reranker names the reranker backend in use ("none" without one, or
// after it failed).
func (e *Engine) Reranker() string {
	if e.agentReranker() == nil {
		return "none"
	}
	return e.rr.r.Backend()
}

// Sessions is the store every turn is saved in, opened on first use (so
// that `lore index` never creates it).
func (e *Engine) Sessions() (*session.Store, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions != nil && !e.sessions.Replaced() {
		return e.sessions, nil
	}
	if e.sessions != nil {
		// Deleted (or moved aside) while lore ran: turns saved in the
		// old file would be lost when it closes. The old one is closed
		// first: SQLite removes its -wal and -shm by name.
		e.sessions.Close()
		e.sessions = nil
		e.sessionsLost = true
		e.sessionsNote = "the sessions file " + filepath.Join(e.cfg.DataDir, "sessions.db") + " was removed or replaced while lore ran: turns are saved in a new one from now on"
	}
	if err := os.MkdirAll(e.cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	s, err := session.Open(filepath.Join(e.cfg.DataDir, "sessions.db"))
	if err != nil {
		return nil, err
	}
	e.sessions = s
	return s, nil
}

// sessionsNotice returns, once, what the last reopening of the sessions
// file has to tell, and whether the file was ever replaced under this
// process.
func (e *Engine) sessionsNotice() (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.sessionsNote
	e.sessionsNote = ""
	return n, e.sessionsLost
}

// hostLabel is the Ollama host for messages: a password in the URL is
// never shown.
func (e *Engine) hostLabel() string { return e.host.Redacted() }

// IndexInfo describes the index name ("": the default) as it is now, for
// a status line: its name, whether it is built, its chunks and embedder.
// An index that is not built is Built false, not an error.
func (e *Engine) IndexInfo(ctx context.Context, name string) (index.Info, error) {
	name, err := resolveIndex(e.cfg, name)
	if err != nil {
		return index.Info{Name: name}, err
	}
	info := index.Info{Name: name}
	o, err := e.acquire(ctx, name)
	if errors.Is(err, index.ErrNoIndex) {
		return info, nil
	}
	if err != nil {
		return info, err
	}
	defer e.release(o)
	info.Built = true
	info.Embedder = o.ix.EmbedderModel(ctx)
	info.Chunks, err = o.ix.Chunks(ctx)
	return info, err
}

// Changed returns the numbers of the sources whose files changed on disk
// since they were indexed (by what the index recorded, as a refresh would
// decide); web sources are never changed. The sources are index's ("": the
// default); no index: an error wrapping index.ErrNoIndex.
func (e *Engine) Changed(ctx context.Context, index string, sources []agent.Source) (map[int]bool, error) {
	o, err := e.acquire(ctx, index)
	if err != nil {
		return nil, err
	}
	defer e.release(o)
	changed := map[int]bool{}
	for _, s := range sources {
		if s.URL != "" || s.Root == "" {
			continue
		}
		c, err := o.ix.Changed(ctx, s.Root, s.Path)
		if err != nil {
			return nil, err
		}
		if c {
			changed[s.N] = true
		}
	}
	return changed, nil
}

// once reports whether key has not been said before in this process.
func (e *Engine) once(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.told[key] {
		return false
	}
	e.told[key] = true
	return true
}

// ChatStatus says whether model can answer now: nil, or an error naming
// the fix (ollama.ErrUnreachable, ollama.ErrModelMissing). A model found
// ready is not checked again; one that was not is checked on every call,
// so starting Ollama or pulling the model needs no restart.
func (e *Engine) ChatStatus(ctx context.Context, model string) error {
	e.mu.Lock()
	ready := e.chatReady[model]
	e.mu.Unlock()
	if ready {
		return nil
	}
	// Each call has its deadline (ollama.ReplyTimeout): a hung server is
	// told as such, not as the caller's context ending.
	n, err := ollama.Check(ctx, e.client, e.hostLabel(), model)
	if err != nil {
		if errors.Is(err, ollama.ErrUnreachable) {
			e.sawOllamaDown()
		}
		return err
	}
	e.sawOllamaUp()
	e.mu.Lock()
	e.chatReady[model] = true
	if e.chatCtx == nil {
		e.chatCtx = map[string]int{}
	}
	e.chatCtx[model] = n
	e.mu.Unlock()
	return nil
}

// modelContext is model's trained context length, once ChatStatus found
// it ready (0: unknown).
func (e *Engine) modelContext(model string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.chatCtx[model]
}

// sawOllamaDown records that Ollama did not answer, and reports whether
// that is news: the first failure of an outage, the one to tell the user.
// Until ollamaRetry has passed, searches do not try to embed.
func (e *Engine) sawOllamaDown() (news bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	news = e.ollamaDown.IsZero()
	if news {
		e.outages++
	}
	e.ollamaDown = time.Now()
	return news
}

// sawOllamaUp ends an outage: the next one is told again.
func (e *Engine) sawOllamaUp() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ollamaDown = time.Time{}
}

// onceThisOutage is once, for the current outage only.
func (e *Engine) onceThisOutage(key string) bool {
	e.mu.Lock()
	n := e.outages
	e.mu.Unlock()
	return e.once(key + ":" + strconv.Itoa(n))
}

// markChatDown forgets that model was ready, after a turn found Ollama gone.
func (e *Engine) markChatDown(model string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.chatReady, model)
}

// ChatClient is the Ollama client for model, once ChatStatus finds it
// ready: for lore eval's judge and question drafts, which talk to a model
// outside a turn.
func (e *Engine) ChatClient(ctx context.Context, model string) (agent.ChatClient, error) {
	if err := e.ChatStatus(ctx, model); err != nil {
		return nil, err
	}
	return e.client, nil
}

// Models lists the models installed in Ollama, by name.
func (e *Engine) Models(ctx context.Context) ([]string, error) {
	list, err := e.client.List(ctx)
	if err != nil {
		return nil, ollama.Explain(err, e.hostLabel(), "")
	}
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names, nil
}

// webSearcher builds the web client for online mode. Offline mode never
// calls it, so no web client exists to dial anything.
func (e *Engine) webSearcher(cfg config.Config) (websearch.Searcher, error) {
	return NewWebSearcher(cfg, e.dial)
}

// NewWebSearcher is the web client cfg asks for (web-provider), dialing
// through dial (nil: directly). Only online mode and lore doctor --online
// build one.
func NewWebSearcher(cfg config.Config, dial ollama.DialFunc) (websearch.Searcher, error) {
	if cfg.WebProvider == "searxng" {
		return websearch.NewSearXNG(websearch.SearXNGOptions{URL: cfg.SearXNGURL, Dial: websearch.DialFunc(dial)})
	}
	return websearch.NewTavily(websearch.TavilyOptions{APIKey: cfg.TavilyAPIKey, Dial: websearch.DialFunc(dial)})
}

// agentReranker is the reranker as the agent wants it: nil for none, and
// for one that has failed.
func (e *Engine) agentReranker() agent.Reranker {
	e.mu.Lock()
	failed := e.rrFailed
	e.mu.Unlock()
	if _, none := e.rr.r.(rerank.None); none || failed {
		return nil
	}
	return rerankerAdapter{e}
}

// stageReranker is agentReranker unless st switches reranking off.
func (e *Engine) stageReranker(st Stages) agent.Reranker {
	if st.NoRerank {
		return nil
	}
	return e.agentReranker()
}

// Session returns a saved session with its turns.
func (e *Engine) Session(ctx context.Context, id string) (session.Session, error) {
	s, err := e.Sessions()
	if err != nil {
		return session.Session{}, err
	}
	return s.Get(ctx, id)
}

// ListSessions returns the saved sessions, most recent first.
func (e *Engine) ListSessions(ctx context.Context) ([]session.Session, error) {
	s, err := e.Sessions()
	if err != nil {
		return nil, err
	}
	return s.List(ctx)
}

// DoctorHint ends every front end's message about a setup problem, so
// that one broken part leads to the command that checks all of them.
const DoctorHint = "(lore doctor checks the whole setup)"

// SetupProblem reports whether err is a setup problem lore doctor
// diagnoses: Ollama unreachable, a model not installed, no index.
func SetupProblem(err error) bool {
	return errors.Is(err, ollama.ErrUnreachable) || errors.Is(err, ollama.ErrModelMissing) || errors.Is(err, index.ErrNoIndex)
}
