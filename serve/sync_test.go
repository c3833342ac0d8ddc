package serve

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/wire"
)

// TestLoreExtensionSync: the lore object of an answer (chat completions,
// whole and streamed, and the Responses API) says how fresh the index it
// answered from was, as lore ask --json does.
func TestLoreExtensionSync(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	type ext struct {
		Sync *wire.Sync `json:"sync"`
	}
	ask := func() (whole, streamed, resp *wire.Sync) {
		c := f.client()
		res, err := c.Chat.Completions.New(context.Background(), question("How do I cancel a request after a timeout?"))
		if err != nil {
			t.Fatal(err)
		}
		var e ext
		if err := json.Unmarshal([]byte(res.JSON.ExtraFields["lore"].Raw()), &e); err != nil {
			t.Fatal(err)
		}
		whole = e.Sync
		stream := c.Chat.Completions.NewStreaming(context.Background(), question("How do I cancel a request after a timeout?"))
		for stream.Next() {
			if raw := stream.Current().JSON.ExtraFields["lore"].Raw(); raw != "" && raw != "null" {
				var e ext
				if err := json.Unmarshal([]byte(raw), &e); err != nil {
					t.Fatal(err)
				}
				streamed = e.Sync
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		r, err := c.Responses.New(context.Background(), responseInput("How do I cancel a request after a timeout?"))
		if err != nil {
			t.Fatal(err)
		}
		var re ext
		if err := json.Unmarshal([]byte(r.JSON.ExtraFields["lore"].Raw()), &re); err != nil {
			t.Fatal(err)
		}
		return whole, streamed, re.Sync
	}
	for i, s := range func() []*wire.Sync { a, b, c := ask(); return []*wire.Sync{a, b, c} }() {
		if s == nil || s.Watching || s.State != index.WatchStopped {
			t.Errorf("not watched, answer %d: sync %+v", i, s)
		}
	}

	lease, err := local.Store{Parent: f.cfg.IndexesDir()}.Watch(context.Background(), f.cfg.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease.Record(context.Background(), index.Freshness{Watcher: "box pid 77", State: index.WatchIndexing, SyncedAt: at, Pending: 12})
	for i, s := range func() []*wire.Sync { a, b, c := ask(); return []*wire.Sync{a, b, c} }() {
		if s == nil || !s.Watching || s.State != index.WatchIndexing || s.Pending != 12 || s.Watcher != "box pid 77" || s.SyncedAt == nil || !s.SyncedAt.Equal(at) {
			t.Errorf("watched, answer %d: sync %+v", i, s)
		}
	}
}
