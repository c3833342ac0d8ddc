// Package rerank scores (query, passage) pairs with a cross-encoder. Scores
// are the model's raw logits, not probabilities: for the ms-marco models a
// logit above 0 means "more likely relevant than not", which is the scale
// of lore's web-fallback threshold (default 0.0).
package rerank

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// cleaned and tokenised once, then run in batches of at most batchSize
// pairs (one logit per passage back), best first. Pairs are sorted by
// length first, since a batch runs at the length of its longest pair;
// split lets the batches be smaller than batchSize where that pads less
// (ONNX Runtime; GoMLX pads every batch to batchSize anyway).
func score(ctx context.Context, tok *pairTokenizer, query string, passages []string, batchSize int, split bool,
	run func(q tokens, docs []tokens) ([]float32, error)) ([]Result, error) {
	q, docs, err := tok.pairs(query, passages)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	if batching != batchFixed {
		sort.SliceStable(order, func(i, j int) bool { return len(docs[order[i]].ids) < len(docs[order[j]].ids) })
	}
	sorted := make([]tokens, len(docs))
	lens := make([]int, len(docs))
	for i, o := range order {
		sorted[i], lens[i] = docs[o], len(q.ids)+len(docs[o].ids)+3
	}
	ends := fixedBatches(len(docs), batchSize)
	if split && batching == batchAdaptive {
		ends = splitBatches(lens, batchSize)
	}
	out := make([]Result, 0, len(passages))
	lo := 0
	for _, hi := range ends {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		logits, err := run(q, sorted[lo:hi])
		if err != nil {
			return nil, err
		}
		for i, l := range logits {
			out = append(out, Result{Index: order[lo+i], Score: l})
		}
		lo = hi
	}
	sortResults(out)
	return out, nil
}

// How score batches pairs; only benchmarks change it, to measure what
// sorting and splitting save (bench_test.go).
type batchMode int

const (
	batchAdaptive batchMode = iota // sorted by length, split where it pads less
	batchSorted                    // sorted by length, batches of batchSize
	batchFixed                     // input order, batches of batchSize
)

var batching = batchAdaptive

// batchCost is what one more batch costs, in token slots (pairs × padded
// length). MiniLM-L-6 ran 20 pairs of 256 tokens in batches of 5 in
// 1.00-1.22x the time of one batch; on 20 pairs of 20-320 words, 128 (half
// a pair) split them to 0.72x of one batch, 384 to 0.78x.
const batchCost = 128

// splitBatches cuts pairs of the given lengths, sorted ascending, into
// batches of at most size, choosing the cuts that run the fewest token
// slots, batchCost a batch included. It returns each batch's end.
func splitBatches(lens []int, size int) []int {
	n := len(lens)
	cost := make([]int, n+1)
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		cost[i] = -1
		for j := max(0, i-size); j < i; j++ {
			if c := cost[j] + batchCost + (i-j)*lens[i-1]; cost[i] < 0 || c < cost[i] {
				cost[i], from[i] = c, j
			}
		}
	}
	var ends []int
	for i := n; i > 0; i = from[i] {
		ends = append(ends, i)
	}
	slices.Reverse(ends)
	return ends
}

// fixedBatches are the ends of consecutive batches of size pairs.
func fixedBatches(n, size int) []int {
	var ends []int
	for lo := 0; lo < n; lo += size {
		ends = append(ends, min(lo+size, n))
	}
	return ends
}

// sortResults orders by score, best first; ties keep input order.
func sortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Score > rs[j].Score })
}

// clean makes a text safe to tokenise and to join with the separator
// token: the tokenizer panics on invalid UTF-8 (a file in a legacy
// encoding, a cut query), and a literal "[SEP]" inside a document would
// otherwise split the pair in two.
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "[SEP]", "[ SEP ]")
}
