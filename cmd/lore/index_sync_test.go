package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/wire"
)

// TestIndexStatusSync: lore index status says, from another process's
// files, whether the index is watched and how fresh it is, in a line and
// as the sync object; the watcher's name is sanitised on the terminal.
func TestIndexStatusSync(t *testing.T) {
	e := newEnv(t)
	if r := e.run(false, "index", "--embedder", "none", "-q", sampleDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := e.run(false, "index", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "sync       not watched (run lore index --watch, or keep lore, lore serve or lore mcp open)\n") {
		t.Errorf("not watched: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var st wire.IndexStatus
	r = e.run(false, "index", "status", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Sync == nil || st.Sync.Watching || st.Sync.State != index.WatchStopped {
		t.Errorf("not watched, --json: %v %+v\n%s", err, st.Sync, r.stdout)
	}

	// The watcher: this test, holding the lease as lore index --watch does.
	store := local.Store{Parent: filepath.Join(e.vars["XDG_DATA_HOME"], "lore", "indexes")}
	lease, err := store.Watch(context.Background(), "default")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close()
	synced := time.Now().Add(-3*time.Minute - 5*time.Second) // "3m" for a minute: no race with the clock
	lease.Record(context.Background(), index.Freshness{Watcher: "box pid 77\x1b[31m", State: index.WatchWatching, Since: synced, SyncedAt: synced})
	r = e.run(false, "index", "status")
	if !strings.Contains(r.stdout, "sync       watched by box pid 77, synced 3m ago\n") {
		t.Errorf("watched:\n%s%s", r.stdout, r.stderr)
	}
	lease.Record(context.Background(), index.Freshness{Watcher: "box pid 77", State: index.WatchIndexing, Pending: 12, VectorsPending: 40,
		Error: "embed: Ollama is not running"})
	r = e.run(false, "index", "status")
	if !strings.Contains(r.stdout, "sync       watched by box pid 77, indexing 12 files; 40 chunks wait for vectors; last batch failed: embed: Ollama is not running\n") {
		t.Errorf("indexing:\n%s%s", r.stdout, r.stderr)
	}
	r = e.run(false, "index", "status", "--json")
	st = wire.IndexStatus{}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Sync == nil || !st.Sync.Watching || st.Sync.State != index.WatchIndexing ||
		st.Sync.Pending != 12 || st.Sync.Watcher != "box pid 77" || st.Sync.SyncedAt != nil {
		t.Errorf("watched, --json: %v %+v\n%s", err, st.Sync, r.stdout)
	}
}

// TestAskJSONSync: lore ask --json says how fresh the index it answered
// from was: not watched, then watched by another process.
func TestAskJSONSync(t *testing.T) {
	e, _ := askEnv(t)
	r := e.run(false, "ask", "--json", "--index", "go", "how do I cancel a context?")
	if out := askJSONOut(t, r.stdout); out.Sync == nil || out.Sync.Watching || out.Sync.State != index.WatchStopped {
		t.Errorf("not watched: exit %d %+v\n%s", r.code, out.Sync, r.stderr)
	}
	store := local.Store{Parent: filepath.Join(e.vars["XDG_DATA_HOME"], "lore", "indexes")}
	lease, err := store.Watch(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease.Record(context.Background(), index.Freshness{Watcher: "box pid 77", State: index.WatchVectorsPending, SyncedAt: at, VectorsPending: 9})
	r = e.run(false, "ask", "--json", "--index", "go", "how do I cancel a context?")
	out := askJSONOut(t, r.stdout)
	if out.Sync == nil || !out.Sync.Watching || out.Sync.State != index.WatchVectorsPending || out.Sync.VectorsPending != 9 ||
		out.Sync.SyncedAt == nil || !out.Sync.SyncedAt.Equal(at) {
		t.Errorf("watched: exit %d %+v\n%s", r.code, out.Sync, r.stderr)
	}
}
