// Package wordvec is an embedder for tests and benchmarks that need
// vectors with meaning but cannot download a model: each text becomes the
// feature-hashed bag of its stemmed words (log term frequency, signed
// buckets, unit length). Texts that share words are near each other, as
// with a real model's vectors, though it knows no synonyms. It makes the
// vector stage of a store measurable offline, on the same vectors for
// every store.
package wordvec

import (
	"context"
	"hash/fnv"
	"math"

	"github.com/lore-cli/lore/index/analysis"
)

// Embedder implements index.Embedder.
type Embedder struct {
	Dim int // 256 when zero
}

func (e Embedder) dim() int {
	if e.Dim <= 0 {
		return 256
	}
	return e.Dim
}

// Model names the vectors, as an index records them.
func (e Embedder) Model() string { return "wordvec" }

func (e Embedder) Check(context.Context) (int, error) { return e.dim(), nil }

func (e Embedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return Vector(text, e.dim()), nil
}

func (e Embedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t, e.dim())
	}
	return out, nil
}

// Vector is text's unit vector in dim dimensions.
func Vector(text string, dim int) []float32 {
	tf := map[string]int{}
	analysis.Words(text, func(w string) { tf[w]++ })
	v := make([]float32, dim)
	for w, n := range tf {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dim)] += sign * float32(1+math.Log(float64(n)))
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1 // no words: a fixed direction, not NaNs
		return v
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}
