package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Links that lead to each other are a loop, not a broken link: the user
// fixes them differently (issue 34).
func TestWalkNamesALinkLoop(t *testing.T) {
	root := t.TempDir()
	os.Symlink("b.md", filepath.Join(root, "a.md"))
	os.Symlink("a.md", filepath.Join(root, "b.md"))
	os.Symlink("nowhere.md", filepath.Join(root, "gone.md"))
	walked, err := WalkRoots(context.Background(), []string{root}, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range walked[0].Entries {
		got[e.Rel] = e.Reason
	}
	want := map[string]string{"a.md": "symlink loop", "b.md": "symlink loop", "gone.md": "broken symlink"}
	for rel, reason := range want {
		if got[rel] != reason {
			t.Errorf("%s: %q, want %q", rel, got[rel], reason)
		}
	}
}
