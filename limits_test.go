package storel_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	storel "github.com/storel/storel"
	"github.com/storel/storel/engine"
	"github.com/storel/storel/storage"
)

// runLimited compiles src (over an int scalar n) and runs it as o says.
func runLimited(t *testing.T, src string, n int64, o storel.RunOptions) error {
	t.Helper()
	w := storel.NewWorkspace()
	w.SetObject("n", storage.IntScalar(n))
	p, err := w.Compile("limits.sdql", []byte("CREATE int SCALAR n;\n"+src+"\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(o)
	return err
}

var limitedRuns = []storel.RunOptions{
	{Plan: storel.PlanOptimized, Threads: 1},
	{Plan: storel.PlanOptimized, Threads: 3},
	{Plan: storel.PlanNaive, Threads: 1},
	{Plan: storel.PlanOptimized, Engine: storel.EngineInterp},
}

func limitError(t *testing.T, what string, err error, limit, msg string) {
	t.Helper()
	var le *storel.LimitError
	if !errors.As(err, &le) || le.Limit != limit || !strings.Contains(le.Msg, msg) {
		t.Errorf("%s: got %v, want a %s limit error saying %q", what, err, limit, msg)
	}
}

// A program whose result the optimizer estimates at 10^11 entries is
// refused before it runs, saying what is too big and by how much.
func TestRunawayIsRefused(t *testing.T) {
	for _, o := range limitedRuns {
		// The limit is low so that a run the check let through would
		// stop at it rather than take the machine's memory.
		o.MemoryLimit = 1 << 30
		err := runLimited(t, "sum(<i,_> in 0:100000000000) { i -> 1.0 }", 0, o)
		limitError(t, string(o.Plan)+"/"+string(o.Engine), err, "memory",
			"refusing to run the plan: its result is estimated at 1e+11 entries (3.3 TiB), 3.35e+03x the memory limit of 1.0 GiB")
	}
}

// A program whose result the estimate misses (a triangle of keys i*n+j,
// estimated at 100 entries a row rather than i) passes the check before
// the run and stops when the heap reaches the limit.
func TestGrowingRunStopsAtTheLimit(t *testing.T) {
	src := "sum(<i,_> in 0:n) sum(<j,_> in 0:i) { @hash i * n + j -> 1.0 }"
	for _, o := range limitedRuns {
		runtime.GC() // the runs before left garbage
		o.MemoryLimit = int64(engine.HeapBytes() + 48<<20)
		err := runLimited(t, src, 3000, o)
		limitError(t, string(o.Plan)+"/"+string(o.Engine), err, "memory", "the run stopped at its memory limit: it holds")
	}
	// A smaller triangle fits.
	if err := runLimited(t, src, 300, storel.RunOptions{MemoryLimit: int64(engine.HeapBytes() + 48<<20), Threads: 1}); err != nil {
		t.Fatal(err)
	}
}

// A long loop stops at the time limit.
func TestLongRunStopsAtTheTimeLimit(t *testing.T) {
	for _, o := range limitedRuns {
		o.TimeLimit = 50 * time.Millisecond
		err := runLimited(t, "sum(<i,_> in 0:n) sum(<j,_> in 0:n) (i * j) % 7", 100000, o)
		limitError(t, string(o.Plan)+"/"+string(o.Engine), err, "time", "the run stopped at its time limit, 50ms")
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]uint64{"512": 512, "1K": 1 << 10, "2kb": 2 << 10, "1.5G": 3 << 29, "8GiB": 8 << 30, "3 M": 3 << 20, "1T": 1 << 40} {
		if got, err := storel.ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1M", "12X", "1.2.3"} {
		if _, err := storel.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}

// A temporary the naive plan would build (the tensor T, 10^11 entries) is
// refused, naming it; the optimized plan reads T(5) without building T.
func TestTemporaryTooBigIsRefused(t *testing.T) {
	src := "CREATE TENSOR T AS sum(<i,_> in 0:100000000000) { i -> 1.0 };\nT(5)"
	err := runLimited(t, src, 0, storel.RunOptions{Plan: storel.PlanNaive, MemoryLimit: 1 << 30})
	limitError(t, "naive", err, "memory", "the dictionary it builds for T at limits.sdql:2:15 is estimated at 1e+11 entries")
	if err := runLimited(t, src, 0, storel.RunOptions{MemoryLimit: 1 << 30}); err != nil {
		t.Errorf("optimized: %v", err)
	}
}
