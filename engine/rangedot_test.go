package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestRangeDots runs sums over a range inside a loop over a sparse
// level's positions (SDDMM's rank dot and its neighbours: a let, three
// factors, a column-major factor, a lone factor, a factor that does not
// read k, bounds read per entry, reads past an array's end) against the
// interpreter at 1 and 3 threads, as batches and lane by lane: the range
// dots run, and their bits are the interpreter's.
func TestRangeDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	s := randCSR(60, 50, 700, rng)
	for _, tc := range []struct {
		name, plan string
		vRows      int // V's rows: fewer than S's columns sends batches to the closures
		dot        bool
	}{
		{"SDDMM, a let", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    let t = sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(j * V_len2 + k) in
		    { @dense j -> S_val(p2) * t } }`, 50, true},
		{"SDDMM, in the value", shortSDDMM, 50, true},
		{"three factors, V column-major", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(k * V_len1 + j) * W_val(k) } }`, 50, true},
		{"a lone factor, a factor not reading k", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> (sum(<k, _> in 1:U_len2 - 1) V_val(V_len2 * j + k + 1)) +
		        sum(<k, _> in 0:3) S_val(p2) * V_val(j * V_len2 - k + 4) } }`, 50, true},
		{"bounds per entry", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> sum(<k, _> in j % 5:j % 7) U_val(i * U_len2 + k) * V_val(j * V_len2 + k) } }`, 50, true},
		{"V short: the interpreter's error", shortSDDMM, 45, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			s.store(st, "S")
			denseStore(st, "U", 60, 8, rng)
			denseStore(st, "V", tc.vRows, 8, rng)
			vecStore(st, "W", 8, rng)
			st["V_len1"], st["V_len2"] = storage.IntScalar(50), storage.IntScalar(8) // V_len1 claims 50 rows
			e := parse(t, tc.plan, st)
			want, werr := eval.Eval(e, st)
			defer func(n int64) { shortRun = n }(shortRun)
			for _, short := range []int64{3, 0} {
				shortRun = short
				seen := events(func() { agree(t, e, st) })
				if tc.dot && seen["range dot"] == 0 {
					t.Errorf("shortRun %d: no range dot; saw %v", short, seen)
				}
				got, err := runEngine(e, st, 1)
				if werr == nil && (err != nil || !value.Equal(got, want, 0)) {
					t.Errorf("shortRun %d: not the interpreter's bits (%v):\n%s\n%s", short, err, value.Format(got), value.Format(want))
				}
			}
		})
	}
}
