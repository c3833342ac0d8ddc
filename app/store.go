package app

import (
	"fmt"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// storeTimeout bounds the store calls made without a request's context
// (listing index names for the chat's completion).
const storeTimeout = 5 * time.Second

// OpenStore opens the store cfg names: the local folder of indexes, or a
// Weaviate cluster.
func OpenStore(cfg config.Config) (index.Store, error) {
	switch cfg.Store {
	case "", "local":
		return index.Local{Parent: cfg.IndexesDir()}, nil
	}
	return nil, fmt.Errorf("store %q: not available in this build", cfg.Store)
}
