package weaviatestore

import (
	"context"
	"errors"

	"github.com/lore-cli/lore/index"
)

// Live sync on the cluster: the watch lease and Freshness in the meta
// object, and the documents whose chunks lack vectors.
// Not there yet: the lease (and Freshness) are to live in the index's
// meta object, beside the writer's lease; until then Watch refuses with
// the way round, and Freshness says nobody watches.

var errNoWatch = errors.New("watching an index on Weaviate is not supported yet: refresh it with `lore index` (from a timer or a git hook)")

func (s *Store) Freshness(context.Context, string) (index.Freshness, error) {
	return index.Freshness{State: index.WatchStopped}, nil
}

func (s *Store) Watch(context.Context, string) (index.WatchLease, error) {
	return nil, errNoWatch
}

func (w *Writer) PendingVectors(context.Context, int64) (map[string]bool, error) {
	return map[string]bool{}, nil
}
