package index

import (
	"context"
	"time"
)

// The store seam. An index lives in a Store: Local (a folder of SQLite
// generations on this machine) or a Weaviate cluster (package
// index/weaviatestore). The engine, doctor, eval and cmd reach indexes only
// through these interfaces, and the build's incremental logic (hashes,
// deletions, the embedder guardrails, resuming without re-embedding) is
// written once, in Build, over a Writer.

// Store is where indexes live.
type Store interface {
	// Kind is "local" or "weaviate", for messages.
	Kind() string
	// List describes every index, by name; cheap (no walk of sources).
	List(ctx context.Context) ([]Info, error)
	// Names lists the indexes without opening any (shell completion).
	Names(ctx context.Context) ([]string, error)
	// Open opens name for reading: ErrNoIndex when it is not built.
	Open(ctx context.Context, name string) (Reader, error)
	// Generation names the build that Open(name) would read now ("" when
	// there is none): a long-lived reader reopens when it changes.
	Generation(ctx context.Context, name string) string
	// Status is name's Status; an index too damaged to open still has one.
	Status(ctx context.Context, name string) (Status, error)
	// Remembered is what a rebuild of name starts from.
	Remembered(ctx context.Context, name string) (Remembered, error)
	// Remove deletes name once confirm (if set) agrees.
	Remove(ctx context.Context, name string, confirm func(Info) error) (Info, error)
	// Build creates or refreshes an index (BuildOptions.Name).
	Build(ctx context.Context, opt BuildOptions) (Summary, error)
	// Freshness is what the process watching name last recorded
	// (State WatchStopped when none watches it).
	Freshness(ctx context.Context, name string) (Freshness, error)
	// Watch takes name's watch lease, which one process at a time holds:
	// ErrLocked (naming the holder) when another watches it, ErrNoIndex
	// when it is not built.
	Watch(ctx context.Context, name string) (WatchLease, error)
}

// Reader is one generation of one index, open for reading by any number
// of requests at once.
type Reader interface {
	// SearchVector searches by text and, when vec is not nil, by vector
	// (see SearchOptions for limit, depth and lexical off).
	SearchVector(ctx context.Context, query string, vec []float32, opt SearchOptions, embed time.Duration) (Results, error)
	// EmbedderModel is the model that embedded the index, or "none".
	EmbedderModel(ctx context.Context) string
	ReadPassage(ctx context.Context, path string, start, end, maxLines int) (Passage, error)
	SampleChunks(ctx context.Context, n, minChars int, seed uint64) ([]Hit, error)
	Files(ctx context.Context) ([]File, error)
	Chunks(ctx context.Context) (int, error)
	// Changed tells whether a document differs on disk from what the index
	// holds (false when its source is not on this machine).
	Changed(ctx context.Context, dir, rel string) (bool, error)
	Status(ctx context.Context) (Status, error)
	// CheckGraph checks the vector side: the local graph file, or the
	// cluster's vector index.
	CheckGraph(ctx context.Context) (GraphStatus, error)
	// Check tells whether the index is whole: ErrCorrupt when it is not.
	Check(ctx context.Context) error
	Generation() string
	Close() error
}

// Search embeds query with opt.Embedder when the index has vectors and
// searches r by text and vector.
func Search(ctx context.Context, r Reader, query string, opt SearchOptions) (Results, error) {
	var vec []float32
	var took time.Duration
	if opt.Embedder != nil && r.EmbedderModel(ctx) != "none" {
		t := time.Now()
		v, err := opt.Embedder.EmbedQuery(ctx, query)
		if err != nil {
			return Results{}, err
		}
		took, vec = time.Since(t), v
	}
	return r.SearchVector(ctx, query, vec, opt, took)
}

// Target is a Store's write side, which Build drives.
type Target interface {
	// BeginWrite opens req.Name for writing, held against other writers
	// until the Writer is closed. It calls req.Before before it creates
	// anything.
	BeginWrite(ctx context.Context, req WriteRequest) (Writer, error)
}

// WriteRequest says what a build is about to write.
type WriteRequest struct {
	Name string
	// Rebuild starts a new generation, which only Publish makes the one
	// readers see.
	Rebuild bool
	// KeepSources is a rebuild given no paths: it starts from the sources
	// of the generation it replaces (PreviousSources), which the target
	// reads before it creates anything.
	KeepSources bool
	// DiscardNext drops an interrupted rebuild instead of resuming it:
	// a rebuild told another embedder than the one it began with.
	DiscardNext bool
	// DeferVectors says the build writes chunks whose vectors are not
	// there (BuildOptions.DeferVectors): the writer takes them and
	// remembers them as pending (Writer.PendingVectors).
	DeferVectors bool
	Notice       func(string)
	// Before is told whether the index exists (built, or a build begun)
	// before the target creates anything: a build refuses there what must
	// leave nothing behind (no sources, an embedder that does not answer).
	Before func(exists bool) error
}

// Writer is one build's access to a store. Calls come from one goroutine.
type Writer interface {
	// Prepare turns a file's chunks into the store's own form (keyword
	// analysis) in FileUpdate.Prepared. It is called from the build's
	// workers, concurrently, so that this work is not on the writer's
	// goroutine; it must not touch the store.
	Prepare(f *FileUpdate)
	// PreviousSources are the roots a rebuild with no paths starts from
	// (the generation it replaces).
	PreviousSources(ctx context.Context) ([]string, error)
	Meta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, kv ...string) error
	Sources(ctx context.Context) ([]Source, error)
	AddSource(ctx context.Context, root string) (Source, error)
	// Documents are the files of a source the index knows, by path.
	Documents(ctx context.Context, sourceID int64) (map[string]DocState, error)
	// MissingVectors tells which of the chunk hashes have no vector yet.
	MissingVectors(ctx context.Context, hashes []string) (map[string]bool, error)
	// PendingVectors lists the documents of a source (by path) that hold
	// a chunk with no vector: written by a DeferVectors build.
	PendingVectors(ctx context.Context, sourceID int64) (map[string]bool, error)
	// PutVectors stores vectors by chunk hash, durably before it returns:
	// an interrupted build never embeds them again.
	PutVectors(ctx context.Context, hashes []string, vecs [][]float32) error
	// WriteFiles replaces the chunks of each file; a reader sees a file
	// before or after, never half written.
	WriteFiles(ctx context.Context, files []FileUpdate) error
	// TouchFiles refreshes the stat info of files whose bytes did not change.
	TouchFiles(ctx context.Context, files []FileUpdate) error
	// RemoveDocuments drops documents (by DocState.ID) and their chunks.
	RemoveDocuments(ctx context.Context, ids []int64) error
	// Remember records the sources and embedder outside the index data,
	// for a rebuild of a damaged index.
	Remember(ctx context.Context, r Remembered) error
	// Publish ends a complete build: unused vectors go, and a rebuild's
	// new generation becomes the one readers see, atomically.
	Publish(ctx context.Context, p PublishOptions) (files, chunks int, err error)
	Close() error
}

// PublishOptions are what Publish needs to know of the build.
type PublishOptions struct {
	Vectors bool // an embedder was used
	// Batch is a live-sync batch (BuildOptions.Only): a few files changed
	// in a large index, published again within a second. What costs in
	// proportion to the whole index (rewriting the graph file, scanning
	// every vector) waits for a later, larger Publish.
	Batch    bool
	Progress func(phase string, done, total int)
}

// Embedder turns text into vectors. The index needs documents embedded;
// search needs queries embedded the same way.
type Embedder interface {
	// Model names the model; it is recorded in the index, and a different
	// one later is refused.
	Model() string
	// Check makes sure the embedder can work and returns its dimension.
	Check(ctx context.Context) (int, error)
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}
