package opt

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// ellMapping is a user's ELLPACK layout whose padding (column -1) is
// skipped by the test TEST.
const ellMapping = `CREATE int SCALAR A_dim1;
CREATE int SCALAR A_dim2;
CREATE int SCALAR A_width;
CREATE int ARRAY A_col(A_dim1 * A_width);
CREATE real ARRAY A_val(A_dim1 * A_width);
CREATE TENSOR A AS
  sum(<i, _> in 0:A_dim1)
    { @unique i -> sum(<s, _> in 0:A_width)
      if TEST then
        { A_col(A_width * i + s) -> A_val(A_width * i + s) } };`

// TestGuardedKeysFuse: SpMV over the ELL mapping whose test 0 <=
// A_col(p) skips the padding fuses into one loop nest (no dictionary
// built but the result): the test bounds the keys the program's x(j)
// reads. A test that does not bound them from below (A_col(p) < A_dim2)
// leaves x(-1) possible, and the mapping is built first, as the naive
// plan does; both then fail on the padding.
func TestGuardedKeysFuse(t *testing.T) {
	const spmv = `CREATE real ARRAY x(A_dim2);
CREATE TENSOR y AS
  sum(<(i, j), a> in A) { i -> a * x(j) };`
	r := rand.New(rand.NewPCG(29, 3))
	rows, cols, width := 30, 40, 6
	col := make([]int64, rows*width)
	val := make([]float64, rows*width)
	for i := range rows {
		n := r.IntN(width + 1)
		for s := range width {
			col[i*width+s] = -1
			if s < n {
				col[i*width+s], val[i*width+s] = int64(r.IntN(cols)), float64(r.IntN(5)+1)
			}
		}
	}
	for _, tc := range []struct {
		test  string
		fused bool
	}{
		{"0 <= A_col(A_width * i + s)", true},
		{"A_col(A_width * i + s) < A_dim2", false},
	} {
		st := storage.Store{"A_dim1": storage.IntScalar(int64(rows)), "A_dim2": storage.IntScalar(int64(cols)),
			"A_width": storage.IntScalar(int64(width)), "A_col": storage.IntArray(col), "A_val": storage.RealArray(val)}
		m := []byte(strings.ReplaceAll(ellMapping, "TEST", tc.test))
		naive := composeProgram(t, r, st, []sdql.Source{{Name: "ell.sdql", Text: m}}, "spmv", []byte(spmv))
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		singletons := 0
		ir.Walk(res.Plan, func(e *ir.Expr) bool {
			if e.Op == ir.OpSingleton {
				singletons++
			}
			return true
		})
		if got := singletons == 1; got != tc.fused {
			t.Errorf("if %s: fused %v, want %v:\n%s", tc.test, got, tc.fused, ir.Format(res.Plan))
		}
		want, werr := eval.Eval(naive, st)
		got, err := eval.Eval(res.Plan, st)
		if (werr != nil) != (err != nil) || werr == nil && !value.Equal(want, got, 1e-9) {
			t.Errorf("if %s: the plan computes %v (%v), the naive plan %v (%v)", tc.test, got, err, want, werr)
		}
	}
}

// TestGuardedPlanSafeOnItsOwn: a branch if c then e is judged safe when
// some term of e's unsafe class is safe where c holds, but extraction may
// pick another term of that class. Here the fuse stage judged
// if 0 <= k1 && k1 < B_len1 then ... safe through let i4 = k1 in
// B_val((i4 * B_len2 + i5) * B_len3 + i3) and extracted the form with k1
// substituted, which the test does not bound; the next stage started
// unsafe, its rewrites went unchecked, and the plan dropped the join test
// that kept B's key in range. A safe naive plan must give a plan the
// analysis judges safe on its own, and one that computes the same.
func TestGuardedPlanSafeOnItsOwn(t *testing.T) {
	naive, st, prog, err := randomPlan(1, 134713)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !planSafe(naive, st, res.Stats) {
		t.Fatalf("the naive plan is judged unsafe:\n%s", prog)
	}
	if !planSafe(res.Plan, st, res.Stats) {
		t.Errorf("the optimized plan is judged unsafe:\n%s", ir.Format(res.Plan))
	}
	want, werr := eval.Eval(naive, st)
	got, err := eval.Eval(res.Plan, st)
	if werr != nil || err != nil || !value.Equal(want, got, 1e-9) {
		t.Errorf("the plan computes %v (%v), the naive plan %v (%v)", got, err, want, werr)
	}
}

// TestGuardedBranchesRefusedInUnsafePlans: the program of
// TestGuardedPlanSafeOnItsOwn with a read the analysis cannot bound
// (X(k1 + 1): k1 may be X's last key, though the join with X(1:2) keeps it
// at 1). The naive plan is judged unsafe, so no stage can demand a plan
// judged safe on its own; a branch safe only under its test must then not
// be extracted at all, or extraction picks the term that reads B_val(24)
// of 24 elements.
func TestGuardedBranchesRefusedInUnsafePlans(t *testing.T) {
	g := &progGen{r: rand.New(rand.NewPCG(134713, 11))}
	st, srcs := g.tensors()
	g.vector(st)
	g.r = rand.New(rand.NewPCG(1, 13))
	prog := vectorDecl + g.program()
	const term = "A((k1 + 1), k1)"
	if !strings.Contains(prog, term) {
		t.Fatalf("the program of seeds 1, 134713 changed:\n%s", prog)
	}
	prog = strings.Replace(prog, term, term+" + X(k1 + 1)", 1)
	p, err := sdql.Compile(append(srcs, sdql.Source{Name: "random.sdql", Text: []byte(prog)})...)
	if err != nil {
		t.Fatal(err)
	}
	naive := p.Compose("")
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	if planSafe(naive, st, res.Stats) {
		t.Fatalf("the naive plan is judged safe:\n%s", prog)
	}
	want, werr := eval.Eval(naive, st)
	got, err := eval.Eval(res.Plan, st)
	if werr != nil || err != nil || !value.Equal(want, got, 1e-9) {
		t.Errorf("the plan computes %v (%v), the naive plan %v (%v):\n%s", got, err, want, werr, ir.Format(res.Plan))
	}
}
