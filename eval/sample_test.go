package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bundled question set (examples/questions.jsonl, over docs/) is what
// users copy and what make e2e runs: every gold range must lie inside its
// file and hold every answer keyword, so an edit of the docs that moves
// the lines fails here rather than lowering scores unnoticed.
func TestBundledQuestionSetMatchesTheDocs(t *testing.T) {
	qs, err := ReadFile("../examples/questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	unanswerable := 0
	for _, q := range qs {
		if !q.IsAnswerable() {
			unanswerable++
			continue
		}
		for _, g := range q.Gold {
			b, err := os.ReadFile(filepath.Join("../docs", g.Path))
			if err != nil {
				t.Fatalf("%s: %v", q.ID, err)
			}
			lines := strings.Split(string(b), "\n")
			if g.Lines[1] > len(lines) {
				t.Fatalf("%s: %s has %d lines, gold ends at %d", q.ID, g.Path, len(lines), g.Lines[1])
			}
			text := strings.ToLower(strings.Join(lines[g.Lines[0]-1:g.Lines[1]], "\n"))
			for _, k := range q.AnswerKeywords {
				if !strings.Contains(text, strings.ToLower(k)) {
					t.Errorf("%s: %q is not in %s:%d-%d", q.ID, k, g.Path, g.Lines[0], g.Lines[1])
				}
			}
		}
	}
	if unanswerable < 2 {
		t.Errorf("calibration needs unanswerable questions; the sample has %d", unanswerable)
	}
}
