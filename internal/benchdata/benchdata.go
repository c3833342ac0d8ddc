// Package benchdata generates the synthetic corpora, vectors and queries of
// lore's benchmarks, so that every benchmark (and the comparison with other
// stores in bench/) measures the same data.
package benchdata

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Words are real words mixed into the generated text.
var Words = strings.Fields(`the server client request response context cancel timeout deadline index chunk
	vector graph search query token model embed stream config file folder path heading section code table
	install build test run flag option value error retry backoff lock commit rename delete update`)

// vocab is the generated vocabulary: word i is drawn with Zipf's law, as
// words of real text are, so BM25 meets a few very common terms and a long
// tail of rare ones.
const vocab = 20000

func word(i uint64) string {
	if i < uint64(len(Words)) {
		return Words[i]
	}
	return fmt.Sprintf("w%d", i)
}

// WriteCorpus writes files markdown files of sections sections each, every
// section about 900 bytes (one chunk at the default budget), with old mtimes.
func WriteCorpus(dir string, files, sections int) error {
	rng := rand.New(rand.NewSource(1))
	zipf := rand.NewZipf(rng, 1.1, 2, vocab-1)
	old := time.Now().Add(-time.Hour)
	for f := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", f)
		for s := range sections {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", f, s)
			for range 6 {
				for range 20 {
					b.WriteString(word(zipf.Uint64()))
					b.WriteByte(' ')
				}
				b.WriteString("OLLAMA_HOST.\n")
			}
			b.WriteString("\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("d%03d", f/100), fmt.Sprintf("f%05d.md", f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
		os.Chtimes(p, old, old)
	}
	return nil
}

// Query is a generated search: words and a vector.
type Query struct {
	Text string
	Vec  []float32
}

// Space makes vectors with the structure of real embeddings: topic
// centres, and spread around them in a low-dimensional subspace (real
// embeddings have an intrinsic dimension of a few dozen). Isotropic noise
// in 768 dimensions would make all neighbours nearly equidistant, a case
// no ANN index handles and no real corpus shows.
type Space struct {
	Dim     int
	centres [][]float32
	basis   [][]float32 // intrinsic directions
}

// NewSpace returns a space of dim dimensions with the given number of centres.
func NewSpace(dim, centres int) *Space {
	rng := rand.New(rand.NewSource(42))
	s := &Space{Dim: dim}
	for range centres {
		s.centres = append(s.centres, unit(gauss(rng, dim, 1)))
	}
	for range 32 {
		s.basis = append(s.basis, unit(gauss(rng, dim, 1)))
	}
	return s
}

// Vec is the vector of key: deterministic, near one topic centre.
func (s *Space) Vec(key uint64) []float32 {
	rng := rand.New(rand.NewSource(int64(key)))
	c := s.centres[rng.Intn(len(s.centres))]
	v := append([]float32(nil), c...)
	for _, b := range s.basis {
		z := float32(rng.NormFloat64() * 0.25)
		for i := range v {
			v[i] += z * b[i]
		}
	}
	return unit(v)
}

// TextVec is the vector of a text.
func (s *Space) TextVec(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return s.Vec(h.Sum64())
}

// Queries returns n queries of 3-6 words, with vectors from the space.
func (s *Space) Queries(n int) []Query {
	rng := rand.New(rand.NewSource(7))
	qs := make([]Query, n)
	for i := range qs {
		// Content words: neither the commonest terms nor unseen ones.
		words := make([]string, 3+rng.Intn(4))
		for j := range words {
			words[j] = word(uint64(20 + rng.Intn(2000)))
		}
		qs[i] = Query{Text: strings.Join(words, " "), Vec: s.Vec(1<<40 + uint64(i))}
	}
	return qs
}

func gauss(rng *rand.Rand, n int, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * std)
	}
	return v
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Percentile returns the p-th percentile (0-100) of sorted durations.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Millis is the pct-th percentile of d in milliseconds; d is sorted in place.
func Millis(d []time.Duration, pct float64) float64 {
	slices.Sort(d)
	return float64(Percentile(d, pct).Microseconds()) / 1000
}

// PeakRSSMiB is this process's peak resident memory.
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// DirSize is the bytes of the files under dir, for benchmarks that report
// an index's size on disk.
func DirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
