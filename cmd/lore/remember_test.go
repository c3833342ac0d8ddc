package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a build was told (size limit, chunk size) is remembered with the
// index and used by the next plain `lore index`; a file that leaves the
// index is counted as removed (issue 34, item 6).
func TestIndexRemembersWhatItWasTold(t *testing.T) {
	e := newEnv(t)
	e.vars["LORE_MAX_FILE_SIZE"] = "1KiB" // the configuration says small
	docs := t.TempDir()
	os.WriteFile(filepath.Join(docs, "small.md"), []byte("# Small\n\ntiny page\n"), 0o644)
	os.WriteFile(filepath.Join(docs, "big.md"), []byte("# Big\n\n"+strings.Repeat("a long paragraph of words. ", 200)+"\n"), 0o644)
	summary := func(args ...string) map[string]any {
		t.Helper()
		r := e.run(false, append([]string{"index", "--embedder", "none", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		return sum
	}
	if sum := summary("--max-file-size", "10KiB", "--chunk-size", "600", docs); sum["files_indexed"] != 2.0 {
		t.Fatalf("first build: %v", sum)
	}
	// A plain refresh keeps the limit and the chunk size it was told:
	// nothing is re-read, nothing dropped.
	sum := summary()
	if sum["files_unchanged"] != 2.0 || sum["files_removed"] != 0.0 || len(sum["files_skipped"].([]any)) != 0 {
		t.Fatalf("plain refresh forgot what the build was told: %v", sum)
	}
	// Told a smaller limit, the large file leaves the index: a removal.
	sum = summary("--max-file-size", "1KiB")
	if sum["files_removed"] != 1.0 || len(sum["files_skipped"].([]any)) != 1 || sum["total_files"] != 1.0 {
		t.Fatalf("lowered limit: %v", sum)
	}
	if sum := summary(); sum["files_unchanged"] != 1.0 || sum["files_indexed"] != 0.0 {
		t.Fatalf("refresh after the lowered limit: %v", sum)
	}
	r := e.run(false, "index", "status", "--json")
	if r.code != 0 || strings.Contains(r.stdout, `"changed": [{`) {
		t.Errorf("status after the refreshes: exit %d %s", r.code, r.stdout)
	}
}

// follow-symlinks is remembered however it was set: turned on later in
// the configuration it does not change what an existing index holds, and
// the build says so and names the flag that does (it was silent).
func TestFollowSymlinksInConfigLaterIsNamed(t *testing.T) {
	e := newEnv(t)
	docs, away := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(docs, "x.md"), []byte("# x\n\nplain notes\n"), 0o644)
	os.WriteFile(filepath.Join(away, "far.md"), []byte("# far\n\nzanzibar\n"), 0o644)
	os.Symlink(filepath.Join(away, "far.md"), filepath.Join(docs, "far.md"))
	if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	e.vars["LORE_FOLLOW_SYMLINKS"] = "true"
	r := e.run(false, "index")
	if r.code != 0 || !strings.Contains(r.stderr, "keeps follow-symlinks false") || !strings.Contains(r.stderr, "--follow-symlinks=true") {
		t.Fatalf("configuration turned on later: exit %d, no notice naming the flag:\n%s", r.code, r.stderr)
	}
	if r := e.run(false, "search", "--json", "zanzibar"); len(searchJSONOut(t, r.stdout).Results) != 0 {
		t.Fatalf("the index followed the link the build said it kept out")
	}
}
