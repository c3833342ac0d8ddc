package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func words(text string) []string {
	var out []string
	Words(text, func(t string) { out = append(out, t) })
	return out
}

func TestWordsIndexAndQueryAlike(t *testing.T) {
	// What a chunk says and how a user asks it must meet on the same terms.
	got := strings.Join(words("Configuring the retention of Café data, in 15d"), " ")
	if got != "configur retent cafe data 15d" {
		t.Errorf("words = %q", got)
	}
	if q := strings.Join(Query("how do I configure retention?"), " "); q != "configur retent \x01configure \x01retention" {
		t.Errorf("query = %q", q)
	}
}

func TestQueryFindsIdentifiers(t *testing.T) {
	q := Query("where is OLLAMA_HOST read, and what does exec.LookPath do with --keep-alive?")
	for _, want := range []string{IdentPrefix + "ollamahost", IdentPrefix + "execlookpath", IdentPrefix + "keepalive", "ollama", "lookpath"} {
		if !slices.Contains(q, want) {
			t.Errorf("query terms %q lack %q", q, want)
		}
	}
}

func TestPlainWordFindsSquashedIdentifier(t *testing.T) {
	if q := Query("the keepalive flag"); !slices.Contains(q, IdentPrefix+"keepalive") {
		t.Errorf("query terms %q cannot find --keep-alive", q)
	}
}

func TestQueryIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "word%d ", i)
	}
	if n := len(Query(b.String())); n != MaxQueryTerms {
		t.Errorf("a pasted page gave %d terms, want %d", n, MaxQueryTerms)
	}
}

func TestAnalyzeCountsEveryField(t *testing.T) {
	d := Analyze(Fields{Path: "storage.md", Heading: "Storage > Retention", Body: "Retention is 15d. Set storage.tsdb.retention.time."})
	tf := map[string]TermFreq{}
	for _, x := range d.Terms {
		tf[x.Term] = x
	}
	if r := tf["retent"]; r.Path != 0 || r.Heading != 1 || r.Body != 2 {
		t.Errorf("retention counted %+v", r)
	}
	if s := tf["storag"]; s.Path != 1 || s.Heading != 1 || s.Body != 1 {
		t.Errorf("storage counted %+v", s)
	}
	if id := tf[IdentPrefix+"storagetsdbretentiontime"]; id.Idents != 1 {
		t.Errorf("identifier counted %+v", id)
	}
	if d.BodyLen != 7 || d.IdentsLen != 1 {
		t.Errorf("lengths %d, %d; want 7, 1", d.BodyLen, d.IdentsLen)
	}
}

func TestIdentifiers(t *testing.T) {
	var got []string
	Identifiers("Set OLLAMA_HOST, call exec.LookPath or pass --keep-alive; see net/http and snake_case.", func(id string) { got = append(got, id) })
	if want := []string{"ollamahost", "execlookpath", "keepalive", "nethttp", "snakecase"}; !slices.Equal(got, want) {
		t.Errorf("identifiers = %q, want %q", got, want)
	}
}

// A stopword's own inflections are stopwords too, and a word that merely
// stems onto one (one → on) keeps its own form: it stays searchable and is
// not confused with the word it collides with.
func TestStopwordsAfterStemming(t *testing.T) {
	for text, want := range map[string]string{
		"uses used using gets making": "",
		"one ones":                    "one one",
		"only one replica":            "onli one replica",
	} {
		if got := strings.Join(words(text), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", text, got, want)
		}
	}
}

// A contraction is read as its word: don't is do (a stopword), never the
// term "don"; a possessive is its noun.
func TestContractions(t *testing.T) {
	for text, want := range map[string]string{
		"don't doesn't can't won't isn't you're": "",
		"the server's config":                    "server config",
		"the server’s config":                    "server config",
		"O'Reilly":                               "oreilli",
	} {
		if got := strings.Join(words(text), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", text, got, want)
		}
	}
}

// A single digit is a term (HTTP/2, version 3), a single letter is not.
func TestSingleDigitsAreTerms(t *testing.T) {
	if got := strings.Join(words("HTTP/2 in version 3, x and y"), " "); got != "http 2 version 3" {
		t.Errorf("words = %q", got)
	}
}

// A plain word's squashed-identifier expansion is tied to the word's own
// term, so the search can weigh it no higher than the word; a named
// identifier is not.
func TestExpansionIsTiedToItsWord(t *testing.T) {
	got := map[string]string{}
	for _, qt := range QueryTerms("the retention time of --keep-alive") {
		got[qt.Term] = qt.Word
	}
	if w, ok := got[IdentPrefix+"time"]; !ok || w != "time" {
		t.Errorf("time's expansion: %q, %v; terms %q", w, ok, got)
	}
	if w := got[IdentPrefix+"keepalive"]; w != "" {
		t.Errorf("the named identifier --keep-alive is tied to %q", w)
	}
	if _, ok := got[IdentPrefix+"the"]; ok {
		t.Error("a stopword is expanded")
	}
}

func TestPartsOfCamelCase(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"maxIdleConns", "max idl conn"},
		{"getUserById", "user id"}, // get is a stopword
		{"HTTPServer", "http server"},
		{"ReadTimeout", "read timeout"},
		{"X509KeyPair", "x509 kei pair"},
		// One lower-case letter after capitals is a version letter or a
		// plural, and stays with its acronym, stemmed as the word is.
		{"IPv4Address", "ipv4 address"},
		{"userIDs", "user id"},
		{"CPUsPerNode", "cpu per node"},
		{"ＩＰｖ４Ａｄｄｒｅｓｓ", "ipv4 address"},
		{"HTTP", ""}, {"Server", ""}, {"timeout", ""}, {"ipv4", ""}, {"IPv4", ""}, {"IDs", ""}, {"URLs", ""},
	} {
		var got []string
		Parts(c.in, func(p string) { got = append(got, p) })
		if strings.Join(got, " ") != c.want {
			t.Errorf("Parts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAnalyzeKeepsPartsApart(t *testing.T) {
	d := Analyze(Fields{Heading: "Pool", Body: "Set maxIdleConns, or the idle limit."})
	got := map[string]TermFreq{}
	for _, tf := range d.Terms {
		got[tf.Term] = tf
	}
	if got["maxidleconn"].Body != 1 || got["idl"].Body != 1 || got[PartPrefix+"idl"].Body != 1 || got[PartPrefix+"max"].Body != 1 {
		t.Errorf("terms %+v: want the identifier whole, its parts under PartPrefix, and the word idle on its own", d.Terms)
	}
	if _, ok := got["max"]; ok {
		t.Errorf("a part is among the words: %+v", d.Terms)
	}
	if d.BodyLen != 4 { // set maxidleconn idl limit: "or" and "the" are stopwords
		t.Errorf("body length %d counts the parts", d.BodyLen)
	}
}

// A question naming a camelCase identifier searches it whole and by its
// parts, so the text that explains the setting in words is found too.
func TestQuerySearchesCamelCaseWholeAndByParts(t *testing.T) {
	q := Query("what does maxIdleConns limit, and IPv4Address?")
	for _, want := range []string{"maxidleconn", "max", "idl", "conn", "ipv4address", "ipv4", "address"} {
		if !slices.Contains(q, want) {
			t.Errorf("query terms %q lack %q", q, want)
		}
	}
	// A qualified name is one symbol: its parts are not searched.
	if q := Query("what does context.WithTimeout return?"); slices.Contains(q, "timeout") {
		t.Errorf("query terms %q search a part of a qualified name", q)
	}
	// The part of an identifier and the word of a text meet on one stem.
	if w := words("the user ids"); !slices.Contains(w, "id") {
		t.Errorf("words = %q", w)
	}
}

// Runs of Han, Kana and Hangul are read as overlapping bigrams, apart from
// the Latin words beside them; a lone character is a term of its own.
func TestCJKBigrams(t *testing.T) {
	for text, want := range map[string]string{
		"默认端口是多少":         "默认 认端 端口 口是 是多 多少",
		"默认端口是9090，可以修改。": "默认 认端 端口 口是 9090 可以 以修 修改",
		"キャッシュの削除":        "キャ ャッ ッシ シュ ュの の削 削除",
		"ｶﾞｿﾘﾝ":           "ガソ ソリ リン", // half-width kana in NFKC, the dakuten kept
		"使用Prometheus监控":  "使用 prometheu 监控",
		"端 口":             "端 口",
		"캐시를 삭제":          "캐시 시를 삭제",
		"the 服务's port":   "服务 port",
	} {
		if got := strings.Join(words(text), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", text, got, want)
		}
	}
}

// A question in Chinese or Japanese shares terms with the page that
// answers it, and with no other: the run of the question is not one
// token the page never holds.
func TestCJKQuestionsMeetTheirPages(t *testing.T) {
	pages := map[string]string{
		"zh": "服务的默认端口是 9090，可以在配置文件中修改。",
		"ja": "キャッシュを削除するには clear コマンドを使います。",
	}
	for q, want := range map[string]string{"默认端口是多少": "zh", "キャッシュの削除": "ja"} {
		for name, page := range pages {
			held := map[string]bool{}
			for _, tf := range Analyze(Fields{Body: page}).Terms {
				held[tf.Term] = true
			}
			c := Coverage(QueryWords(q), func(t string) bool { return held[t] })
			if name == want && c < 0.5 || name != want && c > 0 {
				t.Errorf("%q covers %.2f of page %s", q, c, name)
			}
		}
	}
}

// Two words of a question that docs write as one are also that one word:
// a word and the next ("time zone"), a verb and its particle a few words
// on ("roll an application back"). Not a word the question says already,
// not across a stopword that is no particle or a clause's end, and not
// without bound: each is a lookup.
func TestQueryCompounds(t *testing.T) {
	var long []string
	for i := range 100 {
		long = append(long, fmt.Sprintf("word%c%c", 'a'+i%26, 'a'+i/26))
	}
	n := 0
	for _, w := range QueryWords(strings.Join(long, " ")) {
		n += len(w.Compounds)
	}
	if n == 0 || n > 2*16 { // each is two words'
		t.Errorf("a long question has %d compounds, want 1 to 16", n/2)
	}
	for _, c := range []struct {
		q        string
		has, not []string
	}{
		{"How do I set the time zone?", []string{"time:timezon", "zone:timezon"}, []string{"set:setth"}},
		{"Can I roll an application back?", []string{"roll:rollback"}, []string{"roll:rollan"}},
		{"How do I log in with SSO?", []string{"log:login"}, nil},
		{"Why does the server shut down at night?", []string{"shut:shutdown"}, []string{"down:downat"}},
		{"Is rollback the same as roll back?", nil, []string{"roll:rollback", "back:rollback"}},
		{"Which time the zone of the clock is set?", nil, []string{"time:timezon"}},
		{"Can I roll the new application back?", nil, []string{"roll:rollback"}}, // too far
		{"Where is the log? In the pod?", nil, []string{"log:login"}},            // another clause
		{"Can I roll back up to ten releases?", []string{"roll:rollback"}, []string{"roll:rollup"}},
	} {
		got := map[string]bool{}
		for _, w := range QueryWords(c.q) {
			for _, cp := range w.Compounds {
				got[w.Term+":"+cp] = true
			}
		}
		for _, h := range c.has {
			if !got[h] {
				t.Errorf("%q: no compound %s in %v", c.q, h, got)
			}
		}
		for _, n := range c.not {
			if got[n] {
				t.Errorf("%q: compound %s", c.q, n)
			}
		}
	}
}

// A clipped word is covered by the page that spells it out, as ranking
// finds it there ("repo" by "repository", "apps" by "applications").
func TestCoverageCountsAWordsOtherForms(t *testing.T) {
	held := map[string]bool{}
	for _, tf := range Analyze(Fields{Body: "Applications read their repository."}).Terms {
		held[tf.Term] = true
	}
	if c := Coverage(QueryWords("apps repo"), func(t string) bool { return held[t] }); c != 1 {
		t.Errorf("coverage %.2f, want 1", c)
	}
}

// Coverage counts a CJK run by its characters: a page that holds every
// word of a Chinese question holds all of it, though the bigrams that
// straddle two of its words (认端, 口是) are in no page. Counted by
// bigrams it held half; keyword-only routing then refused 16 of the 18
// answerable questions of the public Chinese set. A Latin word still
// counts one, whatever its neighbours.
func TestCoverageCountsCJKByCharacters(t *testing.T) {
	holds := func(page string) func(string) bool {
		held := map[string]bool{}
		for _, tf := range Analyze(Fields{Body: page}).Terms {
			held[tf.Term] = true
		}
		return func(t string) bool { return held[t] }
	}
	for _, c := range []struct {
		q, page string
		want    float64
	}{
		{"默认端口是多少", "默认 端口 是多少", 1},
		{"默认端口是多少", "默认 端口", 4.0 / 7},
		{"默认端口", "端口", 0.5},
		{"retention 默认", "retention", 0.5},
		{"retention time 默认端口", "retention time", 0.5},
		{"data retention time", "retention", 1.0 / 3},
		{"idle connections", "maxIdleConns", 1}, // conns abbreviates connections
	} {
		if got := Coverage(QueryWords(c.q), holds(c.page)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%q over %q covers %.3f, want %.3f", c.q, c.page, got, c.want)
		}
	}
	if w := Weight(QueryWords("retention time 默认端口是多少")); w != 5.5 {
		t.Errorf("weight %v, want 5.5 (two words and seven characters)", w)
	}
}

// Compatibility forms and case variants are one term: ß is ss, full-width
// letters and digits are ASCII, ligatures are their letters.
func TestCompatibilityFormsFold(t *testing.T) {
	for text, want := range map[string]string{
		"Maßnahmen Massnahmen MASSNAHMEN": "massnahmen massnahmen massnahmen",
		"ＨＴＴＰ２ ＰＯＲＴ ８０８０":                 "http2 port 8080",
		"ﬁle ﬂow":       "file flow",
		"Café İstanbul": "cafe istanbul",
	} {
		if got := strings.Join(words(text), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", text, got, want)
		}
	}
	if q := Query("ＫＥＥＰＡＬＩＶＥ"); !slices.Contains(q, IdentPrefix+"keepalive") {
		t.Errorf("query terms %q cannot find --keep-alive", q)
	}
}

// fullWidth writes the ASCII letters and digits of s in their full-width
// forms.
func fullWidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r - '!' + '！'
		}
		return r
	}, s)
}

// Analysis never panics, gives valid non-empty terms, and on ASCII the
// short way (a lowercase copy) is what the Unicode folding gives: full-width
// text is analysed exactly as its ASCII.
func FuzzAnalysis(f *testing.F) {
	for _, s := range []string{"Configuring the retention of Café data", "默认端口是多少", "キャッシュの削除", "maxIdleConns IPv4Address",
		"don't O'Reilly", "a\u0301\u3099ｶﾞ", "Maßnahmen ﬁ", "--keep-alive exec.LookPath", "\xff\xfe", "ı İ ǅ ᾈ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(term string) {
			if term == "" || !utf8.ValidString(term) && utf8.ValidString(s) {
				t.Fatalf("term %q of %q", term, s)
			}
		}
		Words(s, check)
		for _, tf := range Analyze(Fields{Path: s, Heading: s, Body: s}).Terms {
			check(tf.Term)
		}
		for _, term := range Query(s) {
			check(term)
		}
		_ = TermText(s) + IdentifierText(s)
		if !isASCII(s) {
			return
		}
		if got := foldUnicode(s); got != strings.ToLower(s) {
			t.Fatalf("foldUnicode(%q) = %q, ToLower %q", s, got, strings.ToLower(s))
		}
		if a, b := words(s), words(fullWidth(s)); !slices.Equal(a, b) {
			t.Fatalf("words(%q) = %q, of its full-width form %q", s, a, b)
		}
	})
}

// IdentifierText is the squashed identifiers, then the camelCase words,
// each once: what the Weaviate writer stores and a search asks for.
func TestIdentifierText(t *testing.T) {
	got := IdentifierText("getUserById OLLAMA_HOST fooBar_baz HTTPServer x.y io ab maxIdleConns --keep-alive")
	if want := "ollamahost foobarbaz keepalive getuserbyid httpserver maxidleconns"; got != want {
		t.Errorf("IdentifierText = %q, want %q", got, want)
	}
}
