package excerpt

import (
	"slices"
	"testing"
	"unicode/utf8"
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

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.md":          "plain/path.md",
		"évian 日本.md":            "évian 日本.md",
		"evil\x1b[31mred.md":     `evil\x1b[31mred.md`,
		"two\nlines.md":          `two\nlines.md`,
		"bell\a\x9b and del\x7f": `bell\x07\x9b and del\x7f`,
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutNeverSplitsACharacter(t *testing.T) {
	s := "aé€😀" // 1, 2, 3 and 4 bytes
	for n := 0; n <= len(s)+2; n++ {
		got := s[:Cut(s, n)]
		if !utf8.ValidString(got) || len(got) > n || (n < len(s) && len(got) < n-3) {
			t.Errorf("Cut(%d) = %q", n, got)
		}
	}
	if Cut(s, 3) != 3 || Cut(s, 4) != 3 || Cut(s, 100) != len(s) {
		t.Errorf("%d %d %d", Cut(s, 3), Cut(s, 4), Cut(s, 100))
	}
}
