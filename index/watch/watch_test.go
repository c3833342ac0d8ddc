package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index/ingest"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, opt Options) *Watcher {
	t.Helper()
	w, err := New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// next waits for a batch; a test that never gets one fails instead of
// hanging.
func next(t *testing.T, w *Watcher) Batch {
	t.Helper()
	select {
	case b := <-w.Batches():
		return b
	case <-time.After(20 * time.Second):
		t.Fatal("no batch came")
	}
	return Batch{}
}

// until takes batches until one holds want (or fails after a while),
// returning every path seen on the way.
func until(t *testing.T, w *Watcher, want ...string) []string {
	t.Helper()
	var seen []string
	deadline := time.After(20 * time.Second)
	for {
		select {
		case b := <-w.Batches():
			seen = append(seen, b.Paths...)
			if b.All {
				return seen
			}
			ok := true
			for _, p := range want {
				if !covered(seen, p) {
					ok = false
				}
			}
			if ok {
				return seen
			}
		case <-deadline:
			t.Fatalf("no batch holds %v; seen %v", want, seen)
		}
	}
}

// covered tells whether p or a folder above it is in paths.
func covered(paths []string, p string) bool {
	for _, q := range paths {
		if q == p || strings.HasPrefix(p, q+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// quiet tells that no batch comes for a while (nothing to report).
func quiet(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case b := <-w.Batches():
		t.Errorf("a batch came for a change the index does not hold: %+v", b)
	case <-time.After(700 * time.Millisecond):
	}
}

func TestWatchReportsEditsCreatesDeletesRenames(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "a")
	write(t, filepath.Join(dir, "sub/b.md"), "b")
	w := start(t, Options{Roots: []string{dir}})
	if w.Polling() != "" || w.Watched() != 2 {
		t.Fatalf("watching %d folders (polling: %q), want 2 by events", w.Watched(), w.Polling())
	}
	write(t, filepath.Join(dir, "a.md"), "a2")
	until(t, w, filepath.Join(dir, "a.md"))

	// A new folder, and a file written into it after it appeared: the
	// new folder is watched as it appears.
	if err := os.Mkdir(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	until(t, w, filepath.Join(dir, "new"))
	write(t, filepath.Join(dir, "new/c.md"), "c")
	until(t, w, filepath.Join(dir, "new/c.md"))

	if err := os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2")); err != nil {
		t.Fatal(err)
	}
	until(t, w, filepath.Join(dir, "sub"), filepath.Join(dir, "sub2"))
	write(t, filepath.Join(dir, "sub2/d.md"), "d")
	until(t, w, filepath.Join(dir, "sub2/d.md"))

	if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	until(t, w, filepath.Join(dir, "a.md"))
}

// An editor's save (a temporary file written, then renamed over) and a
// burst of writes arrive as one batch, not one per event.
func TestWatchCoalescesABurst(t *testing.T) {
	dir := t.TempDir()
	w := start(t, Options{Roots: []string{dir}, Quiet: 300 * time.Millisecond, MaxWait: 10 * time.Second})
	for i := range 50 {
		write(t, filepath.Join(dir, "burst", "f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"), "x")
	}
	tmp := filepath.Join(dir, ".a.md.swp")
	write(t, tmp, "new")
	if err := os.Rename(tmp, filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	b := next(t, w)
	if !covered(b.Paths, filepath.Join(dir, "burst", "fab.md")) || !covered(b.Paths, filepath.Join(dir, "a.md")) {
		t.Errorf("the burst came in pieces; the first batch: %v", b.Paths)
	}
	if !slices.IsSorted(b.Paths) {
		t.Errorf("batch paths not sorted: %v", b.Paths)
	}
}

// Folders the index leaves out (ignore files, VCS folders) are not
// watched, and a link out of the source leads the watcher nowhere.
func TestWatchStaysInTheIndexsWalk(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, ".gitignore"), "node_modules/\n")
	write(t, filepath.Join(dir, "node_modules/x/y.js"), "y")
	write(t, filepath.Join(dir, ".git/HEAD"), "ref")
	write(t, filepath.Join(dir, "a.md"), "a")
	write(t, filepath.Join(outside, "secret.md"), "s")
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	w := start(t, Options{Roots: []string{dir}, Walk: ingest.WalkOptions{}})
	if w.Watched() != 1 {
		t.Errorf("watching %d folders, want the source's own folder only", w.Watched())
	}
	write(t, filepath.Join(outside, "secret.md"), "s2")
	write(t, filepath.Join(dir, "node_modules/x/y.js"), "y2")
	quiet(t, w)
	// An ignore file's edit stands for its whole folder.
	write(t, filepath.Join(dir, ".gitignore"), "")
	until(t, w, filepath.Join(dir, "node_modules/x/y.js"))
	if w.Watched() != 3 {
		t.Errorf("watching %d folders after node_modules/ was let in, want 3", w.Watched())
	}
}

// Past the watch bound the watcher polls, says why, and still reports.
func TestWatchPollsPastTheLimit(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a/x.md"), "x")
	write(t, filepath.Join(dir, "b/y.md"), "y")
	w := start(t, Options{Roots: []string{dir}, MaxWatches: 2, Poll: 50 * time.Millisecond})
	if !strings.Contains(w.Polling(), "more than 2 folders") {
		t.Fatalf("Polling() = %q", w.Polling())
	}
	write(t, filepath.Join(dir, "b/y.md"), "y, longer")
	until(t, w, filepath.Join(dir, "b/y.md"))
	os.Remove(filepath.Join(dir, "a/x.md"))
	until(t, w, filepath.Join(dir, "a/x.md"))
	quiet(t, w)
}

// A source that vanishes is reported missing, never as its files
// deleted by the poller, and comes back whole.
func TestWatchSourceGoneAndBack(t *testing.T) {
	for _, poll := range []string{"", "testing"} {
		t.Run("poll="+poll, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "docs")
			write(t, filepath.Join(dir, "a.md"), "a")
			w := start(t, Options{Roots: []string{dir}, ForcePoll: poll, Poll: 50 * time.Millisecond, Recheck: 100 * time.Millisecond})
			if err := os.Rename(dir, dir+".aside"); err != nil {
				t.Fatal(err)
			}
			var b Batch
			for len(b.Missing) == 0 {
				b = next(t, w)
				if poll != "" && covered(b.Paths, filepath.Join(dir, "a.md")) {
					t.Errorf("the poller reported a file of a vanished source as changed: %v", b.Paths)
				}
			}
			if !slices.Equal(b.Missing, []string{dir}) {
				t.Errorf("Missing = %v", b.Missing)
			}
			if err := os.Rename(dir+".aside", dir); err != nil {
				t.Fatal(err)
			}
			for len(b.Missing) != 0 {
				b = next(t, w)
			}
			write(t, filepath.Join(dir, "a.md"), "a2")
			until(t, w, filepath.Join(dir, "a.md"))
		})
	}
}

// A folder that appears, or becomes readable, where the index's ignore
// rules leave it out is not watched: its walk starts at the source, so
// the rules of the folders above it hold.
func TestWatchLeavesANewIgnoredFolderOut(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".gitignore"), "build/\n")
	write(t, filepath.Join(dir, "a.md"), "a")
	w := start(t, Options{Roots: []string{dir}})
	if w.Watched() != 1 {
		t.Fatalf("watching %d folders at the start, want 1", w.Watched())
	}
	write(t, filepath.Join(dir, "build/out/deep/x.md"), "x")
	os.Chmod(filepath.Join(dir, "build"), 0o755)
	write(t, filepath.Join(dir, "docs/b.md"), "b")
	until(t, w, filepath.Join(dir, "docs/b.md"))
	if w.Watched() != 2 {
		t.Errorf("watching %d folders, want the source and docs/ (build/ is ignored)", w.Watched())
	}
}
