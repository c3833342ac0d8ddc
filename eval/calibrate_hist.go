package eval

import (
	"math"
)

// histogram is both classes' scores in shared bins: bin j covers
// [edge(j), edge(j+1)). The recommended threshold, and the current one when
// it is near the scores, fall on bin edges, so that a bin is wholly on one
// side of each: what lies above a threshold's line answers from the docs.
type histogram struct {
	start, width float64
	n            int
	counts       [2][]int // answerable, unanswerable
	marks        []mark
}

// mark is a threshold drawn at a bin edge (0..n).
type mark struct {
	edge      int
	at        float64 // the threshold itself
	label     string
	recommend bool
}

func (h histogram) edge(e int) float64 { return h.start + float64(e)*h.width }

// histogram bins the scores in about rows bins (Scored only).
func (c Calibration) histogram(rows int) histogram {
	scores := append(append([]float64(nil), c.Answerable...), c.Unanswerable...)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	span := hi - lo
	rec, hasRec := c.RecommendedPoint()
	// The current threshold joins the range when it is near the scores;
	// one far off is drawn at the top or the bottom with a word.
	cur := c.CurrentThreshold
	showCur := cur >= lo-max(span, 1)/2 && cur <= hi+max(span, 1)/2
	if hasRec {
		lo, hi = min(lo, rec.Threshold), max(hi, rec.Threshold)
	}
	if showCur {
		lo, hi = min(lo, cur), max(hi, cur)
	}
	w0 := (hi - lo) / float64(rows)
	if w0 == 0 {
		w0 = 0.5
	}
	anchor, w := lo, niceStep(w0)
	switch {
	case hasRec && showCur && math.Abs(rec.Threshold-cur) >= w0/2:
		// Both thresholds on edges: a whole number of bins between them.
		d := math.Abs(rec.Threshold - cur)
		anchor, w = rec.Threshold, d/math.Round(d/w0)
	case hasRec:
		anchor = rec.Threshold
	case showCur:
		anchor = cur
	default:
		anchor = math.Floor(lo/w) * w
	}
	jmin := int(math.Floor((lo - anchor) / w))
	jmax := int(math.Floor((hi - anchor) / w))
	// The current threshold is on an edge unless it is too near the
	// recommended one to get its own; then it shares that line. Rounding
	// must not leave a score at it without a bin above its line.
	curOnEdge := showCur && !(hasRec && math.Abs(rec.Threshold-cur) < w0/2)
	curBin := int(math.Round((cur - anchor) / w))
	if curOnEdge && hi >= cur {
		jmax = max(jmax, curBin)
	}
	h := histogram{start: anchor + float64(jmin)*w, width: w, n: jmax - jmin + 1}
	h.counts = [2][]int{make([]int, h.n), make([]int, h.n)}
	curEdge := curBin - jmin
	bin := func(s float64) int {
		j := int(math.Floor((s-anchor)/w)) - jmin
		// Rounding must not put a score on the wrong side of a line: the
		// anchor's side is exact by sign, the current one's is fixed here.
		if curOnEdge && s >= cur && j < curEdge {
			j = curEdge
		}
		if curOnEdge && s < cur && j >= curEdge {
			j = curEdge - 1
		}
		return min(max(j, 0), h.n-1)
	}
	for _, s := range c.Answerable {
		h.counts[0][bin(s)]++
	}
	for _, s := range c.Unanswerable {
		h.counts[1][bin(s)]++
	}

	curLabel := "current " + fmtExact(cur)
	switch {
	case cur > hi:
		curLabel += " (above every score)"
		curEdge = h.n
	case cur < lo:
		curLabel += " (below every score)"
		curEdge = 0
	}
	if hasRec {
		recEdge := -jmin
		// A current threshold too near for a line of its own is named
		// on the recommended one's.
		label := "recommended " + rec.Text
		switch {
		case showCur && !curOnEdge && cur == rec.Threshold:
			label += " = " + curLabel
		case showCur && !curOnEdge && cur > rec.Threshold:
			label += " (" + curLabel + " in the row above)"
		case showCur && !curOnEdge:
			label += " (" + curLabel + " in the row below)"
		default:
			h.marks = append(h.marks, mark{edge: curEdge, at: cur, label: curLabel})
		}
		h.marks = append(h.marks, mark{edge: recEdge, at: rec.Threshold, label: label, recommend: true})
	} else {
		h.marks = append(h.marks, mark{edge: curEdge, at: cur, label: curLabel})
	}
	return h
}

// niceStep rounds a bin width up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}
