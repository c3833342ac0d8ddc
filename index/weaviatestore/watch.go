package weaviatestore

import (
	"context"
	"errors"

	"github.com/lore-cli/lore/index"
)

// Live sync on the cluster: the watch lease and Freshness in the meta
// object, and the documents whose chunks lack vectors.
// (In progress: the lease is refused until it is kept in the meta object.)

var errNoWatch = errors.New("watching a Weaviate index is not supported yet")

func (s *Store) Freshness(context.Context, string) (index.Freshness, error) {
	return index.Freshness{State: index.WatchStopped}, nil
}

func (s *Store) Watch(context.Context, string) (index.WatchLease, error) {
	return nil, errNoWatch
}

func (w *Writer) PendingVectors(context.Context, int64) (map[string]bool, error) {
	return map[string]bool{}, nil
}
