package rerank

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// pairTokenizer encodes (query, passage) pairs the way BERT cross-encoders
// were trained: [CLS] query [SEP] passage [SEP], type ids 0 then 1. It also
// cuts passages to the token budget, in text, before either backend sees
// them, so both backends score exactly the same input.
type pairTokenizer struct {
	tk        *tokenizer.Tokenizer
	maxTokens int
}

// openModel validates opt's model folder and loads its tokenizer: the part
// of opening a model both backends share.
func openModel(opt Options) (ModelInfo, *pairTokenizer, error) {
	info, err := CheckModelDir(opt.ModelDir)
	if err != nil {
		return info, nil, err
	}
	tok, err := newPairTokenizer(opt.ModelDir, opt.MaxTokens, info.MaxPositions)
	return info, tok, err
}

func newPairTokenizer(dir string, maxTokens, maxPositions int) (*pairTokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model %s has no tokenizer.json: %w", dir, err)
	}
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	tk.WithPadding(nil)
	tk.WithTruncation(nil)
	if maxPositions > 0 && maxTokens > maxPositions {
		maxTokens = maxPositions
	}
	return &pairTokenizer{tk: tk, maxTokens: maxTokens}, nil
}

// truncate cuts the query to half the budget and the passage to what is
// left, at token boundaries, returning the shortened texts.
func (p *pairTokenizer) truncate(query, passage string) (string, string, error) {
	const specials = 3 // [CLS] [SEP] [SEP]
	q, qn, err := p.cut(query, p.maxTokens/2)
	if err != nil {
		return "", "", err
	}
	d, _, err := p.cut(passage, p.maxTokens-specials-qn)
	return q, d, err
}

// cut returns the longest prefix of s that is at most n tokens, and its
// token count.
func (p *pairTokenizer) cut(s string, n int) (string, int, error) {
	enc, err := p.tk.EncodeSingle(s, false)
	if err != nil {
		return "", 0, fmt.Errorf("tokenize: %w", err)
	}
	if len(enc.Ids) <= n {
		return s, len(enc.Ids), nil
	}
	if n <= 0 {
		return "", 0, nil
	}
	end := enc.Offsets[n-1][1]
	for end > 0 && end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:min(end, len(s))], n, nil
}

// encode tokenizes a batch of pairs, right-padded with 0 to the longest.
func (p *pairTokenizer) encode(query string, passages []string) (ids, mask, types []int64, seq int, err error) {
	encs := make([]*tokenizer.Encoding, len(passages))
	for i, d := range passages {
		if encs[i], err = p.tk.EncodePair(query, d, true); err != nil {
			return nil, nil, nil, 0, fmt.Errorf("tokenize: %w", err)
		}
		seq = max(seq, len(encs[i].Ids))
	}
	n := len(passages) * seq
	ids, mask, types = make([]int64, n), make([]int64, n), make([]int64, n)
	for i, e := range encs {
		for j := range e.Ids {
			ids[i*seq+j], mask[i*seq+j], types[i*seq+j] = int64(e.Ids[j]), int64(e.AttentionMask[j]), int64(e.TypeIds[j])
		}
	}
	return ids, mask, types, seq, nil
}
