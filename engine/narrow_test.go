package engine

import (
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var narrowRuns = flag.Int("engine.narrow", 0, "TestNarrowRatio: alternate this many runs of SpMV and BATAX with 32-bit and with 64-bit column indices, and print the ratios")

// TestNarrowRatio measures what reading a CSR matrix's column indices
// from their 32-bit copy (storage.Array.Narrow) buys SpMV and BATAX: the
// optimizer's plans over the matrix -engine.matrix on one thread,
// alternating runs with useNarrow on and off in one process, from warm
// caches (as the command's repeated runs and SciPy's are):
//
//	go test ./engine -run NarrowRatio -engine.narrow 41 -engine.matrix /work/shared/data/landmark.mtx.gz -v
//
// Both ways must give the same bits. It never fails on timings.
func TestNarrowRatio(t *testing.T) {
	if *narrowRuns == 0 {
		t.Skip("set -engine.narrow N")
	}
	if !narrowRows {
		t.Skip("no row loop reads 32-bit indices here")
	}
	coo := readMatrixFlag(t)
	csr, err := storage.ParseFormat("csr")
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Build("A", coo, csr)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, coo.Dims[1])
	for i := range x {
		x[i] = float64(1+i%2048) / 1024
	}
	st["x"], st["beta"] = storage.RealArray(x), storage.RealScalar(1.5)
	defer func(u bool) { useNarrow = u }(useNarrow)
	for _, kernel := range []string{"spmv", "batax"} {
		k, err := Compile(optimizedPlan(t, kernel, map[string]string{"A": "csr"}, st), SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		k.Prepare(st)
		result := func(narrow bool) value.Value {
			useNarrow = narrow
			v, err := k.Run(st)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if !value.Equal(result(true), result(false), 0) {
			t.Fatalf("%s with 32-bit indices differs from %s with 64-bit ones", kernel, kernel)
		}
		timed := func(narrow bool) time.Duration {
			useNarrow = narrow
			start := time.Now()
			if _, err := k.Exec(st); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		var on, off []time.Duration
		for range *narrowRuns {
			on = append(on, timed(true))
			off = append(off, timed(false))
		}
		slices.Sort(on)
		slices.Sort(off)
		t.Logf("%s of %s, one thread, %d runs each: 32-bit indices %v (min %v), 64-bit %v (min %v): ratio of medians %.2f, of mins %.2f",
			kernel, *bandwidthMatrix, *narrowRuns, on[len(on)/2], on[0], off[len(off)/2], off[0],
			float64(on[len(on)/2])/float64(off[len(off)/2]), float64(on[0])/float64(off[0]))
	}
}
