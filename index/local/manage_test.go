package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lore-cli/lore/index"
)

func TestListAndRemove(t *testing.T) {
	ctx := context.Background()
	src, parent := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	build(t, filepath.Join(parent, "notes"), testOptions(newFakeEmbedder("nomic-embed-text", 8), src))
	os.MkdirAll(filepath.Join(parent, "half"), 0o755) // a first build that never finished
	os.MkdirAll(filepath.Join(parent, ".old.x"+removingSuffix, "g1"), 0o755)

	list, err := List(ctx, parent)
	if err != nil || len(list) != 2 {
		t.Fatalf("List: %v %+v", err, list)
	}
	half, notes := list[0], list[1]
	if half.Name != "half" || half.Built || half.Chunks != 0 {
		t.Errorf("unbuilt: %+v", half)
	}
	st := statusOf(t, filepath.Join(parent, "notes"))
	if notes.Name != "notes" || !notes.Built || notes.Chunks != st.Chunks || notes.Embedder != "nomic-embed-text" ||
		notes.BuiltAt == nil || !notes.BuiltAt.Equal(*st.BuiltAt) || notes.SizeBytes < 16<<10 || notes.Damaged != "" {
		t.Errorf("notes: %+v, status %+v", notes, st)
	}

	// A build holds the lock: nothing is removed.
	lk, err := acquireLock(filepath.Join(parent, "notes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(ctx, filepath.Join(parent, "notes"), "notes", nil); !errors.Is(err, index.ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	lk.release()
	// A declined confirmation removes nothing; it is asked with the numbers.
	no := errors.New("no")
	var asked index.Info
	_, err = Remove(ctx, filepath.Join(parent, "notes"), "notes", func(in index.Info) error { asked = in; return no })
	if !errors.Is(err, no) || asked.Chunks != notes.Chunks {
		t.Errorf("declined: %v, asked with %+v", err, asked)
	}
	if l, _ := List(ctx, parent); len(l) != 2 {
		t.Fatalf("declined removal removed: %+v", l)
	}

	in, err := Remove(ctx, filepath.Join(parent, "notes"), "notes", nil)
	if err != nil || in.Chunks != notes.Chunks {
		t.Fatalf("Remove: %v %+v", err, in)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "half" {
		t.Errorf("left: %v (the index and an earlier removal's leftover should be gone)", entries)
	}
	if _, err := Remove(ctx, filepath.Join(parent, "notes"), "notes", nil); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("twice: %v", err)
	}
	if l, err := List(ctx, filepath.Join(parent, "none")); err != nil || l == nil || len(l) != 0 {
		t.Errorf("no indexes folder: %v %v", l, err)
	}
}
