package testmodels

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX protobuf field numbers (onnx.proto) and enum values used below.
// Writing the wire format directly keeps this package free of generated
// ONNX types, which no importable Go module provides.
const (
	modelIRVersion  = 1
	modelProducer   = 2
	modelGraph      = 7
	modelOpset      = 8
	opsetDomain     = 1
	opsetVersion    = 2
	graphNode       = 1
	graphName       = 2
	graphInit       = 5
	graphInput      = 11
	graphOutput     = 12
	nodeInput       = 1
	nodeOutput      = 2
	nodeName        = 3
	nodeOpType      = 4
	nodeAttribute   = 5
	attrName        = 1
	attrF           = 2
	attrI           = 3
	attrT           = 5
	attrInts        = 8
	attrType        = 20
	attrTypeFloat   = 1
	attrTypeInt     = 2
	attrTypeTensor  = 4
	attrTypeInts    = 7
	tensorDims      = 1
	tensorDataType  = 2
	tensorName      = 8
	tensorRawData   = 9
	dtypeFloat      = 1
	dtypeUint8      = 2
	dtypeInt8       = 3
	dtypeInt32      = 6
	dtypeInt64      = 7
	dtypeFloat16    = 10
	valueName       = 1
	valueType       = 2
	typeTensor      = 1
	tensorElemType  = 1
	tensorShape     = 2
	shapeDim        = 1
	dimValue        = 1
	dimParam        = 2
	irVersion       = 8
	opsetVersionNum = 17
)

type pb []byte

func (b pb) str(field protowire.Number, s string) pb {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b pb) bytes(field protowire.Number, v []byte) pb {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (b pb) varint(field protowire.Number, v int64) pb {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func (b pb) float(field protowire.Number, f float32) pb {
	b = protowire.AppendTag(b, field, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(f))
}

// graph accumulates nodes and initializers.
type graph struct {
	nodes, inits, inputs, outputs []pb
	n                             int
}

func (g *graph) name(prefix string) string {
	g.n++
	return fmt.Sprintf("%s_%d", prefix, g.n)
}

type attr pb

func intAttr(name string, v int64) attr {
	return attr(pb(nil).str(attrName, name).varint(attrI, v).varint(attrType, attrTypeInt))
}

func floatAttr(name string, v float32) attr {
	return attr(pb(nil).str(attrName, name).float(attrF, v).varint(attrType, attrTypeFloat))
}

func intsAttr(name string, vs ...int64) attr {
	b := pb(nil).str(attrName, name)
	for _, v := range vs {
		b = b.varint(attrInts, v)
	}
	return attr(b.varint(attrType, attrTypeInts))
}

// op adds a node with one output and returns the output's name.
func (g *graph) op(opType string, inputs []string, attrs ...attr) string {
	return g.opN(opType, 1, inputs, attrs...)[0]
}

// opN adds a node with n outputs and returns their names.
func (g *graph) opN(opType string, n int, inputs []string, attrs ...attr) []string {
	base := g.name(opType)
	b := pb(nil)
	for _, in := range inputs {
		b = b.str(nodeInput, in)
	}
	outs := make([]string, n)
	for i := range outs {
		outs[i] = base
		if i > 0 {
			outs[i] = fmt.Sprintf("%s_out%d", base, i)
		}
		b = b.str(nodeOutput, outs[i])
	}
	b = b.str(nodeName, base).str(nodeOpType, opType)
	for _, a := range attrs {
		b = b.bytes(nodeAttribute, a)
	}
	g.nodes = append(g.nodes, b)
	return outs
}

func tensor(name string, dims []int64, dtype int64, raw []byte) pb {
	b := pb(nil)
	for _, d := range dims {
		b = b.varint(tensorDims, d)
	}
	return b.varint(tensorDataType, dtype).str(tensorName, name).bytes(tensorRawData, raw)
}

// floats adds a float32 initializer.
func (g *graph) floats(prefix string, dims []int64, data []float32) string {
	name := g.name(prefix)
	raw := make([]byte, 4*len(data))
	for i, f := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	g.inits = append(g.inits, tensor(name, dims, dtypeFloat, raw))
	return name
}

// raw adds an initializer of any type from its little-endian bytes.
func (g *graph) raw(prefix string, dims []int64, dtype int64, data []byte) string {
	name := g.name(prefix)
	g.inits = append(g.inits, tensor(name, dims, dtype, data))
	return name
}

// halves adds a float16 initializer.
func (g *graph) halves(prefix string, dims []int64, data []float32) string {
	raw := make([]byte, 2*len(data))
	for i, f := range data {
		binary.LittleEndian.PutUint16(raw[2*i:], float16(f))
	}
	return g.raw(prefix, dims, dtypeFloat16, raw)
}

// float16 rounds f to IEEE half precision (to nearest, ties away; the
// weights here are small normal numbers, so subnormals flush to zero).
func float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case exp <= 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00
	}
	h := sign | uint16(exp)<<10 | uint16(mant>>13)
	if mant&0x1000 != 0 {
		h++ // carries into the exponent correctly
	}
	return h
}

// ints adds an int64 initializer.
func (g *graph) ints(prefix string, dims []int64, data ...int64) string {
	name := g.name(prefix)
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	g.inits = append(g.inits, tensor(name, dims, dtypeInt64, raw))
	return name
}

// valueInfo describes a graph input or output; a negative dim is symbolic.
func valueInfo(name string, dtype int64, dims ...any) pb {
	shape := pb(nil)
	for _, d := range dims {
		dim := pb(nil)
		switch d := d.(type) {
		case string:
			dim = dim.str(dimParam, d)
		case int:
			dim = dim.varint(dimValue, int64(d))
		}
		shape = shape.bytes(shapeDim, dim)
	}
	tt := pb(nil).varint(tensorElemType, dtype).bytes(tensorShape, shape)
	return pb(nil).str(valueName, name).bytes(valueType, pb(nil).bytes(typeTensor, tt))
}

func (g *graph) model(name string) []byte {
	gb := pb(nil)
	for _, n := range g.nodes {
		gb = gb.bytes(graphNode, n)
	}
	gb = gb.str(graphName, name)
	for _, t := range g.inits {
		gb = gb.bytes(graphInit, t)
	}
	for _, v := range g.inputs {
		gb = gb.bytes(graphInput, v)
	}
	for _, v := range g.outputs {
		gb = gb.bytes(graphOutput, v)
	}
	opset := pb(nil).str(opsetDomain, "").varint(opsetVersion, opsetVersionNum)
	return pb(nil).varint(modelIRVersion, irVersion).str(modelProducer, "lore testmodels").bytes(modelGraph, gb).bytes(modelOpset, opset)
}
