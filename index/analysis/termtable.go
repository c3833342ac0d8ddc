package analysis

import (
	"math/rand/v2"
	"sync"
)

// termTable counts the terms of one chunk for Analyze: an open-addressing
// table over a slice of TermFreq in the order the terms came, both reused
// from chunk to chunk (termTables). A Go map per chunk, grown from 64
// entries, was most of the cost of a Chinese chunk, whose 1.5 KB hold
// some 150 distinct bigrams against 60 words of an English one.
type termTable struct {
	slots []uint64 // high 32 bits: the term's hash; low 32: its index in terms + 1; 0 is empty
	terms []TermFreq
	at    []uint32 // the slot of each term, to empty the table term by term
}

// tableSeed keeps the probe sequences of one process unknown to a
// document written to collide them.
var tableSeed = rand.Uint64()

var termTables = sync.Pool{New: func() any { return &termTable{slots: make([]uint64, 256)} }}

// maxKeptSlots bounds the table a pool keeps: one chunk of endless
// distinct terms does not keep its table alive.
const maxKeptSlots = 1 << 15

// add is the TermFreq of t, a new one when t is new.
func (tb *termTable) add(t string) *TermFreq {
	h := termHash(t)
	mask := uint64(len(tb.slots) - 1)
	tag := h &^ 0xFFFFFFFF
	for i := h & mask; ; i = (i + 1) & mask {
		s := tb.slots[i]
		if s == 0 {
			if 2*(len(tb.terms)+1) > len(tb.slots) {
				tb.grow()
				return tb.add(t)
			}
			tb.terms = append(tb.terms, TermFreq{Term: t})
			tb.at = append(tb.at, uint32(i))
			tb.slots[i] = tag | uint64(len(tb.terms))
			return &tb.terms[len(tb.terms)-1]
		}
		if s&^0xFFFFFFFF == tag {
			if tf := &tb.terms[s&0xFFFFFFFF-1]; tf.Term == t {
				return tf
			}
		}
	}
}

// grow doubles the slots and places every term again.
func (tb *termTable) grow() {
	tb.slots = make([]uint64, 2*len(tb.slots))
	mask := uint64(len(tb.slots) - 1)
	for k := range tb.terms {
		h := termHash(tb.terms[k].Term)
		i := h & mask
		for tb.slots[i] != 0 {
			i = (i + 1) & mask
		}
		tb.slots[i] = h&^0xFFFFFFFF | uint64(k+1)
		tb.at[k] = uint32(i)
	}
}

// doc is the counted terms as a Doc's own slice (nil for none), and the
// table emptied for the next chunk: it keeps no term, and so no text, alive.
func (tb *termTable) doc() []TermFreq {
	var out []TermFreq
	if len(tb.terms) > 0 {
		out = make([]TermFreq, len(tb.terms))
		copy(out, tb.terms)
	}
	for _, i := range tb.at {
		tb.slots[i] = 0
	}
	clear(tb.terms)
	tb.terms, tb.at = tb.terms[:0], tb.at[:0]
	return out
}

// release gives the table back to termTables, unless one chunk made it big.
func (tb *termTable) release() {
	if len(tb.slots) <= maxKeptSlots {
		termTables.Put(tb)
	}
}

// termHash mixes a term into 64 bits: the short terms nearly all are (a
// bigram is 6 bytes, a stem under 8) are read in at most two loads.
func termHash(s string) uint64 {
	const m = 0x9E3779B97F4A7C15
	h := tableSeed ^ uint64(len(s))*m
	for len(s) > 8 {
		h = mix(h ^ le64(s))
		s = s[8:]
	}
	var v uint64
	switch n := len(s); {
	case n >= 4:
		v = uint64(le32(s)) | uint64(le32(s[n-4:]))<<32
	case n > 0:
		v = uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16
	}
	return mix(h ^ v)
}

func mix(x uint64) uint64 {
	x ^= x >> 32
	x *= 0xD6E8FEB86659FD93
	x ^= x >> 32
	x *= 0xD6E8FEB86659FD93
	return x ^ x>>32
}

func le32(s string) uint32 {
	_ = s[3] // one bounds check, and the four loads become one
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
