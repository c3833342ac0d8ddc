package app

import (
	"errors"
	"fmt"

	"lore/config"
	"lore/rerank"
)

// ModelHint says how to get a reranker model.
const ModelHint = "get one with `lore models pull " + rerank.DefaultORTModel + "` (online) or `lore models import DIR`"

// rerankSetup is the reranker chosen for an engine and the knobs that go
// with its backend.
type rerankSetup struct {
	r          rerank.Reranker
	candidates int
	notice     string // said once when reranking is off for want of a model
}

// Backend defaults, chosen so a turn stays usable: see BENCHMARKS.md.
var backendDefaults = map[string]struct{ candidates, maxTokens int }{
	"onnxruntime": {20, 384},
	"hugot":       {10, 256},
}

// openReranker is the one place the "auto" choice is made: auto tries ONNX
// Runtime, then the pure-Go backend; with no model installed it returns the
// no-op reranker and a notice saying how to get one.
func openReranker(cfg config.Config, disabled bool) (rerankSetup, error) {
	none := rerankSetup{r: rerank.None{}, candidates: max(cfg.RerankCandidates, 20)}
	if disabled || cfg.Reranker == "none" {
		return none, nil
	}
	store := rerank.Store{Dir: cfg.ModelsDir()}
	tries := []string{cfg.Reranker}
	if cfg.Reranker == "auto" {
		tries = []string{"onnxruntime", "hugot"}
	}
	var lastErr error
	for _, backend := range tries {
		names := []string{cfg.RerankModel}
		if cfg.RerankModel == "" {
			names = []string{rerank.DefaultORTModel, rerank.DefaultHugotModel}
			if backend == "hugot" {
				names = []string{rerank.DefaultHugotModel, rerank.DefaultORTModel}
			}
		}
		name, dir := "", ""
		for _, n := range names {
			if d, err := store.Find(n); err == nil {
				name, dir = n, d
				break
			} else if !errors.Is(err, rerank.ErrNotInstalled) {
				return none, fmt.Errorf("reranker model %s: %w", n, err)
			}
		}
		if dir == "" {
			if cfg.RerankModel != "" {
				return none, fmt.Errorf("rerank-model: %s is not installed: %s", cfg.RerankModel, ModelHint)
			}
			none.notice = "no reranker model installed, results are in fused order: " + ModelHint
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
		if err == nil {
			return rerankSetup{r: r, candidates: candidates}, nil
		}
		lastErr = err
		if !errors.Is(err, rerank.ErrUnavailable) || cfg.Reranker != "auto" {
			return none, err
		}
	}
	return none, lastErr
}
