// Package bm25 is lore's keyword ranking: BM25F impacts quantised to a
// byte, the encoding of posting lists, segments pending a write, MaxScore
// top-k over them and a proximity re-rank. Terms come from package
// analysis; package local stores the lists in SQLite and feeds them back.
package bm25

import (
	"github.com/lore-cli/lore/index/analysis"

	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// Params are BM25F's: k1 (how fast repeats of a term stop counting) and,
// per field, its weight and b (how much a long field is penalised).
type Params struct {
	K1                          float64
	Path, Heading, Body, Idents Field
	// Structured scales the body's weight in a chunk of a YAML, TOML or
	// JSON file (analysis.Doc.Structured); 0 leaves it whole. The local
	// store keeps impacts: a new value needs a new analysis.Version.
	Structured float64
	// IDFPower flattens idf (0 leaves it as is): a question in plain
	// words shares a rare word or two with many chunks by chance (a
	// "monorepo", a "huge" number of groups) and most of its words with
	// the one that answers it. At full idf the rare word alone outranked
	// the answer; idf^0.7 lifted MRR@5 on four of the five public sets
	// and cost the fifth 0.002 (docs/ranking.md). It is applied at query time: no index changes.
	IDFPower float64
}

// Field is one field's weight and length normalisation.
type Field struct{ W, B float64 }

// DefaultParams were measured on the public question sets (Go standard
// library and Prometheus docs; bench/lexical TestRankVariants): a heading
// match counts double, and only the body and identifiers are normalised by
// length. Paths and headings are short and say what a chunk is about
// however long it is; normalising them (FTS5's bm25 did, over all columns
// together) let long chunks that repeat one query word win. The surface
// around these values is flat: one parameter at a time moves either set by
// at most two questions in 36. The body's b is the textbook 0.75 since
// small sections are joined into chunks of up to half of chunk-size: with
// 0.5 a long joined chunk that says a query word once in passing kept
// outranking the short section about it (measured per setting in
// docs/ranking.md).
var DefaultParams = Params{
	K1:      1.2,
	Path:    Field{W: 1, B: 0},
	Heading: Field{W: 2, B: 0},
	Body:    Field{W: 1, B: 0.75},
	Idents:  Field{W: 0.5, B: 0.5},
	// A config sample, a schema or an API spec lists the words of a
	// plain-English question without explaining them: at full weight
	// they took 8 of the top-3 places of the Prometheus set once its
	// docs/ held the project's OpenAPI spec and config samples, at half
	// weight 1 (docs/ranking.md). A question naming a key still finds
	// it by its identifier.
	Structured: 0.5,
	IDFPower:   0.7,
}

// Averages are the mean field lengths of the indexed chunks.
type Averages struct{ Body, Idents float64 }

// Impact is a posting's BM25F term-frequency factor tf/(tf+k1), where tf
// sums the fields' weighted, length-normalised frequencies, quantised to a
// byte: with it stored, a query needs neither the chunk's lengths nor its
// frequencies. A present term is never 0.
func (p Params) Impact(t analysis.TermFreq, d analysis.Doc, avg Averages) uint8 {
	norm := func(f Field, n uint32, avg float64) float64 {
		if f.B == 0 || avg <= 0 {
			return 1
		}
		return 1 - f.B + f.B*float64(n)/avg
	}
	body := p.Body.W
	if d.Structured && p.Structured > 0 {
		body *= p.Structured
	}
	tf := p.Path.W*float64(t.Path) + p.Heading.W*float64(t.Heading) +
		body*float64(t.Body)/norm(p.Body, d.BodyLen, avg.Body) +
		p.Idents.W*float64(t.Idents)/norm(p.Idents, d.IdentsLen, avg.Idents)
	return uint8(max(1, math.Round(255*tf/(tf+p.K1))))
}

// IDF of a term found in df of docs chunks: ln(1 + (N-df+0.5)/(df+0.5)),
// which stays positive for the commonest terms.
func IDF(docs, df int) float64 {
	idf := math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
	if idf <= 0 || math.IsNaN(idf) {
		return 1e-6 // more postings than chunks: dead ones not yet merged away
	}
	return idf
}

// IDF is the weight of a term found in df of docs chunks as Rank counts
// it: IDF raised to IDFPower.
func (p Params) IDF(docs, df int) float64 {
	idf := IDF(docs, df)
	if p.IDFPower == 0 || p.IDFPower == 1 {
		return idf
	}
	return math.Pow(idf, p.IDFPower)
}

// Weight is what one unit of impact is worth for a term: its idf times
// (k1+1)/255.
func (p Params) Weight(idf float64) float64 { return idf * (p.K1 + 1) / 255 }

// A List is the postings of one term: chunk ids ascending, each with its
// impact.
type List struct {
	IDs     []int64
	Impacts []uint8
}

// Add appends a posting; ids must come in ascending order.
func (l *List) Add(id int64, impact uint8) {
	l.IDs = append(l.IDs, id)
	l.Impacts = append(l.Impacts, impact)
}

// MaxImpact is the largest impact in the list: MaxScore's upper bound.
func (l *List) MaxImpact() uint8 {
	var m uint8
	for _, x := range l.Impacts {
		m = max(m, x)
	}
	return m
}

// Encode is the list as stored: the ids as varint deltas, then one impact
// byte each.
func (l *List) Encode() []byte {
	data := make([]byte, 0, 3*len(l.IDs))
	prev := int64(0)
	for _, id := range l.IDs {
		data = binary.AppendUvarint(data, uint64(id-prev))
		prev = id
	}
	return append(data, l.Impacts...)
}

// ErrFormat means a stored list does not decode: the index is damaged.
var ErrFormat = errors.New("bm25: malformed posting list")

// Decode appends the n postings stored in data to l. They must continue
// l's ascending order.
func (l *List) Decode(data []byte, n int) error {
	if n <= 0 || n > len(data) {
		return ErrFormat
	}
	last := int64(0)
	if len(l.IDs) > 0 {
		last = l.IDs[len(l.IDs)-1]
	}
	l.IDs = slices.Grow(l.IDs, n)
	prev, at := int64(0), 0
	for i := range n {
		d, k := binary.Uvarint(data[at:])
		if k <= 0 || d == 0 || d > math.MaxInt64/2 {
			return ErrFormat
		}
		at += k
		prev += int64(d)
		if prev < 0 || i == 0 && prev <= last {
			// Each stored list counts from 0; a later one must start
			// above where the earlier ones ended.
			return ErrFormat
		}
		l.IDs = append(l.IDs, prev)
	}
	if len(data)-at != n {
		return ErrFormat
	}
	l.Impacts = append(l.Impacts, data[at:]...)
	return nil
}

// Merge is the postings of a word read in two places, its own (word) and
// the camelCase parts it is one of (part, PartPrefix) or another form of
// it (an abbreviation, a compound: AliasWeight): a chunk's impact is the
// better of the two, the other's scaled by partWeight. A word is scored
// once: a chunk that says "idle" and has maxIdleConns gains nothing from
// the identifier, so the parts of a code chunk's identifiers do not add up
// to a match it would not have had; a chunk that only has the identifier
// matches "idle" as well as partWeight lets it. Summed as terms of their
// own, even at a quarter of the weight, parts cost the Go set 3 answers in
// the top 5.
func Merge(word, part *List, partWeight float64) List {
	var out List
	n := len(word.IDs) + len(part.IDs)
	out.IDs, out.Impacts = make([]int64, 0, n), make([]uint8, 0, n)
	scaled := func(x uint8) uint8 { return uint8(max(1, math.Round(partWeight*float64(x)))) }
	i, j := 0, 0
	for i < len(word.IDs) || j < len(part.IDs) {
		switch {
		case j == len(part.IDs) || i < len(word.IDs) && word.IDs[i] < part.IDs[j]:
			out.Add(word.IDs[i], word.Impacts[i])
			i++
		case i == len(word.IDs) || part.IDs[j] < word.IDs[i]:
			out.Add(part.IDs[j], scaled(part.Impacts[j]))
			j++
		default:
			out.Add(word.IDs[i], max(word.Impacts[i], scaled(part.Impacts[j])))
			i++
			j++
		}
	}
	return out
}

// Remove drops the postings of the ids in dead (ascending), in place, in
// one walk of both over the list's range of ids.
func (l *List) Remove(dead []int64) {
	if len(l.IDs) == 0 || len(dead) == 0 {
		return
	}
	lo, _ := slices.BinarySearch(dead, l.IDs[0])
	hi, _ := slices.BinarySearch(dead, l.IDs[len(l.IDs)-1]+1)
	dead = dead[lo:hi]
	if len(dead) == 0 {
		return
	}
	n, d := 0, 0
	for i, id := range l.IDs {
		for d < len(dead) && dead[d] < id {
			d++
		}
		if d < len(dead) && dead[d] == id {
			continue
		}
		l.IDs[n], l.Impacts[n] = id, l.Impacts[i]
		n++
	}
	l.IDs, l.Impacts = l.IDs[:n], l.Impacts[:n]
}
