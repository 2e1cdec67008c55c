package opt

import (
	"math"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// rangeAboveLoop reports whether plan has a sum over a range whose body
// holds another sum: a rank the engine lifts above a walk of the tensor.
func rangeAboveLoop(plan *ir.Expr) bool {
	found := false
	ir.Walk(plan, func(e *ir.Expr) bool {
		if e.Op == ir.OpSum && e.Args[0].Op == ir.OpRange {
			ir.Walk(e.Args[1], func(x *ir.Expr) bool {
				found = found || x.Op == ir.OpSum
				return !found
			})
		}
		return !found
	})
	return found
}

// TestLiftedRange: MTTKRP with dense factors over a tensor of short
// fibers (as orghs, about one entry per (i, k)). The engine lifts a
// rank j above B's row, walking the row once per run of lanes; with j
// inside each fiber it runs a lifted run per fiber, about twice as slow
// on orghs (csf 34 against 71 ms, hash 33 against 68). The model prices
// the lifted walk once, so over csf, coo and a hash map alike, on two
// draws of the data, the plan puts the rank above B's loops.
func TestLiftedRange(t *testing.T) {
	src, _ := examples.Source("mttkrp")
	for _, f := range []string{"csf", "coo", "hash"} {
		var plans []string
		for _, seed := range []uint64{3, 4} {
			tensors := []tensorSpec{{"B", f, []int64{200, 150, 20}, 0.002}, {"C", "dense", []int64{150, 16}, 1}, {"D", "dense", []int64{16, 20}, 1}}
			naive, st := setupProgram(t, "mttkrp", src, seed, tensors)
			res, err := Optimize(naive, st, searchLimits)
			if err != nil {
				t.Fatal(err)
			}
			want, err := eval.Eval(naive, st)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := eval.Eval(res.Plan, st); err != nil || !value.Equal(want, got, 1e-9) {
				t.Fatalf("%s: the plan computes %v (%v), the naive plan %v", f, got, err, want)
			}
			if !rangeAboveLoop(res.Plan) {
				t.Errorf("B %s, seed %d: the rank runs inside B's loops:\n%s", f, seed, ir.Format(res.Plan))
			}
			plans = append(plans, ir.Format(res.Plan))
		}
		if plans[0] != plans[1] {
			t.Errorf("B %s: two draws, two plans:\n%s\n--\n%s", f, plans[0], plans[1])
		}
	}
}

// mttkrpRank holds MTTKRP's plans over B in each format with dense
// factors: the rank lifted above B's row, and inside each fiber (the
// engine swaps coo's above the row's loop).
var mttkrpRank = map[string]struct{ above, inside string }{
	"csf": {`sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<j, _> in 0:C_len2)
    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
        B_val(p3) * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`,
		`sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
      sum(<j, _> in 0:C_len2)
        { @dense j -> B_val(p3) * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`},
	"coo": {`sum(<p0, i> in runs(B_idx1(B_pos1(0):B_pos1(1))))
  { @dense i -> sum(<j, _> in 0:C_len2)
    { @dense j -> sum(<p1, k> in runs(B_idx2(p0:runend(B_idx1, p0, B_pos1(1)))))
      sum(<p2, l> in B_idx3(p1:runend(B_idx2, p1, runend(B_idx1, p0, B_pos1(1)))))
        B_val(p2) * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`,
		`sum(<p0, i> in runs(B_idx1(B_pos1(0):B_pos1(1))))
  { @dense i -> sum(<p1, k> in runs(B_idx2(p0:runend(B_idx1, p0, B_pos1(1)))))
    sum(<p2, l> in B_idx3(p1:runend(B_idx2, p1, runend(B_idx1, p0, B_pos1(1)))))
      sum(<j, _> in 0:C_len2)
        { @dense j -> B_val(p2) * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`},
	"hash": {`sum(<i, v1> in B_hash)
  { @dense i -> sum(<j, _> in 0:C_len2)
    { @dense j -> sum(<k, v2> in v1)
      sum(<l, v3> in v2)
        v3 * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`,
		`sum(<i, v1> in B_hash)
  { @dense i -> sum(<k, v2> in v1)
    sum(<l, v3> in v2)
      sum(<j, _> in 0:C_len2)
        { @dense j -> v3 * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`},
}

// TestLiftedRangeRanks: the plans of mttkrpRank compute MTTKRP, and the
// model ranks the rank above B's row below the same loops with the rank
// inside each fiber, over csf and a hash map
// (TestCalibrate's "mttkrp dense" plans; on orghs 35 against 71 ms over
// csf), whether or not the search reaches both.
func TestLiftedRangeRanks(t *testing.T) {
	src, _ := examples.Source("mttkrp")
	for _, f := range []string{"csf", "coo", "hash"} {
		tensors := []tensorSpec{{"B", f, []int64{200, 150, 20}, 0.002}, {"C", "dense", []int64{150, 16}, 1}, {"D", "dense", []int64{16, 20}, 1}}
		naive, st := setupProgram(t, "mttkrp", src, 3, tensors)
		costs := planCosts(t, naive, st, mttkrpRank[f].above, mttkrpRank[f].inside)
		// coo's rank inside runs above the row's loop, as the rank above.
		if f != "coo" && costs[0] >= costs[1] {
			t.Errorf("B %s: the rank above B's row costs %.3g, inside each fiber %.3g", f, costs[0], costs[1])
		}
	}
}

// TestLiftedRangeWithLet: a rank whose singleton's value reads a let
// bound in front of it (let t1 = sum_l B*D in {j -> C*t1}, MTTKRP with
// C's row outside the sum over l) is lifted by the engine as the bare
// singleton is, the let's loop run once per run of lanes: the model
// charges a lifted run per fiber (liftRun), as it does the let-free
// plan with the rank inside each fiber.
func TestLiftedRangeWithLet(t *testing.T) {
	const withLet = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<j, _> in 0:C_len2)
      let t1 = sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(j * D_len2 + l) in
      { @dense j -> C_val(C_len2 * k + j) * t1 } }`
	src, _ := examples.Source("mttkrp")
	tensors := []tensorSpec{{"B", "csf", []int64{200, 150, 20}, 0.002}, {"C", "dense", []int64{150, 16}, 1}, {"D", "dense", []int64{16, 20}, 1}}
	naive, st := setupProgram(t, "mttkrp", src, 3, tensors)
	fibers := float64(len(st["B_idx2"].(*storage.Array).I))
	costs := planCosts(t, naive, st, withLet)
	defer func(v float64) { liftRun = v }(liftRun)
	run := liftRun
	liftRun = 0
	free := planCosts(t, naive, st, withLet)
	if got := costs[0] - free[0]; math.Abs(got-fibers*run) > 0.01*fibers*run {
		t.Errorf("the lifted runs cost %.4g, want %.0f fibers x %g", got, fibers, run)
	}
}
