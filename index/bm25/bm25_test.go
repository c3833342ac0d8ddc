package bm25

import (
	"fmt"
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
	tf := map[string]uint8{}
	for _, x := range d.Terms {
		tf[x.Term] = x.TF
	}
	if tf["retent"] != 3 || tf["storag"] != 3 || tf[IdentPrefix+"storagetsdbretentiontime"] != 1 {
		t.Errorf("terms = %v", tf)
	}
	if d.Len != 12 {
		t.Errorf("len = %d, want 12", d.Len)
	}
}

func TestListRoundTrip(t *testing.T) {
	var a, b List
	a.Add(3, 1, 10)
	a.Add(300, 2, 20)
	b.Add(1000000, 7, 255)
	var got List
	for _, l := range []List{a, b} {
		data, tfs := l.Encode()
		if err := got.Decode(data, tfs, len(l.IDs)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got.IDs, []int64{3, 300, 1000000}) || !slices.Equal(got.Impacts, []uint8{10, 20, 255}) || !slices.Equal(got.TFs, []uint8{1, 2, 7}) {
		t.Errorf("decoded %+v", got)
	}
	// Two stored lists out of order are damage, not a silently wrong merge.
	data, _ := a.Encode()
	if err := got.Decode(data, nil, 2); err != ErrFormat {
		t.Errorf("out of order: %v", err)
	}
}

func TestDecodeRefusesDamage(t *testing.T) {
	var l List
	l.Add(5, 1, 9)
	l.Add(6, 1, 9)
	data, tfs := l.Encode()
	for _, c := range []struct {
		data, tfs []byte
		n         int
	}{
		{data[:3], nil, 2}, {data, nil, 3}, {data, nil, 0}, {data, tfs[:1], 2},
		{[]byte{0, 0, 1, 1}, nil, 2}, {[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, nil, 1},
	} {
		var got List
		if err := got.Decode(c.data, c.tfs, c.n); err != ErrFormat {
			t.Errorf("Decode(%v, %v, %d) = %v, want ErrFormat", c.data, c.tfs, c.n, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	var l List
	l.Add(5, 1, 9)
	l.Add(600, 3, 200)
	data, tfs := l.Encode()
	f.Add(data, tfs, 2)
	f.Fuzz(func(t *testing.T, data, tfs []byte, n int) {
		var got List
		if got.Decode(data, tfs, n%100000) == nil && !slices.IsSorted(got.IDs) {
			t.Fatalf("decoded ids out of order: %v", got.IDs)
		}
	})
}

func TestImpactFavoursShortChunksAndSaturates(t *testing.T) {
	p := DefaultParams
	if p.Impact(1, 50, 100) <= p.Impact(1, 200, 100) {
		t.Error("a short chunk should outweigh a long one with the same tf")
	}
	if d1, d2 := int(p.Impact(2, 100, 100))-int(p.Impact(1, 100, 100)), int(p.Impact(20, 100, 100))-int(p.Impact(19, 100, 100)); d1 <= d2 {
		t.Errorf("repeats should count less and less: +%d then +%d", d1, d2)
	}
	if p.Impact(1, 1e9, 1) == 0 {
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
					l.Add(int64(id), 1, uint8(1+r.IntN(255)))
				}
			}
			terms = append(terms, &Term{List: l, Weight: DefaultParams.Weight(docs, len(l.IDs))})
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
