package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// Plans with a dense range inside a sparse loop, each entry adding a run
// into one row (besides liftTTM, TTM's row of a fiber): the range swaps
// outward and lifts.
const (
	// The rows of i, each added to by every fiber (i, k): a row already
	// holding values when the swapped loops add theirs; a guard on the
	// entry above the range and a let that is not a read.
	swapRows = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	      if l < D_len2 - 3 then
	      let t1 = B_val(p3) * 2.0 - k in
	      sum(<j, _> in 1:D_len1) { @dense j -> D_val(j * D_len2 + l) * t1 } }`
	// The loop outermost, split across workers: D times the vector of
	// B's values at their last keys (a segment of all of them).
	swapTop = `sum(<p3, l> in B_idx3(B_pos3(0):B_pos3(B_pos2(B_pos1(1)))))
	  let t1 = B_val(p3) in
	  sum(<j, _> in 0:D_len1) { @dense j -> D_val(j * D_len2 + l) * t1 }`
)

// TestSwappedRange runs plans whose range swaps outward against the
// interpreter at 1 and 3 threads and checks that the swapped loops ran
// as lanes; with the range empty, the loops as written run (nothing is
// added, S's lets still read).
func TestSwappedRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 31))
	b := randCSF(30, 25, 40, 700, rng)
	for _, tc := range []struct {
		name, plan string
		rows       int // D's rows: the range's length
		short      bool
		want       string
	}{
		{"TTM", liftTTM, 12, false, "range swapped outward"},
		{"rows added to", swapRows, 12, false, "range swapped outward"},
		{"the loop outermost", swapTop, 12, false, "range swapped outward"},
		{"TTM, an empty range", liftTTM, 0, false, ""},
		{"TTM, an empty range, B_val short", liftTTM, 0, true, ""},
		{"TTM, B_val short", liftTTM, 12, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "D", tc.rows, 40, rng)
			if tc.short {
				v := st["B_val"].(*storage.Array).F
				st["B_val"] = storage.RealArray(v[:len(v)-5])
			}
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			if tc.want != "" && seen[tc.want] == 0 {
				t.Errorf("no %q event; saw %v", tc.want, seen)
			}
		})
	}
}
