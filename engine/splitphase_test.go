package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestOneThreadUnsplit checks that at one thread a top sum runs as one
// loop, with no chunks whose partial results are then added, also when
// limits make the top sum run in checked windows.
func TestOneThreadUnsplit(t *testing.T) {
	st := spmvStore(7)
	for _, src := range []string{
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(j)`,
		planSpMV,
	} {
		e := parse(t, src, st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 1, Limits: Limits{Time: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		var chunks atomic.Int64
		chunkTrace = func(int, [2]int64) func() { chunks.Add(1); return nil }
		got, err := k.Run(st)
		chunkTrace = nil
		if err != nil {
			t.Fatal(err)
		}
		if chunks.Load() != 0 {
			t.Errorf("%s: one thread ran %d chunks, want the loop unsplit", src, chunks.Load())
		}
		agreeValue(t, e, st, got)
	}
}

// TestSharedRowZeroedByChunks checks that a dense row of scalars that a
// split run's workers write through, one key range each, is allocated
// unzeroed, each chunk zeroing its own keys on its goroutine, the ranges
// covering the row once (keys no iteration writes included: the absent
// rows of a hash map), and that the result is the interpreter's.
func TestSharedRowZeroedByChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	st := hashStore(t, 2000, 30, true, false, rng)
	csr(st, "B", 3000, 30, 20000, rng)
	savedMin, savedProcs := parallelMin, runtime.GOMAXPROCS(16)
	defer func() { parallelMin = savedMin; runtime.GOMAXPROCS(savedProcs) }()
	parallelMin = 0
	for _, src := range []string{
		strings.ReplaceAll(planSpMV, "A_", "B_"),
		`sum(<i, _> in 0:B_len1) { @dense i -> sum(<p, j> in B_idx2(B_pos2(i):B_pos2(i+1))) 1 }`,
		`sum(<i, r> in H) { @dense i -> sum(<j, v> in r) v * x(j) }`,
	} {
		e := parse(t, src, st)
		for _, threads := range []int{2, 3, 16} {
			z := watchZeroing()
			got, err := runEngine(e, st, threads)
			z.stop()
			if err != nil {
				t.Fatal(err)
			}
			agreeValue(t, e, st, got)
			z.check(t, fmt.Sprintf("%s, threads=%d", src, threads))
		}
	}
}

// TestPrivateRowsMerged checks BATAX's split into private dense rows at
// 2, 3 and 16 threads (GOMAXPROCS 16, every run to workers, every worker
// a row, the merge by ranges): from the second run on, no row is made or
// grown (each worker's row, the first's included, comes back zeroed from
// the merge), the result row is allocated unzeroed and written by the
// merge's ranges, which cover it once, and the value is the
// interpreter's at each run.
func TestPrivateRowsMerged(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	a := randCSR(500, 3000, 9000, rng)
	st := storage.Store{"x": storage.RealArray(randVec(3000, rng)), "beta": storage.RealScalar(1.5)}
	a.store(st, "A")
	e := parse(t, planBATAX, st)
	savedMin, savedMerge, savedWork, savedProcs := parallelMin, denseMergeMin, mergeEntryWork, runtime.GOMAXPROCS(16)
	defer func() {
		parallelMin, denseMergeMin, mergeEntryWork = savedMin, savedMerge, savedWork
		runtime.GOMAXPROCS(savedProcs)
	}()
	parallelMin, denseMergeMin, mergeEntryWork = 0, 1, 0
	for _, threads := range []int{2, 3, 16} {
		k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for run := range 3 {
			var grown atomic.Int64
			realsGrown = func() { grown.Add(1) }
			z := watchZeroing()
			got, err := k.Run(st)
			realsGrown = nil
			z.stop()
			if err != nil {
				t.Fatal(err)
			}
			agreeValue(t, e, st, got)
			if run > 0 && grown.Load() > 0 {
				t.Errorf("threads=%d, run %d: rows grown %d times, want every row from the last run's", threads, run, grown.Load())
			}
			z.check(t, fmt.Sprintf("threads=%d", threads))
		}
	}
}

// TestWakingWorkers checks that a split run starts about sqrt(d /
// workerWake) workers for a run its probe predicts to take d, from 2 to
// the thread count: a short run at 16 threads (GOMAXPROCS 16) runs its
// chunks on at most that many goroutines, and its answer is the
// interpreter's.
func TestWakingWorkers(t *testing.T) {
	savedWake, savedTimer, savedProcs := workerWake, probeTimer, runtime.GOMAXPROCS(16)
	defer func() { workerWake, probeTimer = savedWake, savedTimer; runtime.GOMAXPROCS(savedProcs) }()
	workerWake = 20 * time.Microsecond
	for _, tc := range []struct {
		d       time.Duration
		threads int
		want    int
	}{
		{0, 16, 2},
		{180 * time.Microsecond, 16, 3},
		{1500 * time.Microsecond, 16, 8},
		{6 * time.Millisecond, 16, 16},
		{time.Second, 4, 4},
		{time.Second, 2, 2},
	} {
		if got := wakingWorkers(tc.d, tc.threads); got != tc.want {
			t.Errorf("wakingWorkers(%v, %d) = %d, want %d", tc.d, tc.threads, got, tc.want)
		}
	}
	st := spmvStore(13)
	e := parse(t, planSpMV, st)
	// The probe's part takes what makes the whole run 180 µs: 3 workers.
	const threads = 16
	p0 := splitChunks(3000, threads*claimsPerWorker, 0, nil)[0]
	_, _, share := (&chunkWork{}).probeEnd(p0, 3000)
	probeTimer = func() func() time.Duration {
		return func() time.Duration { return time.Duration(float64(180*time.Microsecond) * share) }
	}
	got, _ := runOnFewGoroutines(t, e, st, threads, 3, "a run predicted to take 180 µs")
	agreeValue(t, e, st, got)
}

// runOnFewGoroutines runs e at threads and checks that its split ran
// chunks on at most most goroutines; it returns the answer and the count
// of workers the chunks named.
func runOnFewGoroutines(t *testing.T, e *ir.Expr, st storage.Store, threads, most int, run string) (value.Value, int) {
	t.Helper()
	goroutines, workers := traceGoroutines(most)
	got, err := runEngine(e, st, threads)
	chunkTrace = nil
	if err != nil {
		t.Fatal(err)
	}
	if n := goroutines(); n > most {
		t.Errorf("%s ran chunks on %d goroutines, want at most %d", run, n, most)
	}
	return got, workers()
}

// traceGoroutines sets chunkTrace to count the goroutines that run a
// split run's chunks and the workers it names; the funcs it returns read
// the counts. A chunk waits (300 ms at most) for more than most
// goroutines, so that a run that starts more shows them.
func traceGoroutines(most int) (goroutines, workers func() int) {
	var mu sync.Mutex
	gs, ws := map[string]bool{}, map[int]bool{}
	count := func(m int) func() int {
		return func() int {
			mu.Lock()
			defer mu.Unlock()
			if m == 0 {
				return len(gs)
			}
			return len(ws)
		}
	}
	goroutines, workers = count(0), count(1)
	deadline := time.Now().Add(300 * time.Millisecond)
	chunkTrace = func(w int, _ [2]int64) func() {
		mu.Lock()
		gs[goroutineID()], ws[w] = true, true
		mu.Unlock()
		return func() {
			for goroutines() <= most && time.Now().Before(deadline) {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	return goroutines, workers
}

// TestDealtRunWakesFewGoroutines: a run dealt to private rows (BATAX)
// starts goroutines by the same rule as any split run (wakingWorkers),
// each running whole dealt workers, while the count of dealt workers,
// and so the answer's bits, stays privateWorkers': at 16 threads
// (GOMAXPROCS 16) a run short against a worker's start runs its chunks
// on 2 goroutines, with the bits of the run on all 16, and the
// interpreter's answer.
func TestDealtRunWakesFewGoroutines(t *testing.T) {
	savedWake, savedProcs := workerWake, runtime.GOMAXPROCS(16)
	defer func() { workerWake = savedWake; runtime.GOMAXPROCS(savedProcs) }()
	rng := rand.New(rand.NewPCG(13, 15))
	a := randCSR(3000, 200, 12000, rng)
	st := storage.Store{"x": storage.RealArray(randVec(200, rng)), "beta": storage.RealScalar(1.5)}
	a.store(st, "A")
	e := parse(t, planBATAX, st)
	const threads = 16
	all, err := runEngine(e, st, threads)
	if err != nil {
		t.Fatal(err)
	}
	// Every run is short against a worker's start: 2 goroutines.
	workerWake = time.Hour
	got, n := runOnFewGoroutines(t, e, st, threads, 2, "a short dealt run")
	if n != threads {
		t.Errorf("%d dealt workers ran chunks, want %d", n, threads)
	}
	if !value.Equal(got, all, 0) {
		t.Errorf("on 2 goroutines %s\non 16 %s", value.Format(got), value.Format(all))
	}
	agreeValue(t, e, st, got)
}

// zeroing records the rows reserveUnzeroed allocates and the ranges
// written into them before any add (zeroRange, mergeDense's copies).
type zeroing struct {
	mu     sync.Mutex
	rows   []int64
	ranges [][2]int64
}

// watchZeroing installs a zeroing as rowUnzeroed and rangeZeroed until
// its stop.
func watchZeroing() *zeroing {
	z := &zeroing{}
	rowUnzeroed = func(n int64) { z.mu.Lock(); z.rows = append(z.rows, n); z.mu.Unlock() }
	rangeZeroed = func(lo, hi int64) { z.mu.Lock(); z.ranges = append(z.ranges, [2]int64{lo, hi}); z.mu.Unlock() }
	return z
}

func (z *zeroing) stop() { rowUnzeroed, rangeZeroed = nil, nil }

// check fails t unless one row was allocated unzeroed and at least two
// ranges cover it once.
func (z *zeroing) check(t *testing.T, what string) {
	t.Helper()
	if len(z.rows) != 1 {
		t.Fatalf("%s: %d rows allocated unzeroed, want the result's", what, len(z.rows))
	}
	sort.Slice(z.ranges, func(a, b int) bool { return z.ranges[a][0] < z.ranges[b][0] })
	at := int64(0)
	for _, r := range z.ranges {
		if r[0] != at || r[1] < r[0] {
			t.Fatalf("%s: ranges %v do not cover 0..%d once", what, z.ranges, z.rows[0])
		}
		at = r[1]
	}
	if at != z.rows[0] || len(z.ranges) < 2 {
		t.Fatalf("%s: ranges %v, want 0..%d cut in ranges", what, z.ranges, z.rows[0])
	}
}

// spmvStore holds a random 3000 x 200 CSR matrix A of 12,000 entries and
// a vector x.
func spmvStore(seed uint64) storage.Store {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	st := storage.Store{}
	csr(st, "A", 3000, 200, 12000, rng)
	st["x"] = storage.RealArray(randVec(200, rng))
	return st
}
