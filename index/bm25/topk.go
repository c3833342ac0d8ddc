package bm25

import (
	"container/heap"
	"slices"
	"sort"
)

// A Term is one query term's postings, ready to score: each posting is
// worth Weight × its impact.
type Term struct {
	List   List
	Weight float64
	ub     float64
	pos    int
}

// Hit is a chunk and its BM25 score.
type Hit struct {
	ID    int64
	Score float64
}

// better orders by score, then by lower id, so ties break the same way
// every time.
func better(a, b Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.ID < b.ID }

// TopK returns the k best chunks over terms, best first, skipping the ids
// for which skip (when not nil) is true. It is MaxScore: terms sorted by
// their upper bounds; the prefix whose bounds add up to no more than the
// k-th best score so far cannot lift a chunk into the top k on its own, so
// only chunks in the other lists are candidates, and a candidate stops
// collecting as soon as what is left cannot make it.
func TopK(terms []*Term, k int, skip func(int64) bool) []Hit {
	if k <= 0 {
		return nil
	}
	cs := make([]*Term, 0, len(terms))
	for _, t := range terms {
		if len(t.List.IDs) > 0 {
			t.pos = 0
			t.ub = t.Weight * float64(t.List.MaxImpact())
			cs = append(cs, t)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].ub < cs[j].ub })
	prefix := make([]float64, len(cs))
	sum := 0.0
	for i, c := range cs {
		sum += c.ub
		prefix[i] = sum
	}
	h := make(hitHeap, 0, k+1)
	theta := -1.0
	firstEss := 0
	for firstEss < len(cs) {
		cand := int64(-1)
		for _, c := range cs[firstEss:] {
			if c.pos < len(c.List.IDs) && (cand < 0 || c.List.IDs[c.pos] < cand) {
				cand = c.List.IDs[c.pos]
			}
		}
		if cand < 0 {
			break
		}
		s := 0.0
		for _, c := range cs[firstEss:] {
			if c.pos < len(c.List.IDs) && c.List.IDs[c.pos] == cand {
				s += c.Weight * float64(c.List.Impacts[c.pos])
				c.pos++
			}
		}
		if skip != nil && skip(cand) {
			continue
		}
		for i := firstEss - 1; i >= 0; i-- {
			if s+prefix[i] <= theta {
				break
			}
			c := cs[i]
			c.pos = seek(c.List.IDs, c.pos, cand)
			if c.pos < len(c.List.IDs) && c.List.IDs[c.pos] == cand {
				s += c.Weight * float64(c.List.Impacts[c.pos])
			}
		}
		hit := Hit{cand, s}
		if len(h) < k || better(hit, h[0]) {
			heap.Push(&h, hit)
			if len(h) > k {
				heap.Pop(&h)
			}
			if len(h) == k {
				theta = h[0].Score
				for firstEss < len(cs) && prefix[firstEss] <= theta {
					firstEss++
				}
			}
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// seek gallops from pos to the first id >= want.
func seek(ids []int64, pos int, want int64) int {
	step, lo := 1, pos
	for lo+step < len(ids) && ids[lo+step] < want {
		lo += step
		step *= 2
	}
	j, _ := slices.BinarySearch(ids[lo:min(lo+step+1, len(ids))], want)
	return lo + j
}

type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
