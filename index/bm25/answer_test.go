package bm25

import (
	"strings"
	"testing"
)

func TestAnswerKind(t *testing.T) {
	for q, want := range map[string]answerKind{
		"How long can it take before Argo CD notices a new commit?": timeAnswer,
		"How often does the generator check for new PRs?":           timeAnswer,
		"how many seconds does the probe wait":                      timeAnswer,
		"默认的同步间隔是多久？":                                               timeAnswer,
		"キャッシュは何時間保持されますか":                                          timeAnswer,
		"How do I delete an application?":                           anyAnswer,
		"Is the label too long?":                                    anyAnswer,
		"How many replicas does it start?":                          anyAnswer,
		"要等几分钟？":                                                    timeAnswer,
		"How long can a label value be?":                            anyAnswer,
		"How long is the token name allowed to get?":                anyAnswer,
		"How long can the lease be held before it expires?":         timeAnswer,
	} {
		if got := answerOf(q); got != want {
			t.Errorf("answerOf(%q) = %d, want %d", q, got, want)
		}
	}
	for text, want := range map[string]bool{
		"Argo CD polls every 3 minutes.":             true,
		"timeout.reconciliation: 120s":               true,
		"a grace period of 1h30m":                    true,
		"it waits a few seconds":                     true,
		"supported until May 2029":                   true,
		"removed on 2026-03-01":                      true,
		"间隔为 30 秒":                                   true,
		"Set the flag to 3 to keep three replicas.":  false,
		"See v2 and the apps/v1 API.":                false,
		"Argo CD checks the repository for changes.": false,
		"Step 2 makes the secret; step 3 mounts it.": false,
	} {
		if got := timeAnswer.heldBy(text); got != want {
			t.Errorf("holds a time %q = %v, want %v", text, got, want)
		}
	}
}

// A text is any bytes a file held.
func FuzzHoldsTime(f *testing.F) {
	for _, s := range []string{"every 3 minutes", "2026-03-01", "May 2029", "30 秒", "1h30m", "\xff9 s", "2026-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { holdsTime(s) })
}

// BenchmarkHoldsTime scans a 2 KB chunk of prose and a table that holds no
// time, the worst case: Rerank scans at most ProximityDepth chunks for a
// question that asks how long.
func BenchmarkHoldsTime(b *testing.B) {
	text := strings.Repeat("| `PreSync` | Executes prior to the application of the manifests, v2.10, step 3. |\n"+
		"Argo CD will respect resources assigned to different phases during a sync operation.\n", 13)[:2048]
	if holdsTime(text) {
		b.Fatal("the text holds a time")
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		holdsTime(text)
	}
}

// Of two chunks that score alike, a how-long question puts the one that
// says a duration first; another question leaves them as BM25 had them.
func TestRerankPrefersTheAnswersKind(t *testing.T) {
	text := map[int64]string{
		1: "The controller compares a new commit with the live state.",
		2: "The controller polls for a new commit every 3 minutes.",
	}
	for q, want := range map[string]int64{
		"How long does the controller take to see a new commit?": 2,
		"Does the controller compare a new commit?":              1,
	} {
		query := NewQuery(q)
		lists := map[string]*Term{}
		for _, qt := range query.Terms {
			l := &Term{}
			l.List.Add(1, 100)
			l.List.Add(2, 100)
			lists[qt.Term] = l
		}
		hits, prox := DefaultParams.Rank(query, lists, Stats{Docs: 10, DF: func(string) int { return 2 }}, 2)
		if prox == nil {
			t.Fatalf("%q: no re-ranking", q)
		}
		Rerank(hits, prox, text)
		if hits[0].ID != want {
			t.Errorf("%q: chunk %d first, want %d (%v)", q, hits[0].ID, want, hits)
		}
	}
}
