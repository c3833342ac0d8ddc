package wire

import (
	"path/filepath"
	"time"

	"github.com/lore-cli/lore/index"
)

// WatchEvent is one line of `lore index --watch --json` (NDJSON): what
// the watcher did, as it did it.
type WatchEvent struct {
	Event string    `json:"event"` // started, synced, error, notice
	Index string    `json:"index"`
	Time  time.Time `json:"time"`
	// A batch applied (started, synced).
	Files          int      `json:"files,omitempty"`
	Removed        int      `json:"removed,omitempty"`
	ChunksAdded    int      `json:"chunks_added,omitempty"`
	ChunksRemoved  int      `json:"chunks_removed,omitempty"`
	Embedded       int      `json:"embedded,omitempty"`
	VectorsPending int      `json:"vectors_pending,omitempty"`
	Millis         int64    `json:"ms,omitempty"`
	Paths          []string `json:"paths,omitempty"`   // the documents written, source-joined
	Deleted        []string `json:"deleted,omitempty"` // the documents removed
	Error          string   `json:"error,omitempty"`
	Message        string   `json:"message,omitempty"`
	Polling        string   `json:"polling,omitempty"`
}

// FilePaths are files as full paths.
func FilePaths(files []index.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(f.Source, f.Path)
	}
	return out
}
