package ollama

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ollama/ollama/api"
)

// embedAPI is the part of *api.Client the Ollama embedder uses.
type embedAPI interface {
	Heartbeat(ctx context.Context) error
	Show(ctx context.Context, req *api.ShowRequest) (*api.ShowResponse, error)
	Embed(ctx context.Context, req *api.EmbedRequest) (*api.EmbedResponse, error)
}

// Embedder embeds through Ollama's /api/embed: the index.Embedder that
// lore builds and searches with.
type Embedder struct {
	client embedAPI
	host   string
	model  string
	numCtx int // the model's context length, from Check
	docPfx string
	qryPfx string

	// QueryNumCtx, when set, is the num_ctx of query embeddings (otherwise
	// the model's context length once Check has run, else the server's
	// default; a query is short either way). lore ask
	// sets it to the chat num-ctx when one model both embeds and answers:
	// Ollama restarts a model's runner whenever num_ctx changes, which
	// would otherwise happen twice for every question.
	QueryNumCtx int
}

// Instruction prefixes some embedding models were trained with. Applying
// them matters: nomic-embed-text without them loses several points of
// retrieval quality; models not listed get none.
var embedPrefixes = map[string][2]string{
	"nomic-embed-text":        {"search_document: ", "search_query: "},
	"nomic-embed-text-v2-moe": {"search_document: ", "search_query: "},
	"mxbai-embed-large":       {"", "Represent this sentence for searching relevant passages: "},
	"snowflake-arctic-embed":  {"", "Represent this sentence for searching relevant passages: "},
	"snowflake-arctic-embed2": {"", "Represent this sentence for searching relevant passages: "},
}

// NewEmbedder returns an embedder for model on the client's server.
// host is only for messages.
func NewEmbedder(client embedAPI, host, model string) *Embedder {
	e := &Embedder{client: client, host: host, model: model}
	base := model
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	base, _, _ = strings.Cut(base, ":")
	if p, ok := embedPrefixes[base]; ok {
		e.docPfx, e.qryPfx = p[0], p[1]
	}
	return e
}

func (e *Embedder) Model() string { return e.model }

// Check asks the server whether it answers and has the model, then embeds
// one probe to learn the dimension.
func (e *Embedder) Check(ctx context.Context) (int, error) {
	numCtx, err := Check(ctx, e.client, e.host, e.model)
	if err != nil {
		if errors.Is(err, ErrModelMissing) || errors.Is(err, ErrUnreachable) {
			err = fmt.Errorf("%w; or index for keyword search only: --embedder none", err)
		}
		return 0, err
	}
	e.numCtx = numCtx
	v, err := e.embed(ctx, []string{"dimension probe"}, e.numCtx, nil)
	if err != nil {
		return 0, err
	}
	return len(v[0]), nil
}

func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = e.docPfx + t
	}
	return e.embed(ctx, in, e.numCtx, nil)
}

func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	// A server that accepts and never answers is found within seconds
	// (ReplyTimeout), not after a batch's embed-timeout: the search
	// goes on by keyword.
	if err := e.client.Heartbeat(ctx); err != nil {
		return nil, fmt.Errorf("embed with %s: %w", e.model, Explain(err, e.host, e.model))
	}
	v, err := e.embed(ctx, []string{e.qryPfx + text}, cmp.Or(e.QueryNumCtx, e.numCtx), IsUnreachable)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// embed asks the server, retrying transient failures; giveUp, when set,
// names failures not worth a retry. A query gives up at once when nothing
// answers (the search goes on by keyword, and seconds of back-off on every
// search would be the price); a build rides out a restarting server.
func (e *Embedder) embed(ctx context.Context, texts []string, numCtx int, giveUp func(error) bool) ([][]float32, error) {
	var resp *api.EmbedResponse
	truncate := true
	err := Retry(ctx, 5, func() error {
		var err error
		req := &api.EmbedRequest{Model: e.model, Input: texts, Truncate: &truncate}
		if numCtx > 0 {
			// Truncation is to num_ctx, whose server default can exceed
			// what the model was trained on; a real server then refuses
			// long chunks ("the input length exceeds the context length").
			req.Options = map[string]any{"num_ctx": numCtx}
		}
		resp, err = e.client.Embed(ctx, req)
		if err != nil && giveUp != nil && giveUp(err) {
			return Permanent(err)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", e.model, Explain(err, e.host, e.model))
	}
	// A reply lore cannot use counts as no reply: search goes on by
	// keyword, as when Ollama is down.
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %w: Ollama at %s answered %d embeddings for %d texts", e.model, ErrUnreachable, e.host, len(resp.Embeddings), len(texts))
	}
	for i, v := range resp.Embeddings {
		if len(v) > MaxEmbeddingDim {
			return nil, fmt.Errorf("embed with %s: %w: Ollama at %s answered an embedding of %d dimensions (lore takes at most %d)", e.model, ErrUnreachable, e.host, len(v), MaxEmbeddingDim)
		}
		if len(v) == 0 || len(v) != len(resp.Embeddings[0]) {
			return nil, fmt.Errorf("embed with %s: %w: Ollama at %s answered embedding %d with %d dimensions", e.model, ErrUnreachable, e.host, i, len(v))
		}
		normalize(v)
	}
	return resp.Embeddings, nil
}

// normalize scales v to unit length in place, so that a dot product is the
// cosine similarity.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// SameModel tells whether model, as an index recorded it, is this
// embedder's model: a name without a tag is its :latest to Ollama.
func (e *Embedder) SameModel(model string) bool { return FullName(model) == FullName(e.model) }
