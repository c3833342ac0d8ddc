package analysis

import (
	"strings"
	"unicode/utf8"
)

// Fields are the parts of a chunk the index analyses.
type Fields struct {
	Path    string // the file, relative to its source
	Heading string // the breadcrumb of headings, or a code chunk's declarations
	Body    string
	// Structured is a chunk of a YAML, TOML or JSON file
	// (ingest.Structured): it is marked Doc.Structured.
	Structured bool
}

// A Doc is one chunk as the postings hold it: its terms with their
// frequency in each field, and the lengths BM25F normalises by.
type Doc struct {
	Terms     []TermFreq
	BodyLen   uint32 // words in the body
	IdentsLen uint32 // squashed identifiers in the heading and body
	// Structured is a chunk of a YAML, TOML or JSON file: keys and
	// values, whose words a ranking may weigh apart from prose's.
	Structured bool
}

// TermFreq is a term and how often each field of a chunk holds it (capped
// at 255). A word and a camelCase part (PartPrefix) are counted in Path,
// Heading and Body; an identifier term (IdentPrefix) in Idents, and in
// Path when the chunk defines it (Definitions).
type TermFreq struct {
	Term                        string
	Path, Heading, Body, Idents uint8
}

// Analyze turns a chunk into its terms: the words of its path, headings
// and body, the parts of their camelCase identifiers (PartPrefix; they do
// not add to the body's length: a chunk of identifiers is no longer for
// them), and the squashed identifiers of its headings and body.
func Analyze(f Fields) Doc { return analyze(f, nil) }

// Texts are a chunk's words as a search engine that tokenizes on
// whitespace holds them: Body and Heading are TermText of the body and
// of the heading, Identifiers is IdentifierText of the heading and the
// body joined by a line break.
type Texts struct{ Body, Heading, Identifiers string }

// AnalyzeTexts is Analyze of f and f's Texts from the same pass: a store
// that keeps both (Weaviate's) folds, stems and scans each chunk once
// rather than once for the postings and again for each text.
func AnalyzeTexts(f Fields) (Doc, Texts) {
	var tx texts
	d := analyze(f, &tx)
	camelWords(f.Heading, tx.ident)
	camelWords(f.Body, tx.ident)
	return d, Texts{Body: tx.body.String(), Heading: tx.heading.String(), Identifiers: tx.ids.String()}
}

// texts gathers Texts as analyze goes; its methods do nothing on a nil
// *texts, as Analyze passes.
type texts struct {
	body, heading, ids strings.Builder
	seen               map[string]bool // identifiers in ids
}

func appendWord(b *strings.Builder, w string) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(w)
}

func (tx *texts) addBody(t string) {
	if tx != nil {
		appendWord(&tx.body, t)
	}
}

func (tx *texts) addHeading(t string) {
	if tx != nil {
		appendWord(&tx.heading, t)
	}
}

func (tx *texts) ident(w string) {
	if tx == nil {
		return
	}
	if tx.seen == nil {
		tx.seen = map[string]bool{}
	}
	if !tx.seen[w] {
		tx.seen[w] = true
		appendWord(&tx.ids, w)
	}
}

// analyze is Analyze, gathering f's Texts into tx when it is not nil.
func analyze(f Fields, tx *texts) Doc {
	tb := termTables.Get().(*termTable)
	defer tb.release()
	var d Doc
	inc := func(n *uint8) {
		if *n < 255 {
			*n++
		}
	}
	Words(f.Path, func(t string) { inc(&tb.add(t).Path) })
	heading := func(w string) {
		if cjkRun(w) {
			cjkTerms(w, func(t string) {
				inc(&tb.add(t).Heading)
				tx.addHeading(t)
			})
			return
		}
		a := analyzeField(w)
		if a.term != "" {
			inc(&tb.add(a.term).Heading)
			tx.addHeading(a.term)
		}
		for _, p := range a.parts {
			inc(&tb.add(p).Heading)
		}
	}
	fields(f.Heading, heading)
	// A name the body defines is an identifier at path weight: a
	// question that names it (PrunePropagationPolicy,
	// --repo-cache-expiration, Backup) meets the row that defines it
	// before the pages that use it, and a question in plain words is not
	// pulled to reference tables.
	Definitions(f.Body, func(name string) {
		if id := definedIdent(name); id != "" {
			inc(&tb.add(IdentPrefix + id).Path)
		}
	})
	fields(f.Body, func(w string) {
		if cjkRun(w) { // bigrams, seldom repeated: not worth the cache
			if commonRun(w) { // cjkTerms' short way, without a call per bigram
				if len(w) == 3 {
					inc(&tb.add(w).Body)
					d.BodyLen++
					tx.addBody(w)
					return
				}
				for i := 0; i+6 <= len(w); i += 3 {
					inc(&tb.add(w[i : i+6]).Body)
					tx.addBody(w[i : i+6])
				}
				d.BodyLen += uint32(len(w)/3 - 1)
				return
			}
			cjkTerms(w, func(t string) {
				inc(&tb.add(t).Body)
				d.BodyLen++
				tx.addBody(t)
			})
			return
		}
		a := analyzeField(w)
		if a.term != "" {
			inc(&tb.add(a.term).Body)
			d.BodyLen++
			tx.addBody(a.term)
		}
		for _, p := range a.parts {
			inc(&tb.add(p).Body)
		}
	})
	// The heading and the body apart, as if joined by a line break (no
	// identifier spans one), without copying the body to join them; an
	// identifier in both counts once.
	ident := func(id string) {
		if tf := tb.add(IdentPrefix + id); tf.Idents == 0 {
			tf.Idents = 1
			d.IdentsLen++
			tx.ident(id)
		}
	}
	Identifiers(f.Heading, ident)
	Identifiers(f.Body, ident)
	d.Terms = tb.doc()
	d.Structured = f.Structured
	return d
}

// cjkRun reports whether a field of fields is a run of CJK characters
// (fields keeps them apart from other letters): a character from U+1100
// up starts with a byte of 0xE1 or more.
func cjkRun(w string) bool {
	if w[0] < 0xE1 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(w)
	return cjk(r)
}
