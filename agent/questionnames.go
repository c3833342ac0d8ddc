package agent

import (
	"strings"
	"unicode"

	"github.com/lore-cli/lore/index/analysis"
)

// NameTop is how many of the top keyword matches must, between them, hold
// each name a question gives for keyword-only routing to answer it.
//
// The words a question shares with unrelated docs are its common ones (how,
// sync, index, model, account); what it is about is often a name, and docs
// that never name it cannot answer it: "How do I sync lore's index with a
// Confluence space over its REST API?" holds seven of eight words of lore's
// docs, but none of them says Confluence. A name the index holds is rare,
// so its passages rank near the top: the top 10 are where to look, the same
// with the 10 results of a search as with an answer's deeper candidates.
const NameTop = 10

// Unnamed is the names of question (see names) that none of the top
// NameTop passages holds, as written in the question: empty when each is
// held, or the question names nothing.
func Unnamed(question string, passages []Passage) []string {
	ns := names(question)
	if len(ns) == 0 {
		return nil
	}
	held := map[string]bool{}
	for _, p := range passages[:min(NameTop, len(passages))] {
		add := func(t string) { held[t] = true }
		analysis.Words(p.Path, add)
		analysis.Words(p.Heading, add)
		analysis.Words(p.Text, add)
	}
	var missing []string
	for _, n := range ns {
		found := false
		analysis.Words(n, func(t string) { found = found || held[t] })
		if !found {
			missing = append(missing, n)
		}
	}
	return missing
}

// names are the words of a question that name something: written with a
// capital after their first letter (GPU, SIGTERM, PersistentVolumeClaim,
// iOS), or capitalised where a sentence does not begin (Confluence,
// Grafana, Netflix). A word that analyses to no term (a stopword, one
// letter: I, A) names nothing. A word joined by dots, slashes or hyphens
// (http.Server, Ctrl-P) is one name, held when a passage holds any part.
func names(question string) []string {
	var out []string
	seen := map[string]bool{}
	start := true // the next word begins a sentence
	for _, tok := range strings.Fields(question) {
		w := strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w != "" && !seen[w] && named(w, start) && hasTerm(w) {
			seen[w] = true
			out = append(out, w)
		}
		if w != "" || strings.ContainsAny(tok, ".?!:") {
			start = strings.ContainsAny(tok[len(tok)-1:], ".?!:")
		}
	}
	return out
}

// named reports whether w, first of its sentence or not, is written as a
// name.
func named(w string, first bool) bool {
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	r := []rune(w)[0]
	return !first && unicode.IsUpper(r)
}

func hasTerm(w string) bool {
	has := false
	analysis.Words(w, func(string) { has = true })
	return has
}
