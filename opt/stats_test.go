package opt

import (
	"maps"
	"testing"

	"github.com/storel/storel/storage"
)

// TestSortedWithinStats: ArrayStats.SortedWithin records, for each array
// that never decreases and repeats values, the arrays of its length that
// never decrease within its runs, with the runs of equal pairs.
func TestSortedWithinStats(t *testing.T) {
	st := storage.Store{
		"G": storage.IntArray([]int64{0, 0, 1, 3, 3, 3}),
		"M": storage.IntArray([]int64{2, 2, 0, 1, 1, 4}), // (0,2) (1,0) (3,1) (3,4)
		"L": storage.IntArray([]int64{2, 1, 0, 1, 1, 4}), // decreases within G's first run
		"S": storage.IntArray([]int64{0, 1, 2, 3, 4, 5}), // increasing: no repeats, its runs hold one position
		"K": storage.IntArray([]int64{1, 2, 3}),          // another length
		"V": storage.RealArray([]float64{1, 2, 3, 4, 5, 6}),
	}
	s := GatherStats(st)
	for name, want := range map[string]map[string]int64{
		"G": {},
		"M": {"G": 4},
		"L": {},
		"S": {"G": 6},
		"K": {},
		"V": {},
	} {
		got := s.Arrays[name].SortedWithin
		if len(got) != len(want) || !maps.Equal(got, want) {
			t.Errorf("%s: SortedWithin %v, want %v", name, got, want)
		}
	}
}
