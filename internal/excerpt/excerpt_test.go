package excerpt

import (
	"slices"
	"testing"
)

func TestLines(t *testing.T) {
	got := Lines("\n\tfirst line\n\n second\nthird is much longer than the width\nfourth", 3, 12)
	want := []string{"    first l…", " second", "third is mu…"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := Lines("日本語のテキストです", 1, 10); got[0] != "日本語の…" { // 8 cells and the ellipsis
		t.Fatalf("wide runes cut by cells: %q", got)
	}
}
