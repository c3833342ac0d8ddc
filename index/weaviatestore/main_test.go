package weaviatestore

import (
	"os"
	"testing"
	"time"
)

// TestMain shortens the pause before a lease is read back: every build
// of every test would wait it out, and only the tests of two contenders
// (testWatchRace, testWriteRace), which widen it, need it long.
func TestMain(m *testing.M) {
	leaseSettle = 50 * time.Millisecond
	os.Exit(m.Run())
}
