package doctor

import (
	"context"
	"errors"
	"strings"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/rerank"
)

// checkReranker reports the backend that runs, ONNX Runtime's library and
// version when the setting tries it, the model, and one pair through it.
// A missing model is a warning (lore keeps the fused order and routes by
// retrieval agreement); one that is installed but cannot run is a failure.
func checkReranker(ctx context.Context, opt Options) []Check {
	h := opt.Reranker(ctx, opt.Loaded.Config)
	setting := h.Configured
	if setting == "none" {
		return []Check{{Name: "backend", Status: OK, Detail: "none (reranker: none): results stay in fused order; " +
			"the web fallback and \"not in the docs\" go by retrieval agreement"}}
	}
	var checks []Check
	// The backend a model would run on: the model to suggest suits it.
	idle := "hugot"
	if setting == "onnxruntime" || setting == "auto" && h.ORTErr == nil {
		idle = "onnxruntime"
	}
	hint := app.ModelHintFor(idle)
	backend := Check{Name: "backend", Status: OK, Detail: h.Backend}
	switch {
	case h.Err != nil:
		backend.Status, backend.Detail = Fail, setting+" cannot run here"
		backend.Fix = "install ONNX Runtime 1.23.x and set onnxruntime-lib, or set reranker: auto"
	case h.Backend == "hugot":
		backend.Detail = "hugot (pure Go)"
	case h.Backend == "onnxruntime":
		backend.Detail = "onnxruntime"
	case h.Backend == "none":
		// Nothing loaded: say what would run once a model is there.
		backend.Detail = "hugot (pure Go)"
		if idle == "onnxruntime" {
			backend.Detail = "onnxruntime"
		}
		backend.Detail += ", idle: no model to run"
	}
	if setting != "auto" {
		backend.Detail += " (reranker: " + setting + ")"
	}
	checks = append(checks, backend)

	if setting == "auto" || setting == "onnxruntime" {
		ort := Check{Name: "onnxruntime", Status: OK, Detail: h.ORTVersion + " from " + h.ORTLibrary}
		switch {
		case h.ORTErr != nil && !h.ORTCompiled:
			ort.Status, ort.Detail = Skip, "not in this build (built without cgo)"
			if setting == "onnxruntime" {
				ort.Status, ort.Fix = Fail, "rebuild lore with CGO_ENABLED=1, or set reranker: hugot"
			}
		case h.ORTErr != nil:
			ort.Status, ort.Detail = Fail, ortReason(h.ORTErr)
			ort.Fix = "install ONNX Runtime 1.23.x (see README) and set onnxruntime-lib, or set reranker: hugot"
			if setting == "auto" {
				// auto falls back to the pure-Go backend: slower, not broken.
				ort.Status = Warn
				ort.Fix = "for faster reranking install ONNX Runtime 1.23.x (see README) and set onnxruntime-lib"
			}
		}
		checks = append(checks, ort)
	}
	if h.Err != nil {
		return append(checks, Check{Name: "model", Status: Skip, Detail: "not checked (no backend)"})
	}

	model := Check{Name: "model", Status: OK, Detail: h.Model + ", loaded"}
	switch {
	case h.ModelMissing && h.Model != "":
		model.Status, model.Detail = Warn, h.Model+" is not installed (rerank-model): results stay in fused order"
		model.Fix = hint + ", or unset rerank-model"
	case h.ModelMissing && len(h.Installed) > 0:
		// lore picks only the default models by itself.
		model.Status = Warn
		model.Detail = "no default model installed (there is " + strings.Join(h.Installed, ", ") + "): results stay in fused order"
		model.Fix = "use it: set rerank-model: " + h.Installed[0]
	case h.ModelMissing:
		model.Status, model.Detail, model.Fix = Warn, "none installed: results stay in fused order", hint
	case errors.Is(h.ModelErr, rerank.ErrNeedsORT):
		model.Status, model.Detail = Fail, h.Model+" cannot run on the pure-Go backend"
		model.Fix = excerpt.FirstLine(h.ModelErr.Error())
	case h.ModelErr != nil:
		model.Status, model.Detail = Fail, h.Model+" cannot be loaded: "+excerpt.FirstLine(h.ModelErr.Error())
		model.Fix = app.ModelFix(h.Model)
	}
	checks = append(checks, model)
	if h.Backend == "none" {
		return checks
	}
	pass := Check{Name: "forward pass", Status: OK, Detail: "one pair in " + opt.Took(h.Forward)}
	if h.ForwardErr != nil {
		pass.Status, pass.Detail = Fail, excerpt.FirstLine(h.ForwardErr.Error())
		pass.Fix = app.ModelFix(h.Model)
	}
	return append(checks, pass)
}

// ortReason is why ONNX Runtime cannot run, without the sentinel's words.
func ortReason(err error) string {
	return strings.TrimPrefix(excerpt.FirstLine(err.Error()), "reranker backend unavailable: ")
}
