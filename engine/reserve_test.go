package engine

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/storage"
)

// TestRowReservedOnce checks that a dense result keyed by the rows of a
// split loop (here each worker's private row: the let keeps the split
// from writing one shared result) is reserved to the loop's last row at
// a worker's first range, not grown range by range, copying itself each
// time.
func TestRowReservedOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	st := storage.Store{"alpha": storage.RealScalar(1.5)}
	csr(st, "A", 6000, 40, 24000, rng)
	st["x"] = storage.RealArray(randVec(40, rng))
	e := parse(t, `sum(<i, _> in 0:A_len1)
  let t1 = sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x(j) in
  { @dense i -> alpha * t1 }`, st)
	agree(t, e, st)
	var grown atomic.Int64 // the workers' rows grow concurrently
	realsGrown = func() { grown.Add(1) }
	defer func() { realsGrown = nil }()
	for _, threads := range []int{1, 2} {
		grown.Store(0)
		seen := events(func() {
			if _, err := runEngine(e, st, threads); err != nil {
				t.Fatal(err)
			}
		})
		if seen["dot"] == 0 || grown.Load() > int64(threads) {
			t.Errorf("threads=%d: events %v, rows grown %d times, want the segmented dot and at most one growth of each worker's row", threads, seen, grown.Load())
		}
	}
}
