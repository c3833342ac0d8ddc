package main

import (
	"strings"
	"testing"
)

// `lore index --rebuild` keeps the index's own embedder: a keyword-only
// index rebuilds without Ollama, and a rebuild asked of a dead Ollama
// leaves nothing that refuses the next refresh (issue 34, item 2).
func TestRebuildKeepsTheIndexEmbedder(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := e.run(false, "index", "--rebuild")
	if r.code != 0 || !strings.Contains(r.stderr, "lexical only") {
		t.Fatalf("rebuild of a keyword-only index without Ollama: exit %d %q", r.code, r.stderr)
	}
	r = e.run(false, "index", "--rebuild", "--embedder", "ollama")
	if r.code != exitError || !strings.Contains(r.stderr, "ollama serve") {
		t.Fatalf("rebuild told to embed, Ollama down: exit %d %q", r.code, r.stderr)
	}
	for _, args := range [][]string{{"index"}, {"index", "--rebuild", "--embedder", "none"}, {"index", "--rebuild"}} {
		if r := e.run(false, args...); r.code != 0 || !strings.Contains(r.stderr, "lexical only") {
			t.Errorf("%v after the failed rebuild: exit %d %q", args, r.code, r.stderr)
		}
	}
}
