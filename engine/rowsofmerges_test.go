package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Rows of merges: a loop over an index array's keys whose body is one
// merge into a row (a product of the merge and factors, or the merge
// adding into the row's entry), alone or inside the loop over A's row
// (MTTKRP's nest), guarded or not. The loop-nest IR runs them (nestmerge.go).

// Products of an array read and a merge whose one segment stays put while
// the loop runs: MTTKRP's inner loop over C's row, with A's row i for B's
// fiber and B's row j for D's.
var mergeRowPlans = []struct{ name, plan string }{
	{"MTTKRP's loop", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(q) * (if 0 <= j && j < B_len1 then
      merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        A_val(p3) * B_val(p5)) } }`},
	{"the merge first, its second segment fixed", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> (if j < B_len1 && j >= 0 then
      merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), A_idx2(A_pos2(i):A_pos2(i + 1))>)
        B_val(p5) * A_val(p3)) * C_val(q) } }`},
	// A guard that drops keys B has rows for (lastB below B_len1).
	{"a guard on a scalar", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(q) * (if j <= lastB then
      merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        A_val(p3) * B_val(p5)) } }`},
	// The guard in front of the product: the body's prelude.
	{"the guard in front", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> if j <= lastB then 1.5 * C_val(q) *
      merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        A_val(p3) * B_val(p5) } }`},
	// Without a guard a key past B's rows is an error, which the general
	// loop must report as it would have.
	{"invariant factors, no guard", `sum(<i, _> in 0:A_len1)
  { @dense i -> let s = 0.5 * i + 1.0 in
    sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> s * C_val(q) * 3.0 *
      merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        A_val(p3) * B_val(p5) * s } }`},
	{"a merge body with an invariant factor", `sum(<i, _> in 0:A_len1)
  { @dense i -> let s = 2.0 - i in
    sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(q) * (if 0 <= j && j < B_len1 then
      merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        s * A_val(p3) * B_val(p5)) } }`},
	// The loop over C's row inside the loop over the keys of B(i,:,:):
	// A's row i gives the keys k, E's row p2 the fiber, F's row k the
	// keys j.
	{"MTTKRP's nest", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> F_val(q) * (if 0 <= j && j < B_len1 then
          merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
            E_val(p3) * B_val(p5)) } }`},
	{"the nest with a let and invariant factors", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if k < F_len1 && 0 <= k then
      let t = A_val(p2) in
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> t * (if j <= lastB then
          merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), E_idx2(E_pos2(p2):E_pos2(p2 + 1))>)
            B_val(p5) * E_val(p3)) * F_val(q) * t } }`},
	{"the nest as the optimizer writes it for the e2e factors", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> if 0 <= j && j <= lastB then
          F_val(q) * (merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
            E_val(p3) * B_val(p5)) } }`},
}

// Loops whose body is a merge adding into the builder: the loop over C's
// row alone, with A's row i for the fixed segment and B's row j for the
// moving one, and MTTKRP's nest as the optimizer writes it on orghs, with
// E's row p2 for B's fiber and F's row k for C's row.
var mergeLoopPlans = []struct{ name, plan string }{
	{"the loop over C's row", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    merge(<p3, p5, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      { @dense j -> (if 0 <= j && j < B_len1 then A_val(p3) * C_val(q)) * B_val(p5) } }`},
	// Without a guard a key past B's rows is an error, which the general
	// loop must report as it would have.
	{"the fixed segment second, no guard", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), A_idx2(A_pos2(i):A_pos2(i + 1))>)
      { @dense j -> B_val(p5) * C_val(q) * A_val(p3) } }`},
	{"into a hash map, keyed by the pair's value", `sum(<i, _> in 0:A_len1)
  { i -> sum(<q, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    merge(<p3, p5, l> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      { l -> if j <= lastB then A_val(p3) * B_val(p5) } }`},
	{"MTTKRP's nest as the optimizer writes it on orghs", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
          { @dense j -> (if 0 <= j && j < B_len1 then E_val(p3) * F_val(q)) * B_val(p5) } }`},
	// The body reads the outer loop's position and key: their slots
	// must hold them when a pair's body runs.
	{"the nest unguarded, its body reading p2 and k, the fixed segment second", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), E_idx2(E_pos2(p2):E_pos2(p2 + 1))>)
        { @dense j -> if j <= lastB then B_val(p5) * A_val(p2) * E_val(p3) * F_val(q) * (k + 1) } }`},
	{"the nest behind a guard on a scalar", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if k <= lastB && 0 <= k then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
          { @dense j -> E_val(p3) * (if j < B_len1 then F_val(q) * B_val(p5)) } }`},
}

// rowDotPlans are rows of merge-dots (SDDMM's shape with CSR factors)
// over mergeData: C's row i against A's row i and B's row j.
var rowDotPlans = []struct{ name, plan string }{
	{"SDDMM's rows: a factor at the loop's position times a merge-dot", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(p2) * (merge(<p1, p3, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      A_val(p1) * B_val(p3)) } }`},
	{"a merge-dot alone, the fixed operand second", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> merge(<p3, p1, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), A_idx2(A_pos2(i):A_pos2(i + 1))>)
      B_val(p3) * A_val(p1) } }`},
	{"a merge-dot times factors read at the key and outside the loop", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(j) * A_val(i) * (merge(<p1, p3, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      A_val(p1) * B_val(p3)) } }`},
	// Inside the loop over A's row (MTTKRP's nest with CSR factors), a
	// factor read at the outer loop's position.
	{"the nest's rows of merge-dots", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      { @dense j -> F_val(q) * (merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        E_val(p3) * B_val(p5)) } }`},
	{"the nest's rows of merge-dots, a factor of the loop around", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      { @dense j -> A_val(p2) * F_val(q) * (merge(<p3, p5, _> in <E_idx2(E_pos2(p2):E_pos2(p2 + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
        E_val(p3) * B_val(p5)) } }`},
}

// inNest are the plans above whose every loop the nest takes.
var inNest = []string{
	"the guard in front", "invariant factors, no guard",
	"MTTKRP's nest", "the nest with a let and invariant factors", "MTTKRP's loop",
	"the merge first, its second segment fixed", "a guard on a scalar",
	"a merge body with an invariant factor",
	"the nest unguarded, its body reading p2 and k, the fixed segment second",
	"into a hash map, keyed by the pair's value",
	"the nest as the optimizer writes it for the e2e factors",
	"the loop over C's row", "the fixed segment second, no guard",
	"MTTKRP's nest as the optimizer writes it on orghs", "the nest behind a guard on a scalar",
	"SDDMM's rows: a factor at the loop's position times a merge-dot",
	"a merge-dot alone, the fixed operand second",
	"a merge-dot times factors read at the key and outside the loop",
	"the nest's rows of merge-dots", "the nest's rows of merge-dots, a factor of the loop around",
}

// TestRowsOfMergesInNest runs the rows of merges the nest takes against
// the interpreter (1 and 3 threads) on mergeData spoiled as
// spoilMergeData spoils it, and checks that the nest took every loop of
// them: explain names no older path.
func TestRowsOfMergesInNest(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, pc := range slices.Concat(mergeRowPlans, mergeLoopPlans, rowDotPlans) {
		if !slices.Contains(inNest, pc.name) {
			continue
		}
		for trial := range 80 {
			st := mergeData(trial, rng)
			spoilMergeData(st, trial, rng)
			e := parse(t, pc.plan, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
			if err != nil {
				t.Fatal(err)
			}
			if x := k.String(); strings.Contains(x, "older path") || !strings.Contains(x, "iterator: merge") {
				t.Fatalf("%s: not all in the nest:\n%s", pc.name, x)
			}
			agree(t, e, st)
		}
	}
}

// TestMergeLoops runs the rows of merges against the interpreter (1 and 3
// threads) and against the closure path (the same bits and errors) on
// mergeData, with more ways to go wrong (spoilMergeData) in half the
// trials.
func TestMergeLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, pc := range slices.Concat(mergeRowPlans, mergeLoopPlans, rowDotPlans) {
		for trial := range 60 {
			st := mergeData(trial, rng)
			if trial%2 == 0 {
				spoilMergeData(st, trial/2, rng)
			}
			againstGeneral(t, pc.name, pc.plan, st, func(off bool) { closuresOnly = off })
		}
	}
}

// mergeData returns the matrices of the merge plans for a trial: A (n x
// w), B (mb x w), C (n x m), F (mf x m), E (one row per entry of A, x
// w) and the scalar lastB. Trial 1 mod 4 leaves some of C's and F's keys
// without a row of B and some of A's keys without a row of F, and lastB
// below B's last row; trial 2 mod 4 reverses one of B's rows; trial 3
// mod 8 makes A's values one short, and 7 mod 8 F's row bounds; B's
// values are thirds and E's sevenths in trial 0 mod 3.
func mergeData(trial int, rng *rand.Rand) storage.Store {
	n, m, w := 1+rng.IntN(30), 1+rng.IntN(12), 1+rng.IntN(25)
	mb, lastB := m, m-1
	if trial%4 == 1 {
		mb = 1 + rng.IntN(m)
		lastB = rng.IntN(mb)
	}
	st := storage.Store{"lastB": storage.IntScalar(int64(lastB))}
	csr(st, "A", n, w, rng.IntN(3*n+1), rng)
	csr(st, "B", mb, w, rng.IntN(w*mb+1), rng)
	csr(st, "C", n, m, rng.IntN(2*n+1), rng)
	mf := w
	if trial%4 == 1 {
		mf = 1 + rng.IntN(w)
	}
	csr(st, "F", mf, m, rng.IntN(2*mf+1), rng)
	ne := st["A_val"].(*storage.Array).Len()
	csr(st, "E", ne, w, rng.IntN(5*ne+1), rng)
	if trial%3 == 0 {
		// Thirds and sevenths: sums in another order round differently.
		for name, d := range map[string]float64{"B_val": 3, "E_val": 7} {
			for i, v := range st[name].(*storage.Array).F {
				st[name].(*storage.Array).F[i] = v / d
			}
		}
	}
	spoilRows(st, trial, "A_val", rng)
	return st
}

// spoilRows reverses one of B's rows (trial 2 mod 4), or makes the
// values vals (trial 3 mod 8) or F's row bounds (7 mod 8) one short.
func spoilRows(st storage.Store, trial int, vals string, rng *rand.Rand) {
	switch {
	case trial%4 == 2:
		reverseARow(st, "B", rng)
	case trial%8 == 3 && st[vals].(*storage.Array).Len() > 0:
		st[vals] = oneShort(st[vals].(*storage.Array))
	case trial%8 == 7:
		st["F_pos2"] = oneShort(st["F_pos2"].(*storage.Array))
	}
}

// againstGeneral runs plan on st against the interpreter (1 and 3
// threads), then with setOff(true) against itself: the fast path and the
// general one must give the same bits and errors.
func againstGeneral(t *testing.T, name, plan string, st storage.Store, setOff func(bool)) {
	t.Helper()
	setOff(false)
	e := parse(t, plan, st)
	got := agree(t, e, st)
	_, gerr := runEngine(e, st, 1)
	setOff(true)
	defer setOff(false)
	want, werr := runEngine(e, st, 1)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%s: error %v, with the general path %v", name, gerr, werr)
	}
	if gerr == nil && !value.Equal(got, want, 0) {
		t.Fatalf("%s: %s, with the general path %s", name, value.Format(got), value.Format(want))
	}
}

// reverseARow reverses the keys of one of matrix p's rows with two or
// more entries, if it has one: its keys are then out of order.
func reverseARow(st storage.Store, p string, rng *rand.Rand) {
	pos, idx := st[p+"_pos2"].(*storage.Array).I, st[p+"_idx2"].(*storage.Array).I
	var rows []int
	for r := 0; r+1 < len(pos); r++ {
		if pos[r+1]-pos[r] >= 2 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	r := rows[rng.IntN(len(rows))]
	slices.Reverse(idx[pos[r]:pos[r+1]])
}

// spoilMergeData makes mergeData go wrong in one of the ways the loops
// of merges must report as the interpreter does, by trial: the fixed
// segments (A's and E's rows) out of order, E's row bounds one short,
// C's and F's last rows past the end of their index arrays, F's keys
// past B's rows.
func spoilMergeData(st storage.Store, trial int, rng *rand.Rand) {
	switch trial % 5 {
	case 1:
		reverseARow(st, "A", rng)
		reverseARow(st, "E", rng)
	case 2:
		// A row whose bounds pass the end of its index array: an
		// empty one, or the last one.
		for _, name := range []string{"C_pos2", "F_pos2"} {
			pos := st[name].(*storage.Array).I
			if n := len(pos); trial%10 == 7 && n >= 2 {
				pos[n-2], pos[n-1] = pos[n-1]+3, pos[n-1]+3
			} else {
				pos[n-1] += 2
			}
		}
	case 3:
		if trial%10 == 3 {
			st["E_pos2"] = oneShort(st["E_pos2"].(*storage.Array))
		}
	case 4:
		// F's keys may name rows B does not have.
		m := st["F_idx2"].(*storage.Array).I
		for p := range m {
			if rng.IntN(4) == 0 {
				m[p] += int64(rng.IntN(3))
			}
		}
	}
}

// BenchmarkRowsOfMerges compares the nest's rows of merges with the
// closure path on SDDMM with CSR factors (rank 8) and MTTKRP's nest as
// the optimizer writes it for sparse factors (fibers of an entry or two,
// rows of C and D of about one), with its guards and without, in
// alternate runs: go test ./engine -run XXX -bench RowsOfMerges
// -benchtime 40x -count 3.
func BenchmarkRowsOfMerges(b *testing.B) {
	rng := rand.New(rand.NewPCG(43, 44))
	sddmm := storage.Store{}
	randCSR(4000, 4000, 240_000, rng).store(sddmm, "S")
	randCSR(4000, 8, 32_000, rng).store(sddmm, "U")
	randCSR(4000, 8, 32_000, rng).store(sddmm, "V")
	mttkrp := storage.Store{}
	a := randCSR(20_000, 19_000, 300_000, rng)
	a.store(mttkrp, "A")
	randCSR(len(a.idx), 20, len(a.idx)*6/5, rng).store(mttkrp, "E")
	randCSR(19_000, 25, 15_000, rng).store(mttkrp, "F")
	randCSR(25, 20, 16, rng).store(mttkrp, "B")
	mttkrp["lastB"] = storage.IntScalar(24)
	plans := map[string]string{}
	for _, pc := range mergeLoopPlans {
		plans[pc.name] = pc.plan
	}
	for _, c := range []struct {
		name, plan string
		st         storage.Store
	}{
		{"SDDMM", nestMergePlans[2].plan, sddmm},
		{"MTTKRP-guarded", plans["MTTKRP's nest as the optimizer writes it on orghs"], mttkrp},
		// The e2e plan once the optimizer has proven its guards.
		{"MTTKRP", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), E_idx2(E_pos2(p2):E_pos2(p2 + 1))>)
        { @dense j -> E_val(p3) * F_val(q) * B_val(p5) } }`, mttkrp},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Alternate runs of the two kernels, which resists the load
			// of a shared machine better than separate benchmarks.
			var ks [2]*Kernel
			for i := range ks {
				closuresOnly = i == 0
				k, err := Compile(parse(b, c.plan, c.st), SchemaOf(c.st), Options{Threads: 1})
				closuresOnly = false
				if err != nil {
					b.Fatal(err)
				}
				ks[i] = k
			}
			var ts [2][]time.Duration
			for range b.N {
				for i, k := range ks {
					start := time.Now()
					if _, err := k.Exec(c.st); err != nil {
						b.Fatal(err)
					}
					ts[i] = append(ts[i], time.Since(start))
				}
			}
			med := func(t []time.Duration) float64 {
				slices.Sort(t)
				return float64(t[len(t)/2].Microseconds()) / 1000
			}
			closures, nest := med(ts[0]), med(ts[1])
			b.ReportMetric(closures, "closures-ms")
			b.ReportMetric(nest, "nest-ms")
			b.ReportMetric(nest/closures, "nest/closures")
		})
	}
}
