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
		on, off := alternate(t, *narrowRuns, func(narrow bool) { useNarrow = narrow }, k, st)
		t.Logf("%s of %s, one thread, %d runs each: 32-bit indices %v (min %v), 64-bit %v (min %v): ratio of medians %.2f, of mins %.2f",
			kernel, *bandwidthMatrix, *narrowRuns, on[len(on)/2], on[0], off[len(off)/2], off[0],
			float64(on[len(on)/2])/float64(off[len(off)/2]), float64(on[0])/float64(off[0]))
	}
}

// alternate runs kernel k on st with a toggle on and off (set), checks
// that both ways give the same bits, then times runs times each way,
// alternating (a shared machine's load hits both alike), and returns the
// sorted times. It leaves the toggle on.
func alternate(t *testing.T, runs int, set func(bool), k *Kernel, st storage.Store) (on, off []time.Duration) {
	t.Helper()
	result := func(b bool) value.Value {
		set(b)
		v, err := k.Run(st)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if !value.Equal(result(false), result(true), 0) {
		t.Fatal("the kernel's result differs with the toggle off")
	}
	timed := func(b bool) time.Duration {
		set(b)
		start := time.Now()
		if _, err := k.Exec(st); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	for range runs {
		on = append(on, timed(true))
		off = append(off, timed(false))
	}
	set(true)
	slices.Sort(on)
	slices.Sort(off)
	return on, off
}
