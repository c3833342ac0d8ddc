// Package wire holds the JSON shapes that lore prints and serves: search
// results, answers with their sources, index info and errors. `lore ...
// --json`, `lore serve` and `lore mcp` all encode these types, so that the
// three cannot drift apart; the field names are a public interface that
// scripts read, and the golden files in testdata pin them byte for byte.
//
// wire only converts (from app and agent values) and never encodes for a
// particular transport: the CLI indents and makes the text safe for a
// terminal, a server writes it as it likes.
package wire

import "time"

// ms is a duration in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ptr is a pointer to a copy of v: a JSON field that is null when absent.
func ptr[T any](v T) *T { return &v }
