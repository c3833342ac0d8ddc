package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// BenchmarkBodyFlood is issue 35's flood on loopback: 256 clients at once,
// each posting 4 chat bodies of 975 KB (under the 1 MiB cap), one after
// the other, against a server with the default limits. It reports the
// process's RSS before and its peak during the flood (sampled every 50
// ms), and what the clients got. LORE_FLOOD_UNBOUNDED=1 lifts the body
// budget: the server as it was before it, for the comparison. It runs
// once whatever b.N is, and stops by itself.
func BenchmarkBodyFlood(b *testing.B) {
	const clients, each, size = 256, 4, 975 << 10
	fake := ollamatest.New(b)
	fake.SetChat(ollamatest.ChatScript{Tokens: answerTokens()})
	eng := loadEngine(b, fake)
	defer eng.Close()
	opt := Options{}
	if os.Getenv("LORE_FLOOD_UNBOUNDED") == "1" {
		opt.BodyBudget = 1 << 40
	}
	srv := New(eng, opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs := srv.HTTPServer(base)
	go srv.Serve(hs, ln)
	defer hs.Close()
	u := "http://" + ln.Addr().String() + "/v1/chat/completions"
	pad := strings.Repeat("timeout ", (size-200)/8)
	body := []byte(`{"model":"lore","messages":[{"role":"user","content":"` + pad + `How do I cancel a request after a timeout?"}]}`)

	rssStart := rssMiB()
	peak := rssStart
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, rssMiB())
			}
		}
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for range each {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				key := ""
				if resp, err := tr.RoundTrip(req); err != nil {
					key = "transport error"
				} else {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					key = fmt.Sprint(resp.StatusCode)
				}
				cancel()
				mu.Lock()
				codes[key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	<-sampled
	b.ReportMetric(rssStart, "RSS-start-MiB")
	b.ReportMetric(peak, "RSS-peak-MiB")
	b.ReportMetric(float64(codes["200"]), "200s")
	b.ReportMetric(float64(codes["429"]), "429s")
	fmt.Printf("    body flood: %d clients x %d bodies of %d KB in %.1f s: %v; RSS %.1f MiB before, peak %.1f MiB (+%.1f)\n",
		clients, each, size>>10, wall.Seconds(), codes, rssStart, peak, peak-rssStart)
	if codes["transport error"] > 0 || len(codes) > 3 {
		b.Errorf("answers other than 200 and 429: %v", codes)
	}
}
