package lexical

// TestRankVariants measures ranking functions for lore's own BM25 engine on
// real indexes and question sets: every chunk of a lore index is loaded into
// memory, tokenized here (runs of letters and digits, lowercased, then one of
// several stemmers), and each variant scores every question exhaustively.
// It prints one line per variant with hit@1, hit@5, MRR@5 and hit@20 on each
// set. It needs two lexical lore indexes and their question sets:
//
//	LORE_RANK_PROM=/path/to/prom/index.db LORE_RANK_GO=/path/to/gostd/index.db \
//	  go test -run TestRankVariants -v ./lexical/
//
// The question sets default to ../../../shared/eval/{prometheus_docs,go_stdlib}.jsonl
// (LORE_RANK_PROM_QS, LORE_RANK_GO_QS override them). LORE_RANK_DEBUG=name
// prints, for the variants whose name contains name, every question's rank;
// LORE_RANK_SHOW=name (a whole variant name) prints, for each question that
// variant does not answer first, its terms, its top three and the gold.
//
// What it found (recipe, recipeProx): BM25F over path, heading, body and
// idents, then + 0.5 × the largest idf mass of query words found within 3
// consecutive lines, over the best 50. The run prints the rest: the grids
// around it, what was dropped, a pick-on-one-set check, question-by-question
// changes against FTS5, and the re-rank's cost from re-tokenized text.

import (
	"bufio"
	"container/heap"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/lore-cli/lore/index/analysis"
)

// The four fields lore indexes for a chunk (lexicalColumns), the
// body split in two: words on prose lines (fBody) and on code lines (fCode).
const (
	fPath = iota
	fHead
	fBody
	fIdent
	fCode
	fPart // the parts of camelCase words of the heading and body
	nFields
)

type rchunk struct {
	id         int64
	path       string
	heading    string
	text       string
	start, end int
}

type goldSpan struct {
	Path  string `json:"path"`
	Lines [2]int `json:"lines"`
}

type rquestion struct {
	ID         string     `json:"id"`
	Question   string     `json:"question"`
	Kind       string     `json:"kind"`
	Answerable *bool      `json:"answerable"`
	Gold       []goldSpan `json:"gold"`
}

// corpus is one index's chunks, tokenized once into surface forms
// (lowercased words); stemmers map surface ids to terms afterwards.
type corpus struct {
	name   string
	chunks []rchunk
	file   []int32 // file number of each chunk
	nfiles int
	words  []string // surface forms by id
	wordID map[string]int32
	toks   [][nFields][]int32 // surface ids per field, in order; fBody has every body word, fCode none
	lines  [][]uint16         // line offset (in the chunk) of each body token
	code   [][]bool           // whether each body token is on a code line
	qs     []rquestion
}

func (c *corpus) word(w string) int32 {
	id, ok := c.wordID[w]
	if !ok {
		id = int32(len(c.words))
		c.words = append(c.words, w)
		c.wordID[w] = id
	}
	return id
}

// camelParts splits a word at its case changes (LookPath: look, path;
// HTTPServer: http, server), lowercased; nil when it has one part.
func camelParts(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			parts = append(parts, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	if start == 0 {
		return nil
	}
	return append(parts, strings.ToLower(string(rs[start:])))
}

// splitWords splits s into lowercased runs of letters and digits, calling
// emit with each, the run as written and the number of newlines before it.
func splitWords(s string, emit func(w, orig string, line int)) {
	start, line, startLine := -1, 0, 0
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, startLine = i, line
			}
			continue
		}
		if start >= 0 {
			emit(strings.ToLower(s[start:i]), s[start:i], startLine)
			start = -1
		}
		if r == '\n' {
			line++
		}
	}
	if start >= 0 {
		emit(strings.ToLower(s[start:]), s[start:], startLine)
	}
}

func loadCorpus(t *testing.T, name, db, qpath string) *corpus {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT c.id, d.path, c.heading, c.text, c.start_line, c.end_line FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	c := &corpus{name: name, wordID: map[string]int32{}}
	files := map[string]int32{}
	for rows.Next() {
		var r rchunk
		if err := rows.Scan(&r.id, &r.path, &r.heading, &r.text, &r.start, &r.end); err != nil {
			t.Fatal(err)
		}
		f, ok := files[r.path]
		if !ok {
			f = int32(len(files))
			files[r.path] = f
		}
		c.chunks = append(c.chunks, r)
		c.file = append(c.file, f)
		cols := lexicalColumns(r.path, r.heading, r.text)
		var toks [nFields][]int32
		var lines []uint16
		var code []bool
		codeLine := codeLines(r.path, r.text)
		for fi, text := range cols {
			splitWords(text, func(w, orig string, line int) {
				toks[fi] = append(toks[fi], c.word(w))
				if fi == fHead || fi == fBody {
					for _, p := range camelParts(orig) {
						if len(p) > 1 {
							toks[fPart] = append(toks[fPart], c.word(p))
						}
					}
				}
				if fi == fBody {
					lines = append(lines, uint16(min(line, math.MaxUint16)))
					code = append(code, codeLine[line])
				}
			})
		}
		c.toks = append(c.toks, toks)
		c.lines = append(c.lines, lines)
		c.code = append(c.code, code)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	c.nfiles = len(files)
	f, err := os.Open(qpath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q rquestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		if q.Answerable == nil || *q.Answerable {
			c.qs = append(c.qs, q)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// codeLines tells, for each line of a chunk, whether it is code rather
// than prose: in a Markdown (or other text) file, a line inside a fenced
// block; in a source file, a line that is not a comment. Inside a fence, or
// in source, a line that starts like a comment (//, #, /*, *, --, ;) is prose.
func codeLines(path, text string) []bool {
	doc := false
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown", ".txt", ".rst", ".adoc", ".html", ".htm", "":
		doc = true
	}
	lines := strings.Split(text, "\n")
	out := make([]bool, len(lines))
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if doc && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			fenced = !fenced
			out[i] = true
			continue
		}
		if doc && !fenced {
			continue
		}
		comment := false
		for _, p := range []string{"//", "#", "/*", "*", "--", ";"} {
			if strings.HasPrefix(t, p) {
				comment = true
				break
			}
		}
		out[i] = !comment && t != ""
	}
	return out
}

// Stemmers, each applied to a lowercased word.
var stemmers = map[string]func(string) string{
	// porter is FTS5's 'porter': words of 3 to 64 bytes stemmed.
	"porter": func(w string) string {
		if len(w) >= 3 && len(w) <= 64 {
			return string(porter.StemWithoutLowerCasing([]rune(w)))
		}
		return w
	},
	// snowball is Snowball English (Porter2).
	"snowball": func(w string) string {
		if len(w) >= 3 && len(w) <= 64 {
			env := snowballstem.NewEnv(w)
			english.Stem(env)
			return env.Current()
		}
		return w
	},
	// s is Harman's S stemmer: plurals only.
	"s": func(w string) string {
		n := len(w)
		switch {
		case n > 3 && strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
			return w[:n-3] + "y"
		case n > 3 && strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
			return w[:n-1]
		case n > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "ss"):
			return w[:n-1]
		}
		return w
	},
	"none": func(w string) string { return w },
}

type posting struct {
	doc int32
	tf  [nFields]uint16
}

// rindex is a corpus under one stemmer: posting lists with per-field term
// frequencies, and field lengths.
type rindex struct {
	c       *corpus
	stem    func(string) string
	stemOf  []int32 // surface id -> term id
	termID  map[string]int32
	post    [][]posting
	dfIdent []int32            // documents with the term in the idents field
	df      []int32            // documents with the term in any field but fPart
	lens    [][nFields]float64 // fBody and fCode: the whole body's length
	total   []float64          // all four fields
	avg     [nFields]float64
	avgAll  float64
	n       float64
}

func newIndex(c *corpus, stemName string) *rindex {
	ix := &rindex{c: c, stem: stemmers[stemName], termID: map[string]int32{}}
	ix.stemOf = make([]int32, len(c.words))
	for i, w := range c.words {
		s := ix.stem(w)
		id, ok := ix.termID[s]
		if !ok {
			id = int32(len(ix.termID))
			ix.termID[s] = id
		}
		ix.stemOf[i] = id
	}
	ix.post = make([][]posting, len(ix.termID))
	ix.dfIdent = make([]int32, len(ix.termID))
	ix.df = make([]int32, len(ix.termID))
	ix.lens = make([][nFields]float64, len(c.chunks))
	ix.total = make([]float64, len(c.chunks))
	counts := make([][nFields]uint16, len(ix.termID))
	var touched []int32
	for d, toks := range c.toks {
		touched = touched[:0]
		for f := range nFields {
			for i, w := range toks[f] {
				t := ix.stemOf[w]
				if counts[t] == ([nFields]uint16{}) {
					touched = append(touched, t)
				}
				g := f
				if f == fBody && c.code[d][i] {
					g = fCode
				}
				if counts[t][g] < math.MaxUint16 {
					counts[t][g]++
				}
			}
			ix.lens[d][f] = float64(len(toks[f]))
			if f != fPart {
				ix.total[d] += float64(len(toks[f]))
			}
			ix.avg[f] += float64(len(toks[f]))
		}
		ix.lens[d][fCode] = ix.lens[d][fBody]
		for _, t := range touched {
			ix.post[t] = append(ix.post[t], posting{int32(d), counts[t]})
			if counts[t][fIdent] > 0 {
				ix.dfIdent[t]++
			}
			if tf := counts[t]; tf[fPath]+tf[fHead]+tf[fBody]+tf[fIdent]+tf[fCode] > 0 {
				ix.df[t]++
			}
			counts[t] = [nFields]uint16{}
		}
	}
	ix.n = float64(len(c.chunks))
	for f := range nFields {
		if f != fPart {
			ix.avgAll += ix.avg[f]
		}
		ix.avg[f] /= ix.n
	}
	ix.avgAll /= ix.n
	ix.avg[fCode] = ix.avg[fBody]
	return ix
}

// qterm is one query term.
type qterm struct {
	t     int32 // term id; -1 when no chunk has it
	ident bool  // a squashed identifier, matched in the idents field only
	n     float64
	df    float64 // documents with the term, camelCase parts not counted
	dfP   float64 // documents with the term, camelCase parts counted
	word  string
}

// Query term handling.
const (
	stopLore = "lore" // queryTerms: lore's stopword list, one-letter words dropped
	stopNone = "none" // every word of the question (one-letter words dropped)
)

// query turns a question into terms. Stemmed duplicates are merged into
// one term with multiplicity n (FTS5 scores each OR'ed phrase, so a stem
// the question has twice counts twice).
func (ix *rindex) query(text, stop string, maxDF float64) []qterm {
	words, idents := queryTerms(text)
	if stop == stopNone {
		words = words[:0]
		seen := map[string]bool{}
		splitWords(text, func(w, _ string, _ int) {
			if len(w) > 1 && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		})
	}
	var q []qterm
	add := func(w string, ident bool) {
		s := ix.stem(w)
		id, ok := ix.termID[s]
		if !ok {
			id = -1
		}
		for i := range q {
			if q[i].t == id && q[i].ident == ident && q[i].word == s {
				q[i].n++
				return
			}
		}
		df, dfP := 0.0, 0.0
		if id >= 0 {
			if ident {
				df = float64(ix.dfIdent[id])
				dfP = df
			} else {
				df = float64(ix.df[id])
				dfP = float64(len(ix.post[id]))
			}
		}
		if maxDF > 0 && df > maxDF*ix.n {
			return
		}
		q = append(q, qterm{t: id, ident: ident, n: 1, df: df, dfP: dfP, word: s})
	}
	for _, w := range words {
		add(w, false)
	}
	for _, w := range idents {
		add(w, true)
	}
	return q
}

// IDF formulas.
const (
	idfFTS5   = iota // log((N-df+0.5)/(df+0.5)), floored at 1e-6 (FTS5 bm25())
	idfLucene        // log(1+(N-df+0.5)/(df+0.5)), always positive (Lucene, Anserini)
)

func idf(kind int, df, n float64) float64 {
	switch kind {
	case idfLucene:
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	default:
		v := math.Log((n - df + 0.5) / (df + 0.5))
		if v <= 0 {
			v = 1e-6
		}
		return v
	}
}

// scorer is a first-stage ranking function.
type scorer struct {
	k1, b float64
	// bm25f: per-field tf normalised by its own length (bf) and weighted (w)
	// before one saturation; otherwise FTS5's pooled form: tf = Σ w·tf over
	// fields, length over all four fields.
	bm25f  bool
	w      [nFields]float64
	bf     [nFields]float64
	idf    int
	dedupe bool // a stem counted once however often the question has it
	// coord multiplies by (share of the query's idf the chunk matches)^coord.
	coord float64
	stop  string
	maxDF float64 // query words in more than this share of chunks are dropped (0: none)
}

var fts5 = scorer{k1: 1.2, b: 0.75, w: [nFields]float64{1, 1, 1, 1, 1, 0}, stop: stopLore}

// run scores every chunk matching q; matched gets the idf mass each chunk
// matches.
func (ix *rindex) run(q []qterm, s scorer, score, matched []float64) {
	clear(score)
	clear(matched)
	for _, t := range q {
		if t.t < 0 {
			continue
		}
		df := t.df
		if s.w[fPart] > 0 {
			df = t.dfP
		}
		if df == 0 {
			continue
		}
		w := idf(s.idf, df, ix.n)
		if !s.dedupe {
			w *= t.n
		}
		for _, p := range ix.post[t.t] {
			var tf float64
			d := p.doc
			if s.bm25f {
				if t.ident {
					f := fIdent
					tf = s.w[f] * float64(p.tf[f]) / (1 - s.bf[f] + s.bf[f]*ix.lens[d][f]/ix.avg[f])
				} else {
					for f := range nFields {
						if p.tf[f] > 0 {
							bf := s.bf[f]
							if f == fCode {
								bf = s.bf[fBody] // one length for the whole body
							}
							tf += s.w[f] * float64(p.tf[f]) / (1 - bf + bf*ix.lens[d][f]/ix.avg[f])
						}
					}
				}
				if tf == 0 {
					continue
				}
				score[d] += w * tf * (s.k1 + 1) / (tf + s.k1)
			} else {
				if t.ident {
					tf = s.w[fIdent] * float64(p.tf[fIdent])
				} else {
					for f := range nFields {
						tf += s.w[f] * float64(p.tf[f])
					}
				}
				if tf == 0 {
					continue
				}
				score[d] += w * tf * (s.k1 + 1) / (tf + s.k1*(1-s.b+s.b*ix.total[d]/ix.avgAll))
			}
			matched[d] += idf(idfLucene, df, ix.n)
		}
	}
	if s.coord > 0 {
		all := 0.0
		for _, t := range q {
			if t.t >= 0 {
				all += idf(idfLucene, t.df, ix.n)
			}
		}
		for d := range score {
			if score[d] > 0 {
				score[d] *= math.Pow(matched[d]/all, s.coord)
			}
		}
	}
}

type cand struct {
	doc   int32
	score float64
}

// better orders by score, then by lower chunk id (FTS5's order for ties).
func betterCand(a, b cand) bool { return a.score > b.score || a.score == b.score && a.doc < b.doc }

type candHeap []cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return betterCand(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// top is the k best chunks with a positive score, best first.
func top(score []float64, k int) []cand {
	h := make(candHeap, 0, k+1)
	for d, s := range score {
		if s <= 0 {
			continue
		}
		c := cand{int32(d), s}
		if len(h) < k {
			heap.Push(&h, c)
		} else if betterCand(c, h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, func(a, b cand) int {
		if betterCand(a, b) {
			return -1
		}
		return 1
	})
	return h
}

func sortCands(cs []cand) {
	slices.SortStableFunc(cs, func(a, b cand) int {
		if betterCand(a, b) {
			return -1
		}
		if betterCand(b, a) {
			return 1
		}
		return 0
	})
}

// A reranker reorders the first stage's top candidates; its context has
// the query and the first stage's full score array.
type reranker func(x *rctx, cs []cand)

type rctx struct {
	ix      *rindex
	q       []qterm
	s       scorer
	score   []float64
	matched []float64
}

// variant is one ranking to measure.
type variant struct {
	name   string
	stem   string
	s      scorer
	depth  int // candidates handed to rerank
	rerank reranker
	// expand, when set, rewrites the query after a first pass (RM3).
	expand func(x *rctx, first []cand) []qterm
}

type metrics struct {
	h1, h5, mrr, h20 float64
	ranks            []int
}

// rankOf is the 1-based rank of the first hit among ids, 0 for none.
func rankOf(c *corpus, q rquestion, cs []cand) int {
	for i, cd := range cs {
		ch := c.chunks[cd.doc]
		for _, g := range q.Gold {
			if ch.path == g.Path && ch.start <= g.Lines[1] && ch.end >= g.Lines[0] {
				return i + 1
			}
		}
	}
	return 0
}

// evaluate runs v over ix's questions.
func evaluate(ix *rindex, v variant) metrics {
	var m metrics
	score := make([]float64, len(ix.c.chunks))
	matched := make([]float64, len(ix.c.chunks))
	for _, qq := range ix.c.qs {
		x := &rctx{ix: ix, s: v.s, score: score, matched: matched}
		x.q = ix.query(qq.Question, v.s.stop, v.s.maxDF)
		depth := max(20, v.depth)
		ix.run(x.q, v.s, score, matched)
		cs := top(score, depth)
		if v.expand != nil {
			x.q = v.expand(x, cs)
			ix.run(x.q, v.s, score, matched)
			cs = top(score, depth)
		}
		if v.rerank != nil {
			v.rerank(x, cs)
		}
		m.ranks = append(m.ranks, rankOf(ix.c, qq, cs[:min(20, len(cs))]))
	}
	m.summarize()
	return m
}

// summarize computes the metrics from the ranks.
func (m *metrics) summarize() {
	m.h1, m.h5, m.mrr, m.h20 = 0, 0, 0, 0
	for _, r := range m.ranks {
		if r == 1 {
			m.h1++
		}
		if r > 0 && r <= 5 {
			m.h5++
			m.mrr += 1 / float64(r)
		}
		if r > 0 {
			m.h20++
		}
	}
	n := float64(max(len(m.ranks), 1))
	m.h1, m.h5, m.mrr, m.h20 = m.h1/n, m.h5/n, m.mrr/n, m.h20/n
}

// explain prints, for each question v does not answer first, the top
// three and where the best gold chunk ranks.
func explain(ix *rindex, v variant) {
	score := make([]float64, len(ix.c.chunks))
	matched := make([]float64, len(ix.c.chunks))
	for _, qq := range ix.c.qs {
		x := &rctx{ix: ix, s: v.s, score: score, matched: matched}
		x.q = ix.query(qq.Question, v.s.stop, v.s.maxDF)
		ix.run(x.q, v.s, score, matched)
		cs := top(score, len(score))
		if v.expand != nil {
			x.q = v.expand(x, cs)
			ix.run(x.q, v.s, score, matched)
			cs = top(score, len(score))
		}
		if v.rerank != nil {
			n := min(max(20, v.depth), len(cs))
			v.rerank(x, cs[:n])
		}
		r := rankOf(ix.c, qq, cs)
		if r == 1 {
			continue
		}
		var terms []string
		for _, t := range x.q {
			terms = append(terms, fmt.Sprintf("%s%s(%.0f)", map[bool]string{true: "#"}[t.ident], t.word, t.df))
		}
		fmt.Printf("  %s rank %d: %s\n    terms: %s\n", qq.ID, r, qq.Question, strings.Join(terms, " "))
		line := func(i int) {
			c := cs[i]
			ch := ix.c.chunks[c.doc]
			fmt.Printf("    %3d %7.3f len %4.0f  %s:%d-%d  %.60q\n", i+1, c.score, ix.total[c.doc], ch.path, ch.start, ch.end, ch.heading)
		}
		for i := range min(3, len(cs)) {
			line(i)
		}
		if r > 3 {
			line(r - 1)
		}
	}
}

// ---- rerankers ----

// occurrence is a query word at a body position.
type occurrence struct {
	pos  int32
	line int32
	q    int // index into the query
}

// occurrences lists the body positions of q's word terms in chunk d.
func occurrences(x *rctx, d int32, buf []occurrence) []occurrence {
	buf = buf[:0]
	want := map[int32]int{}
	for i, t := range x.q {
		if !t.ident && t.t >= 0 {
			want[t.t] = i
		}
	}
	lines := x.ix.c.lines[d]
	for p, w := range x.ix.c.toks[d][fBody] {
		if i, ok := want[x.ix.stemOf[w]]; ok {
			buf = append(buf, occurrence{int32(p), int32(lines[p]), i})
		}
	}
	return buf
}

// windowMass is the largest idf mass of distinct query words found together
// in a window of span positions (tokens, or lines when byLine).
// Query words in always (when not nil) count as in every window.
func windowMass(x *rctx, occ []occurrence, span int32, byLine bool, always []bool) float64 {
	at := func(o occurrence) int32 {
		if byLine {
			return o.line
		}
		return o.pos
	}
	count := make([]int, len(x.q))
	best, mass, lo := 0.0, 0.0, 0
	for i, a := range always {
		if a {
			count[i]++
			mass += idf(idfLucene, x.q[i].df, x.ix.n)
		}
	}
	best = mass
	for _, o := range occ {
		if count[o.q] == 0 {
			mass += idf(idfLucene, x.q[o.q].df, x.ix.n)
		}
		count[o.q]++
		for at(o)-at(occ[lo]) >= span {
			count[occ[lo].q]--
			if count[occ[lo].q] == 0 {
				mass -= idf(idfLucene, x.q[occ[lo].q].df, x.ix.n)
			}
			lo++
		}
		best = max(best, mass)
	}
	return best
}

// proxWindow adds lambda × the best window's idf mass to the score.
func proxWindow(span int32, byLine bool, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		var buf []occurrence
		for i := range cs {
			buf = occurrences(x, cs[i].doc, buf)
			cs[i].score += lambda * windowMass(x, buf, span, byLine, nil)
		}
		sortCands(cs)
	}
}

// proxText is proxWindow by lines as lore can compute it at query time,
// without positions in the index: each candidate's text re-tokenized, its
// words stemmed through a cache for the query.
func proxText(span int32, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		want := map[string]int{} // stem -> query word
		for i, t := range x.q {
			if !t.ident && t.t >= 0 {
				want[t.word] = i
			}
		}
		cache := map[string]int{} // word as lowercased -> query word, or -1
		var occ []occurrence
		for i := range cs {
			occ = occ[:0]
			pos := int32(0)
			splitWords(x.ix.c.chunks[cs[i].doc].text, func(w, _ string, line int) {
				qi, ok := cache[w]
				if !ok {
					qi = -1
					if j, ok := want[x.ix.stem(w)]; ok {
						qi = j
					}
					cache[w] = qi
				}
				if qi >= 0 {
					occ = append(occ, occurrence{pos, int32(line), qi})
				}
				pos++
			})
			cs[i].score += lambda * windowMass(x, occ, span, true, nil)
		}
		sortCands(cs)
	}
}

// proxTextFast is proxText without allocating per word: words are
// lowercased into one buffer and looked up in the query's cache by bytes,
// and only words sharing their first two bytes with a query stem are
// stemmed. (The test checks that it ranks as proxWindow does.)
func proxTextFast(span int32, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		want := map[string]int{} // stem -> query word
		for i, t := range x.q {
			if !t.ident && t.t >= 0 {
				want[t.word] = i
			}
		}
		prefix := map[[2]byte]bool{}
		short := false // a stem of one byte ("ies" → "i"): no filtering
		for w := range want {
			if len(w) >= 2 {
				prefix[[2]byte{w[0], w[1]}] = true
			} else {
				short = true
			}
		}
		cache := map[string]int{} // word as lowercased -> query word, or -1
		var occ []occurrence
		buf := make([]byte, 0, 64)
		for i := range cs {
			occ = occ[:0]
			pos, line := int32(0), int32(0)
			text := x.ix.c.chunks[cs[i].doc].text
			flush := func() {
				if len(buf) == 0 {
					return
				}
				qi, ok := cache[string(buf)]
				if !ok {
					qi = -1
					// Stemming keeps a word's first two bytes: only words
					// that start as a query stem does can match it.
					if short || len(buf) < 2 || prefix[[2]byte{buf[0], buf[1]}] {
						w := string(buf)
						if j, ok := want[x.ix.stem(w)]; ok {
							qi = j
						}
						cache[w] = qi
					}
				}
				if qi >= 0 {
					occ = append(occ, occurrence{pos, line, qi})
				}
				pos++
				buf = buf[:0]
			}
			for j := 0; j < len(text); {
				c := text[j]
				if c < utf8.RuneSelf {
					switch {
					case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
						buf = append(buf, c)
					case c >= 'A' && c <= 'Z':
						buf = append(buf, c+'a'-'A')
					default:
						flush()
						if c == '\n' {
							line++
						}
					}
					j++
					continue
				}
				r, n := utf8.DecodeRuneInString(text[j:])
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					buf = utf8.AppendRune(buf, unicode.ToLower(r))
				} else {
					flush()
				}
				j += n
			}
			flush()
			cs[i].score += lambda * windowMass(x, occ, span, true, nil)
		}
		sortCands(cs)
	}
}

// headingTerms marks the query words found in chunk d's heading breadcrumb.
func headingTerms(x *rctx, d int32) []bool {
	in := make([]bool, len(x.q))
	for _, w := range x.ix.c.toks[d][fHead] {
		t := x.ix.stemOf[w]
		for i, q := range x.q {
			if !q.ident && q.t == t {
				in[i] = true
			}
		}
	}
	return in
}

// proxWindowHead is proxWindow with the heading's words in every window.
func proxWindowHead(span int32, byLine bool, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		var buf []occurrence
		for i := range cs {
			buf = occurrences(x, cs[i].doc, buf)
			cs[i].score += lambda * windowMass(x, buf, span, byLine, headingTerms(x, cs[i].doc))
		}
		sortCands(cs)
	}
}

// proxWindowNorm multiplies the score by 1 + lambda × the best window's share
// of the query's idf.
func proxWindowNorm(span int32, byLine bool, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		all := 0.0
		for _, t := range x.q {
			if !t.ident && t.t >= 0 {
				all += idf(idfLucene, t.df, x.ix.n)
			}
		}
		if all == 0 {
			return
		}
		var buf []occurrence
		for i := range cs {
			buf = occurrences(x, cs[i].doc, buf)
			cs[i].score *= 1 + lambda*windowMass(x, buf, span, byLine, nil)/all
		}
		sortCands(cs)
	}
}

// bm25tp is Rasolofo and Savoy's term-pair proximity: for each pair of
// distinct query words within maxDist body positions, tpi = Σ 1/d²; added
// as Σ min(idf) · tpi·(k1+1)/(tpi+K), with BM25's K for the chunk.
func bm25tp(maxDist int32, lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		var buf []occurrence
		nq := len(x.q)
		acc := make([]float64, nq*nq)
		for i := range cs {
			d := cs[i].doc
			buf = occurrences(x, d, buf)
			clear(acc)
			for a := range buf {
				for b := a + 1; b < len(buf) && buf[b].pos-buf[a].pos <= maxDist; b++ {
					if buf[a].q != buf[b].q {
						dist := float64(buf[b].pos - buf[a].pos)
						qa, qb := min(buf[a].q, buf[b].q), max(buf[a].q, buf[b].q)
						acc[qa*nq+qb] += 1 / (dist * dist)
					}
				}
			}
			k := x.s.k1 * (1 - x.s.b + x.s.b*x.ix.total[d]/x.ix.avgAll)
			add := 0.0
			for qa := range nq {
				for qb := qa + 1; qb < nq; qb++ {
					if v := acc[qa*nq+qb]; v > 0 {
						w := min(idf(x.s.idf, x.q[qa].df, x.ix.n), idf(x.s.idf, x.q[qb].df, x.ix.n))
						add += w * v * (x.s.k1 + 1) / (v + k)
					}
				}
			}
			cs[i].score += lambda * add
		}
		sortCands(cs)
	}
}

// filePrior adds lambda × the best score of any chunk of the same file.
func filePrior(lambda float64) reranker {
	return func(x *rctx, cs []cand) {
		best := map[int32]float64{}
		for d, s := range x.score {
			f := x.ix.c.file[d]
			if s > best[f] {
				best[f] = s
			}
		}
		for i := range cs {
			cs[i].score += lambda * best[x.ix.c.file[cs[i].doc]]
		}
		sortCands(cs)
	}
}

// chain runs rerankers in turn.
func chain(rs ...reranker) reranker {
	return func(x *rctx, cs []cand) {
		for _, r := range rs {
			r(x, cs)
		}
	}
}

// rm3 expands the query with the fbTerms heaviest terms of the fbDocs best
// chunks (weighted by their share of the first-pass score), original terms
// kept at weight orig.
func rm3(fbDocs, fbTerms int, orig float64) func(x *rctx, first []cand) []qterm {
	return func(x *rctx, first []cand) []qterm {
		fb := first[:min(fbDocs, len(first))]
		sum := 0.0
		for _, c := range fb {
			sum += c.score
		}
		weight := map[int32]float64{}
		for _, c := range fb {
			toks := x.ix.c.toks[c.doc]
			n := 0
			for f := range nFields {
				n += len(toks[f])
			}
			for f := range nFields {
				for _, w := range toks[f] {
					weight[x.ix.stemOf[w]] += c.score / sum / float64(n)
				}
			}
		}
		inQ := map[int32]bool{}
		for _, t := range x.q {
			inQ[t.t] = true
		}
		type tw struct {
			t int32
			w float64
		}
		var cands []tw
		for t, w := range weight {
			// Terms in more than a tenth of the chunks carry no topic.
			if !inQ[t] && float64(len(x.ix.post[t])) < 0.1*x.ix.n {
				cands = append(cands, tw{t, w})
			}
		}
		sort.Slice(cands, func(i, j int) bool {
			return cands[i].w > cands[j].w || cands[i].w == cands[j].w && cands[i].t < cands[j].t
		})
		cands = cands[:min(fbTerms, len(cands))]
		tot := 0.0
		for _, c := range cands {
			tot += c.w
		}
		q := make([]qterm, 0, len(x.q)+len(cands))
		for _, t := range x.q {
			t.n *= orig
			q = append(q, t)
		}
		for _, c := range cands {
			// A weight relative to one original term: the expansion terms
			// share (1-orig) × the query's length.
			q = append(q, qterm{t: c.t, n: (1 - orig) * float64(len(x.q)) * c.w / tot, df: float64(x.ix.df[c.t]), dfP: float64(len(x.ix.post[c.t]))})
		}
		return q
	}
}

// ---- the test ----

// recipe is the first stage the measurements pick: BM25F over lore's four
// fields (path and heading unnormalised, heading doubled; body and idents
// normalised with b 0.5, idents halved), k1 1.2, Lucene's idf.
var recipe = scorer{k1: 1.2, bm25f: true, idf: idfLucene, stop: stopLore,
	w:  [nFields]float64{fPath: 1, fHead: 2, fBody: 1, fIdent: 0.5, fCode: 1},
	bf: [nFields]float64{fPath: 0, fHead: 0, fBody: 0.5, fIdent: 0.5, fCode: 0.5}}

// recipeProx is the re-rank the measurements pick: + 0.5 × the idf mass of
// the query words found within 3 consecutive lines, over the best 50.
const recipeDepth = 50

func recipeProx() reranker { return proxWindow(3, true, 0.5) }

func TestRankVariants(t *testing.T) {
	promDB, goDB := os.Getenv("LORE_RANK_PROM"), os.Getenv("LORE_RANK_GO")
	if promDB == "" || goDB == "" {
		t.Skip("set LORE_RANK_PROM and LORE_RANK_GO to the index.db of a lexical lore index of the Prometheus docs and of GOROOT/src")
	}
	qpath := func(env, def string) string {
		if p := os.Getenv(env); p != "" {
			return p
		}
		return def
	}
	start := time.Now()
	sets := []*corpus{
		loadCorpus(t, "prom", promDB, qpath("LORE_RANK_PROM_QS", "../../../shared/eval/prometheus_docs.jsonl")),
		loadCorpus(t, "go", goDB, qpath("LORE_RANK_GO_QS", "../../../shared/eval/go_stdlib.jsonl")),
	}
	t.Logf("loaded %d + %d chunks, %d + %d questions in %v", len(sets[0].chunks), len(sets[1].chunks), len(sets[0].qs), len(sets[1].qs), time.Since(start).Round(time.Millisecond))
	indexes := map[string][]*rindex{}
	idx := func(stem string) []*rindex {
		if ixs, ok := indexes[stem]; ok {
			return ixs
		}
		start := time.Now()
		ixs := []*rindex{newIndex(sets[0], stem), newIndex(sets[1], stem)}
		t.Logf("postings with the %s stemmer in %v", stem, time.Since(start).Round(time.Millisecond))
		indexes[stem] = ixs
		return ixs
	}
	debug, show := os.Getenv("LORE_RANK_DEBUG"), os.Getenv("LORE_RANK_SHOW")
	fmt.Printf("%-50s | %-27s | %-27s\n", "", fmt.Sprintf("Prometheus docs (%d)", len(sets[0].qs)), fmt.Sprintf("Go stdlib (%d)", len(sets[1].qs)))
	fmt.Printf("%-50s | %5s %5s %5s %5s | %5s %5s %5s %5s\n", "variant", "h@1", "h@5", "MRR", "h@20", "h@1", "h@5", "MRR", "h@20")
	run := func(v variant) [2]metrics {
		if v.stem == "" {
			v.stem = "porter"
		}
		var out [2]metrics
		for i, ix := range idx(v.stem) {
			out[i] = evaluate(ix, v)
		}
		return out
	}
	print := func(name string, out [2]metrics) {
		p, g := out[0], out[1]
		fmt.Printf("%-50s | %.3f %.3f %.3f %.3f | %.3f %.3f %.3f %.3f\n", name, p.h1, p.h5, p.mrr, p.h20, g.h1, g.h5, g.mrr, g.h20)
	}
	var all [][2]metrics // every variant measured, for the oracle below
	measure := func(v variant) [2]metrics {
		out := run(v)
		print(v.name, out)
		if debug != "" && strings.Contains(v.name, debug) {
			for i, c := range sets {
				var b strings.Builder
				for j, q := range c.qs {
					fmt.Fprintf(&b, " %s:%d", q.ID, out[i].ranks[j])
				}
				fmt.Printf("    %s ranks:%s\n", c.name, b.String())
			}
		}
		if show != "" && v.name == show {
			if v.stem == "" {
				v.stem = "porter"
			}
			for _, ix := range idx(v.stem) {
				explain(ix, v)
			}
		}
		all = append(all, out)
		return out
	}
	section := func(s string) { fmt.Printf("-- %s\n", s) }
	with := func(s scorer, change func(*scorer)) scorer {
		change(&s)
		return s
	}

	section("0. today: FTS5 bm25() reproduced (pooled fields, k1 1.2, b 0.75, porter, lore's stopwords)")
	today := measure(variant{name: "fts5", s: fts5})

	section("1. pooled BM25 (FTS5's form), k1 × b")
	for _, k1 := range []float64{0.3, 0.5, 0.8, 1.2, 2.0} {
		for _, b := range []float64{0.3, 0.5, 0.75, 0.9, 1.0} {
			measure(variant{name: fmt.Sprintf("pooled k1=%.1f b=%.2f", k1, b), s: with(fts5, func(s *scorer) { s.k1, s.b = k1, b })})
		}
	}

	section("2. BM25F (path w1 b0, heading w2 b0, body w1 b.5, idents w.5 b.5, k1 1.2, Lucene idf) and one change at a time")
	measure(variant{name: "bm25f", s: recipe})
	for _, k1 := range []float64{0.8, 1.0, 1.5, 2.0} {
		measure(variant{name: fmt.Sprintf("bm25f k1=%.1f", k1), s: with(recipe, func(s *scorer) { s.k1 = k1 })})
	}
	for _, b := range []float64{0.3, 0.75, 0.9} {
		measure(variant{name: fmt.Sprintf("bm25f body b=%.2f", b), s: with(recipe, func(s *scorer) { s.bf[fBody] = b })})
	}
	for _, w := range []float64{1, 4} {
		measure(variant{name: fmt.Sprintf("bm25f heading w=%.0f", w), s: with(recipe, func(s *scorer) { s.w[fHead] = w })})
	}
	for _, w := range []float64{2, 4} {
		measure(variant{name: fmt.Sprintf("bm25f path w=%.0f", w), s: with(recipe, func(s *scorer) { s.w[fPath] = w })})
	}
	measure(variant{name: "bm25f idents w=1", s: with(recipe, func(s *scorer) { s.w[fIdent] = 1 })})
	measure(variant{name: "bm25f idents b=0", s: with(recipe, func(s *scorer) { s.bf[fIdent] = 0 })})
	measure(variant{name: "bm25f path, heading b=0.5", s: with(recipe, func(s *scorer) { s.bf[fPath], s.bf[fHead] = 0.5, 0.5 })})
	measure(variant{name: "bm25f FTS5's idf (floored at 1e-6)", s: with(recipe, func(s *scorer) { s.idf = idfFTS5 })})
	measure(variant{name: "bm25f stemmed duplicates counted once", s: with(recipe, func(s *scorer) { s.dedupe = true })})

	section("3. proximity re-rank of the best N (+λ × idf mass of distinct query words in the best window)")
	measure(variant{name: "fts5 + win 3 lines λ.5 N50", s: fts5, depth: 50, rerank: proxWindow(3, true, 0.5)})
	for _, span := range []int32{1, 2, 3, 5} {
		for _, lam := range []float64{0.25, 0.5, 1} {
			measure(variant{name: fmt.Sprintf("bm25f + win %d lines λ%.2f N50", span, lam), s: recipe, depth: 50, rerank: proxWindow(span, true, lam)})
		}
	}
	for _, n := range []int{20, 100, 200} {
		measure(variant{name: fmt.Sprintf("bm25f + win 3 lines λ.5 N%d", n), s: recipe, depth: n, rerank: proxWindow(3, true, 0.5)})
	}
	for _, span := range []int32{10, 20, 40} {
		measure(variant{name: fmt.Sprintf("bm25f + win %d tokens λ.5 N50", span), s: recipe, depth: 50, rerank: proxWindow(span, false, 0.5)})
	}
	measure(variant{name: "bm25f + win 3 lines with heading λ.5 N50", s: recipe, depth: 50, rerank: proxWindowHead(3, true, 0.5)})
	measure(variant{name: "bm25f × (1 + share of query idf in 3 lines) N50", s: recipe, depth: 50, rerank: proxWindowNorm(3, true, 1)})
	for _, lam := range []float64{0.5, 1} {
		measure(variant{name: fmt.Sprintf("bm25f + BM25TP pairs ≤5 apart λ%.1f N50", lam), s: recipe, depth: 50, rerank: bm25tp(5, lam)})
	}

	section("4. query terms: stemmer × stopwords (on bm25f + win 3 lines λ.5 N50)")
	for _, stem := range []string{"porter", "snowball", "s", "none"} {
		for _, stop := range []string{stopLore, stopNone} {
			for _, maxDF := range []float64{0, 0.1} {
				name := fmt.Sprintf("%s, stopwords %s", stem, stop)
				if maxDF > 0 {
					name += fmt.Sprintf(", df > %.0f%% dropped", 100*maxDF)
				}
				measure(variant{name: name, stem: stem, s: with(recipe, func(s *scorer) { s.stop, s.maxDF = stop, maxDF }), depth: recipeDepth, rerank: recipeProx()})
			}
		}
	}

	section("5. other features (on bm25f + win 3 lines λ.5 N50)")
	final := measure(variant{name: "recipe: bm25f + win 3 lines λ.5 N50", s: recipe, depth: recipeDepth, rerank: recipeProx()})
	for _, c := range []float64{0.5, 1} {
		measure(variant{name: fmt.Sprintf("coord: × (share of query idf matched)^%.1f", c), s: with(recipe, func(s *scorer) { s.coord = c }), depth: recipeDepth, rerank: recipeProx()})
	}
	for _, l := range []float64{0.25, 0.5} {
		measure(variant{name: fmt.Sprintf("file prior: + %.2f × best score in the file", l), s: recipe, depth: recipeDepth, rerank: chain(recipeProx(), filePrior(l))})
	}
	for _, orig := range []float64{0.5, 0.8} {
		measure(variant{name: fmt.Sprintf("RM3 10 chunks, 10 terms, original weight %.1f", orig), s: recipe, depth: recipeDepth, rerank: recipeProx(), expand: rm3(10, 10, orig)})
	}
	for _, w := range []float64{0.5, 0.25} {
		measure(variant{name: fmt.Sprintf("body words on code lines weighted %.2f", w), s: with(recipe, func(s *scorer) { s.w[fCode] = w }), depth: recipeDepth, rerank: recipeProx()})
	}
	for _, w := range []float64{0.25, 1} {
		measure(variant{name: fmt.Sprintf("camelCase parts indexed, weight %.2f", w), s: with(recipe, func(s *scorer) { s.w[fPart] = w }), depth: recipeDepth, rerank: recipeProx()})
	}

	// The ceiling of everything above: each question at the best rank any
	// variant gave it.
	var oracle [2]metrics
	for i, c := range sets {
		for j := range c.qs {
			best := 0
			for _, out := range all {
				if r := out[i].ranks[j]; r > 0 && (best == 0 || r < best) {
					best = r
				}
			}
			oracle[i].ranks = append(oracle[i].ranks, best)
		}
		oracle[i].summarize()
	}
	print(fmt.Sprintf("oracle: each question's best rank of the %d above", len(all)), oracle)

	section("6. overfitting check: BM25F grid (k1, body b, heading w, path w, idents w) + win 3 lines; pick on one set, score on the other")
	type pick struct {
		name string
		out  [2]metrics
	}
	var grid []pick
	for _, k1 := range []float64{0.8, 1.2, 2.0} {
		for _, bb := range []float64{0.3, 0.5, 0.75} {
			for _, wh := range []float64{1, 2, 4} {
				for _, wp := range []float64{1, 2} {
					for _, wi := range []float64{0.5, 1} {
						s := with(recipe, func(s *scorer) {
							s.k1, s.bf[fBody], s.bf[fCode], s.w[fHead], s.w[fPath], s.w[fIdent] = k1, bb, bb, wh, wp, wi
						})
						name := fmt.Sprintf("k1=%.1f b=%.2f wh=%.0f wp=%.0f wi=%.1f", k1, bb, wh, wp, wi)
						grid = append(grid, pick{name, run(variant{name: name, s: s, depth: recipeDepth, rerank: recipeProx()})})
					}
				}
			}
		}
	}
	objective := func(m metrics) float64 { return m.h5 + m.mrr }
	for i, c := range sets {
		best := grid[0]
		for _, g := range grid {
			if objective(g.out[i]) > objective(best.out[i]) {
				best = g
			}
		}
		print(fmt.Sprintf("best on %s: %s", c.name, best.name), best.out)
	}
	for i, c := range sets {
		var vals []float64
		for _, g := range grid {
			vals = append(vals, objective(g.out[i]))
		}
		slices.Sort(vals)
		fmt.Printf("   %s: h@5+MRR over the %d grid points: min %.3f, median %.3f, max %.3f; the recipe %.3f\n", c.name, len(vals), vals[0], vals[len(vals)/2], vals[len(vals)-1], objective(final[i]))
	}

	section("7. the recipe against today, question by question (ranks within the top 20; 0 = not there)")
	for i, c := range sets {
		var better, worse, gained, lost []string
		for j, q := range c.qs {
			a, b := today[i].ranks[j], final[i].ranks[j]
			switch {
			case a == b:
			case b > 0 && (a == 0 || b < a):
				better = append(better, fmt.Sprintf("%s %d→%d", q.ID, a, b))
			default:
				worse = append(worse, fmt.Sprintf("%s %d→%d", q.ID, a, b))
			}
			in5 := func(r int) bool { return r > 0 && r <= 5 }
			if in5(b) && !in5(a) {
				gained = append(gained, q.ID)
			}
			if in5(a) && !in5(b) {
				lost = append(lost, q.ID)
			}
		}
		fmt.Printf("   %s: %d better, %d worse; into the top 5: %v; out of it: %v\n", c.name, len(better), len(worse), gained, lost)
		fmt.Printf("      better: %s\n      worse: %s\n", strings.Join(better, ", "), strings.Join(worse, ", "))
	}

	// What the re-rank costs when lore re-tokenizes the candidates' texts
	// at query time instead of storing positions: it must rank as the
	// pre-tokenized re-rank does.
	for i, ix := range idx("porter") {
		for _, r := range []reranker{proxText(3, 0.5), proxTextFast(3, 0.5)} {
			got := evaluate(ix, variant{name: "recipe, proximity from text", s: recipe, depth: recipeDepth, rerank: r})
			if !slices.Equal(got.ranks, final[i].ranks) {
				t.Errorf("%s: proximity from re-tokenized text ranks %v, from stored tokens %v", ix.c.name, got.ranks, final[i].ranks)
			}
		}
		score := make([]float64, len(ix.c.chunks))
		matched := make([]float64, len(ix.c.chunks))
		var first, prox, fast time.Duration
		for _, qq := range ix.c.qs {
			x := &rctx{ix: ix, s: recipe, score: score, matched: matched}
			t0 := time.Now()
			x.q = ix.query(qq.Question, recipe.stop, 0)
			ix.run(x.q, recipe, score, matched)
			cs := top(score, recipeDepth)
			t1 := time.Now()
			proxText(3, 0.5)(x, slices.Clone(cs))
			t2 := time.Now()
			proxTextFast(3, 0.5)(x, cs)
			first, prox, fast = first+t1.Sub(t0), prox+t2.Sub(t1), fast+time.Since(t2)
		}
		n := time.Duration(len(ix.c.qs))
		fmt.Printf("   %s, %d chunks: exhaustive BM25F in memory %v/query; proximity re-rank of %d re-tokenized texts %v/query (%v without allocating per word)\n",
			ix.c.name, len(ix.c.chunks), (first / n).Round(time.Microsecond), recipeDepth, (prox / n).Round(time.Microsecond), (fast / n).Round(time.Microsecond))
	}
}

// lexicalColumns are the four fields lore's FTS5 table held for a chunk:
// path, heading breadcrumb, body and squashed identifiers.
func lexicalColumns(path, heading, text string) [4]string {
	var idents []string
	analysis.Identifiers(heading+"\n"+text, func(id string) { idents = append(idents, id) })
	return [4]string{path, heading, text, strings.Join(idents, " ")}
}
