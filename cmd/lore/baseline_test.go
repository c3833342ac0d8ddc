package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index"
)

func TestBaselineWindows(t *testing.T) {
	dir := t.TempDir()
	var long []string
	for i := 1; i <= 50; i++ {
		long = append(long, fmt.Sprintf("filler line %d", i))
	}
	long[29] = "the quokka lives on Rottnest Island" // line 30: the second window, 25-48
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Join(long, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("an island of quokka and quokka\nfiller\n"), 0o644)
	bx := newBaseline([]index.File{{Source: dir, Path: "long.txt"}, {Source: dir, Path: "other.txt"}, {Source: dir, Path: "gone.txt"}})
	if len(bx.windows) != 4 { // 24 + 24 + 2 lines of long.txt, one window of other.txt
		t.Fatalf("windows %+v", bx.windows)
	}
	got := bx.search("Where does the QUOKKA live? Rottnest", 5)
	if len(got) != 2 || got[0] != (baselineWindowRef{"long.txt", 25, 48}) || got[1].path != "other.txt" {
		t.Fatalf("search: %+v", got)
	}
	if got := bx.search("nothing matches", 5); len(got) != 0 {
		t.Fatalf("no match: %+v", got)
	}
}
