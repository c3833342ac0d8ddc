package eval

import (
	"math"
	"strconv"
)

// Retrieval metric names, as in tables and JSON.
const (
	MetricHit1   = "hit@1"
	MetricHit5   = "hit@5"
	MetricHit10  = "hit@10"
	MetricMRR    = "mrr"
	MetricNDCG10 = "ndcg@10"
)

// MetricRecall names recall at k.
func MetricRecall(k int) string { return "recall@" + strconv.Itoa(k) }

// Span is where a retrieved passage lies: lines Start..End of Path.
type Span struct {
	Path  string `json:"path"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// FirstHit is the 1-based rank of the first passage that overlaps gold, 0
// for none.
func FirstHit(q Question, found []Span) int {
	for i, s := range found {
		if q.Overlaps(s.Path, s.Start, s.End) {
			return i + 1
		}
	}
	return 0
}

// ScoreRetrieval scores one answerable question's ranked passages: hit@1,
// hit@5, hit@10, recall@k, MRR (of the first hit in the first 10) and
// nDCG@10.
//
// A gold location counts once: a second chunk over the same lines is not a
// second relevant result (chunks overlap, and a gold range can straddle two
// of them), so recall and nDCG stay within [0, 1]. nDCG's ideal ranking
// puts every gold location first; a question that lists alternatives ("a
// hit on either counts") therefore scores below 1 on nDCG and recall when
// only one is found, while its hit@k and MRR count it as found.
func ScoreRetrieval(q Question, found []Span, k int) map[string]float64 {
	first := FirstHit(q, found)
	hit := func(n int) float64 {
		if first > 0 && first <= n {
			return 1
		}
		return 0
	}
	m := map[string]float64{MetricHit1: hit(1), MetricHit5: hit(5), MetricHit10: hit(10)}
	if first > 0 && first <= 10 {
		m[MetricMRR] = 1 / float64(first)
	} else {
		m[MetricMRR] = 0
	}
	m[MetricRecall(k)] = float64(len(goldFound(q, found, k))) / float64(len(q.Gold))

	// nDCG@10 with binary gains: a passage gains 1 when it covers a gold
	// location no higher passage covered (all the ones it covers are
	// credited to it). The ideal ranking has those passages first, then
	// one for each gold location never covered, so one chunk holding two
	// gold ranges at rank 1 is a perfect result.
	credited := map[int]bool{}
	dcg, gained := 0.0, 0
	for i, s := range found[:min(10, len(found))] {
		gain := false
		for g, gold := range q.Gold {
			if !credited[g] && gold.Path == s.Path && s.Start <= gold.Lines[1] && s.End >= gold.Lines[0] {
				credited[g], gain = true, true
			}
		}
		if gain {
			dcg += 1 / math.Log2(float64(i+2))
			gained++
		}
	}
	idcg := 0.0
	for i := range min(10, gained+len(q.Gold)-len(credited)) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	m[MetricNDCG10] = dcg / idcg
	return m
}

// goldFound is the set of gold locations (by index) overlapped by the first
// k passages.
func goldFound(q Question, found []Span, k int) map[int]bool {
	out := map[int]bool{}
	for _, s := range found[:min(k, len(found))] {
		for g, gold := range q.Gold {
			if gold.Path == s.Path && s.Start <= gold.Lines[1] && s.End >= gold.Lines[0] {
				out[g] = true
			}
		}
	}
	return out
}
