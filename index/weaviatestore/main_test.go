package weaviatestore

import (
	"os"
	"testing"
	"time"
)

// TestMain shortens the pause before a lease is read back: every build
// of every test would wait it out, and the tests of two contenders
// (testWatchRace, testWriteRace, testRemoveRace) do not need it: they
// hold the first contender's pause until the other has written
// (holdPause).
func TestMain(m *testing.M) {
	leaseSettle = 50 * time.Millisecond
	os.Exit(m.Run())
}
