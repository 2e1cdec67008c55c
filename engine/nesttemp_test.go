package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Plans that read a dictionary the plan built (a let) inside a loop: the
// optimizer's temporaries (docs/design.md §5).
var tempReadPlans = []struct {
	name, plan string
	dot        bool   // clean data runs the second pass by the segmented dot
	reader     string // the head of the loop that reads the let, which must be lowered
	event      string // expected among the events of clean data, when set
}{
	{"BATAX's two passes, t = A·x then Aᵀ·t (A stored by columns)", `let t1 =
  sum(<i2, _> in 0:A_len1)
    let t5 = beta * x(i2) in
    sum(<p2, i1> in A_idx2(A_pos2(i2):A_pos2(i2 + 1))) { @dense i1 -> A_val(p2) * t5 }
in
sum(<i3, _> in 0:A_len1)
  { @dense i3 -> sum(<p1, i4> in A_idx2(A_pos2(i3):A_pos2(i3 + 1))) A_val(p1) * t1(i4) }`, true, "sum(<i3,", ""},
	{"SumMMM's rowsum, a scalar sum of B_val(p) * t(k)", `let t6 =
  sum(<i, _> in 0:A_len1)
    sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p2) }
in
sum(<i3, _> in 0:B_len1)
  sum(<p1, i4> in B_idx2(B_pos2(i3):B_pos2(i3 + 1))) B_val(p1) * t6(i4)`, false, "sum(<p1,", ""},
	{"a pattern's rows: t(k) alone", `let t =
  sum(<i, _> in 0:A_len1)
    sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p2) * x(i) }
in
sum(<i3, _> in 0:A_len1)
  { @dense i3 -> sum(<_, j> in A_idx2(A_pos2(i3):A_pos2(i3 + 1))) t(j) }`, true, "sum(<i3,", ""},
	{"a scatter keyed by an index array, reading t at the loop's value", `let t1 =
  sum(<p1, i1> in A_idx2) { @dense i1 -> A_val(p1) * x(i1) }
in
sum(<p2, i2> in A_idx2) { @dense A_idx2(p2) -> A_val(p2) * t1(i2) }`, false, "sum(<p2,", ""},
	{"a scaled vector (a sorted list), read at every entry", `let t1 =
  (sum(<p1, i1> in A_idx2) { @dense i1 -> A_val(p1) * x(i1) }) * beta
in
sum(<p2, i2> in A_idx2) { @dense A_idx2(p2) -> A_val(p2) * t1(i2) }`, false, "sum(<p2,", "indexed"},
	{"a row of a built dense matrix, T(i)(j)", `let T =
  sum(<i, _> in 0:A_len1)
    { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p) } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<j, _> in 0:x_len) T(i)(j) * x(j) }`, false, "sum(<j,", ""},
	{"a built hash vector", `let t =
  sum(<i, _> in 0:A_len1)
    sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @hash k -> A_val(p2) }
in
sum(<i3, _> in 0:B_len1)
  { @dense i3 -> sum(<p1, i4> in B_idx2(B_pos2(i3):B_pos2(i3 + 1))) B_val(p1) * t(i4) }`, false, "sum(<p1,", ""},
	{"an int vector, its values an index and a guard", `let c =
  sum(<i, _> in 0:A_len1)
    sum(<_, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> 1 }
in
sum(<j, _> in 0:x_len)
  if c(j) < 3 then x(c(j) + j) * 2.0`, false, "sum(<j,", ""},
	{"a physical array bound to a let: a read past its end fails", `let y = x in
sum(<i3, _> in 0:B_len1)
  { @dense i3 -> sum(<p1, i4> in B_idx2(B_pos2(i3):B_pos2(i3 + 1))) B_val(p1) * y(i4) }`, false, "sum(<i3,", ""},
}

// TestNestTempReads checks reads of let-bound dictionaries inside loop
// nests against the interpreter (1 and 3 threads): every loop of the
// plan lowered, built vectors narrower than the reads (zero past their
// keys) and wider than a dense level jumps (keys in the spill map), and
// a physical array read past its end (the interpreter's error).
func TestNestTempReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	for _, pc := range tempReadPlans {
		for trial := range 16 {
			n, m := 1+rng.IntN([]int{30, 300}[trial%2]), 1+rng.IntN(40)
			mB := m
			switch {
			case trial%4 == 2: // B reads t past the keys A gives it
				mB = m + 1 + rng.IntN(20)
			case trial == 3: // keys past a dense level's jump: some spill
				m = maxDenseJump + 1 + rng.IntN(3000)
				mB = m
			}
			st := storage.Store{"beta": storage.RealScalar(float64(rng.IntN(5)) - 1.5)}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			csr(st, "B", n, mB, rng.IntN(4*n+1), rng)
			setX(st, max(n, m, mB), trial%8 == 5, rng)
			e := parse(t, pc.plan, st)
			ex := explainOf(t, e, st)
			if strings.Contains(ex, "older path: "+pc.reader) {
				t.Fatalf("%s: the loop reading the let is left to the older paths:\n%s", pc.name, ex)
			}
			seen := events(func() { agree(t, e, st) })
			if pc.event != "" && trial%4 < 2 && trial%8 != 5 && seen[pc.event] == 0 && st["A_idx2"].(*storage.Array).Len() > 0 && st["beta"].(*storage.Scalar).F != 0 {
				t.Fatalf("%s, trial %d: events %v, want %q", pc.name, trial, seen, pc.event)
			}
			if pc.dot && trial%4 < 2 && trial%8 != 5 && seen["dot"] == 0 && st["A_idx2"].(*storage.Array).Len() > 0 {
				t.Fatalf("%s, trial %d: events %v, want the segmented dot", pc.name, trial, seen)
			}
		}
	}
}

// Plans that iterate a dictionary the plan built.
var tempIterPlans = []struct {
	name, plan, head string // head: the loop over the built dictionary, which must be lowered
	explain, event   string // in the explain text and among the events, when set
}{
	{"a built dense vector, scattered (its zeros are no entries)", `let t =
  sum(<i, _> in 0:A_len1)
    sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p) - 2.0 }
in
sum(<k, v> in t) { @dense k -> v * x(k) }`, "sum(<k, v> in t)", "", ""},
	{"a built hash vector summed, its key guarded", `let t =
  sum(<i, _> in 0:A_len1)
    sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @hash k -> A_val(p) }
in
sum(<k, v> in t) if k < x_len then v * x(k)`, "sum(<k, v> in t)",
		"guard k < x_len: discharged per loop entry by interval facts (the built dictionary's first and last keys)", "discharged"},
	{"a built int vector, its values an index", `let c =
  sum(<i, _> in 0:A_len1)
    sum(<_, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> 1 }
in
sum(<k, n> in c) { @dense n -> x(k) }`, "sum(<k, n> in c)", "", ""},
	{"rows of a built transposed copy (M4's shape)", `let t =
  sum(<j, _> in 0:B_len1)
    sum(<p, c> in B_idx2(B_pos2(j):B_pos2(j + 1))) { @dense c -> { @dense j -> { @dense p -> 1 } } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let a = A_val(p2) in
    sum(<j, r> in t(k)) { @dense j -> (sum(<q, _> in r) B_val(q)) * a } }`, "sum(<j, r> in t(k))",
		"iterator: built dictionary r\n", "lanes"},
	{"rows of a built transposed copy holding positions (M4's shape), into rows of the result", `let t =
  sum(<j, _> in 0:B_len1)
    sum(<p, c> in B_idx2(B_pos2(j):B_pos2(j + 1))) { @dense c -> { @dense j -> p + 1 } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let a = A_val(p2) in
    sum(<j, r> in t(k)) { @dense j -> B_val(r - 1) * a } }`, "sum(<j, r> in t(k))",
		"each row of the built dictionary scattered into the row by its keys", "dict rows scatter"},
	{"rows of a built copy summed per row, their key guarded", `let t =
  sum(<j, _> in 0:B_len1)
    sum(<p, c> in B_idx2(B_pos2(j):B_pos2(j + 1))) { @dense c -> { @dense j -> B_val(p) } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<j, v> in t(k)) if j < x_len then v * x(j) }`, "sum(<j, v> in t(k))",
		"in position space, each row's entries laid out in the block", "laid out"},
	{"a built hash matrix walked row by row", `let t =
  sum(<i, _> in 0:A_len1)
    sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @hash k -> { @hash i -> A_val(p) } }
in
sum(<k, r> in t) { @dense k -> sum(<i, v> in r) v * x(i) }`, "sum(<k, r> in t)", "", ""},
}

// TestNestTempIters checks loops over built dictionaries against the
// interpreter (1 and 3 threads): dense and hash levels, dictionary
// values, guards, and reads past the end of an array (the interpreter's
// error).
func TestNestTempIters(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 8))
	for _, pc := range tempIterPlans {
		for trial := range 12 {
			n, m := 1+rng.IntN([]int{30, 300}[trial%2]), 1+rng.IntN(40)
			if trial == 3 {
				m = maxDenseJump + 1 + rng.IntN(3000) // keys in a dense level's spill map
			}
			st := storage.Store{}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			csr(st, "B", m, n, rng.IntN(4*min(m, 300)+1), rng)
			setX(st, max(n, m), trial%4 == 2, rng)
			e := parse(t, pc.plan, st)
			ex := explainOf(t, e, st)
			if !strings.Contains(ex, "loop "+pc.head) || strings.Contains(ex, "older path: "+pc.head) {
				t.Fatalf("%s: the loop over the built dictionary is not lowered:\n%s", pc.name, ex)
			}
			if !strings.Contains(ex, pc.explain) {
				t.Fatalf("%s: the explain text lacks %q:\n%s", pc.name, pc.explain, ex)
			}
			seen := events(func() { agree(t, e, st) })
			if pc.event != "" && trial%4 == 1 && seen[pc.event] == 0 && st["A_idx2"].(*storage.Array).Len() > 0 && st["B_idx2"].(*storage.Array).Len() > 0 {
				t.Fatalf("%s, trial %d: events %v, want %q", pc.name, trial, seen, pc.event)
			}
		}
	}
}

// explainOf is the loop-nest text of e compiled for st.
func explainOf(t *testing.T, e *ir.Expr, st storage.Store) string {
	t.Helper()
	k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ex strings.Builder
	k.Explain(&ex)
	return ex.String()
}

// setX stores a vector x of n entries and its length x_len; short, of
// fewer (too short for some reads).
func setX(st storage.Store, n int, short bool, rng *rand.Rand) {
	if short {
		n = rng.IntN(n)
	}
	st["x"] = storage.RealArray(randVec(n, rng))
	st["x_len"] = storage.IntScalar(int64(n))
}

// TestNestTempRowsUp checks a read of a built matrix's row selected by a
// variable of a loop whose iterations' rows run together in position
// space (MTTKRP's fibers): the row must be that of each lane's iteration.
func TestNestTempRowsUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 9))
	plan := `let T =
  sum(<k, _> in 0:C_len1) { @dense k -> sum(<j, _> in 0:C_len2) { @dense j -> C_val(k * C_len2 + j) } }
in
sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
      if 0 <= l && l < D_len2 then
        let t1 = B_val(p3) in
        sum(<j, _> in 0:C_len2)
          { @dense j -> if 0 <= j && j < D_len1 then t1 * (T(k)(j) * D_val(D_len2 * j + l)) } }`
	for range 4 {
		b := randCSF(40, 30, 50, 900, rng)
		st := storage.Store{}
		b.store(st, "B")
		denseStore(st, "C", 30, 16, rng)
		denseStore(st, "D", 16, 50, rng)
		agree(t, parse(t, plan, st), st)
	}
}

// TestScaledDictionaries checks a built dictionary times a scalar added
// into each kind of result (a dense or hash vector, rows of a nested
// result in the shared workspace, a two-level result) against the
// interpreter (1 and 3 threads): dictionaries longer than a batch of
// the scaled add, scales of zero and below, on either side.
func TestScaledDictionaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 10))
	plans := []string{
		`beta * (sum(<p, k> in A_idx2) { @dense k -> A_val(p) })`,
		`(sum(<p, k> in A_idx2) { @hash k -> A_val(p) }) * beta`,
		`2 * (sum(<p, k> in A_idx2) { @dense k -> A_val(p) })`,
		`sum(<i, _> in 0:A_len1)
  { @dense i -> beta * (sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p) + 1.0 }) }`,
		`beta * (sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense k -> A_val(p) } })`,
	}
	for _, plan := range plans {
		for trial := range 6 {
			n, m := 1+rng.IntN(40), 1+rng.IntN([]int{20, 1500}[trial%2])
			st := storage.Store{"beta": storage.RealScalar(float64(rng.IntN(5)) - 2.5 + float64(trial%3-1)*0.5)}
			if trial == 4 {
				st["beta"] = storage.RealScalar(0)
			}
			csr(st, "A", n, m, rng.IntN(n*m/2+1), rng)
			agree(t, parse(t, plan, st), st)
		}
	}
}

// TestNestTempRowsLaid checks the rows of a built dictionary laid out in
// position space against the interpreter (1 and 3 threads): rows of a
// few entries (laid out), of about rowMean (run row by row), longer than
// flatRange (each alone), keys the dictionary lacks (empty rows), and
// reads past the end of x (the interpreter's error, or a guard's).
func TestNestTempRowsLaid(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	plans := []string{`let t =
  sum(<j, _> in 0:B_len1)
    sum(<p, c> in B_idx2(B_pos2(j):B_pos2(j + 1))) { @dense c -> { @dense j -> p + 1 } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let a = A_val(p2) in
    sum(<j, r> in t(k)) { @dense j -> B_val(r - 1) * a * x(j) } }`, `let t =
  sum(<j, _> in 0:B_len1)
    sum(<p, c> in B_idx2(B_pos2(j):B_pos2(j + 1))) { @dense c -> { @hash j -> B_val(p) } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<_, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<j, v> in t(k)) if j < x_len then v * x(j) }`}
	for pi, plan := range plans {
		for trial := range 12 {
			n := 1 + rng.IntN(60)
			cols := []int{3, 15, 90}[trial%3] // entries a row of t gets, about
			m := 1 + rng.IntN(80)
			st := storage.Store{}
			csr(st, "A", n, m+rng.IntN(10), rng.IntN(4*n+1), rng) // some k past t's rows
			csr(st, "B", cols+rng.IntN(cols), m, m*cols/2+rng.IntN(m*cols/2+1), rng)
			setX(st, 1+cols*2, trial%4 == 3, rng)
			e := parse(t, plan, st)
			if ex := explainOf(t, e, st); !strings.Contains(ex, "each row's entries laid out in the block") {
				t.Fatalf("plan %d: the rows of t are not laid out:\n%s", pi, ex)
			}
			seen := events(func() { agree(t, e, st) })
			if trial%3 == 0 && trial%4 != 3 && seen["laid out"] == 0 && st["A_idx2"].(*storage.Array).Len() > 0 {
				t.Fatalf("plan %d, trial %d: events %v, want rows laid out", pi, trial, seen)
			}
		}
	}
}
