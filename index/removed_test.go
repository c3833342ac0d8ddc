package index_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/indextest"
)

// "removed" counts files that leave the index: a skip record going (a
// binary file deleted, an unreadable folder readable again) is none
// (issue 34: such a folder reported "1 removed").
func TestRemovedCountsOnlyIndexedFiles(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.md"), []byte("# A\n\nalpha\n"), 0o644)
	os.WriteFile(filepath.Join(src, "blob.txt"), []byte("bin\x00ary"), 0o644)
	s := indextest.New()
	if _, err := index.BuildTo(ctx, s, options(nil, src)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(src, "blob.txt"))
	sum, err := index.BuildTo(ctx, s, options(nil))
	if err != nil || sum.FilesRemoved != 0 {
		t.Fatalf("a skipped file deleted: %d removed, %v", sum.FilesRemoved, err)
	}
	os.Remove(filepath.Join(src, "a.md"))
	sum, err = index.BuildTo(ctx, s, options(nil))
	if err != nil || sum.FilesRemoved != 1 {
		t.Fatalf("an indexed file deleted: %d removed, %v", sum.FilesRemoved, err)
	}
}
