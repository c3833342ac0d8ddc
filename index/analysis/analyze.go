// Package analysis is lore's one analyser: it turns chunks and queries
// into the terms every store searches by (words folded and stemmed,
// camelCase parts, squashed compound identifiers), so that the local
// keyword index (package bm25) and the Weaviate store agree on what a word
// is. It imports nothing of lore.
package analysis

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Version names what the analyser makes of a text. It changes whenever
// the terms of some text change, so that a store can tell an index analysed
// by another lore and analyse its documents again (the stores join it to
// the chunker's signature). 2: CJK bigrams, NFKC and full case folding,
// acronym plurals and version letters kept with their acronym. 3: the
// names a chunk defines are identifiers at path weight (Definitions), and
// a YAML, TOML or JSON chunk is marked Structured (its body weighs
// bm25.Params.Structured: the local store keeps that weight in its
// impacts, so changing it needs a new Version).
const Version = "3"

// IdentPrefix marks the terms of squashed compound identifiers
// (exec.LookPath → execlookpath): they live in postings of their own, so a
// query naming the identifier matches it exactly and outranks its loose
// parts.
const IdentPrefix = "\x01"

// PartPrefix marks the words inside a camelCase or PascalCase identifier
// (maxIdleConns → max, idle, conn): they live in postings of their own,
// apart from the words a text says, so a question in words ("idle
// connections") finds the identifier, and a search scores a word once, by
// the better of its two postings (see Merge). Added to the word's own
// postings, they made code chunks match plain-English questions and cost
// the Go set 3 to 4 answers in the top 5.
const PartPrefix = "\x02"

// MaxQueryTerms bounds the work of one query: the first terms of a pasted
// page are as good as any.
const MaxQueryTerms = 64

// stopwords are neither indexed nor searched: they match everywhere and
// only add noise to an OR query.
var stopwords = map[string]bool{}

// stopStems are the stems of the stopwords long enough to be inflected
// (use → uses, using), so a form of a stopword is one too.
var stopStems = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by can do does for from how i if in into is it its
		of on or so that the their then there these this to was what when where which while who why will
		with you your my me we our should would could use using used get make between about after before`) {
		stopwords[w] = true
	}
	for w := range stopwords {
		if len(w) > 2 {
			stopStems[stem(w)] = true
		}
	}
}

// IsStopword reports whether w (lowercase) is one of the words lore
// neither indexes nor searches.
func IsStopword(w string) bool { return stopwords[w] }

// Words calls emit with every term of text, in order: runs of letters and
// digits, lowercased, diacritics removed, Porter-stemmed, without
// stopwords and one-letter words. Chunks and queries both go through it,
// so what the index holds and what a query asks for cannot drift apart.
func Words(text string, emit func(term string)) {
	fields(text, func(w string) {
		if cjkRun(w) {
			cjkTerms(w, emit)
		} else {
			Word(w, emit)
		}
	})
}

// fields calls fn with every run of letters and digits of text, as is. An
// apostrophe between two letters (don't, user's, O'Reilly) joins them; word
// then reads the contraction. A run of CJK characters (Han, Kana, Hangul)
// is a field of its own, apart from the Latin letters beside it
// (使用Prometheus监控 is 使用, Prometheus, 监控): Word reads it as bigrams.
func fields(text string, fn func(string)) {
	start := -1
	inCJK := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf { // the short way for ASCII: no Unicode tables
			if asciiWord[c] {
				if start < 0 {
					start, inCJK = i, false
				} else if inCJK {
					fn(text[start:i])
					start, inCJK = i, false
				}
			} else if start >= 0 && !(c == '\'' && !inCJK && apostropheJoins(text, start, i, 1)) {
				fn(text[start:i])
				start = -1
			}
			i++
			continue
		}
		if r := common3(text, i); r != 0 { // the short way for CJK text
			if start < 0 {
				start, inCJK = i, true
			} else if !inCJK {
				fn(text[start:i])
				start, inCJK = i, true
			}
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if word || unicode.Is(unicode.Mn, r) {
			c := word && r >= 0x1100 && cjk(r) // a mark stays in its run
			switch {
			case start < 0:
				start, inCJK = i, c
			case word && c != inCJK:
				fn(text[start:i])
				start, inCJK = i, c
			}
			i += n
			continue
		}
		if start >= 0 && r == '’' && !inCJK && apostropheJoins(text, start, i, n) {
			i += n
			continue
		}
		if start >= 0 {
			fn(text[start:i])
			start = -1
		}
		i += n
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// asciiWord tells the ASCII letters and digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return t
}()

// common3 is the character at text[i] when it is commonCJK, 0 otherwise.
// They are all three bytes long, and decoded here without a call; a
// valid sequence in the blocks commonCJK names decodes as utf8 does (no
// overlong form or surrogate falls in them).
func common3(text string, i int) rune {
	if i+2 >= len(text) {
		return 0
	}
	c0, c1, c2 := text[i], text[i+1], text[i+2]
	if c0 < 0xE3 || c0 > 0xED || c1&0xC0 != 0x80 || c2&0xC0 != 0x80 {
		return 0
	}
	if r := rune(c0&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F); commonCJK(r) {
		return r
	}
	return 0
}

// commonRun reports whether run is all commonCJK characters, which
// cjkTerms reads the short way: three bytes each, NFKC already, no marks.
func commonRun(run string) bool {
	if len(run)%3 != 0 {
		return false
	}
	for i := 0; i < len(run); i += 3 {
		if common3(run, i) == 0 {
			return false
		}
	}
	return true
}

// cjk reports whether r belongs to a script written without spaces
// between words, whose runs Word reads as overlapping bigrams: Han,
// Hiragana, Katakana and Hangul, with the Kana marks that Unicode files
// under Common (ー, half-width ｰ ﾞ ﾟ).
func cjk(r rune) bool {
	if r < 0x1100 {
		return false
	}
	if commonCJK(r) {
		return true
	}
	switch r {
	case 0x30FC, 0xFF70, 0xFF9E, 0xFF9F:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// commonCJK reports whether r is in the blocks nearly all CJK text is
// written in (unified Han ideographs, the Kana letters, Hangul syllables):
// letters, in NFKC, no marks. Checked first, they spare the Unicode tables
// on every character of a CJK text.
func commonCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3041 && r <= 0x3096 || r >= 0x30A1 && r <= 0x30FA || r >= 0xAC00 && r <= 0xD7A3
}

// apostropheJoins reports whether the apostrophe at text[i:i+n] sits
// between two letters of a word that began at start.
func apostropheJoins(text string, start, i, n int) bool {
	before, _ := utf8.DecodeLastRuneInString(text[start:i])
	after, _ := utf8.DecodeRuneInString(text[i+n:])
	return unicode.IsLetter(before) && unicode.IsLetter(after)
}

// Parts calls emit with the term of each part of a camelCase or PascalCase
// field (maxIdleConns → max, idl, conn; HTTPServer → http, server;
// getUserById → user, id), as word reads them, stopwords dropped: nothing
// for a field that is one part.
func Parts(w string, emit func(term string)) {
	if !camel(w) {
		return
	}
	rs := []rune(w)
	start := 0
	for i := 1; i <= len(rs); i++ {
		if i < len(rs) && !partBoundary(rs, i) {
			continue
		}
		Word(string(rs[start:i]), emit)
		start = i
	}
}

// camel reports whether w changes case inside, as partBoundary reads
// it: plain words, capitals (HTTP), capitalised words (Server) and
// acronyms with a plural or version letter (IDs, IPv4) are not camelCase.
func camel(w string) bool {
	if !isASCII(w) {
		return partBoundaries([]rune(w))
	}
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	for i := 1; i < len(w); i++ {
		if !upper(w[i]) {
			continue
		}
		if p := w[i-1]; lower(p) || p >= '0' && p <= '9' || upper(p) && i+2 < len(w) && lower(w[i+1]) && lower(w[i+2]) {
			return true
		}
	}
	return false
}

func partBoundaries(rs []rune) bool {
	for i := 1; i < len(rs); i++ {
		if partBoundary(rs, i) {
			return true
		}
	}
	return false
}

// partBoundary reports whether a new part starts at rs[i]: an upper-case
// letter after a lower-case letter or a digit (maxIdle, IPv4Address), or
// the last capital of a run that a lower-case word follows (HTTPServer).
// One lower-case letter after capitals stays with them: it is a plural or
// a version letter (userIDs → user, IDs; IPv4Address → IPv4, Address), and
// split off it left a one-letter part and a stray capital (I, Pv4).
func partBoundary(rs []rune, i int) bool {
	if !unicode.IsUpper(rs[i]) {
		return false
	}
	prev := rs[i-1]
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	return unicode.IsUpper(prev) && i+2 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsLower(rs[i+2])
}

// contractions are the English clitics after an apostrophe that add no
// word of their own: user's is user, you're is you, don't is do (not).
var contractions = map[string]bool{"s": true, "t": true, "re": true, "ve": true, "ll": true, "d": true, "m": true}

// negations are the n't forms whose verb is not what is left of them.
var negations = map[string]string{"can": "can", "won": "will", "shan": "shall"}

// Word calls emit with the terms of one field: one term for a word, the
// overlapping bigrams of a CJK run (cjkTerms), and each of those for a
// field that mixes them. Stopwords are checked on the
// word as written and again on its stem, so the inflections of a stopword
// (uses, gets, making) are dropped with it; a word that only stems onto a
// short stopword (one and ones → on) keeps its own form instead, so it is
// neither dropped nor confused with the stopword. One-letter words are
// dropped (a, I, the x of code) but single digits are kept (HTTP/2,
// version 3).
func Word(w string, emit func(string)) {
	if isASCII(w) {
		word(strings.ToLower(w), emit)
		return
	}
	if !hasCJK(w) {
		word(foldUnicode(w), emit)
		return
	}
	fields(w, func(f string) {
		if r, _ := utf8.DecodeRuneInString(f); cjk(r) {
			cjkTerms(f, emit)
		} else {
			word(foldUnicode(f), emit)
		}
	})
}

// word is Word of a folded word.
func word(w string, emit func(string)) {
	if i := strings.IndexAny(w, "'’"); i >= 0 {
		w = contraction(w, i)
	}
	if len(w) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') || stopwords[w] {
		return
	}
	if len(w) > 64 { // base64, hashes: keep them matchable, don't stem them
		emit(w)
		return
	}
	s := stem(w)
	if s != w && stopwords[s] || stopStems[s] {
		if stopStems[s] {
			return
		}
		// one → on: the stem is a stopword the word is not a form of.
		if t := strings.TrimSuffix(w, "s"); len(t) > 2 && !stopwords[t] {
			w = t
		}
		s = w
	}
	emit(s)
}

// cjkTerms calls emit with the overlapping bigrams of a run of CJK
// characters (默认端口 → 默认 认端 端口), or the character itself when the
// run is one. Chinese and Japanese put no spaces between words, and a
// dictionary segmenter is large and language-bound; bigrams are what
// Lucene's CJKAnalyzer does: a two-character word, the most common kind,
// is one term, and a longer word a phrase of bigrams that BM25 and the
// proximity rerank reward when they stand together. The run is put in
// NFKC first (half-width ｶﾀｶﾅ is カタカナ), but its marks are kept: a
// dakuten tells ガ from カ.
func cjkTerms(run string, emit func(string)) {
	if commonRun(run) { // three bytes a character: bigrams are 6-byte windows
		if len(run) == 3 {
			emit(run) // one character
			return
		}
		for i := 0; i+6 <= len(run); i += 3 {
			emit(run[i : i+6])
		}
		return
	}
	run = norm.NFKC.String(run)
	a, b := -1, -1 // the starts of the last two characters
	for i, r := range run {
		if i > 0 && unicode.Is(unicode.Mn, r) {
			continue // a mark belongs to its character
		}
		if a >= 0 {
			emit(run[a:i])
		}
		a, b = b, i
	}
	switch {
	case a >= 0:
		emit(run[a:])
	case b >= 0:
		emit(run) // one character
	}
}

// contraction reads a folded word with an apostrophe at i: a clitic is
// dropped (don't → do, user's → user, can't → can), any other apostrophe
// is removed (o'clock → oclock).
func contraction(w string, i int) string {
	base, rest := w[:i], w[i:]
	_, n := utf8.DecodeRuneInString(rest)
	clitic := rest[n:]
	if !contractions[clitic] {
		return base + strings.NewReplacer("'", "", "’", "").Replace(clitic)
	}
	if clitic == "t" && strings.HasSuffix(base, "n") {
		if v, ok := negations[base]; ok {
			return v
		}
		return base[:len(base)-1]
	}
	return base
}

// isASCII reports whether s is ASCII: nearly every word of a text, which
// takes the short way (a lowercase copy) past Unicode folding.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasCJK reports whether s holds a CJK character.
func hasCJK(s string) bool {
	for _, r := range s {
		if cjk(r) {
			return true
		}
	}
	return false
}

// foldUnicode is what a search engine compares words by: full case folding
// (Maßnahmen → massnahmen, as ß is ss), compatibility forms in NFKC
// (ﬁle → file, full-width ＨＴＴＰ２ → http2) and diacritics removed
// (café → cafe, as FTS5's remove_diacritics did). On ASCII it is
// strings.ToLower, which Word uses there instead.
func foldUnicode(w string) string {
	t := transform.Chain(norm.NFKD, cases.Fold(), runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	if s, _, err := transform.String(t, w); err == nil {
		return s
	}
	return strings.ToLower(w)
}

func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || c >= '0' && c <= '9' {
			return w // the stemmer knows English words only
		}
	}
	return string(porter.StemWithoutLowerCasing([]rune(w)))
}

// A QueryTerm is one term a question searches for. Word is set on the
// squashed identifier a plain word is also searched as (keepalive finds
// --keep-alive): it names the word's own term, and the expansion must weigh
// no more than that term. Weighted by its own rarity, the stray identifier
// of a common word (time, from some --time flag) gave the word an idf near
// 7 and the chunks that hold the flag a lead the question never asked for.
// Part is set on a word searched because it is a part of a camelCase word
// of the question (PersistentVolumeClaim: persistent, volume, claim): it
// is weaker evidence than the identifier, which must rank above a text
// that merely says the parts.
type QueryTerm struct {
	Term, Word string
	Part       bool
}

// Query is the terms to search for a question: its words, then its
// squashed identifiers, then the parts of its camelCase words, then the
// identifiers its plain words may squash, each once, at most
// MaxQueryTerms.
func Query(text string) []string {
	var out []string
	for _, t := range QueryTerms(text) {
		out = append(out, t.Term)
	}
	return out
}

// QueryTerms is Query with each plain word's expansion tied to its word.
func QueryTerms(text string) []QueryTerm {
	var terms []QueryTerm
	seen := map[string]bool{}
	add := func(t, w string) {
		if !seen[t] && len(terms) < MaxQueryTerms {
			seen[t] = true
			terms = append(terms, QueryTerm{Term: t, Word: w})
		}
	}
	Words(text, func(t string) { add(t, "") })
	Identifiers(text, func(id string) { add(IdentPrefix+id, "") })
	// A camelCase word is searched whole and by its parts, as plain words:
	// a question naming PersistentVolumeClaim also finds the text about
	// persistent volume claims. Not one inside a qualified name
	// (context.WithTimeout, fs.ErrExist): that names one symbol, and its
	// parts (timeout; err, exist) found the many texts that merely use the
	// words, costing the Go set two answers from the top 5.
	for _, tok := range strings.Fields(text) {
		qualified := false
		Identifiers(tok, func(string) { qualified = true })
		if !qualified {
			fields(tok, func(w string) {
				Parts(w, func(p string) {
					if !seen[p] && len(terms) < MaxQueryTerms {
						seen[p] = true
						terms = append(terms, QueryTerm{Term: p, Part: true})
					}
				})
			})
		}
	}
	fields(text, func(w string) {
		if ident, term := expansion(w); ident != "" {
			add(ident, term)
		}
	})
	return terms
}

// expansion is the squashed identifier a plain word of a question is also
// searched as, and the word's own term; "" for a word that is not searched
// (a stopword) or too short to be an identifier.
func expansion(w string) (ident, term string) {
	l := strings.ToLower(w)
	if !isASCII(l) {
		if hasCJK(w) {
			return "", "" // bigrams: no identifier
		}
		l = foldUnicode(w) // ＫＥＥＰＡＬＩＶＥ is keepalive
	}
	if len(l) <= 2 || !isSquashed(l) {
		return "", ""
	}
	Word(w, func(t string) {
		if term == "" {
			term = t
		}
	})
	if term == "" {
		return "", ""
	}
	return IdentPrefix + l, term
}

// isSquashed reports whether l is already as squash leaves it, in the
// ASCII an identifier is written in.
func isSquashed(l string) bool {
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// A QueryWord is one content word of a question as the routing floor
// counts it: a passage holds it when it holds the word's Term or, when
// Ident is set, that identifier (keepalive is in a passage on --keep-alive),
// or one of its Compounds. Joined marks the second and later bigrams of a
// CJK run, which share a character with the one before (Coverage).
type QueryWord struct {
	Term, Ident string
	// Compounds are the terms of the one word this word makes with the
	// question's next word, or with a particle a few words on: "time
	// zone" is timezone, "roll an application back" rollback. Docs write
	// as one word what a question says in two.
	Compounds []string
	Joined    bool
}

// particles end the phrasal verbs whose nouns are one word (log in:
// login, set up: setup, roll back: rollback, shut down: shutdown). A
// question puts the verb's object between the two ("roll an application
// back"), so a particle is joined to a word up to compoundReach before it.
var particles = []string{"in", "up", "out", "down", "off", "back", "over"}

const compoundReach = 3

// maxCompounds bounds the terms compounds adds to a question: most pairs
// are no word the index holds, and each costs a lookup (a pasted
// paragraph would add one for nearly every word).
const maxCompounds = MaxQueryTerms / 4

// compounds sets the Compounds of out's words from the question's words
// as written (lowercase ASCII letters and digits), clause by clause: a
// word with the next word when both are searched, or with the first
// particle at most compoundReach on, when the two make a term that is
// neither's and not a word of the question already; at most
// maxCompounds, in the question's order.
func compounds(text string, out []QueryWord) {
	at := make(map[string]int, len(out))
	for i, w := range out {
		at[w.Term] = i
	}
	one := func(w string) string { // w's term, if it is one searched term
		t, n := "", 0
		word(w, func(s string) { t, n = s, n+1 })
		if n != 1 {
			return ""
		}
		return t
	}
	seen := map[string]bool{}
	clauses := strings.FieldsFuncSeq(strings.ToLower(text), func(r rune) bool { return strings.ContainsRune(".,;:?!", r) })
	for clause := range clauses {
		raw := strings.FieldsFunc(clause, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
		for i := range raw {
			ia, ok := at[one(raw[i])]
			if !ok {
				continue
			}
			for j := i + 1; j < len(raw) && j-i <= compoundReach; j++ {
				particle := slices.Contains(particles, raw[j])
				b := one(raw[j])
				ib, searched := at[b]
				if !particle && (j > i+1 || !searched) {
					continue
				}
				c := one(raw[i] + raw[j])
				if _, asked := at[c]; c != "" && c != out[ia].Term && c != b && !asked && !seen[c] {
					if len(seen) == maxCompounds {
						return
					}
					seen[c] = true
					out[ia].Compounds = append(out[ia].Compounds, c)
					if searched {
						out[ib].Compounds = append(out[ib].Compounds, c)
					}
				}
				if particle {
					break // a verb takes the first particle after it
				}
			}
		}
	}
}

// QueryWords are the distinct content words of a question, in order, at
// most MaxQueryTerms: what Query searches for, paired word by word.
func QueryWords(text string) []QueryWord {
	var out []QueryWord
	seen := map[string]bool{}
	fields(text, func(w string) {
		joined := false
		Word(w, func(t string) {
			if seen[t] || len(out) == MaxQueryTerms {
				joined = false // a repeated bigram: the run counts on anew
				return
			}
			seen[t] = true
			q := QueryWord{Term: t, Joined: joined}
			if ident, _ := expansion(w); ident != "" { // as Query asks for it
				q.Ident = ident
			}
			out = append(out, q)
			joined = true // only a CJK run gives one field more than a term
		})
	})
	compounds(text, out)
	return out
}

// Identifiers calls emit with the compound identifiers of a text
// (OLLAMA_HOST, exec.LookPath, --keep-alive, net/http) squashed into single
// lowercase words, each once. A hand-written scanner: the equivalent
// regexp was a third of index time.
func Identifiers(text string, emit func(string)) {
	seen := map[string]bool{}
	for i := 0; i < len(text); {
		start := i
		flag := false
		if strings.HasPrefix(text[i:], "--") && i+2 < len(text) && isAlpha(text[i+2]) && (i == 0 || !isWord(text[i-1])) {
			flag = true
			i += 2
		} else if !isWord(text[i]) || (i > 0 && isWord(text[i-1])) {
			i++
			continue
		}
		compound := false
		for i < len(text) {
			if isWord(text[i]) {
				if text[i] == '_' && i > start {
					compound = true
				}
				i++
				continue
			}
			n := separatorLen(text[i:])
			if n > 0 && i+n < len(text) && isWord(text[i+n]) {
				compound = true
				i += n
				continue
			}
			break
		}
		if compound || flag {
			if w := squash(text[start:i]); len(w) > 2 && !seen[w] {
				seen[w] = true
				emit(w)
			}
		}
		if i == start {
			i++
		}
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWord(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '_' }

// separatorLen is the length of an identifier separator at the start of s.
func separatorLen(s string) int {
	switch {
	case strings.HasPrefix(s, "::"), strings.HasPrefix(s, "->"):
		return 2
	case s[0] == '.' || s[0] == '/' || s[0] == '-':
		return 1
	}
	return 0
}

// squash lowercases s and keeps only letters and digits.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Coverage is the share of a question's content words (QueryWords) that
// a chunk holds, as the word itself, its other forms (Aliases, its
// Compounds), one of their camelCase parts or its squashed identifier;
// holds tells whether the chunk has a term. BM25 ranks a chunk first
// however little of the question it matches, coverage says how much.
// Each word counts the same: weighting by idf let one rare word that an
// off-topic question shares with a big corpus (Peru in Go's time zone
// tests) outweigh the rest, and separated answerable from unanswerable
// questions worse on every set measured (docs/eval.md).
//
// A CJK run counts by its characters, two to a word (Weight): a character
// is held when a bigram over it is. Counted by bigrams, the ones that
// straddle two words (默认端口是 → 口是) are in no chunk, and a Chinese
// question that a passage answers word for word held half its "words".
func Coverage(words []QueryWord, holds func(term string) bool) float64 {
	total := Weight(words)
	if total == 0 {
		return 0
	}
	has := func(w QueryWord) bool {
		for _, t := range [...]string{w.Term, PartPrefix + w.Term, w.Ident} {
			if t != "" && holds(t) {
				return true
			}
		}
		// As ranking finds it: its other form, as a word or a part
		// (repository holds "repo", MaxConns "connections").
		for _, a := range Aliases(w.Term) {
			if holds(a) || holds(PartPrefix+a) {
				return true
			}
		}
		for _, c := range w.Compounds {
			if holds(c) {
				return true
			}
		}
		return false
	}
	held := 0 // characters: a word is two
	for i := 0; i < len(words); {
		j := i + 1
		for j < len(words) && words[j].Joined {
			j++
		}
		// Terms i..j-1 overlap in turn: k terms span k+1 characters, and
		// a character is held when a term on either side of it is.
		prev := false
		for _, w := range words[i:j] {
			h := has(w)
			if h || prev {
				held++
			}
			prev = h
		}
		if prev {
			held++
		}
		i = j
	}
	return float64(held) / (2 * total)
}

// Weight is how many words Coverage counts in words: one a word, and
// half a character of a CJK run (a run of k bigrams spans k+1).
func Weight(words []QueryWord) float64 {
	n := 0
	for _, w := range words {
		if w.Joined {
			n++ // one more character
		} else {
			n += 2
		}
	}
	return float64(n) / 2
}

// TermText is text's words as the keyword index holds them (Words:
// lowercased, diacritics removed, Porter-stemmed, stopwords dropped), space
// separated, for a search engine that tokenizes on whitespace: BM25 over
// them matches "retention" with "retained" as lore's own index does.
func TermText(text string) string {
	var b strings.Builder
	Words(text, func(w string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	})
	return b.String()
}

// IdentifierText is text's compound names squashed as Identifiers
// squashes them (OLLAMA_HOST → ollamahost, exec.LookPath → execlookpath),
// and its camelCase words lowercased (getUserById → getuserbyid), space
// separated, for a search engine that tokenizes on whitespace.
func IdentifierText(text string) string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	Identifiers(text, add)
	camelWords(text, add)
	return strings.Join(out, " ")
}

// camelWords calls add with text's camelCase words (those Parts splits
// into terms), lowercased, underscores dropped: IdentifierText's second
// half. The parts come from the field cache, where an index build's
// analysis of the same words has just put most of them.
func camelWords(text string, add func(string)) {
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !(r == '_' || isAlnum(r)) }) {
		if len(w) > 2 && camel(w) && len(analyzeField(w).parts) > 0 {
			add(strings.ToLower(strings.ReplaceAll(w, "_", "")))
		}
	}
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127 && (r != utf8.RuneError)
}
