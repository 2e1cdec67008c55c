package opt

import (
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// Kernels written other natural ways than examples/: each must reach a
// plan as good as the usual form's.
const (
	ttvLookup = `CREATE real ARRAY v(T_dim3);
CREATE TENSOR y AS
  sum(<(i,j,k), t> in T) { (i,j) -> T(i)(j)(k) * v(k) };`
	spmvLookup = `CREATE real ARRAY x(A_dim2);
CREATE TENSOR y AS
  sum(<(i,j), a> in A) { i -> A(i)(j) * x(j) };`
	bataxLookup = `CREATE real SCALAR beta;
CREATE real ARRAY x(A_dim2);
CREATE TENSOR Q AS
  sum(<i, Ai> in A) sum(<j, Aij> in Ai) sum(<k, Aik> in Ai)
    { j -> beta * A(i)(j) * A(i)(k) * x(k) };`
)

// optimizeForm optimizes src over tensors, checks the interpreter gives the
// plan the naive plan's value, and returns the result.
func optimizeForm(t *testing.T, name, src string, tensors []tensorSpec) *Result {
	t.Helper()
	naive, st := setupProgram(t, name, []byte(src), 7, tensors)
	want, err := eval.Eval(naive, st)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Optimize(naive, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Eval(res.Plan, st)
	if err != nil || !value.Equal(want, got, 1e-9) {
		t.Fatalf("%s: the plan computes %v (%v), the naive plan %v:\n%s", name, got, err, want, ir.Format(res.Plan))
	}
	return res
}

// TestNeverDearerThanNaive: the plan kept is the cheapest of the search's
// plan, the naive plan and the program as written, all costed alike, and
// explain shows each cost. TTV through a lookup of the tensor it walks is
// a program whose search plan alone (lookups rewritten into scans of the
// storage mapping) was estimated some 300x dearer than the naive plan.
func TestNeverDearerThanNaive(t *testing.T) {
	res := optimizeForm(t, "ttv", ttvLookup, []tensorSpec{{"T", "csf", []int64{20, 30, 40}, 0.05}})
	if res.Cost.Value > res.NaiveCost.Value {
		t.Errorf("the plan costs %s, the naive plan %s:\n%s", res.Cost, res.NaiveCost, ir.Format(res.Plan))
	}
	labels := map[string]bool{}
	for _, c := range res.Candidates {
		labels[c.Label] = true
		if c.Cost.Value < res.Cost.Value {
			t.Errorf("the %s plan costs %s, less than the chosen %s (%s)", c.Label, c.Cost, res.Chosen, res.Cost)
		}
	}
	for _, l := range []string{"optimized", "naive", "as written"} {
		if !labels[l] {
			t.Errorf("no %s candidate among %v", l, res.Candidates)
		}
	}
	var sb strings.Builder
	res.Explain(&sb)
	for _, c := range res.Candidates {
		if !strings.Contains(sb.String(), c.Label+strings.Repeat(" ", 11-len(c.Label))+" "+c.Cost.String()) {
			t.Errorf("explain does not show the %s plan's cost %s:\n%s", c.Label, c.Cost, sb.String())
		}
	}
}
