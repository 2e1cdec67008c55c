package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// TestRowScale: a row's value at its own key that is the row's segmented
// dot times factors invariant in the rows (a scalar outside the sum, as
// the optimizer writes alpha * (A x): a let of the dot, then the product)
// runs by the dot primitive with the factors as its scale, straight into
// the result: no rows' sums, no batches of their products ("values",
// "post"). A factor that reads the row keeps the batches. Checked against
// the interpreter at 1 and 3 threads.
func TestRowScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 7))
	n, m := 300, 200
	a := randCSR(n, m, 7*n, rng)
	// The rows of A as ELLPACK: width w, padding at column -1.
	w := 0
	for i := range n {
		w = max(w, int(a.pos[i+1]-a.pos[i]))
	}
	col, val := make([]int64, n*w), make([]float64, n*w)
	for i := range n {
		for s := range w {
			col[i*w+s] = -1
			if p := a.pos[i] + int64(s); p < a.pos[i+1] {
				col[i*w+s], val[i*w+s] = a.idx[p], a.val[p]
			}
		}
	}
	const dot = `sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x_val(j)`
	const ell = `sum(<s, _> in 0:E_w) if 0 <= E_col(E_w * i + s) then E_val(E_w * i + s) * x_val(E_col(E_w * i + s))`
	for _, tc := range []struct {
		name, plan string
		scaled     bool // no batches of the rows' sums
		want       string
	}{
		{"a let of the dot times a scalar", `sum(<i, _> in 0:A_len1) let t = ` + dot + ` in { @dense i -> alpha * t }`, true, "dot"},
		{"three factors either side", `sum(<i, _> in 0:A_len1) let t = ` + dot + ` in { @dense i -> gamma * ((t * alpha) * 3.0) }`, true, "dot"},
		{"the let's own factor, then the value's", `sum(<i, _> in 0:A_len1) let t = alpha * ` + dot + ` in { @dense i -> t * gamma }`, true, "dot"},
		{"a scalar times the sum in the singleton", `sum(<i, _> in 0:A_len1) { @dense i -> alpha * ` + dot + ` }`, true, "dot"},
		{"a let of a row's sum of its values", `sum(<i, _> in 0:A_len1) let t = sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) in { @dense i -> alpha * t }`, true, "row sums"},
		{"a let of an ELL row's filtered dot", `sum(<i, _> in 0:E_len1) let t = ` + ell + ` in { @dense i -> alpha * t }`, true, "filtered dot"},
		{"a factor that reads the row", `sum(<i, _> in 0:A_len1) let t = ` + dot + ` in { @dense i -> x_val(i) * t }`, false, "values"},
		{"a sum besides the product", `sum(<i, _> in 0:A_len1) let t = ` + dot + ` in { @dense i -> alpha * t + gamma }`, false, "values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{"alpha": storage.RealScalar(1.5), "gamma": storage.RealScalar(-0.75)}
			a.store(st, "A")
			vecStore(st, "x", m, rng)
			st["E_len1"], st["E_w"] = storage.IntScalar(int64(n)), storage.IntScalar(int64(w))
			st["E_col"], st["E_val"] = storage.IntArray(col), storage.RealArray(val)
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			if seen["flat"] == 0 || seen[tc.want] == 0 {
				t.Errorf("want %q in position space; saw %v", tc.want, seen)
			}
			if batched := seen["values"] + seen["post"]; tc.scaled && batched > 0 {
				t.Errorf("the rows' values went through batches; saw %v", seen)
			}
		})
	}
}
