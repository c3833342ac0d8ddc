// Package rerank scores (query, passage) pairs with a cross-encoder. Scores
// are the model's raw logits, not probabilities: for the ms-marco models a
// logit above 0 means "more likely relevant than not", which is the scale
// of lore's web-fallback threshold (default 0.0).
package rerank

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Result is one passage's score. Index is its position in the input.
type Result struct {
	Index int
	Score float32
}

// Reranker scores passages for a query and returns them best first.
type Reranker interface {
	// Backend is "onnxruntime", "hugot" or "none".
	Backend() string
	// Model names the model, empty for none.
	Model() string
	Rerank(ctx context.Context, query string, passages []string) ([]Result, error)
	Close() error
}

// Options choose and tune a reranker.
type Options struct {
	// Backend is auto, hugot, onnxruntime or none. auto prefers ONNX
	// Runtime when its library loads and falls back to hugot.
	Backend string
	// ModelDir is the model directory (one *.onnx, tokenizer.json,
	// special_tokens_map.json, config.json).
	ModelDir string
	// ModelName is shown to users; it defaults to the directory name.
	ModelName string
	// ORTLibrary is the path of libonnxruntime.so; empty searches the
	// standard places.
	ORTLibrary string
	// BatchSize is how many pairs go through the model at once.
	BatchSize int
	// MaxTokens caps query + passage + special tokens; passages are cut.
	MaxTokens int
	// Threads bounds ONNX Runtime's intra-op threads (0: its default).
	Threads int
}

// ErrUnavailable means the chosen backend cannot run here (no library,
// built without cgo); auto moves on to the next one.
var ErrUnavailable = errors.New("reranker backend unavailable")

// New opens the reranker opt asks for.
func New(opt Options) (Reranker, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 8
	}
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = 512
	}
	if opt.ModelName == "" {
		opt.ModelName = opt.ModelDir
	}
	switch opt.Backend {
	case "none":
		return None{}, nil
	case "hugot":
		return newHugot(opt)
	case "onnxruntime":
		return newORT(opt)
	case "auto", "":
		r, err := newORT(opt)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ErrUnavailable) {
			return nil, err
		}
		return newHugot(opt)
	}
	return nil, fmt.Errorf("reranker %q is not one of auto, hugot, onnxruntime, none", opt.Backend)
}

// None keeps the fused order and gives no scores.
type None struct{}

func (None) Backend() string { return "none" }
func (None) Model() string   { return "" }
func (None) Close() error    { return nil }

// Rerank returns the passages in their input order, each scored 0.
func (None) Rerank(_ context.Context, _ string, passages []string) ([]Result, error) {
	out := make([]Result, len(passages))
	for i := range out {
		out[i] = Result{Index: i}
	}
	return out, nil
}

// score is the part of Rerank the backends share: query and passages
// cleaned and tokenised once, then run on batches of at most batchSize
// pairs (one logit per passage back), best first.
func score(ctx context.Context, tok *pairTokenizer, query string, passages []string, batchSize int,
	run func(q tokens, docs []tokens) ([]float32, error)) ([]Result, error) {
	q, docs, err := tok.pairs(query, passages)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(passages))
	err = batches(ctx, len(docs), batchSize, func(lo, hi int) error {
		logits, err := run(q, docs[lo:hi])
		if err != nil {
			return err
		}
		for i, l := range logits {
			out = append(out, Result{Index: lo + i, Score: l})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortResults(out)
	return out, nil
}

// sortResults orders by score, best first; ties keep input order.
func sortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Score > rs[j].Score })
}

// batches calls fn on consecutive slices of at most size pairs, and stops
// at the first error or when ctx is done.
func batches(ctx context.Context, n, size int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(lo, min(lo+size, n)); err != nil {
			return err
		}
	}
	return nil
}

// clean makes a text safe to tokenise and to join with the separator
// token: the tokenizer panics on invalid UTF-8 (a file in a legacy
// encoding, a cut query), and a literal "[SEP]" inside a document would
// otherwise split the pair in two.
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "[SEP]", "[ SEP ]")
}
