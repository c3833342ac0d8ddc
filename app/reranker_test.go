package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/testmodels"
	"github.com/lore-cli/lore/rerank"
)

// brokenReranker loads but fails on every pair, like a model whose graph
// does not match its config.
type brokenReranker struct{ calls *int }

func (brokenReranker) Backend() string { return "hugot" }
func (brokenReranker) Model() string   { return "org/broken" }
func (brokenReranker) Close() error    { return nil }
func (b brokenReranker) Rerank(context.Context, string, []string) ([]rerank.Result, error) {
	*b.calls++
	return nil, errors.New("hugot: dimension of axis #1 doesn't match")
}

// twoDocEngine is an engine over two files whose fused order is known,
// with reranking done by r.
func twoDocEngine(t *testing.T, srv *ollamatest.Server, r rerank.Reranker) *Engine {
	t.Helper()
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n", "b.md": "# Beta\n\nThe beta widget hums.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.rr = rerankSetup{r: r, candidates: 10}
	return e
}

// A reranker that fails at run time costs the ordering, not the search or
// the answer: the fused order stands, the user hears it once, and the
// broken reranker is not run again (issue 11, item 6).
func TestRerankerFailingAtRunTimeKeepsFusedOrder(t *testing.T) {
	srv := ollamatest.New(t)
	calls := 0
	e := twoDocEngine(t, srv, brokenReranker{&calls})
	// The fused order of the same index (two builds may break a tie in
	// either order: chunks are written as the workers finish).
	plain, err := Open(Options{Config: e.Config()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.rr = rerankSetup{r: rerank.None{}, candidates: 10}
	fused, err := plain.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
	if err != nil {
		t.Fatal(err)
	}

	var notices []string
	for range 2 {
		res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
		if err != nil {
			t.Fatalf("search failed with the reranker: %v", err)
		}
		if paths(res.Passages) != paths(fused.Passages) || res.Best != nil || res.Passages[0].Rerank != nil || res.Reranker != "none" {
			t.Fatalf("got %s (best %v, reranker %s), want the fused order %s unscored", paths(res.Passages), res.Best, res.Reranker, paths(fused.Passages))
		}
		notices = append(notices, e.Notices()...)
		if res.Notice != "" {
			notices = append(notices, res.Notice)
		}
	}
	final, askNotices := ask(t, e, "widget")
	if _, ok := final.(agent.Done); !ok {
		t.Fatalf("ask ended with %#v", final)
	}
	if askNotices != "" {
		notices = append(notices, askNotices)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "org/broken") || !strings.Contains(notices[0], "fused order") || !strings.Contains(notices[0], "lore models") {
		t.Fatalf("want one notice naming the model, the fused order and the fix; got %q", notices)
	}
	if calls != 1 {
		t.Fatalf("the broken reranker ran %d times, want once", calls)
	}

	// In a chat, the first turn is the one that hears it.
	calls = 0
	e = twoDocEngine(t, srv, brokenReranker{&calls})
	final, first := ask(t, e, "widget")
	_, second := ask(t, e, "widget")
	if _, ok := final.(agent.Done); !ok || !strings.Contains(first, "org/broken") || strings.Contains(second, "org/broken") {
		t.Fatalf("ask: %#v, notices %q then %q", final, first, second)
	}
}

// A configured reranker model that cannot be loaded (its folder spoiled
// after install) does not stop the engine: searches run in fused order and
// the user hears why once, with the fix.
func TestRerankerModelThatCannotLoad(t *testing.T) {
	srv := ollamatest.New(t)
	for name, spoil := range map[string]func(dir string){
		"garbage onnx":    func(dir string) { os.WriteFile(filepath.Join(dir, "model.onnx"), []byte("garbage"), 0o644) },
		"no tokenizer":    func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) },
		"not a directory": func(dir string) { os.RemoveAll(dir); os.WriteFile(dir, []byte("x"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, srv.URL)
			cfg.Reranker, cfg.RerankModel = "auto", "org/broken"
			dir := rerank.Store{Dir: cfg.ModelsDir()}.Path(cfg.RerankModel)
			writeModel(t, dir)
			spoil(dir)
			docs := t.TempDir()
			writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
			build(t, cfg, docs, false, ollamaEmbedder(t, srv))
			e, err := Open(Options{Config: cfg})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer e.Close()
			res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
			if err != nil || len(res.Passages) != 1 || res.Reranker != "none" {
				t.Fatalf("search: %v %+v", err, res)
			}
			notices := e.Notices()
			if len(notices) != 1 || !strings.Contains(notices[0], "org/broken") || !strings.Contains(notices[0], "fused order") || !strings.Contains(notices[0], "lore models") || strings.Contains(notices[0], "\n") {
				t.Fatalf("notices %q", notices)
			}
		})
	}
}

// writeModel writes the tiny generated cross-encoder into dir.
func writeModel(t *testing.T, dir string) {
	t.Helper()
	if err := testmodels.WriteCrossEncoder(dir, testmodels.Tiny, nil); err != nil {
		t.Fatal(err)
	}
}

// An int8 model with the pure-Go backend: searches run in fused order and
// the user hears, once, that it needs ONNX Runtime or the fp32 variant,
// not that it is broken (issue 13).
func TestInt8ModelOnPureGo(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	cfg.Reranker, cfg.RerankModel = "hugot", "org/int8"
	model := testmodels.Tiny
	model.Quant = testmodels.QInt8
	if err := testmodels.WriteCrossEncoder(rerank.Store{Dir: cfg.ModelsDir()}.Path(cfg.RerankModel), model, nil); err != nil {
		t.Fatal(err)
	}
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, cfg, docs, false, ollamaEmbedder(t, srv))
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer e.Close()
	res, err := e.Search(context.Background(), SearchRequest{Query: "widget", K: 5})
	if err != nil || len(res.Passages) != 1 || res.Reranker != "none" {
		t.Fatalf("search: %v %+v", err, res)
	}
	notices := e.Notices()
	if len(notices) != 1 || !strings.Contains(notices[0], "int8") || !strings.Contains(notices[0], "lore models pull org/int8 --variant fp32") ||
		strings.Contains(notices[0], "reinstall") || strings.Contains(notices[0], "\n") {
		t.Fatalf("notices %q", notices)
	}
}

func TestCheckReranker(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, "http://127.0.0.1:1")
	if h := CheckReranker(ctx, cfg); h.Backend != "none" || h.Problem != "" || h.Err != nil || h.ORTErr != nil {
		t.Errorf("reranker none: %+v", h)
	}
	cfg.Reranker = "auto"
	if h := CheckReranker(ctx, cfg); h.Backend != "none" || !h.ModelMissing || !strings.Contains(h.Problem, "no reranker model installed") || h.Err != nil {
		t.Errorf("no model: %+v", h)
	}
	// A model lore does not pick by itself (not a default name) is listed.
	writeModel(t, rerank.Store{Dir: cfg.ModelsDir()}.Path("org/mine"))
	if h := CheckReranker(ctx, cfg); !h.ModelMissing || len(h.Installed) != 1 || h.Installed[0] != "org/mine" {
		t.Errorf("a model under another name: %+v", h)
	}
	os.RemoveAll(rerank.Store{Dir: cfg.ModelsDir()}.Path("org/mine"))
	cfg.Reranker, cfg.ONNXRuntimeLib, cfg.RerankModel = "onnxruntime", filepath.Join(t.TempDir(), "libonnxruntime.so.1"), "org/tiny"
	writeModel(t, rerank.Store{Dir: cfg.ModelsDir()}.Path(cfg.RerankModel))
	if h := CheckReranker(ctx, cfg); !errors.Is(h.Err, rerank.ErrUnavailable) || !errors.Is(h.ORTErr, rerank.ErrUnavailable) || h.ORTVersion != "" {
		t.Errorf("no ONNX Runtime: %+v", h)
	}
	cfg.Reranker, cfg.ONNXRuntimeLib, cfg.RerankModel = "hugot", "", "org/broken"
	dir := rerank.Store{Dir: cfg.ModelsDir()}.Path(cfg.RerankModel)
	writeModel(t, dir)
	os.Remove(filepath.Join(dir, "tokenizer.json"))
	if h := CheckReranker(ctx, cfg); h.Backend != "none" || h.Model != "org/broken" || !errors.Is(h.ModelErr, rerank.ErrBadModel) || !strings.Contains(h.Problem, "org/broken cannot be loaded") {
		t.Errorf("broken model: %+v", h)
	}
}

// The pure-Go backend's forward pass, timed: GoMLX races internally, so
// this runs in make test's second, race-free pass.
func TestCheckRerankerForwardPass(t *testing.T) {
	if raceEnabled {
		t.Skip("GoMLX races internally; make test runs this without -race")
	}
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.Reranker, cfg.RerankModel = "hugot", "org/tiny"
	writeModel(t, rerank.Store{Dir: cfg.ModelsDir()}.Path(cfg.RerankModel))
	h := CheckReranker(context.Background(), cfg)
	if h.Backend != "hugot" || h.Model != "org/tiny" || h.Problem != "" || h.Err != nil || h.ForwardErr != nil || h.Forward <= 0 {
		t.Errorf("%+v", h)
	}
}

// The hint for a missing reranker model names one that suits the backend
// (the pure-Go one took 5.6 s a search with MiniLM-L-6), and with models
// installed under other names it says which and how to select one, not
// that none is installed.
func TestMissingModelHint(t *testing.T) {
	for _, tc := range []struct {
		name, reranker, configured string
		installed                  []string
		want                       []string
		not                        []string
	}{
		{"pure Go", "hugot", "", nil, []string{"lore models pull " + rerank.DefaultHugotModel}, []string{rerank.DefaultORTModel}},
		{"onnxruntime", "onnxruntime", "", nil, []string{"lore models pull " + rerank.DefaultORTModel}, []string{rerank.DefaultHugotModel}},
		{"others installed", "hugot", "", []string{"org/other"}, []string{"org/other", "rerank-model: org/other"}, []string{"no reranker model installed"}},
		{"configured missing, others installed", "hugot", "org/gone", []string{"org/other"}, []string{"org/gone is not installed", "rerank-model: org/other"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "http://127.0.0.1:1")
			cfg.Reranker, cfg.RerankModel = tc.reranker, tc.configured
			for _, n := range tc.installed {
				writeModel(t, rerank.Store{Dir: cfg.ModelsDir()}.Path(n))
			}
			setup, err := openReranker(cfg, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(setup.notice, w) {
					t.Errorf("notice %q lacks %q", setup.notice, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(setup.notice, n) {
					t.Errorf("notice %q says %q", setup.notice, n)
				}
			}
		})
	}
}
