package index

import (
	"errors"
	"fmt"
)

// ErrCorrupt means the index's files are damaged: SQLite found corrupt
// pages, or the file is not a database at all. An index is a cache of its
// sources, so the fix is always to rebuild it; DamagedError says so.
var ErrCorrupt = errors.New("index is damaged")

// DamagedError is ErrCorrupt for one index, with what was found.
type DamagedError struct {
	Index  string // the index name
	Reason string // what SQLite said, e.g. "database disk image is malformed"
	Fix    string // "" for the usual: rebuild it: lore index --rebuild
	Err    error  // the underlying error, if any
}

func (e *DamagedError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "rebuild it: lore index --rebuild"
	}
	return fmt.Sprintf("index %q is damaged (%s); %s", e.Index, e.Reason, fix)
}

func (e *DamagedError) Is(target error) bool { return target == ErrCorrupt }

func (e *DamagedError) Unwrap() error { return e.Err }

// ErrOldFormat means the index was written by another version of lore.
var ErrOldFormat = errors.New("index format")

// ErrNoIndex means the named index has not been built.
var ErrNoIndex = errors.New("no such index")

// ErrLocked means another lore process is writing the index.
var ErrLocked = errors.New("index is locked")

// ErrDimension means a query vector does not fit the index.
var ErrDimension = errors.New("dimension mismatch")

// ErrNotIndexed means a path names no document the index holds: outside
// its sources, skipped when it was built, or not there at all. Reading
// passages is limited to what the index holds, so that a client that may
// read the index cannot read any other file of the machine through it.
var ErrNotIndexed = errors.New("not a document of the index")

// ErrNoSources means there is nothing to index.
var ErrNoSources = errors.New("no sources")

// ErrBadSource means a path given to index is missing or not a file or folder.
// Its text begins the message.
var ErrBadSource = errors.New("cannot index")

// ErrIncomplete is a store's Publish finding that chunks it took are not
// all there (a Weaviate node lost them): the documents concerned are
// forgotten, so that the next pass writes them again.
var ErrIncomplete = errors.New("chunks missing")
