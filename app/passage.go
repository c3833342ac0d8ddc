package app

import (
	"context"

	"github.com/lore-cli/lore/index"
)

// PassageRequest asks for lines of an indexed document.
type PassageRequest struct {
	// Index names the index ("": the configured one).
	Index string
	// Path is the document's path as a search result gives it (relative
	// to its source), or its source joined to it.
	Path string
	// Start and End are 1-based and inclusive; 0 is the first or the last
	// line.
	Start, End int
	// MaxLines caps the lines returned (0: the whole range).
	MaxLines int
}

// Passage returns lines of a document the index holds, as it was indexed
// (index.ReadPassage): a path outside the index's sources, or a symlink
// out of them, is an error wrapping index.ErrNotIndexed.
func (e *Engine) Passage(ctx context.Context, req PassageRequest) (index.Passage, error) {
	o, err := e.acquire(ctx, req.Index)
	if err != nil {
		return index.Passage{}, err
	}
	defer e.release(o)
	return o.ix.ReadPassage(ctx, req.Path, req.Start, req.End, req.MaxLines)
}

// Documents lists the documents the index name ("": the default) holds.
func (e *Engine) Documents(ctx context.Context, name string) ([]index.File, error) {
	o, err := e.acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	defer e.release(o)
	return o.ix.Files(ctx)
}

// IndexStatus is `lore index status` of the index name ("": the default):
// its numbers and the files changed on disk since it was built. A damaged
// index has a Status with Damaged set, not an error.
func (e *Engine) IndexStatus(ctx context.Context, name string) (index.Status, error) {
	name, err := resolveIndex(e.cfg, name)
	if err != nil {
		return index.Status{}, err
	}
	return e.store.Status(ctx, name)
}

// quickStatuser is a store whose status can leave out its integrity check
// (the local store's quick_check reads every page).
type quickStatuser interface {
	QuickStatus(ctx context.Context, name string) (index.Status, error)
}

// QuickIndexStatus is IndexStatus without the store's integrity check
// where the store can leave it out: `lore index status` must answer at
// once; its --check, lore doctor and the servers keep the full one.
func (e *Engine) QuickIndexStatus(ctx context.Context, name string) (index.Status, error) {
	name, err := resolveIndex(e.cfg, name)
	if err != nil {
		return index.Status{}, err
	}
	if q, ok := e.store.(quickStatuser); ok {
		return q.QuickStatus(ctx, name)
	}
	return e.store.Status(ctx, name)
}
