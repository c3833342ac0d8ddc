package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
)

// statusLine is the screen's last line: the status bar.
func (h *harness) statusLine() string {
	lines := strings.Split(strings.TrimRight(h.screen(), "\n"), "\n")
	return lines[len(lines)-1]
}

// TestStatusBarFreshness: the status bar says how fresh the index is
// when a process keeps it in step, on a wide terminal and a narrow one,
// and nothing when none does; nothing the watcher wrote reaches the
// screen.
func TestStatusBarFreshness(t *testing.T) {
	for _, width := range []int{40, 200} {
		h := newHarness(t, width, 20, "dark")
		synced := h.clk.now().Add(-3 * time.Second)
		for _, tt := range []struct {
			f    index.Freshness
			want string
		}{
			{index.Freshness{Watcher: "box pid 77\x1b]0;pwned\x07", State: index.WatchWatching, SyncedAt: synced}, "synced 3s ago"},
			{index.Freshness{Watcher: "box pid 77", State: index.WatchIndexing, Pending: 12, SyncedAt: synced}, "indexing 12 files…"},
			{index.Freshness{Watcher: "box pid 77", State: index.WatchVectorsPending, VectorsPending: 40, SyncedAt: synced,
				Error: "embed: \x1b[2Jconnection refused"}, "vectors pending (Ollama down)"},
			{index.Freshness{State: index.WatchStopped}, ""},
		} {
			h.send(freshMsg{index: "docs", f: tt.f})
			line := h.statusLine()
			if tt.want == "" {
				for _, w := range []string{"synced", "indexing", "pending"} {
					if strings.Contains(line, w) {
						t.Errorf("%d columns, not watched: status bar %q says %q", width, line, w)
					}
				}
			} else if !strings.Contains(line, tt.want) {
				t.Errorf("%d columns, %s: status bar %q, want %q", width, tt.f.State, line, tt.want)
			}
			if w := len([]rune(line)); w > width {
				t.Errorf("%d columns: status bar is %d wide: %q", width, w, line)
			}
			if s := h.m.render(); strings.Contains(s, "pwned") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "box pid") {
				t.Errorf("%d columns: the watcher's own text reached the screen", width)
			}
		}
		if width == 200 && !strings.Contains(h.statusLine(), "llama3.2:3b") {
			t.Errorf("200 columns: the model name was dropped: %q", h.statusLine())
		}
	}
}

// TestFreshnessOfAnotherIndex: a read that began before /index switched
// the chat to another index is not shown for the new one.
func TestFreshnessOfAnotherIndex(t *testing.T) {
	h := newHarness(t, 120, 20, "dark")
	h.m.index = "work"
	h.send(freshMsg{index: "docs", f: index.Freshness{State: index.WatchIndexing, Pending: 5}})
	if strings.Contains(h.statusLine(), "indexing") {
		t.Errorf("status bar shows the freshness of the index left: %q", h.statusLine())
	}
}

// TestSyncRefreshesTheChunkCount: when the watcher synced new documents,
// the chat reads the index's numbers again (the chunk count it shows).
func TestSyncRefreshesTheChunkCount(t *testing.T) {
	defer func(d time.Duration) { freshEvery = d }(freshEvery)
	freshEvery = time.Millisecond // the next read's timer: not waited for here
	h := newHarness(t, 120, 20, "dark")
	at := h.clk.now().Add(-time.Minute)
	h.send(freshMsg{index: "docs", f: index.Freshness{State: index.WatchWatching, SyncedAt: at}})
	cmd := h.send(freshMsg{index: "docs", f: index.Freshness{State: index.WatchWatching, SyncedAt: at.Add(30 * time.Second)}})
	if !yields[statusMsg](cmd) {
		t.Error("a new sync did not read the index's numbers again")
	}
	if cmd := h.send(freshMsg{index: "docs", f: index.Freshness{State: index.WatchWatching, SyncedAt: at.Add(30 * time.Second)}}); yields[statusMsg](cmd) {
		t.Error("no new sync, yet the index's numbers were read again")
	}
}

// yields reports whether running cmd (a batch whole) produces a message
// of type T.
func yields[T any](cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case T:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if yields[T](c) {
				return true
			}
		}
	}
	return false
}
