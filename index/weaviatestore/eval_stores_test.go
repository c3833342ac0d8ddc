package weaviatestore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/index/weaviatestore"
	"github.com/lore-cli/lore/internal/weaviatetest"
	"github.com/lore-cli/lore/internal/wordvec"
)

type evalQuestion struct {
	Question   string `json:"question"`
	Answerable bool   `json:"answerable"`
	Gold       []struct {
		Path  string `json:"path"`
		Lines [2]int `json:"lines"`
	} `json:"gold"`
}

func loadQuestions(t *testing.T, path string) []evalQuestion {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no question set: %v", err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		if q.Answerable {
			qs = append(qs, q)
		}
	}
	return qs
}

// score is hit@5 and MRR@5: a hit is a result on a gold path whose lines
// overlap the gold range (../shared/eval/README.md).
func score(qs []evalQuestion, search func(string) []index.Hit) (hit, mrr float64) {
	for _, q := range qs {
		for rank, h := range search(q.Question) {
			if rank >= 5 {
				break
			}
			found := false
			for _, g := range q.Gold {
				found = found || (filepath.ToSlash(h.Path) == g.Path && h.Start <= g.Lines[1] && h.End >= g.Lines[0])
			}
			if found {
				hit++
				mrr += 1 / float64(rank+1)
				break
			}
		}
	}
	return hit / float64(len(qs)), mrr / float64(len(qs))
}

// evalSets finds the public question sets: $LORE_EVAL_SETS, else the
// shared/eval folder beside the module root or one of its parents (a
// worktree sits a level deeper than the main checkout).
func evalSets(t *testing.T) string {
	if d := os.Getenv("LORE_EVAL_SETS"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if st, err := os.Stat(filepath.Join(dir, "shared", "eval")); err == nil && st.IsDir() {
			return filepath.Join(dir, "shared", "eval")
		}
	}
	t.Skip("no shared/eval folder above the module: set LORE_EVAL_SETS")
	return ""
}

// evalCorpus is the folder a set's gold paths are relative to: the Go
// tree for go_stdlib, else what scripts/eval-public.sh downloads under
// .cache/eval/corpus; "" when it is not there.
func evalCorpus(t *testing.T, set string) string {
	if set == "go_stdlib" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return ""
		}
		return filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".cache", "eval", "corpus", set)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// TestEvalStores is a measurement, not a check: every public question set
// over the local store and a Weaviate node, on the same chunks, keyword
// only (built without an embedder: fast), one table. A set whose corpus
// is absent is skipped (scripts/eval-public.sh downloads them);
// LORE_EVAL_ONLY=a,b runs those sets only. With LORE_EVAL_VECTORS=1 the
// indexes get vectors (wordvec: no model download) and vector-only and
// hybrid rows too, fused by lore's RRF or by Weaviate's own hybrid. Run
// with LORE_EVAL_STORES=1.
func TestEvalStores(t *testing.T) {
	if os.Getenv("LORE_EVAL_STORES") == "" {
		t.Skip("a measurement: set LORE_EVAL_STORES=1")
	}
	setsDir := evalSets(t)
	files, _ := filepath.Glob(filepath.Join(setsDir, "*.jsonl"))
	only := os.Getenv("LORE_EVAL_ONLY")
	vectors := os.Getenv("LORE_EVAL_VECTORS") != ""
	ctx := context.Background()
	c := weaviatetest.Start(t, 1)
	modes := []string{"lexical"}
	var emb index.Embedder
	if vectors {
		modes = append(modes, "vector", "hybrid")
		emb = wordvec.Embedder{Dim: 256}
	}
	type row struct {
		set, mode              string
		lh, lm, wh, wm, fh, fm float64
		n                      int
		localLat, weavLat      time.Duration
	}
	var rows []row
	table := func(rows []row) {
		fmt.Printf("| set | mode | n | local hit@5 | local MRR@5 | Weaviate hit@5 | Weaviate MRR@5 | Weaviate hybrid (its own) hit@5 / MRR@5 | local ms/query | Weaviate ms/query |\n")
		fmt.Printf("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			own := "-"
			if r.fh >= 0 {
				own = fmt.Sprintf("%.3f / %.3f", r.fh, r.fm)
			}
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %s | %.1f | %.1f |\n", r.set, r.mode, r.n, r.lh, r.lm, r.wh, r.wm, own,
				float64(r.localLat.Microseconds())/1000, float64(r.weavLat.Microseconds())/1000)
		}
	}
	for _, file := range files {
		set := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		if only != "" && !slices.Contains(strings.Split(only, ","), set) {
			continue
		}
		corpus := evalCorpus(t, set)
		if corpus == "" {
			t.Logf("%s: no corpus under .cache/eval/corpus (scripts/eval-public.sh fetches it): skipped", set)
			continue
		}
		qs := loadQuestions(t, file)
		name := "eval-" + strings.ReplaceAll(set, "_", "-")
		opt := index.BuildOptions{Name: name, Paths: []string{corpus}, Embedder: emb, EmbedBatchSize: 256,
			Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
		stores := map[string]index.Store{"local": local.Store{Parent: t.TempDir()}}
		for _, fusion := range []string{weaviatestore.HybridLore, weaviatestore.HybridWeaviate} {
			// A long timeout: a node busy indexing the Go tree on a
			// loaded machine took more than the default 10 s to answer.
			ws, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints(), Hybrid: fusion,
				Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			stores["weaviate/"+fusion] = ws
		}
		built := true
		for _, s := range []string{"local", "weaviate/" + weaviatestore.HybridLore} {
			t0 := time.Now()
			if _, err := stores[s].Build(ctx, opt); err != nil {
				t.Errorf("%s: %s: %v", set, s, err)
				built = false
				break
			}
			t.Logf("%s: %s built in %v", set, s, time.Since(t0).Round(time.Millisecond))
		}
		if !built {
			continue
		}
		readers := map[string]index.Reader{}
		for name, s := range stores {
			r, err := s.Open(ctx, opt.Name)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			readers[name] = r
		}
		run := func(store, mode string) (float64, float64, time.Duration) {
			var took time.Duration
			h, m := score(qs, func(q string) []index.Hit {
				var vec []float32
				if mode != "lexical" {
					vec = wordvec.Vector(q, 256)
				}
				t0 := time.Now()
				res, err := readers[store].SearchVector(ctx, q, vec, index.SearchOptions{Limit: 20, Depth: 50, NoLexical: mode == "vector"}, 0)
				took += time.Since(t0)
				if err != nil {
					t.Fatalf("%s %s %s %q: %v", set, store, mode, q, err)
				}
				return res.Hits
			})
			return h, m, took / time.Duration(len(qs))
		}
		for _, mode := range modes {
			r := row{set: set, mode: mode, n: len(qs), fh: -1, fm: -1}
			r.lh, r.lm, r.localLat = run("local", mode)
			r.wh, r.wm, r.weavLat = run("weaviate/"+weaviatestore.HybridLore, mode)
			if mode == "hybrid" {
				r.fh, r.fm, _ = run("weaviate/"+weaviatestore.HybridWeaviate, mode)
			}
			rows = append(rows, r)
			table([]row{r}) // as it comes: a long run that dies keeps what it measured
		}
		if _, err := stores["weaviate/"+weaviatestore.HybridLore].Remove(ctx, opt.Name, nil); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("all sets:")
	table(rows)
}
