package main

import (
	"strings"
	"testing"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// An https:// OLLAMA_HOST where Ollama speaks plain HTTP (a TLS handshake
// that fails) takes the fallback of "Ollama down": keyword results with a
// note, passages from ask (issue 34, item 4).
func TestOllamaHostHTTPSOverPlainHTTP(t *testing.T) {
	e := newEnv(t)
	ol := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = ol.URL
	if r := e.run(false, "--index", "go", "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	e.vars["OLLAMA_HOST"] = strings.Replace(ol.URL, "http://", "https://", 1)
	r := e.run(false, "search", "--index", "go", "cancel a context")
	if r.code != 0 || !strings.Contains(r.stdout, "context.md") || !strings.Contains(r.stderr, "https") || strings.Count(r.stderr, "\n") > 3 {
		t.Errorf("search: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run(false, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != exitSourcesOnly || !strings.Contains(r.stdout, "context.md") || !strings.Contains(r.stderr, "http://") {
		t.Errorf("ask: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
