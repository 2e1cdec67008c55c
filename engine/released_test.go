package engine

import (
	"math/rand/v2"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestReleasedStorage: a run after a result was released builds its rows
// in that result's storage (full blocks given back poisoned, as new
// blocks are in every test, and zeroed or written as they are carved),
// and still agrees with the interpreter; a result not released keeps its
// values through later runs. MMM with dense rows (carveDense's blocks),
// with sparse rows (lists: blocks of keys and values), and SpMV's one
// long row (reserved, zeroed; unzeroed at 3 threads, where each chunk
// zeroes its keys), at 1 and 3 threads; MMM with a result smaller than
// a full block, whose growing blocks (poolBlock entries or more) are
// pooled too.
// Without Release (or with one that keeps the blocks) no block comes
// back.
func TestReleasedStorage(t *testing.T) {
	// No collection may empty the pool between a release and the run
	// that takes the blocks back.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(28, 29))
	type storeCase struct {
		name, plan string
		st         storage.Store
	}
	mmm := func(name string, rows, aRow, bRow int) storeCase {
		st := storage.Store{}
		randCSR(rows, rows, aRow*rows, rng).store(st, "A")
		randCSR(rows, 250, bRow*rows, rng).store(st, "B")
		return storeCase{name, planMMM, st}
	}
	n := longRow + 100
	spmv := storeCase{"spmv", planSpMV, storage.Store{"x": storage.RealArray(randVec(n, rng))}}
	randCSR(n, n, 2*n, rng).store(spmv.st, "A")
	// BATAX's private rows (one per dealt worker, long enough for the
	// pools) go back to the split's own pool after the merge: they are not
	// the result's, and a release must not hand them out again.
	batax := storeCase{"batax", planBATAX, storage.Store{"x": storage.RealArray(randVec(n, rng)), "beta": storage.RealScalar(1.5)}}
	randCSR(3000, n, 4*n, rng).store(batax.st, "A")
	for _, tc := range []storeCase{mmm("mmm, dense rows", 400, 10, 20), mmm("mmm, list rows", 8000, 3, 4), mmm("mmm, no full block", 2000, 3, 4), spmv, batax} {
		st := tc.st
		e := parse(t, tc.plan, st)
		want, err := eval.Eval(e, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 3} {
			k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			exec := func(what string) *Result {
				t.Helper()
				r, err := k.Exec(st)
				if err != nil {
					t.Fatalf("%s, threads=%d, %s: %v", tc.name, threads, what, err)
				}
				if got := r.Value(); !value.Equal(got, want, 1e-9) {
					t.Fatalf("%s, threads=%d, %s: the result differs from the interpreter's", tc.name, threads, what)
				}
				return r
			}
			first := exec("first run")
			// At 3 threads a worker's rows may fill no full block.
			if len(first.owned) == 0 && threads == 1 {
				t.Fatalf("%s, threads=%d: the result has no pooled storage", tc.name, threads)
			}
			kept := exec("a run while the first result is held")
			// A sync.Pool promises nothing: an item put while the
			// goroutine ran on one P stays in that P's private slot,
			// which a Get on another cannot take. So a few releases
			// in turn (more of them at 3 threads, whose workers put from
			// several Ps), and at least one block released by any of them
			// must come back.
			reused, released := 0, map[unsafe.Pointer]bool{}
			for range 24 {
				for _, o := range first.owned {
					released[o.p] = true
				}
				first.Release()
				if first.d != nil || first.owned != nil {
					t.Fatalf("%s, threads=%d: a released result still holds its dictionary", tc.name, threads)
				}
				first = exec("a run after a release")
				for _, o := range first.owned {
					if released[o.p] {
						reused++
					}
				}
			}
			if reused == 0 && len(released) > 0 {
				t.Errorf("%s, threads=%d: no block of the released results was taken back (%d released)", tc.name, threads, len(released))
			}
			if got := kept.Value(); !value.Equal(got, want, 1e-9) {
				t.Fatalf("%s, threads=%d: a result not released changed under a later run", tc.name, threads)
			}
			kept.Release()
			first.Release()
		}
	}
}
