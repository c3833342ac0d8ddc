package local

import (
	"os"
	"path/filepath"
	"testing"
)

// sources.json stays readable both ways: a file from before settings were
// remembered reads with none, and the settings a build is given are
// written beside the sources (issue 34, item 6).
func TestRememberedSettingsInSourcesJSON(t *testing.T) {
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, sourcesFile), []byte(`{"sources": ["/abs/docs"], "embedder": "nomic-embed-text"}`+"\n"), 0o600)
	r, err := ReadRemembered(old)
	if err != nil || len(r.Sources) != 1 || r.Embedder != "nomic-embed-text" || r.Settings != nil || r.Walk().FollowSymlinks {
		t.Fatalf("old sources.json: %+v, %v", r, err)
	}

	src, dir := smallDocs(t, 2), t.TempDir()
	opt := testOptions(nil, src)
	opt.Remember = map[string]string{"max-file-size": "10485760", "follow-symlinks": "true"}
	build(t, dir, opt)
	r, err = ReadRemembered(dir)
	if err != nil || r.Settings["max-file-size"] != "10485760" || !r.Walk().FollowSymlinks || len(r.Sources) != 1 || r.Embedder != "none" {
		t.Fatalf("sources.json after a build told settings: %+v, %v", r, err)
	}
}
