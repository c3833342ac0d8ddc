package mdstream

import (
	"slices"
	"testing"
	"time"
	"unicode/utf8"
)

// benchAnswerLen is the answer size the per-token cost is measured at.
const benchAnswerLen = 20_000

// benchStream measures the cost of one more ~4-byte token arriving when the
// answer is benchAnswerLen bytes long. render is called with the growing
// prefixes from there on; prime (untimed) brings a fresh renderer up to the
// starting point, and runs again whenever the prepared text runs out.
func benchStream(b *testing.B, prime func(md string), render func(md string) error) {
	md := longAnswer(benchAnswerLen + 4_000)
	var ends []int
	for n := 0; n < len(md); {
		n = min(n+4, len(md))
		for n < len(md) && !utf8.RuneStart(md[n]) {
			n++
		}
		ends = append(ends, n)
	}
	start := 0
	for ends[start] < benchAnswerLen {
		start++
	}
	next := start
	prime(md[:ends[next-1]])
	b.ResetTimer()
	for range b.N {
		if next == len(ends) {
			b.StopTimer()
			next = start
			prime(md[:ends[next-1]])
			b.StartTimer()
		}
		if err := render(md[:ends[next]]); err != nil {
			b.Fatal(err)
		}
		next++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/token")
}

func BenchmarkStreamToken(b *testing.B) {
	opt := Options{Style: "dark", Width: 80}
	var r *Renderer
	benchStream(b,
		func(md string) {
			r = New(opt)
			if _, err := r.Render(md); err != nil {
				b.Fatal(err)
			}
		},
		func(md string) error {
			_, err := r.Render(md)
			return err
		})
}

func BenchmarkFullRerender(b *testing.B) {
	opt := Options{Style: "dark", Width: 80}
	benchStream(b,
		func(string) {},
		func(md string) error {
			_, err := Full(opt, md)
			return err
		})
}

// BenchmarkStreamVsFull is the comparison `make bench` records (it runs
// every benchmark once): the same tokens at a 20,000-character answer,
// rendered incrementally and from scratch, side by side; the per-token
// medians and their ratio.
func BenchmarkStreamVsFull(b *testing.B) {
	opt := Options{Style: "dark", Width: 80}
	md := longAnswer(benchAnswerLen + 2_000)
	var ends []int
	for n := benchAnswerLen; n < len(md); {
		n = min(n+4, len(md))
		for n < len(md) && !utf8.RuneStart(md[n]) {
			n++
		}
		ends = append(ends, n)
	}
	r := New(opt)
	if _, err := r.Render(md[:benchAnswerLen]); err != nil {
		b.Fatal(err)
	}
	var inc, full []time.Duration
	for i, end := range ends[:min(len(ends), 200)] {
		t := time.Now()
		if _, err := r.Render(md[:end]); err != nil {
			b.Fatal(err)
		}
		inc = append(inc, time.Since(t))
		if i%10 == 0 {
			t = time.Now()
			if _, err := Full(opt, md[:end]); err != nil {
				b.Fatal(err)
			}
			full = append(full, time.Since(t))
		}
	}
	mi, mf := median(inc), median(full)
	b.ReportMetric(mi.Seconds()*1e3, "incremental-ms/token")
	b.ReportMetric(mf.Seconds()*1e3, "full-ms/token")
	b.ReportMetric(float64(mi)/float64(mf), "incremental/full")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
