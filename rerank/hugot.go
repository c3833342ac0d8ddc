package rerank

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"
)

// hugotReranker runs the model on hugot's pure-Go backend (GoMLX). It
// uses the cross-encoder pipeline's own tokenisation and forward pass but
// not its post-processing, which applies a sigmoid: lore reports logits.
type hugotReranker struct {
	mu      sync.Mutex // a pipeline is not safe for concurrent use
	session *hugot.Session
	pipe    *pipelines.CrossEncoderPipeline
	tok     *pairTokenizer
	opt     Options
}

func newHugot(opt Options) (Reranker, error) {
	info, tok, err := openModel(opt)
	if err != nil {
		return nil, err
	}
	if err := pureGoCheck(opt.ModelName, filepath.Join(opt.ModelDir, info.ONNX)); err != nil {
		return nil, err
	}
	// GoMLX compiles the graph once per input shape. Buckets bound the
	// number of shapes: batches pad to the batch size, sequences to the
	// next bucket.
	var seqBuckets []int
	for b := 32; b < tok.maxTokens; b *= 2 {
		seqBuckets = append(seqBuckets, b)
	}
	seqBuckets = append(seqBuckets, tok.maxTokens)
	session, err := hugot.NewGoSession(options.WithGoMLXBatchBuckets([]int{opt.BatchSize}), options.WithGoMLXSequenceBuckets(seqBuckets))
	if err != nil {
		return nil, fmt.Errorf("start hugot: %w", err)
	}
	pipe, err := hugot.NewPipeline(session, hugot.CrossEncoderConfig{
		ModelPath:    opt.ModelDir,
		Name:         "lore-rerank",
		OnnxFilename: info.ONNX,
		Options:      []hugot.CrossEncoderOption{pipelines.WithBatchSize(opt.BatchSize), pipelines.WithSortResults(false)},
	})
	if err != nil {
		session.Destroy()
		return nil, fmt.Errorf("load %s with hugot: %w", opt.ModelDir, err)
	}
	return &hugotReranker{session: session, pipe: pipe, tok: tok, opt: opt}, nil
}

func (h *hugotReranker) Backend() string { return "hugot" }
func (h *hugotReranker) Model() string   { return h.opt.ModelName }

func (h *hugotReranker) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session.Destroy()
}

func (h *hugotReranker) Rerank(ctx context.Context, query string, passages []string) ([]Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return score(ctx, h.tok, query, passages, h.opt.BatchSize, false, h.forward)
}

// forward scores one batch: one logit per passage.
func (h *hugotReranker) forward(q tokens, docs []tokens) ([]float32, error) {
	inputs := make([]string, len(docs))
	for i, d := range docs {
		inputs[i] = q.text + "[SEP]" + d.text // the pipeline's own pair format for BERT models
	}
	batch := backends.NewBatch(len(inputs))
	defer batch.Destroy()
	if err := h.pipe.Preprocess(batch, inputs); err != nil {
		return nil, fmt.Errorf("hugot: %w", err)
	}
	if err := h.pipe.Forward(batch); err != nil {
		return nil, fmt.Errorf("hugot: %w", err)
	}
	logits, ok := batch.OutputValues[0].([][]float32)
	if !ok || len(logits) < len(inputs) {
		return nil, fmt.Errorf("hugot: unexpected output %T", batch.OutputValues[0])
	}
	out := make([]float32, len(inputs))
	for i := range out {
		out[i] = logits[i][0]
	}
	return out, nil
}
