package engine

import (
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Sparse products whose outer loop has a prelude of guards on the key
// and lets of array reads (preludeRun's windowPrelude), and single loops
// with such a prelude, which run on the closure path without windows.
var windowPlans = []struct{ name, plan string }{
	{"MMM as the optimizer writes it", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> B_val(p1) * t1 } }`},
	{"two lets, a guard between them, the value read one position on", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let u = A_idx2(p2) in
    if k >= 0 && k <= lastB && k != 7 then
      let t1 = A_val(p2 + 1) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> t1 * B_val(p1) } }`},
	// The same prelude before a loop of merges: MTTKRP's guard on B's
	// keys before C's row of merges.
	{"a loop of merges", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
        merge(<q1, q2, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(k):B_pos2(k + 1))>)
          { @dense j -> t1 * B_val(q2) } }`},
	// One loop with the same prelude, into a dense row, a hash row and a
	// scalar: MTTKRP's guard on C's keys.
	{"a dense row", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in { @dense k -> t1 * B_pos2(k + 1) } }`},
	{"a hash row", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in { @hash k -> t1 * B_pos2(k + 1) } }`},
	// A guard inside the singleton.
	{"a guard inside a dense singleton", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    { @dense k -> if 0 <= k && k < B_len1 then A_val(p2) * B_pos2(k + 1) } }`},
	{"a guard inside a hash singleton, at the top", `sum(<p2, k> in A_idx2(A_pos2(0):A_pos2(A_len1)))
    { @hash k -> if 0 <= k && k < B_len1 then A_val(p2) * B_pos2(k + 1) }`},
	{"a scalar", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in t1 * B_pos2(k + 1) }`},
}

// TestWindowPrelude runs the products against the interpreter (1 and 3
// threads) and against themselves with the steps always run (the same
// bits and errors) on data whose keys all pass the guards and reads all fit
// (the prelude's steps are skipped), and on data where some key fails a
// guard or some read falls past its array (the steps run), and checks
// that each kind of window occurred in the plans with an inner loop.
func TestWindowPrelude(t *testing.T) {
	defer nestsOff()()
	defer func(h func(bool) bool) { nestedWindow = h }(nestedWindow)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, pc := range windowPlans {
		var skipped, ran atomic.Int64
		for trial := range 40 {
			n, m, w := 1+rng.IntN(40), 1+rng.IntN(20), 1+rng.IntN(300)
			mb := m // B's rows: every key of A has one
			if trial%4 == 1 {
				mb = 1 + rng.IntN(m) // some keys of A have none: the guard drops them
			}
			st := storage.Store{"lastB": storage.IntScalar(int64(mb - 1))}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			csr(st, "B", mb, w, rng.IntN(8*mb+1), rng)
			if trial%3 == 2 {
				st["A_val"] = intsOf(st["A_val"])
			}
			if v := st["A_val"].(*storage.Array); trial%4 == 3 && v.Len() > 0 {
				// One value short: the last entry's read (or, in the
				// second plan, that of the entry before) is past the end.
				st["A_val"] = oneShort(v)
			}
			nestedWindow = func(covered bool) bool {
				if covered {
					skipped.Add(1)
				} else {
					ran.Add(1)
				}
				return covered
			}
			e := parse(t, pc.plan, st)
			got := agree(t, e, st)
			_, gerr := runEngine(e, st, 1)
			// The steps alone must give the same bits and errors.
			nestedWindow = func(bool) bool { return false }
			want, werr := runEngine(e, st, 1)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("%s: error %v, with the steps run %v", pc.name, gerr, werr)
			}
			if gerr == nil && !value.Equal(got, want, 0) {
				t.Fatalf("%s: %s, with the steps run %s", pc.name, value.Format(got), value.Format(want))
			}
		}
		if closure := strings.Count(pc.plan, "sum(") < 3; closure != (skipped.Load() == 0 && ran.Load() == 0) {
			t.Errorf("%s: windows with the steps skipped %d, run %d; want both (none for a single loop)", pc.name, skipped.Load(), ran.Load())
		}
	}
}

// TestWindowPreludeCovers checks the decision that lets a window skip its
// guards, for every comparison, at and beside its bound.
func TestWindowPreludeCovers(t *testing.T) {
	defer nestsOff()()
	const b = 10
	for _, c := range []struct {
		op         ir.Op
		kmin, kmax int64
		want       bool
	}{
		{ir.OpLt, 0, 9, true}, {ir.OpLt, 0, 10, false},
		{ir.OpLe, 0, 10, true}, {ir.OpLe, 0, 11, false},
		{ir.OpGt, 11, 20, true}, {ir.OpGt, 10, 20, false},
		{ir.OpGe, 10, 20, true}, {ir.OpGe, 9, 20, false},
		{ir.OpEq, 10, 10, true}, {ir.OpEq, 10, 11, false}, {ir.OpEq, 9, 10, false},
		{ir.OpNe, 11, 20, true}, {ir.OpNe, 0, 9, true}, {ir.OpNe, 0, 10, false}, {ir.OpNe, 10, 20, false},
		{ir.OpLt, 5, 4, true}, // no keys: nothing to test
	} {
		w := &windowPrelude{tests: []rangeTest{{slot: 0, op: c.op, bound: operand{slot: -1, k: b}}}}
		if got := w.covers(c.kmin, c.kmax, 0, 1); got != c.want {
			t.Errorf("k %v %d for k in [%d, %d]: covers %v, want %v", c.op, b, c.kmin, c.kmax, got, c.want)
		}
	}
	arr := &cell{info: GlobalInfo{Elem: ir.Real}, reals: make([]float64, 5)}
	w := &windowPrelude{reads: []*arrayLet{{arr: arr, off: 1}}}
	for _, c := range []struct {
		plo, phi int64
		want     bool
	}{{0, 4, true}, {0, 5, false}, {-1, 3, true}, {-2, 3, false}, {3, 3, true}} {
		if got := w.covers(0, -1, c.plo, c.phi); got != c.want {
			t.Errorf("read at p+1 of 5 for p in [%d, %d): covers %v, want %v", c.plo, c.phi, got, c.want)
		}
	}
}
