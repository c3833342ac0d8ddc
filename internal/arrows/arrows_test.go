package arrows

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/lore-cli/lore/"

// rule says which of lore's packages pkg may import (non-test imports).
type rule struct {
	pkg   string
	allow func(imp string) bool
	why   string
}

func only(list ...string) func(string) bool {
	return func(imp string) bool {
		for _, l := range list {
			if imp == l {
				return true
			}
		}
		return false
	}
}

var rules = []rule{
	{"index/ingest", only(), "ingest (walk, load, chunk) imports nothing of lore"},
	{"index/analysis", only(), "the analyser imports nothing of lore"},
	{"index/hnsw", only(), "the vector graph imports nothing of lore"},
	{"index/bm25", only("index/analysis"), "the postings import only the analyser"},
	{"index", only("index/ingest", "internal/units"), "the seam imports ingest and no store, no client of Ollama"},
	{"index/local", func(imp string) bool {
		return imp == "index" || strings.HasPrefix(imp, "index/") && imp != "index/weaviatestore" || strings.HasPrefix(imp, "internal/")
	}, "the local store imports the seam, ingest, analysis, bm25, hnsw, never another store"},
	{"index/weaviatestore", func(imp string) bool {
		return imp == "index" || imp == "index/ingest" || imp == "index/analysis" || imp == "index/bm25" || strings.HasPrefix(imp, "internal/")
	}, "the Weaviate store imports the seam, ingest, analysis and bm25 (lore's scorer), never another store"},
}

type pkgInfo struct {
	ImportPath string
	Imports    []string
}

// packages lists lore's packages with their imports, as go list gives them.
func packages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		var own []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		p.Imports = own
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

func TestArrows(t *testing.T) {
	pkgs := packages(t)
	byPath := map[string]pkgInfo{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	for _, r := range rules {
		p, ok := byPath[r.pkg]
		if !ok {
			t.Errorf("package %s is gone: update the map (docs/ARCHITECTURE.md) and this test", r.pkg)
			continue
		}
		for _, imp := range p.Imports {
			if !r.allow(imp) {
				t.Errorf("%s imports %s: %s", r.pkg, imp, r.why)
			}
		}
	}
	for _, p := range pkgs {
		inIndex := p.ImportPath == "index" || strings.HasPrefix(p.ImportPath, "index/")
		for _, imp := range p.Imports {
			// Nothing under index/ reaches up: no engine, no front end.
			if inIndex && !(imp == "index" || strings.HasPrefix(imp, "index/") || strings.HasPrefix(imp, "internal/")) {
				t.Errorf("%s imports %s: nothing under index/ imports a package above it", p.ImportPath, imp)
			}
			// A store is opened by the engine only: front ends, doctor and
			// eval reach stores through app.
			store := imp == "index/local" || imp == "index/weaviatestore"
			if store && p.ImportPath != "app" && !inIndex && !strings.HasPrefix(p.ImportPath, "internal/") && path.Dir(p.ImportPath) != "bench" {
				t.Errorf("%s imports %s: front ends reach stores only through app", p.ImportPath, imp)
			}
		}
	}
}
