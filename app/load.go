package app

import (
	"context"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/admit"
)

// ErrBusy is wrapped by every refusal of admission: a shared resource (the
// reranker, query embeddings, chat generations) is at its limit and its
// queue is full. A server answers it with 429 and Retry-After; the error
// says what is busy, as in "lore is busy: 4 chat generations running and
// 16 waiting; try again shortly".
var ErrBusy = admit.ErrBusy

// The resources Load names.
const (
	ResourceRerank = "rerank"
	ResourceEmbed  = "embed"
	ResourceChat   = "chat"
)

// Load is each shared resource's use now, for gauges.
func (e *Engine) Load() map[string]admit.Stats {
	return map[string]admit.Stats{
		ResourceRerank: e.rerank.Stats(),
		ResourceEmbed:  e.embed.Stats(),
		ResourceChat:   e.chat.Stats(),
	}
}

// admittedEmbedder holds an embedding slot for each query embedding. Index
// builds embed with their own embedder: one build runs at a time, and its
// batches must not be refused half-way.
type admittedEmbedder struct {
	index.Embedder
	lim *admit.Limiter
}

func (a admittedEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	release, err := a.lim.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return a.Embedder.EmbedQuery(ctx, text)
}
