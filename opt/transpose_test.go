package opt

import (
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// MMM with B stored by columns walks, for each entry (i, k) of A, a copy
// of B grouped by row k that stores each entry's position (M4): the plan
// reads B_val at a value of the copy minus one, a read the analysis
// proves in bounds from the copy's values. The plan computes what the
// naive plan computes.
func TestTransposedCopyReadsByPosition(t *testing.T) {
	checkReadsCopyOfB(t, "csc")
}

// checkReadsCopyOfB fails t unless the plan of MMM with A in CSR and B in
// format bf reads B_val by a position stored in a built copy, and
// computes what the naive plan computes.
func checkReadsCopyOfB(t *testing.T, bf string) {
	t.Helper()
	naive, st := setupKernel(t, "mmm", 3, []tensorSpec{
		{"A", "csr", []int64{300, 300}, 0.02},
		{"B", bf, []int64{300, 60}, 0.05},
	})
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !readsAtPositionOfCopy(res.Plan, "B_val") {
		t.Errorf("the plan does not read B_val by a position stored in a built copy:\n%s", ir.Format(res.Plan))
	}
	checkSameValue(t, naive, res.Plan, st)
}

// checkSameValue fails t unless the interpreter gives plan the value of
// the naive plan.
func checkSameValue(t *testing.T, naive, plan *ir.Expr, st storage.Store) {
	t.Helper()
	want, err := eval.Eval(naive, st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Eval(plan, st)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(want, got, 1e-9) {
		t.Errorf("the plan computes another value than the naive plan")
	}
}

// readsAtPositionOfCopy reports whether e reads array arr at v - 1, v a
// value walked from a dictionary the plan binds with let.
func readsAtPositionOfCopy(e *ir.Expr, arr string) bool {
	lets := map[string]bool{}
	walked := map[string]bool{}
	var find func(e *ir.Expr) bool
	find = func(e *ir.Expr) bool {
		if e == nil {
			return false
		}
		switch e.Op {
		case ir.OpLet:
			lets[e.Vars[0]] = true
		case ir.OpSum:
			src := e.Args[0]
			for src.Op == ir.OpLookup {
				src = src.Args[0]
			}
			if src.Op == ir.OpVar && lets[src.Name] {
				walked[e.Vars[1]] = true
			}
		case ir.OpLookup:
			a, i := e.Args[0], e.Args[1]
			if a.Op == ir.OpGlobal && a.Name == arr && i.Op == ir.OpSub &&
				i.Args[0].Op == ir.OpVar && walked[i.Args[0].Name] &&
				i.Args[1].Op == ir.OpConst && i.Args[1].I == 1 {
				return true
			}
		}
		for _, a := range e.Args {
			if find(a) {
				return true
			}
		}
		return false
	}
	return find(e)
}

// MMM with B's columns compressed (dcsc) walks the same copy of B, built
// over the columns B stores (M4c), not a copy of A whose walk would add
// each product into a row of the result out of order.
func TestTransposedCopyOfCompressedColumns(t *testing.T) {
	checkReadsCopyOfB(t, "dcsc")
}
