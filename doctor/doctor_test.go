package doctor

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/hnsw"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/dbtest"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/rerank"
	"github.com/lore-cli/lore/websearch"
)

// fixture is a healthy setup: a config file, an index built through a
// fake Ollama (real HTTP), that Ollama with both models, a working
// reranker and a capable terminal. Each test breaks one part of it.
type fixture struct {
	t    *testing.T
	home string
	docs string
	env  map[string]string
	srv  *ollamatest.Server
	opt  Options
	down string // a closed port, once a test points Ollama at one
}

const configYAML = "chat-model: llama3.2:3b\nembed-model: nomic-embed-text\ntop-k: 6\n"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	home := t.TempDir()
	f := &fixture{t: t, home: home, docs: filepath.Join(home, "docs"), srv: ollamatest.New(t)}
	f.srv.ContextLength = map[string]int{"llama3.2:3b": 131072, "nomic-embed-text:latest": 2048}
	f.srv.Running = []string{"llama3.2:3b"}
	f.env = map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, "config"),
		"XDG_DATA_HOME":   filepath.Join(home, "data"),
		"XDG_STATE_HOME":  filepath.Join(home, "state"),
		"OLLAMA_HOST":     f.srv.URL,
		"TERM":            "xterm-256color",
		"TERM_PROGRAM":    "WezTerm",
	}
	f.writeConfig(configYAML)
	for _, d := range []string{"data/lore", "state/lore"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	f.writeDoc("guide.md", "# Guide\n\n## Install\n\nRun `make install` to put lore on your PATH.\n")
	f.writeDoc("notes/cancel.md", "# Cancel\n\nCall the cancel function when the timeout expires.\n")
	f.opt = Options{
		Reranker: func(context.Context, config.Config) app.RerankerHealth {
			return app.RerankerHealth{ORTCompiled: true, Configured: "auto", Backend: "onnxruntime", Model: "cross-encoder/ms-marco-MiniLM-L-6-v2",
				ORTLibrary: "/usr/lib/libonnxruntime.so.1", ORTVersion: "1.23.2", Forward: 12 * time.Millisecond}
		},
		Terminal: Terminal{Profile: "TrueColor", Clipboard: "xclip", Getenv: func(k string) string { return f.env[k] }},
		Ago:      func(time.Time) string { return "2 hours ago" },
		Took:     func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) },
	}
	return f
}

func (f *fixture) writeConfig(text string) {
	dir := filepath.Join(f.home, "config", "lore")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) writeDoc(name, text string) {
	p := filepath.Join(f.docs, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour) // out of the window where a build cannot trust mtimes
	os.Chtimes(p, old, old)
}

func (f *fixture) loaded() config.Loaded {
	l, _ := config.LoadDetailed("", func(k string) string { return f.env[k] }, nil)
	return l
}

// build indexes the docs with nomic-embed-text through the fake Ollama.
func (f *fixture) build() config.Config {
	f.t.Helper()
	cfg := f.loaded().Config
	u, _ := url.Parse(f.srv.URL)
	emb := ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), f.srv.URL, cfg.EmbedModel)
	_, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{f.docs}, Embedder: emb,
		EmbedBatchSize: 8, Chunk: ingest.ChunkOptions{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap}, MaxFileSize: cfg.MaxFileSize})
	if err != nil {
		f.t.Fatal(err)
	}
	return cfg
}

// genFile is a file of the index's current generation.
func (f *fixture) genFile(name string) string {
	dir := f.loaded().Config.IndexDir()
	return filepath.Join(dir, local.CurrentGeneration(dir), name)
}

func (f *fixture) run() Report {
	f.t.Helper()
	opt := f.opt
	opt.Loaded = f.loaded()
	return Run(context.Background(), opt)
}

// text renders r as lore doctor prints it to a pipe, with the temporary
// folder and the fake server's port made fixed.
func (f *fixture) text(r Report) string {
	f.t.Helper()
	// Before rendering, so that lines wrap where they will in the golden file.
	r.Checks = slices.Clone(r.Checks)
	for i, c := range r.Checks {
		r.Checks[i].Detail, r.Checks[i].Fix = f.normalize(c.Detail), f.normalize(c.Fix)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, 100, Plain()); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

var sqliteNumbers = regexp.MustCompile(`(?i)(tree|page|cell|row) \d+`)

func (f *fixture) normalize(s string) string {
	s = strings.ReplaceAll(s, f.home, "/home/user")
	s = strings.ReplaceAll(s, strings.TrimPrefix(f.srv.URL, "http://"), "127.0.0.1:11434")
	if f.down != "" {
		s = strings.ReplaceAll(s, f.down, "127.0.0.1:1")
	}
	s = regexp.MustCompile(`/g\d+`).ReplaceAllString(s, "/g1")
	return sqliteNumbers.ReplaceAllString(s, "$1 N")
}

// line finds the check named name in section.
func line(r Report, section, name string) Check {
	for _, c := range r.Checks {
		if c.Section == section && c.Name == name {
			return c
		}
	}
	return Check{Status: -1}
}

// want asserts a check's status and that its fix names what to do.
func want(t *testing.T, r Report, section, name string, status Status, fix string) {
	t.Helper()
	c := line(r, section, name)
	if c.Status != status || !strings.Contains(c.Fix, fix) {
		t.Errorf("%s/%s: %s %q → %q, want %s with a fix naming %q", section, name, c.Status, c.Detail, c.Fix, status, fix)
	}
}

func TestGoldenAllGood(t *testing.T) {
	f := newFixture(t)
	f.build()
	r := f.run()
	if !r.OK() {
		t.Errorf("a healthy setup fails:\n%s", f.text(r))
	}
	for _, c := range r.Checks {
		if c.Status == Fail || c.Status == Warn {
			t.Errorf("%s/%s: %s %s", c.Section, c.Name, c.Status, c.Detail)
		}
	}
	if s := f.text(r); !strings.Contains(s, "1 key from file") && !strings.Contains(s, "3 keys from file") {
		t.Errorf("no provenance:\n%s", s)
	}
	golden.RequireEqual(t, f.text(r))
}

// Each case breaks one part of a healthy setup: lore doctor must find it,
// fail for it (or warn, for what lore works around) and say the fix.
func TestGoldenBroken(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(f *fixture)
		check  func(t *testing.T, r Report)
	}{
		{"config_invalid", func(f *fixture) {
			f.build()
			f.writeConfig("chat-model: llama3.2:3b\n  top-k: [6\n")
		}, func(t *testing.T, r Report) {
			want(t, r, "config", "config file", Fail, "fix the line")
			// The other checks went on, with the defaults.
			want(t, r, "ollama", "chat model", OK, "")
		}},
		{"folder_not_writable", func(f *fixture) {
			f.build()
			// A file where the state folder should be: root ignores
			// permissions, so this is how a test run as root sees it.
			os.RemoveAll(filepath.Join(f.home, "state", "lore"))
			os.WriteFile(filepath.Join(f.home, "state", "lore"), []byte("x"), 0o644)
		}, func(t *testing.T, r Report) {
			want(t, r, "folders", "state", Fail, "move the file away")
		}},
		{"index_missing", func(f *fixture) {}, func(t *testing.T, r Report) {
			want(t, r, "index", "index", Fail, "lore index PATH")
			// Without an index, the embed model is the one a build would use.
			want(t, r, "ollama", "embed model", OK, "")
		}},
		{"index_corrupt", func(f *fixture) {
			f.build()
			db := f.genFile("index.db")
			dbtest.SmashPages(t, db, dbtest.TablePages(t, db, "lex_postings"))
		}, func(t *testing.T, r Report) {
			c := line(r, "index", "quick_check")
			if c.Status != Fail || !strings.Contains(c.Fix, "lore index --rebuild") {
				c = line(r, "index", "index")
				if c.Status != Fail || !strings.Contains(c.Fix, "lore index --rebuild") {
					t.Errorf("damage not found: %+v", r.Checks)
				}
			}
		}},
		{"graph_damaged", func(f *fixture) {
			f.build()
			p := f.genFile("graph.hnsw")
			b, _ := os.ReadFile(p)
			b[len(b)-2] ^= 0x40 // the last vector: only a full check sees it
			os.WriteFile(p, b, 0o644)
		}, func(t *testing.T, r Report) {
			want(t, r, "index", "graph", Fail, "lore index")
		}},
		{"graph_sparse", func(f *fixture) {
			// A graph file an earlier lore saved after deleting most files:
			// 90 of its 100 nodes deleted, their vectors gone from index.db.
			for i := range 100 {
				f.writeDoc(fmt.Sprintf("many/n%03d.md", i), fmt.Sprintf("# Note %d\n\nword%d\n", i, i))
			}
			f.build()
			sparsen(t, f.genFile("graph.hnsw"), f.genFile("index.db"), 90)
		}, func(t *testing.T, r Report) {
			want(t, r, "index", "graph", Fail, "lore index")
			if c := line(r, "index", "graph"); !strings.Contains(c.Detail, "deleted nodes") || !strings.Contains(c.Detail, "`lore index` saves it compacted") {
				t.Errorf("graph check: %q", c.Detail)
			}
		}},
		{"files_changed", func(f *fixture) {
			f.build()
			f.writeDoc("guide.md", "# Guide\n\n## Install\n\nRun `make install`, then `lore index ~/notes`.\n")
			f.writeDoc("new.md", "# New\n\nWritten after the index.\n")
			os.Remove(filepath.Join(f.docs, "notes", "cancel.md"))
		}, func(t *testing.T, r Report) {
			want(t, r, "index", "files", Warn, "lore index")
			if !r.OK() {
				t.Error("changed files are a warning, not a failure")
			}
		}},
		{"ollama_down", func(f *fixture) {
			f.build()
			f.down = ollamatest.ClosedAddr(t)
			f.env["OLLAMA_HOST"] = "http://" + f.down
		}, func(t *testing.T, r Report) {
			want(t, r, "ollama", "server", Fail, "ollama serve")
			want(t, r, "ollama", "chat model", Skip, "")
		}},
		{"chat_model_missing", func(f *fixture) {
			f.build()
			f.writeConfig("chat-model: qwen2.5:7b\nembed-model: nomic-embed-text\ntop-k: 6\n")
		}, func(t *testing.T, r Report) {
			want(t, r, "ollama", "chat model", Fail, "ollama pull qwen2.5:7b")
		}},
		{"embed_model_missing", func(f *fixture) {
			f.build()
			delete(f.srv.Models, "nomic-embed-text:latest")
		}, func(t *testing.T, r Report) {
			want(t, r, "ollama", "embed model", Fail, "ollama pull nomic-embed-text")
		}},
		{"reranker_model_missing", func(f *fixture) {
			f.build()
			f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
				return app.RerankerHealth{ORTCompiled: true, Configured: "auto", Backend: "none", ModelMissing: true, ORTLibrary: "/usr/lib/libonnxruntime.so.1", ORTVersion: "1.23.2"}
			}
		}, func(t *testing.T, r Report) {
			want(t, r, "reranker", "model", Warn, "lore models pull")
		}},
		{"reranker_model_broken", func(f *fixture) {
			f.build()
			f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
				return app.RerankerHealth{ORTCompiled: true, Configured: "auto", Backend: "none", Model: "org/broken", ORTLibrary: "/usr/lib/libonnxruntime.so.1", ORTVersion: "1.23.2",
					ModelErr: fmt.Errorf("%w: /data/models/org/broken/tokenizer.json is missing", rerank.ErrBadModel)}
			}
		}, func(t *testing.T, r Report) {
			want(t, r, "reranker", "model", Fail, "lore models rm org/broken")
		}},
		{"reranker_forward_fails", func(f *fixture) {
			f.build()
			f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
				return app.RerankerHealth{ORTCompiled: true, Configured: "hugot", Backend: "hugot", Model: "org/odd",
					ForwardErr: errors.New("hugot: dimension of axis #1 doesn't match")}
			}
		}, func(t *testing.T, r Report) {
			want(t, r, "reranker", "forward pass", Fail, "lore models import")
		}},
		{"ort_library_missing", func(f *fixture) {
			f.build()
			f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
				missing := fmt.Errorf("%w: onnxruntime-lib /opt/ort/libonnxruntime.so.1: no such file or directory", rerank.ErrUnavailable)
				return app.RerankerHealth{ORTCompiled: true, Configured: "onnxruntime", Backend: "none", ORTErr: missing, Err: missing}
			}
			f.writeConfig(configYAML + "reranker: onnxruntime\nonnxruntime-lib: /opt/ort/libonnxruntime.so.1\n")
		}, func(t *testing.T, r Report) {
			want(t, r, "reranker", "onnxruntime", Fail, "onnxruntime-lib")
			want(t, r, "reranker", "backend", Fail, "ONNX Runtime")
		}},
		{"online_without_key", func(f *fixture) {
			f.build()
			f.env["LORE_MODE"] = "online"
		}, func(t *testing.T, r Report) {
			want(t, r, "online", "provider", Fail, "TAVILY_API_KEY")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.break_(f)
			r := f.run()
			tc.check(t, r)
			fails, _ := r.Counts()
			if tc.name != "files_changed" && tc.name != "reranker_model_missing" && (fails == 0 || r.OK()) {
				t.Errorf("nothing failed:\n%s", f.text(r))
			}
			golden.RequireEqual(t, f.text(r))
		})
	}
}

// sparsen deletes n nodes of the graph file at graphPath and their
// vectors in the index.db at dbPath, as a refresh by a lore that did not
// compact its graph left them.
func sparsen(t *testing.T, graphPath, dbPath string, n int) {
	t.Helper()
	g, meta, err := hnsw.Open(graphPath)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := g.Keys()
	slices.Sort(keys)
	for _, k := range keys[:n] {
		g.Delete(k)
		if _, err := db.Exec(`DELETE FROM vectors WHERE id = ?`, k); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := g.WriteTo(&b, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(graphPath, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A graph file that live sync left behind by a few vectors, on purpose,
// is fine: doctor says so rather than fail it.
func TestGraphBehindByLiveSync(t *testing.T) {
	f := newFixture(t)
	cfg := f.build()
	f.writeDoc("new.md", "# New\n\nWritten after the index, saved by a watcher.\n")
	u, _ := url.Parse(f.srv.URL)
	emb := ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), f.srv.URL, cfg.EmbedModel)
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Only: []string{filepath.Join(f.docs, "new.md")}, Embedder: emb,
		EmbedBatchSize: 8, Chunk: ingest.ChunkOptions{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap}, MaxFileSize: cfg.MaxFileSize}); err != nil {
		t.Fatal(err)
	}
	r := f.run()
	if c := line(r, "index", "graph"); c.Status != OK || !strings.Contains(c.Detail, "1 vector behind") {
		t.Errorf("graph check of a file one batch behind: %s %q %q", c.Status, c.Detail, c.Fix)
	}
}

func TestGoldenJSON(t *testing.T) {
	f := newFixture(t)
	f.build()
	f.env["LORE_CHAT_MODEL"] = "llama3.2:3b"
	f.opt.Online = true
	f.opt.Web = func(config.Config) (websearch.Searcher, error) { return fakeWeb{n: 3}, nil }
	f.env["TAVILY_API_KEY"] = "tvly-not-a-real-key"
	var b bytes.Buffer
	r := f.run()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var out struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Section, Name, Status string
		} `json:"checks"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || !out.OK || len(out.Checks) != len(r.Checks) || out.Checks[0].Status != "ok" {
		t.Fatalf("JSON %v: %s", err, b.String())
	}
	golden.RequireEqual(t, f.normalize(b.String()))
}

type fakeWeb struct {
	n   int
	err error
}

func (fakeWeb) Name() string { return "tavily" }
func (w fakeWeb) Search(context.Context, string) ([]websearch.Result, error) {
	return make([]websearch.Result, w.n), w.err
}

// A key is said to be set, never shown: not in the text, not in the JSON,
// not in the settings table, wherever it was set and whatever failed.
func TestSecretNeverShown(t *testing.T) {
	const secret = "tvly-SECRET-0123456789"
	f := newFixture(t)
	f.writeConfig(configYAML + "tavily-api-key: " + secret + "\nmode: online\n")
	f.env["OLLAMA_HOST"] = "http://lore:0123456789@" + ollamatest.ClosedAddr(t) // a password in the URL is a secret too
	f.opt.Online = true
	f.opt.Web = func(config.Config) (websearch.Searcher, error) {
		return fakeWeb{err: fmt.Errorf("%w: tavily answered 401: Unauthorized", websearch.ErrAuth)}, nil
	}
	r := f.run()
	var text, js bytes.Buffer
	r.WriteText(&text, 80, Plain())
	r.WriteOrigins(&text)
	r.WriteJSON(&js)
	for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
		if strings.Contains(out, secret) || strings.Contains(out, "0123456789") {
			t.Errorf("the key is in the %s output:\n%s", name, out)
		}
	}
	if !strings.Contains(text.String(), "API key set (from file)") || !strings.Contains(js.String(), `"value": "set"`) {
		t.Errorf("not said to be set:\n%s\n%s", text.String(), js.String())
	}
	want(t, r, "online", "test query", Fail, "key")
}

// Without --online, no web client is built: no connection but Ollama's.
func TestOfflineMakesNoWebQuery(t *testing.T) {
	f := newFixture(t)
	f.env["TAVILY_API_KEY"] = "tvly-x"
	f.opt.Web = func(config.Config) (websearch.Searcher, error) {
		t.Error("web client built without --online")
		return fakeWeb{}, nil
	}
	r := f.run()
	if c := line(r, "online", "test query"); c.Status != Skip || !strings.Contains(c.Detail, "--online") {
		t.Errorf("test query: %+v", c)
	}
}

// A host that accepts the connection and never answers costs the timeout,
// and is a failure that says so.
func TestOllamaThatNeverAnswers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	f := newFixture(t)
	f.env["OLLAMA_HOST"] = "http://" + l.Addr().String()
	f.opt.Timeout = 50 * time.Millisecond
	r := f.run()
	c := line(r, "ollama", "server")
	if c.Status != Fail || !strings.Contains(c.Detail, "did not answer") {
		t.Errorf("server: %+v", c)
	}
}

// Sections come out in their fixed order whatever order they finish in.
func TestSectionOrder(t *testing.T) {
	f := newFixture(t)
	r := f.run()
	var got []string
	for _, c := range r.Checks {
		if len(got) == 0 || got[len(got)-1] != c.Section {
			got = append(got, c.Section)
		}
	}
	// The local store has no servers: no cluster section.
	want := slices.DeleteFunc(slices.Clone(sections), func(s string) bool { return s == SectionCluster })
	if !slices.Equal(got, want) {
		t.Errorf("sections %v, want %v", got, want)
	}
}

// Not writable, as a user other than root sees it.
func TestFolderNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := filepath.Join(t.TempDir(), "data")
	os.Mkdir(dir, 0o500)
	defer os.Chmod(dir, 0o755)
	if c := checkFolder("data", dir, Fail, "x"); c.Status != Fail || !strings.Contains(c.Fix, "chmod") {
		t.Errorf("%+v", c)
	}
	if c := checkFolder("data", filepath.Join(dir, "lore"), Fail, "x"); c.Status != Fail || !strings.Contains(c.Detail, "cannot be created") {
		t.Errorf("%+v", c)
	}
}

// A build without cgo cannot load ONNX Runtime: under auto that is a
// choice, not a problem; asked for by name, it is one to fix.
func TestPureGoBuild(t *testing.T) {
	f := newFixture(t)
	noCgo := fmt.Errorf("%w: lore was built without cgo; rebuild with CGO_ENABLED=1 for ONNX Runtime", rerank.ErrUnavailable)
	for setting, status := range map[string]Status{"auto": Skip, "onnxruntime": Fail} {
		f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
			h := app.RerankerHealth{Configured: setting, Backend: "hugot", Model: "org/tiny", ORTErr: noCgo}
			if setting == "onnxruntime" {
				h.Backend, h.Model, h.Err = "none", "", noCgo
			}
			return h
		}
		r := f.run()
		if c := line(r, "reranker", "onnxruntime"); c.Status != status || !strings.Contains(c.Detail, "without cgo") {
			t.Errorf("%s: %+v", setting, c)
		}
	}
}

// Something that is not Ollama at the Ollama host (a proxy, another web
// server) is named as such, not as Ollama being down.
func TestNotOllamaAtTheHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html><body>404 Not Found</body></html>"))
	}))
	defer other.Close()
	f := newFixture(t)
	f.env["OLLAMA_HOST"] = other.URL
	want(t, f.run(), "ollama", "server", Fail, "point ollama-host")
}

// On a terminal each wrapped line is styled on its own (no padding to the
// widest line) and the words are those of the plain report.
func TestColouredMatchesPlain(t *testing.T) {
	f := newFixture(t)
	f.env["OLLAMA_HOST"] = "http://" + ollamatest.ClosedAddr(t)
	r := f.run()
	var plain, coloured bytes.Buffer
	r.WriteText(&plain, 60, Plain())
	r.WriteText(&coloured, 60, Coloured())
	if !strings.Contains(coloured.String(), "\x1b[") || ansi.Strip(coloured.String()) != plain.String() {
		t.Errorf("coloured output differs from the plain one:\n%s\n%s", ansi.Strip(coloured.String()), plain.String())
	}
}

// A model installed under a name lore does not pick by itself: the
// warning names it and says how to use it.
func TestRerankerModelUnderAnotherName(t *testing.T) {
	f := newFixture(t)
	f.opt.Reranker = func(context.Context, config.Config) app.RerankerHealth {
		return app.RerankerHealth{ORTCompiled: true, Configured: "auto", Backend: "none", ModelMissing: true, Installed: []string{"org/mine"},
			ORTLibrary: "/usr/lib/libonnxruntime.so.1", ORTVersion: "1.23.2"}
	}
	want(t, f.run(), "reranker", "model", Warn, "rerank-model: org/mine")
}

// On a narrow terminal each detail goes under its name, nothing runs past
// the width, and no word of the wide report is lost.
func TestNarrowTerminal(t *testing.T) {
	f := newFixture(t)
	f.env["OLLAMA_HOST"] = "http://" + ollamatest.ClosedAddr(t)
	r := f.run()
	var narrow, wide bytes.Buffer
	r.WriteText(&narrow, 40, Plain())
	r.WriteText(&wide, 200, Plain())
	for _, line := range strings.Split(narrow.String(), "\n") {
		if n := ansi.StringWidth(line); n > 40 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	if !strings.Contains(narrow.String(), "  ✗ server\n    not reachable at") {
		t.Errorf("the detail is not under the name:\n%s", narrow.String())
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if squeeze(narrow.String()) != squeeze(wide.String()) {
		t.Errorf("narrow and wide reports say different things:\n%s\n%s", narrow.String(), wide.String())
	}
}

// A password in a host or URL setting is hidden however it is written:
// with or without a scheme, in a value lore refuses, or in searxng-url.
func TestPasswordsInURLsNeverShown(t *testing.T) {
	const pw = "pw0123456789"
	addr := ollamatest.ClosedAddr(t)
	for name, env := range map[string]map[string]string{
		"host with a scheme":    {"OLLAMA_HOST": "http://lore:" + pw + "@" + addr},
		"host without a scheme": {"OLLAMA_HOST": "lore:" + pw + "@" + addr},
		"host lore refuses":     {"OLLAMA_HOST": "http://lore:" + pw + "@example.org:"},
		"searxng":               {"LORE_WEB_PROVIDER": "searxng", "LORE_SEARXNG_URL": "https://lore:" + pw + "@searx.example.org"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			maps.Copy(f.env, env)
			r := f.run()
			var out bytes.Buffer
			r.WriteText(&out, 80, Plain())
			r.WriteOrigins(&out)
			r.WriteJSON(&out)
			if strings.Contains(out.String(), pw) {
				t.Errorf("the password is shown:\n%s", out.String())
			}
		})
	}
}
