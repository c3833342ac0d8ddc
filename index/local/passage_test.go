package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

// With follow-symlinks a file behind a link that leads out of its source
// is indexed and found, so its passage is read too: from the stored
// chunks, not the disk (get_passage and resources/read failed on hits
// lore had returned). Without it such a link is still refused.
func TestReadPassageBehindALinkOut(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"far.md": "# Far\n\nThe lighthouse keeper logs every passing ship.\n"})
	for _, follow := range []bool{true, false} {
		src, dir := t.TempDir(), t.TempDir()
		writeFiles(t, src, map[string]string{"near.md": "# Near\n\nThe harbour master counts the boats.\n"})
		if err := os.Symlink(filepath.Join(outside, "far.md"), filepath.Join(src, "far.md")); err != nil {
			t.Fatal(err)
		}
		opt := testOptions(nil, src)
		if follow {
			opt.Walk.FollowSymlinks = true
			opt.Remember = map[string]string{"follow-symlinks": "true"}
		} else {
			// Indexed as a plain file, then replaced by a link out.
			os.Remove(filepath.Join(src, "far.md"))
			writeFiles(t, src, map[string]string{"far.md": "# Far\n\nThe lighthouse keeper logs every passing ship.\n"})
		}
		build(t, dir, opt)
		if !follow {
			os.Remove(filepath.Join(src, "far.md"))
			os.Symlink(filepath.Join(outside, "far.md"), filepath.Join(src, "far.md"))
		}
		ix, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		p, err := ix.ReadPassage(context.Background(), "far.md", 0, 0, 0)
		ix.Close()
		switch {
		case follow && (err != nil || !strings.Contains(p.Text, "lighthouse keeper") || !p.FromChunks):
			t.Errorf("follow-symlinks: %+v, %v; want the stored text", p, err)
		case !follow && !errors.Is(err, index.ErrNotIndexed):
			t.Errorf("without follow-symlinks: %+v, %v; want ErrNotIndexed", p, err)
		}
	}
}
