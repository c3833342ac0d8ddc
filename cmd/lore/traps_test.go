package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// Without HOME, lore refuses with the fix rather than writing its indexes
// and log under ./.local of whatever folder it was started in.
func TestNoHomeRefuses(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv("HOME", "") // os.UserHomeDir, the fallback, reads it
	for _, args := range [][]string{
		{"index", "list"},
		{"index", "--embedder", "none", sampleDocs(t)},
		{"sessions", "list"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			e := &env{t: t, vars: map[string]string{}}
			r := e.run(false, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "HOME is not set") || !strings.Contains(r.stderr, "XDG_DATA_HOME") {
				t.Errorf("exit %d, stderr %q", r.code, r.stderr)
			}
			if left, _ := os.ReadDir(wd); len(left) > 0 {
				t.Errorf("wrote into the working directory: %v", left)
			}
		})
	}
	// lore doctor reports it, and writes no log there either.
	e := &env{t: t, vars: map[string]string{"OLLAMA_HOST": "http://127.0.0.1:1"}}
	if r := e.run(false, "doctor"); r.code != exitError || !strings.Contains(r.stdout, "HOME is not set") {
		t.Errorf("doctor: exit %d, stdout %q", r.code, r.stdout)
	}
	if left, _ := os.ReadDir(wd); len(left) > 0 {
		t.Errorf("doctor wrote into the working directory: %v", left)
	}
	// With the XDG folders set, no home is needed.
	home := t.TempDir()
	e = &env{t: t, vars: map[string]string{"XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_STATE_HOME": filepath.Join(home, "state")}}
	if r := e.run(false, "index", "list"); r.code != 0 {
		t.Errorf("with XDG folders: exit %d %q", r.code, r.stderr)
	}
}

// A touch that keeps a file's bytes is no change, in index status as in a
// build; new bytes of the same size are (issue 34).
func TestStatusComparesBytesWhenOnlyMTimeMoved(t *testing.T) {
	e := newEnv(t)
	docs := sampleDocs(t)
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	guide := filepath.Join(docs, "guide.md")
	later := time.Now().Add(time.Hour)
	changed := func() string {
		t.Helper()
		r := e.run(false, "index", "status", "--json")
		var st struct {
			Changed []struct{ Path, Change string } `json:"changed"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status: %v %q", err, r.stderr)
		}
		return fmt.Sprint(st.Changed)
	}
	os.Chtimes(guide, later, later)
	if got := changed(); got != "[]" {
		t.Errorf("after a touch: changed %s", got)
	}
	body, _ := os.ReadFile(guide)
	os.WriteFile(guide, bytes.ToUpper(body), 0o644)
	os.Chtimes(guide, later.Add(time.Hour), later.Add(time.Hour))
	if got, want := changed(), fmt.Sprintf("[{%s modified}]", guide); got != want {
		t.Errorf("after an edit of the same size: changed %s, want %s", got, want)
	}
}
