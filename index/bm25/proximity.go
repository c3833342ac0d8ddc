package bm25

import (
	"github.com/lore-cli/lore/index/analysis"

	"unicode"
	"unicode/utf8"
)

// ProximityLines is the window of Proximity: three consecutive lines.
const ProximityLines = 3

// Proximity scores how close together a text holds a query's words: the
// largest idf mass of distinct query words within ProximityLines lines.
// BM25 alone cannot tell the chunk that answers from one that says each
// query word somewhere; re-ranking BM25's best by this measured better on
// both public question sets (bench/lexical TestRankVariants). It reads
// the text as Words does, so it needs no positions in the index.
type Proximity struct {
	want   map[string]int // stem → query word
	idf    []float64
	prefix map[[2]byte]bool
	short  bool           // a stem under two bytes: no prefix filter
	cache  map[string]int // lowercased word → query word, or -1
	buf    []byte
	hits   []int // the query words of a multi-term word
	occ    []occurrence
	count  []int
	answer answerKind // what the question asks for (Rerank)
}

type occurrence struct{ line, word int }

// NewProximity is a Proximity for query words (stems, as Words gives
// them) and their idfs.
func NewProximity(stems []string, idf []float64) *Proximity {
	p := &Proximity{want: map[string]int{}, idf: idf, prefix: map[[2]byte]bool{}, cache: map[string]int{}, count: make([]int, len(stems))}
	for i, s := range stems {
		p.want[s] = i
		if len(s) >= 2 {
			p.prefix[[2]byte{s[0], s[1]}] = true
		} else {
			p.short = true
		}
	}
	return p
}

// Score is the best window's idf mass in text.
func (p *Proximity) Score(text string) float64 {
	p.occ = p.occ[:0]
	line := 0
	for j := 0; j < len(text); {
		c := text[j]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
				p.buf = append(p.buf, c)
			case c >= 'A' && c <= 'Z':
				p.buf = append(p.buf, c+'a'-'A')
			default:
				p.flush(line)
				if c == '\n' {
					line++
				}
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[j:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			p.buf = utf8.AppendRune(p.buf, r)
		} else {
			p.flush(line)
		}
		j += n
	}
	p.flush(line)
	clear(p.count)
	best, mass, lo := 0.0, 0.0, 0
	for _, o := range p.occ {
		if p.count[o.word] == 0 {
			mass += p.idf[o.word]
		}
		p.count[o.word]++
		for o.line-p.occ[lo].line >= ProximityLines {
			w := p.occ[lo].word
			if p.count[w]--; p.count[w] == 0 {
				mass -= p.idf[w]
			}
			lo++
		}
		best = max(best, mass)
	}
	return best
}

// flush looks up the word in buf. A word is stemmed (by word, as at index
// time) only when it starts as a query stem does: stemming keeps the first
// two bytes, so no other word can match; a word with diacritics is folded
// first, so it is always looked at. A run of CJK characters is many terms
// (its bigrams), each an occurrence; it is read again each time it comes
// (multiTerm in the cache), as such runs are seldom repeated.
func (p *Proximity) flush(line int) {
	if len(p.buf) == 0 {
		return
	}
	qi, ok := p.cache[string(p.buf)]
	if !ok || qi == multiTerm {
		qi = -1
		if p.short || len(p.buf) < 2 || p.prefix[[2]byte{p.buf[0], p.buf[1]}] || !ascii(p.buf) {
			n, hits := 0, p.hits[:0]
			analysis.Word(string(p.buf), func(t string) {
				n++
				if i, ok := p.want[t]; ok {
					qi = i
					hits = append(hits, i)
				}
			})
			if p.hits = hits; n > 1 {
				for _, i := range hits {
					p.occ = append(p.occ, occurrence{line, i})
				}
				qi = multiTerm
			}
		}
		p.cache[string(p.buf)] = qi
	}
	if qi >= 0 {
		p.occ = append(p.occ, occurrence{line, qi})
	}
	p.buf = p.buf[:0]
}

// multiTerm marks a cached word that gives more than one term.
const multiTerm = -2

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
