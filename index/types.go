package index

import (
	"strconv"
	"time"

	"github.com/lore-cli/lore/index/ingest"
)

// Source is a folder or file an index was built from. ID is the store's
// name for it; Root is where it was on the machine that indexed it.
type Source struct {
	ID   int64
	Root string
}

// Dir is the folder a document path of the source is relative to: a file
// source's one document is named by its base name.
func (s Source) Dir(rel string) string { return ingest.SourceDir(s.Root, rel) }

// Join is the path of a document of the source on the machine that
// indexed it.
func (s Source) Join(rel string) string { return ingest.JoinSource(s.Root, rel) }

// DocState is what the index knows of a file from the last run.
type DocState struct {
	ID        int64
	Size      int64
	MTimeNS   int64
	Hash      string
	Status    string
	Reason    string
	Chunker   string
	IndexedAt int64 // unix nanoseconds
}

// Hit is a chunk found by a search.
type Hit struct {
	ChunkID int64
	Source  string // the folder Path is relative to: the source root, or a file source's folder
	Path    string // relative to Source
	Start   int
	End     int
	Heading string
	Kind    string
	Text    string
	Score   float64 // higher is better: the fused RRF score
	// LexicalRank and VectorRank are the chunk's 1-based ranks in each
	// retriever's candidates; 0 when it was not among them.
	LexicalRank int
	VectorRank  int
	// Coverage is the share of the query's content words that the chunk
	// holds (0..1); 0 when keyword search did not find it.
	Coverage float64
}

// FileUpdate is the new state of one document, written in one transaction
// with others.
type FileUpdate struct {
	SourceID int64
	Path     string
	Size     int64
	MTimeNS  int64
	Hash     string
	Status   string
	Reason   string
	Chunker  string
	Chunks   []ingest.Chunk
	// Prepared is the store's own form of Chunks (the local store's
	// keyword analysis), made by Writer.Prepare on a build worker; nil
	// when it was not made, and the store then makes it as it writes.
	Prepared any
}

// GraphStatus is the state of an index's vector graph file. Searches never
// fail on it (a missing, stale or damaged graph is rebuilt in memory from
// the vectors in index.db, and the next `lore index` saves it), so a
// problem here costs time on every start, not answers.
type GraphStatus struct {
	// Needed is false for an index without vectors (built with --embedder
	// none): there is no graph to check.
	Needed  bool
	Present bool
	Nodes   int // live vectors in the graph file
	Vectors int // vectors stored in index.db
	Missing int // stored vectors the graph lacks
	Extra   int // graph nodes whose vector is gone from index.db
	// Lag is Missing+Extra when live-sync batches left them on purpose:
	// the file is saved again once they add up (searches add them from
	// index.db as they load it), so it is no problem.
	Lag     int
	Problem string // "" when the file is whole and in step with index.db
}

// Info describes one index cheaply (no walk of its sources, no integrity
// check), so that listing many is quick: `lore index list`, the chat's and
// serve's status line. Package wire owns its JSON (wire.IndexInfo), as it
// does Status's and Summary's.
type Info struct {
	Name      string
	Path      string
	Chunks    int
	SizeBytes int64  // everything in its folder: what removing it frees
	Embedder  string // the model it was built with, or "none"; "" when not built
	BuiltAt   *time.Time
	// Built is false for a folder whose first build has not finished.
	Built bool
	// Damaged says why the index cannot be opened, "" when it can.
	Damaged string
}

// SearchOptions tunes hybrid retrieval.
type SearchOptions struct {
	// Limit is how many fused results come back (the reranker's candidates).
	Limit int
	// Depth is how many candidates each retriever contributes.
	Depth int
	// RRFK is the k of Reciprocal Rank Fusion: score = sum 1/(k + rank).
	RRFK float64
	// EfSearch is the HNSW search breadth; zero means max(Depth, 64).
	EfSearch int
	// Embedder embeds the query; nil searches lexically only.
	Embedder Embedder
	// NoProximity leaves the keyword candidates in plain BM25F order (for
	// benchmarks and ablations).
	NoProximity bool
	// NoLexical skips the keyword stage: vector candidates alone (an
	// ablation: lore eval --vector-only).
	NoLexical bool
}

// DefaultSearchOptions are the documented defaults.
func DefaultSearchOptions() SearchOptions {
	return SearchOptions{Limit: 20, Depth: 50, RRFK: 60}
}

// Timings of the stages of one search.
type Timings struct {
	Embed, Vector, Lexical, Fuse time.Duration
}

// Results is what a search found.
type Results struct {
	Mode string // "hybrid", "lexical" or "vector" (NoLexical)
	Hits []Hit
	// Known is the share of the query's content words that the index
	// holds anywhere (the local store: its postings; Weaviate: its
	// keyword candidates); 0 without keyword search. A word no chunk
	// holds (Confluence, GPU in lore's docs) says the question is about
	// something else, however much of the rest a chunk matches.
	Known   float64
	Timings Timings
	// Notice is something the user should hear once: the vector graph file
	// was damaged and this search rebuilt it from the stored vectors.
	Notice string
}

// A File is a document the index holds: Path relative to Source, as in a Hit.
type File struct {
	Source string
	Path   string
}

// Status describes an index and how it compares with the files on disk.
type Status struct {
	Index        string
	Path         string
	Sources      []string
	Documents    int
	Chunks       int
	Vectors      int
	SizeBytes    int64
	Embedder     string
	Dimension    int
	Chunker      string
	BuiltAt      *time.Time
	Skipped      []SkippedFile
	Changed      []Change
	ChunksByKind map[string]int
	// DocumentsByKind counts the indexed files by how they are chunked
	// (FileKind: markdown, text, html, code, pdf, structured), so that one
	// sees whether config samples or an OpenAPI file are in the index.
	DocumentsByKind map[string]int
	// Damaged says why the index is damaged (SQLite's words), "" when it
	// is healthy. A damaged index reports only its name, path and sources.
	Damaged string
}

// Change is a file that differs on disk from what the index holds.
type Change struct {
	Path   string // source root joined with the relative path
	Change string // "modified", "new", "deleted", or "missing" (a source folder not on this machine)
}

// Passage is lines of a document as the index read them.
type Passage struct {
	Source string // the folder Path is relative to, as in a Hit
	Path   string
	Start  int // 1-based, inclusive
	End    int
	Lines  int // lines in the document (0 when read from chunks: unknown)
	Text   string
	// FromChunks is set when the text comes from the stored chunks rather
	// than the file: the file changed on disk since it was indexed, or its
	// text is extracted (HTML, PDF), so its lines on disk are not the
	// indexed ones. Chunk texts are the cleaned, searchable text and may
	// repeat a few lines where chunks overlap.
	FromChunks bool
	Truncated  bool // the range was longer than the lines asked for at most
}

// Remembered is what an index directory remembers outside its database.
type Remembered struct {
	Sources  []string
	Embedder string // "none" for keyword-only; "" if unknown
	// Settings are what the builds were told that shapes the index
	// (BuildOptions.Remember: config keys such as max-file-size, as
	// text), which the next build keeps unless told otherwise. Absent
	// from what older lore wrote.
	Settings map[string]string `json:",omitempty"`
}

// Walk is how the index's builds walk its sources (follow-symlinks), for
// a status that lists what the next build would change.
func (r Remembered) Walk() ingest.WalkOptions {
	follow, _ := strconv.ParseBool(r.Settings["follow-symlinks"])
	return ingest.WalkOptions{FollowSymlinks: follow}
}

// BuildOptions says what to index and how.
type BuildOptions struct {
	Name           string   // the index name, for messages and the summary
	Paths          []string // folders or files to add; none means the remembered sources
	Rebuild        bool     // start from scratch
	Embedder       Embedder // nil builds a lexical-only index
	EmbedBatchSize int
	Chunk          ingest.ChunkOptions
	MaxFileSize    int64
	// Walk says which symbolic links the walk follows and bounds it.
	Walk ingest.WalkOptions
	// Remember is recorded with the sources (Remembered.Settings).
	Remember map[string]string
	// Only scopes a refresh to these absolute paths (files or folders,
	// present or gone) inside the index's sources: a sync batch. Only
	// they are walked, read and, when gone, removed; nil is every source.
	Only []string
	// DeferVectors writes chunks without asking the embedder (it is
	// down): they are searchable by keyword at once, and their vectors
	// are pending (Summary.VectorsPending) until a FillVectors build.
	DeferVectors bool
	// FillVectors also reads the files whose chunks have no vector
	// (Writer.PendingVectors) and embeds what they lack, though they did
	// not change: the vectors a DeferVectors build left pending.
	FillVectors bool
	// KeepEmptied keeps the documents of a source folder that is there
	// but empty, as if it were missing: an unmounted disk leaves its
	// mount point empty, and a watcher must not empty the index for it.
	// A `lore index` run on purpose drops them.
	KeepEmptied bool
	Workers     int
	// Progress, if set, is called often from one goroutine; keep it cheap.
	Progress func(Progress)
	// Notice, if set, receives one-line warnings meant for the user.
	Notice func(string)
}

// Progress is a snapshot of a build.
type Progress struct {
	Phase          string // "scan", "index", "graph", "done"
	FilesTotal     int    // files to (re)index
	FilesDone      int
	Chunks         int // chunks of the files read so far
	ChunksEmbedded int
	// Done is the share of the files finished, 0-1, counting the group
	// being embedded by the share of its chunks embedded: a group holds up
	// to 512 chunks, minutes of work with a slow model, and FilesDone
	// moves only when the group is written.
	Done       float64
	GraphDone  int
	GraphTotal int
	Started    time.Time
}

// SkippedFile is a file the index does not hold, and why.
type SkippedFile struct {
	Path   string
	Reason string
}

// Summary is what a build did.
type Summary struct {
	Index          string
	Embedder       string // the model it was built with, or "none", as status says
	FilesIndexed   int
	FilesUnchanged int
	FilesRemoved   int
	FilesSkipped   []SkippedFile
	Chunks         int
	ChunksEmbedded int
	// VectorsPending counts the chunks this build wrote without vectors
	// (DeferVectors).
	VectorsPending int
	// Missing are the source folders not on this machine (or, with
	// KeepEmptied, empty): their documents were kept.
	Missing []string
	// Updated and Deleted are the documents this build wrote and
	// removed; listed only for a scoped build (BuildOptions.Only).
	Updated, Deleted []File
	Seconds          float64
	TotalFiles       int
	TotalChunks      int
	Warnings         []string
}

// Document statuses a FileUpdate carries.
const (
	StatusIndexed = "indexed"
	StatusSkipped = "skipped"
)
