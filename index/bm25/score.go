package bm25

import (
	"cmp"
	"slices"
	"strings"

	"github.com/lore-cli/lore/index/analysis"
)

// The scoring of one question, the same in every store: the local store
// feeds it the postings of its whole index, the Weaviate store the
// postings of the candidates its cluster returned, analysed again (so a
// chunk scores the same in both, with the field weights, camelCase parts,
// identifier rule and proximity Weaviate's own BM25 has none of).

// PartWeight scales a camelCase part's impact against the word's own
// (Merge). A part is weaker evidence than the word said: maxIdleConns
// names a setting, a text about idle connections explains it. Measured
// keyword only, 0.125 to 0.5 all lifted Prometheus MRR@5 0.688 → 0.702;
// on the Go set 0.125 to 0.35 lifted MRR@5 0.496 → 0.502..0.504, 0.5 lost
// 0.002, 0.75 and 1 lost 2 and 4 answers from the top 5 (code chunks full
// of identifiers began to match plain words); docs/ranking.md.
const PartWeight = 0.25

// QueryPartWeight scales the camelCase parts of a question's own word
// (PersistentVolumeClaim: persistent, volume, claim) against its words.
// Higher than a text's PartWeight: a text's identifiers name things the
// text need not be about, while the parts of a word the user typed are
// what the user asked; a page that spells them out as words ("Persistent
// Volume Claims") answers it. The identifier itself still ranks first.
// 0.5 lifted Argo CD (0.704 → 0.741 hit@5) and moved no other set; 1
// lifted it as much and cost the Go set a question (docs/ranking.md).
const QueryPartWeight = 0.5

// AliasWeight scales a question word's other forms searched as words
// (analysis.Aliases: repository for "repo", application for "apps"; the
// compound it makes with its neighbour, analysis.QueryWord.Compounds:
// rollback for "roll … back"): the same word written another way, but a
// text that says the question's own words ranks first. At 0.75 and 1 the
// Go set lost two answers to code that names its variables args and err.
const AliasWeight = 0.5

// ProximityDepth is how many of BM25F's best are re-ranked: 10, 20, 50,
// 100 and 200 measured the same on both public sets and the bundled
// sample, and each costs a chunk text read and scanned: at 20 the
// re-ranking was two thirds of a keyword search's time at 100k chunks.
const ProximityDepth = 10

// ProximityWeight is what a window's idf mass adds to a BM25F score.
// Measured flat from 0.25 to 1 on both public sets (within two questions
// in 36); 1 lost a Prometheus and a Go question from the top 5, 0.25 none.
const ProximityWeight = 0.25

// A Query is a question as the keyword stage searches it.
type Query struct {
	Terms []analysis.QueryTerm
	// Read is every term whose postings Rank scores: each of Terms and,
	// for each plain word, its other forms (analysis.Aliases, its
	// Compounds) and the camelCase parts it may be (PartPrefix): itself
	// and its aliases.
	Read []string
	// Words are the question's content words that were searched (a long
	// question's first MaxQueryTerms terms): what coverage counts.
	Words []analysis.QueryWord
	// compounds are the words' Compounds, by term.
	compounds map[string][]string
	// answer is what kind of thing the question asks for (Rerank).
	answer answerKind
}

// NewQuery analyses a question (analysis.QueryTerms).
func NewQuery(text string) Query {
	q := Query{Terms: analysis.QueryTerms(text), answer: answerOf(text)}
	q.Read = make([]string, len(q.Terms), 2*len(q.Terms))
	for i, t := range q.Terms {
		q.Read[i] = t.Term
	}
	words := analysis.QueryWords(text)
	q.compounds = map[string][]string{}
	for _, w := range words {
		if len(w.Compounds) > 0 {
			q.compounds[w.Term] = w.Compounds
		}
	}
	for _, t := range q.Terms {
		if plainWord(t) {
			for _, rt := range slices.Concat(analysis.Aliases(t.Term), q.compounds[t.Term], partTerms(t.Term)) {
				if !slices.Contains(q.Read, rt) {
					q.Read = append(q.Read, rt)
				}
			}
		}
	}
	for _, w := range words {
		if slices.Contains(q.Read, w.Term) {
			q.Words = append(q.Words, w)
		}
	}
	return q
}

// partTerms are the camelCase parts a plain word is searched among: the
// word itself and its abbreviations (analysis.Aliases).
func partTerms(word string) []string {
	out := []string{analysis.PartPrefix + word}
	for _, a := range analysis.Aliases(word) {
		out = append(out, analysis.PartPrefix+a)
	}
	return out
}

// Counted are the terms whose document frequency Rank may ask Stats.DF
// for: every term it reads (a word no chunk says is weighed by the count
// of its other form or part) and the words of the identifiers a plain
// word is searched as.
func (q Query) Counted() []string {
	out := slices.Clone(q.Read)
	for _, t := range q.Terms {
		if t.Word != "" && !slices.Contains(out, t.Word) {
			out = append(out, t.Word)
		}
	}
	return out
}

// plainWord reports whether t is one of the question's words (not an
// identifier): those are also searched among camelCase parts.
func plainWord(t analysis.QueryTerm) bool {
	return t.Word == "" && !strings.HasPrefix(t.Term, analysis.IdentPrefix)
}

// Stats say how common terms are in the whole index: its chunk count and
// the number of chunks that hold a term.
type Stats struct {
	Docs int
	DF   func(term string) int
}

// Rank scores the postings of q.Read (lists; a term absent or nil has
// none) and returns the k best chunks, best first, and the Proximity to
// re-rank them by (nil when the question has fewer than two words).
func (p Params) Rank(q Query, lists map[string]*Term, st Stats, k int) ([]Hit, *Proximity) {
	var scored []*Term
	var stems []string
	var idfs []float64
	for _, qt := range q.Terms {
		term := qt.Term
		t := lists[term]
		df := 0
		if t != nil {
			df = st.DF(term)
		}
		if plainWord(qt) {
			// The word's other forms (repositori for repo, rollback for
			// "roll … back"), the word as a camelCase part, then the
			// parts that abbreviate it (conn for connect: MaxConns for
			// "connections"): a chunk scores by the best of them.
			merge := func(other string, weight float64) {
				o := lists[other]
				if o == nil {
					return
				}
				var word List
				if t != nil {
					word = t.List
				}
				t = &Term{List: Merge(&word, &o.List, weight)}
				if df == 0 {
					// Rare as a word or not, the idf is the word's own
					// (the union's df made a word common in code names
					// weigh less everywhere, and cost the Go set an
					// answer); a word no chunk says takes the count of
					// the first form that some chunk holds.
					df = st.DF(other)
				}
			}
			for _, a := range slices.Concat(analysis.Aliases(term), q.compounds[term]) {
				merge(a, AliasWeight)
			}
			for _, pt := range partTerms(term) {
				merge(pt, PartWeight)
			}
		}
		if t == nil {
			continue
		}
		idf := p.IDF(st.Docs, df)
		if qt.Part {
			idf *= QueryPartWeight
		}
		if qt.Word != "" {
			// A plain word's identifier weighs no more than the word:
			// as much when the word is nowhere else (keepalive).
			idf = min(idf, p.IDF(st.Docs, st.DF(qt.Word)))
		}
		t.Weight = p.Weight(idf)
		scored = append(scored, t)
		if !strings.HasPrefix(term, analysis.IdentPrefix) {
			stems, idfs = append(stems, term), append(idfs, idf)
		}
	}
	hits := TopK(scored, k, nil)
	if len(stems) < 2 {
		return hits, nil
	}
	prox := NewProximity(stems, idfs)
	prox.answer = q.answer
	return hits, prox
}

// Rerank re-orders the first ProximityDepth hits by how close together
// their texts (by chunk id; a hit without one keeps its score) hold the
// query's words, and by whether they hold the kind of thing the question
// asks for (AnswerWeight).
func Rerank(hits []Hit, p *Proximity, text map[int64]string) {
	hits = hits[:min(len(hits), ProximityDepth)]
	var answer float64 // the kind's bonus: the question's largest idf's share
	if p.answer != anyAnswer && len(p.idf) > 0 {
		answer = AnswerWeight * slices.Max(p.idf)
	}
	for i, h := range hits {
		if t, ok := text[h.ID]; ok {
			hits[i].Score += ProximityWeight * p.Score(t)
			if answer > 0 && p.answer.heldBy(t) {
				hits[i].Score += answer
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
