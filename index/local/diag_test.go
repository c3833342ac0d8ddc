package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

// TestEvalDiagnose is a measurement, not a check: for each question of
// LORE_EVAL_SET it prints where the gold passage ranks in the index at
// LORE_EVAL_INDEX (an index folder) and the five results above it.
func TestEvalDiagnose(t *testing.T) {
	dir, set := os.Getenv("LORE_EVAL_INDEX"), os.Getenv("LORE_EVAL_SET")
	if dir == "" || set == "" {
		t.Skip("set LORE_EVAL_INDEX and LORE_EVAL_SET")
	}
	qs := loadEval(t, set)
	quiet := os.Getenv("LORE_QUIET") != ""
	ix, err := Open(dir, "eval")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	search := func(q string) []index.Hit {
		res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 50, Depth: 50})
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	for _, q := range qs {
		if !q.Answerable {
			continue
		}
		hits := search(q.Question)
		rank := 0
		for i, h := range hits {
			for _, g := range q.Gold {
				if rank == 0 && h.Path == g.Path && h.Start <= g.Lines[1] && h.End >= g.Lines[0] {
					rank = i + 1
				}
			}
		}
		var gold []string
		for _, g := range q.Gold {
			gold = append(gold, fmt.Sprintf("%s:%d-%d", g.Path, g.Lines[0], g.Lines[1]))
		}
		if quiet {
			continue
		}
		fmt.Printf("\n%s rank=%d  %q\n   gold %s\n", q.ID, rank, q.Question, strings.Join(gold, " "))
		if rank == 1 {
			continue
		}
		for i, h := range hits {
			if i >= 5 && i+1 != rank {
				continue
			}
			if i >= 5 && rank == 0 {
				break
			}
			head := h.Heading
			if len(head) > 70 {
				head = head[:70]
			}
			fmt.Printf("   %2d %s:%d-%d [%s] %q\n", i+1, h.Path, h.Start, h.End, h.Kind, head)
		}
	}
	h5, m5, n := evalScore(t, qs, 5, search)
	fmt.Printf("\nhit@5=%.3f mrr@5=%.3f n=%d\n", h5, m5, n)
}
