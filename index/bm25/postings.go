package bm25

import (
	"encoding/binary"
	"errors"
	"math"
)

// Params are BM25's k1 (how fast repeats of a term stop counting) and b
// (how much a long chunk is penalised).
type Params struct{ K1, B float64 }

// DefaultParams are the textbook values, which FTS5 used too.
var DefaultParams = Params{K1: 1.2, B: 0.75}

// Impact is a posting's BM25 term-frequency factor
// (k1+1)·tf / (tf + k1·(1-b+b·dl/avgdl)), which lies in [0, k1+1),
// quantised to a byte: with it stored, a query needs neither the chunk's
// length nor its tf. A present term is never 0.
func (p Params) Impact(tf, dl, avgdl float64) uint8 {
	if avgdl <= 0 {
		avgdl = 1
	}
	f := tf / (tf + p.K1*(1-p.B+p.B*dl/avgdl)) // the factor over k1+1
	return uint8(max(1, math.Round(255*f)))
}

// Weight is what one unit of impact is worth for a term found in df of
// docs chunks: its idf times (k1+1)/255. The idf is FTS5's, floored at
// 1e-6 for terms in more than half of the chunks.
func (p Params) Weight(docs, df int) float64 {
	idf := math.Log((0.5 + float64(docs) - float64(df)) / (0.5 + float64(df)))
	if idf <= 0 || math.IsNaN(idf) {
		idf = 1e-6
	}
	return idf * (p.K1 + 1) / 255
}

// A List is the postings of one term: chunk ids ascending, each with its
// term frequency and impact.
type List struct {
	IDs     []int64
	TFs     []uint8
	Impacts []uint8
}

// Add appends a posting; ids must come in ascending order.
func (l *List) Add(id int64, tf, impact uint8) {
	l.IDs = append(l.IDs, id)
	l.TFs = append(l.TFs, tf)
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

// Encode is the list as stored: data (the ids as varint deltas, then one
// impact byte each), which is all a query reads, and tfs, which only a
// merge needs to recompute impacts.
func (l *List) Encode() (data, tfs []byte) {
	data = make([]byte, 0, 2*len(l.IDs))
	prev := int64(0)
	for _, id := range l.IDs {
		data = binary.AppendUvarint(data, uint64(id-prev))
		prev = id
	}
	data = append(data, l.Impacts...)
	return data, append([]byte(nil), l.TFs...)
}

// ErrFormat means a stored list does not decode: the index is damaged.
var ErrFormat = errors.New("bm25: malformed posting list")

// Decode appends the n postings stored in data (and tfs, when given) to l.
// The ids must continue l's ascending order.
func (l *List) Decode(data, tfs []byte, n int) error {
	if n <= 0 || n > len(data) || tfs != nil && len(tfs) != n {
		return ErrFormat
	}
	prev := int64(0)
	if len(l.IDs) > 0 {
		prev = l.IDs[len(l.IDs)-1]
	}
	first, at := true, 0
	for range n {
		d, k := binary.Uvarint(data[at:])
		if k <= 0 || d == 0 || d > math.MaxInt64/2 {
			return ErrFormat
		}
		at += k
		if first && len(l.IDs) > 0 {
			// Each stored list counts from 0; a later one must start
			// above where the earlier ones ended.
			if int64(d) <= prev {
				return ErrFormat
			}
			prev = 0
		}
		first = false
		prev += int64(d)
		l.IDs = append(l.IDs, prev)
	}
	if len(data)-at != n {
		return ErrFormat
	}
	l.Impacts = append(l.Impacts, data[at:]...)
	if tfs != nil {
		l.TFs = append(l.TFs, tfs...)
	}
	return nil
}
