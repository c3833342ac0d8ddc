//go:build !amd64

package hnsw

func dotInt8(a, b []int8) int32 { return dotInt8Go(a, b) }

func prefetch(p *int8, n int) {}
