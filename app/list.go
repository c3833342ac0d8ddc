package app

import (
	"context"

	"github.com/lore-cli/lore/index"
)

// ListIndexes describes every index in the indexes folder, built or not,
// as `lore index list` shows them.
func (e *Engine) ListIndexes(ctx context.Context) ([]index.Info, error) {
	return index.List(ctx, e.Config().IndexesDir())
}
