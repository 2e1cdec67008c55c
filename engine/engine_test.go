package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

func TestBasics(t *testing.T) {
	st := storage.Store{
		"A": storage.RealArray([]float64{1, 0, 2.5, -3}),
		"I": storage.IntArray([]int64{0, 2, 2, 3, 7}),
		"n": storage.IntScalar(4),
		"x": storage.RealScalar(1.5),
		"Z": storage.IntArray([]int64{0, 0, 1}),
	}
	srcs := []string{
		"1 + 2 * 3",
		"7 / 2 + 7 % 3 - 1.5",
		"sum(<i, v> in A) v * x",
		"sum(<i, v> in A) { i -> v * 2 }",
		"sum(<i, v> in A) { @dense i -> v * 2 }",
		"sum(<i, v> in A) { @hash i % 2 -> v }",
		"sum(<i, _> in 0:n) { i -> A(i) + i }",
		"sum(<p, j> in I(1:4)) { j -> { p -> A(p) } }",
		"sum(<p, j> in I(1:4)) { @dense j -> { @dense p -> A(p) } }",
		"A + A",
		"A",
		"A(1:3)",
		"2 * A",
		"A * A",
		"-A",
		"A - A(0:2)",
		"let d = sum(<i, v> in A) { i -> v } in sum(<k, w> in d) 1",
		"let d = A in sum(<k, w> in d) 1",
		"sum(<k, w> in Z) { 0 -> A }",
		"sum(<k, w> in Z) { k -> A }",
		"if x > 1 then A else A + A",
		"max(1, max(2.5, x)) + min(3, 4) + abs(-2) + even_bits(13) + odd_bits(13)",
		"sqrt(4.0) + exp(0.0) + log(1.0)",
		"merge(<p, q, v> in <I, Z>) p * 10 + q",
		"merge(<p, q, v> in <I(1:4), I(0:3)>) { v -> p * 10 + q }",
		"sum(<i, v> in A) if i == 2 then v",
		"sum(<i, v> in A) if i == n - 2 && v > 0 then v",
		"A(3) + I(4)",
		"(0:10)(3) + (0:10)(12)",
		"A(1:3)(2) + A(1:3)(3)",
		"sum(<i, v> in A) { i -> { i -> v } }",
	}
	for _, s := range srcs {
		t.Run(s, func(t *testing.T) {
			agree(t, parse(t, s, st), st)
		})
	}
}

func TestErrors(t *testing.T) {
	st := storage.Store{
		"A": storage.RealArray([]float64{1, 0, 2.5, -3}),
		"n": storage.IntScalar(0),
	}
	for _, s := range []string{
		"A(4)",
		"A(-1)",
		"sum(<i, v> in A(2:5)) v",
		"sum(<i, v> in A(3:2)) v",
		"1 / n",
		"7 % n",
		"sum(<i, v> in A) { i -> i / n }",
	} {
		t.Run(s, func(t *testing.T) {
			e := parse(t, s, st)
			for _, th := range []int{1, 3} {
				_, err := runEngine(e, st, th)
				if err == nil {
					t.Fatalf("threads=%d: no error", th)
				}
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error %T %v is not *Error", err, err)
				}
				t.Log(err)
			}
		})
	}
}

func TestSpMVShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	st := storage.Store{}
	csr(st, "A", 30, 20, 100, rng)
	st["x"] = storage.RealArray(randVec(20, rng))
	for _, s := range []string{
		`sum(<i,_> in 0:A_len1) { @dense i -> sum(<p,j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j) }`,
		`sum(<i,_> in 0:A_len1) sum(<p,j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense i -> A_val(p) * x(j) }`,
		`let A = sum(<i,_> in 0:A_len1) { @unique i -> sum(<p,j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @unique j -> A_val(p) } } in
		 sum(<i, row> in A) sum(<j, a> in row) { i -> a * x(j) }`,
	} {
		agree(t, parse(t, s, st), st)
	}
}

func TestStatsAndEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	st := storage.Store{}
	a := randCSR(200, 150, 2000, rng)
	b := randCSR(150, 40, 1000, rng)
	a.store(st, "A")
	b.store(st, "B")
	k, err := Compile(parse(t, planMMM, st), SchemaOf(st), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := k.Exec(st)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.Compile <= 0 || r.Stats.Compile != k.CompileTime() || r.Stats.Execute <= 0 || r.Stats.PeakHeap != 0 {
		t.Fatalf("implausible stats %+v (Exec samples no heap)", r.Stats)
	}
	if r, err = k.ExecSampled(st); err != nil || r.Stats.PeakHeap == 0 || r.Stats.StartHeap == 0 {
		t.Fatalf("ExecSampled: %v, stats %+v", err, r.Stats)
	}
	want := value.Entries(r.Value())
	var got []value.Entry
	r.Entries(func(coords []int64, _ int64, v float64) {
		got = append(got, value.Entry{Coords: append([]int64(nil), coords...), Val: v})
	})
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("Entries gave %d entries, Value %d", len(got), len(want))
	}
	for i := range got {
		if !slices.Equal(got[i].Coords, want[i].Coords) || !value.Equal(got[i].Val, want[i].Val, 0) {
			t.Fatalf("entry %d: %v vs %v", i, got[i], want[i])
		}
	}
	// A kernel runs again on another store of the same schema.
	st2 := storage.Store{}
	randCSR(200, 150, 500, rng).store(st2, "A")
	b.store(st2, "B")
	v2, err := k.Run(st2)
	if err != nil {
		t.Fatal(err)
	}
	agreeValue(t, parse(t, planMMM, st2), st2, v2)
	// A store whose objects do not match the schema is refused.
	st2["B_val"] = storage.IntArray([]int64{1})
	if _, err := k.Run(st2); err == nil {
		t.Fatal("no error for a store that does not match the kernel")
	}
}

// agreeValue checks v against the interpreter.
func agreeValue(t *testing.T, e *ir.Expr, st storage.Store, v value.Value) {
	t.Helper()
	want, err := eval.Eval(e, st)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(v, want, 1e-9) {
		t.Fatalf("engine %s\ninterpreter %s", value.Format(v), value.Format(want))
	}
}

// TestHugeBounds: absurd bounds fail or run, but never crash the process.
func TestHugeBounds(t *testing.T) {
	st := storage.Store{"A": storage.RealArray([]float64{1, 2}), "n": storage.IntScalar(1 << 40)}
	for _, s := range []string{
		"sum(<i, _> in n:n + 3) { @dense i -> 1.0 }",
		"sum(<i, _> in (-n):(-n) + 3) { @dense i -> 1.0 }",
		"{ @dense n -> 1.0 } + { @dense 3 -> 2.0 }",
		"sum(<i, v> in A) { @dense i * n -> v }",
	} {
		agree(t, parse(t, s, st), st)
	}
}

// TestDeepNesting runs sums nested ten deep whose bodies do not fit the
// fused shapes (each level compiles once, not twice).
func TestDeepNesting(t *testing.T) {
	st := storage.Store{"R": storage.RealArray([]float64{1, 2, 3}), "I": storage.IntArray([]int64{0, 1, 2})}
	var sb strings.Builder
	const depth = 10
	for d := 0; d < depth; d++ {
		fmt.Fprintf(&sb, "sum(<k%d, v%d> in I(0:2)) R(k%d) * R(v%d) * R(k%d) * R(v%d) * (", d, d, d, d, d, d)
	}
	sb.WriteString("1.5")
	sb.WriteString(strings.Repeat(")", depth))
	agree(t, parse(t, sb.String(), st), st)
}

// TestCorruptSegments: plans over CSR arrays whose segment bounds are
// wrong fail with an error, as in the interpreter, through every fused
// path.
func TestCorruptSegments(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for _, plan := range []string{planSpMV, planSumMMM, planMMM, planBATAX, planBATAXNaive} {
		for _, corrupt := range []func(a *sparseCSR){
			func(a *sparseCSR) { a.pos[len(a.pos)/2] = int64(len(a.idx)) + 5 }, // past the end
			func(a *sparseCSR) { a.pos[3] = a.pos[4] + 1 },                     // decreasing
			func(a *sparseCSR) { a.idx[len(a.idx)/3] = 1 << 40 },               // column out of range
		} {
			st := storage.Store{"x": storage.RealArray(randVec(40, rng)), "beta": storage.RealScalar(2)}
			a := randCSR(40, 40, 300, rng)
			corrupt(a)
			a.store(st, "A")
			randCSR(40, 40, 300, rng).store(st, "B")
			e := parse(t, plan, st)
			agree(t, e, st)
			if _, err := runEngine(e, st, 1); err == nil {
				if _, ierr := eval.Eval(e, st); ierr != nil {
					t.Fatalf("%s: no error", plan)
				}
			}
		}
	}
}

// TestGuardedRowSums: the optimizer's SumMMM shape, with a guard that
// fails for the last rows.
func TestGuardedRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	st := storage.Store{}
	randCSR(40, 30, 300, rng).store(st, "A")
	randCSR(30, 20, 200, rng).store(st, "B")
	for _, plan := range []string{
		`sum(<i2, _> in 0:A_len1) (sum(<p1, _> in A_idx2(A_pos2(i2):A_pos2(i2 + 1))) A_val(p1)) *
		   (if 0 <= i2 && i2 < B_len1 then sum(<p2, _> in B_idx2(B_pos2(i2):B_pos2(i2 + 1))) B_val(p2))`,
		`sum(<i2, _> in 0:A_len1) (if i2 < B_len1 then sum(<p1, _> in A_idx2(A_pos2(i2):A_pos2(i2 + 1))) A_val(p1)) *
		   (if 0 <= i2 && i2 < B_len1 then sum(<p2, _> in B_idx2(B_pos2(i2):B_pos2(i2 + 1))) B_val(p2))`,
	} {
		agree(t, parse(t, plan, st), st)
	}
}
