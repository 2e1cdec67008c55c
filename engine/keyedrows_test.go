package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/storage"
)

// Plans whose outer loop keys a row that a vectorized segment loop
// fills ({i -> sum(segment) {j -> v}}): the rows of a block of
// iterations run in position space, each lane into its row's row.
const (
	// The row's value reads the row's variable through a guarded read
	// (w shorter than S's rows: an error the lanes must report).
	planRowsScaled = `sum(<i, _> in 0:S_len1)
    { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
      { @dense j -> S_val(p2) + w_val(i) } }`
	// Two iterations key each row, through a let: a row's entries come
	// in two runs, the second's keys out of order against the first's.
	planRowsHalved = `sum(<i, _> in 0:S_len1)
    let h = i / 2 in
    { @dense h -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
      { @dense j -> S_val(p2) + U_val(h) } }`
	// Int values (j + i is 0 at the first key of row 0: no entry).
	planRowsInts = `sum(<i, _> in 0:S_len1)
    { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
      { @dense j -> j + i } }`
)

// TestKeyedRowsInPositionSpace checks against the interpreter, at 1 and
// 3 threads, rows run a block at a time: rows longer than a batch and
// empty ones, keys out of order in a row (the row settles), reads past
// an array's end (errors), real and int values.
func TestKeyedRowsInPositionSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 29))
	for trial := range 12 {
		n, m, nnz := 40, 60, 500
		if trial%3 == 2 {
			n, m, nnz = 12, 900, 4000 // rows of hundreds of entries: several batches each
		}
		s := randCSR(n, m, nnz, rng)
		st := storage.Store{}
		s.store(st, "S")
		if trial%4 == 1 {
			idx := slices.Clone(s.idx)
			slices.Reverse(idx)
			st["S_idx2"] = storage.IntArray(idx)
		}
		rank := 1 + rng.IntN(8)
		denseStore(st, "U", n, rank, rng)
		vrows := m
		if trial%5 == 4 {
			vrows = m - 5 // V's rows end before S's columns: an error
		}
		denseStore(st, "V", vrows, rank, rng)
		wlen := n
		if trial%6 == 5 {
			wlen = n / 2
		}
		st["w_val"], st["w_len1"] = storage.RealArray(randVec(wlen, rng)), storage.IntScalar(int64(wlen))
		for _, plan := range []string{planSDDMMNested, planRowsScaled, planRowsHalved, planRowsInts} {
			seen := events(func() { agree(t, parse(t, plan, st), st) })
			if seen["keyed rows"] == 0 {
				t.Errorf("trial %d, %s: the rows did not run a block at a time: %v", trial, plan, seen)
			}
		}
	}
}
