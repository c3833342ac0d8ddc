// Package atomicfile writes a file whole or not at all: into a temporary
// file beside it, synced, then renamed over it, and the folder synced so
// that the rename survives a crash. A reader sees the old file or the new
// one, never half of one; an interrupted write leaves the old file alone.
package atomicfile

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with what fill writes, with the given permissions.
// The folder must exist. If fill fails, path is untouched and the
// temporary file is removed.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := write(tmp, perm, fill); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: not every file system syncs a folder
		d.Close()
	}
	return nil
}

func write(f *os.File, perm fs.FileMode, fill func(io.Writer) error) error {
	// Large writes (a graph file) go through in big pieces; small ones
	// cost one allocation.
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}
