package local

import (
	"context"
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/storetest"
	"github.com/lore-cli/lore/internal/dbtest"
)

// The local store passes the store seam's conformance suite.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) (index.Store, index.Target) {
			s := Store{Parent: t.TempDir()}
			return s, storeTarget{s}
		},
		// The first page of index.db gone: "not a database", which Open
		// finds at once.
		Damage: func(t *testing.T, s index.Store, name string) {
			dir := s.(Store).Dir(name)
			dbtest.SmashPages(t, genPath(t, dir, dbFile), []int64{1})
		},
	})
}

// storeTarget is the local store's write side by index name, as Build
// uses it (one localTarget per index folder).
type storeTarget struct{ s Store }

func (t storeTarget) BeginWrite(ctx context.Context, req index.WriteRequest) (index.Writer, error) {
	return localTarget{dir: t.s.Dir(req.Name)}.BeginWrite(ctx, req)
}
