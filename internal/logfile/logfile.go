// Package logfile is lore's log file with a bound on its size: lore.log is
// appended to by every lore process, and a long-running server (lore serve,
// lore mcp --http) under a flood of requests grew it without end.
package logfile

import (
	"fmt"
	"os"
	"sync"
)

// File appends to a log file; a write that would take it past Max first
// renames it to PATH.1 (replacing the one before) and starts a new one. So
// the log takes at most twice Max on disk, and the last Max of it is
// always there to read.
type File struct {
	path string
	max  int64

	mu sync.Mutex
	f  *os.File
}

// Open opens path for appending, created if missing.
func Open(path string, max int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	return &File{path: path, max: max, f: f}, nil
}

// Write appends p (one record: a record is never split across files).
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The size on disk, not a count of this process's writes: other lore
	// processes append to the same file.
	if st, err := l.f.Stat(); err == nil && st.Size() > 0 && st.Size()+int64(len(p)) > l.max {
		l.rotate(st)
	}
	return l.f.Write(p)
}

// rotate moves the full file aside and opens a new one. When another
// process has rotated it already (the path names another file now), this
// one only follows it to the new file.
func (l *File) rotate(ours os.FileInfo) {
	if onDisk, err := os.Stat(l.path); err == nil && os.SameFile(ours, onDisk) {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return // keep writing where we are: a log must not stop lore
		}
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	l.f.Close()
	l.f = f
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
