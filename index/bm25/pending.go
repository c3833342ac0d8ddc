package bm25

import (
	"github.com/lore-cli/lore/index/analysis"

	"encoding/binary"
	"sort"
)

// Pending gathers analysed chunks until they are written as a segment,
// compactly: per term, the chunk ids as varint deltas, each followed by
// its four field frequencies; per chunk, its two lengths. About 6 bytes a
// posting, where a Doc kept whole costs 40 and more. Impacts are computed
// when the segment is written, with the averages of that moment.
type Pending struct {
	lists map[string]*pendingList
	lens  map[int64][2]uint32
	last  int64
}

type pendingList struct {
	data []byte
	n    int
	prev int64
}

// NewPending is an empty Pending.
func NewPending() *Pending {
	return &Pending{lists: map[string]*pendingList{}, lens: map[int64][2]uint32{}}
}

// Add takes chunk id's terms; ids must come in ascending order.
func (p *Pending) Add(id int64, d analysis.Doc) {
	p.lens[id] = [2]uint32{d.BodyLen, d.IdentsLen}
	p.last = id
	for _, t := range d.Terms {
		l := p.lists[t.Term]
		if l == nil {
			l = &pendingList{}
			p.lists[t.Term] = l
		}
		l.data = binary.AppendUvarint(l.data, uint64(id-l.prev))
		l.data = append(l.data, t.Path, t.Heading, t.Body, t.Idents)
		l.prev = id
		l.n++
	}
}

// Len is how many chunks are pending.
func (p *Pending) Len() int { return len(p.lens) }

// Last is the highest pending chunk id.
func (p *Pending) Last() int64 { return p.last }

// Each calls fn with every term, in order, and its postings with impacts
// computed by params and avg. It stops at fn's first error.
func (p *Pending) Each(params Params, avg Averages, fn func(term string, l *List) error) error {
	terms := make([]string, 0, len(p.lists))
	for t := range p.lists {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	var l List
	for _, term := range terms {
		pl := p.lists[term]
		l.IDs, l.Impacts = l.IDs[:0], l.Impacts[:0]
		id, at := int64(0), 0
		for range pl.n {
			d, k := binary.Uvarint(pl.data[at:])
			at += k
			id += int64(d)
			f := pl.data[at : at+4]
			at += 4
			lens := p.lens[id]
			tf := analysis.TermFreq{Path: f[0], Heading: f[1], Body: f[2], Idents: f[3]}
			l.Add(id, params.Impact(tf, analysis.Doc{BodyLen: lens[0], IdentsLen: lens[1]}, avg))
		}
		if err := fn(term, &l); err != nil {
			return err
		}
	}
	return nil
}
