// Package sqlitex reads SQLite's result codes out of the driver's errors,
// for the packages that keep their data in SQLite (the index, the
// sessions), so that a damaged file is told apart from a busy one the same
// way everywhere.
package sqlitex

import "errors"

// Primary result codes lore acts on.
const (
	Busy      = 5
	Locked    = 6
	NoMem     = 7
	Interrupt = 9
	IOErr     = 10
	Corrupt   = 11 // SQLITE_CORRUPT (and _VTAB, _SEQUENCE, _INDEX)
	NotADB    = 26
)

// Code returns the primary result code err carries, if it is SQLite's.
func Code(err error) (int, bool) {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return 0, false
	}
	return coded.Code() & 0xff, true // extended codes keep the primary in the low byte
}

// Damaged reports SQLite's CORRUPT and NOTADB: the file is not a sound
// database.
func Damaged(err error) bool {
	c, ok := Code(err)
	return ok && (c == Corrupt || c == NotADB)
}
