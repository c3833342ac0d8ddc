package weaviatestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// testKeywordRanking: the cluster's candidates are ordered by lore's own
// scorer, as the local store orders the same chunks. Weaviate's BM25
// alone put the shorter chunk first in both cases: it knows neither the
// camelCase parts of an identifier nor how close together a chunk holds
// the question's words.
func testKeywordRanking(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Rank")
	w := begin(t, s, "rank", false)
	src, err := w.AddSource(context.Background(), "/nowhere/rank")
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(heading, text string) ingest.Chunk {
		return ingest.Chunk{Start: 1, End: 5, Heading: heading, Kind: "prose", Text: text}
	}
	files := []index.FileUpdate{
		fileUpdate(src.ID, "pool/parts.md", chunk("Pools", "The pool keeps maxIdleConns connections open.")),
		fileUpdate(src.ID, "pool/plain.md", chunk("Pools", "The pool keeps connections open.")),
		fileUpdate(src.ID, "disk/together.md", chunk("Storage", "Set disk retention with a flag.\nalpha beta gamma")),
		fileUpdate(src.ID, "disk/apart.md", chunk("Storage", "Set disk with a flag.\nalpha\nbeta\n\nretention")),
	}
	for i, f := range []string{"garden", "tomatoes", "weather", "music", "coffee", "trains"} {
		files = append(files, fileUpdate(src.ID, "other/"+f+".md", chunk("Other", "Notes about "+f+" and nothing else, part "+string(rune('a'+i))+".")))
	}
	ctx := context.Background()
	if err := w.SetMeta(ctx, "schema_version", "3", "chunker", "test"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Publish(ctx, index.PublishOptions{}); err != nil { // keyword only: no vectors
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := open(t, s, "rank")
	for _, q := range []struct{ query, want, why string }{
		{"idle connections in the pool", "pool/parts.md", "maxIdleConns is found by its part idle"},
		{"disk retention", "disk/together.md", "the words together beat the words apart"},
	} {
		res := search(t, r, q.query, nil, index.SearchOptions{})
		if len(res.Hits) < 2 || res.Hits[0].Path != q.want {
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Path)
			}
			t.Errorf("%q: %v, want %s first (%s)", q.query, got, q.want, q.why)
		}
	}
}

// stallProxy is a node's HTTP API with the requests whose body holds
// stall held until release is closed: a node that hangs on one query.
// stalled gets a value when the first is held.
func stallProxy(t *testing.T, endpoint string, stall func(body string) bool) (url string, stalled chan struct{}, release chan struct{}) {
	target, err := neturl.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	stalled, release = make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if stall(string(body)) {
			select {
			case stalled <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-req.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return srv.URL, stalled, release
}

// testStatsNotBlocked: a search whose node hangs while it reads the
// index's average lengths does not hold up another search beyond that
// one's own deadline. The cache held its lock across the read: every
// keyword search of the Reader waited for the hung one.
func testStatsNotBlocked(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Stall")
	fixture(t, s)
	url, stalled, release := stallProxy(t, c.Endpoints()[0], func(body string) bool {
		return strings.Contains(body, fmt.Sprintf("limit: %d", sampleSize))
	})
	slow := newStore(t, c, "Stall", func(cfg *Config) {
		cfg.Endpoints, cfg.GRPCEndpoints = []string{url}, c.GRPCEndpoints()[:1]
		cfg.Timeout = 5 * time.Minute // the hang lasts until the test ends it
	})
	r := open(t, slow, "docs")
	first := make(chan error, 1)
	go func() {
		_, err := r.sample(context.Background())
		first <- err
	}()
	select {
	case <-stalled:
	case err := <-first:
		t.Fatalf("the sample read was not held: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a search given up (its client went away)
	second := make(chan error, 1)
	go func() {
		_, err := r.sample(ctx)
		second <- err
	}()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled search: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a deadlock's guard, not a speed bound
		t.Error("a cancelled search still waits for another search's hung read")
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the hung read, once released: %v", err)
	}
}

// testStaleSampleServes: once the sample is stale, a search uses it at
// once while another read of it hangs; every search waited on the new
// read (up to the call timeout, ten seconds) once in ten minutes.
func testStaleSampleServes(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Stale")
	fixture(t, s)
	url, stalled, release := stallProxy(t, c.Endpoints()[0], func(body string) bool {
		return strings.Contains(body, fmt.Sprintf("limit: %d", sampleSize))
	})
	defer close(release)
	slow := newStore(t, c, "Stale", func(cfg *Config) {
		cfg.Endpoints, cfg.GRPCEndpoints = []string{url}, c.GRPCEndpoints()[:1]
		cfg.Timeout = 5 * time.Minute // the hang lasts until the test ends it
	})
	r := open(t, slow, "docs")
	r.rank.mu.Lock()
	r.rank.smp, r.rank.at = sample{n: 7}, time.Now().Add(-2*sampleTTL) // read long ago
	r.rank.mu.Unlock()
	got := make(chan sample, 1)
	go func() {
		smp, _ := r.sample(context.Background())
		got <- smp
	}()
	select {
	case smp := <-got:
		if smp.n != 7 {
			t.Errorf("the stale sample was not used: %+v", smp)
		}
	case <-time.After(30 * time.Second): // a deadlock's guard, not a speed bound
		t.Fatal("a search waits for the new sample while the old one is there")
	}
	select {
	case <-stalled: // and the new one is being read
	case <-time.After(30 * time.Second):
		t.Error("no new sample was read")
	}
}

// testCommonTermsNotCounted: a question holding a word most chunks hold
// is still ranked by lore's scorer when the cluster is slow to count that
// word's chunks (it reads every one: a second a question on the Go
// tree). The count ran past its deadline and the search fell back to
// Weaviate's own order, which puts the shorter chunk first.
func testCommonTermsNotCounted(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Common")
	w := begin(t, s, "common", false)
	ctx := context.Background()
	src, err := w.AddSource(ctx, "/nowhere/common")
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(text string) ingest.Chunk {
		return ingest.Chunk{Start: 1, End: 5, Heading: "Pools", Kind: "prose", Text: text}
	}
	files := []index.FileUpdate{
		fileUpdate(src.ID, "pool/parts.md", chunk("The pool keeps maxIdleConns connections open.")),
		fileUpdate(src.ID, "pool/plain.md", chunk("The pool keeps connections open.")),
	}
	for i := range 2 * sampledDF {
		files = append(files, fileUpdate(src.ID, fmt.Sprintf("other/%03d.md", i), chunk(fmt.Sprintf("A pool of workers, number %d.", i))))
	}
	if err := w.SetMeta(ctx, "schema_version", "3", "chunker", "test"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Publish(ctx, index.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A node slow to count the chunks that say "pool": it holds the
	// count until the search gives it up.
	url, _, _ := stallProxy(t, c.Endpoints()[0], func(body string) bool {
		return strings.Contains(body, "Aggregate") && strings.Contains(body, `[\"terms\"] valueText: \"pool\"`)
	})
	slow := newStore(t, c, "Common", func(cfg *Config) {
		cfg.Endpoints, cfg.GRPCEndpoints = []string{url}, c.GRPCEndpoints()[:1]
	})
	res := search(t, open(t, slow, "common"), "idle connections in the pool", nil, index.SearchOptions{})
	if len(res.Hits) == 0 || res.Hits[0].Path != "pool/parts.md" {
		var got []string
		for _, h := range res.Hits[:min(3, len(res.Hits))] {
			got = append(got, h.Path)
		}
		t.Errorf("%v, want pool/parts.md first (maxIdleConns is found by its part idle)", got)
	}
}
