package wire

import (
	"time"

	"github.com/lore-cli/lore/index"
)

// Sync is how far an index is in step with its files (live sync): the
// `sync` object of `lore index status --json`, `lore ask --json`, serve's
// lore extension and MCP index_status.
type Sync struct {
	// Watching is false when no process keeps the index in step: it is
	// as the last `lore index` left it.
	Watching bool `json:"watching"`
	// Watcher names the process that watches ("host pid N").
	Watcher string `json:"watcher,omitempty"`
	// State is watching, indexing, vectors pending or stopped.
	State string `json:"state"`
	// Since is when the watcher started; SyncedAt when it last had the
	// index in step with every change it had seen. Absent: not yet.
	Since    *time.Time `json:"since,omitempty"`
	SyncedAt *time.Time `json:"synced_at,omitempty"`
	// Pending counts files seen changed and not applied yet.
	Pending int `json:"pending"`
	// VectorsPending counts chunks found by keyword only until the
	// embedder is back.
	VectorsPending int `json:"vectors_pending"`
	// Polling says why the watcher polls the files ("" when it is told of
	// changes).
	Polling string `json:"polling,omitempty"`
	// Missing are source folders not on this machine: their documents
	// are kept.
	Missing []string `json:"missing,omitempty"`
	// Error is why the last batch failed.
	Error string `json:"error,omitempty"`
}

// NewSync is f as the sync object says it.
func NewSync(f index.Freshness) *Sync {
	state := f.State
	if state == "" {
		state = index.WatchStopped
	}
	out := &Sync{Watching: state != index.WatchStopped, Watcher: f.Watcher, State: state, Since: when(f.Since), SyncedAt: when(f.SyncedAt),
		Pending: f.Pending, VectorsPending: f.VectorsPending, Polling: f.Polling, Error: f.Error}
	if len(f.Missing) > 0 {
		out.Missing = append([]string{}, f.Missing...)
	}
	return out
}

// when is t for JSON: nil for the zero time, else UTC (RFC 3339).
func when(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
