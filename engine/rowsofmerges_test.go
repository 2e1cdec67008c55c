package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// The rows of merges the nest takes when it is let (nestRowMerges): the
// loops over C's row whose body is one merge into the row (a product of
// the merge and factors, or the merge adding into the row's entry), alone
// or inside the loop over A's row (MTTKRP's nest), guarded or not.
var rowMergeNames = []string{
	"the guard in front", "invariant factors, no guard",
	"the nest as the optimizer writes it for the e2e factors",
	"the loop over C's row", "the fixed segment second, no guard",
	"MTTKRP's nest as the optimizer writes it on orghs", "the nest behind a guard on a scalar",
}

// TestRowsOfMergesInNest runs the rows of merges in the nest against the
// interpreter (bits and errors, 1 and 3 threads) on mergeData with the
// ways it can go wrong TestMergeLoops and TestMergeRow use (rows out of
// order, bounds past their arrays, keys past B's rows), and checks that
// the nest took every loop of them: explain names no older path.
func TestRowsOfMergesInNest(t *testing.T) {
	defer func() { nestRowMerges = false }()
	nestRowMerges = true
	plans := map[string]string{}
	for _, pc := range append(append([]struct{ name, plan string }{}, mergeRowPlans...), mergeLoopPlans...) {
		plans[pc.name] = pc.plan
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, name := range rowMergeNames {
		plan := plans[name]
		if plan == "" {
			t.Fatalf("no plan %q", name)
		}
		for trial := range 80 {
			st := mergeData(trial, rng)
			switch trial % 5 {
			case 1:
				reverseARow(st, "A", rng)
				reverseARow(st, "E", rng)
			case 2:
				for _, p := range []string{"C_pos2", "F_pos2"} {
					if pos := st[p].(*storage.Array).I; len(pos) > 0 {
						pos[len(pos)-1] += 2
					}
				}
			case 3:
				if trial%10 == 3 {
					st["E_pos2"] = oneShort(st["E_pos2"].(*storage.Array))
				}
			}
			e := parse(t, plan, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
			if err != nil {
				t.Fatal(err)
			}
			if x := k.String(); strings.Contains(x, "older path") || !strings.Contains(x, "iterator: merge") {
				t.Fatalf("%s: not all in the nest:\n%s", name, x)
			}
			agree(t, e, st)
		}
	}
}

// BenchmarkRowsOfMerges compares the nest's rows of merges with the
// older paths' loops (mergerow.go, mergeloop.go) on SDDMM with CSR
// factors (rank 8) and MTTKRP's nest as the optimizer writes it for
// sparse factors (fibers of an entry or two, rows of C and D of about
// one): go test ./engine -run XXX -bench RowsOfMerges -count 5.
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
		{"MTTKRP", plans["MTTKRP's nest as the optimizer writes it on orghs"], mttkrp},
	} {
		for _, nest := range []bool{false, true} {
			what := "older"
			if nest {
				what = "nest"
			}
			b.Run(c.name+"/"+what, func(b *testing.B) {
				nestRowMerges = nest
				defer func() { nestRowMerges = false }()
				runKernel(b, c.plan, c.st, 1, 0)
			})
		}
	}
}
