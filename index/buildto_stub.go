package index

import (
	"context"
	"errors"
)

// BuildTo is a placeholder for the shared incremental builder another
// branch adds; drop this file when merging that one.
func BuildTo(ctx context.Context, t Target, opt BuildOptions) (Summary, error) {
	return Summary{}, errors.New("not yet")
}
