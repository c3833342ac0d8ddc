package bm25

import "testing"

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
