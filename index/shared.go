package index

import (
	"crypto/sha256"
	"encoding/hex"
)

// What both stores do alike lives here, once: a store calls these rather
// than writing its own, so that the two cannot drift apart (a Weaviate
// index that hashed files differently would call every file changed).

// ContentHash is what the index records of a file's bytes.
func ContentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// WithDefaults is o with every unset knob at DefaultSearchOptions.
func (o SearchOptions) WithDefaults() SearchOptions {
	def := DefaultSearchOptions()
	if o.Limit <= 0 {
		o.Limit = def.Limit
	}
	if o.Depth <= 0 {
		o.Depth = def.Depth
	}
	if o.RRFK <= 0 {
		o.RRFK = def.RRFK
	}
	return o
}
