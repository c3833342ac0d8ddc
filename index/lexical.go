package index

import (
	"strings"
	"unicode"
)

// Hit is a chunk found by a search.
type Hit struct {
	ChunkID int64
	Source  string // the folder Path is relative to: the source root, or a file source's folder
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

// A queryTerm is one word of a query, or a squashed identifier matched
// against the idents column.
type queryTerm struct {
	word  string
	ident bool
}

// queryTerms splits free text into lowercase words (stopwords and
// one-letter words dropped) and squashed identifiers, at most
// maxQueryTerms of them: FTS5 parses a long OR chain into a deep tree, and
// SQLite refuses expressions deeper than 1000. The first terms of a pasted
// page are as good as any.
func queryTerms(text string) []queryTerm {
	var terms []queryTerm
	seen := map[queryTerm]bool{}
	add := func(t queryTerm) {
		if !seen[t] && len(terms) < maxQueryTerms {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 1 && !stopwords[w] {
			add(queryTerm{word: w})
		}
	}
	for _, id := range strings.Fields(identifiers(text)) {
		add(queryTerm{word: id, ident: true})
	}
	return terms
}

const maxQueryTerms = 64

// ftsMatch joins terms into an FTS5 query that cannot be a syntax error:
// every term is a quoted string of letters and digits, joined with OR.
func ftsMatch(terms []queryTerm) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		if t.ident {
			parts[i] = `idents:"` + t.word + `"`
		} else {
			parts[i] = `"` + t.word + `"`
		}
	}
	return strings.Join(parts, " OR ")
}

// ftsQuery is the FTS5 query for free text.
func ftsQuery(text string) string { return ftsMatch(queryTerms(text)) }

// LexicalColumns are the four FTS5 columns lore indexes for a chunk: path,
// heading breadcrumb, body and squashed identifiers. Exported, with
// LexicalTerms, so that bench/lexical measures other keyword engines on
// exactly lore's fields and terms.
func LexicalColumns(path, heading, text string) [4]string {
	return [4]string{path, heading, text, identifiers(heading + "\n" + text)}
}

// LexicalTerms are the terms the lexical stage searches for a query: words
// matched in any column, and identifiers matched in the idents column only.
func LexicalTerms(query string) (words, idents []string) {
	for _, t := range queryTerms(query) {
		if t.ident {
			idents = append(idents, t.word)
		} else {
			words = append(words, t.word)
		}
	}
	return words, idents
}
