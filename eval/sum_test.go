package eval

import (
	"fmt"
	"math"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// stepsOf evaluates e and returns the number of steps it took.
func stepsOf(t *testing.T, e *ir.Expr, st storage.Store) int64 {
	t.Helper()
	in := newInterp(st, Options{})
	typed(t, e, st)
	if err := in.check(e); err != nil {
		t.Fatal(err)
	}
	if _, err := in.eval(e); err != nil {
		t.Fatal(err)
	}
	return in.steps
}

func TestLetEvaluatesItsValueOnce(t *testing.T) {
	s := sum("i", "x", rng(n(0), n(100)), single(vr("i"), mul(vr("x"), vr("x"))))
	alone := stepsOf(t, s, nil)
	// let (1) + the sum + x + x (2 variables) + the addition (1).
	withLet := stepsOf(t, let("x", s, add(vr("x"), vr("x"))), nil)
	if withLet != alone+4 {
		t.Fatalf("let x = S in x + x took %d steps, S alone %d: S evaluated more than once", withLet, alone)
	}
}

// randBody returns a random value of type {int -> {int -> real}} with
// colliding keys, values of wildly different magnitudes, exact zeros and
// empty dictionaries.
func randBody(seed uint64) value.Value {
	r := newRand(seed)
	c := coords{}
	for range r.IntN(4) {
		x := math.Ldexp(r.NormFloat64(), r.IntN(120)-60)
		if r.IntN(6) == 0 {
			x = 0
		}
		c[[4]int64{int64(r.IntN(4)), int64(r.IntN(4))}] = x
	}
	// toValue drops zeros; put one explicit zero back in sometimes, as an
	// array-backed row would carry.
	d := c.toValue(2).(*value.Dict)
	if r.IntN(3) == 0 {
		d.Keys = append(d.Keys, 9)
		d.Vals = append(d.Vals, &value.Dict{Keys: []int64{0}, Vals: []value.Value{0.0}})
	}
	return d
}

// The key-wise accumulator computes exactly the left fold of value.Add
// (same float operations in the same order), which is the definition.
func TestAccumulatorIsTheLeftFold(t *testing.T) {
	typ := ir.Type{Depth: 2, Base: ir.Real}
	for trial := range 200 {
		acc := newAccum(typ)
		fold := value.Zero(typ)
		for i := range 1 + trial%17 {
			b := randBody(uint64(trial*100 + i))
			if err := acc.add(b); err != nil {
				t.Fatal(err)
			}
			var err error
			if fold, err = value.Add(fold, b); err != nil {
				t.Fatal(err)
			}
		}
		if got := acc.result(); !value.Equal(got, fold, 0) {
			t.Fatalf("trial %d: accumulator %s, fold %s", trial, value.Format(got), value.Format(fold))
		}
	}
	// Scalars too.
	acc := newAccum(ir.RealType)
	fold := value.Zero(ir.RealType)
	r := newRand(5)
	for range 1000 {
		x := math.Ldexp(r.NormFloat64(), r.IntN(100)-50)
		_ = acc.add(x)
		fold, _ = value.Add(fold, x)
	}
	if acc.result() != fold {
		t.Fatalf("scalar accumulator %v, fold %v", acc.result(), fold)
	}
}

func TestMerge(t *testing.T) {
	r := newRand(11)
	for trial := range 30 {
		n1, n2 := r.IntN(12), r.IntN(12)
		a, b := make([]int64, n1), make([]int64, n2)
		for i := range a {
			a[i] = int64(r.IntN(6))
		}
		for i := range b {
			b[i] = int64(r.IntN(6))
		}
		if trial%2 == 0 { // sorted, as in index arrays
			sortInts(a)
			sortInts(b)
		}
		x, y := make([]float64, n1), make([]float64, n2)
		for i := range x {
			x[i] = math.Ldexp(r.NormFloat64(), r.IntN(80)-40)
		}
		for i := range y {
			y[i] = math.Ldexp(r.NormFloat64(), r.IntN(80)-40)
		}
		breal := make([]float64, n2)
		for i, v := range b {
			breal[i] = float64(v)
		}
		st := storage.Store{"a": storage.IntArray(a), "b": storage.IntArray(b), "breal": storage.RealArray(breal),
			"x": storage.RealArray(x), "y": storage.RealArray(y)}

		// Nested loops, in e1's then e2's key order.
		var wantScalar float64
		wantDict := coords{}
		for k1, v := range a {
			for k2, u := range b {
				if u == v {
					p := x[k1] * y[k2]
					wantScalar += p
					wantDict[[4]int64{int64(k1), int64(k2)}] += float64(v) + 1
				}
			}
		}
		for _, e2 := range []string{"b", "breal"} {
			scalar := ir.Merge("k1", "k2", "v", gl("a"), gl(e2), mul(look(gl("x"), vr("k1")), look(gl("y"), vr("k2"))))
			got := run(t, scalar, st)
			// Same operations in the same order: exactly equal.
			if got != wantScalar {
				t.Fatalf("trial %d (%s): merge = %v, nested loops = %v", trial, e2, got, wantScalar)
			}
			dict := ir.Merge("k1", "k2", "v", gl("a"), gl(e2), single(vr("k1"), single(vr("k2"), add(vr("v"), n(1)))))
			same(t, fmt.Sprintf("trial %d (%s) dict merge", trial, e2), run(t, dict, st), wantDict.toValue(2))
		}
	}
}

func sortInts(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestCheckUnique(t *testing.T) {
	st := storage.Store{
		"idx":  storage.IntArray([]int64{3, 1, 3}),
		"val":  storage.RealArray([]float64{1, 2, 3}),
		"rows": storage.IntArray([]int64{0, 0, 1}),
		"cols": storage.IntArray([]int64{1, 2, 1}),
		"dupc": storage.IntArray([]int64{1, 1, 1}),
	}
	check := Options{CheckUnique: true}
	byIdx := func() *ir.Expr {
		return sum("p", "i", gl("idx"), at(2, 5, uniq(vr("i"), look(gl("val"), vr("p")))))
	}
	msg := runErr(t, at(1, 1, byIdx()), st, check)
	wantSubstr(t, msg, "t.sdql:2:5: @unique promise broken: the enclosing sum (the sum at t.sdql:1:1) produces key 3 more than once")
	// Without the option the promise is not checked and the sum adds up.
	same(t, "unchecked", run(t, byIdx(), st), coords{{1}: 2, {3}: 4}.toValue(1))

	// Under let and if.
	underLet := sum("p", "i", gl("idx"), let("y", look(gl("val"), vr("p")),
		ifte(ir.Binary(ir.OpGt, vr("y"), n(0)), at(3, 1, uniq(vr("i"), vr("y"))), nil)))
	wantSubstr(t, runErr(t, underLet, st, check), "t.sdql:3:1: @unique promise broken")

	// Nested @unique singletons form a tuple key: (0,1), (0,2), (1,1) are
	// distinct although the first components repeat.
	coo := func(cols string) *ir.Expr {
		return sum("p", "i", gl("rows"), at(4, 2, uniq(vr("i"), uniq(look(gl(cols), vr("p")), look(gl("val"), vr("p"))))))
	}
	v, err := EvalWith(typed(t, coo("cols"), st), st, check)
	if err != nil {
		t.Fatalf("distinct tuple keys reported: %v", err)
	}
	same(t, "coo", v, coords{{0, 1}: 1, {0, 2}: 2, {1, 1}: 3}.toValue(2))
	wantSubstr(t, runErr(t, coo("dupc"), st, check), "produces key (0,1) more than once")

	// Each run of an inner sum is checked on its own.
	nested := sum("i", "_", rng(n(0), n(3)), uniq(vr("i"), sum("j", "_", rng(n(0), n(2)), uniq(vr("j"), n(1)))))
	if _, err := EvalWith(typed(t, nested, st), st, check); err != nil {
		t.Fatalf("nested unique sums: %v", err)
	}
	// Zero values still count as produced keys.
	zeros := sum("p", "i", gl("idx"), uniq(vr("i"), n(0)))
	wantSubstr(t, runErr(t, zeros, st, check), "produces key 3 more than once")
}

// evalBoth evaluates e with and without the key-lookup shortcut and
// checks that both agree exactly.
func evalBoth(t *testing.T, what string, e *ir.Expr, st storage.Store) value.Value {
	t.Helper()
	typed(t, e, st)
	var out [2]value.Value
	var errs [2]error
	for i, off := range []bool{false, true} {
		in := newInterp(st, Options{})
		in.noShortcuts = off
		if errs[i] = in.check(e); errs[i] == nil {
			out[i], errs[i] = in.eval(e)
		}
	}
	if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && errs[0].Error() != errs[1].Error()) {
		t.Fatalf("%s: shortcut error %v, scan error %v", what, errs[0], errs[1])
	}
	if errs[0] != nil {
		t.Fatalf("%s: %v", what, errs[0])
	}
	if !value.Equal(out[0], out[1], 0) {
		t.Fatalf("%s: shortcut %s, scan %s", what, value.Format(out[0]), value.Format(out[1]))
	}
	return out[0]
}

func TestKeyLookupShortcut(t *testing.T) {
	r := newRand(21)
	a, b := randSparse(r, 7, 8, 0.4, true), randSparse(r, 8, 6, 0.4, true)
	vals := []float64{0, 2, 0, 5, 1}
	st := storage.Store{"A": hashOf(a, 2), "B": hashOf(b, 2), "X": storage.RealArray(vals), "E": hashOf(coords{}, 1)}
	// Matrix multiplication, Table 1 desugaring with the test right
	// after the second binding of j.
	mm := func(cond func() *ir.Expr) *ir.Expr {
		return sum("i", "ra", gl("A"), sum("j1", "x", vr("ra"), sum("j2", "rb", gl("B"),
			ifte(cond(), sum("k", "y", vr("rb"), single(vr("i"), single(vr("k"), mul(vr("x"), vr("y"))))), nil))))
	}
	want := coords{}
	for ka, x := range a {
		for kb, y := range b {
			if ka[1] == kb[0] {
				want[[4]int64{ka[0], kb[1]}] += x * y
			}
		}
	}
	same(t, "A*B (j1 == j2)", evalBoth(t, "mm1", mm(func() *ir.Expr { return eq(vr("j1"), vr("j2")) }), st), want.toValue(2))
	same(t, "A*B (j2 == j1)", evalBoth(t, "mm2", mm(func() *ir.Expr { return eq(vr("j2"), vr("j1")) }), st), want.toValue(2))
	// An extra conjunct after the key test is still evaluated.
	filtered := coords{}
	for ka, x := range a {
		for kb, y := range b {
			if ka[1] == kb[0] && x > 2 {
				filtered[[4]int64{ka[0], kb[1]}] += x * y
			}
		}
	}
	gt2 := func() *ir.Expr { return and(eq(vr("j2"), vr("j1")), ir.Binary(ir.OpGt, vr("x"), n(2))) }
	same(t, "A*B with x > 2", evalBoth(t, "mm3", mm(gt2), st), filtered.toValue(2))
	// Key test not first: no shortcut, same answer.
	gt2b := func() *ir.Expr { return and(ir.Binary(ir.OpGt, vr("x"), n(2)), eq(vr("j2"), vr("j1"))) }
	same(t, "A*B with x > 2 first", evalBoth(t, "mm4", mm(gt2b), st), filtered.toValue(2))

	// Arrays and ranges: entries holding zero are found; keys outside
	// the array are simply absent (no bounds error, as in the scan).
	for key := int64(-2); key < 8; key++ {
		e := sum("k", "v", gl("X"), ifte(eq(vr("k"), n(key)), add(vr("v"), n(1)), nil))
		got := evalBoth(t, fmt.Sprint("array key ", key), e, st)
		want := 0.0
		if key >= 0 && key < int64(len(vals)) {
			want = vals[key] + 1
		}
		same(t, fmt.Sprint("array key ", key), got, want)
		e = sum("k", "v", rng(n(2), n(5)), ifte(eq(n(key), vr("k")), single(vr("v"), n(1)), nil))
		wantR := coords{}
		if key >= 2 && key < 5 {
			wantR[[4]int64{key}] = 1
		}
		same(t, fmt.Sprint("range key ", key), evalBoth(t, "range", e, st), wantR.toValue(1))
	}
	// An empty source never evaluates the key (here an error).
	e := sum("k", "v", gl("E"), ifte(eq(vr("k"), div(n(1), n(0))), vr("v"), nil))
	same(t, "empty source", evalBoth(t, "empty", e, st), 0.0)
	// The key expression may not mention the sum's variables.
	e = sum("k", "v", gl("X"), ifte(eq(vr("k"), ir.Call("abs", sub(vr("k"), n(2)))), single(vr("k"), vr("v")), nil))
	same(t, "k == abs(k-2)", evalBoth(t, "self", e, st), coords{{1}: vals[1]}.toValue(1))
}

// Fig. 1 (b), (c): the CSR storage mapping of the paper's matrix C, and
// the naive plan of SpMV over it built with Program.Compose.
func TestComposedCSRProgram(t *testing.T) {
	st := storage.Store{
		"C_len1": storage.IntScalar(3),
		"C_pos2": storage.IntArray([]int64{0, 3, 3, 5}),
		"C_idx2": storage.IntArray([]int64{0, 2, 3, 0, 3}),
		"C_val":  storage.RealArray([]float64{6, 9, 8, 5, 7}),
		"x":      storage.RealArray([]float64{1, 2, 3, 4}),
	}
	mapping := sum("row", "_", rng(n(0), gl("C_len1")), single(vr("row"),
		sum("off", "col", subarr(gl("C_idx2"), look(gl("C_pos2"), vr("row")), look(gl("C_pos2"), add(vr("row"), n(1)))),
			single(vr("col"), look(gl("C_val"), vr("off"))))))
	spmv := sum("i", "row", vr("C"), single(vr("i"), sum("j", "c", vr("row"), mul(vr("c"), look(gl("x"), vr("j"))))))
	typed(t, mapping, st)
	if err := inferTypes(spmv, st, map[string]ir.Type{"C": mapping.Type}); err != nil {
		t.Fatal(err)
	}
	p := &ir.Program{Tensors: []*ir.Tensor{{Name: "C", Def: mapping}, {Name: "y", Def: spmv}}}
	dense := [3][4]float64{{6, 0, 9, 8}, {0, 0, 0, 0}, {5, 0, 0, 7}}
	wantC, wantY := coords{}, coords{}
	for i, row := range dense {
		for j, c := range row {
			wantC[[4]int64{int64(i), int64(j)}] = c
			wantY[[4]int64{int64(i)}] += c * float64(j+1)
		}
	}
	for _, q := range []struct {
		name string
		want value.Value
	}{{"C", wantC.toValue(2)}, {"y", wantY.toValue(1)}, {"", wantY.toValue(1)}} {
		plan := p.Compose(q.name)
		got, err := Eval(plan, st)
		if err != nil {
			t.Fatalf("query %q: %v", q.name, err)
		}
		same(t, "query "+q.name, got, q.want)
	}
}

// Matrix multiplication over index ranges (paper §3.2, second form).
func TestMatrixMultiplyOverRanges(t *testing.T) {
	r := newRand(31)
	const m, k, p = 5, 6, 4
	a, b := randSparse(r, m, k, 0.5, false), randSparse(r, k, p, 0.5, false)
	st := storage.Store{"A": hashOf(a, 2), "B": hashOf(b, 2)}
	e := sum("i", "_", rng(n(0), n(m)), sum("j", "_", rng(n(0), n(k)), sum("l", "_", rng(n(0), n(p)),
		single(vr("i"), single(vr("l"), mul(look(look(gl("A"), vr("i")), vr("j")), look(look(gl("B"), vr("j")), vr("l"))))))))
	want := coords{}
	for i := range int64(m) {
		for j := range int64(k) {
			for l := range int64(p) {
				want[[4]int64{i, l}] += a[[4]int64{i, j}] * b[[4]int64{j, l}]
			}
		}
	}
	same(t, "A*B over ranges", run(t, e, st), want.toValue(2))
}
