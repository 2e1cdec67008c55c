package opt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/internal/datadriven"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// durations matches the times in an explain report, which vary by run.
var durations = regexp.MustCompile(` *\d+(\.\d+)? ms`)

// TestKernelGoldens optimizes the paper's kernels (testdata/kernels) and
// compares the explain report, times blanked, with the golden one; the
// optimized plan must compute what the naive plan computes.
func TestKernelGoldens(t *testing.T) {
	datadriven.RunTest(t, "testdata/kernels", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "optimize" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		kernel := argValue(t, d, "kernel", "")
		seed, _ := strconv.ParseUint(argValue(t, d, "seed", "1"), 10, 64)
		var specs []tensorSpec
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			specs = append(specs, parseTensorSpec(t, d, line))
		}
		naive, st := setupKernel(t, kernel, seed, specs)
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			d.Fatalf(t, "optimize: %v", err)
		}
		want, err := eval.Eval(naive, st)
		if err != nil {
			d.Fatalf(t, "naive plan: %v", err)
		}
		got, err := eval.Eval(res.Plan, st)
		if err != nil {
			d.Fatalf(t, "optimized plan: %v", err)
		}
		if !value.Equal(want, got, 1e-9) {
			d.Fatalf(t, "the optimized plan computes %s, the naive plan %s", value.Format(got), value.Format(want))
		}
		t.Logf("%s: optimized in %v (%s)", kernel, res.Time, res.StopReason)
		var sb strings.Builder
		res.Explain(&sb)
		return durations.ReplaceAllString(sb.String(), " _ ms")
	})
}

func argValue(t *testing.T, d *datadriven.TestData, key, def string) string {
	if vals, ok := d.Arg(key); ok && len(vals) == 1 {
		return vals[0]
	}
	return def
}

// parseTensorSpec reads "NAME FORMAT D1xD2x... DENSITY".
func parseTensorSpec(t *testing.T, d *datadriven.TestData, line string) tensorSpec {
	f := strings.Fields(line)
	if len(f) != 4 {
		d.Fatalf(t, "want NAME FORMAT DIMS DENSITY, got %q", line)
	}
	var dims []int64
	for _, x := range strings.Split(f[2], "x") {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			d.Fatalf(t, "dimension %q: %v", x, err)
		}
		dims = append(dims, n)
	}
	density, err := strconv.ParseFloat(f[3], 64)
	if err != nil {
		d.Fatalf(t, "density %q: %v", f[3], err)
	}
	return tensorSpec{f[0], f[1], dims, density}
}

// planShape lists facts about a plan that the kernel tests check.
type planShape struct {
	merges        int  // merge nodes
	logical       int  // singletons without a physical annotation
	computedIters int  // sums over a computed dictionary (not fused)
	letSums       int  // lets whose value is a sum (a hoisted loop)
	hasProductSum bool // a product of two sums (either bound by a let first, the other maybe scaling its body by it)
}

func shapeOf(e *ir.Expr) planShape {
	var s planShape
	sumVars := map[string]bool{} // variables let-bound to a sum
	isSum := func(e *ir.Expr) bool {
		return isSumUnderIfs(e) || e.Op == ir.OpVar && sumVars[e.Name]
	}
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Op == ir.OpLet && n.Args[0].Op == ir.OpSum {
			sumVars[n.Vars[0]] = true
		}
		switch n.Op {
		case ir.OpMerge:
			s.merges++
		case ir.OpSingleton:
			if n.Ann != ir.AnnDense && n.Ann != ir.AnnHash {
				s.logical++
			}
		case ir.OpSum:
			if b := n.Args[1]; b.Op == ir.OpMul && (isSum(b.Args[0]) && b.Args[0].Op == ir.OpVar || isSum(b.Args[1]) && b.Args[1].Op == ir.OpVar) {
				s.hasProductSum = true
			}
			switch n.Args[0].Op {
			case ir.OpRange, ir.OpSubArray, ir.OpGlobal, ir.OpVar:
			default:
				s.computedIters++
			}
		case ir.OpLet:
			if n.Args[0].Op == ir.OpSum || (n.Args[0].Op == ir.OpMul && (n.Args[0].Args[0].Op == ir.OpSum || n.Args[0].Args[1].Op == ir.OpSum)) {
				s.letSums++
			}
		case ir.OpMul:
			if isSum(n.Args[0]) && isSum(n.Args[1]) {
				s.hasProductSum = true
			}
		}
		return true
	})
	return s
}

// isSumUnderIfs reports whether e is a sum, possibly guarded by ifs.
func isSumUnderIfs(e *ir.Expr) bool {
	for e.Op == ir.OpIf && len(e.Args) == 2 {
		e = e.Args[1]
	}
	return e.Op == ir.OpSum
}

// TestKernelShapes checks the shapes the paper shows, independently of the
// goldens' exact text: every storage mapping fused (no loop over a
// computed dictionary, every dictionary physical); MTTKRP merges on l
// (Fig. 1 (d)); BATAX hoists t = sum_k A(i,k)*x(k) into a let before the j
// loop (§6.3); SumMMM multiplies two sums (the sums pushed through the
// product).
func TestKernelShapes(t *testing.T) {
	for _, k := range paperKernels {
		naive, st := setupKernel(t, k.name, 1, k.tensors)
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if err := checkPrintedPlan(res.Plan, st); err != nil {
			t.Errorf("%s: %v", k.name, err)
		}
		s := shapeOf(res.Plan)
		fail := func(format string, args ...any) {
			t.Errorf("%s: %s\n%s", k.name, fmt.Sprintf(format, args...), ir.Format(res.Plan))
		}
		if s.logical > 0 {
			fail("%d dictionaries are still logical", s.logical)
		}
		if s.computedIters > 0 {
			fail("%d loops iterate a computed dictionary (a mapping was not fused)", s.computedIters)
		}
		switch k.name {
		case "mttkrp":
			if s.merges != 1 {
				fail("want one merge, got %d", s.merges)
			}
		case "batax":
			if s.letSums != 1 {
				fail("want the sum over k hoisted into a let, got %d such lets", s.letSums)
			}
		case "summmm":
			if !s.hasProductSum {
				fail("want the sums pushed through the product")
			}
		}
		if !res.Saturated {
			t.Logf("%s: stopped (%s)", k.name, res.StopReason)
		}
	}
}

// TestStorageIndependentKeepsMappings: the storage-independent stage
// optimizes the program around its tensors: each tensor stays a let bound
// to its mapping (built once), and the program reads the bound variable.
func TestStorageIndependentKeepsMappings(t *testing.T) {
	for _, k := range paperKernels {
		naive, st := setupKernel(t, k.name, 1, k.tensors)
		res, err := Optimize(naive, st, Options{StorageIndependent: true, TimeLimit: searchLimits.TimeLimit})
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		bound := map[string]bool{}
		for e := res.Plan; e.Op == ir.OpLet; e = e.Args[1] {
			bound[e.Vars[0]] = true
		}
		for _, ts := range k.tensors {
			if !bound[ts.name] {
				t.Errorf("%s: tensor %s is not bound to its mapping at the top:\n%s", k.name, ts.name, ir.Format(res.Plan))
			}
		}
		if s := shapeOf(res.Plan); s.logical > 0 {
			t.Errorf("%s: %d dictionaries are still logical", k.name, s.logical)
		}
	}
}
