// Package testmodels writes random-weight BERT-style cross-encoders as ONNX
// models in the directory layout hugot expects, so that lore's reranking
// code runs on real models in tests and benchmarks without downloading
// weights. The scores are meaningless; the plumbing is real.
package testmodels

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
)

// Config is a model's shape.
type Config struct {
	Name   string
	Vocab  int // 0: the size of the tokenizer's vocabulary
	Hidden int
	Layers int
	Heads  int
	FFN    int
	MaxPos int
	Seed   int64
	// Labels is the classification head's width: 0 or 1 for a
	// cross-encoder's one logit, more to build a classifier lore refuses.
	Labels int
	// Quant is how the encoder's matrix products are stored; the weights
	// are the same random numbers whatever it is, so a quantised model's
	// scores can be compared with its fp32 twin's.
	Quant Quant
}

// Quant is a model variant, as Hugging Face's cross-encoder repositories
// ship them beside onnx/model.onnx.
type Quant int

const (
	// FP32 is onnx/model.onnx.
	FP32 Quant = iota
	// QInt8 is what onnxruntime's dynamic quantisation (through optimum)
	// writes for model_qint8_avx512*.onnx and model_qint8_arm64.onnx:
	// every MatMul becomes DynamicQuantizeLinear on its activations,
	// MatMulInteger with per-tensor symmetric int8 weights, Cast, and a
	// Mul by the two scales. Products of two activations (attention)
	// quantise both sides, as optimum leaves MatMulConstBOnly off.
	QInt8
	// QUInt8 is the same with uint8 weights (zero point 128), as in
	// model_quint8_avx2.onnx.
	QUInt8
	// FP16 keeps the matrix weights as float16 initializers cast to
	// float32 where used: enough to look like model_O4.onnx to a loader.
	FP16
)

// Shapes of the models lore uses, and a tiny one for fast tests.
var (
	Tiny       = Config{Name: "tiny", Hidden: 32, Layers: 2, Heads: 2, FFN: 64, MaxPos: 512, Seed: 1}
	MiniLML6   = Config{Name: "ms-marco-MiniLM-L-6-v2-shaped", Vocab: 30522, Hidden: 384, Layers: 6, Heads: 12, FFN: 1536, MaxPos: 512, Seed: 6}
	MiniLML2   = Config{Name: "ms-marco-MiniLM-L-2-v2-shaped", Vocab: 30522, Hidden: 384, Layers: 2, Heads: 12, FFN: 1536, MaxPos: 512, Seed: 2}
	TinyBERTL2 = Config{Name: "ms-marco-TinyBERT-L-2-v2-shaped", Vocab: 30522, Hidden: 128, Layers: 2, Heads: 2, FFN: 512, MaxPos: 512, Seed: 3}
)

// WriteCrossEncoder writes model.onnx, tokenizer.json,
// special_tokens_map.json and config.json into dir. tokenizerJSON may be
// nil for the tiny generated vocabulary.
func WriteCrossEncoder(dir string, cfg Config, tokenizerJSON []byte) error {
	if tokenizerJSON == nil {
		tokenizerJSON = TinyTokenizer()
	}
	if cfg.Vocab == 0 {
		var tk struct {
			Model struct{ Vocab map[string]int } `json:"model"`
		}
		if err := json.Unmarshal(tokenizerJSON, &tk); err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
		cfg.Vocab = len(tk.Model.Vocab)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"model.onnx":              crossEncoder(cfg),
		"tokenizer.json":          tokenizerJSON,
		"special_tokens_map.json": []byte(`{"cls_token":"[CLS]","sep_token":"[SEP]","pad_token":"[PAD]","unk_token":"[UNK]","mask_token":"[MASK]"}`),
		"config.json":             []byte(fmt.Sprintf(`{"model_type":"bert","architectures":["BertForSequenceClassification"],"hidden_size":%d,"num_hidden_layers":%d,"num_attention_heads":%d,"intermediate_size":%d,"max_position_embeddings":%d,"vocab_size":%d,"pad_token_id":0,"id2label":{"0":"LABEL_0"}}`, cfg.Hidden, cfg.Layers, cfg.Heads, cfg.FFN, cfg.MaxPos, cfg.Vocab)),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// crossEncoder builds the ONNX graph of a BERT encoder with a pooler and a
// one-logit classification head, from standard opset-17 operators only
// (GELU written with Erf), so both ONNX Runtime and hugot's Go backend run it.
func crossEncoder(cfg Config) []byte {
	rng := rand.New(rand.NewSource(cfg.Seed))
	H, nh := int64(cfg.Hidden), int64(cfg.Heads)
	dh := H / nh
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}
	fill := func(n int, x float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = x
		}
		return v
	}
	g := &graph{}
	g.inputs = []pb{
		valueInfo("input_ids", dtypeInt64, "batch", "sequence"),
		valueInfo("attention_mask", dtypeInt64, "batch", "sequence"),
		valueInfo("token_type_ids", dtypeInt64, "batch", "sequence"),
	}
	labels := int64(max(cfg.Labels, 1))
	g.outputs = []pb{valueInfo("logits", dtypeFloat, "batch", int(labels))}

	scalar := func(x float32) string { return g.floats("c", nil, []float32{x}) }
	one, half := scalar(1), scalar(0.5)
	// matmul multiplies two activations.
	matmul := func(a, b string) string {
		if cfg.Quant != QInt8 && cfg.Quant != QUInt8 {
			return g.op("MatMul", []string{a, b})
		}
		qa := g.opN("DynamicQuantizeLinear", 3, []string{a})
		qb := g.opN("DynamicQuantizeLinear", 3, []string{b})
		return g.dequant(g.op("MatMulInteger", []string{qa[0], qb[0], qa[2], qb[2]}), qa[1], qb[1])
	}
	linear := func(x string, in, out int64, std float64) string {
		w := normal(int(in*out), std)
		b := g.floats("b", []int64{out}, normal(int(out), 0.02))
		return g.op("Add", []string{g.weightMatMul(x, w, []int64{in, out}, cfg.Quant), b})
	}
	layerNorm := func(x string) string {
		return g.op("LayerNormalization", []string{x, g.floats("ln_w", []int64{H}, fill(int(H), 1)), g.floats("ln_b", []int64{H}, fill(int(H), 0))},
			intAttr("axis", -1), floatAttr("epsilon", 1e-12))
	}

	// Embeddings: word + position (sliced to the sequence length) + type.
	word := g.op("Gather", []string{g.floats("word_emb", []int64{int64(cfg.Vocab), H}, normal(cfg.Vocab*int(H), 0.5)), "input_ids"})
	seqLen := g.op("Gather", []string{g.op("Shape", []string{"input_ids"}), g.ints("idx", []int64{1}, 1)})
	pos := g.op("Slice", []string{g.floats("pos_emb", []int64{int64(cfg.MaxPos), H}, normal(cfg.MaxPos*int(H), 0.1)), g.ints("start", []int64{1}, 0), seqLen, g.ints("axes", []int64{1}, 0)})
	typ := g.op("Gather", []string{g.floats("type_emb", []int64{2, H}, normal(2*int(H), 0.1)), "token_type_ids"})
	x := layerNorm(g.op("Add", []string{g.op("Add", []string{word, pos}), typ}))

	// Additive attention mask: 0 where attended, -10000 on padding.
	maskF := g.op("Cast", []string{"attention_mask"}, intAttr("to", dtypeFloat))
	ext := g.op("Mul", []string{g.op("Sub", []string{one, maskF}), scalar(-10000)})
	ext = g.op("Unsqueeze", []string{ext, g.ints("axes", []int64{2}, 1, 2)})
	heads := g.ints("shape", []int64{4}, 0, 0, nh, dh)
	merged := g.ints("shape", []int64{3}, 0, 0, H)
	scale := scalar(float32(1 / math.Sqrt(float64(dh))))
	std := 1 / math.Sqrt(float64(H))

	for range cfg.Layers {
		split := func(t string, perm ...int64) string {
			return g.op("Transpose", []string{g.op("Reshape", []string{t, heads})}, intsAttr("perm", perm...))
		}
		q := split(linear(x, H, H, std), 0, 2, 1, 3)
		k := split(linear(x, H, H, std), 0, 2, 3, 1)
		v := split(linear(x, H, H, std), 0, 2, 1, 3)
		scores := g.op("Add", []string{g.op("Mul", []string{matmul(q, k), scale}), ext})
		probs := g.op("Softmax", []string{scores}, intAttr("axis", -1))
		ctx := g.op("Reshape", []string{g.op("Transpose", []string{matmul(probs, v)}, intsAttr("perm", 0, 2, 1, 3)), merged})
		x = layerNorm(g.op("Add", []string{x, linear(ctx, H, H, std)}))
		h := linear(x, H, int64(cfg.FFN), std)
		gelu := g.op("Mul", []string{g.op("Mul", []string{h, half}), g.op("Add", []string{g.op("Erf", []string{g.op("Mul", []string{h, scalar(1 / math.Sqrt2)})}), one})})
		x = layerNorm(g.op("Add", []string{x, linear(gelu, int64(cfg.FFN), H, 1/math.Sqrt(float64(cfg.FFN)))}))
	}

	cls := g.op("Gather", []string{x, g.ints("cls", nil, 0)}, intAttr("axis", 1))
	pooled := g.op("Tanh", []string{linear(cls, H, H, std)})
	logits := linear(pooled, H, labels, 1)
	g.nodes = append(g.nodes, pb(nil).str(nodeInput, logits).str(nodeOutput, "logits").str(nodeName, "logits").str(nodeOpType, "Identity"))
	return g.model(cfg.Name)
}

// weightMatMul multiplies x by the constant matrix w, stored as q says.
func (g *graph) weightMatMul(x string, w []float32, dims []int64, q Quant) string {
	switch q {
	case QInt8, QUInt8:
		wq, scale, zp := quantize(w, q == QUInt8)
		dtype := int64(dtypeInt8)
		if q == QUInt8 {
			dtype = dtypeUint8
		}
		wName := g.raw("w_quantized", dims, dtype, wq)
		wScale := g.floats("w_scale", nil, []float32{scale})
		wZero := g.raw("w_zero_point", nil, dtype, []byte{zp})
		qx := g.opN("DynamicQuantizeLinear", 3, []string{x})
		return g.dequant(g.op("MatMulInteger", []string{qx[0], wName, qx[2], wZero}), qx[1], wScale)
	case FP16:
		w16 := g.op("Cast", []string{g.halves("w_fp16", dims, w)}, intAttr("to", dtypeFloat))
		return g.op("MatMul", []string{x, w16})
	}
	return g.op("MatMul", []string{x, g.floats("w", dims, w)})
}

// dequant turns MatMulInteger's int32 product back into floats: Cast,
// then Mul by the product of the two scales, the pattern onnxruntime
// fuses into MatMulIntegerToFloat.
func (g *graph) dequant(product, scaleA, scaleB string) string {
	f := g.op("Cast", []string{product}, intAttr("to", dtypeFloat))
	return g.op("Mul", []string{f, g.op("Mul", []string{scaleA, scaleB})})
}

// quantize is onnxruntime's symmetric per-tensor weight quantisation:
// int8 in [-127, 127] with zero point 0, or uint8 in [0, 255] with zero
// point 128. It returns the quantised bytes, the scale and the zero point.
func quantize(w []float32, unsigned bool) ([]byte, float32, byte) {
	var absMax float64
	for _, v := range w {
		absMax = max(absMax, math.Abs(float64(v)))
	}
	qmin, qmax, zp := -127.0, 127.0, 0.0
	if unsigned {
		qmin, qmax, zp = 0, 255, 128
	}
	scale := 2 * absMax / (qmax - qmin)
	if scale == 0 {
		scale = 1
	}
	out := make([]byte, len(w))
	for i, v := range w {
		q := min(max(math.RoundToEven(float64(v)/scale)+zp, qmin), qmax)
		if unsigned {
			out[i] = byte(q)
		} else {
			out[i] = byte(int8(q))
		}
	}
	return out, float32(scale), byte(zp)
}
