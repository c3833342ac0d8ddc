package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/wire"
)

// A cloned folder whose links lead out of it: the files behind them stay
// out of the index, each listed with its reason, unless follow-symlinks
// says otherwise (issue 34, item 1).
func TestIndexSkipsSymlinksOutOfTheSource(t *testing.T) {
	e := newEnv(t)
	docs, home := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(docs, "x.md"), []byte("# x\n\nplain notes\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "etc"), 0o755)
	os.WriteFile(filepath.Join(home, "credentials"), []byte("aws_secret_access_key = hunter2secret\n"), 0o600)
	os.WriteFile(filepath.Join(home, "etc", "hosts.md"), []byte("# hosts\n\nhunter2secret\n"), 0o644)
	os.Symlink(filepath.Join(home, "credentials"), filepath.Join(docs, "notes.md"))
	os.Symlink(filepath.Join(home, "etc"), filepath.Join(docs, "etclink"))

	if r := e.run(false, "index", "--embedder", "none", "-q", docs); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r := e.run(false, "search", "--json", "hunter2secret")
	if out := searchJSONOut(t, r.stdout); len(out.Results) != 0 {
		t.Fatalf("a file behind a link out of the source is searchable: %+v", out.Results)
	}
	r = e.run(false, "index", "status", "--json")
	var st wire.IndexStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status: %v\n%s", err, r.stdout)
	}
	reasons := map[string]string{}
	for _, s := range st.Skipped {
		reasons[filepath.Base(s.Path)] = s.Reason
	}
	for _, name := range []string{"notes.md", "etclink"} {
		if !strings.HasPrefix(reasons[name], "symlink outside the source") || !strings.Contains(reasons[name], "follow-symlinks") {
			t.Errorf("%s: skip reason %q", name, reasons[name])
		}
	}
	if len(st.Changed) != 0 {
		t.Errorf("status lists the skipped links as changes: %+v", st.Changed)
	}

	// Told to, the build follows them.
	if r := e.run(false, "index", "--embedder", "none", "-q", "--follow-symlinks"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = e.run(false, "search", "--json", "hunter2secret")
	if out := searchJSONOut(t, r.stdout); len(out.Results) != 2 {
		t.Errorf("with --follow-symlinks: %d results, want 2 (notes.md, etclink/hosts.md)", len(out.Results))
	}
}
