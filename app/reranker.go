package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/rerank"
)

// ModelHint says how to get a reranker model that suits the backend cfg
// reranks on: the pure-Go backend takes seconds a search with MiniLM-L-6
// (5.6 s measured for issue 23), so it is told of the small TinyBERT-L-2.
func ModelHint(cfg config.Config) string { return ModelHintFor(runBackend(cfg)) }

// ModelHintFor is ModelHint for a backend already known.
func ModelHintFor(backend string) string {
	model := rerank.DefaultORTModel
	if backend == "hugot" {
		model = rerank.DefaultHugotModel
	}
	return "get one with `lore models pull " + model + "` (online) or `lore models import DIR`"
}

// runBackend is the backend lore reranks on under cfg: auto means ONNX
// Runtime when its library loads here, else the pure-Go one.
func runBackend(cfg config.Config) string {
	if cfg.Reranker != "auto" {
		return cfg.Reranker
	}
	if rerank.ORTAvailable(cfg.ONNXRuntimeLib) == nil {
		return "onnxruntime"
	}
	return "hugot"
}

// missingModel is the notice when lore finds no model it picks by itself
// (or not the configured one): the models that are installed, and how to
// select one, or else how to get one for the backend.
func missingModel(cfg config.Config, store rerank.Store) string {
	var installed []string
	if list, err := store.List(); err == nil {
		for _, m := range list {
			installed = append(installed, m.Name)
		}
	}
	switch {
	case cfg.RerankModel != "" && len(installed) > 0:
		return fmt.Sprintf("rerank-model %s is not installed, results are in fused order: installed are %s; select one with `rerank-model: %s` in the config, or %s",
			cfg.RerankModel, strings.Join(installed, ", "), installed[0], ModelHint(cfg))
	case cfg.RerankModel != "":
		return fmt.Sprintf("rerank-model %s is not installed, results are in fused order: %s, or unset rerank-model", cfg.RerankModel, ModelHint(cfg))
	case len(installed) > 0:
		// lore picks only the default models by itself.
		return fmt.Sprintf("no default reranker model installed, results are in fused order: select one of the installed (%s) with `rerank-model: %s` in the config",
			strings.Join(installed, ", "), installed[0])
	}
	return "no reranker model installed, results are in fused order: " + ModelHint(cfg)
}

// rerankSetup is the reranker chosen for an engine and the knobs that go
// with its backend.
type rerankSetup struct {
	r          rerank.Reranker
	candidates int
	notice     string // said once when reranking is off for want of a model
	// Why there is no model to run: none installed (missing), or model
	// cannot run (broken).
	missing bool
	model   string
	broken  error
}

// Backend defaults, chosen so a turn stays usable: see BENCHMARKS.md.
var backendDefaults = map[string]struct{ candidates, maxTokens int }{
	"onnxruntime": {20, 384},
	"hugot":       {10, 256},
}

// ModelFix says what to do about an installed model that cannot run.
func ModelFix(name string) string {
	return "reinstall it with `lore models import DIR`, or remove it with `lore models rm " + name + "`"
}

// openReranker is the one place the "auto" choice is made: auto tries ONNX
// Runtime, then the pure-Go backend. Without a model that works, it returns
// the no-op reranker and a notice saying why and what to do: a reranker
// only orders results, so a missing or broken model never stops a search.
func openReranker(cfg config.Config, disabled bool) (rerankSetup, error) {
	none := rerankSetup{r: rerank.None{}, candidates: max(cfg.RerankCandidates, 20)}
	if disabled || cfg.Reranker == "none" {
		return none, nil
	}
	store := rerank.Store{Dir: cfg.ModelsDir()}
	var lastErr error
	for _, backend := range backends(cfg) {
		name, dir, err := chooseModel(store, cfg.RerankModel, backend)
		switch {
		case errors.Is(err, rerank.ErrNotInstalled):
			none.notice = missingModel(cfg, store)
			none.missing, none.model = true, cfg.RerankModel
			return none, nil
		case err != nil:
			none.notice, none.model, none.broken = unusable(name, err), name, err
			return none, nil
		}
		def := backendDefaults[backend]
		opt := rerank.Options{Backend: backend, ModelDir: dir, ModelName: name, ORTLibrary: cfg.ONNXRuntimeLib,
			BatchSize: cfg.RerankBatchSize, MaxTokens: cfg.RerankMaxTokens}
		candidates := cfg.RerankCandidates
		if candidates == 0 {
			candidates = def.candidates
		}
		if opt.MaxTokens == 0 {
			opt.MaxTokens = def.maxTokens
		}
		if opt.BatchSize == 0 {
			opt.BatchSize = candidates
		}
		r, err := rerank.New(opt)
		switch {
		case err == nil:
			return rerankSetup{r: r, candidates: candidates}, nil
		case !errors.Is(err, rerank.ErrUnavailable):
			none.notice, none.model, none.broken = unusable(name, err), name, err
			return none, nil
		case cfg.Reranker != "auto":
			return none, err // the backend asked for cannot run here: a setup to fix
		}
		lastErr = err
	}
	return none, lastErr
}

// RerankModel names the installed model lore reranks with under cfg, ""
// when it keeps the fused order: what Open would choose, without loading
// the model.
func RerankModel(cfg config.Config) string {
	if cfg.Reranker == "none" {
		return ""
	}
	name, _, _ := chooseModel(rerank.Store{Dir: cfg.ModelsDir()}, cfg.RerankModel, runBackend(cfg))
	return name
}

// backends are the backends cfg lets lore try, in order.
func backends(cfg config.Config) []string {
	if cfg.Reranker == "auto" {
		return []string{"onnxruntime", "hugot"}
	}
	return []string{cfg.Reranker}
}

// chooseModel is the installed model lore reranks with on backend: the
// configured one, else the backend's default, else the other default. A
// model that is there but broken is chosen too (and its error returned), so
// that the user hears about it; rerank.ErrNotInstalled when there is none.
func chooseModel(store rerank.Store, configured, backend string) (name, dir string, err error) {
	names := []string{configured}
	if configured == "" {
		names = []string{rerank.DefaultORTModel, rerank.DefaultHugotModel}
		if backend == "hugot" {
			names = []string{rerank.DefaultHugotModel, rerank.DefaultORTModel}
		}
	}
	for _, n := range names {
		dir, err := store.Find(n)
		if !errors.Is(err, rerank.ErrNotInstalled) {
			return n, dir, err
		}
	}
	return "", "", rerank.ErrNotInstalled
}

// unusable is the notice for an installed model that cannot be loaded.
func unusable(name string, err error) string {
	if errors.Is(err, rerank.ErrNeedsORT) {
		// An int8 or fp16 model on the pure-Go backend: not broken, and
		// the error says what to do.
		return fmt.Sprintf("reranker model %s cannot run on this backend, results are in fused order: %s", name, excerpt.FirstLine(err.Error()))
	}
	return fmt.Sprintf("reranker model %s cannot be loaded, results are in fused order: %s: %s", name, excerpt.FirstLine(err.Error()), ModelFix(name))
}

// RerankerHealth is what lore doctor shows of the reranker: which backend
// runs, with which model, and one pair through it.
type RerankerHealth struct {
	Configured string // the reranker setting: auto, onnxruntime, hugot or none
	Backend    string // the backend that runs: onnxruntime, hugot, none
	// Model is the model it runs, or the one that cannot run (ModelErr),
	// or the configured one that is not installed (ModelMissing).
	Model        string
	ModelMissing bool
	ModelErr     error
	// Installed lists the installed models by name, when none is in use:
	// one may be there under a name lore does not pick by itself.
	Installed []string
	// ORTCompiled is false in a build without cgo, which cannot load ONNX
	// Runtime. ORTLibrary and ORTVersion name the ONNX Runtime loaded;
	// ORTErr says why it cannot run here. All empty when the setting does
	// not try it.
	ORTCompiled            bool
	ORTLibrary, ORTVersion string
	ORTErr                 error
	// Problem is why reranking is off although configured (no model, a
	// broken one), with what to do, as searches say it; Err is a backend
	// asked for by name that cannot run here.
	Problem string
	Err     error
	// Forward is how long one (query, passage) pair took; ForwardErr is
	// the model failing on it.
	Forward    time.Duration
	ForwardErr error
}

// CheckReranker opens the reranker exactly as the engine does (the same
// "auto" choice, the same model) and scores one pair with it.
func CheckReranker(ctx context.Context, cfg config.Config) RerankerHealth {
	h := RerankerHealth{Configured: cfg.Reranker, Backend: "none", ORTCompiled: rerank.ORTCompiled()}
	if cfg.Reranker == "none" {
		return h
	}
	if cfg.Reranker == "auto" || cfg.Reranker == "onnxruntime" {
		h.ORTErr = rerank.ORTAvailable(cfg.ONNXRuntimeLib)
		h.ORTLibrary, h.ORTVersion = rerank.ORTLoaded()
	}
	setup, err := openReranker(cfg, false)
	if err != nil {
		h.Err = err
		return h
	}
	defer setup.r.Close()
	h.Backend, h.Model, h.Problem = setup.r.Backend(), setup.r.Model(), setup.notice
	if h.Backend == "none" {
		h.Model, h.ModelMissing, h.ModelErr = setup.model, setup.missing, setup.broken
		if list, err := (rerank.Store{Dir: cfg.ModelsDir()}).List(); err == nil {
			for _, m := range list {
				h.Installed = append(h.Installed, m.Name)
			}
		}
		return h
	}
	start := time.Now()
	res, err := setup.r.Rerank(ctx, "how do I cancel a context after a timeout?",
		[]string{"Call the cancel function to release resources when the timeout expires."})
	h.Forward = time.Since(start)
	switch {
	case err != nil:
		h.ForwardErr = err
	case len(res) != 1 || math.IsNaN(float64(res[0].Score)) || math.IsInf(float64(res[0].Score), 0):
		h.ForwardErr = fmt.Errorf("no usable score for a test pair (%v)", res)
	}
	return h
}
