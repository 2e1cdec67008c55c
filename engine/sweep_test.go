package engine

import (
	"flag"
	"math/rand/v2"
	"testing"
)

var sweepRuns = flag.Int("engine.sweep", 0, "TestSweepRatio: alternate this many runs of MMM with rows swept and with rows marked, and print the ratio")

// TestSweepRatio measures what sweeping narrow rows (sweep.go) buys: MMM
// of a real matrix (-engine.matrix) by a random factor of 250 columns at
// density 1/32, as in the e2e benchmark, on one thread, alternating runs
// with useSweep on and off in one process:
//
//	go test ./engine -run SweepRatio -engine.sweep 11 -engine.matrix /work/shared/data/landmark.mtx.gz -v
//
// Both ways must give the same bits. It never fails on timings.
func TestSweepRatio(t *testing.T) {
	if *sweepRuns == 0 {
		t.Skip("set -engine.sweep N")
	}
	if !useSweep {
		t.Skip("rows are not swept here (no AVX-512)")
	}
	a := readMatrixFlag(t)
	rng := rand.New(rand.NewPCG(11, 12))
	st := storeOf(t, map[string]stored{"A": {a, "csr"}, "B": {randFactor(rng, a.Dims[1], 250), "csr"}})
	k, err := Compile(optimizedPlan(t, "mmm", map[string]string{"A": "csr", "B": "csr"}, st), SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func(s bool) { useSweep = s }(useSweep)
	on, off := alternate(t, *sweepRuns, func(sweep bool) { useSweep = sweep }, k, st)
	t.Logf("MMM of %s by a 250-column factor, one thread, %d runs each: swept %v (min %v), marked %v (min %v): ratio of medians %.2f",
		*bandwidthMatrix, *sweepRuns, on[len(on)/2], on[0], off[len(off)/2], off[0], float64(on[len(on)/2])/float64(off[len(off)/2]))
}
