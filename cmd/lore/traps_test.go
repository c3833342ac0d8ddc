package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command that fails before a first build begins leaves no index
// behind: `index list` and completion would offer a phantom "not built"
// (issue 34, smaller traps).
func TestFailedFirstBuildLeavesNoIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(docs string) []string
	}{
		{"no paths", func(string) []string { return []string{"--index", "ghost", "index"} }},
		{"ollama down", func(docs string) []string { return []string{"--index", "ghost", "index", docs} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["OLLAMA_HOST"] = "http://127.0.0.1:1"
			if r := e.run(false, tc.args(sampleDocs(t))...); r.code == 0 {
				t.Fatalf("the build succeeded: %q", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(e.home, "data", "lore", "indexes", "ghost")); !os.IsNotExist(err) {
				t.Errorf("the failed build left its index folder: %v", err)
			}
			if r := e.run(false, "index", "list"); strings.Contains(r.stdout, "ghost") {
				t.Errorf("index list shows the phantom:\n%s", r.stdout)
			}
			// The retry that works is not hindered by the first attempt.
			if r := e.run(false, "--index", "ghost", "index", "--embedder", "none", sampleDocs(t)); r.code != 0 {
				t.Errorf("retry: exit %d %q", r.code, r.stderr)
			}
		})
	}
}

// An index folder with nothing built in it (left by an older lore) is
// removed as "not built", not with the size of the lock the removal
// itself holds.
func TestRemovePhantomIndex(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.home, "data", "lore", "indexes", "ghost")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "lock"), nil, 0o644)
	r := e.run(false, "index", "rm", "--yes", "ghost")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "removed index ghost (not built)" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
