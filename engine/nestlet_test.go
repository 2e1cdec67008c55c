package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Plans of rows with a scalar let (BATAX and its variants), and whether
// the loop-nest IR runs their rows by its segmented dot and scatter.
var rowLetPlans = []struct {
	name, plan string
	fast       bool
}{
	{"BATAX as the optimizer writes it", `sum(<i1, _> in 0:A_len1)
  let t5 = beta * (sum(<p1, k> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) A_val(p1) * x(k)) in
  sum(<p2, j> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @dense j -> A_val(p2) * t5 }`, true},
	{"t first, the dot of one matrix scattering another", `sum(<_, i> in 0:A_len1)
  let t = sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k) in
  sum(<q, j> in B_idx2(B_pos2(i):B_pos2(i + 1))) { @dense j -> t * B_val(q) }`, true},
	{"an invariant on both sides", `sum(<i, _> in 0:A_len1)
  let t = (beta * (sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k))) * 3.0 in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(q) * t }`, true},
	{"BATAX of a pattern matrix (no value array)", `sum(<i1, _> in 0:A_len1)
  let t1 = beta * (sum(<_, k> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) x(k)) in
  sum(<_, j> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @dense j -> t1 }`, true},
	{"scaled scatter: the general row", `sum(<i, _> in 0:A_len1)
  let t = sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k) in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> beta * A_val(q) * t }`, false},
	{"a let of the row number: the general row", `sum(<i, _> in 0:A_len1)
  let t = x(i) * beta in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(q) * t }`, false},
}

// TestNestRowLets checks the rows with a scalar let against the
// interpreter (1 and 3 threads) and against the closure paths bit for
// bit, errors included, with real and int matrices and data that makes a
// row fail; and that clean data runs the primitives where expected.
func TestNestRowLets(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, pc := range rowLetPlans {
		for trial := range 24 {
			n, m := 1+rng.IntN([]int{30, 300}[trial%2]), 1+rng.IntN(30) // 300: rows in several blocks
			nnz := func() int { return rng.IntN(4*n + 1) }
			if trial%8 == 3 {
				// Wider than maxDenseJump, with enough entries that the
				// result is grown to every key at once (holdKeysOf).
				n, m = 50+rng.IntN(250), maxDenseJump+1+rng.IntN(5000)
				nnz = func() int { return m/3 + rng.IntN(m) }
				if trial == 11 {
					// Too few entries for that: keys are checked one by
					// one, the far ones spilled.
					nnz = func() int { return 1 + rng.IntN(2*n) }
				}
			}
			st := storage.Store{"beta": storage.RealScalar(float64(rng.IntN(5)) - 1.5)}
			csr(st, "A", n, m, nnz(), rng)
			csr(st, "B", n, m, nnz(), rng)
			st["x"] = storage.RealArray(randVec(max(n, m), rng))
			if trial%3 == 1 {
				// A pattern matrix's values are ints.
				st["A_val"] = intsOf(st["A_val"])
				st["B_val"] = intsOf(st["B_val"])
			}
			clean := true
			switch trial % 8 {
			case 5: // x too short: a read outside x in some row
				x := st["x"].(*storage.Array).F
				st["x"] = storage.RealArray(x[:rng.IntN(len(x))])
				clean = false
			case 6: // a row's bounds out of order
				pos := slices.Clone(st["A_pos2"].(*storage.Array).I)
				if r := rng.IntN(n); pos[r+1] > pos[r] {
					pos[r], pos[r+1] = pos[r+1], pos[r]
				}
				st["A_pos2"] = storage.IntArray(pos)
				clean = false
			case 7: // values shorter than the indices
				if v := st["A_val"].(*storage.Array); v.Len() > 0 {
					st["A_val"] = oneShort(v)
				}
				clean = false
			}
			e := parse(t, pc.plan, st)
			seen := events(func() { agree(t, e, st) })
			if clean && pc.fast && trial != 11 && (seen["dot"] == 0 || seen["scatter"] == 0) && st["A_idx2"].(*storage.Array).Len() > 0 {
				t.Fatalf("%s, trial %d: events %v, want the segmented dot and scatter", pc.name, trial, seen)
			}
			// The closure paths must give the same bits and errors.
			restore := nestsOff()
			want, werr := runEngine(e, st, 1)
			restore()
			for _, threads := range []int{1, 2} {
				got, err := runEngine(e, st, threads)
				if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("%s, threads=%d: error %v, the closure paths' %v", pc.name, threads, err, werr)
				}
				if threads == 1 && err == nil && !value.Equal(got, want, 0) {
					t.Fatalf("%s: nest %s, closure paths %s", pc.name, value.Format(got), value.Format(want))
				}
			}
		}
	}
}

// oneShort returns a non-empty array without its last element.
func oneShort(v *storage.Array) *storage.Array {
	if v.Elem == ir.Int {
		return storage.IntArray(v.I[:v.Len()-1])
	}
	return storage.RealArray(v.F[:v.Len()-1])
}

// intsOf turns a real array of whole numbers into an int array.
func intsOf(o storage.Object) *storage.Array {
	f := o.(*storage.Array).F
	v := make([]int64, len(f))
	for i, x := range f {
		v[i] = int64(x)
	}
	return storage.IntArray(v)
}

// TestHoldKeysOf checks when a dense result grows to every key of an
// index array at once (so that a scatter of its keys needs no check).
func TestHoldKeysOf(t *testing.T) {
	for _, c := range []struct {
		imin, imax int64
		n, want    int
	}{
		{0, 100_000, 30_000, 100_001}, // past maxDenseJump, inside denseKeysFactor times the entries
		{0, 100_000, 20_000, 0},       // past both: keys go one by one
		{0, 1 << 40, 30_000, 0},       // one stray huge key: left to the spill map
		{-1, 10, 100, 0},              // a negative key
		{0, 100, 1, 101},              // inside maxDenseJump
	} {
		bd := &builder{spec: &bspec{dense: true, real: true, depth: 1}}
		bd.holdKeysOf(&cell{imin: c.imin, imax: c.imax, ints: make([]int64, c.n)})
		if len(bd.reals) != c.want {
			t.Errorf("keys %d..%d of %d entries: length %d, want %d", c.imin, c.imax, c.n, len(bd.reals), c.want)
		}
	}
}

// TestRowLetBatches checks loop-free lets of rows in position space (the
// column's x(j) of a CSC SpMV, hoisted out of its scatter; an int let of
// the row's length): their values come a block's rows at a time, the
// scatter reads a bare let's values as they are, and the results and
// errors are the interpreter's and the closure paths'.
func TestRowLetBatches(t *testing.T) {
	plans := []string{
		`sum(<j, _> in 0:A_len1)
  let t1 = x(j) in
  sum(<p, i> in A_idx2(A_pos2(j):A_pos2(j + 1))) { @dense i -> A_val(p) * t1 }`,
		`sum(<j, _> in 0:A_len1)
  let t1 = x(j) * beta in
  let n = A_pos2(j + 1) - A_pos2(j) in
  sum(<p, i> in A_idx2(A_pos2(j):A_pos2(j + 1))) { @dense i -> A_val(p) * t1 * n }`,
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for k, plan := range plans {
		for trial := range 6 {
			n, m := 1+rng.IntN([]int{40, 400}[trial%2]), 1+rng.IntN(40)
			st := storage.Store{"beta": storage.RealScalar(float64(rng.IntN(5)) - 1.5)}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			x := randVec(n, rng)
			clean := trial < 4
			if !clean {
				x = x[:rng.IntN(n)] // a read outside x in some row
			}
			st["x"] = storage.RealArray(x)
			e := parse(t, plan, st)
			seen := events(func() { agree(t, e, st) })
			if clean && seen["let values"] == 0 {
				t.Fatalf("plan %d, trial %d: events %v, want the lets' values in batches", k, trial, seen)
			}
			restore := nestsOff()
			want, werr := runEngine(e, st, 1)
			restore()
			got, err := runEngine(e, st, 1)
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("plan %d, trial %d: error %v, the closure paths' %v", k, trial, err, werr)
			}
			if err == nil && !value.Equal(got, want, 0) {
				t.Fatalf("plan %d, trial %d: nest %s, closure paths %s", k, trial, value.Format(got), value.Format(want))
			}
		}
	}
}
