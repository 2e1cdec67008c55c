package opt

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/storel/storel/engine"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

var (
	calibrate        = flag.Bool("opt.calibrate", false, "TestCalibrate: run the calibration plans in the engine and fit the cost coefficients")
	calibrateRounds  = flag.Int("opt.calibrate.rounds", 7, "TestCalibrate: timed rounds per plan (the median is fitted)")
	calibrateFastest = flag.Bool("opt.calibrate.fastest", false, "TestCalibrate: fit each plan's fastest round, not its median (on a loaded machine, the round least slowed by the other work)")
	calibrateFree    = flag.String("opt.calibrate.free", "", "TestCalibrate: comma-separated coefficients to fit that are otherwise held (costScalarOp, ...)")
	calibrateData    = flag.String("opt.calibrate.data", "../../shared/data", "TestCalibrate: the directory of the real matrices and tensors")
	calibrateOnly    = flag.String("opt.calibrate.only", "", "TestCalibrate: comma-separated coefficients to fit, the others held at their values (default: every coefficient the plans use, but the ratios of BenchmarkLayouts)")
	calibrateLevels  = flag.String("opt.calibrate.levels", "group", "TestCalibrate: group (a level of model/time per group, fitted with the coefficients: the fit ranks each group's plans) or one (one level for all)")
	calibrateAll     = flag.Bool("opt.calibrate.all", false, "TestCalibrate: fit every candidate plan, not only the search's plans")
)

// modelCoefs are the cost model's coefficients, by name, in the order the
// calibration reports them.
var modelCoefs = []struct {
	name string
	p    *float64
}{
	{"costScalarOp", &costScalarOp}, {"costCall", &costCall},
	{"iterRange", &iterRange}, {"iterArray", &iterArray}, {"iterHash", &iterHash}, {"iterStored", &iterStored},
	{"loopRun", &loopRun}, {"mergeRun", &mergeRun}, {"loopRerun", &loopRerun},
	{"lookupArray", &lookupArray}, {"lookupHash", &lookupHash},
	{"insertDense", &insertDense}, {"insertHash", &insertHash}, {"insertRow", &insertRow}, {"insertScatter", &insertScatter},
	{"mergeStep", &mergeStep}, {"tempDict", &tempDict}, {"loopCall", &loopCall},
	{"liftRun", &liftRun},
}

// planTerms splits the model's cost of a physical plan by coefficient:
// term k is the plan's cost with coefficient k at 1 and the others at 0.
// The cost is linear in the coefficients, so the plan's cost is the sum
// of coefficient times term.
func planTerms(plan *ir.Expr, st storage.Store, stats *Stats) ([]float64, error) {
	saved := make([]float64, len(modelCoefs))
	for i, c := range modelCoefs {
		saved[i] = *c.p
	}
	defer func() {
		for i, c := range modelCoefs {
			*c.p = saved[i]
		}
	}()
	terms := make([]float64, len(modelCoefs))
	for k := range modelCoefs {
		for i, c := range modelCoefs {
			*c.p = 0
			if i == k {
				*c.p = 1
			}
		}
		s := newSession(st, stats)
		s.reserveNames(plan)
		cost, err := s.termCost(plan, false)
		if err != nil {
			return nil, err
		}
		terms[k] = cost.Value
	}
	return terms, nil
}

// currentCoefs are the model's coefficients as they are.
func currentCoefs() []float64 {
	c := make([]float64, len(modelCoefs))
	for k, m := range modelCoefs {
		c[k] = *m.p
	}
	return c
}

// modelCost is the cost of a plan with terms under the coefficients c.
func modelCost(terms, c []float64) float64 {
	v := 0.0
	for k := range terms {
		v += terms[k] * c[k]
	}
	return v
}

// fitNonNeg fits coefficients c >= 0 so that modelCost(terms[i], c) is
// close to times[i] in ratio: it minimizes the squares of log(model/time),
// so that a plan ten times too cheap counts as much as one ten times too
// dear, whatever its time. Gauss-Newton: each step solves the linearized
// problem by weightedNonNeg. Coefficients not free keep their value in c.
func fitNonNeg(terms [][]float64, times []float64, free []bool, c []float64) []float64 {
	c = slices.Clone(c)
	logErr := func(c []float64) float64 {
		e := 0.0
		for i, row := range terms {
			l := math.Log(max(modelCost(row, c), 1e-9) / times[i])
			e += l * l
		}
		return e
	}
	w, y := make([]float64, len(terms)), make([]float64, len(terms))
	for range 100 {
		// log(a·c') ≈ log m + (a·c' - m)/m: fit a·c' to m(1 + log(t/m))
		// with weight 1/m².
		for i, row := range terms {
			m := max(modelCost(row, c), 1e-9)
			w[i], y[i] = 1/(m*m), m*(1+math.Log(times[i]/m))
		}
		next := weightedNonNeg(terms, y, w, free, c)
		// Halve the step until the error does not grow.
		step, before := 1.0, logErr(c)
		for ; step > 1e-3; step /= 2 {
			try := slices.Clone(c)
			for k := range try {
				try[k] += step * (next[k] - c[k])
			}
			if logErr(try) <= before {
				c = try
				break
			}
		}
		if step <= 1e-3 {
			break
		}
	}
	return c
}

// fitWithin fits coefficients c >= 0 so that within each group the
// model's ratios between plans are the clock's: it minimizes the squares
// of log(model/time) less their mean over the plan's group, each group's
// level free. The plans of a group compute the same thing, and the model
// is there to rank them; a level per group (one group: a unit for all)
// keeps the misfit of a whole kernel (TTM priced at a tenth of its
// clock) from moving the coefficients that rank plans, and the held
// coefficients fix ratios, not a time. Gauss-Newton on the centered
// residuals, each step solved by nonNegSolve, halved until the error
// does not grow. Coefficients not free keep their value in c.
func fitWithin(terms [][]float64, times []float64, group []int, free []bool, c []float64) []float64 {
	c = slices.Clone(c)
	for range 100 {
		r, jac := centered(terms, times, group, free, c)
		before := dot(r, r)
		// Minimize |r + J(c' - c)|²: H c' = H c - Jᵀr.
		n := len(c)
		h := make([][]float64, n)
		g := make([]float64, n)
		for k := range h {
			h[k] = make([]float64, n)
		}
		for i := range r {
			for k := range c {
				if !free[k] {
					continue
				}
				g[k] -= jac[i][k] * r[i]
				for j := range c {
					if free[j] {
						h[k][j] += jac[i][k] * jac[i][j]
					}
				}
			}
		}
		for k := range c {
			for j := range c {
				g[k] += h[k][j] * c[j]
			}
		}
		next := nonNegSolve(h, g, free, c)
		after := before
		for step := 1.0; step > 1e-3; step /= 2 {
			try := slices.Clone(c)
			for k := range try {
				try[k] += step * (next[k] - c[k])
			}
			if r, _ := centered(terms, times, group, free, try); dot(r, r) <= before {
				c, after = try, dot(r, r)
				break
			}
		}
		if before-after <= 1e-14*before {
			break
		}
	}
	return c
}

// centered returns each plan's log(model/time) and its derivatives by
// the free coefficients, less their means over the plan's group.
func centered(terms [][]float64, times []float64, group []int, free []bool, c []float64) ([]float64, [][]float64) {
	r := make([]float64, len(terms))
	jac := make([][]float64, len(terms))
	sum, dsum, count := map[int]float64{}, map[int][]float64{}, map[int]float64{}
	for i, row := range terms {
		m := max(modelCost(row, c), 1e-9)
		r[i] = math.Log(m / times[i])
		jac[i] = make([]float64, len(c))
		for k := range c {
			if free[k] {
				jac[i][k] = row[k] / m
			}
		}
		g := group[i]
		if dsum[g] == nil {
			dsum[g] = make([]float64, len(c))
		}
		sum[g] += r[i]
		count[g]++
		for k := range c {
			dsum[g][k] += jac[i][k]
		}
	}
	for i := range r {
		g := group[i]
		r[i] -= sum[g] / count[g]
		for k := range c {
			jac[i][k] -= dsum[g][k] / count[g]
		}
	}
	return r, jac
}

func dot(a, b []float64) float64 {
	v := 0.0
	for i := range a {
		v += a[i] * b[i]
	}
	return v
}

// groupLevels is each group's level after a fit: the geometric mean of
// model/time over its plans.
func groupLevels(terms [][]float64, times []float64, group []int, c []float64) map[int]float64 {
	sum, count := map[int]float64{}, map[int]float64{}
	for i, row := range terms {
		sum[group[i]] += math.Log(max(modelCost(row, c), 1e-9) / times[i])
		count[group[i]]++
	}
	out := map[int]float64{}
	for g := range sum {
		out[g] = math.Exp(sum[g] / count[g])
	}
	return out
}

// coefErrors is how well the fit determines each free coefficient: its
// standard error, from the residuals of the fit (less their group's
// level) and the sensitivity of log model to each coefficient (the
// Gauss-Newton covariance), and the correlations of the estimates. ok is
// false where the coefficients are not independent (the plans cannot
// tell them apart at all).
func coefErrors(terms [][]float64, times []float64, group []int, free []bool, c []float64) (se []float64, corr [][]float64, ok bool) {
	var idx []int // the unknowns: the free coefficients
	for k := range c {
		if free[k] {
			idx = append(idx, k)
		}
	}
	r, jac := centered(terms, times, group, free, c)
	levels := map[int]bool{}
	for _, g := range group {
		levels[g] = true
	}
	se = make([]float64, len(c))
	for k := range se {
		se[k] = math.NaN()
	}
	dof := len(terms) - len(idx) - len(levels)
	if dof <= 0 || len(idx) == 0 {
		return se, nil, false
	}
	h := make([][]float64, len(idx))
	for a, k := range idx {
		h[a] = make([]float64, len(idx))
		for b, j := range idx {
			for i := range jac {
				h[a][b] += jac[i][k] * jac[i][j]
			}
		}
	}
	inv, ok := invert(h)
	if !ok {
		return se, nil, false
	}
	sigma2 := dot(r, r) / float64(dof)
	corr = make([][]float64, len(c))
	for a, k := range idx {
		se[k] = math.Sqrt(sigma2 * inv[a][a])
		corr[k] = make([]float64, len(c))
		for b, j := range idx {
			corr[k][j] = inv[a][b] / math.Sqrt(inv[a][a]*inv[b][b])
		}
	}
	return se, corr, true
}

// invert inverts a small symmetric matrix by Gauss-Jordan elimination
// with partial pivoting; ok is false where it is singular (a pivot below
// 1e-12 of the largest diagonal entry).
func invert(m [][]float64) ([][]float64, bool) {
	n := len(m)
	a := make([][]float64, n)
	scale := 0.0
	for i := range m {
		a[i] = make([]float64, 2*n)
		copy(a[i], m[i])
		a[i][n+i] = 1
		scale = max(scale, math.Abs(m[i][i]))
	}
	for col := range n {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) <= 1e-12*scale {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		pv := a[col][col]
		for j := range a[col] {
			a[col][j] /= pv
		}
		for r := range n {
			if r == col || a[r][col] == 0 {
				continue
			}
			f := a[r][col]
			for j := range a[r] {
				a[r][j] -= f * a[col][j]
			}
		}
	}
	out := make([][]float64, n)
	for i := range a {
		out[i] = a[i][n:]
	}
	return out, true
}

// weightedNonNeg minimizes sum w[i] (terms[i]·c - y[i])² over c >= 0, the
// coefficients not free held at their values in c, by coordinate descent
// on the normal equations (a dozen unknowns).
func weightedNonNeg(terms [][]float64, y, w []float64, free []bool, c []float64) []float64 {
	n := len(c)
	c = slices.Clone(c)
	h := make([][]float64, n)
	for k := range h {
		h[k] = make([]float64, n)
	}
	g := make([]float64, n)
	for i, row := range terms {
		r := y[i]
		for k := range row {
			if !free[k] {
				r -= row[k] * c[k]
			}
		}
		for k := range row {
			if !free[k] {
				continue
			}
			g[k] += w[i] * row[k] * r
			for j := range row {
				if free[j] {
					h[k][j] += w[i] * row[k] * row[j]
				}
			}
		}
	}
	return nonNegSolve(h, g, free, c)
}

// nonNegSolve minimizes c·H·c/2 - g·c over c >= 0, the coefficients not
// free held at their values in c (g already less their part), by
// coordinate descent.
func nonNegSolve(h [][]float64, g []float64, free []bool, c []float64) []float64 {
	c = slices.Clone(c)
	for range 20000 {
		moved := 0.0
		for k := range c {
			if !free[k] || h[k][k] == 0 {
				continue
			}
			grad := -g[k]
			for j := range c {
				if free[j] {
					grad += h[k][j] * c[j]
				}
			}
			next := max(0, c[k]-grad/h[k][k])
			moved = max(moved, math.Abs(next-c[k])/max(math.Abs(c[k]), 1e-9))
			c[k] = next
		}
		if moved < 1e-10 {
			break
		}
	}
	return c
}

// TestFitNonNeg: the fit recovers known coefficients from exact costs,
// holds a fixed one, and clamps at zero one that the data would make
// negative.
func TestFitNonNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	want := []float64{2, 0.5, 7, 3}
	var terms [][]float64
	var times []float64
	for range 40 {
		row := []float64{r.Float64() * 100, r.Float64() * 1000, r.Float64() * 10, r.Float64()}
		terms = append(terms, row)
		times = append(times, modelCost(row, want))
	}
	got := fitNonNeg(terms, times, []bool{true, true, true, false}, []float64{1, 1, 1, 3})
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-6*want[k] {
			t.Fatalf("coefficient %d: fitted %g, want %g", k, got[k], want[k])
		}
	}
	// Times that only a negative second coefficient would explain
	// exactly: 2u - v/2 with v <= u.
	terms, times = nil, nil
	for range 40 {
		u := 1 + r.Float64()*100
		v := u * r.Float64()
		terms = append(terms, []float64{u, v})
		times = append(times, 2*u-v/2)
	}
	got = fitNonNeg(terms, times, []bool{true, true}, []float64{1, 1})
	if got[1] != 0 || got[0] <= 1.5 || got[0] >= 2 {
		t.Fatalf("fitted %v where the exact fit is (2, -0.5), want (between 1.5 and 2, 0)", got)
	}
}

// TestFitWithin: with a level per group free, the fit recovers the
// coefficients in the ratios a held one sets from times that take a
// quarter of a nanosecond per unit in one group and ten in another;
// fitNonNeg, whose unit is the nanosecond everywhere, would have to move
// the free ones to make up for the levels.
func TestFitWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	want := []float64{2, 0.5, 7, 3}
	var terms [][]float64
	var times []float64
	var group []int
	for i := range 40 {
		row := []float64{r.Float64() * 100, r.Float64() * 1000, r.Float64() * 10, r.Float64() * 50}
		terms = append(terms, row)
		level := []float64{4, 0.1}[i%2]
		times = append(times, modelCost(row, want)/level)
		group = append(group, i%2)
	}
	free := []bool{true, true, true, false}
	got := fitWithin(terms, times, group, free, []float64{1, 1, 1, 3})
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-4*want[k] {
			t.Fatalf("coefficient %d: fitted %g, want %g", k, got[k], want[k])
		}
	}
	if l := groupLevels(terms, times, group, got); math.Abs(l[0]-4) > 1e-3 || math.Abs(l[1]-0.1) > 1e-4 {
		t.Fatalf("levels %v, want 4 and 0.1 units a ns", l)
	}
	if c := fitNonNeg(terms, times, free, []float64{1, 1, 1, 3}); math.Abs(c[0]-want[0]) < 0.1*want[0] {
		t.Fatalf("without the levels the fit also recovers %v: the test shows nothing", c)
	}
}

// TestCoefErrors: the standard errors come out small where each
// coefficient has terms of its own, and the fit reports as not
// determined two coefficients whose terms every plan has in the same
// ratio, or nearly so.
func TestCoefErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	want := []float64{2, 0.5, 7}
	free := []bool{true, true, false}
	gen := func(tied float64) ([][]float64, []float64) {
		var terms [][]float64
		var times []float64
		for range 40 {
			a := r.Float64() * 100
			b := a*10*tied + (1-tied)*r.Float64()*1000
			row := []float64{a, b, r.Float64() * 200}
			terms = append(terms, row)
			// 5% noise in ratio.
			times = append(times, modelCost(row, want)*math.Exp(0.05*r.NormFloat64()))
		}
		return terms, times
	}
	one := make([]int, 40)
	terms, times := gen(0)
	c := fitWithin(terms, times, one, free, []float64{1, 1, 7})
	se, corr, ok := coefErrors(terms, times, one, free, c)
	for k := range 2 {
		if !ok || !(se[k] < 0.1*c[k]) || determination(k, c, se, corr, ok) != "yes" {
			t.Fatalf("independent terms: coefficient %d fitted %g ± %g (%v): %s", k, c[k], se[k], ok, determination(k, c, se, corr, ok))
		}
	}
	terms, times = gen(0.999)
	c = fitWithin(terms, times, one, free, []float64{1, 1, 7})
	se, corr, ok = coefErrors(terms, times, one, free, c)
	for k := range 2 {
		if d := determination(k, c, se, corr, ok); strings.HasPrefix(d, "yes") || !strings.Contains(d, "correlated") && ok {
			t.Fatalf("nearly tied terms: coefficient %d fitted %g ± %g: %s", k, c[k], se[k], d)
		}
	}
	if _, ok := invert([][]float64{{1, 2}, {2, 4}}); ok {
		t.Fatal("inverted a singular matrix")
	}
}

// calibCase is one program over one choice of formats; its candidate
// plans are the calibration's rows.
type calibCase struct {
	group, label string // the cases of a group compute the same thing
	naive        *ir.Expr
	st           storage.Store
	// alts are plans of the search's kind that it does not return, by
	// label, run and fitted with its own: the same loops in another
	// order, whose clock the model must rank.
	alts map[string]string
}

// calibPlan is one plan of a case, its model terms and its times.
type calibPlan struct {
	c        *calibCase
	label    string
	terms    []float64
	kernel   *engine.Kernel
	reps     int
	rounds   []float64 // ns per run, one per round
	median   float64
	tooSlow  bool
	modelNow float64 // the cost under the coefficients as they are
}

// MTTKRP's plans with B csf, C csr and D dense: the fiber of B walked
// again per entry j of C's row, or each fiber's products with D's rows
// (its transpose, built once) added into a row of j.
const (
	mttkrpFiberPerJ = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
      let t8 =
        sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
          B_val(p3) * D_val(j * D_len2 + l)
      in
      { @dense j -> C_val(p4) * t8 } }`
	// With D csr: each (i, k) fiber merged with D's row j per entry j of
	// C's row, or D's row j walked and each of its keys sought in the
	// fiber.
	mttkrpMergeRowOfD = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
      merge(<p5, p3, _> in <D_idx2(D_pos2(j):D_pos2(j + 1)), B_idx3(B_pos3(p2):B_pos3(p2 + 1))>)
        { @dense j -> B_val(p3) * C_val(p4) * D_val(p5) } }`
	mttkrpSeekInFiber = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
      sum(<p5, l1> in D_idx2(D_pos2(j):D_pos2(j + 1)))
        { @dense j -> C_val(p4) * D_val(p5) * (merge(<p3, _, _> in <B_idx3(B_pos3(p2):B_pos3(p2 + 1)), l1:l1 + 1>)
          B_val(p3)) } }`
	// An element-wise product of B (COO, walked as runs of rows) with a
	// CSR A read at B's keys: one merge of the two rows per row, a seek
	// into A's row per entry of B, or A's row built into a dense
	// temporary per row and read per entry: the same entries, and runs
	// per row or per entry.
	ewiseRowMerge = `sum(<p0, i> in runs(B_idx1(B_pos1(0):B_pos1(1))))
  { @dense i -> merge(<p1, p2, j> in <B_idx2(p0:runend(B_idx1, p0, B_pos1(1))), A_idx2(A_pos2(i):A_pos2(i + 1))>)
    { @dense j -> B_val(p1) * A_val(p2) } }`
	ewiseSeeks = `sum(<p0, i> in runs(B_idx1(B_pos1(0):B_pos1(1))))
  { @dense i -> sum(<p1, j> in B_idx2(p0:runend(B_idx1, p0, B_pos1(1))))
    { @dense j -> B_val(p1) * (merge(<p2, u, i2> in <A_idx2(A_pos2(i):A_pos2(i + 1)), j:j + 1>) A_val(p2)) } }`
	ewiseRowOfA = `sum(<p0, i> in runs(B_idx1(B_pos1(0):B_pos1(1))))
  { @dense i -> let t2 =
      sum(<p2, i2> in A_idx2(A_pos2(i):A_pos2(i + 1)))
        { @dense i2 -> A_val(p2) }
    in
    sum(<p1, j> in B_idx2(p0:runend(B_idx1, p0, B_pos1(1))))
      { @dense j -> B_val(p1) * t2(j) } }`
	mttkrpRowsOfD = `let t1 =
  sum(<k3, _> in 0:D_len2)
    { @dense k3 -> sum(<j1, _> in 0:D_len1)
      { @dense j1 -> D_val(D_len2 * j1 + k3) } }
in
sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    let t4 =
      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
        sum(<k1, v1> in t1(l))
          { @dense k1 -> B_val(p3) * v1 }
    in
    sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
      { @dense j -> C_val(p4) * t4(j) } }`
)

// ewiseProgram is B's entries times A's at the same keys.
const ewiseProgram = `CREATE TENSOR C AS
  sum(<(i,j), b> in B) { i -> { j -> b * A(i)(j) } };`

// calibCases are the calibration's programs: SpMV and BATAX over two real
// matrices in every matrix format, SpMV over a generated matrix with few
// non-empty rows (where dcsr should win), and the other paper kernels over
// generated data in several formats.
func calibCases(t *testing.T) []*calibCase {
	r := rand.New(rand.NewPCG(11, 12))
	var out []*calibCase
	add := func(group, label, kernel string, specs ...cooSpec) {
		src, ok := examples.Source(kernel)
		if !ok {
			t.Fatalf("no kernel %s", kernel)
		}
		naive, st := setupCOO(t, r, kernel, src, specs)
		out = append(out, &calibCase{group: group, label: label, naive: naive, st: st})
	}
	matrices := []string{"bcsstk16", "wiki-Vote"}
	for _, m := range matrices {
		c, err := storage.ReadTensorFile(*calibrateData+"/"+m+".mtx.gz", storage.ReadOptions{})
		if err != nil {
			t.Skipf("real data: %v", err)
		}
		for _, kernel := range []string{"spmv", "batax"} {
			for _, f := range []string{"csr", "dcsr", "csc", "coo", "hash", "sell"} {
				add(kernel+" "+m, f, kernel, cooSpec{"A", f, c})
			}
		}
	}
	// 20,000 rows of which about 1% hold entries.
	hyper := &storage.COO{Dims: []int64{20000, 2000}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := int64(0); i < 20000; i += 97 {
		for j := int64(0); j < 2000; j += 1 + r.Int64N(40) {
			hyper.Coords[0] = append(hyper.Coords[0], i)
			hyper.Coords[1] = append(hyper.Coords[1], j)
			hyper.Vals = append(hyper.Vals, float64(r.IntN(9)+1))
		}
	}
	for _, f := range []string{"csr", "dcsr", "coo", "hash"} {
		add("spmv hypersparse", f, "spmv", cooSpec{"A", f, hyper})
	}
	mA, mB := randomCOO(r, []int64{400, 400}, 0.02), randomCOO(r, []int64{400, 400}, 0.02)
	for _, f := range []string{"csr", "dcsr", "hash"} {
		add("mmm 400", f, "mmm", cooSpec{"A", f, mA}, cooSpec{"B", f, mB})
	}
	for _, f := range [][2]string{{"csc", "csr"}, {"csr", "csr"}, {"coo", "csr"}} {
		add("summmm 400", f[0]+"/"+f[1], "summmm", cooSpec{"A", f[0], mA}, cooSpec{"B", f[1], mB})
	}
	t3 := randomCOO(r, []int64{60, 80, 100}, 0.01)
	tB := randomCOO(r, []int64{20, 100}, 0.3)
	add("ttm", "csf/csc", "ttm", cooSpec{"A", "csf", t3}, cooSpec{"B", "csc", tB})
	add("ttm", "coo/csc", "ttm", cooSpec{"A", "coo", t3}, cooSpec{"B", "csc", tB})
	mC, mD := randomCOO(r, []int64{80, 16}, 0.5), randomCOO(r, []int64{16, 100}, 0.5)
	add("mttkrp", "csf", "mttkrp", cooSpec{"B", "csf", t3}, cooSpec{"C", "csr", mC}, cooSpec{"D", "csr", mD})
	add("mttkrp", "coo", "mttkrp", cooSpec{"B", "coo", t3}, cooSpec{"C", "csr", mC}, cooSpec{"D", "csr", mD})
	// MTTKRP as the e2e experiment runs it, over the real 3-tensors
	// (fibers of one or two entries) with factors of rank 25 and density
	// 1/32, D in each layout: a merge of each fiber with a row of D, a
	// dense read per entry, a probe, or a walk of D's column.
	for _, m := range []string{"wordnet30_synset_ptr_synset", "orghs_gene_go_evidence_direct"} {
		b, err := storage.ReadTensorFile(*calibrateData+"/"+m+".tns.gz", storage.ReadOptions{})
		if err != nil {
			t.Skipf("real data: %v", err)
		}
		c, d := randomCOO(r, []int64{b.Dims[1], 25}, 1.0/32), randomCOO(r, []int64{25, b.Dims[2]}, 1.0/32)
		for _, f := range []string{"csr", "dense", "csc", "hash"} {
			add("mttkrp "+m[:strings.IndexAny(m, "3_")], "D "+f, "mttkrp", cooSpec{"B", "csf", b}, cooSpec{"C", "csr", c}, cooSpec{"D", f, d})
		}
		// With D dense: the fiber walked again per entry of C's row,
		// and D's transpose built once and added per fiber.
		out[len(out)-3].alts = map[string]string{"fiber per j": mttkrpFiberPerJ, "rows of D": mttkrpRowsOfD}
		// With D csr: on wordnet, whose rows of D are long, the walk of
		// D's row takes seconds a run.
		out[len(out)-4].alts = map[string]string{"merge": mttkrpMergeRowOfD}
		if m == "orghs_gene_go_evidence_direct" {
			out[len(out)-4].alts["seek in fiber"] = mttkrpSeekInFiber
		}
	}
	// MTTKRP with dense factors of rank 16 over fibers of about one entry
	// (as orghs): the rank lifted above B's row, or inside each fiber.
	short := randomCOO(r, []int64{2000, 1500, 20}, 0.001)
	dC, dD := randomCOO(r, []int64{1500, 16}, 1), randomCOO(r, []int64{16, 20}, 1)
	for _, f := range []string{"csf", "coo", "hash"} {
		add("mttkrp dense", f, "mttkrp", cooSpec{"B", f, short}, cooSpec{"C", "dense", dC}, cooSpec{"D", "dense", dD})
		out[len(out)-1].alts = map[string]string{"rank inside": mttkrpRank[f].inside}
	}
	// The element-wise product over 2,000 x 2,000, A with 20 entries a
	// row, B with 100: its plans differ in runs (mergeRun, tempDict)
	// against the same entries, which the MTTKRP groups cannot tell
	// from their level.
	ea, eb := randomCOO(r, []int64{2000, 2000}, 0.01), randomCOO(r, []int64{2000, 2000}, 0.05)
	naive, st := setupCOO(t, r, "ewise", []byte(ewiseProgram), []cooSpec{{"A", "csr", ea}, {"B", "coo", eb}})
	out = append(out, &calibCase{group: "ewise 2000", label: "A csr, B coo", naive: naive, st: st,
		alts: map[string]string{"row merge": ewiseRowMerge, "seeks": ewiseSeeks, "row of A": ewiseRowOfA}})
	// SumMMM over bcsstk16 csr and a factor of 250 columns csc: B's few
	// entries scattered into its row sums (the search's plan), or A's
	// many into its column sums.
	a, err := storage.ReadTensorFile(*calibrateData+"/bcsstk16.mtx.gz", storage.ReadOptions{})
	if err != nil {
		t.Skipf("real data: %v", err)
	}
	add("summmm bcsstk16", "csr/csc", "summmm", cooSpec{"A", "csr", a}, cooSpec{"B", "csc", randomCOO(r, []int64{a.Dims[0], 250}, 1.0/32)})
	out[len(out)-1].alts = map[string]string{"A scattered": summmmPlacements[0], "B scattered": summmmPlacements[1]}
	return out
}

// freeCoefs says which coefficients (names) the fit may move: one that
// at least three plans use, not held, and among only where only is given.
// A plan uses a coefficient whose term is above one unit per 10 µs of
// its time (times, ns): below, it is the epsilon every node costs.
func freeCoefs(names []string, terms [][]float64, times []float64, held map[string]bool, only []string) []bool {
	free := make([]bool, len(names))
	for k, name := range names {
		n := 0
		for i, row := range terms {
			if row[k] > 1e-4*times[i] {
				n++
			}
		}
		free[k] = n >= 3 && !held[name] && (only == nil || slices.Contains(only, name))
	}
	return free
}

// TestFreeCoefs: a coefficient whose term is the nodes' epsilon in every
// plan, one used by two plans only, a held one and one left out of only
// are not fitted.
func TestFreeCoefs(t *testing.T) {
	names := []string{"used", "epsilon", "twice", "held", "other"}
	terms := [][]float64{{1e4, 5, 1e4, 1e4, 1e4}, {1e4, 5, 1e4, 1e4, 1e4}, {1e4, 5, 0, 1e4, 1e4}, {1e4, 5, 0, 1e4, 1e4}}
	times := []float64{1e7, 1e7, 1e7, 1e7}
	held := map[string]bool{"held": true}
	if got, want := freeCoefs(names, terms, times, held, nil), []bool{true, false, false, false, true}; !slices.Equal(got, want) {
		t.Errorf("free %v, want %v", got, want)
	}
	if got, want := freeCoefs(names, terms, times, held, []string{"used", "held"}), []bool{true, false, false, false, false}; !slices.Equal(got, want) {
		t.Errorf("only used and held: free %v, want %v", got, want)
	}
}

// fittedLabel reports whether the calibration runs and fits the plans of
// this label: the search's plans and the alternatives of their kind. The
// naive plans and the programs as written spend most of their time
// building whole tensors as nested dictionaries, which the model prices
// by terms that do not fit the loop plans, and take seconds a run
// (-opt.calibrate.all runs and fits them too).
func fittedLabel(label string) bool {
	return label != "naive" && label != "as written" || *calibrateAll
}

// TestCalibrate fits the cost coefficients of cost.go to the engine. It
// optimizes each calibration case, takes every candidate plan the
// optimizer compares (its own, the naive plan, the program as written),
// splits each plan's model cost into terms per coefficient, runs it in
// the engine on one thread, and fits the coefficients by non-negative
// least squares on the ratio model/time of the median times. It reports
// the fitted coefficients (and their spread when each round is fitted
// alone), each plan's residual, and per group of cases whether the plan
// the model ranks first is the fastest. Run with
//
//	go test ./opt -run Calibrate -opt.calibrate -v
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -opt.calibrate")
	}
	var plans []*calibPlan
	for _, c := range calibCases(t) {
		res, err := Optimize(c.naive, c.st, searchLimits)
		if err != nil {
			t.Fatalf("%s %s: %v", c.group, c.label, err)
		}
		seen := map[string]bool{}
		for _, cand := range res.Candidates {
			key := ir.Format(cand.Plan)
			if seen[key] || !fittedLabel(cand.Label) {
				continue
			}
			seen[key] = true
			terms, err := planTerms(cand.Plan, c.st, res.Stats)
			if err != nil {
				t.Fatal(err)
			}
			k, err := engine.Compile(cand.Plan, engine.SchemaOf(c.st), engine.Options{Threads: 1})
			if err != nil {
				t.Fatalf("%s %s %s: %v", c.group, c.label, cand.Label, err)
			}
			plans = append(plans, &calibPlan{c: c, label: cand.Label, terms: terms, kernel: k, modelNow: cand.Cost.Value})
		}
		for _, label := range slices.Sorted(maps.Keys(c.alts)) {
			text := c.alts[label]
			env := map[string]ir.Type{}
			for name, info := range engine.SchemaOf(c.st) {
				env[name] = info.Type()
			}
			plan, err := sdql.CompileExpr(label+".sdql", []byte(text), env)
			if err != nil {
				t.Fatalf("%s %s %s: %v", c.group, c.label, label, err)
			}
			if key := ir.Format(plan); seen[key] {
				continue
			} else {
				seen[key] = true
			}
			terms, err := planTerms(plan, c.st, res.Stats)
			if err != nil {
				t.Fatal(err)
			}
			k, err := engine.Compile(plan, engine.SchemaOf(c.st), engine.Options{Threads: 1})
			if err != nil {
				t.Fatalf("%s %s %s: %v", c.group, c.label, label, err)
			}
			plans = append(plans, &calibPlan{c: c, label: label, terms: terms, kernel: k, modelNow: modelCost(terms, currentCoefs())})
		}
	}
	run := func(p *calibPlan, reps int) float64 {
		// The garbage of the plans before is not this plan's.
		runtime.GC()
		start := processCPU()
		for range reps {
			if _, err := p.kernel.Run(p.c.st); err != nil {
				t.Fatalf("%s %s %s: %v", p.c.group, p.c.label, p.label, err)
			}
		}
		return float64(processCPU()-start) / float64(reps)
	}
	// Each round takes at least 10 ms of a plan; a plan slower than
	// 0.3 s runs once.
	for _, p := range plans {
		once := run(p, 1)
		p.reps = max(1, min(2000, int(1e7/max(once, 1))))
		p.tooSlow = once > 3e8
	}
	// Rounds go over every plan in turn, so that a burst of load on the
	// machine falls on every plan's rounds alike.
	for range *calibrateRounds {
		for _, p := range plans {
			if p.tooSlow && len(p.rounds) > 0 {
				continue
			}
			p.rounds = append(p.rounds, run(p, p.reps))
		}
	}
	current := currentCoefs()
	var fitted []*calibPlan
	var terms [][]float64
	var medians []float64
	for _, p := range plans {
		p.median = median(p.rounds)
		if *calibrateFastest {
			p.median = slices.Min(p.rounds)
		}
		fitted = append(fitted, p)
		terms = append(terms, p.terms)
		medians = append(medians, p.median)
	}
	// A coefficient is fitted where at least three plans have its term;
	// the rest keep their values. So do those the fit cannot tell apart
	// from another: a scalar operation and a dense lookup come with
	// nearly every step of an array in these plans (A_val(p) * x(j)),
	// and a hash probe or insert with a step of a hash map, so the fit
	// would put their sum on either side; they keep the ratios
	// BenchmarkLayouts measures. A call (exp, log, ...) is in too few of
	// these plans. With a level per group, a step of an array or a range
	// and an insert into a dense row come with the same plans' every
	// entry too, so the group's level takes them (fitted, iterRange,
	// iterArray and iterHash correlate at 0.99, insertDense sits at zero
	// against insertScatter): they keep their ratios as well, and a hash
	// map's step is fitted against an array's.
	held := map[string]bool{"costScalarOp": true, "costCall": true, "lookupArray": true, "lookupHash": true, "insertHash": true,
		"iterRange": true, "iterArray": true, "insertDense": true}
	for _, name := range strings.Split(*calibrateFree, ",") {
		delete(held, strings.TrimSpace(name))
	}
	var only []string
	if *calibrateOnly != "" {
		only = strings.Split(*calibrateOnly, ",")
	}
	names := make([]string, len(modelCoefs))
	for k, c := range modelCoefs {
		names[k] = c.name
	}
	free := freeCoefs(names, terms, medians, held, only)
	// The plans' groups, each with a level of its own, or one level for
	// all (-opt.calibrate.levels one).
	groups := map[string][]*calibPlan{}
	var order []string
	for _, p := range plans {
		if groups[p.c.group] == nil {
			order = append(order, p.c.group)
		}
		groups[p.c.group] = append(groups[p.c.group], p)
	}
	group := make([]int, len(fitted))
	if *calibrateLevels != "one" {
		for i, p := range fitted {
			group[i] = slices.Index(order, p.c.group)
		}
	}
	fit := fitWithin(terms, medians, group, free, current)
	se, corr, determined := coefErrors(terms, medians, group, free, fit)
	levels := groupLevels(terms, medians, group, fit)
	// The fit of each round alone, for the spread of each coefficient.
	perRound := make([][]float64, len(modelCoefs))
	for r := range *calibrateRounds {
		times := make([]float64, len(fitted))
		for i, p := range fitted {
			times[i] = p.rounds[min(r, len(p.rounds)-1)]
		}
		f := fitWithin(terms, times, group, free, current)
		for k := range f {
			perRound[k] = append(perRound[k], f[k])
		}
	}
	var sb strings.Builder
	stat := "median"
	if *calibrateFastest {
		stat = "fastest"
	}
	fmt.Fprintf(&sb, "calibration: %d plans, %d fitted, %d rounds each (%s fitted), one thread\n", len(plans), len(fitted), *calibrateRounds, stat)
	if *calibrateLevels == "one" {
		fmt.Fprintf(&sb, "one level: model/time %.3g units a ns for every plan, fitted with the coefficients\n\n", levels[0])
	} else {
		fmt.Fprintf(&sb, "a level per group (its model/time, units a ns, in the last table), fitted with the coefficients: the fit ranks each group's plans\n\n")
	}
	fmt.Fprintf(&sb, "%-13s %10s %10s %21s %9s  %s\n", "coefficient", "current", "fitted", "rounds fitted alone", "std err", "determined?")
	for k, c := range modelCoefs {
		if !free[k] {
			fmt.Fprintf(&sb, "%-13s %10.3g %10s\n", c.name, current[k], "(kept)")
			continue
		}
		fmt.Fprintf(&sb, "%-13s %10.3g %10.3g %10.3g..%-9.3g %9.3g  %s\n", c.name, current[k], fit[k], slices.Min(perRound[k]), slices.Max(perRound[k]), se[k], determination(k, fit, se, corr, determined))
	}
	// resid is a plan's model/time over its group's level.
	fmt.Fprintf(&sb, "\n%-18s %-9s %-13s %12s %12s %7s %7s %7s %9s  %s\n", "group", "case", "plan", "time ns", "model", "model/t", "resid", "spread", "before/t", "largest terms (share of the fitted cost)")
	var logErr []float64
	for i, p := range fitted {
		logErr = append(logErr, math.Abs(math.Log(modelCost(p.terms, fit)/p.median/levels[group[i]])))
	}
	for i, p := range plans {
		m := modelCost(p.terms, fit)
		spread := slices.Max(p.rounds) / slices.Min(p.rounds)
		fmt.Fprintf(&sb, "%-18s %-9s %-13s %12.4g %12.4g %7.2f %7.2f %7.2f %9.2f  %s\n", p.c.group, p.c.label, p.label, p.median, m, m/p.median, m/p.median/levels[group[i]], spread, p.modelNow/p.median, mainTerms(p.terms, fit))
	}
	sort.Float64s(logErr)
	fmt.Fprintf(&sb, "\nresiduals (model/time over the level) of the fitted plans: median factor %.2f, 90th percentile %.2f, worst %.2f\n",
		math.Exp(median(logErr)), math.Exp(logErr[len(logErr)*9/10]), math.Exp(logErr[len(logErr)-1]))
	// Per group: the plan each model ranks first against the fastest.
	fmt.Fprintf(&sb, "\n%-18s %-26s %-26s %-26s\n", "group", "fastest", "fitted model's first", "current model's first")
	for _, g := range order {
		ps := groups[g]
		fastest := slices.MinFunc(ps, func(a, b *calibPlan) int { return cmp.Compare(a.median, b.median) })
		first := slices.MinFunc(ps, func(a, b *calibPlan) int { return cmp.Compare(modelCost(a.terms, fit), modelCost(b.terms, fit)) })
		before := slices.MinFunc(ps, func(a, b *calibPlan) int { return cmp.Compare(a.modelNow, b.modelNow) })
		name := func(p *calibPlan) string {
			return fmt.Sprintf("%s %s (%.2fx)", p.c.label, p.label, p.median/fastest.median)
		}
		fmt.Fprintf(&sb, "%-18s %-26s %-26s %-26s\n", g, name(fastest), name(first), name(before))
	}
	// Per group: its level (the geometric mean of model/time over its
	// plans: how far the model is from the clock on the whole kernel)
	// and the residuals within it (what ranks its plans).
	fmt.Fprintf(&sb, "\n%-18s %6s %12s %12s %12s\n", "group", "plans", "model/t", "least resid", "most resid")
	for _, g := range order {
		l, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for _, p := range groups[g] {
			r := modelCost(p.terms, fit) / p.median
			l += math.Log(r)
			lo, hi = min(lo, r), max(hi, r)
		}
		level := math.Exp(l / float64(len(groups[g])))
		fmt.Fprintf(&sb, "%-18s %6d %12.3g %12.2f %12.2f\n", g, len(groups[g]), level, lo/level, hi/level)
	}
	fmt.Print(sb.String())
}

// determination says whether the fit determines coefficient k: within a
// relative standard error of 25%, or not, or at its bound (zero, held
// there by the bound, not the data), and with which other coefficient
// its estimate moves (a correlation beyond ±0.9: the plans price the two
// together).
func determination(k int, fit, se []float64, corr [][]float64, ok bool) string {
	if !ok {
		return "no: the plans' terms are not independent"
	}
	var with []string
	for j, r := range corr[k] {
		if j != k && math.Abs(r) > 0.9 {
			with = append(with, fmt.Sprintf("%s %+.2f", modelCoefs[j].name, r))
		}
	}
	verdict := "yes"
	switch {
	case fit[k] == 0:
		// Held by the bound, not the data.
		verdict = "at zero"
	case se[k] > 0.25*fit[k]:
		verdict = fmt.Sprintf("no (±%.0f%%)", 100*se[k]/fit[k])
	}
	if len(with) > 0 {
		verdict += ", correlated with " + strings.Join(with, ", ")
	}
	return verdict
}

// mainTerms names the terms that make most of a plan's cost under c.
func mainTerms(terms, c []float64) string {
	total := modelCost(terms, c)
	idx := make([]int, len(terms))
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(terms[b]*c[b], terms[a]*c[a]) })
	var parts []string
	for _, k := range idx[:3] {
		if share := terms[k] * c[k] / total; share >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", modelCoefs[k].name, 100*share))
		}
	}
	return strings.Join(parts, ", ")
}

// processCPU is the CPU time, user and system, the process has used in
// nanoseconds: what a plan costs, with its collector's work on other
// threads and without the time other processes take the cores.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestFormatChoiceSpMV: given csr and dcsr for a matrix with no empty row,
// or with one row in ten empty, OptimizeAlternatives picks csr, and rates
// it strictly cheaper, whichever is listed first. The two plans are the
// same nest, but csr's rows are a range where dcsr's are read from an
// index array, and the engine runs csr's nest as one row kernel where
// dcsr adds each row through the builder: on 20,000 x 2,000 with one row
// in ten empty (368,089 entries), csr takes 0.41-0.46 ms and dcsr
// 0.73-1.31 ms (storel run examples/spmv.sdql --tensor A=M.mtx:csr
// --repeat 15 --threads 1 --timings).
func TestFormatChoiceSpMV(t *testing.T) {
	src, _ := examples.Source("spmv")
	for _, emptyEvery := range []int64{0, 10} {
		r := rand.New(rand.NewPCG(5, 6))
		c := &storage.COO{Dims: []int64{3000, 800}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
		for i := range int64(3000) {
			if emptyEvery > 0 && i%emptyEvery == emptyEvery-1 {
				continue
			}
			for j := int64(r.IntN(20)); j < 800; j += 1 + r.Int64N(100) {
				c.Coords[0] = append(c.Coords[0], i)
				c.Coords[1] = append(c.Coords[1], j)
				c.Vals = append(c.Vals, r.NormFloat64())
			}
		}
		for _, order := range [][]string{{"dcsr", "csr"}, {"csr", "dcsr"}} {
			var alts []Alternative
			for _, f := range order {
				naive, st := setupCOO(t, rand.New(rand.NewPCG(1, 1)), "spmv", src, []cooSpec{{"A", f, c}})
				alts = append(alts, Alternative{Label: "A=" + f, Naive: naive, Store: st})
			}
			res, err := OptimizeAlternatives(alts, searchLimits)
			if err != nil {
				t.Fatal(err)
			}
			var csr, dcsr float64
			for i, l := range res.Labels {
				if l == "A=csr" {
					csr = res.Results[i].Cost.Value
				} else {
					dcsr = res.Results[i].Cost.Value
				}
			}
			if res.Labels[res.Best] != "A=csr" || !(csr < dcsr) {
				t.Fatalf("one row in %d empty, order %v: chose %s; cost csr %g, dcsr %g", emptyEvery, order, res.Labels[res.Best], csr, dcsr)
			}
		}
	}
}
