package engine

import (
	"flag"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
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
	b := &storage.COO{Dims: []int64{a.Dims[1], 250}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := range b.Dims[0] {
		for j := range b.Dims[1] {
			if rng.IntN(32) == 0 {
				b.Coords[0], b.Coords[1] = append(b.Coords[0], i), append(b.Coords[1], j)
				b.Vals = append(b.Vals, float64(1+rng.IntN(2048))/1024)
			}
		}
	}
	csr, err := storage.ParseFormat("csr")
	if err != nil {
		t.Fatal(err)
	}
	st := storage.Store{}
	for name, coo := range map[string]*storage.COO{"A": a, "B": b} {
		s, err := storage.Build(name, coo, csr)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(st, s)
	}
	k, err := Compile(optimizedPlan(t, "mmm", map[string]string{"A": "csr", "B": "csr"}, st), SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func(s bool) { useSweep = s }(useSweep)
	on, off := alternate(t, *sweepRuns, func(sweep bool) { useSweep = sweep }, k, st)
	t.Logf("MMM of %s by a 250-column factor, one thread, %d runs each: swept %v (min %v), marked %v (min %v): ratio of medians %.2f",
		*bandwidthMatrix, *sweepRuns, on[len(on)/2], on[0], off[len(off)/2], off[0], float64(on[len(on)/2])/float64(off[len(off)/2]))
}
