package app

import (
	"fmt"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/index/weaviatestore"
)

// storeTimeout bounds the store calls made without a request's context
// (listing index names for the chat's completion).
const storeTimeout = 5 * time.Second

// OpenStore opens the store cfg names: the local folder of indexes, or a
// Weaviate cluster.
func OpenStore(cfg config.Config) (index.Store, error) {
	switch cfg.Store {
	case "", "local":
		return local.Store{Parent: cfg.IndexesDir()}, nil
	case "weaviate":
		eps, err := cfg.WeaviateURLs()
		if err != nil {
			return nil, err
		}
		write, read, err := cfg.WeaviateLevels()
		if err != nil {
			return nil, err
		}
		return weaviatestore.New(weaviatestore.Config{
			Endpoints:        eps,
			GRPCEndpoints:    cfg.WeaviateGRPC(),
			APIKey:           cfg.WeaviateAPIKey,
			CollectionPrefix: cfg.WeaviateCollectionPrefix,
			Replication:      cfg.WeaviateReplication,
			WriteConsistency: write,
			ReadConsistency:  read,
		})
	}
	return nil, fmt.Errorf("store: %q is not local or weaviate", cfg.Store)
}

// What a store on servers says of them (store: weaviate), for lore
// doctor: front ends reach stores only through app.
type (
	ClusterHealth    = weaviatestore.Health
	EndpointHealth   = weaviatestore.EndpointHealth
	NodeHealth       = weaviatestore.NodeHealth
	CollectionHealth = weaviatestore.CollectionHealth
)
