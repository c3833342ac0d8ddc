// Package doctor checks lore's whole setup, one line per check: the
// configuration and where each setting came from, the folders lore writes,
// the index, Ollama and its models, the reranker, online mode and the
// terminal. Each section reads its component through a small interface
// declared here, so tests hand in broken parts without a network; Run
// puts the sections in a fixed order whatever order they finish in.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/websearch"
)

// Status is a check's outcome. Only Fail makes lore doctor exit 1.
type Status int

const (
	OK   Status = iota
	Warn        // works, but not as well as it could
	Fail        // broken: something lore needs does not work
	Skip        // not checked (not needed, or depends on something broken)
)

var statusNames = [...]string{OK: "ok", Warn: "warn", Fail: "fail", Skip: "skip"}

func (s Status) String() string { return statusNames[s] }

// MarshalJSON writes the status as "ok", "warn", "fail" or "skip".
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Sections, in the order a report shows them.
const (
	SectionConfig   = "config"
	SectionFolders  = "folders"
	SectionCluster  = "cluster"
	SectionIndex    = "index"
	SectionOllama   = "ollama"
	SectionReranker = "reranker"
	SectionOnline   = "online"
	SectionTerminal = "terminal"
)

var sections = []string{SectionConfig, SectionFolders, SectionCluster, SectionIndex, SectionOllama, SectionReranker, SectionOnline, SectionTerminal}

// Check is one line of the report.
type Check struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Detail  string `json:"detail,omitempty"`
	// Fix says what to do, for Fail and Warn; "" when there is nothing to do.
	Fix string `json:"fix,omitempty"`
}

// Report is every check, in section order, and the configuration's
// provenance.
type Report struct {
	Checks []Check
	Config ConfigSummary
}

// OK reports whether nothing failed (warnings do not count).
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// Counts are the checks that failed and warned.
func (r Report) Counts() (fails, warns int) {
	for _, c := range r.Checks {
		switch c.Status {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	return fails, warns
}

// OllamaProbe is the part of *api.Client the Ollama checks use.
type OllamaProbe interface {
	Version(ctx context.Context) (string, error)
	Show(ctx context.Context, req *api.ShowRequest) (*api.ShowResponse, error)
	ListRunning(ctx context.Context) (*api.ProcessResponse, error)
}

// Index is the part of *local.Index the index checks read.
type Index interface {
	Status(ctx context.Context) (index.Status, error)
	CheckGraph(ctx context.Context) (index.GraphStatus, error)
	Close() error
}

// Terminal is what the terminal checks read, gathered by the caller (the
// colour profile needs the real stdout, the clipboard a PATH lookup).
type Terminal struct {
	Profile   string // the colour profile: TrueColor, ANSI256, ANSI, Ascii, NoTTY
	Clipboard string // the system clipboard program, "" for none
	Getenv    func(string) string
}

// Options are the setup to check and the parts to check it with. Only
// Loaded is required: every nil part is the real one.
type Options struct {
	Loaded config.Loaded
	// Online runs one web search (lore doctor --online); without it the
	// only connection made is to the Ollama host.
	Online bool

	// OpenIndex opens the configured index (the store's Open).
	OpenIndex func() (Index, error)
	// Cluster opens the store's servers for checking (store: weaviate).
	Cluster func() (Cluster, error)
	// Ollama is the client for the Ollama host (ollama.NewClient).
	Ollama func(host *url.URL) OllamaProbe
	// Reranker opens the reranker and runs one pair (app.CheckReranker).
	Reranker func(ctx context.Context, cfg config.Config) app.RerankerHealth
	// Web is the web search client (app.NewWebSearcher), built only with Online.
	Web      func(cfg config.Config) (websearch.Searcher, error)
	Terminal Terminal

	// Ago and Took format times and durations; tests fix them.
	Ago  func(time.Time) string
	Took func(time.Duration) string
	// Timeout bounds each call to Ollama (default 2 s) and the web query (10 s).
	Timeout time.Duration
}

func (o *Options) defaults() {
	cfg := o.Loaded.Config
	if o.OpenIndex == nil {
		o.OpenIndex = func() (Index, error) {
			st, err := app.OpenStore(cfg)
			if err != nil {
				return nil, err
			}
			ix, err := st.Open(context.Background(), cfg.Index)
			if err != nil {
				return nil, err // not a nil index.Reader in a non-nil Index
			}
			return ix, nil
		}
	}
	if o.Cluster == nil {
		o.Cluster = func() (Cluster, error) {
			st, err := app.OpenStore(cfg)
			if err != nil {
				return nil, err
			}
			c, ok := st.(Cluster)
			if !ok {
				return nil, fmt.Errorf("store %s has no servers to check", st.Kind())
			}
			return c, nil
		}
	}
	if o.Ollama == nil {
		o.Ollama = func(host *url.URL) OllamaProbe { return ollama.NewClient(host, nil, ollama.Timeouts{}) }
	}
	if o.Reranker == nil {
		o.Reranker = app.CheckReranker
	}
	if o.Web == nil {
		o.Web = func(cfg config.Config) (websearch.Searcher, error) { return app.NewWebSearcher(cfg, nil) }
	}
	if o.Ago == nil {
		o.Ago = func(t time.Time) string { return ago(time.Since(t)) }
	}
	if o.Took == nil {
		o.Took = func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Terminal.Getenv == nil {
		o.Terminal.Getenv = func(string) string { return "" }
	}
}

// Run checks everything and returns the report. It never fails: whatever
// is broken is a line of the report. Sections that do not depend on each
// other run at the same time; the index goes before Ollama, which needs to
// know whether the index has an embedding model.
func Run(ctx context.Context, opt Options) Report {
	opt.defaults()
	cfg := opt.Loaded.Config
	found := make(map[string][]Check, len(sections))
	var mu sync.Mutex
	put := func(section string, checks []Check) {
		for i := range checks {
			checks[i].Section = section
		}
		mu.Lock()
		found[section] = checks
		mu.Unlock()
	}
	put(SectionConfig, checkConfig(opt.Loaded))
	put(SectionFolders, checkFolders(cfg, opt.Loaded.File))
	var wg sync.WaitGroup
	wg.Go(func() {
		checks, embedModel := checkIndex(ctx, opt.OpenIndex, cfg, opt.Ago)
		put(SectionIndex, checks)
		put(SectionOllama, checkOllama(ctx, opt, embedModel))
	})
	wg.Go(func() { put(SectionCluster, checkCluster(ctx, opt.Cluster, cfg)) })
	wg.Go(func() { put(SectionReranker, checkReranker(ctx, opt)) })
	wg.Go(func() { put(SectionOnline, checkOnline(ctx, opt)) })
	put(SectionTerminal, checkTerminal(opt.Terminal))
	wg.Wait()

	r := Report{Config: summarize(opt.Loaded)}
	for _, s := range sections {
		r.Checks = append(r.Checks, found[s]...)
	}
	return r
}

// ago says how long ago, in the largest unit that fits.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
