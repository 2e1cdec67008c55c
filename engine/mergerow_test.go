package engine

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Products of an array read and a merge whose one segment stays put while
// the loop runs (mergeRow): MTTKRP's inner loop over C's row, with A's row
// i for B's fiber and B's row j for D's.
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
	// The loop over C's row inside the loop over the keys of B(i,:,:)
	// (mergeRowsRun): A's row i gives the keys k, E's row p2 the fiber,
	// F's row k the keys j.
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

// TestMergeRow runs the products against the interpreter (1 and 3
// threads) and against the general loop (the same bits and errors), on
// data where every key of C has a row of B (the loop runs to the end of
// its windows) and where some have none (the guard is not covered), B's
// rows are out of order, A's values or F's row bounds one short (the loop
// hands over to the general one at the start of a window or in its
// middle, or an error stops it), and checks that the loop ran to the end
// and handed over.
func TestMergeRow(t *testing.T) {
	defer func() { mergeRowOff, mergeRowStopped = false, nil }()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, pc := range mergeRowPlans {
		var ended, handed atomic.Int64 // agree runs 3 threads
		for trial := range 60 {
			st := mergeData(trial, rng)
			mergeRowStopped = func(lo, stop, hi int64) {
				if stop == hi {
					ended.Add(1)
				} else {
					handed.Add(1)
				}
			}
			againstGeneral(t, pc.name, pc.plan, st, func(off bool) { mergeRowOff = off })
		}
		if ended.Load() == 0 || handed.Load() == 0 {
			t.Errorf("%s: windows run to the end %d, handed over %d; want both", pc.name, ended.Load(), handed.Load())
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
	switch {
	case trial%4 == 2:
		reverseARow(st, "B", rng)
	case trial%8 == 3 && st["A_val"].(*storage.Array).Len() > 0:
		st["A_val"] = oneShort(st["A_val"].(*storage.Array))
	case trial%8 == 7:
		st["F_pos2"] = oneShort(st["F_pos2"].(*storage.Array))
	}
	return st
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
