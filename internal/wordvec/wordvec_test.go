package wordvec

import (
	"testing"

	"github.com/viterin/vek/vek32"
)

func TestTextsThatShareWordsAreNear(t *testing.T) {
	q := Vector("how do I configure the scrape interval", 256)
	near := Vector("The scrape interval is configured per job with scrape_interval.", 256)
	far := Vector("PromQL functions such as rate and histogram_quantile", 256)
	if a, b := vek32.Dot(q, near), vek32.Dot(q, far); a <= b {
		t.Fatalf("similarity to the related text %.3f, to the unrelated one %.3f", a, b)
	}
	if d := vek32.Dot(near, near); d < 0.999 || d > 1.001 {
		t.Fatalf("not a unit vector: |v|² = %f", d)
	}
	if v := Vector("", 8); v[0] != 1 {
		t.Fatalf("empty text: %v", v)
	}
}
