package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/session"
)

// testConfig is a user's configuration with every folder under a temp dir.
func testConfig(t *testing.T, host string) config.Config {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.OllamaHost = host
	cfg.Reranker = "none"
	return cfg
}

func writeDocs(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func build(t *testing.T, cfg config.Config, docs string, rebuild bool, emb index.Embedder) {
	t.Helper()
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{docs}, Rebuild: rebuild, Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
}

func ollamaEmbedder(_ testing.TB, srv *ollamatest.Server) index.Embedder {
	u, _ := url.Parse(srv.URL)
	return ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), srv.URL, "nomic-embed-text")
}

// alphaEngine is an engine over an index of one file, embedded by srv.
func alphaEngine(t *testing.T, srv *ollamatest.Server) (*Engine, config.Config, string) {
	t.Helper()
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, cfg, docs
}

func paths(ps []agent.Passage) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return strings.Join(out, ",")
}

// A rebuild or a refresh run in another terminal while the chat is open is
// picked up by the next search, without errors and without a restart.
func TestEngineSeesRebuildAndRefresh(t *testing.T) {
	srv := ollamatest.New(t)
	e, cfg, docs := alphaEngine(t, srv)
	ctx := context.Background()
	res, err := e.Search(ctx, SearchRequest{Query: "widget", K: 5})
	if err != nil || paths(res.Passages) != "a.md" || res.Mode != "hybrid" {
		t.Fatalf("first search: %v %q %s", err, paths(res.Passages), res.Mode)
	}

	// A refresh in the same generation: the new file's chunk must be found
	// by both retrievers, so the vector graph caught up.
	writeDocs(t, docs, map[string]string{"b.md": "# Beta\n\nThe beta gadget hums.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	res, err = e.Search(ctx, SearchRequest{Query: "gadget hums", K: 5})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].Path != "b.md" || res.Passages[0].VectorRank == 0 {
		t.Fatalf("after refresh: %v %+v", err, res.Passages)
	}

	// A rebuild publishes a new generation and deletes the old one.
	os.Remove(filepath.Join(docs, "a.md"))
	build(t, cfg, docs, true, ollamaEmbedder(t, srv))
	res, err = e.Search(ctx, SearchRequest{Query: "widget gadget", K: 5})
	if err != nil || paths(res.Passages) != "b.md" {
		t.Fatalf("after rebuild: %v %q", err, paths(res.Passages))
	}
	info, err := e.IndexInfo(ctx, "")
	if err != nil || !info.Built || info.Chunks != 1 {
		t.Fatalf("index info after rebuild: %+v %v", info, err)
	}
}

// Two sources holding the same relative path are told apart wherever a
// passage is named (lore index ~/a/docs ~/b/docs, both with README.md).
func TestSameFileNameInTwoSourcesIsToldApart(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.Embedder = "none"
	home := t.TempDir()
	a, b := filepath.Join(home, "a", "docs"), filepath.Join(home, "b", "docs")
	writeDocs(t, a, map[string]string{"README.md": "# A\n\nThe widget spins.\n"})
	writeDocs(t, b, map[string]string{"README.md": "# B\n\nThe widget hums.\n"})
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{a, b}, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
	if err != nil || len(res.Passages) != 2 {
		t.Fatalf("%v %+v", err, res.Passages)
	}
	shown := []string{res.Passages[0].Shown(), res.Passages[1].Shown()}
	slices.Sort(shown)
	if shown[0] != "a/docs/README.md" || shown[1] != "b/docs/README.md" {
		t.Fatalf("shown as %q, want a/docs/README.md and b/docs/README.md", shown)
	}
}

// A first search that is cancelled must not leave the engine keyword-only
// for the life of the process: neither by reading the index's embedder with
// the dead context, nor by taking the cancelled embedding for an Ollama that
// is down. (The graph load itself is index.TestCancelledGraphLoadIsNotCached.)
func TestCancelledFirstSearchDoesNotStick(t *testing.T) {
	e, _, _ := alphaEngine(t, ollamatest.New(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Search(ctx, SearchRequest{Query: "widget", K: 5}); err == nil {
		t.Fatal("a cancelled search succeeded")
	}
	res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
	if err != nil || res.Mode != "hybrid" || len(res.Passages) != 1 || res.Passages[0].VectorRank != 1 {
		t.Fatalf("search after a cancelled one: %v %+v", err, res)
	}
}

// Ollama down when the engine opens, started later: the first turn gets
// passages only, found by keyword search, with notices naming the fix; once
// Ollama answers, the next turn is answered and searched by meaning again.
func TestOllamaDownThenUp(t *testing.T) {
	srv := ollamatest.New(t)
	addr := ollamatest.ClosedAddr(t)

	cfg := testConfig(t, "http://"+addr)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv)) // embedded while Ollama was up
	defer func(d time.Duration) { ollamaRetry = d }(ollamaRetry)
	ollamaRetry = 0 // try Ollama again at once, not 10 s later
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	final, notices := ask(t, e, "what does the widget do?")
	if d, ok := final.(agent.Done); !ok || d.Result.Route != agent.RouteSourcesOnly || len(d.Result.Sources) == 0 ||
		!strings.Contains(notices, "ollama serve") || !strings.Contains(notices, "lexical search only") {
		t.Fatalf("with Ollama down: %T %+v, notices %q", final, final, notices)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	hs := &http.Server{Handler: srv.Config.Handler}
	go hs.Serve(ln)
	defer hs.Close()

	final, notices = ask(t, e, "what does the widget do?")
	if d, ok := final.(agent.Done); !ok || d.Result.Route != agent.RouteDocs || d.Result.Answer == "" || strings.Contains(notices, "lexical") {
		t.Fatalf("with Ollama up: %T %+v, notices %q", final, final, notices)
	}
	if res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5}); err != nil || res.Mode != "hybrid" {
		t.Fatalf("search with Ollama up: %v %s", err, res.Mode)
	}
}

// Each rebuild in another terminal replaces the generation the engine has
// open; the old one is closed once no search uses it (a chat open all day
// must not keep every old index open).
func TestOldGenerationsAreClosed(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("needs /proc")
		}
		return len(entries)
	}
	cfg := testConfig(t, "http://127.0.0.1:1")
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, nil)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	search := func() {
		if res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5}); err != nil || len(res.Passages) != 1 {
			t.Fatalf("search: %v %+v", err, res)
		}
	}
	search()
	build(t, cfg, docs, true, nil)
	search()
	before := fds()
	for i := 0; i < 5; i++ {
		build(t, cfg, docs, true, nil)
		search()
	}
	if after := fds(); after > before+2 {
		t.Fatalf("open files grew from %d to %d over 5 rebuilds: old generations stay open", before, after)
	}
}

func ask(t *testing.T, e *Engine, q string) (agent.Event, string) {
	t.Helper()
	_, events, err := e.Ask(context.Background(), AskRequest{Turn: agent.Turn{Question: q}})
	if err != nil {
		t.Fatal(err)
	}
	var final agent.Event
	var notices []string
	for ev := range events {
		switch ev := ev.(type) {
		case agent.Notice:
			notices = append(notices, ev.Text)
		case agent.Done, agent.Failed, agent.Cancelled:
			final = ev
		}
	}
	return final, strings.Join(notices, "\n")
}

// A saved turn records the index it was asked on: the chat lists a
// session under it and goes back to it on resume.
func TestSavedTurnRecordsItsIndex(t *testing.T) {
	e, cfg, _ := alphaEngine(t, ollamatest.New(t))
	if ev, notes := ask(t, e, "what does the alpha widget do?"); ev == nil || notes != "" {
		t.Fatalf("%T %s", ev, notes)
	}
	list, err := e.ListSessions(context.Background())
	if err != nil || len(list) != 1 || list[0].Index != cfg.Index {
		t.Fatalf("%v %+v, want one session of index %q", err, list, cfg.Index)
	}
}

// sessions.db deleted under an open chat: the next turn says so, is saved
// in a new file that later runs can read, and the chat's follow-up goes on
// in the same session (without the history that went with the old file).
func TestSessionsFileRemovedUnderAChat(t *testing.T) {
	e, cfg, _ := alphaEngine(t, ollamatest.New(t))
	ctx := context.Background()
	id, events, err := e.Ask(ctx, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}})
	if err != nil {
		t.Fatal(err)
	}
	for range events {
	}
	files, _ := filepath.Glob(filepath.Join(cfg.DataDir, "sessions.db*"))
	for _, f := range files {
		os.Remove(f)
	}
	_, events, err = e.Ask(ctx, AskRequest{SessionID: id, Turn: agent.Turn{Question: "and does it hum?"}})
	if err != nil {
		t.Fatalf("follow-up after the file was removed: %v", err)
	}
	var notes []string
	for ev := range events {
		if n, ok := ev.(agent.Notice); ok {
			notes = append(notes, n.Text)
		}
	}
	if s := strings.Join(notes, "\n"); !strings.Contains(s, "removed or replaced while lore ran") {
		t.Errorf("no notice of the removed file: %q", notes)
	}
	st, err := session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	se, err := st.Get(ctx, id)
	if err != nil || len(se.Turns) != 1 || se.Turns[0].Question != "and does it hum?" {
		t.Fatalf("the turn after the removal is not in the new file: %v %+v", err, se)
	}
}

// Turns run concurrently on one engine (the chat's retry while a search
// runs, a server's requests) share the index and embedder safely, and each
// is saved in its own session; a follow-up loads its session's history.
func TestConcurrentTurnsAndSessions(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n", "b.md": "# Beta\n\nThe beta gadget hums.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, events, err := e.Ask(context.Background(), AskRequest{Turn: agent.Turn{Question: "widget"}})
			if err != nil {
				t.Error(err)
				return
			}
			saved := false
			for ev := range events {
				if _, ok := ev.(agent.Saved); ok {
					saved = true
				}
			}
			if !saved {
				t.Error("turn not saved")
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		se, err := e.Session(context.Background(), id)
		if err != nil || len(se.Turns) != 1 {
			t.Fatalf("session %s: %v %+v", id, err, se)
		}
	}

	_, events, err := e.Ask(context.Background(), AskRequest{SessionID: ids[0], Turn: agent.Turn{Question: "and the gadget?"}})
	if err != nil {
		t.Fatal(err)
	}
	for range events {
	}
	chats := srv.Chats()
	last := chats[len(chats)-1]
	var all []string
	for _, m := range last.Messages {
		all = append(all, m.Content)
	}
	if !strings.Contains(strings.Join(all, "\n"), "widget") {
		t.Fatalf("the follow-up was sent without its history: %q", all)
	}
	if se, _ := e.Session(context.Background(), ids[0]); len(se.Turns) != 2 {
		t.Fatalf("follow-up not saved in the same session: %+v", se)
	}
}

// An unreachable Ollama costs one connection attempt, not a round of
// retries with back-off (seconds on every search), and the user hears of
// the outage once, not from every stage and every turn (issue 11, item 7).
func TestOllamaUnreachableFailsFastAndIsToldOnce(t *testing.T) {
	srv := ollamatest.New(t)
	addr := ollamatest.ClosedAddr(t)
	cfg := testConfig(t, "http://"+addr)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))

	var dials atomic.Int32
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	open := func() *Engine {
		e, err := Open(Options{Config: cfg, Dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}

	// lore search: one attempt, keyword results, one line naming the fix.
	dials.Store(0)
	res, err := open().Search(context.Background(), SearchRequest{Query: "widget", K: 5})
	if err != nil || res.Mode != "lexical" || len(res.Passages) == 0 || !strings.Contains(res.Notice, "ollama serve") {
		t.Fatalf("search: %v %s %q", err, res.Mode, res.Notice)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("search dialed Ollama %d times, want 1", n)
	}

	// lore ask: the same outage found by the model check is not tried
	// again by the search, and is told once.
	dials.Store(0)
	e := open()
	final, notices := ask(t, e, "what does the widget do?")
	if d, ok := final.(agent.Done); !ok || d.Result.Route != agent.RouteSourcesOnly {
		t.Fatalf("ask: %T %+v", final, final)
	}
	if n := strings.Count(notices, addr); n != 1 || !strings.Contains(notices, "lexical search only") {
		t.Errorf("the outage was told %d times:\n%s", n, notices)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("ask dialed Ollama %d times, want 1", n)
	}
	// A second question in the same outage (the chat) is not told again.
	if _, notices := ask(t, e, "and the widget?"); strings.Contains(notices, addr) || strings.Contains(notices, "lexical") {
		t.Errorf("told again:\n%s", notices)
	}
}

// A damaged sessions file costs the saving, not the answer: a new question
// is answered with a notice naming the damage and the fix; a follow-up,
// which needs the history, says why it cannot.
func TestDamagedSessionsStore(t *testing.T) {
	srv := ollamatest.New(t)
	e, cfg, _ := alphaEngine(t, srv)
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "sessions.db"), []byte(strings.Repeat("not sqlite ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	final, notices := ask(t, e, "what does the widget do?")
	if d, ok := final.(agent.Done); !ok || d.Result.Answer == "" || !strings.Contains(notices, "damaged") || !strings.Contains(notices, "mv ") {
		t.Fatalf("%T %+v, notices %q", final, final, notices)
	}
	if _, _, err := e.Ask(context.Background(), AskRequest{SessionID: "abc", Turn: agent.Turn{Question: "and then?"}}); !errors.Is(err, session.ErrDamaged) {
		t.Fatalf("follow-up: %v", err)
	}
}

// In an index without vectors (--embedder none, or Ollama down) keyword
// search always has a first hit: a question that shares a word or two
// with the docs is still not in them, and routes so.
func TestKeywordOnlyIndexRefusesOffTopicQuestions(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{
		"storage.md": "# Storage\n\nPrometheus keeps samples on local disk for 15 days unless the retention time is set.\n",
		"alerts.md":  "# Alerting rules\n\nAn alerting rule fires once its expression has returned series for the whole for duration.\n",
	})
	build(t, cfg, docs, false, nil)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for q, want := range map[string]agent.Route{
		"How long does Prometheus keep samples on disk?": agent.RouteDocs,
		"When does an alerting rule fire?":               agent.RouteDocs,
		"What is the best local pizza place?":            agent.RouteNone, // "local" is in storage.md
		"Which days are the museums open?":               agent.RouteNone, // "days" is
	} {
		final, _ := ask(t, e, q)
		done, ok := final.(agent.Done)
		if !ok {
			t.Fatalf("%q: turn ended with %#v", q, final)
		}
		if done.Result.Route != want {
			t.Errorf("%q: routed %q (%s), want %q", q, done.Result.Route, done.Result.RoutedOnSignal, want)
		}
	}
}
