package opt

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// textCost is the model's cost of the plan written as text, over st.
func textCost(t *testing.T, st storage.Store, env map[string]ir.Type, text string) float64 {
	t.Helper()
	e, err := sdql.CompileExpr("plan", []byte(text), env)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(st, GatherStats(st))
	s.reserveNames(e)
	c, err := s.termCost(e, false)
	if err != nil {
		t.Fatal(err)
	}
	return c.Value
}

// spmvScaled is SpMV over CSR with each product scaled by a factor F:
// the loop over row i's entries binds p and j.
const spmvScaled = `
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    A_val(p) * x(j)F }`

// TestInvariantPricedOncePerRun: the engine computes a subterm of a
// loop's body that reads none of the loop's variables and cannot fail
// once per run of the loop (nestvec.go's invariants), so the model
// charges it once per run, not per step. A factor over the row i alone
// (i * i + i % 7) costs its three operations once per row; the same
// factor over the column j (which the loop binds) costs them per entry;
// a factor that reads x at an index over i costs its read once per row
// too (the engine reads an array at an index invariant in its loop once
// per batch of steps); and a division by a variable (it may fail) costs
// the division and the addition per entry.
// Each plan computes what the interpreter computes for it.
func TestInvariantPricedOncePerRun(t *testing.T) {
	check := factorCosts(t, rand.New(rand.NewPCG(7, 8)))
	check("the factor over i", " * (i * i + i % 7)", 1, 3)
	check("the factor over i that reads x", " * (i * i + x(i % 7))", 1, 4)
	check("the factor over i with a division by i + 1", " * (i * i + 7 / (i + 1))", 3, 2)
}

// factorCosts returns check(what, factor, perEntry, perRow), which wants
// the cost factor adds to spmvScaled, over a random 300 x 200 CSR matrix
// of about 3000 entries, to be perEntry per entry and perRow per row;
// each plan computes what the interpreter computes for it.
func factorCosts(t *testing.T, r *rand.Rand) func(what, factor string, perEntry, perRow float64) {
	t.Helper()
	src, _ := examples.Source("spmv")
	naive, st := setupCOO(t, r, "spmv", src, []cooSpec{{"A", "csr", randomSparseCOO(r, []int64{300, 200}, 3000)}})
	env := globalsEnv(naive)
	cost := func(factor string) float64 {
		text := spmvScaled[:len(spmvScaled)-len("F }")] + factor + " }"
		e, err := sdql.CompileExpr("plan", []byte(text), env)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eval.Eval(e, st); err != nil {
			t.Fatalf("%s: %v", factor, err)
		}
		return textCost(t, st, env, text)
	}
	base := cost("")
	const rows = 300.0
	// Per entry: the factor's three operations and the product by it.
	perStep := cost(" * (j * j + j % 7)") - base
	entries := perStep / 4
	if entries < 1000 {
		t.Fatalf("the factor over j adds %g: want about 4 operations for each of the 3000 entries", perStep)
	}
	return func(what, factor string, perEntry, perRow float64) {
		t.Helper()
		got, want := cost(factor)-base, perEntry*entries+perRow*rows
		if math.Abs(got-want) > 0.1 {
			t.Errorf("%s adds %g, want %g (%g entries, %g rows)", what, got, want, entries, rows)
		}
	}
}

// sellSpMV optimizes SpMV over a random 400 x 300 matrix in SELL of about
// 6000 entries, and checks that its plan computes y.
func sellSpMV(t *testing.T, r *rand.Rand) (*ir.Expr, storage.Store, *Result) {
	t.Helper()
	src, _ := examples.Source("spmv")
	naive, st := setupCOO(t, r, "spmv", src, []cooSpec{{"A", "sell", randomSparseCOO(r, []int64{400, 300}, 6000)}})
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	checkSameValue(t, naive, res.Plan, st)
	return naive, st, res
}

// TestInvariantPricingKeepsSell: SpMV over a matrix in SELL, whose
// mapping computes each entry's slot from its row q (q / 8, q % 8, the
// chunk's start) and its step k, costs less than it did when the row's
// arithmetic was charged per entry, and its plan computes y.
func TestInvariantPricingKeepsSell(t *testing.T) {
	_, st, res := sellSpMV(t, rand.New(rand.NewPCG(9, 10)))
	// Without hoisting, the same plan costs each entry's row arithmetic
	// per entry.
	s := newSession(st, GatherStats(st))
	s.reserveNames(res.Plan)
	s.noHoist = true
	flat, err := s.termCost(res.Plan, false)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Cost.Value < 0.75*flat.Value) {
		t.Errorf("the sell plan costs %g with its invariants once per run, %g per entry: want at least a quarter less", res.Cost.Value, flat.Value)
	}
}

// TestSellRowLengthIsMean: the loop over a sell row, 0:A_rlen(q), runs
// the mean row length on average as q runs over the rows, not the
// longest row's: on a matrix with one full row of 300 entries and about
// 5 entries in every other of its 400 rows, the range's estimate is the
// mean (under 10), where the longest row made sell's plan look 26x
// dearer than csr's on wiki-Vote.
func TestSellRowLengthIsMean(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	c := randomSparseCOO(r, []int64{399, 300}, 2000)
	c.Dims[0] = 400
	for i := range c.Coords[0] {
		c.Coords[0][i]++
	}
	for j := int64(0); j < 300; j++ {
		c.Coords[0] = append(c.Coords[0], 0)
		c.Coords[1] = append(c.Coords[1], j)
		c.Vals = append(c.Vals, 1)
	}
	src, _ := examples.Source("spmv")
	naive, st := setupCOO(t, r, "spmv", src, []cooSpec{{"A", "sell", c}})
	cost := textCost(t, st, globalsEnv(naive), "sum(<q, _> in 0:A_dim1) sum(<k, _> in 0:A_rlen(q)) A_val(k)")
	// Per row: a read per step of the inner loop (a range's step costs
	// nothing); the mean row is about 2300 / 400 entries.
	perRow := cost / 400
	if perRow > 10 || perRow < 4 {
		t.Errorf("the sell rows cost %g each, want the mean row length (about 6)", perRow)
	}
}

// TestLetBuiltPerRunCostsBuilder: a dictionary that a loop builds and
// binds by a let inside another loop opens, fills and freezes a builder
// per run of the outer loop (MTTKRP with csr factors: a dense column of
// D built per entry of B ran 10x slower than the merge plan the model
// ranked dearer), so each run costs tempDict besides its inserts; a
// closed build bound the same way runs once at the top and does not.
func TestLetBuiltPerRunCostsBuilder(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	src, _ := examples.Source("spmv")
	naive, st := setupCOO(t, r, "spmv", src, []cooSpec{{"A", "csr", randomSparseCOO(r, []int64{300, 200}, 3000)}})
	env := globalsEnv(naive)
	cost := func(value string) float64 {
		return textCost(t, st, env, "sum(<i, _> in 0:A_len1) let t = "+value+" in { @dense i -> t(i % 7) }")
	}
	const row = "sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(p) }"
	const closed = "sum(<p, j> in A_idx2(A_pos2(3):A_pos2(4))) { @dense j -> A_val(p) }"
	scalar := cost("{ @dense 0 -> 1.0 }")
	if d := cost(row) - scalar; d < 300*tempDict {
		t.Errorf("a row built and bound per run adds %g, want at least a builder per row (%g)", d, 300*tempDict)
	}
	if d := cost(closed) - scalar; d >= tempDict {
		t.Errorf("a closed build bound by a let adds %g, want less than one builder (%g)", d, tempDict)
	}
}

// TestStridedReadIndexPricedOncePerRun: a read at an index that steps by
// a constant in its loop (affine in the loop's lane: a range's key or an
// array's position) costs the read per step and its index arithmetic
// once per run, as the engine's vectorized loops carry such an index as
// a base and a stride. Row i read backwards, A_val(A_pos2(i + 1) - 1 -
// (p - A_pos2(i))), costs a read and the product per entry and its six
// operations and reads once per row, x(2 * (p - A_pos2(i))) a read and
// the product per entry; an index affine in the column j, a value read
// from A_idx2 (not the lane), and one over p * p (not linear) cost their
// arithmetic per entry. Each plan computes what the interpreter computes.
func TestStridedReadIndexPricedOncePerRun(t *testing.T) {
	check := factorCosts(t, rand.New(rand.NewPCG(15, 16)))
	check("a read stepping by -1 in p", " * A_val(A_pos2(i + 1) - 1 - (p - A_pos2(i)))", 2, 6)
	check("a read stepping by 2 in p", " * x(2 * (p - A_pos2(i)))", 2, 3)
	check("an index affine in j", " * x(199 - j)", 3, 0)
	check("an index over p * p", " * x(p * p % 200)", 4, 0)
}

// TestInterleavedRowsPriced: SpMV over SELL, whose rows q = 8c+l of a
// chunk read adjacent columns and values at each step k, is run by the
// engine eight rows at once (one load of the eight lanes' columns, one
// of their values), so the model charges those reads and the columns'
// half extraction an eighth per entry. The same plan with the halves
// swapped (the even lanes read the high half) is no longer adjacent lane
// by lane: it pays each read and extraction in full, 3 * 7/8 more per
// entry. Both plans run in the interpreter; the first computes y.
func TestInterleavedRowsPriced(t *testing.T) {
	naive, st, res := sellSpMV(t, rand.New(rand.NewPCG(17, 18)))
	text := ir.Format(res.Plan)
	swapped := strings.NewReplacer("% 4294967296", "/ 4294967296", "/ 4294967296", "% 4294967296").Replace(text)
	if swapped == text {
		t.Fatalf("the sell plan reads no halves:\n%s", text)
	}
	env := globalsEnv(naive)
	e, err := sdql.CompileExpr("plan", []byte(swapped), env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eval.Eval(e, st); err != nil {
		t.Fatal(err)
	}
	entries := 0.0
	for _, n := range st["A_rlen"].(*storage.Array).I {
		entries += float64(n)
	}
	got := textCost(t, st, env, swapped) - textCost(t, st, env, text)
	if want := 3 * (1 - 1.0/interH) * entries; math.Abs(got-want) > 1e-3*want {
		t.Errorf("the plan with its halves swapped costs %g more, want %g (%g entries):\n%s", got, want, entries, text)
	}
}
