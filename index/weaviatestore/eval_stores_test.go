package weaviatestore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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

// TestEvalStores is a measurement, not a check: the public question sets
// over the local store and a Weaviate node, on the same chunks and the
// same vectors (wordvec: no model download), keyword only, vector only,
// and hybrid fused by lore's RRF or by Weaviate's own hybrid. Run with
// LORE_EVAL_STORES=1 (and LORE_EVAL_CORPUS / LORE_EVAL_SET to choose the
// set; the Prometheus docs by default).
func TestEvalStores(t *testing.T) {
	if os.Getenv("LORE_EVAL_STORES") == "" {
		t.Skip("a measurement: set LORE_EVAL_STORES=1")
	}
	corpus := os.Getenv("LORE_EVAL_CORPUS")
	set := os.Getenv("LORE_EVAL_SET")
	if corpus == "" {
		gomod := os.Getenv("GOMODCACHE")
		if gomod == "" {
			gomod = filepath.Join(os.Getenv("HOME"), "go", "pkg", "mod")
		}
		corpus = filepath.Join(gomod, "github.com/prometheus/prometheus@v0.316.0/docs")
		set = "../../../shared/eval/prometheus_docs.jsonl"
	}
	qs := loadQuestions(t, set)
	ctx := context.Background()
	emb := wordvec.Embedder{Dim: 256}
	opt := index.BuildOptions{Name: "eval", Paths: []string{corpus}, Embedder: emb, EmbedBatchSize: 256,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}

	local := local.Store{Parent: t.TempDir()}
	if _, err := local.Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	c := weaviatetest.Start(t, 1)
	stores := map[string]index.Store{"local": local}
	for _, fusion := range []string{weaviatestore.HybridLore, weaviatestore.HybridWeaviate} {
		ws, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints(), Hybrid: fusion})
		if err != nil {
			t.Fatal(err)
		}
		stores["weaviate/"+fusion] = ws
	}
	if _, err := stores["weaviate/"+weaviatestore.HybridLore].Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"local", "weaviate/" + weaviatestore.HybridLore, "weaviate/" + weaviatestore.HybridWeaviate} {
		r, err := stores[name].Open(ctx, "eval")
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"lexical", "vector", "hybrid"} {
			if name == "weaviate/"+weaviatestore.HybridWeaviate && mode != "hybrid" {
				continue // the same queries as weaviate/lore
			}
			h, m := score(qs, func(q string) []index.Hit {
				var vec []float32
				if mode != "lexical" {
					vec = wordvec.Vector(q, 256)
				}
				res, err := r.SearchVector(ctx, q, vec, index.SearchOptions{Limit: 20, Depth: 50, NoLexical: mode == "vector"}, 0)
				if err != nil {
					t.Fatalf("%s %s %q: %v", name, mode, q, err)
				}
				return res.Hits
			})
			fmt.Printf("eval-stores %-18s %-8s hit@5 %.3f MRR@5 %.3f (n=%d)\n", name, mode, h, m, len(qs))
		}
		r.Close()
	}
}
