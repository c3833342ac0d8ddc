package wire

import (
	"time"

	"github.com/lore-cli/lore/index"
)

// IndexInfo is one index as `lore index list --json` prints it (a JSON
// array of them): cheap numbers, read without walking the sources.
type IndexInfo struct {
	Name      string     `json:"name"`
	Path      string     `json:"path"`
	Chunks    int        `json:"chunks"`
	SizeBytes int64      `json:"size_bytes"` // everything in its folder: what removing it frees
	Embedder  string     `json:"embedder"`   // the model it was built with, or "none"; "" when not built
	BuiltAt   *time.Time `json:"built_at"`
	Built     bool       `json:"built"`   // false until its first build finishes
	Damaged   string     `json:"damaged"` // why it cannot be opened, "" when it can
}

// NewIndexInfo is in as listed.
func NewIndexInfo(in index.Info) IndexInfo {
	return IndexInfo{Name: in.Name, Path: in.Path, Chunks: in.Chunks, SizeBytes: in.SizeBytes, Embedder: in.Embedder, BuiltAt: in.BuiltAt,
		Built: in.Built, Damaged: in.Damaged}
}

// NewIndexList is list as listed: never nil, so that no indexes is [].
func NewIndexList(list []index.Info) []IndexInfo {
	out := make([]IndexInfo, 0, len(list))
	for _, in := range list {
		out = append(out, NewIndexInfo(in))
	}
	return out
}

// IndexStatus is what `lore index status --json` prints: an index's
// numbers and the files changed on disk since it was built. A damaged
// index has only its name, path, sources and Damaged.
type IndexStatus struct {
	Index           string         `json:"index"`
	Path            string         `json:"path"`
	Sources         []string       `json:"sources"`
	Documents       int            `json:"documents"`
	Chunks          int            `json:"chunks"`
	Vectors         int            `json:"vectors"`
	SizeBytes       int64          `json:"size_bytes"`
	Embedder        string         `json:"embedder"` // the model it was built with, or "none"
	Dimension       int            `json:"dimension"`
	Chunker         string         `json:"chunker"`
	BuiltAt         *time.Time     `json:"built_at"`
	Skipped         []SkippedFile  `json:"skipped"`
	Changed         []FileChange   `json:"changed"`
	ChunksByKind    map[string]int `json:"chunks_by_kind"`    // prose, code, table
	DocumentsByKind map[string]int `json:"documents_by_kind"` // markdown, text, html, code, pdf, structured
	Damaged         string         `json:"damaged"`           // why it is damaged, "" when healthy
	// Sync is who keeps the index in step with its files, and how far;
	// absent where the store cannot say.
	Sync *Sync `json:"sync,omitempty"`
}

// SkippedFile is a file a build left out, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// FileChange is a file that differs on disk from what the index holds.
type FileChange struct {
	Path   string `json:"path"`   // source root joined with the relative path
	Change string `json:"change"` // "modified", "new", "deleted", or "missing" (a source folder not on this machine)
}

// NewIndexStatus is s as status prints it. Nil lists and maps of s stay
// null, as index.Status's own JSON has them (StatusOf never leaves one nil).
func NewIndexStatus(s index.Status) IndexStatus {
	out := IndexStatus{Index: s.Index, Path: s.Path, Sources: s.Sources, Documents: s.Documents, Chunks: s.Chunks, Vectors: s.Vectors,
		SizeBytes: s.SizeBytes, Embedder: s.Embedder, Dimension: s.Dimension, Chunker: s.Chunker, BuiltAt: s.BuiltAt,
		ChunksByKind: s.ChunksByKind, DocumentsByKind: s.DocumentsByKind, Damaged: s.Damaged}
	if s.Skipped != nil {
		out.Skipped = make([]SkippedFile, 0, len(s.Skipped))
		for _, f := range s.Skipped {
			out.Skipped = append(out.Skipped, SkippedFile{Path: f.Path, Reason: f.Reason})
		}
	}
	if s.Changed != nil {
		out.Changed = make([]FileChange, 0, len(s.Changed))
		for _, c := range s.Changed {
			out.Changed = append(out.Changed, FileChange{Path: c.Path, Change: c.Change})
		}
	}
	return out
}

// IndexSummary is what a build did, as `lore index --json` prints it and
// MCP index_paths returns it.
type IndexSummary struct {
	Index          string        `json:"index"`
	Embedder       string        `json:"embedder"` // the model it was built with, or "none", as status says
	FilesIndexed   int           `json:"files_indexed"`
	FilesUnchanged int           `json:"files_unchanged"`
	FilesRemoved   int           `json:"files_removed"`
	FilesSkipped   []SkippedFile `json:"files_skipped"`
	Chunks         int           `json:"chunks"`
	ChunksEmbedded int           `json:"chunks_embedded"`
	Seconds        float64       `json:"seconds"`
	TotalFiles     int           `json:"total_files"`
	TotalChunks    int           `json:"total_chunks"`
	Warnings       []string      `json:"warnings"`
}

// NewIndexSummary is s as a build's summary prints it: lists never nil.
func NewIndexSummary(s index.Summary) IndexSummary {
	out := IndexSummary{Index: s.Index, Embedder: s.Embedder, FilesIndexed: s.FilesIndexed, FilesUnchanged: s.FilesUnchanged,
		FilesRemoved: s.FilesRemoved, FilesSkipped: make([]SkippedFile, 0, len(s.FilesSkipped)), Chunks: s.Chunks,
		ChunksEmbedded: s.ChunksEmbedded, Seconds: s.Seconds, TotalFiles: s.TotalFiles, TotalChunks: s.TotalChunks,
		Warnings: append([]string{}, s.Warnings...)}
	for _, f := range s.FilesSkipped {
		out.FilesSkipped = append(out.FilesSkipped, SkippedFile{Path: f.Path, Reason: f.Reason})
	}
	return out
}
