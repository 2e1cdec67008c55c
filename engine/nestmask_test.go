package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// A user's ELL layout whose padding (column -1) is skipped by a test that
// is the whole body: x(-1) must not be read in the padding lanes.
const (
	ellSpMV = `sum(<i, _> in 0:R)
	  { @dense i -> sum(<s, _> in 0:W)
	    if 0 <= E_col(W * i + s) then E_val(W * i + s) * x_val(E_col(W * i + s)) }`
	ellScatter = `sum(<i, _> in 0:R) sum(<s, _> in 0:W)
	  if 0 <= E_col(W * i + s) then { @dense E_col(W * i + s) -> E_val(W * i + s) * x_val(i) }`
	// The test inside a product is not the whole body: no lane may be
	// dropped, and a failing batch runs through the closures.
	ellNested = `sum(<i, _> in 0:R)
	  { @dense i -> sum(<s, _> in 0:W)
	    E_val(W * i + s) + (if 0 <= E_col(W * i + s) then x_val(E_col(W * i + s))) }`
)

// ellStore stores R rows of W slots, each row's first entries real
// (columns below cols) and the rest padding (-1, value 0).
func ellStore(st storage.Store, rows, width, cols int, rng *rand.Rand) {
	col := make([]int64, rows*width)
	val := make([]float64, rows*width)
	for i := range rows {
		n := rng.IntN(width + 1)
		for s := range width {
			p := i*width + s
			if s < n {
				col[p], val[p] = int64(rng.IntN(cols)), float64(rng.IntN(9)+1)
			} else {
				col[p] = -1
			}
		}
	}
	st["R"], st["W"] = storage.IntScalar(int64(rows)), storage.IntScalar(int64(width))
	st["E_col"], st["E_val"] = storage.IntArray(col), storage.RealArray(val)
}

// TestFilterGuardsMaskLanes: a batch whose whole-body test fails in some
// lanes runs the passing lanes vectorized (masked) instead of the whole
// batch through the closures; the result and the errors are the
// interpreter's.
func TestFilterGuardsMaskLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	st := storage.Store{}
	ellStore(st, 60, 40, 50, rng)
	vecStore(st, "x", 60, rng)
	for _, tc := range []struct {
		name, plan string
		masked     bool
	}{
		{"SpMV", ellSpMV, true},
		{"scatter", ellScatter, true},
		{"test inside a product", ellNested, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			// The rows' sums of the SpMV run as one filtered dot instead.
			if got := (seen["masked"] > 0 || seen["filtered dot"] > 0) && seen["fallback"] == 0; got != tc.masked {
				t.Errorf("masked batches: %v, want %v; saw %v", got, tc.masked, seen)
			}
		})
	}
	// A passing lane that reads past x's end is the interpreter's error.
	vecStore(st, "x", 30, rng)
	e := parse(t, ellSpMV, st)
	for _, threads := range []int{1, 3} {
		if _, err := runEngine(e, st, threads); err == nil {
			t.Errorf("threads=%d: a read past x_val ran without an error", threads)
		}
	}
	agree(t, e, st)
}
