package index

import (
	"reflect"
	"testing"
)

// Both stores' hybrid search fuse through FuseRRF: a chunk both rankings
// hold beats one either holds alone, chunks that share a vector share its
// rank, equal scores come back by id, and limit cuts.
func TestFuseRRF(t *testing.T) {
	got := FuseRRF([]int64{7, 3, 9}, []float64{1, 0.5, 0.25}, [][]int64{{3}, {5, 4}, {7}}, 60, 4)
	ids := make([]int64, len(got))
	for i, c := range got {
		ids[i] = c.ID
	}
	// 3: 1/62+1/61; 7: 1/61+1/63; 4 and 5 tie on 1/62 (by id), 9 (1/63) cut.
	if want := []int64{3, 7, 4, 5}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if c := got[0]; c.Lexical != 2 || c.Vector != 1 || c.Coverage != 0.5 {
		t.Errorf("chunk 3: %+v", c)
	}
	if got[2].Vector != 2 || got[3].Vector != 2 || got[2].Lexical != 0 {
		t.Errorf("chunks sharing a vector: %+v %+v", got[2], got[3])
	}
}
