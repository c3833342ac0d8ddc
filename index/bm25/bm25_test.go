package bm25

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/lore-cli/lore/index/analysis"
)

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
	one := analysis.TermFreq{Body: 1}
	if p.Impact(one, analysis.Doc{BodyLen: 50}, avg) <= p.Impact(one, analysis.Doc{BodyLen: 200}, avg) {
		t.Error("a short body should outweigh a long one with the same tf")
	}
	at := func(n uint8) int { return int(p.Impact(analysis.TermFreq{Body: n}, analysis.Doc{BodyLen: 100}, avg)) }
	if d1, d2 := at(2)-at(1), at(20)-at(19); d1 <= d2 {
		t.Errorf("repeats should count less and less: +%d then +%d", d1, d2)
	}
	// A heading says what the chunk is about, however long its body.
	head := analysis.TermFreq{Heading: 1}
	if p.Impact(head, analysis.Doc{BodyLen: 1000}, avg) != p.Impact(head, analysis.Doc{BodyLen: 10}, avg) || p.Impact(head, analysis.Doc{}, avg) <= p.Impact(one, analysis.Doc{BodyLen: 100}, avg) {
		t.Error("a heading match should count double and not shrink with the body")
	}
	if p.Impact(one, analysis.Doc{BodyLen: 1 << 30}, avg) == 0 {
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

func TestProximityRewardsQueryWordsTogether(t *testing.T) {
	stems := analysis.Query("retention time flag")[:3] // retent, time, flag
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
	docs := []analysis.Doc{
		analysis.Analyze(analysis.Fields{Path: "a.md", Heading: "Retention", Body: "Retention is 15d by default."}),
		analysis.Analyze(analysis.Fields{Path: "b.md", Heading: "Storage", Body: "Set storage.tsdb.retention.time to keep more."}),
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

func TestMergeScoresAWordOnce(t *testing.T) {
	word := List{IDs: []int64{1, 3}, Impacts: []uint8{100, 40}}
	part := List{IDs: []int64{2, 3, 4}, Impacts: []uint8{200, 200, 10}}
	got := Merge(&word, &part, 0.25)
	want := List{IDs: []int64{1, 2, 3, 4}, Impacts: []uint8{100, 50, 50, 3}}
	if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Impacts, want.Impacts) {
		t.Errorf("Merge = %+v, want %+v (the better of word and scaled part per chunk)", got, want)
	}
}

// Every bigram of a CJK run is an occurrence: a clause that holds two
// words of the question holds both, not the last one read.
func TestProximityCountsEachBigramOfARun(t *testing.T) {
	p := NewProximity([]string{"默认", "端口", "修改"}, []float64{1, 1, 1})
	for text, want := range map[string]float64{
		"服务的默认端口是9090":       2,
		"默认端口\n\n\n\n\n可以修改": 2, // 修改 is out of the window
		"服务的默认端口是9090，可以修改。": 3,
	} {
		for range 2 { // the second time from the cache
			if got := p.Score(text); got != want {
				t.Errorf("Score(%q) = %v, want %v", text, got, want)
			}
		}
	}
}
