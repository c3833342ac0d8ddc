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

func TestLinesAndFirstLineAreSafe(t *testing.T) {
	if got := Lines("a\x1b]52;c;eA==\ab\r\n\x1b[2Jc", 2, 20); !slices.Equal(got, []string{"ab", "c"}) {
		t.Errorf("Lines: %q", got)
	}
	if got := FirstLine("  server said \x1b]0;title\a\u009b1mno\nmore"); got != "server said no" {
		t.Errorf("FirstLine: %q", got)
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
