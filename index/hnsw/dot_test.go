package hnsw

import (
	"math/rand"
	"testing"
)

// The assembly kernel agrees with the portable one on every length lore
// uses and on the extremes of int8.
func TestDotInt8(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{32, 64, 384, 768, 1024, 4096} {
		a, b := make([]int8, n), make([]int8, n)
		for trial := range 20 {
			for i := range a {
				a[i], b[i] = int8(rng.Intn(256)-128), int8(rng.Intn(256)-128)
				if trial == 0 {
					a[i], b[i] = -128, -128
				}
			}
			if got, want := dotInt8(a, b), dotInt8Go(a, b); got != want {
				t.Fatalf("n=%d: %d, want %d", n, got, want)
			}
		}
	}
}

func TestQuantize(t *testing.T) {
	v := []float32{0.5, -0.25, 0, 0.125}
	q := make([]int8, 32)
	s := quantize(q, v)
	for i, x := range v {
		if d := s*float32(q[i]) - x; d > s/2 || d < -s/2 {
			t.Fatalf("component %d: %v from %d*%v", i, x, q[i], s)
		}
	}
	if s := quantize(q, make([]float32, 4)); s != 0 || q[0] != 0 {
		t.Fatal("a zero vector must quantise to zero")
	}
}

func BenchmarkDot768(b *testing.B) {
	x, y := make([]int8, 768), make([]int8, 768)
	for i := range x {
		x[i], y[i] = int8(i), int8(3*i)
	}
	b.Run("avx2", func(b *testing.B) {
		for range b.N {
			dotInt8(x, y)
		}
	})
	b.Run("go", func(b *testing.B) {
		for range b.N {
			dotInt8Go(x, y)
		}
	})
}
