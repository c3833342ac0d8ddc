package eval

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The baseline that `lore eval` and `lore search --eval` print beside
// lore's own scores, as ../shared/eval/README.md defines it: plain BM25
// (k1 1.2, b 0.75) over 24-line windows with a stride of 12 (each line is
// in two windows, so an answer is never cut by a window's edge), tokens
// `[a-z0-9_]+` of the lowercased text, and runs of Han characters split
// into overlapping bigrams (a run of Chinese is a clause, not a word:
// without them the baseline finds next to nothing in Chinese, and lore
// would beat a straw man). No headings, no stemming, no stopwords: what a
// few lines of code would do. lore's ranking must beat it to earn its
// complexity.

// BaselineWindow and BaselineStride are the baseline's windows, in lines.
const (
	BaselineWindow = 24
	BaselineStride = 12
)

const (
	baselineK1 = 1.2
	baselineB  = 0.75
)

// IndexedFile is a file an index holds: Root is the folder that was
// indexed, Path the file's path under it as the index names it. eval
// takes it rather than the index's own type so that it stays free of the
// store (see the package doc).
type IndexedFile struct{ Root, Path string }

// baselineWindowRef is one window: lines [start, end] (1-based) of a file.
type baselineWindowRef struct {
	path       string
	start, end int
}

type baselinePosting struct{ doc, tf int32 }

type baselineIndex struct {
	windows  []baselineWindowRef
	lens     []int32
	postings map[string][]baselinePosting
	avgLen   float64
}

func baselineTokens(s string) []string {
	var out []string
	s = strings.ToLower(s)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		var run func(rune) bool
		switch {
		case baselineWord(r):
			run = baselineWord
		case isHan(r):
			run = isHan
		default:
			s = s[n:]
			continue
		}
		end := strings.IndexFunc(s, func(r rune) bool { return !run(r) })
		if end < 0 {
			end = len(s)
		}
		out = append(out, hanBigrams(s[:end], isHan(r))...)
		s = s[end:]
	}
	return out
}

func baselineWord(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' }

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// hanBigrams are the overlapping bigrams of a run of Han characters (the
// character itself when it is one), or the run when it is not Han.
func hanBigrams(run string, han bool) []string {
	rs := []rune(run)
	if !han || len(rs) < 2 {
		return []string{run}
	}
	out := make([]string, 0, len(rs)-1)
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}

// newBaseline reads the files from disk; one that cannot be read is left out.
func newBaseline(files []IndexedFile) *baselineIndex {
	bx := &baselineIndex{postings: map[string][]baselinePosting{}}
	total := 0
	tf := map[string]int32{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(f.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for i := 0; i < len(lines); i += BaselineStride {
			j := min(i+BaselineWindow, len(lines))
			doc := int32(len(bx.windows))
			clear(tf)
			n := 0
			for _, w := range baselineTokens(strings.Join(lines[i:j], "\n")) {
				tf[w]++
				n++
			}
			for w, c := range tf {
				bx.postings[w] = append(bx.postings[w], baselinePosting{doc, c})
			}
			total += n
			bx.windows = append(bx.windows, baselineWindowRef{f.Path, i + 1, j})
			bx.lens = append(bx.lens, int32(n))
			if j == len(lines) {
				break // the last window reaches the end: one more would be inside it
			}
		}
	}
	if len(bx.windows) > 0 {
		bx.avgLen = float64(total) / float64(len(bx.windows))
	}
	return bx
}

// search returns the best k windows for a query, ties in file order.
func (bx *baselineIndex) search(query string, k int) []baselineWindowRef {
	n := float64(len(bx.windows))
	scores := map[int32]float64{}
	seen := map[string]bool{}
	for _, w := range baselineTokens(query) {
		if seen[w] {
			continue
		}
		seen[w] = true
		ps := bx.postings[w]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := baselineK1 * (1 - baselineB + baselineB*float64(bx.lens[p.doc])/bx.avgLen)
			scores[p.doc] += idf * tf * (baselineK1 + 1) / (tf + norm)
		}
	}
	docs := make([]int32, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	sort.Slice(docs, func(a, b int) bool {
		if sa, sb := scores[docs[a]], scores[docs[b]]; sa != sb {
			return sa > sb
		}
		return docs[a] < docs[b]
	})
	out := make([]baselineWindowRef, 0, k)
	for _, d := range docs[:min(k, len(docs))] {
		out = append(out, bx.windows[d])
	}
	return out
}

// Baseline scores the answerable questions of qs with the naive baseline
// over files (read from disk), with lore's retrieval metrics.
func Baseline(files []IndexedFile, qs []Question, k int) Summary {
	bx := newBaseline(files)
	var outs []Outcome
	for _, q := range qs {
		if !q.IsAnswerable() {
			continue
		}
		var found []Span
		for _, w := range bx.search(q.Question, max(k, 10)) {
			found = append(found, Span{Path: w.path, Start: w.start, End: w.end})
		}
		o := Outcome{ID: q.ID, Answerable: true, Rank: FirstHit(q, found), Scores: ScoreRetrieval(q, found, k)}
		// 24 lines but for a file's last window: measured, not assumed.
		for _, f := range found[:min(5, len(found))] {
			o.Lines = append(o.Lines, f.End-f.Start+1)
		}
		outs = append(outs, o)
	}
	return Summarise(outs)
}
