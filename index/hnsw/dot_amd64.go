package hnsw

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 is the dot product of two quantised vectors of equal length, a
// multiple of 32. Graph search is bound by memory, not arithmetic: int8
// vectors are a quarter of the bytes to fetch per distance.
func dotInt8(a, b []int8) int32 {
	if haveAVX2 && len(a) > 0 && len(a) == len(b) && len(a)%32 == 0 {
		return dotInt8AVX2(&a[0], &b[0], len(a))
	}
	return dotInt8Go(a, b)
}

//go:noescape
func prefetch(p *int8, n int)
