package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func walkOne(t *testing.T, ctx context.Context, root string, opt WalkOptions) (Walked, map[string]string) {
	t.Helper()
	ws, err := WalkRoots(ctx, []string{root}, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range ws[0].Entries {
		got[e.Rel] = e.Reason
	}
	return ws[0], got
}

func mkfile(t *testing.T, p, body string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A link that leads out of the source is skipped with its reason unless
// FollowSymlinks; a link that stays inside is followed; a link to / does
// not take the walk into the whole machine (issue 34, item 1).
func TestWalkSymlinksOutsideTheSource(t *testing.T) {
	src, outside := t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(src, "x.md"), "# x\n")
	mkfile(t, filepath.Join(src, "v2", "guide.md"), "# guide\n")
	mkfile(t, filepath.Join(outside, "credentials"), "secret\n")
	mkfile(t, filepath.Join(outside, "etc", "passwd.md"), "root\n")
	for link, target := range map[string]string{
		"notes.md":   filepath.Join(outside, "credentials"),
		"etclink":    filepath.Join(outside, "etc"),
		"everything": "/",
		"latest":     "v2",
		"self":       "/proc/self",
	} {
		if err := os.Symlink(target, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	w, got := walkOne(t, context.Background(), src, WalkOptions{})
	if w.Cut != "" || w.Err != nil {
		t.Fatalf("walk cut %q, err %v", w.Cut, w.Err)
	}
	for _, rel := range []string{"notes.md", "etclink", "everything"} {
		if !strings.HasPrefix(got[rel], ReasonLinkOutside+": it leads to ") || !strings.Contains(got[rel], "follow-symlinks") {
			t.Errorf("%s: reason %q, want %q with the fix", rel, got[rel], ReasonLinkOutside)
		}
	}
	if r, ok := got["self"]; ok && !strings.HasPrefix(r, ReasonLinkOutside) {
		t.Errorf("self -> /proc/self: reason %q", r)
	}
	for rel := range got {
		if strings.HasPrefix(rel, "etclink/") || strings.HasPrefix(rel, "everything/") || strings.HasPrefix(rel, "self/") {
			t.Errorf("%s was walked: a link out of the source was followed", rel)
		}
	}
	// The inside link and its target are one folder: walked once.
	guides := 0
	for rel, reason := range got {
		if strings.HasSuffix(rel, "/guide.md") && reason == "" {
			guides++
		}
	}
	if guides != 1 {
		t.Errorf("v2/guide.md (also latest/guide.md) listed %d times, want once: %v", guides, got)
	}
	if got["x.md"] != "" || !hasKey(got, "x.md") {
		t.Errorf("x.md: %v", got)
	}

	// Allowed, the outside links are followed (not the one to /: that
	// one is bounded below).
	os.Remove(filepath.Join(src, "everything"))
	os.Remove(filepath.Join(src, "self"))
	_, got = walkOne(t, context.Background(), src, WalkOptions{FollowSymlinks: true})
	if r, ok := got["notes.md"]; !ok || r != "" {
		t.Errorf("notes.md with FollowSymlinks: %q, %v", r, ok)
	}
	if r, ok := got["etclink/passwd.md"]; !ok || r != "" {
		t.Errorf("etclink/passwd.md with FollowSymlinks: %q, %v", r, ok)
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// A loop is skipped as one; folders deeper than MaxDepth are skipped with
// the reason; a source past MaxFiles is cut, and says so.
func TestWalkBounds(t *testing.T) {
	src := t.TempDir()
	mkfile(t, filepath.Join(src, "a", "b", "c", "deep.md"), "# deep\n")
	for i := range 5 {
		mkfile(t, filepath.Join(src, "flat", string(rune('a'+i))+".md"), "# f\n")
	}
	os.Symlink(src, filepath.Join(src, "a", "up"))
	_, got := walkOne(t, context.Background(), src, WalkOptions{})
	if got["a/up"] != ReasonLinkLoop {
		t.Errorf("a/up -> root: %q, want %q", got["a/up"], ReasonLinkLoop)
	}
	_, got = walkOne(t, context.Background(), src, WalkOptions{MaxDepth: 2})
	if !strings.HasPrefix(got["a/b/c"], ReasonTooDeep) || hasKey(got, "a/b/c/deep.md") {
		t.Errorf("MaxDepth 2: %v", got)
	}
	w, got := walkOne(t, context.Background(), src, WalkOptions{MaxFiles: 3})
	if len(got) != 3 || !strings.Contains(w.Cut, "more than 3 files") {
		t.Errorf("MaxFiles 3: %d entries, cut %q", len(got), w.Cut)
	}
}

// A cancelled walk ends with the context's error and lists nothing, even
// when it was told to follow a link to / (issue 34, item 1: Ctrl+C ends
// the scan at once).
func TestWalkEndsOnCancel(t *testing.T) {
	src := t.TempDir()
	mkfile(t, filepath.Join(src, "x.md"), "# x\n")
	os.Symlink("/", filepath.Join(src, "everything"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ws, err := WalkRoots(ctx, []string{src}, WalkOptions{FollowSymlinks: true})
	if !errors.Is(err, context.Canceled) || ws != nil {
		t.Fatalf("cancelled walk: %v, %d roots", err, len(ws))
	}
}
