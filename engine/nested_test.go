package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// Sparse products whose outer loop has a prelude of guards on the key
// and lets of array reads, and single loops with such a prelude.
var windowPlans = []struct{ name, plan string }{
	{"MMM as the optimizer writes it", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> B_val(p1) * t1 } }`},
	{"two lets, a guard between them, the value read one position on", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let u = A_idx2(p2) in
    if k >= 0 && k <= lastB && k != 7 then
      let t1 = A_val(p2 + 1) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> t1 * B_val(p1) } }`},
	// The same prelude before a loop of merges: MTTKRP's guard on B's
	// keys before C's row of merges.
	{"a loop of merges", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
        merge(<q1, q2, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(k):B_pos2(k + 1))>)
          { @dense j -> t1 * B_val(q2) } }`},
	// One loop with the same prelude, into a dense row, a hash row and a
	// scalar: MTTKRP's guard on C's keys.
	{"a dense row", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in { @dense k -> t1 * B_pos2(k + 1) } }`},
	{"a hash row", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in { @hash k -> t1 * B_pos2(k + 1) } }`},
	// A guard inside the singleton.
	{"a guard inside a dense singleton", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    { @dense k -> if 0 <= k && k < B_len1 then A_val(p2) * B_pos2(k + 1) } }`},
	{"a guard inside a hash singleton, at the top", `sum(<p2, k> in A_idx2(A_pos2(0):A_pos2(A_len1)))
    { @hash k -> if 0 <= k && k < B_len1 then A_val(p2) * B_pos2(k + 1) }`},
	{"a scalar", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in t1 * B_pos2(k + 1) }`},
}

// TestWindowPrelude runs the products on the closure path against the
// interpreter (1 and 3 threads) on data whose keys all pass the guards
// and reads all fit, and on data where some key fails a guard or some
// read falls past its array.
func TestWindowPrelude(t *testing.T) {
	defer nestsOff()()
	rng := rand.New(rand.NewPCG(23, 24))
	for _, pc := range windowPlans {
		for trial := range 40 {
			n, m, w := 1+rng.IntN(40), 1+rng.IntN(20), 1+rng.IntN(300)
			mb := m // B's rows: every key of A has one
			if trial%4 == 1 {
				mb = 1 + rng.IntN(m) // some keys of A have none: the guard drops them
			}
			st := storage.Store{"lastB": storage.IntScalar(int64(mb - 1))}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			csr(st, "B", mb, w, rng.IntN(8*mb+1), rng)
			if trial%3 == 2 {
				st["A_val"] = intsOf(st["A_val"])
			}
			if v := st["A_val"].(*storage.Array); trial%4 == 3 && v.Len() > 0 {
				// One value short: the last entry's read (or, in the
				// second plan, that of the entry before) is past the end.
				st["A_val"] = oneShort(v)
			}
			e := parse(t, pc.plan, st)
			agree(t, e, st)
		}
	}
}
