//go:build !unix

package hnsw

import (
	"io"
	"os"
)

// mapFile reads the file where there is no mmap: the same layout, in the
// heap.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
