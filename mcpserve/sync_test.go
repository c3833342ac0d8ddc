package mcpserve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/wire"
)

// receive is the next value on ch; a test fails rather than hangs when
// the notification never comes.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// TestIndexStatusSync: index_status says whether the index is kept in
// step with its files and by whom, read from the watcher's files.
func TestIndexStatusSync(t *testing.T) {
	f := newFixture(t, Options{})
	var out wire.IndexStatus
	_, text := f.call("index_status", nil, &out)
	if out.Sync == nil || out.Sync.Watching || out.Sync.State != index.WatchStopped || !strings.Contains(text, "not kept in step with its files") {
		t.Errorf("not watched: %+v\n%s", out.Sync, text)
	}
	lease, err := local.Store{Parent: f.cfg.IndexesDir()}.Watch(context.Background(), f.cfg.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close()
	lease.Record(context.Background(), index.Freshness{Watcher: "box pid 77", State: index.WatchIndexing, Pending: 12})
	out = wire.IndexStatus{}
	_, text = f.call("index_status", map[string]any{"index": "default"}, &out)
	if out.Sync == nil || !out.Sync.Watching || out.Sync.Pending != 12 ||
		!strings.Contains(text, "kept in step with its files by box pid 77, 12 changed files waiting to be indexed") {
		t.Errorf("watched: %+v\n%s", out.Sync, text)
	}
}

// TestSyncNotifications: documents that come, change and go under the
// engine reach a go-sdk client as list_changed, and as updated for the
// one document it subscribed to (and only that one). The client speaks
// the protocol of resources/subscribe (2025-11-25); for the newer one,
// see TestSyncNotificationsListen.
func TestSyncNotifications(t *testing.T) {
	f := newFixtureSpeaking(t, Options{}, "2025-11-25")
	ctx := context.Background()
	caps := f.cs.InitializeResult().Capabilities.Resources
	if caps == nil || !caps.Subscribe || !caps.ListChanged {
		t.Fatalf("resources capability %+v: want subscribe and listChanged", caps)
	}
	const subscribed = "lore://default/timeouts.md"
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: subscribed}); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "https://example.com/x"}); err == nil || !strings.Contains(err.Error(), "lore://INDEX/PATH") {
		t.Errorf("subscribe to a URI lore does not serve: %v", err)
	}
	doc := func(p string) []index.File { return []index.File{{Source: f.docs, Path: p}} }

	f.sync.publish(app.SyncEvent{Index: "default", Changed: doc("widgets.md")})
	receive(t, f.listChanged, "list_changed for a new document")
	f.sync.publish(app.SyncEvent{Index: "default", Changed: doc("timeouts.md")})
	if got := receive(t, f.updated, "updated for the subscribed document"); got != subscribed {
		t.Errorf("updated %s, want only %s (widgets.md was not subscribed)", got, subscribed)
	}
	receive(t, f.listChanged, "list_changed")

	f.sync.publish(app.SyncEvent{Index: "default", Removed: doc("timeouts.md")})
	receive(t, f.listChanged, "list_changed for a removed document")
	if got := receive(t, f.updated, "updated for the removed document"); got != subscribed {
		t.Errorf("updated %s, want %s", got, subscribed)
	}

	// Another process changed the index: which documents, nobody knows.
	f.sync.publish(app.SyncEvent{Index: "default"})
	receive(t, f.listChanged, "list_changed when the changes are unknown")

	if err := f.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: subscribed}); err != nil {
		t.Fatal(err)
	}
	f.sync.publish(app.SyncEvent{Index: "default", Changed: doc("timeouts.md")})
	receive(t, f.listChanged, "list_changed")
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "lore://default/widgets.md"}); err != nil {
		t.Fatal(err)
	}
	f.sync.publish(app.SyncEvent{Index: "default", Changed: append(doc("timeouts.md"), doc("widgets.md")...)})
	if got := receive(t, f.updated, "updated"); got != "lore://default/widgets.md" {
		t.Errorf("updated %s after unsubscribing from it", got)
	}
}

// TestSyncNotificationsListen: a client of the 2026-07-28 protocol, which
// subscribes through subscriptions/listen, hears of the same changes.
// (Only one subscription: in go-sdk v1.8.0 the end of any listen stream
// of a session, an Unsubscribe too, ends its list_changed subscription.)
func TestSyncNotificationsListen(t *testing.T) {
	f := newFixture(t, Options{})
	if v := f.cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("protocol %s: want 2026-07-28 or later", v)
	}
	const subscribed = "lore://default/timeouts.md"
	if err := f.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: subscribed}); err != nil {
		t.Fatal(err)
	}
	doc := func(p string) []index.File { return []index.File{{Source: f.docs, Path: p}} }
	// The client opens its listen stream on its own after connecting, and
	// a change announced before the server has that stream reaches no
	// one (seen under load): announce until the first list_changed comes.
	heard := false
	for range 20 {
		f.sync.publish(app.SyncEvent{Index: "default", Changed: doc("widgets.md")})
		select {
		case <-f.listChanged:
			heard = true
		case <-time.After(500 * time.Millisecond):
		}
		if heard {
			break
		}
	}
	if !heard {
		t.Fatal("no list_changed")
	}
	f.sync.publish(app.SyncEvent{Index: "default", Changed: doc("timeouts.md")})
	if got := receive(t, f.updated, "updated for the subscribed document"); got != subscribed {
		t.Errorf("updated %s, want only %s", got, subscribed)
	}
}
