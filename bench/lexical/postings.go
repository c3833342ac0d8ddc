package lexical

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	porter "github.com/blevesearch/go-porterstemmer"

	"lore/index"
)

// The prototype: BM25 computed in Go over per-term posting lists kept as
// SQLite blobs in a table of their own (doc ids delta-varint, then one
// term-frequency byte per doc), loaded per query term, with MaxScore top-k.
// It scores as FTS5's bm25() does (same k1, b, idf floor, document length
// over all four columns), so its top-k can be checked against FTS5's.

const (
	k1 = 1.2
	b  = 0.75
	// identKey prefixes the postings of the idents column alone: lore
	// matches a squashed identifier in that column only.
	identKey = "\x01"
)

const postingsSchema = `
CREATE TABLE postings(term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL, ub REAL NOT NULL, data BLOB NOT NULL);
CREATE TABLE postings_meta(docs INTEGER NOT NULL, tokens INTEGER NOT NULL, lens BLOB NOT NULL);
`

// tokenize is FTS5's 'porter unicode61' on the texts lore indexes: runs of
// letters and digits, lowercased, tokens of 3 to 64 bytes Porter-stemmed.
// (It does not remove diacritics; the benchmark corpus is ASCII.)
func tokenize(s string, emit func(string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			emit(normTerm(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		emit(normTerm(s[start:]))
	}
}

func normTerm(w string) string {
	w = strings.ToLower(w)
	if len(w) >= 3 && len(w) <= 64 {
		return string(porter.StemWithoutLowerCasing([]rune(w)))
	}
	return w
}

// chunk is one row to index: lore's chunk id and its four FTS5 columns.
type chunk struct {
	id   int64
	cols [4]string
}

type plist struct {
	ids []uint32
	tfs []uint8
}

// buildPostings writes the posting lists of chunks (in id order) into db.
func buildPostings(ctx context.Context, db *sql.DB, chunks []chunk) error {
	lists := map[string]*plist{}
	maxID := chunks[len(chunks)-1].id
	lens := make([]uint32, maxID+1)
	var tokens int64
	counts := map[string]int{}
	for _, c := range chunks {
		clear(counts)
		dl := 0
		for col, text := range c.cols {
			tokenize(text, func(t string) {
				dl++
				counts[t]++
				if col == 3 {
					counts[identKey+t]++
				}
			})
		}
		lens[c.id] = uint32(dl)
		tokens += int64(dl)
		for t, n := range counts {
			l := lists[t]
			if l == nil {
				l = &plist{}
				lists[t] = l
			}
			l.ids = append(l.ids, uint32(c.id))
			l.tfs = append(l.tfs, uint8(min(n, 255)))
		}
	}
	avgdl := float64(tokens) / float64(len(chunks))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, postingsSchema); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO postings(term, df, ub, data) VALUES(?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	var buf []byte
	for t, l := range lists {
		buf = buf[:0]
		prev, ub := uint32(0), 0.0
		for i, id := range l.ids {
			buf = binary.AppendUvarint(buf, uint64(id-prev))
			prev = id
			ub = max(ub, tfPart(float64(l.tfs[i]), float64(lens[id]), avgdl))
		}
		buf = append(buf, l.tfs...)
		if _, err := ins.ExecContext(ctx, t, len(l.ids), ub, buf); err != nil {
			return err
		}
	}
	lb := make([]byte, 4*len(lens))
	for i, n := range lens {
		binary.LittleEndian.PutUint32(lb[4*i:], n)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO postings_meta(docs, tokens, lens) VALUES(?, ?, ?)`, len(chunks), tokens, lb); err != nil {
		return err
	}
	return tx.Commit()
}

// tfPart is BM25's term-frequency factor: FTS5's (k1+1)·f / (f + k1·(1-b+b·D/avgdl)).
func tfPart(tf, dl, avgdl float64) float64 {
	return tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avgdl))
}

// postings searches the posting lists of one database.
type postings struct {
	get   *sql.Stmt
	docs  float64
	avgdl float64
	lens  []uint32 // document length by chunk id, read once
}

func openPostings(ctx context.Context, db *sql.DB) (*postings, error) {
	p := &postings{}
	var tokens int64
	var lb []byte
	if err := db.QueryRowContext(ctx, `SELECT docs, tokens, lens FROM postings_meta`).Scan(&p.docs, &tokens, &lb); err != nil {
		return nil, err
	}
	p.avgdl = float64(tokens) / p.docs
	p.lens = make([]uint32, len(lb)/4)
	for i := range p.lens {
		p.lens[i] = binary.LittleEndian.Uint32(lb[4*i:])
	}
	var err error
	p.get, err = db.PrepareContext(ctx, `SELECT df, ub, data FROM postings WHERE term = ?`)
	return p, err
}

// cursor walks one query term's decoded posting list.
type cursor struct {
	ids  []uint32
	tfs  []uint8
	pos  int
	idf  float64 // times the number of query phrases with this term
	ub   float64 // idf · the largest tfPart in the list
	done bool
}

// terms loads the posting lists of a query's terms, as lore parses it.
func (p *postings) terms(ctx context.Context, query string) ([]*cursor, error) {
	words, idents := index.LexicalTerms(query)
	phrases := map[string]int{}
	for _, w := range words {
		tokenize(w, func(t string) { phrases[t]++ })
	}
	for _, id := range idents {
		tokenize(id, func(t string) { phrases[identKey+t]++ })
	}
	var cs []*cursor
	for t, n := range phrases {
		var df int
		var ub float64
		var data []byte
		err := p.get.QueryRowContext(ctx, t).Scan(&df, &ub, &data)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, err
		}
		c := &cursor{ids: make([]uint32, df), tfs: data[len(data)-df:]}
		prev, at := uint32(0), 0
		for i := range c.ids {
			d, n := binary.Uvarint(data[at:])
			at += n
			prev += uint32(d)
			c.ids[i] = prev
		}
		// FTS5's idf, floored at 1e-6 for terms in more than half the rows.
		idf := math.Log((0.5 + p.docs - float64(df)) / (0.5 + float64(df)))
		if idf <= 0 {
			idf = 1e-6
		}
		c.idf = idf * float64(n)
		c.ub = c.idf * ub
		cs = append(cs, c)
	}
	return cs, nil
}

func (p *postings) score(c *cursor, i int) float64 {
	id := c.ids[i]
	return c.idf * tfPart(float64(c.tfs[i]), float64(p.lens[id]), p.avgdl)
}

type scored struct {
	id    int64
	score float64
}

// better orders by score, then by lower id.
func better(a, b scored) bool { return a.score > b.score || a.score == b.score && a.id < b.id }

type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topK is MaxScore over the decoded lists: terms in ascending order of
// their upper bounds; a prefix of them whose bounds sum to no more than the
// k-th best score so far is non-essential, so only documents in the other
// lists are candidates, and a candidate stops collecting scores as soon as
// what is left cannot lift it into the top k.
func (p *postings) topK(ctx context.Context, query string, k int) ([]int64, error) {
	cs, err := p.terms(ctx, query)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].ub < cs[j].ub })
	prefix := make([]float64, len(cs))
	sum := 0.0
	for i, c := range cs {
		sum += c.ub
		prefix[i] = sum
	}
	h := make(minHeap, 0, k+1)
	theta := -1.0
	firstEss := 0
	for {
		cand := uint32(math.MaxUint32)
		for _, c := range cs[firstEss:] {
			if c.pos < len(c.ids) && c.ids[c.pos] < cand {
				cand = c.ids[c.pos]
			}
		}
		if cand == math.MaxUint32 {
			break
		}
		s := 0.0
		for _, c := range cs[firstEss:] {
			if c.pos < len(c.ids) && c.ids[c.pos] == cand {
				s += p.score(c, c.pos)
				c.pos++
			}
		}
		for i := firstEss - 1; i >= 0; i-- {
			if s+prefix[i] <= theta {
				break
			}
			c := cs[i]
			// Gallop to the first id >= cand.
			step, lo := 1, c.pos
			for lo+step < len(c.ids) && c.ids[lo+step] < cand {
				lo += step
				step *= 2
			}
			j, _ := slices.BinarySearch(c.ids[lo:min(lo+step+1, len(c.ids))], cand)
			c.pos = lo + j
			if c.pos < len(c.ids) && c.ids[c.pos] == cand {
				s += p.score(c, c.pos)
			}
		}
		if len(h) < k || better(scored{int64(cand), s}, h[0]) {
			heap.Push(&h, scored{int64(cand), s})
			if len(h) > k {
				heap.Pop(&h)
			}
			if len(h) == k {
				theta = h[0].score
				for firstEss < len(cs) && prefix[firstEss] <= theta {
					firstEss++
				}
			}
		}
	}
	return ranked(h), nil
}

// exact scores every document that matches any term: the reference top k.
func (p *postings) exact(ctx context.Context, query string, k int) ([]int64, error) {
	cs, err := p.terms(ctx, query)
	if err != nil {
		return nil, err
	}
	acc := map[uint32]float64{}
	for _, c := range cs {
		for i, id := range c.ids {
			acc[id] += p.score(c, i)
		}
	}
	all := make([]scored, 0, len(acc))
	for id, s := range acc {
		all = append(all, scored{int64(id), s})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	all = all[:min(k, len(all))]
	ids := make([]int64, len(all))
	for i, s := range all {
		ids[i] = s.id
	}
	return ids, nil
}

func ranked(h minHeap) []int64 {
	out := make([]int64, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored).id
	}
	return out
}
