package units

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 950: "950", 1000: "1,000", 21800: "21,800", 1048576: "1,048,576", -94000: "-94,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
