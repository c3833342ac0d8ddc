package bm25

import (
	"github.com/lore-cli/lore/index/analysis"

	"encoding/binary"
	"sort"
)

// Pending gathers analysed chunks until they are written as a segment,
// compactly: per term, the chunk ids as varint deltas, each followed by
// its four field frequencies; per chunk, its two lengths and its kind. About 6 bytes a
// posting, where a Doc kept whole costs 40 and more. Impacts are computed
// when the segment is written, with the averages of that moment.
type Pending struct {
	lists map[string]*pendingList
	docs  map[int64]pendingDoc
	last  int64
}

// pendingDoc is what Impact needs of a chunk besides its term.
type pendingDoc struct {
	body, idents uint32
	structured   bool
}

type pendingList struct {
	data []byte
	n    int
	prev int64
}

// NewPending is an empty Pending.
func NewPending() *Pending {
	return &Pending{lists: map[string]*pendingList{}, docs: map[int64]pendingDoc{}}
}

// Add takes chunk id's terms; ids must come in ascending order.
func (p *Pending) Add(id int64, d analysis.Doc) {
	p.docs[id] = pendingDoc{d.BodyLen, d.IdentsLen, d.Structured}
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
func (p *Pending) Len() int { return len(p.docs) }

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
			tf := analysis.TermFreq{Path: f[0], Heading: f[1], Body: f[2], Idents: f[3]}
			pd := p.docs[id]
			l.Add(id, params.Impact(tf, analysis.Doc{BodyLen: pd.body, IdentsLen: pd.idents, Structured: pd.structured}, avg))
		}
		if err := fn(term, &l); err != nil {
			return err
		}
	}
	return nil
}
