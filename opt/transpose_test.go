package opt

import (
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// MMM with B stored by columns walks, for each entry (i, k) of A, a copy
// of B grouped by row k that stores B's values, read once each as the
// copy is built (M4v): the body reads B's position only in the factor
// B_val(p), so the copy need not store the position and the walk read
// B_val through it. The plan computes what the naive plan computes.
func TestTransposedCopyStoresValues(t *testing.T) {
	checkCopyOfB(t, "csc")
}

// checkCopyOfB fails t unless the plan of MMM with A in CSR and B in
// format bf walks a built copy of B's values, and computes what the
// naive plan computes.
func checkCopyOfB(t *testing.T, bf string) {
	t.Helper()
	naive, st := setupKernel(t, "mmm", 3, []tensorSpec{
		{"A", "csr", []int64{300, 300}, 0.02},
		{"B", bf, []int64{300, 60}, 0.05},
	})
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !walksCopyOfValues(res.Plan, "B_val") {
		t.Errorf("the plan does not walk a built copy of B_val's values:\n%s", ir.Format(res.Plan))
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

// walksCopyOfValues reports whether e reads array arr only as the values
// of a dictionary it binds with let (singletons whose value is arr(p), p
// a variable) and walks that dictionary.
func walksCopyOfValues(e *ir.Expr, arr string) bool {
	copies := map[string]bool{}
	walked, elsewhere := false, false
	var find func(e *ir.Expr)
	find = func(e *ir.Expr) {
		if e == nil {
			return
		}
		switch e.Op {
		case ir.OpLet:
			if storesValuesOf(e.Args[0], arr) {
				copies[e.Vars[0]] = true
				find(e.Args[1])
				return
			}
		case ir.OpSum:
			src := e.Args[0]
			for src.Op == ir.OpLookup {
				src = src.Args[0]
			}
			walked = walked || src.Op == ir.OpVar && copies[src.Name]
		case ir.OpGlobal:
			elsewhere = elsewhere || e.Name == arr
		}
		for _, a := range e.Args {
			find(a)
		}
	}
	find(e)
	return walked && !elsewhere
}

// storesValuesOf reports whether e is a sum whose singletons (nested)
// hold arr(p) for a variable p.
func storesValuesOf(e *ir.Expr, arr string) bool {
	for e.Op == ir.OpSum {
		e = e.Args[1]
	}
	for e.Op == ir.OpSingleton {
		e = e.Args[1]
	}
	return e.Op == ir.OpLookup && e.Args[0].Op == ir.OpGlobal && e.Args[0].Name == arr && e.Args[1].Op == ir.OpVar
}

// MMM with B's columns compressed (dcsc) walks the same copy of B, built
// over the columns B stores (M4c), not a copy of A whose walk would add
// each product into a row of the result out of order.
func TestTransposedCopyOfCompressedColumns(t *testing.T) {
	checkCopyOfB(t, "dcsc")
}
