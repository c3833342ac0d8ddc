package index

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// Hit is a chunk found by a search.
type Hit struct {
	Source  string // the source root
	Path    string // relative to Source
	Start   int
	End     int
	Heading string
	Kind    string
	Text    string
	Score   float64 // higher is better
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
	return strings.Join(terms, " OR ")
}

// lexicalSearch ranks chunks by BM25 over path, breadcrumb, text and
// identifiers. The column weights favour a match in a heading or an exact
// identifier over one in running text.
func (ix *Index) lexicalSearch(ctx context.Context, query string, k int) ([]Hit, error) {
	q := ftsQuery(query)
	if q == "" {
		return nil, nil
	}
	rows, err := ix.st.db.QueryContext(ctx, `
		SELECT s.root, d.path, c.start_line, c.end_line, c.heading, c.kind, c.text, -bm25(chunks_fts, 1.0, 2.0, 1.0, 2.0) AS score
		FROM chunks_fts f
		JOIN chunks c ON c.id = f.rowid
		JOIN documents d ON d.id = c.doc_id
		JOIN sources s ON s.id = d.source_id
		WHERE chunks_fts MATCH ?
		ORDER BY bm25(chunks_fts, 1.0, 2.0, 1.0, 2.0)
		LIMIT ?`, q, k)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.Source, &h.Path, &h.Start, &h.End, &h.Heading, &h.Kind, &h.Text, &h.Score); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
