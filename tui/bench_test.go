package tui

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// BenchmarkChat measures what a user waits for in the chat (run with
// -benchtime 1x: each part repeats itself and reports medians):
//   - Frame200: drawing one frame with a 200-turn transcript above a
//     streaming answer (finished turns come from their caches), and one
//     frame of scrolling that transcript;
//   - KeyToStage: Enter to the first frame that shows a running stage,
//     through the real engine (index, Ollama double on loopback);
//   - TokenToFrame: a token arriving to the frame that shows it;
//   - Session200: heap in use and the process's peak RSS after 200 turns.
func BenchmarkChat(b *testing.B) {
	b.Run("Frame200", func(b *testing.B) {
		h := benchHarness(b, 120, 40)
		for i := 0; i < 200; i++ {
			h.playTurn()
		}
		seq := h.ask("one more question")
		h.events(seq, agent.StageStarted{Stage: agent.StageGenerate})
		var d []time.Duration
		for i := 0; i < 200; i++ {
			h.events(seq, agent.Token{Text: "more words "})
			start := time.Now()
			h.m.render()
			d = append(d, time.Since(start))
		}
		b.ReportMetric(median(d).Seconds()*1e6, "frame-us")
		// Scrolling the finished transcript: no turn is rendered again.
		h.events(seq, agent.Done{Result: agent.Result{Route: agent.RouteDocs, Answer: "done"}})
		d = d[:0]
		for i := 0; i < 200; i++ {
			start := time.Now()
			h.press(tea.Key{Code: tea.KeyPgUp})
			h.m.render()
			d = append(d, time.Since(start))
		}
		b.ReportMetric(median(d).Seconds()*1e6, "scroll-frame-us")
	})
	b.Run("KeyToStage", func(b *testing.B) {
		m, stop := engineModel(b)
		defer stop()
		var d []time.Duration
		for i := 0; i < 20; i++ {
			for _, r := range "how does the widget spin?" {
				m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
			start := time.Now()
			_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
			started := cmd().(turnStartedMsg)
			m.Update(started)
			for !strings.Contains(m.render(), "retrieving") {
				msg := waitEvents(started.seq, started.events)()
				m.Update(msg)
			}
			d = append(d, time.Since(start))
			for m.live != nil { // let the turn finish before the next
				m.Update(waitEvents(started.seq, started.events)())
			}
		}
		b.ReportMetric(median(d).Seconds()*1e3, "key-to-stage-ms")
	})
	b.Run("TokenToFrame", func(b *testing.B) {
		h := benchHarness(b, 120, 40)
		var d []time.Duration
		for i := 0; i < 50; i++ {
			seq := h.ask("q")
			h.events(seq, agent.StageStarted{Stage: agent.StageGenerate})
			start := time.Now()
			h.events(seq, agent.Token{Text: "The first words"})
			h.m.render()
			d = append(d, time.Since(start))
			h.events(seq, agent.Done{Result: agent.Result{Route: agent.RouteDocs, Answer: "The first words"}})
		}
		b.ReportMetric(median(d).Seconds()*1e3, "token-to-frame-ms")
	})
	b.Run("Session200", func(b *testing.B) {
		h := benchHarness(b, 120, 40)
		for i := 0; i < 200; i++ {
			h.playTurn()
			h.m.render()
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(benchdata.PeakRSSMiB(), "peak-RSS-MiB")
	})
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// playTurn plays one whole docs turn with the test answer.
func (h *harness) playTurn() {
	seq := h.ask("how do I cancel a context after a timeout?")
	h.events(seq, agent.StageStarted{Stage: agent.StageGenerate}, agent.SourcesChosen{Route: agent.RouteDocs, Sources: testSources})
	for _, tok := range splitTokens(testAnswer) {
		h.events(seq, agent.Token{Text: tok})
	}
	h.events(seq, agent.Done{Result: doneResult()})
}

func benchHarness(b *testing.B, w, hgt int) *harness {
	cfg := config.Defaults()
	cfg.DataDir, cfg.StateDir = b.TempDir(), b.TempDir()
	cfg.Reranker = "none"
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	clk := &clock{t: time.Now()}
	m := New(context.Background(), eng, Options{Theme: "dark", Getenv: func(string) string { return "" }})
	m.now = clk.now
	m.Update(tea.WindowSizeMsg{Width: w, Height: hgt})
	m.Update(statusMsg{info: app.IndexInfo{Name: "docs", Built: true, Chunks: 1}})
	return &harness{tb: b, m: m, eng: eng, clk: clk}
}

// engineModel is a chat over the real engine, an index of one file and an
// Ollama double on loopback.
func engineModel(b *testing.B) (*Model, func()) {
	eng := widgetEngine(b, ollamatest.New(b).URL)
	m := New(context.Background(), eng, Options{Theme: "dark", Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m, func() {}
}

// widgetEngine is the real engine over an index of one small file, with
// Ollama at host; it is closed when the test ends.
func widgetEngine(tb testing.TB, host string) *app.Engine {
	tb.Helper()
	cfg := config.Defaults()
	cfg.DataDir, cfg.StateDir = tb.TempDir(), tb.TempDir()
	cfg.OllamaHost = host
	cfg.Reranker = "none"
	docs := tb.TempDir()
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Widgets\n\nThe widget spins when you press the button.\n"), 0o644)
	if _, err := local.Build(context.Background(), cfg.IndexDir(), index.BuildOptions{Name: "default", Paths: []string{docs}, MaxFileSize: 1 << 20,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}}); err != nil {
		tb.Fatal(err)
	}
	eng, err := app.Open(app.Options{Config: cfg})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return eng
}
