package hnsw

import "math"

// quantize writes v as int8 into dst (len(dst) >= len(v); the rest is
// zeroed) and returns the scale s with v[i] ≈ s*dst[i]. Each vector has its
// own scale: unit vectors from different models spread very differently.
func quantize(dst []int8, v []float32) float32 {
	var amax float32
	for _, x := range v {
		amax = max(amax, abs32(x))
	}
	clear(dst)
	if amax == 0 || amax != amax { // zero or NaN: nothing to navigate by
		return 0
	}
	inv := 127 / amax
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x * inv)))
	}
	return amax / 127
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// dotInt8Go is the portable kernel; len(a) == len(b), a multiple of 32.
func dotInt8Go(a, b []int8) int32 {
	var s0, s1, s2, s3 int32
	for i := 0; i+4 <= len(a) && i+4 <= len(b); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	return s0 + s1 + s2 + s3
}
