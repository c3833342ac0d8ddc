package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

// A rebuild with another embedder, interrupted, leaves the index saying
// what it was built with; the refusal that follows names a way out that
// works, and a rebuild with the index's own embedder starts over rather
// than resume the other one's work (issue 34, item 2).
func TestInterruptedRebuildKeepsTheIndexEmbedder(t *testing.T) {
	src, dir := smallDocs(t, 40), t.TempDir()
	build(t, dir, testOptions(nil, src)) // keyword-only

	emb := newFakeEmbedder("nomic-embed-text", 8)
	ctx, cancel := context.WithCancel(context.Background())
	opt := testOptions(emb)
	opt.Rebuild = true
	opt.Progress = func(p index.Progress) {
		if p.ChunksEmbedded > 0 {
			cancel()
		}
	}
	if _, err := Build(ctx, dir, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted rebuild: %v", err)
	}
	if r, err := ReadRemembered(dir); err != nil || r.Embedder != "none" {
		t.Errorf("sources.json after the interrupted rebuild: %+v, %v (want embedder none)", r, err)
	}
	if st := statusOf(t, dir); st.Embedder != "none" || st.Documents != 40 {
		t.Errorf("status after the interrupted rebuild: embedder %q, %d documents", st.Embedder, st.Documents)
	}

	// A refresh with the index's embedder meets the rebuild to resume:
	// refused, with advice that leads out.
	_, err := Build(context.Background(), dir, testOptions(nil))
	if err == nil || !strings.Contains(err.Error(), "--rebuild --embedder none") {
		t.Fatalf("refresh during a rebuild with another embedder: %v", err)
	}
	// Following it: the rebuild starts over keyword-only, and says so.
	var notices []string
	opt = testOptions(nil)
	opt.Rebuild = true
	opt.Notice = func(m string) { notices = append(notices, m) }
	sum := build(t, dir, opt)
	if sum.Embedder != "none" || sum.TotalFiles != 40 || !strings.Contains(strings.Join(notices, "\n"), "starting it over") {
		t.Fatalf("rebuild over the interrupted one: %+v %q", sum, notices)
	}
	if st := statusOf(t, dir); st.Embedder != "none" || st.Vectors != 0 {
		t.Errorf("after the rebuild: embedder %q, %d vectors", st.Embedder, st.Vectors)
	}
	if _, err := Build(context.Background(), dir, testOptions(nil)); err != nil {
		t.Errorf("refresh after the rebuild: %v", err)
	}
}

// A rebuild whose embedder does not answer leaves nothing to resume: the
// next refresh with the index's own embedder works.
func TestRebuildWithADeadEmbedderLeavesNothing(t *testing.T) {
	src, dir := smallDocs(t, 5), t.TempDir()
	build(t, dir, testOptions(nil, src))
	emb := newFakeEmbedder("nomic-embed-text", 8)
	emb.err = errors.New("could not connect to Ollama")
	opt := testOptions(emb)
	opt.Rebuild = true
	if _, err := Build(context.Background(), dir, opt); err == nil {
		t.Fatal("a rebuild with a dead embedder succeeded")
	}
	if _, err := Build(context.Background(), dir, testOptions(nil)); err != nil {
		t.Fatalf("refresh after a failed rebuild: %v", err)
	}
}
