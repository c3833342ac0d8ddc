package testmodels

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"unicode"

	"github.com/ollama/ollama/fs/ggml"
)

// GGUFConfig is the shape of a tiny llama-architecture chat model.
type GGUFConfig struct {
	Embedding, Blocks, Heads, KVHeads, FeedForward, Context int
	Seed                                                    int64
}

// TinyLlama is small enough to write in milliseconds and run on any CPU:
// embedding 64, 2 blocks, 4 heads (2 KV heads), feed-forward 128. Its context
// is 4096 tokens: its vocabulary is bytes, so a 1,500-byte chunk is about as
// many tokens, and Ollama 0.17.4 refuses (rather than truncates) embedding
// inputs longer than a small model context.
var TinyLlama = GGUFConfig{Embedding: 64, Blocks: 2, Heads: 4, KVHeads: 2, FeedForward: 128, Context: 4096, Seed: 7}

// TinyEmbed is TinyLlama from another seed: a separate model file, so
// Ollama runs it beside the chat model as it runs a real embedding model.
var TinyEmbed = GGUFConfig{Embedding: 64, Blocks: 2, Heads: 4, KVHeads: 2, FeedForward: 128, Context: 4096, Seed: 8}

// Embed768 has the 768 dimensions of embedding models such as
// nomic-embed-text, so that an index's memory is a user's. It embeds about
// 0.5 chunks/s on 2 cores: fit for query embeddings over an index built
// without it, not for building one.
var Embed768 = GGUFConfig{Embedding: 768, Blocks: 1, Heads: 12, KVHeads: 4, FeedForward: 256, Context: 4096, Seed: 9}

// tinyPieces are whole-word pieces added to the byte vocabulary so that
// replies contain words and an occasional citation marker.
var tinyPieces = []string{"▁the", "▁docs", "▁answer", "▁context", "▁cancel", "▁timeout", "▁[1]", "▁[2]", "▁lore", "▁index", "."}

// WriteGGUF writes a random-weight llama model with a SentencePiece byte
// vocabulary (<unk>, <s>, </s>, the 256 <0xNN> byte tokens, a few word
// pieces) as an F32 GGUF file, deterministically from cfg.Seed. Its output
// is gibberish; it exists to exercise a real Ollama server end to end:
// streaming, stats, errors, embeddings. The output rows of control and
// non-printable byte tokens are zero, so replies stay printable and never
// end early.
func WriteGGUF(path string, cfg GGUFConfig) error {
	var tokens []string
	var types []int32
	var scores []float32
	for _, t := range []string{"<unk>", "<s>", "</s>"} {
		tokens = append(tokens, t)
		types = append(types, map[string]int32{"<unk>": 2, "<s>": 3, "</s>": 3}[t])
		scores = append(scores, 0)
	}
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
		scores = append(scores, 0)
	}
	for i, p := range tinyPieces {
		tokens = append(tokens, p)
		types = append(types, 1)
		scores = append(scores, float32(-i))
	}
	vocab := len(tokens)
	e, ff := cfg.Embedding, cfg.FeedForward
	headDim := e / cfg.Heads
	kvDim := headDim * cfg.KVHeads

	rng := rand.New(rand.NewSource(cfg.Seed))
	var tensors []*ggml.Tensor
	add := func(name string, data []float32, shape ...uint64) {
		tensors = append(tensors, &ggml.Tensor{Name: name, Kind: 0, Shape: shape, WriterTo: f32(data)})
	}
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	add("token_embd.weight", normal(vocab*e, 0.5), uint64(e), uint64(vocab))
	add("output_norm.weight", ones(e), uint64(e))
	out := normal(vocab*e, 0.5)
	for id, tok := range tokens {
		if !printable(tok, types[id]) {
			clear(out[id*e : (id+1)*e])
		}
	}
	add("output.weight", out, uint64(e), uint64(vocab))
	std := 1 / math.Sqrt(float64(e))
	for b := range cfg.Blocks {
		p := fmt.Sprintf("blk.%d.", b)
		add(p+"attn_norm.weight", ones(e), uint64(e))
		add(p+"attn_q.weight", normal(e*e, std), uint64(e), uint64(e))
		add(p+"attn_k.weight", normal(e*kvDim, std), uint64(e), uint64(kvDim))
		add(p+"attn_v.weight", normal(e*kvDim, std), uint64(e), uint64(kvDim))
		add(p+"attn_output.weight", normal(e*e, std), uint64(e), uint64(e))
		add(p+"ffn_norm.weight", ones(e), uint64(e))
		add(p+"ffn_gate.weight", normal(e*ff, std), uint64(e), uint64(ff))
		add(p+"ffn_up.weight", normal(e*ff, std), uint64(e), uint64(ff))
		add(p+"ffn_down.weight", normal(ff*e, 1/math.Sqrt(float64(ff))), uint64(ff), uint64(e))
	}
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "lore-tiny",
		"general.file_type":                      uint32(0),
		"llama.context_length":                   uint32(cfg.Context),
		"llama.embedding_length":                 uint32(e),
		"llama.block_count":                      uint32(cfg.Blocks),
		"llama.feed_forward_length":              uint32(ff),
		"llama.attention.head_count":             uint32(cfg.Heads),
		"llama.attention.head_count_kv":          uint32(cfg.KVHeads),
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.vocab_size":                       uint32(vocab),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ggml.WriteGGUF(f, kv, tensors); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// printable says whether a token may be generated: normal pieces and the
// bytes of printable ASCII.
func printable(tok string, typ int32) bool {
	switch typ {
	case 1:
		return true
	case 6:
		var b int
		fmt.Sscanf(tok, "<0x%02X>", &b)
		return b < 128 && (unicode.IsPrint(rune(b)) || b == ' ')
	}
	return false
}

// f32 writes float32 values little-endian.
type f32 []float32

func (d f32) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, []float32(d))
	return buf.WriteTo(w)
}
