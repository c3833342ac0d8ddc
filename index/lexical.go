package index

import (
	"strings"
	"unicode"
)

// Hit is a chunk found by a search.
type Hit struct {
	ChunkID int64
	Source  string // the source root
	Path    string // relative to Source
	Start   int
	End     int
	Heading string
	Kind    string
	Text    string
	Score   float64 // higher is better: the fused RRF score
	// LexicalRank and VectorRank are the chunk's 1-based ranks in each
	// retriever's candidates; 0 when it was not among them.
	LexicalRank int
	VectorRank  int
}

// stopwords are dropped from free-text queries: they match everywhere and
// only add noise to BM25 in an OR query.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by can do does for from how i if in into is it its
		of on or so that the their then there these this to was what when where which while who why will
		with you your my me we our should would could use using used get make between about after before`) {
		stopwords[w] = true
	}
}

// ftsQuery turns free text into an FTS5 query that cannot be a syntax
// error: every term is a quoted string, joined with OR. Compound
// identifiers also match the idents column as one squashed token.
func ftsQuery(text string) string {
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 1 && !stopwords[w] {
			add(`"` + w + `"`)
		}
	}
	for _, id := range strings.Fields(identifiers(text)) {
		add(`idents:"` + id + `"`)
	}
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	return strings.Join(terms, " OR ")
}

// maxQueryTerms caps an OR query: FTS5 parses a long OR chain into a deep
// tree, and SQLite refuses expressions deeper than 1000. The first terms of
// a pasted page are as good as any.
const maxQueryTerms = 64
