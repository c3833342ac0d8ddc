package analysis

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The oracle is the analyser as it was before its CJK and field loops were
// made fast (commit d782e58): plain loops over runes, a map per chunk. It
// stays here, frozen, so the fast code can be checked to give exactly the
// same terms and frequencies.

func oracleFields(text string, fn func(string)) {
	start := -1
	inCJK := false
	for i, r := range text {
		if r >= 0x3041 && commonCJK(r) {
			if start < 0 {
				start, inCJK = i, true
			} else if !inCJK {
				fn(text[start:i])
				start, inCJK = i, true
			}
			continue
		}
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if word || unicode.Is(unicode.Mn, r) {
			c := word && r >= 0x1100 && cjk(r)
			switch {
			case start < 0:
				start, inCJK = i, c
			case word && c != inCJK:
				fn(text[start:i])
				start, inCJK = i, c
			}
			continue
		}
		if start >= 0 && (r == '\'' || r == '’') && !inCJK && apostropheJoins(text, start, i, utf8.RuneLen(r)) {
			continue
		}
		if start >= 0 {
			fn(text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

func oracleCJKTerms(run string, emit func(string)) {
	common := true
	for _, r := range run {
		if !commonCJK(r) {
			common = false
			break
		}
	}
	if !common {
		run = norm.NFKC.String(run)
	}
	a, b := -1, -1
	for i, r := range run {
		if !common && i > 0 && unicode.Is(unicode.Mn, r) {
			continue
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
		emit(run)
	}
}

func oracleWord(w string, emit func(string)) {
	if isASCII(w) {
		word(strings.ToLower(w), emit)
		return
	}
	if !hasCJK(w) {
		word(foldUnicode(w), emit)
		return
	}
	oracleFields(w, func(f string) {
		if r, _ := utf8.DecodeRuneInString(f); cjk(r) {
			oracleCJKTerms(f, emit)
		} else {
			word(foldUnicode(f), emit)
		}
	})
}

func oracleWords(text string, emit func(string)) {
	oracleFields(text, func(w string) {
		if cjkRun(w) {
			oracleCJKTerms(w, emit)
		} else {
			oracleWord(w, emit)
		}
	})
}

func oracleAnalyze(f Fields) Doc {
	at := make(map[string]int, 64)
	var d Doc
	term := func(t string) *TermFreq {
		i, ok := at[t]
		if !ok {
			i = len(d.Terms)
			at[t] = i
			d.Terms = append(d.Terms, TermFreq{Term: t})
		}
		return &d.Terms[i]
	}
	inc := func(n *uint8) {
		if *n < 255 {
			*n++
		}
	}
	field := func(w string, n func(*TermFreq) *uint8, body bool) {
		if cjkRun(w) {
			oracleCJKTerms(w, func(t string) {
				inc(n(term(t)))
				if body {
					d.BodyLen++
				}
			})
			return
		}
		var t string
		oracleWord(w, func(s string) { t = s })
		if t != "" {
			inc(n(term(t)))
			if body {
				d.BodyLen++
			}
		}
		Parts(w, func(p string) { inc(n(term(PartPrefix + p))) })
	}
	oracleWords(f.Path, func(t string) { inc(&term(t).Path) })
	oracleFields(f.Heading, func(w string) { field(w, func(tf *TermFreq) *uint8 { return &tf.Heading }, false) })
	// Not frozen (rules, not speed): the names the body defines and the
	// kind of file, as Analyze takes them.
	Definitions(f.Body, func(name string) {
		if id := definedIdent(name); id != "" {
			inc(&term(IdentPrefix + id).Path)
		}
	})
	oracleFields(f.Body, func(w string) { field(w, func(tf *TermFreq) *uint8 { return &tf.Body }, true) })
	Identifiers(f.Heading+"\n"+f.Body, func(id string) { inc(&term(IdentPrefix + id).Idents); d.IdentsLen++ })
	d.Structured = f.Structured
	return d
}

// oraclePieces are what the mixed texts are made of: common and uncommon
// CJK (Kana marks, half-width Katakana, Hangul Jamo, Han extensions and
// compatibility ideographs), Latin words of every kind Word reads, NFKC
// forms, marks, apostrophes, invalid UTF-8 and separators.
var oraclePieces = []string{
	"默认端口", "是", "多少", "使用Prometheus监控", "数据默认保留十五天", "，", "。", "、",
	"キャッシュの削除", "サーバー", "ｶﾀｶﾅ", "ｶﾞ", "ガ", "か\u3099", "ゝゞ", "ー", "・", "\u309b", "ヿ", "ㇰ",
	"한국어", "텍스트", "\u1100\u1161", "ᄀ", "ㄱ", "\U00020000\U0002A6D6", "\uF900", "㐀", "〇", "々",
	"the", "retention", "Configuring", "maxIdleConns", "HTTPServer", "IPv4Address", "userIDs", "don't", "O'Reilly",
	"user’s", "Café", "Maßnahmen", "ﬁle", "ＨＴＴＰ２", "ＫＥＥＰＡＬＩＶＥ", "a\u0301", "\u0301", "x", "15d", "2",
	"OLLAMA_HOST", "exec.LookPath", "--keep-alive", "net/http", "snake_case", "ı", "İ", "ǅ", "ᾈ", "Ωmega",
	" ", " ", "\n", "\t", ".", "-", "'", "’", "_", "/", "\xff", "\xe4\xb8", "\xed\xa0\x80", "\xe3\x80\x80", "①",
	strings.Repeat("数据", 40), strings.Repeat("ab", 40), "中文English混合text",
}

func oracleText(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(40) {
		b.WriteString(oraclePieces[r.IntN(len(oraclePieces))])
	}
	return b.String()
}

func collect(f func(string, func(string)), s string) []string {
	var out []string
	f(s, func(t string) { out = append(out, t) })
	return out
}

func sameAsOracle(t *testing.T, s string) {
	t.Helper()
	if got, want := collect(fields, s), collect(oracleFields, s); !slices.Equal(got, want) {
		t.Fatalf("fields(%q) = %q, oracle %q", s, got, want)
	}
	if got, want := collect(Words, s), collect(oracleWords, s); !slices.Equal(got, want) {
		t.Fatalf("Words(%q) = %q, oracle %q", s, got, want)
	}
	if got, want := collect(Word, s), collect(oracleWord, s); !slices.Equal(got, want) {
		t.Fatalf("Word(%q) = %q, oracle %q", s, got, want)
	}
	if got, want := collect(cjkTerms, s), collect(oracleCJKTerms, s); cjkRun2(s) && !slices.Equal(got, want) {
		t.Fatalf("cjkTerms(%q) = %q, oracle %q", s, got, want)
	}
	for _, f := range []Fields{{Body: s}, {Path: s, Heading: s, Body: s}, {Heading: "使用" + s, Body: s + " " + s}, {Body: s, Structured: true}} {
		got, want := Analyze(f), oracleAnalyze(f)
		if !slices.Equal(got.Terms, want.Terms) || got.BodyLen != want.BodyLen || got.IdentsLen != want.IdentsLen {
			t.Fatalf("Analyze(%+v) =\n%+v\noracle\n%+v", f, got, want)
		}
	}
}

// cjkRun2 reports whether s is one field of CJK characters, as cjkTerms
// is called with.
func cjkRun2(s string) bool {
	fs := collect(oracleFields, s)
	return len(fs) == 1 && fs[0] == s && cjkRun(s)
}

// The fast analyser gives exactly the terms, frequencies and lengths of
// the oracle over mixed Chinese, Japanese, Korean, Latin and NFKC text.
func TestAnalysisMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 6))
	for range 1500 {
		sameAsOracle(t, oracleText(r))
	}
	for _, s := range oraclePieces {
		sameAsOracle(t, s)
	}
	for _, sentences := range [][]string{benchEnglish, benchChinese} {
		for _, ch := range benchChunks(sentences, 64<<10) {
			sameAsOracle(t, ch)
		}
	}
}

// Terms that repeat past 255 and chunks of thousands of distinct terms
// (the table grows) are counted as the oracle counts them.
func TestAnalysisMatchesOracleOnLargeChunks(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		b.WriteRune(rune(0x4E00 + i*7%20000))
		b.WriteRune(rune(0xAC00 + i%50))
		b.WriteString(" word ")
		b.WriteString(strings.Repeat("x", i%5+2))
		b.WriteString(" 数据")
	}
	sameAsOracle(t, b.String())
}

func FuzzAnalysisMatchesOracle(f *testing.F) {
	for _, s := range oraclePieces {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameAsOracle(t, s) })
}

// Chunks analysed at once, as an index build does, each get their own
// terms: the reused tables are never shared.
func TestAnalysisMatchesOracleConcurrently(t *testing.T) {
	chunks := append(benchChunks(benchChinese, 32<<10), benchChunks(benchEnglish, 32<<10)...)
	want := make([]Doc, len(chunks))
	for i, ch := range chunks {
		want[i] = oracleAnalyze(Fields{Body: ch})
	}
	got := make([][]Doc, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, ch := range chunks {
				got[g] = append(got[g], Analyze(Fields{Body: ch}))
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, d := range got[g] {
			if !slices.Equal(d.Terms, want[i].Terms) || d.BodyLen != want[i].BodyLen {
				t.Fatalf("goroutine %d, chunk %d: terms differ from the oracle's", g, i)
			}
		}
	}
}

// sameTexts checks that AnalyzeTexts is Analyze and the texts TermText
// and IdentifierText give, which a store that keeps them searches with.
func sameTexts(t *testing.T, heading, body string) {
	t.Helper()
	f := Fields{Heading: heading, Body: body}
	d, tx := AnalyzeTexts(f)
	if want := Analyze(f); !reflect.DeepEqual(d, want) {
		t.Fatalf("AnalyzeTexts(%q, %q) gives another Doc than Analyze", heading, body)
	}
	want := Texts{Body: TermText(body), Heading: TermText(heading), Identifiers: IdentifierText(heading + "\n" + body)}
	if tx != want {
		t.Fatalf("AnalyzeTexts(%q, %q):\n%+v, want\n%+v", heading, body, tx, want)
	}
}

func TestAnalyzeTextsIsAnalyzeAndItsTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for range 1500 {
		sameTexts(t, oracleText(r), oracleText(r))
	}
	for _, s := range oraclePieces {
		sameTexts(t, s, s)
		sameTexts(t, "", s)
	}
	for _, s := range []string{"maxIdleConns --keep-alive", "exec.LookPath OLLAMA_HOST getUserById", "fooBar_baz qux—quux HTTPServer's"} {
		sameTexts(t, s, "Set "+s+" and net/http::Client->x")
	}
}

func FuzzAnalyzeTexts(f *testing.F) {
	for _, s := range oraclePieces {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, heading, body string) { sameTexts(t, heading, body) })
}
