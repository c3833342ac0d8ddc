package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheLogStaysBounded: two writers (two lore processes) write ten times
// the bound; the log and its one older file each stay within it, and the
// newest lines are in the log.
func TestTheLogStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lore.log")
	const max = 10 << 10
	a, err := Open(path, max)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, max)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	line := strings.Repeat("x", 90)
	for i := range 2 * 10 * max / 100 {
		w := a
		if i%3 == 0 {
			w = b
		}
		fmt.Fprintf(w, "%08d %s\n", i, line)
	}
	last := fmt.Sprintf("%08d ", 2*10*max/100-1)
	var total int64
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > max {
			t.Errorf("%s: %d bytes, want at most %d", filepath.Base(p), st.Size(), max)
		}
		total += st.Size()
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), last) {
		t.Errorf("the last line is not in the log")
	}
	if total < max {
		t.Errorf("only %d bytes kept: the rotation threw away more than one file's worth", total)
	}
}
