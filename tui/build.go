package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/units"
)

// A build started from the chat (/add PATH): progress in the status bar,
// the index picked up when it is done; esc stops it, keeping what is saved.
type (
	buildMsg struct {
		progress *index.Progress
		done     bool
		sum      index.Summary
		err      error
	}
	building struct {
		cancel   context.CancelFunc
		updates  chan buildMsg
		progress index.Progress
	}
)

// build runs `lore index PATH...` on the engine.
func (m *Model) build(args string) (tea.Model, tea.Cmd) {
	if m.building != nil {
		m.statusMsg = "an index build is running: esc stops it"
		return m, nil
	}
	var paths []string
	for _, p := range strings.Fields(args) {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		paths = append(paths, p)
	}
	ctx, cancel := context.WithCancel(m.ctx)
	b := &building{cancel: cancel, updates: make(chan buildMsg, 1)}
	m.building = b
	m.addInfo("indexing " + strings.Join(paths, " ") + " …")
	eng, name := m.eng, m.index
	go func() {
		// Only the latest message matters: replace what the screen has not
		// taken yet. This goroutine is the only sender, so after the drain
		// the one-slot channel has room and the send never blocks.
		latest := func(msg buildMsg) {
			select {
			case <-b.updates:
			default:
			}
			b.updates <- msg
		}
		sum, err := eng.Build(ctx, app.BuildRequest{Index: name, Paths: paths, Progress: func(p index.Progress) { latest(buildMsg{progress: &p}) }})
		latest(buildMsg{done: true, sum: sum, err: err})
	}()
	return m, tea.Batch(waitBuild(b), m.spin.Tick)
}

func waitBuild(b *building) tea.Cmd {
	return func() tea.Msg { return <-b.updates }
}

func (m *Model) buildUpdate(msg buildMsg) (tea.Model, tea.Cmd) {
	b := m.building
	if b == nil {
		return m, nil
	}
	if !msg.done {
		b.progress = *msg.progress
		return m, waitBuild(b)
	}
	b.cancel()
	m.building = nil
	switch {
	case msg.err != nil && m.ctx.Err() == nil && strings.Contains(msg.err.Error(), "context canceled"):
		m.addInfo("index build stopped: what was indexed is saved; /add again to finish")
	case msg.err != nil:
		m.addInfo("index: " + excerpt.FirstLine(msg.err.Error()))
	default:
		if t := m.lastTurn(); t != nil && t.state == turnFailed {
			m.settled = t // what failed (most often: no index) may work now
		}
		s := msg.sum
		m.addInfo(fmt.Sprintf("indexed: %s, %d unchanged, %d skipped; the index holds %s, %s",
			units.Plural(s.FilesIndexed, "file"), s.FilesUnchanged, len(s.FilesSkipped), units.Plural(s.TotalFiles, "file"), units.Plural(s.TotalChunks, "chunk")))
	}
	return m, m.checkStatus(false)
}

// buildStatus is the status bar's view of a running build.
func (b *building) status() string {
	p := b.progress
	switch p.Phase {
	case "index":
		return fmt.Sprintf(" indexing %d%% · %d/%d files · %d chunks ", int(p.Done*100), p.FilesDone, p.FilesTotal, p.Chunks)
	case "graph":
		return fmt.Sprintf(" building the graph %d/%d ", p.GraphDone, p.GraphTotal)
	}
	return " scanning "
}
