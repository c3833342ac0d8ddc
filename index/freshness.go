package index

import (
	"context"
	"time"
)

// Live sync (lore index --watch, and the chat, serve and mcp keeping the
// indexes they have open in step). One process at a time watches an index:
// it holds the index's WatchLease (Store.Watch), applies each batch of changes with a
// scoped BuildTo (BuildOptions.Only) and records its Freshness through the
// lease, where every other process reads it (Store.Freshness).

// Watch states a Freshness carries.
const (
	WatchWatching       = "watching"        // in step; waiting for changes
	WatchIndexing       = "indexing"        // applying a batch
	WatchVectorsPending = "vectors pending" // keyword side in step, the embedder is down
	WatchStopped        = "stopped"         // nobody watches the index
)

// Freshness is how far an index is in step with its sources, as the
// process watching it last recorded it.
type Freshness struct {
	// Watcher names the process keeping the index in step ("host pid N"),
	// "" when none does (State is then WatchStopped).
	Watcher string
	State   string
	// Since is when the watcher started.
	Since time.Time
	// SyncedAt is when the watcher last had the index in step with every
	// change it had seen (zero: not yet).
	SyncedAt time.Time
	// Pending counts files seen changed and not applied yet.
	Pending int
	// VectorsPending counts chunks searchable by keyword whose vectors wait
	// for the embedder.
	VectorsPending int
	// Polling says why the watcher polls the sources instead of being told
	// of changes ("" when it is told).
	Polling string
	// Missing lists source folders that are not on this machine now: their
	// documents are kept, marked missing.
	Missing []string
	// Error is why the last batch failed, "" after a success.
	Error string
}

// WatchLease is held by the one process that watches an index. It is not
// a write lock: each batch still takes the store's writer (BeginWrite).
type WatchLease interface {
	// Record saves f for every process to read (Store.Freshness).
	Record(ctx context.Context, f Freshness) error
	// Close gives the lease up and records that nobody watches.
	Close() error
}
