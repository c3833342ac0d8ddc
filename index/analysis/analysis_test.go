package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
		{"HTTP", ""}, {"Server", ""}, {"timeout", ""}, {"ipv4", ""},
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
