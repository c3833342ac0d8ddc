package storetest

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lore-cli/lore/index"
)

// What an index remembers of its builds (issue 34, items 2 and 6): the
// sources, the embedder and the settings a build was told, which the next
// plain build starts from; a rebuild interrupted half-way changes none of
// them.

// rememberCases run after the others (see cases).
var rememberCases = []testCase{
	{"remembered settings", testRememberedSettings},
	{"interrupted rebuild keeps what the index says", testInterruptedRebuildRemembers},
}

func (e *env) remembered() index.Remembered {
	e.t.Helper()
	r, err := e.s.Remembered(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Remembered: %v", err)
	}
	return r
}

// A build's sources, embedder and settings are remembered, and the
// settings of the latest build replace the earlier ones.
func testRememberedSettings(t *testing.T, e *env) {
	src := folder(t, corpus())
	opt := e.opts(nil, src)
	opt.Remember = map[string]string{"max-file-size": "10485760", "follow-symlinks": "true"}
	e.build(opt)
	r := e.remembered()
	abs, _ := filepath.Abs(src)
	if !slices.Equal(r.Sources, []string{abs}) || r.Embedder != "none" || !maps.Equal(r.Settings, opt.Remember) || !r.Walk().FollowSymlinks {
		t.Fatalf("remembered after a keyword-only build told two settings: %+v", r)
	}
	opt = e.opts(nil)
	opt.Remember = map[string]string{"max-file-size": "2048"}
	e.build(opt)
	if r := e.remembered(); !maps.Equal(r.Settings, opt.Remember) || !slices.Equal(r.Sources, []string{abs}) {
		t.Errorf("remembered after a refresh told other settings: %+v", r)
	}
}

// A rebuild with another embedder, cut off after its first vectors,
// leaves the index saying what it was built with, and the index still
// answers as it did.
func testInterruptedRebuildRemembers(t *testing.T, e *env) {
	src := folder(t, corpus())
	opt := e.opts(nil, src)
	opt.Remember = map[string]string{"max-file-size": "4096"}
	e.build(opt)
	before := e.remembered()

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	emb := newCounter()
	emb.stopAfter, emb.cancel = 1, cancel
	opt = e.opts(emb)
	opt.Rebuild = true
	opt.Remember = map[string]string{"max-file-size": "1"}
	if _, err := e.s.Build(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted rebuild: %v", err)
	}
	after := e.remembered()
	if after.Embedder != "none" || !maps.Equal(after.Settings, before.Settings) || !slices.Equal(after.Sources, before.Sources) {
		t.Errorf("remembered after an interrupted rebuild: %+v, want %+v", after, before)
	}
	st, err := e.s.Status(e.ctx, name)
	if err != nil || st.Embedder != "none" || st.Documents != len(corpus()) {
		t.Errorf("status after an interrupted rebuild: embedder %q, %d documents (%v)", st.Embedder, st.Documents, err)
	}
}
