package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// Load: 64 streaming clients against `lore serve` for 30 s (issue 25).
const (
	loadClients = 64
	// loadDirect is how many generations run at once when the stand-in is
	// called directly: as many as lore admits (serve-max-concurrent).
	loadDirect    = 4
	loadTokens    = 20
	loadTokenGap  = 20 * time.Millisecond
	loadQuestion  = "How do I cancel a request after a timeout?"
	loadRSSGrowth = 50 // MiB the process may grow by over the load
)

// BenchmarkServeLoad puts `lore serve` under load on loopback, against the
// stand-in Ollama (internal/ollamatest) streaming 20 tokens 20 ms apart:
//
//  1. direct: 4 clients call the stand-in's /api/chat themselves, as many
//     at once as lore admits (serve-max-concurrent 4): the floor;
//  2. lore, 4 clients: the same answers through lore (a real engine over a
//     small index, real TCP), no queueing: lore's overhead per request;
//     this phase is also the warm-up;
//  3. lore, 64 clients for LORE_LOAD_SECONDS (30): each loops streaming
//     requests read to `data: [DONE]`, and honours a 429's Retry-After.
//     The promised 429s are counted; any other error fails the benchmark.
//
// RSS (VmRSS) is read after a warm-up at 64 clients and at the end of the
// load (with the heap in use after a GC beside it), and
// sampled every second for the peak; goroutines are counted before the
// server starts, after it has shut down and the clients have closed their
// connections, and again once the engine is closed too. The benchmark runs once whatever b.N is and stops by
// itself; it only ever listens and dials on 127.0.0.1.
func BenchmarkServeLoad(b *testing.B) {
	loadFor := 30 * time.Second
	if s := os.Getenv("LORE_LOAD_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("LORE_LOAD_SECONDS=%q: want a whole number of seconds", s)
		}
		loadFor = time.Duration(n) * time.Second
	}
	phase := min(loadFor/3, 10*time.Second) // each of the two 4-client phases

	fake := ollamatest.New(b)
	fake.SetChat(ollamatest.ChatScript{Tokens: answerTokens(), FirstDelay: loadTokenGap, TokenDelay: loadTokenGap})
	eng := loadEngine(b, fake)
	closeEngine := sync.OnceValue(eng.Close)
	defer closeEngine()

	// 1. The stand-in directly.
	directTr := &http.Transport{MaxIdleConnsPerHost: loadDirect}
	direct := runClients(loadDirect, phase, func(ctx context.Context) outcome { return directChat(ctx, directTr, fake.URL) })
	directTr.CloseIdleConnections()
	fake.CloseClientConnections() // and the index build's
	if direct.errors > 0 {
		b.Fatalf("direct to the stand-in: %d errors, the first: %s", direct.errors, direct.firstErr)
	}

	goBefore := settleGoroutines(0, 2*time.Second)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	// The request log is formatted as `lore serve` formats it, then dropped.
	srv := New(eng, Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	hs := srv.HTTPServer(base)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(hs, ln) }()
	chatURL := "http://" + ln.Addr().String() + "/v1/chat/completions"
	tr := &http.Transport{MaxIdleConnsPerHost: loadClients}

	// 2. Through lore, 4 at a time: the overhead, and the warm-up.
	single := runClients(loadDirect, phase, func(ctx context.Context) outcome { return loreChat(ctx, tr, chatURL) })
	if single.errors > 0 || single.busy > 0 {
		b.Errorf("lore, %d clients: %d errors, %d 429s (none expected under the limit); the first error: %s",
			loadDirect, single.errors, single.busy, single.firstErr)
	}

	// 3. Through lore, 64 clients: a few seconds to reach the steady state
	// (64 connections open, the queue full, the heap grown to its pace),
	// then the load measured.
	warm := runClients(loadClients, min(loadFor/6, 5*time.Second), func(ctx context.Context) outcome { return loreChat(ctx, tr, chatURL) })
	if warm.errors > 0 {
		b.Errorf("warm-up, %d clients: %d errors other than 429; the first: %s", loadClients, warm.errors, warm.firstErr)
	}
	rssStart, heapStart := rssMiB(), heapMiB()
	peak := rssStart
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				peak = max(peak, rssMiB())
			}
		}
	}()
	started := time.Now()
	load := runClients(loadClients, loadFor, func(ctx context.Context) outcome { return loreChat(ctx, tr, chatURL) })
	wall := time.Since(started)
	close(stopSampling)
	<-sampled
	rssEnd, heapEnd := rssMiB(), heapMiB()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	goSys := float64(ms.Sys) / (1 << 20) // what Go's runtime holds from the OS, of the RSS
	peak = max(peak, rssEnd)

	// Shut down as `lore serve` does on SIGTERM, then let the clients'
	// connections go.
	srv.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := hs.Shutdown(sctx); err != nil {
		b.Errorf("shutdown: %v", err)
	}
	cancel()
	cancelAll()
	if err := <-served; err != http.ErrServerClosed {
		b.Errorf("serve: %v", err)
	}
	tr.CloseIdleConnections()
	goAfter := settleGoroutines(goBefore, 5*time.Second)
	// What the engine still holds is the rest: its kept-alive connections
	// to the stand-in (3 goroutines each: the client's read and write
	// loops, the stand-in's side) and the index it opened (database/sql's
	// connection openers). Close them, and the engine, and count again:
	// anything above the baseline then is a leak.
	fake.CloseClientConnections()
	if err := closeEngine(); err != nil {
		b.Errorf("closing the engine: %v", err)
	}
	goEnd := settleGoroutines(goBefore, 5*time.Second)

	if load.errors > 0 {
		b.Errorf("%d errors other than 429 under load; the first: %s", load.errors, load.firstErr)
	}
	if load.done == 0 {
		b.Errorf("no stream completed under load")
	}
	if growth := rssEnd - rssStart; growth > loadRSSGrowth {
		b.Errorf("RSS grew by %.1f MiB under load (%.1f to %.1f), more than %d", growth, rssStart, rssEnd, loadRSSGrowth)
	}
	if goEnd > goBefore {
		b.Errorf("goroutines: %d before the server, %d after it stopped, %d with the engine closed too\n%s",
			goBefore, goAfter, goEnd, goroutineDump())
	}

	directP50 := benchdata.Millis(direct.total, 50)
	singleP50 := benchdata.Millis(single.total, 50)
	loadP50 := benchdata.Millis(load.total, 50)
	m := []struct {
		v    float64
		unit string
	}{
		{float64(load.done), "streams"},
		{float64(load.done) / wall.Seconds(), "streams/s"},
		{float64(load.busy), "429s"},
		{float64(load.errors), "errors"},
		{benchdata.Millis(load.ttfb, 50), "ttfb-p50-ms"},
		{benchdata.Millis(load.ttfb, 95), "ttfb-p95-ms"},
		{benchdata.Millis(load.ttft, 50), "ttft-p50-ms"},
		{benchdata.Millis(load.ttft, 95), "ttft-p95-ms"},
		{loadP50, "total-p50-ms"},
		{benchdata.Millis(load.total, 95), "total-p95-ms"},
		{directP50, "direct-p50-ms"},
		{benchdata.Millis(direct.ttfb, 50), "direct-ttfb-p50-ms"},
		{singleP50, "lore4-p50-ms"},
		{benchdata.Millis(single.ttft, 50), "lore4-ttft-p50-ms"},
		{singleP50 - directP50, "overhead-ms"},
		{singleP50 / directP50, "lore4/direct"},
		{loadP50 - directP50, "load-minus-direct-ms"},
		{loadP50 / directP50, "load/direct"},
		{rssStart, "RSS-start-MiB"},
		{rssEnd, "RSS-end-MiB"},
		{peak, "RSS-peak-MiB"},
		{rssEnd - rssStart, "RSS-growth-MiB"},
		{heapStart, "heap-start-MiB"},
		{heapEnd, "heap-end-MiB"},
		{goSys, "go-sys-MiB"},
		{float64(goBefore), "goroutines-before"},
		{float64(goAfter), "goroutines-after"},
		{float64(goEnd), "goroutines-end"},
		{float64(goEnd - goBefore), "goroutines-left"},
	}
	for _, x := range m {
		b.ReportMetric(x.v, x.unit)
	}
	fmt.Printf("    serve load: %d clients %.0f s: %d streams (%.1f/s), %d 429s, %d errors; first data p50 %.0f ms p95 %.0f ms, first token p50 %.0f ms p95 %.0f ms, whole stream p50 %.0f ms p95 %.0f ms\n",
		loadClients, wall.Seconds(), load.done, float64(load.done)/wall.Seconds(), load.busy, load.errors,
		benchdata.Millis(load.ttfb, 50), benchdata.Millis(load.ttfb, 95), benchdata.Millis(load.ttft, 50), benchdata.Millis(load.ttft, 95),
		loadP50, benchdata.Millis(load.total, 95))
	fmt.Printf("    serve load: whole stream p50, %d at a time: stand-in direct %.1f ms (%d streams), through lore %.1f ms (%d streams): overhead %.1f ms, %.3fx; under %d clients %.0f ms, %.2fx direct (admission queue included)\n",
		loadDirect, directP50, len(direct.total), singleP50, len(single.total), singleP50-directP50, singleP50/directP50, loadClients, loadP50, loadP50/directP50)
	fmt.Printf("    serve load: RSS %.1f MiB after warm-up, %.1f MiB at the end (%+.1f), peak %.1f; heap in use after a GC %.1f MiB then %.1f, Go runtime's memory from the OS %.1f MiB; goroutines %d before the server, %d after it stopped, %d with the engine's idle connections and the engine closed\n",
		rssStart, rssEnd, rssEnd-rssStart, peak, heapStart, heapEnd, goSys, goBefore, goAfter, goEnd)
}

// answerTokens is the stand-in's answer: 20 tokens citing the first source.
func answerTokens() []string {
	toks := strings.SplitAfter("Use context.WithTimeout to cancel a request after a deadline [1]. The timeout is a duration of time, set once [1].", " ")
	if len(toks) != loadTokens {
		panic(fmt.Sprintf("%d tokens", len(toks)))
	}
	return toks
}

// loadEngine is a real engine over a small index embedded by the stand-in;
// the caller closes it.
func loadEngine(b *testing.B, fake *ollamatest.Server) *app.Engine {
	cfg := config.Defaults()
	cfg.DataDir = b.TempDir()
	cfg.OllamaHost = fake.URL
	cfg.Reranker = "none"
	docs := b.TempDir()
	for name, body := range map[string]string{
		"timeouts.md": "# Timeouts\n\nUse context.WithTimeout to cancel a request after a deadline.\nThe timeout is a duration.\n",
		"widgets.md":  "# Widgets\n\nThe alpha widget spins clockwise when powered.\n",
		"retries.md":  "# Retries\n\nA request that fails with 429 is retried after the Retry-After header's seconds.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	u, _ := url.Parse(fake.URL)
	emb := ollama.NewEmbedder(ollama.NewClient(u, nil, ollama.Timeouts{}), fake.URL, "nomic-embed-text")
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: cfg.Index, Paths: []string{docs},
		Embedder: emb, MaxFileSize: 1 << 20, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		b.Fatal(err)
	}
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	return eng
}

// outcome is one request: a completed stream with its timings, a 429 with
// the wait it asked for, or an error.
type outcome struct {
	ttfb, ttft, total time.Duration
	busy              bool
	retryAfter        time.Duration
	err               error
}

// tally is what a phase's clients saw.
type tally struct {
	done, busy, errors int
	firstErr           string
	ttfb, ttft, total  []time.Duration
}

// runClients runs n clients, each sending requests one after the other
// until d has passed; a request under way at the end is finished, not cut
// (each is bounded by its own timeout). After a 429 a client waits what
// Retry-After says, and a little more so that the refused do not all come
// back at once.
func runClients(n int, d time.Duration, do func(context.Context) outcome) tally {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var t tally
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				o := do(ctx)
				cancel()
				mu.Lock()
				switch {
				case o.err != nil:
					t.errors++
					if t.firstErr == "" {
						t.firstErr = o.err.Error()
					}
				case o.busy:
					t.busy++
				default:
					t.done++
					t.ttfb, t.ttft, t.total = append(t.ttfb, o.ttfb), append(t.ttft, o.ttft), append(t.total, o.total)
				}
				mu.Unlock()
				if o.busy {
					wait := o.retryAfter + rand.N(250*time.Millisecond)
					if time.Now().Add(wait).After(deadline) {
						return
					}
					time.Sleep(wait)
				}
			}
		})
	}
	wg.Wait()
	return t
}

var loadBody = []byte(`{"model":"lore","stream":true,"messages":[{"role":"user","content":"` + loadQuestion + `"}]}`)

// loreChat streams one answer from lore's /v1/chat/completions and reads
// it to `data: [DONE]`: ttfb at the first data line (the role chunk, sent
// once the request is admitted), ttft at the first content.
func loreChat(ctx context.Context, tr *http.Transport, u string) outcome {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(loadBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests:
		io.Copy(io.Discard, resp.Body)
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || secs < 1 {
			return outcome{err: fmt.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))}
		}
		return outcome{busy: true, retryAfter: time.Duration(secs) * time.Second}
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return outcome{err: fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))}
	}
	var o outcome
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // blank lines between events, keep-alive comments
		}
		if o.ttfb == 0 {
			o.ttfb = time.Since(start)
		}
		switch {
		case data == "[DONE]":
			if o.ttft == 0 {
				return outcome{err: fmt.Errorf("stream ended without content")}
			}
			o.total = time.Since(start)
			io.Copy(io.Discard, resp.Body)
			return o
		case strings.HasPrefix(data, `{"error"`):
			return outcome{err: fmt.Errorf("error event: %s", data)}
		case o.ttft == 0:
			var ch struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				return outcome{err: fmt.Errorf("chunk %q: %v", data, err)}
			}
			if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				o.ttft = time.Since(start)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return outcome{err: fmt.Errorf("stream cut: %w", err)}
	}
	return outcome{err: fmt.Errorf("stream ended without [DONE]")}
}

// directChat streams one answer from the stand-in's /api/chat, with the
// prompt lore would send, and reads it to the done line; ttfb and ttft are
// both its first line (a token).
func directChat(ctx context.Context, tr *http.Transport, base string) outcome {
	body, _ := json.Marshal(map[string]any{"model": config.Defaults().ChatModel, "stream": true, "messages": []map[string]string{
		{"role": "system", "content": "Answer from the numbered sources and cite them as [n]."},
		{"role": "user", "content": "[1] timeouts.md\nUse context.WithTimeout to cancel a request after a deadline.\n\n" + loadQuestion},
	}})
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/chat", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return outcome{err: fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))}
	}
	var o outcome
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if o.ttfb == 0 {
			o.ttfb = time.Since(start)
			o.ttft = o.ttfb
		}
		var line struct {
			Done  bool   `json:"done"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Error != "" {
			return outcome{err: fmt.Errorf("line %q: %v", sc.Text(), err)}
		}
		if line.Done {
			o.total = time.Since(start)
			io.Copy(io.Discard, resp.Body)
			return o
		}
	}
	return outcome{err: fmt.Errorf("stream ended without done: %v", sc.Err())}
}

// rssMiB is this process's resident memory now (VmRSS).
func rssMiB() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// heapMiB is the heap in use after a collection: what the process still
// holds, without the garbage RSS may include.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// settleGoroutines waits up to d for the goroutine count to fall to want
// (or, with want 0, to stop changing) and returns it.
func settleGoroutines(want int, d time.Duration) int {
	n := runtime.NumGoroutine()
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if want > 0 && m <= want || want == 0 && m == n {
			return m
		}
		n = m
	}
	return n
}

func goroutineDump() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
