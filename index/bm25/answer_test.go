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
