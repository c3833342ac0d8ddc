package weaviatestore

import (
	"context"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// TestQueryMaximumResultsTooLow: a node whose QUERY_MAXIMUM_RESULTS is
// below the 2048 chunks lore's keyword ranking samples refuses that read,
// and keyword results come in Weaviate's own order. The first search says
// so, naming the setting and its value, and `lore doctor` (Health) does
// too; the search used to fall back without a word. The index is built
// first: a build lists up to 10000 objects at once, which the low limit
// refuses loudly.
func TestQueryMaximumResultsTooLow(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	ctx := context.Background()
	s := newStore(t, c, "Limit")
	fixture(t, s)
	c.Kill(0)
	t.Setenv("QUERY_MAXIMUM_RESULTS", "1000")
	c.Start(0)
	c.WaitHealthy(1)
	r := open(t, s, "docs")
	res := search(t, r, "OLLAMA_HOST", nil, index.SearchOptions{Limit: 2})
	if len(res.Hits) == 0 || res.Hits[0].Path != "guide/setup.md" {
		t.Errorf("keyword results in the cluster's order: %v", texts(res.Hits))
	}
	if !strings.Contains(res.Notice, "QUERY_MAXIMUM_RESULTS=10000") || !strings.Contains(res.Notice, "is 1000,") || strings.Contains(res.Notice, "\n") {
		t.Errorf("the first search's notice: %q; want one line naming QUERY_MAXIMUM_RESULTS=10000 and the node's 1000", res.Notice)
	}
	if again := search(t, r, "OLLAMA_HOST", nil, index.SearchOptions{Limit: 2}); again.Notice != "" {
		t.Errorf("the second search said it again: %q", again.Notice)
	}
	h, err := s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Settings) != 1 || !strings.Contains(h.Settings[0], "QUERY_MAXIMUM_RESULTS=10000") {
		t.Errorf("Health.Settings: %q; want QUERY_MAXIMUM_RESULTS=10000", h.Settings)
	}
	// A refresh that replaces a file lists its old chunks: refused, and
	// the error names the setting, not only lore doctor.
	w := begin(t, s, "docs", false)
	defer w.Close()
	err = w.WriteFiles(ctx, []index.FileUpdate{fileUpdate(1, "guide/setup.md", chGarden)})
	if err == nil || !strings.Contains(err.Error(), "QUERY_MAXIMUM_RESULTS=10000") {
		t.Errorf("a refresh under the low limit: %v; want an error naming QUERY_MAXIMUM_RESULTS=10000", err)
	}
}
