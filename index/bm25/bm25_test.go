package bm25

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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

func TestListRoundTrip(t *testing.T) {
	var a, b List
	a.Add(3, 10)
	a.Add(300, 20)
	b.Add(1000000, 255)
	var got List
	for _, l := range []List{a, b} {
		if err := got.Decode(l.Encode(), len(l.IDs)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got.IDs, []int64{3, 300, 1000000}) || !slices.Equal(got.Impacts, []uint8{10, 20, 255}) {
		t.Errorf("decoded %+v", got)
	}
	// Two stored lists out of order are damage, not a silently wrong merge.
	if err := got.Decode(a.Encode(), 2); err != ErrFormat {
		t.Errorf("out of order: %v", err)
	}
}

func TestDecodeRefusesDamage(t *testing.T) {
	var l List
	l.Add(5, 9)
	l.Add(6, 9)
	data := l.Encode()
	for _, c := range []struct {
		data []byte
		n    int
	}{
		{data[:3], 2}, {data, 3}, {data, 0}, {[]byte{0, 0, 1, 1}, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1}, 1},
		{slices.Concat(bytes.Repeat([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f}, 3), []byte{1, 1, 1}), 3}, // ids past 2^63
	} {
		var got List
		if err := got.Decode(c.data, c.n); err != ErrFormat {
			t.Errorf("Decode(%v, %d) = %v, want ErrFormat", c.data, c.n, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	var l List
	l.Add(5, 9)
	l.Add(600, 200)
	f.Add(l.Encode(), 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		var got List
		if got.Decode(data, n%100000) == nil && (!slices.IsSorted(got.IDs) || len(got.IDs) != len(got.Impacts)) {
			t.Fatalf("decoded %v", got)
		}
	})
}

func TestImpactFavoursShortBodiesAndSaturates(t *testing.T) {
	p := DefaultParams
	avg := Averages{Body: 100, Idents: 10}
	one := TermFreq{Body: 1}
	if p.Impact(one, Doc{BodyLen: 50}, avg) <= p.Impact(one, Doc{BodyLen: 200}, avg) {
		t.Error("a short body should outweigh a long one with the same tf")
	}
	at := func(n uint8) int { return int(p.Impact(TermFreq{Body: n}, Doc{BodyLen: 100}, avg)) }
	if d1, d2 := at(2)-at(1), at(20)-at(19); d1 <= d2 {
		t.Errorf("repeats should count less and less: +%d then +%d", d1, d2)
	}
	// A heading says what the chunk is about, however long its body.
	head := TermFreq{Heading: 1}
	if p.Impact(head, Doc{BodyLen: 1000}, avg) != p.Impact(head, Doc{BodyLen: 10}, avg) || p.Impact(head, Doc{}, avg) <= p.Impact(one, Doc{BodyLen: 100}, avg) {
		t.Error("a heading match should count double and not shrink with the body")
	}
	if p.Impact(one, Doc{BodyLen: 1 << 30}, avg) == 0 {
		t.Error("a present term must never weigh 0")
	}
}

// TestTopKIsExact checks MaxScore's skipping against scoring every posting,
// on random lists shaped like real ones: a few long lists of common terms,
// short lists of rare ones.
func TestTopKIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		docs := 50 + r.IntN(3000)
		var terms []*Term
		for range 1 + r.IntN(8) {
			var l List
			p := 0.002 + r.Float64()*r.Float64()*0.6
			for id := 1; id <= docs; id++ {
				if r.Float64() < p {
					l.Add(int64(id), uint8(1+r.IntN(255)))
				}
			}
			terms = append(terms, &Term{List: l, Weight: DefaultParams.Weight(IDF(docs, len(l.IDs)))})
		}
		deleted := map[int64]bool{}
		for range r.IntN(20) {
			deleted[int64(1+r.IntN(docs))] = true
		}
		k := 1 + r.IntN(60)
		got := TopK(terms, k, func(id int64) bool { return deleted[id] })
		want := exhaustive(terms, k, deleted)
		if !sameHits(got, want) {
			t.Fatalf("trial %d (k=%d): MaxScore\n%v\nexhaustive\n%v", trial, k, got, want)
		}
	}
}

func exhaustive(terms []*Term, k int, deleted map[int64]bool) []Hit {
	acc := map[int64]float64{}
	// Add in the order TopK does (ascending upper bound) so float sums match.
	order := slices.Clone(terms)
	sort.SliceStable(order, func(i, j int) bool { return order[i].ub < order[j].ub })
	for _, tm := range order {
		for i, id := range tm.List.IDs {
			acc[id] += tm.Weight * float64(tm.List.Impacts[i])
		}
	}
	var all []Hit
	for id, s := range acc {
		if !deleted[id] {
			all = append(all, Hit{id, s})
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return all[:min(k, len(all))]
}

// sameHits compares rankings, allowing for the order in which float scores
// were summed.
func sameHits(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || math.Abs(a[i].Score-b[i].Score) > 1e-9 {
			return false
		}
	}
	return true
}

func TestIdentifiers(t *testing.T) {
	var got []string
	Identifiers("Set OLLAMA_HOST, call exec.LookPath or pass --keep-alive; see net/http and snake_case.", func(id string) { got = append(got, id) })
	if want := []string{"ollamahost", "execlookpath", "keepalive", "nethttp", "snakecase"}; !slices.Equal(got, want) {
		t.Errorf("identifiers = %q, want %q", got, want)
	}
}

func TestProximityRewardsQueryWordsTogether(t *testing.T) {
	stems := Query("retention time flag")[:3] // retent, time, flag
	p := NewProximity(stems, []float64{3, 1, 2})
	together := "Storage\n\nSet the --storage.tsdb.retention.time FLAG to keep data longer.\n"
	apart := "Retention is described below.\n\nLots\nof\nother\nlines.\n\nTime passes.\n\nA flag.\n"
	if got := p.Score(together); got != 6 {
		t.Errorf("all three words on one line: %v, want 6", got)
	}
	if got := p.Score(apart); got != 3 {
		t.Errorf("words far apart: %v, want the best single word, 3", got)
	}
	if got := p.Score("Rétentions over\ntwo lines: timing\n"); got != 4 {
		t.Errorf("stemmed and folded words within three lines: %v, want 4", got)
	}
}

// Pending's compact form gives the same postings and impacts as the Docs
// it was given.
func TestPendingKeepsWhatItIsGiven(t *testing.T) {
	docs := []Doc{
		Analyze(Fields{Path: "a.md", Heading: "Retention", Body: "Retention is 15d by default."}),
		Analyze(Fields{Path: "b.md", Heading: "Storage", Body: "Set storage.tsdb.retention.time to keep more."}),
	}
	ids := []int64{7, 300}
	p := NewPending()
	for i, d := range docs {
		p.Add(ids[i], d)
	}
	avg := Averages{Body: 6, Idents: 1}
	want := map[string]string{}
	for i, d := range docs {
		for _, tf := range d.Terms {
			want[tf.Term] += fmt.Sprintf("%d:%d ", ids[i], DefaultParams.Impact(tf, d, avg))
		}
	}
	got := map[string]string{}
	var order []string
	p.Each(DefaultParams, avg, func(term string, l *List) error {
		order = append(order, term)
		for i, id := range l.IDs {
			got[term] += fmt.Sprintf("%d:%d ", id, l.Impacts[i])
		}
		return nil
	})
	if !maps.Equal(got, want) || !slices.IsSorted(order) || p.Len() != 2 || p.Last() != 300 {
		t.Errorf("pending gave %v in order %v, want %v", got, order, want)
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

func TestMergeScoresAWordOnce(t *testing.T) {
	word := List{IDs: []int64{1, 3}, Impacts: []uint8{100, 40}}
	part := List{IDs: []int64{2, 3, 4}, Impacts: []uint8{200, 200, 10}}
	got := Merge(&word, &part, 0.25)
	want := List{IDs: []int64{1, 2, 3, 4}, Impacts: []uint8{100, 50, 50, 3}}
	if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Impacts, want.Impacts) {
		t.Errorf("Merge = %+v, want %+v (the better of word and scaled part per chunk)", got, want)
	}
}
