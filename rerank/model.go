package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// ModelInfo is what a valid model directory holds.
type ModelInfo struct {
	Dir          string
	ONNX         string // file name of the one *.onnx
	MaxPositions int    // from config.json; 0 when not given
}

// ErrBadModel marks a model directory that is missing something.
var ErrBadModel = errors.New("invalid model directory")

// CheckModelDir validates the layout hugot expects: exactly one *.onnx,
// tokenizer.json, special_tokens_map.json with a sep_token, and a
// config.json (whose max_position_embeddings bounds truncation).
func CheckModelDir(dir string) (ModelInfo, error) {
	info := ModelInfo{Dir: dir}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return info, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	var onnx []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".onnx") {
			onnx = append(onnx, e.Name())
		}
	}
	switch len(onnx) {
	case 0:
		return info, fmt.Errorf("%w: %s has no *.onnx file", ErrBadModel, dir)
	case 1:
		info.ONNX = onnx[0]
	default:
		return info, fmt.Errorf("%w: %s has %d *.onnx files (%s); keep exactly one", ErrBadModel, dir, len(onnx), strings.Join(onnx, ", "))
	}
	var tok struct {
		Model *struct{ Type string } `json:"model"`
	}
	if err := readJSON(filepath.Join(dir, "tokenizer.json"), &tok); err != nil {
		return info, err
	}
	if tok.Model == nil {
		return info, fmt.Errorf("%w: %s/tokenizer.json has no \"model\": is it a Hugging Face tokenizers file?", ErrBadModel, dir)
	}
	var special map[string]any
	if err := readJSON(filepath.Join(dir, "special_tokens_map.json"), &special); err != nil {
		return info, err
	}
	if _, ok := special["sep_token"]; !ok {
		return info, fmt.Errorf("%w: %s/special_tokens_map.json has no sep_token", ErrBadModel, dir)
	}
	var cfg struct {
		MaxPositions int `json:"max_position_embeddings"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &cfg); err != nil {
		return info, err
	}
	info.MaxPositions = cfg.MaxPositions
	return info, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s is missing", ErrBadModel, path)
		}
		return fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s is not valid JSON: %v", ErrBadModel, path, err)
	}
	return nil
}

// modelFix is what to do about a model folder that cannot run.
const modelFix = "lore runs BERT-style cross-encoders exported to ONNX with one logit per pair (copy the folder again, or export the model anew)"

// Probe loads the model in opt.ModelDir with the backend New would pick and
// scores one (query, passage) pair as long as the model takes, so that a
// model that cannot run is refused when it is installed rather than found
// out by every search. Anything wrong with the model is an ErrBadModel.
func Probe(ctx context.Context, opt Options) error {
	if opt.Backend == "none" {
		opt.Backend = "auto"
	}
	// The longest pair the tokenizer allows: a graph with fewer positions
	// than config.json claims fails only on long passages.
	opt.BatchSize, opt.MaxTokens = 1, 512
	info, err := CheckModelDir(opt.ModelDir)
	if err != nil {
		return err
	}
	onnx := filepath.Join(opt.ModelDir, info.ONNX)
	r, err := New(opt)
	if err != nil {
		if errors.Is(err, ErrBadModel) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNeedsORT) {
			return err
		}
		return fmt.Errorf("%w: %s cannot be loaded: %v: %s", ErrBadModel, onnx, err, modelFix)
	}
	defer r.Close()
	res, err := r.Rerank(ctx, "how do I cancel a context after a timeout?",
		[]string{strings.Repeat("Call the cancel function to release resources when the timeout expires. ", 100)})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("%w: %s fails on a test pair: %v: %s", ErrBadModel, onnx, err, modelFix)
	case len(res) != 1 || math.IsNaN(float64(res[0].Score)) || math.IsInf(float64(res[0].Score), 0):
		return fmt.Errorf("%w: %s gives no usable score for a test pair (%v): %s", ErrBadModel, onnx, res, modelFix)
	}
	return nil
}
