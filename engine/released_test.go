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
// in that result's full blocks (given back poisoned, as new blocks are in
// every test, and zeroed or written as they are carved), and still
// agrees with the interpreter; a result not released keeps its values
// through later runs. MMM with dense rows (carveDense's blocks) and with
// sparse rows (lists: blocks of keys and values), at 1 and 3 threads.
// Without Release (or with one that keeps the blocks) no block comes
// back.
func TestReleasedStorage(t *testing.T) {
	// No collection may empty the pool between a release and the run
	// that takes the blocks back.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(28, 29))
	for _, tc := range []struct {
		name             string
		rows, aRow, bRow int
	}{{"dense rows", 400, 10, 20}, {"list rows", 8000, 3, 4}} {
		st := storage.Store{}
		a := randCSR(tc.rows, tc.rows, tc.aRow*tc.rows, rng)
		b := randCSR(tc.rows, 250, tc.bRow*tc.rows, rng)
		a.store(st, "A")
		b.store(st, "B")
		e := parse(t, planMMM, st)
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
			if len(first.blocks[0])+len(first.blocks[1]) == 0 {
				t.Fatalf("%s, threads=%d: the result has no full block", tc.name, threads)
			}
			kept := exec("a run while the first result is held")
			released := map[unsafe.Pointer]bool{}
			for _, ps := range first.blocks {
				for _, p := range ps {
					released[p] = true
				}
			}
			first.Release()
			if first.d != nil || first.blocks[0] != nil || first.blocks[1] != nil {
				t.Fatalf("%s, threads=%d: a released result still holds its dictionary", tc.name, threads)
			}
			again := exec("a run after the release")
			reused := 0
			for _, ps := range again.blocks {
				for _, p := range ps {
					if released[p] {
						reused++
					}
				}
			}
			// At 3 threads a block may stay in the pool's slot of
			// another P, which the workers cannot take it from.
			if reused == 0 && threads == 1 {
				t.Errorf("%s, threads=%d: no block of the released result was taken back (%d released)", tc.name, threads, len(released))
			}
			if got := kept.Value(); !value.Equal(got, want, 1e-9) {
				t.Fatalf("%s, threads=%d: a result not released changed under a later run", tc.name, threads)
			}
			kept.Release()
			again.Release()
		}
	}
}
