//go:build unix

package hnsw

import (
	"os"
	"syscall"
)

// mapFile maps f privately and writable: an insert into an opened graph
// changes its links in place, copied on write and never written back. A
// saved graph is replaced by rename, never rewritten, so the mapped file
// cannot shrink under a reader.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
