package engine

import (
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/storage"
)

// Loops whose body is a merge adding into the builder: the loop over C's
// row alone, with A's row i for the fixed segment and B's row j for the
// moving one (the closure path runs it), and MTTKRP's nest as the
// optimizer writes it on orghs (mergeLoopRowsRun runs the pair of loops),
// with E's row p2 for B's fiber and F's row k for C's row.
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

// TestMergeLoops runs the loops against the interpreter (1 and 3 threads)
// and against the general loops (the same bits and errors) on mergeData,
// with more ways to go wrong: the fixed segments (A's and E's rows) out of
// order, E's row bounds one short, C's and F's last rows past the end of
// their index arrays, F's keys past B's rows. It checks that the nests'
// runs went to the end and that some handed over to the general loops.
func TestMergeLoops(t *testing.T) {
	defer func() { mergeLoopOff, mergeLoopStopped = false, nil }()
	rng := rand.New(rand.NewPCG(33, 34))
	for _, pc := range mergeLoopPlans {
		var ended, handed atomic.Int64 // agree runs 3 threads
		for trial := range 120 {
			st := mergeData(trial, rng)
			spoilMergeData(st, trial, rng)
			mergeLoopStopped = func(lo, stop, hi int64) {
				if stop == hi {
					ended.Add(1)
				} else {
					handed.Add(1)
				}
			}
			againstGeneral(t, pc.name, pc.plan, st, func(off bool) { mergeLoopOff = off })
		}
		if nest := strings.Contains(pc.plan, "sum(<p2, k>"); nest == (ended.Load() == 0 || handed.Load() == 0) {
			t.Errorf("%s: runs to the end %d, handed over %d; want both in a nest, neither elsewhere", pc.name, ended.Load(), handed.Load())
		}
	}
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
