package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// BenchmarkServeOverhead is lore's own time per streamed answer, without
// the stand-in's token delays that make BenchmarkServeLoad's difference
// of two 420 ms p50s noisy: the stand-in streams the same 20 tokens at
// once, one client at a time asks it directly then through lore (a real
// engine over the three-file index, real TCP on 127.0.0.1), 9 rounds of
// 40 requests each alternating, and the overhead is the difference of the
// p50s. It runs once whatever b.N is and stops by itself.
//
// LORE_OVERHEAD_GAP=20ms gives the stand-in BenchmarkServeLoad's token
// delays back (then 3 rounds of 10): lore's time per token, not only per
// request, shows then.
func BenchmarkServeOverhead(b *testing.B) {
	rounds, each := 9, 40
	fake := ollamatest.New(b)
	script := ollamatest.ChatScript{Tokens: answerTokens()}
	if gap, err := time.ParseDuration(os.Getenv("LORE_OVERHEAD_GAP")); err == nil && gap > 0 {
		script.FirstDelay, script.TokenDelay = gap, gap
		rounds, each = 3, 10
	}
	fake.SetChat(script)
	eng := loadEngine(b, fake)
	defer eng.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := New(eng, Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	hs := srv.HTTPServer(base)
	go hs.Serve(ln)
	defer hs.Close()
	chatURL := "http://" + ln.Addr().String() + "/v1/chat/completions"
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	var direct, lore []time.Duration
	run := func(into *[]time.Duration, do func(context.Context) outcome) {
		for range each {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			o := do(ctx)
			cancel()
			if o.err != nil {
				b.Fatal(o.err)
			}
			*into = append(*into, o.total)
		}
	}
	for range 2 { // warm-up: connections, the index, the model check
		loreChat(context.Background(), tr, chatURL)
		directChat(context.Background(), tr, fake.URL)
	}
	b.ResetTimer()
	for range rounds {
		run(&direct, func(ctx context.Context) outcome { return directChat(ctx, tr, fake.URL) })
		run(&lore, func(ctx context.Context) outcome { return loreChat(ctx, tr, chatURL) })
	}
	b.StopTimer()
	p := func(d []time.Duration, q int) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)*q/100]) / float64(time.Millisecond)
	}
	b.ReportMetric(p(direct, 50), "direct-p50-ms")
	b.ReportMetric(p(lore, 50), "lore-p50-ms")
	b.ReportMetric(p(lore, 50)-p(direct, 50), "overhead-p50-ms")
	b.ReportMetric(p(lore, 90)-p(direct, 90), "overhead-p90-ms")
	fmt.Printf("    serve overhead: %d streams each: stand-in direct p50 %.2f ms, through lore p50 %.2f ms: lore adds %.2f ms (p90 %.2f)\n",
		len(lore), p(direct, 50), p(lore, 50), p(lore, 50)-p(direct, 50), p(lore, 90)-p(direct, 90))
}
