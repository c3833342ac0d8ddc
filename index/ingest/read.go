package ingest

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// ChunkerVersion changes whenever chunking output changes for the same
// input, so that existing documents are re-chunked (their unchanged chunks
// keep their vectors: only new hashes are embedded).
const ChunkerVersion = "4"

// Skip reasons that depend only on the file.
const (
	ReasonTooLarge    = "too large"
	ReasonBinary      = "binary file"
	ReasonUnsupported = "unsupported file type"
	ReasonNotRegular  = "not a regular file"
)

// ErrGrew is a file that grew past the size limit while being read.
var ErrGrew = errors.New("grew past the size limit while being read")

// ReadFile reads the file at path, up to limit bytes: a file that grew
// past the limit since it was looked at is an error, not a cut text.
func ReadFile(path string, limit int64) ([]byte, error) {
	// Non-blocking: a file replaced by a named pipe since the walk must not
	// wait for a writer; what was opened is checked, not the path again.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New(notRegular(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, ErrGrew
	}
	return data, nil
}
