package local

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
)

// evalQuestion is one line of ../shared/eval/go_stdlib.jsonl.
type evalQuestion struct {
	ID         string `json:"id"`
	Question   string `json:"question"`
	Kind       string `json:"kind"`
	Answerable bool   `json:"answerable"`
	Gold       []struct {
		Path  string `json:"path"`
		Lines [2]int `json:"lines"`
	} `json:"gold"`
}

func loadEval(t testing.TB, path string) []evalQuestion {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no eval set: %v", err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// evalScore runs the answerable questions through search and returns
// hit@k and MRR: a hit is a result on a gold path whose lines overlap the
// gold range.
func evalScore(t testing.TB, qs []evalQuestion, k int, search func(string) []index.Hit) (hit, mrr float64, n int) {
	for _, q := range qs {
		if !q.Answerable {
			continue
		}
		n++
		for rank, h := range search(q.Question) {
			if rank >= k {
				break
			}
			found := false
			for _, g := range q.Gold {
				if h.Path == g.Path && h.Start <= g.Lines[1] && h.End >= g.Lines[0] {
					found = true
				}
			}
			if found {
				hit++
				mrr += 1 / float64(rank+1)
				break
			}
		}
	}
	return hit / float64(n), mrr / float64(n), n
}

// TestEvalChunkBudget is a measurement, not a check: it indexes the Go
// standard library at several chunk budgets and prints lexical hit@5 and
// MRR on the dev set. Run it with `make eval-chunking`.
func TestEvalChunkBudget(t *testing.T) {
	budgets := os.Getenv("LORE_EVAL_BUDGETS")
	if budgets == "" {
		t.Skip("set LORE_EVAL_BUDGETS=800,1500,... (make eval-chunking)")
	}
	qs := loadEval(t, "../../../shared/eval/go_stdlib.jsonl")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	for _, b := range strings.Split(budgets, ",") {
		size, _ := strconv.Atoi(b)
		dir := t.TempDir()
		sum := build(t, dir, index.BuildOptions{Name: "eval", Paths: []string{src}, Chunk: ingest.ChunkOptions{Size: size, Overlap: size / 8}, MaxFileSize: 4 << 20})
		ix, err := Open(dir, "eval")
		if err != nil {
			t.Fatal(err)
		}
		search := func(q string) []index.Hit {
			res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 10})
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			return res.Hits
		}
		h1, m1, n := evalScore(t, qs, 1, search)
		h5, m5, _ := evalScore(t, qs, 5, search)
		ix.Close()
		fmt.Printf("chunk-size=%d overlap=%d chunks=%d  hit@1=%.3f hit@5=%.3f mrr@5=%.3f (n=%d)\n", size, size/8, sum.TotalChunks, h1, h5, m5, n)
		_ = m1
	}
}
