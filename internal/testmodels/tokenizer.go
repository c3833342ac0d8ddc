package testmodels

import (
	"encoding/json"
	"strings"
)

// tinyWords is the vocabulary of the tiny tokenizer beyond single
// characters: enough that test passages tokenize into words, not letters.
const tinyWords = `the a an and or of to in on for with is are be was it this that as by at from not can
	how do does what why when where which who you your we our they use used using run runs set sets get
	go golang context cancel cancelled timeout deadline value values error errors file files path paths
	server client request response http https url host port config configuration index search query
	model models token tokens ollama lore docs document documents chunk chunks install build test tests
	linux windows mac command commands flag flags option options time timer timers lock mutex goroutine
	channel channels function functions package packages import type types struct interface method
	return returns string strings int bool read write open close rain rains weather autumn lot`

// TinyTokenizer returns a WordPiece tokenizer.json in the format of
// Hugging Face tokenizers (BERT normaliser and pre-tokenizer, [CLS] A [SEP]
// B [SEP] template), with a small vocabulary. No truncation or padding is
// configured: lore truncates itself.
func TinyTokenizer() []byte {
	vocab := map[string]int{}
	add := func(t string) {
		if _, ok := vocab[t]; !ok {
			vocab[t] = len(vocab)
		}
	}
	for _, t := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		add(t)
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"()[]{}<>-_/\\*+=#@$%&|^~`" {
		add(string(c))
		add("##" + string(c))
	}
	for _, w := range strings.Fields(tinyWords) {
		add(w)
	}
	for _, s := range []string{"##s", "##ed", "##ing", "##er", "##ly", "##tion"} {
		add(s)
	}
	special := func(content string) map[string]any {
		return map[string]any{"id": vocab[content], "content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
	}
	tok := func(id string, typ int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": typ}}
	}
	seq := func(id string, typ int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	doc := map[string]any{
		"version":       "1.0",
		"truncation":    nil,
		"padding":       nil,
		"added_tokens":  []any{special("[PAD]"), special("[UNK]"), special("[CLS]"), special("[SEP]"), special("[MASK]")},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)},
			"pair":   []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{vocab["[CLS]"]}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{vocab["[SEP]"]}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model":   map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, _ := json.Marshal(doc)
	return b
}
