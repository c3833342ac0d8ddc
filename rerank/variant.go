package rerank

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
	"google.golang.org/protobuf/encoding/protowire"
)

// Variants of a model: how its weights are stored. Hugging Face's
// cross-encoder repositories ship onnx/model.onnx (fp32) with dynamically
// quantised int8 exports and an fp16 one (model_O4.onnx) beside it.
const (
	VariantFP32 = "fp32"
	VariantInt8 = "int8"
	VariantFP16 = "fp16"
	VariantAuto = "auto"
)

// ErrNeedsORT means a model's variant runs on ONNX Runtime only; the
// message says which variant and what to do.
var ErrNeedsORT = errors.New("the pure-Go backend cannot run it")

// quantOps mark a quantised graph, the one named in messages first:
// onnxruntime's dynamic quantisation writes MatMulInteger (ConvInteger)
// and DynamicQuantizeLinear, its static one and its fusions the others.
var quantOps = []string{"MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv", "DynamicQuantizeMatMul",
	"MatMulIntegerToFloat", "QAttention", "QGemm", "DynamicQuantizeLinear", "QuantizeLinear", "DequantizeLinear"}

// graphFacts is what lore reads from an ONNX file without loading it.
type graphFacts struct {
	quantOp   string // the first quantisation op, "" when none
	fp16      bool   // a float16 initializer
	contribOp string // the first op outside the standard domain (ONNX Runtime's fused ops)
}

func (f graphFacts) variant() string {
	switch {
	case f.quantOp != "":
		return VariantInt8
	case f.fp16:
		return VariantFP16
	}
	return VariantFP32
}

// ONNX protobuf field numbers (onnx.proto).
const (
	pbModelGraph     = 7
	pbGraphNode      = 1
	pbGraphInit      = 5
	pbNodeOpType     = 4
	pbNodeDomain     = 7
	pbTensorDataType = 2
	pbFloat16        = 10
)

// inspectONNX reads the ops and initializer types of an ONNX model. It
// seeks past the weights, so it reads kilobytes of a 90 MB file.
func inspectONNX(file string) (graphFacts, error) {
	var facts graphFacts
	f, err := os.Open(file)
	if err != nil {
		return facts, err
	}
	defer f.Close()
	r := &pbReader{f: f, r: bufio.NewReader(f)}
	err = r.fields(-1, func(num protowire.Number, n int64) error {
		if num != pbModelGraph {
			return r.skip(n)
		}
		return r.fields(n, func(num protowire.Number, n int64) error {
			switch num {
			case pbGraphNode:
				b, err := r.read(n)
				if err != nil {
					return err
				}
				op, domain := nodeOp(b)
				if i := slices.Index(quantOps, op); i >= 0 && (facts.quantOp == "" || i < slices.Index(quantOps, facts.quantOp)) {
					facts.quantOp = op
				}
				if facts.contribOp == "" && domain != "" && domain != "ai.onnx" {
					facts.contribOp = op
				}
				return nil
			case pbGraphInit:
				return r.fields(n, func(num protowire.Number, n int64) error {
					if num == pbTensorDataType && n < 0 && -n-1 == pbFloat16 {
						facts.fp16 = true
					}
					return r.skip(n)
				})
			}
			return r.skip(n)
		})
	})
	if err != nil {
		return facts, fmt.Errorf("%w: %s is not an ONNX model: %v", ErrBadModel, file, err)
	}
	return facts, nil
}

func nodeOp(b []byte) (op, domain string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == pbNodeOpType || num == pbNodeDomain) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			if num == pbNodeOpType {
				op = string(v)
			} else {
				domain = string(v)
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return
		}
		b = b[n:]
	}
	return
}

// pbReader walks a protobuf message in a file, seeking past large fields.
type pbReader struct {
	f   *os.File
	r   *bufio.Reader
	pos int64
}

func (p *pbReader) uvarint() (uint64, error) {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := p.r.ReadByte()
		if err != nil {
			return 0, err
		}
		p.pos++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("varint overflow")
}

// fields calls fn for each field of the next size bytes (-1: to the end
// of the file) with the field's length for bytes fields, or -(value+1)
// for varints (nothing left to skip).
func (p *pbReader) fields(size int64, fn func(num protowire.Number, n int64) error) error {
	end := p.pos + size
	for size < 0 || p.pos < end {
		tag, err := p.uvarint()
		if err == io.EOF && size < 0 {
			return nil
		}
		if err != nil {
			return err
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		var n int64
		switch typ {
		case protowire.VarintType:
			v, err := p.uvarint()
			if err != nil {
				return err
			}
			n = -int64(v) - 1
		case protowire.Fixed32Type:
			n = 4
		case protowire.Fixed64Type:
			n = 8
		case protowire.BytesType:
			v, err := p.uvarint()
			if err != nil {
				return err
			}
			if v > 1<<40 {
				return errors.New("field too long")
			}
			n = int64(v)
		default:
			return fmt.Errorf("unexpected wire type %d", typ)
		}
		if err := fn(num, n); err != nil {
			return err
		}
	}
	if p.pos != end {
		return errors.New("message overruns its length")
	}
	return nil
}

func (p *pbReader) skip(n int64) error {
	if n <= 0 {
		return nil
	}
	if b := int64(p.r.Buffered()); n > b {
		if _, err := p.f.Seek(n-b, io.SeekCurrent); err != nil {
			return err
		}
		p.r.Reset(p.f)
	} else if _, err := p.r.Discard(int(n)); err != nil {
		return err
	}
	p.pos += n
	return nil
}

func (p *pbReader) read(n int64) ([]byte, error) {
	if n < 0 {
		return nil, nil
	}
	if n > 64<<20 {
		return nil, errors.New("node too large")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return nil, err
	}
	p.pos += n
	return b, nil
}

// pureGoCheck says why the pure-Go backend cannot run a model, before it
// tries: onnx-gomlx (v0.3.4) has the int8 ops, but GoMLX's simplego
// backend panics in an int32 matrix product (a crash, not an error), it
// has no float16 type, and it has none of ONNX Runtime's fused ops.
func pureGoCheck(name, file string) error {
	facts, err := inspectONNX(file)
	if err != nil {
		return nil // not ONNX at all: loading it says so
	}
	what := ""
	switch {
	case facts.quantOp != "":
		what = fmt.Sprintf("is int8-quantised (%s)", facts.quantOp)
	case facts.fp16:
		what = "is fp16"
	case facts.contribOp != "":
		what = fmt.Sprintf("uses ONNX Runtime's own op %s", facts.contribOp)
	default:
		return nil
	}
	return &needsORT{name: name, what: what}
}

// needsORT is a model the pure-Go backend cannot run (ErrNeedsORT). The
// fp32 export it advises comes from where the model came from: models
// import has no hub to pull from, and a model installed earlier may have
// come from either.
type needsORT struct {
	name, what string
	imported   bool // refused by models import
}

func (e *needsORT) Error() string {
	fix := fmt.Sprintf("run `lore models pull %s --variant fp32` (a Hugging Face model) or import an fp32 export of it", e.name)
	if e.imported {
		fix = "import an fp32 export of it (a model.onnx that is not quantised)"
	}
	return fmt.Sprintf("model %s %s; %s: set reranker to onnxruntime (`make ort`, see README) or %s", e.name, e.what, ErrNeedsORT, fix)
}

func (e *needsORT) Unwrap() error { return ErrNeedsORT }

// CPU is what choosing a model variant needs to know about the processor.
type CPU struct {
	Arch                                         string // runtime.GOARCH
	AVX2, AVX512F, AVX512BW, AVX512VNNI, AVXVNNI bool
}

// HostCPU describes this machine's processor.
func HostCPU() CPU {
	return CPU{Arch: runtime.GOARCH, AVX2: cpu.X86.HasAVX2, AVX512F: cpu.X86.HasAVX512F, AVX512BW: cpu.X86.HasAVX512BW,
		AVX512VNNI: cpu.X86.HasAVX512VNNI, AVXVNNI: cpu.X86.HasAVXVNNI}
}

// The exports in a Hugging Face cross-encoder repository.
const (
	onnxFP32       = "onnx/model.onnx"
	onnxAVX512VNNI = "onnx/model_qint8_avx512_vnni.onnx"
	onnxAVX512     = "onnx/model_qint8_avx512.onnx"
	onnxAVX2       = "onnx/model_quint8_avx2.onnx"
	onnxARM64      = "onnx/model_qint8_arm64.onnx"
)

// int8Exports are the int8 files made for c, best first. The exporters
// quantise weights to uint8 for AVX2, where ONNX Runtime's u8s8 kernel
// can saturate; VNNI (AVX-512 or AVX) does not, so it takes int8.
func (c CPU) int8Exports() []string {
	switch {
	case c.Arch == "arm64":
		return []string{onnxARM64}
	case c.Arch != "amd64" && c.Arch != "386":
		return nil
	case c.AVX512VNNI:
		return []string{onnxAVX512VNNI, onnxAVX512, onnxAVX2}
	case c.AVX512F && c.AVX512BW:
		return []string{onnxAVX512, onnxAVX2}
	case c.AVXVNNI:
		return []string{onnxAVX512VNNI, onnxAVX2}
	case c.AVX2:
		return []string{onnxAVX2}
	}
	return nil
}

// ChooseONNX picks the file of repository files to install for variant
// (fp32, int8 or auto) on c. auto takes the int8 export made for c when
// the repository has one and int8 can run (ONNX Runtime), else fp32; int8
// takes any int8 export when none was made for c, and fails without one.
func ChooseONNX(files []string, variant string, c CPU, int8OK bool) (string, error) {
	has := func(f string) bool { return slices.Contains(files, f) }
	fp32 := func() (string, error) {
		if has(onnxFP32) {
			return onnxFP32, nil
		}
		return "", fmt.Errorf("%w: the repository has no %s", ErrNoVariant, onnxFP32)
	}
	switch variant {
	case VariantFP32:
		return fp32()
	case VariantAuto, "":
		if int8OK {
			for _, f := range c.int8Exports() {
				if has(f) {
					return f, nil
				}
			}
		}
		return fp32()
	case VariantInt8:
		for _, f := range c.int8Exports() {
			if has(f) {
				return f, nil
			}
		}
		var any []string
		for _, f := range files {
			base := path.Base(f)
			if path.Dir(f) == "onnx" && strings.HasSuffix(base, ".onnx") && (strings.Contains(base, "int8") || strings.Contains(base, "quantized")) {
				any = append(any, f)
			}
		}
		if len(any) > 0 {
			slices.Sort(any)
			return any[0], nil
		}
		return "", fmt.Errorf("%w: the repository has no int8 export (onnx/model_*int8*.onnx); use --variant fp32", ErrNoVariant)
	}
	return "", fmt.Errorf("%w: variant %q is not one of fp32, int8, auto", ErrNoVariant, variant)
}

// ErrNoVariant means the repository has no file for the variant asked.
var ErrNoVariant = errors.New("no such model variant")
