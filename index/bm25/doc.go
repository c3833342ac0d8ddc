package bm25

// Fields are the parts of a chunk the index analyses.
type Fields struct {
	Path    string // the file, relative to its source
	Heading string // the breadcrumb of headings, or a code chunk's declarations
	Body    string
}

// A Doc is one chunk as the postings hold it: its terms with their
// frequencies, and its length in terms.
type Doc struct {
	Len   uint32
	Terms []TermFreq
}

// TermFreq is a term and how often a chunk holds it (capped at 255).
type TermFreq struct {
	Term string
	TF   uint8
}

// Analyze turns a chunk into its terms: the words of its path, headings
// and body, and the squashed identifiers of its headings and body. The
// fields weigh alike: a heading is a strong hint, but code breadcrumbs
// list every declaration, and doubling them measured worse.
func Analyze(f Fields) Doc {
	counts := make(map[string]int, 64)
	n := 0
	add := func(t string) {
		counts[t]++
		n++
	}
	Words(f.Path, add)
	Words(f.Heading, add)
	Words(f.Body, add)
	Identifiers(f.Heading+"\n"+f.Body, func(id string) { add(IdentPrefix + id) })
	d := Doc{Len: uint32(n), Terms: make([]TermFreq, 0, len(counts))}
	for t, c := range counts {
		d.Terms = append(d.Terms, TermFreq{Term: t, TF: uint8(min(c, 255))})
	}
	return d
}
