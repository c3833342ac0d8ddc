// Package app is lore's one engine: it opens the configuration, the index,
// the query embedder, the reranker, the Ollama client, the web client and
// the sessions once per process, and every front end (lore ask, lore
// search, the chat, later a server) is a thin adapter over Ask and Search.
//
// An Engine lives as long as its process, hours for the chat, so nothing in
// it is bound to the first caller: the index is reopened when a rebuild
// publishes a new generation, the vector graph catches up with a refresh
// running beside it, and an Ollama that was down at start is used as soon
// as it answers.
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
}

// Engine answers and searches. It is safe for concurrent use.
type Engine struct {
	dial   ollama.DialFunc
	host   *url.URL
	client *ollama.Client
	rr     rerankSetup

	mu       sync.Mutex
	sessions *session.Store
	// sessionsLost is set once the sessions file was found removed or
	// replaced under this process: a chat's session may then be missing
	// from the new file. sessionsNote says so at the next turn.
	sessionsLost bool
	sessionsNote string
	cfg          config.Config
	ix           *openIndex
	turns        sync.WaitGroup // Ask goroutines still running: Close lets them save
	chatReady    map[string]bool
	ollamaDown   time.Time // when Ollama was last found unreachable; zero while it answers
	outages      int       // outages seen, so that each is told once
	rrFailed     bool      // the reranker failed at run time: searches keep the fused order
	told         map[string]bool
	// chatCtx is the trained context length of each model found ready
	// (0: the server did not say): a prompt must fit it.
	chatCtx map[string]int
}

// openIndex is one generation of the index and the embedder for its
// queries. Neither changes after it is opened, so concurrent turns share
// it without locks.
type openIndex struct {
	ix  *index.Index
	dir string
	emb index.Embedder // nil for an index built with --embedder none
	// refs counts the searches using it; a retired generation (replaced by
	// a rebuild, or another index chosen) closes when the count reaches 0.
	// Both are guarded by Engine.mu.
	refs    int
	retired bool
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
		chatReady: map[string]bool{}, told: map[string]bool{}}
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
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ix != nil {
		e.ix.ix.Close()
		e.ix = nil
	}
	e.rr.r.Close()
	if e.sessions != nil {
		return e.sessions.Close()
	}
	return nil
}

// Config is the configuration in force (with the chat's switches applied).
func (e *Engine) Config() config.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

// SetMode switches between offline and online for the turns that follow.
func (e *Engine) SetMode(mode string) error {
	if mode != "offline" && mode != "online" {
		return fmt.Errorf("mode %q: use offline or online", mode)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg.Mode = mode
	return nil
}

// SetModel switches the chat model for the turns that follow.
func (e *Engine) SetModel(model string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg.ChatModel = model
}

// SetIndex switches to another index by name. An index that is not built
// is accepted: Search and Ask say how to build it.
func (e *Engine) SetIndex(name string) error {
	probe := e.Config()
	probe.Index = name
	if err := probe.Validate(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg.Index = name
	e.retire(e.ix)
	e.ix = nil
	return nil
}

// Indexes lists the indexes that have been built, by name.
func (e *Engine) Indexes() []string {
	cfg := e.Config()
	parent := filepath.Dir(cfg.IndexDir())
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, d := range entries {
		if d.IsDir() && index.CurrentGeneration(filepath.Join(parent, d.Name())) != "" {
			names = append(names, d.Name())
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

// acquire returns the current generation of the configured index, counted
// as in use until release. It reopens the index when a `lore index
// --rebuild` has published a new generation since; the old one is closed
// as soon as no search uses it any more.
func (e *Engine) acquire(ctx context.Context) (*openIndex, error) {
	e.mu.Lock()
	cfg := e.cfg
	dir := cfg.IndexDir()
	current := index.CurrentGeneration(dir)
	if o := e.ix; o != nil && o.dir == dir && o.ix.Generation() == current {
		o.refs++
		e.mu.Unlock()
		return o, nil
	}
	e.mu.Unlock()

	// Opening reads SQLite: done outside the lock, so that nothing else
	// waits on it.
	ix, err := index.Open(dir, cfg.Index)
	if err != nil {
		return nil, err
	}
	o := &openIndex{ix: ix, dir: dir, refs: 1}
	// What the index was built with is read once per generation: a
	// cancelled first caller must not make it look keyword-only for good.
	if model := ix.EmbedderModel(context.WithoutCancel(ctx)); model != "none" {
		emb := index.NewOllamaEmbedder(e.client, e.hostLabel(), model)
		if ollama.FullName(model) == ollama.FullName(cfg.ChatModel) {
			// Ollama restarts a runner whenever num_ctx changes: embed the
			// query with the chat's, or every question would restart it twice.
			emb.QueryNumCtx = cfg.NumCtx
		}
		o.emb = emb
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if cur := e.ix; cur != nil && cur.dir == dir && cur.ix.Generation() == ix.Generation() {
		ix.Close() // another caller opened the same generation meanwhile
		cur.refs++
		return cur, nil
	}
	e.retire(e.ix)
	e.ix = o
	return o, nil
}

// release ends a use of o that acquire counted.
func (e *Engine) release(o *openIndex) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o.refs--
	if o.retired && o.refs == 0 {
		o.ix.Close()
	}
}

// retire closes o now, or when its last user releases it. e.mu is held.
func (e *Engine) retire(o *openIndex) {
	if o == nil || o.retired {
		return
	}
	o.retired = true
	if o.refs == 0 {
		o.ix.Close()
	}
}

// hostLabel is the Ollama host for messages: a password in the URL is
// never shown.
func (e *Engine) hostLabel() string { return e.host.Redacted() }

// IndexInfo describes the index for a status line.
type IndexInfo struct {
	Name     string
	Built    bool
	Chunks   int
	Embedder string // "none" for keyword-only
}

// Index describes the configured index as it is now.
func (e *Engine) Index(ctx context.Context) (IndexInfo, error) {
	info := IndexInfo{Name: e.Config().Index}
	o, err := e.acquire(ctx)
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
// decide); web sources are never changed. No index: nothing to compare.
func (e *Engine) Changed(ctx context.Context, sources []agent.Source) (map[int]bool, error) {
	o, err := e.acquire(ctx)
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
