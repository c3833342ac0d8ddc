package indextest_test

import (
	"testing"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/indextest"
	"github.com/lore-cli/lore/index/storetest"
)

// The memory store passes the whole conformance suite: it is what lets
// tests above the seam stand on it.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) (index.Store, index.Target) {
			s := indextest.New()
			return s, s
		},
		Damage: func(t *testing.T, s index.Store, name string) {
			s.(*indextest.Store).Damage(name, "a test damaged it")
		},
	})
}
