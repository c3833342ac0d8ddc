// Package atomicfile writes a file whole or not at all: into a temporary
// file beside it, synced, then renamed over it, and the folder synced so
// that the rename survives a crash. A reader sees the old file or the new
// one, never half of one; an interrupted write leaves the old file alone.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write replaces path with what fill writes, with the given permissions
// less the umask. A symbolic link at path is followed: the file it points
// at is replaced, the link stays. The folder must exist. If fill fails,
// path is untouched and the temporary file is removed.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	dir := filepath.Dir(path)
	tmp, err := create(dir, "."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := write(tmp, fill); err != nil {
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

// create makes a new file in dir with a random name after prefix. Unlike
// os.CreateTemp, which always makes it 0600, it asks for perm, so that the
// kernel applies the umask as to any file the user creates.
func create(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create a temporary file in %s: every name tried exists", dir)
}

func write(f *os.File, fill func(io.Writer) error) error {
	// Large writes (a graph file) go through in big pieces; small ones
	// cost one allocation.
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}
