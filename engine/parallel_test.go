package engine

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestDeterminism: with one thread a kernel gives bit-identical results
// run after run; with several it gives the same results up to the
// reassociation of floating-point sums (and is itself deterministic for a
// given thread count).
func TestDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	a := randCSR(300, 300, 3000, rng)
	for i := range a.val {
		a.val[i] = rng.Float64()*2 - 1 // not exactly summable
	}
	x := make([]float64, 300)
	for i := range x {
		x[i] = rng.Float64()
	}
	st := storage.Store{"x": storage.RealArray(x), "beta": storage.RealScalar(math.Pi)}
	a.store(st, "A")
	plans := []string{planSpMV, planBATAX, planBATAXNaive,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j)`}
	for _, plan := range plans {
		e := parse(t, plan, st)
		var first value.Value
		for _, threads := range []int{1, 1, 3, 3} {
			got, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case first == nil:
				first = got
			case threads == 1 && !value.Equal(got, first, 0):
				t.Fatalf("%s: two one-thread runs differ", plan)
			case !value.Equal(got, first, 1e-12):
				t.Fatalf("%s: %d threads differ beyond reassociation", plan, threads)
			}
		}
		three1, _ := runEngine(e, st, 3)
		three2, _ := runEngine(e, st, 3)
		if !value.Equal(three1, three2, 0) {
			t.Fatalf("%s: two three-thread runs differ", plan)
		}
	}
}

// TestAllocationsDoNotGrowWithWork: the fused kernels allocate per run
// (and per output row), never per inner iteration: ten times the
// non-zeros per row cost no more allocations.
func TestAllocationsDoNotGrowWithWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	allocs := func(plan string, nnzPerRow int) float64 {
		st := storage.Store{"x": storage.RealArray(randVec(500, rng)), "beta": storage.RealScalar(2)}
		randCSR(500, 500, 500*nnzPerRow, rng).store(st, "A")
		randCSR(500, 500, 500*nnzPerRow, rng).store(st, "B")
		k, err := Compile(parse(t, plan, st), SchemaOf(st), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(5, func() {
			if _, err := k.Exec(st); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, plan := range []string{planSpMV, planBATAX, planSumMMM, planMMM} {
		few, many := allocs(plan, 4), allocs(plan, 40)
		if many > few*1.1+8 {
			t.Errorf("%s: %v allocations with 4 non-zeros a row, %v with 40", plan, few, many)
		}
	}
}

// TestSplitUnderArithmetic: a sum that is an operand of arithmetic at the
// top of a plan (beta * sum, 2.0 + sum, a sum of two sums, a scalar sum
// divided) is split across workers like a bare top sum, and the engine
// at 1 and 3 threads agrees with the interpreter, errors included.
func TestSplitUnderArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	st := storage.Store{"x": storage.RealArray(randVec(200, rng)), "beta": storage.RealScalar(1.5)}
	randCSR(200, 200, 2000, rng).store(st, "A")
	row := `sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) * x(i) }`
	dot := `sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j)`
	for _, plan := range []string{
		`beta * (` + row + `)`,
		`(` + row + `) * beta`,
		`-(` + row + `)`,
		`(` + row + `) + (` + row + `)`,
		`2.0 + (` + dot + `)`,
		`(beta + x(3)) * (` + dot + `)`,
		`(` + dot + `) / beta`,
		`x(1000) * (` + dot + `)`, // the left operand fails first
	} {
		e := parse(t, plan, st)
		agree(t, e, st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s := k.String(); !strings.Contains(s, "split: 2 workers") || strings.Contains(s, "split: one worker") {
			t.Errorf("%s: a top sum is not split:\n%s", plan, s)
		}
	}
}

// TestShortRunsStayOnOneThread: a split run its probe shows to be short
// runs its chunks in turn on the caller's frame, with the chunks and
// partial results workers would have, so its answer is bit for bit the
// workers' answer; a run made long enough still goes to workers.
func TestShortRunsStayOnOneThread(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	a := randCSR(400, 400, 6000, rng)
	for i := range a.val {
		a.val[i] = rng.Float64()*2 - 1
	}
	st := storage.Store{"x": storage.RealArray(randVec(400, rng)), "beta": storage.RealScalar(math.Pi)}
	a.store(st, "A")
	a.store(st, "B")
	saved := parallelMin
	defer func() { parallelMin = saved }()
	for _, plan := range []string{planSpMV, planBATAX, planBATAXNaive, planMMM,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j)`} {
		e := parse(t, plan, st)
		parallelMin = 0
		workers, err := runEngine(e, st, 3)
		if err != nil {
			t.Fatal(err)
		}
		parallelMin = time.Hour
		inTurn, err := runEngine(e, st, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !value.Equal(workers, inTurn, 0) {
			t.Errorf("%s: chunks run in turn differ from chunks run by workers", plan)
		}
	}
}

// TestMain sends every split run of the engine's tests to workers, all
// of its threads (their inputs are small), except where a test sets
// parallelMin, workerWake or mergeEntryWork itself.
func TestMain(m *testing.M) {
	parallelMin = 0
	workerWake = 0
	mergeEntryWork = 0
	blockUnzeroed = poisonBlock
	os.Exit(m.Run())
}

// TestClaimedChunks: with more chunks than workers, every chunk is
// started and run once (chunk 0 in two parts, the probe first), on the
// frame that started it, and the error
// returned is that of the first failing chunk in chunk order, even when
// a later chunk fails first.
func TestClaimedChunks(t *testing.T) {
	const parts, late, early = 40, 5, 30
	cs := chunks(400, parts)
	var mu sync.Mutex
	startedOn := map[int]*frame{}
	runs := make([]int, parts)
	earlyFailed := make(chan struct{})
	fr := newFrame(1, 1, 0)
	err := parallelRun(fr, cs, 3, chunkWork{
		start: func(c int, wfr *frame) {
			mu.Lock()
			startedOn[c] = wfr
			mu.Unlock()
		},
		run: func(c int, wfr *frame, from, to int64) {
			mu.Lock()
			if startedOn[c] != wfr || from < cs[c][0] || to > cs[c][1] || c > 0 && from != cs[c][0] {
				t.Errorf("chunk %d: run on another frame or range than it started", c)
			}
			if to != cs[c][1] {
				mu.Unlock()
				return // the probe: the first part of chunk 0
			}
			runs[c]++
			mu.Unlock()
			failLateAfterEarly(c, late, early, wfr, earlyFailed)
		},
	})
	if err == nil || err.Msg != "late" {
		t.Fatalf("error %v, want the first chunk's in chunk order (late)", err)
	}
	for c := 0; c <= early; c++ {
		if runs[c] != 1 {
			t.Errorf("chunk %d ran %d times", c, runs[c])
		}
	}
	for c, n := range runs {
		if n > 1 {
			t.Errorf("chunk %d ran %d times", c, n)
		}
	}
}

// TestCyclicChunks: cyclic work deals chunk c to worker c mod W, starts
// each worker once, covers every position once, and returns the error of
// the first failing chunk in chunk order, every chunk before it having
// run, even when a later chunk fails first: on a goroutine per worker,
// and on fewer goroutines (a run short against a worker's start), one of
// them going on to the next worker after a failure.
func TestCyclicChunks(t *testing.T) {
	saved := workerWake
	defer func() { workerWake = saved }()
	for _, wake := range []time.Duration{0, time.Hour} {
		workerWake = wake
		cyclicChunks(t)
	}
}

func cyclicChunks(t *testing.T) {
	const parts, workers, late, early = 40, 3, 5, 30
	cs := chunks(400, parts)
	chunkOf := func(p int64) int {
		for c, r := range cs {
			if p >= r[0] && p < r[1] {
				return c
			}
		}
		return -1
	}
	var mu sync.Mutex
	started := map[int]*frame{}
	covered := make([]int, 400)
	earlyFailed := make(chan struct{})
	fr := newFrame(1, 1, 0)
	err := parallelRun(fr, cs, workers, chunkWork{
		cyclic: true,
		start: func(w int, wfr *frame) {
			mu.Lock()
			if started[w] != nil {
				t.Errorf("worker %d started twice", w)
			}
			started[w] = wfr
			mu.Unlock()
		},
		run: func(w int, wfr *frame, from, to int64) {
			c := chunkOf(from)
			mu.Lock()
			if started[w] != wfr || c%workers != w || chunkOf(to-1) != c {
				t.Errorf("positions %d..%d (chunk %d) run by worker %d on another frame or out of its chunk", from, to, c, w)
			}
			for p := from; p < to; p++ {
				covered[p]++
			}
			mu.Unlock()
			if to != cs[c][1] {
				return // the probe: the first part of chunk 0
			}
			failLateAfterEarly(c, late, early, wfr, earlyFailed)
		},
	})
	if err == nil || err.Msg != "late" {
		t.Fatalf("error %v, want the first chunk's in chunk order (late)", err)
	}
	if len(started) != workers {
		t.Errorf("%d workers started, want %d", len(started), workers)
	}
	for p := int64(0); p < cs[late][1]; p++ {
		if covered[p] != 1 {
			t.Fatalf("position %d (chunk %d) ran %d times", p, chunkOf(p), covered[p])
		}
	}
	for p := range covered {
		if covered[p] > 1 {
			t.Fatalf("position %d ran %d times", p, covered[p])
		}
	}
}

// failLateAfterEarly fails chunk early, and chunk late only once early
// has failed: the later chunk in time is the first in chunk order.
func failLateAfterEarly(c, late, early int, wfr *frame, earlyFailed chan struct{}) {
	switch c {
	case late:
		<-earlyFailed
		wfr.fail(&Error{Msg: "late"})
	case early:
		wfr.fail(&Error{Msg: "early"})
		close(earlyFailed)
	}
}

// TestProbeSameAtAnyThreads: a split run's probe is the same iterations,
// the same share of the run, whatever the count of chunks the threads
// cut it into, so that its prediction (and the workers it starts) does
// not grow with the threads as a shorter probe's fixed costs would make
// it.
func TestProbeSameAtAnyThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	a := randCSR(20000, 500, 200000, rng)
	work := func(p int64) int64 { return p + a.pos[min(p, int64(a.n))] }
	for _, cw := range []chunkWork{{work: work}, {}} {
		var first [2]int64
		for i, threads := range []int{2, 4, 8, 16} {
			p0 := splitChunks(int64(a.n), threads*claimsPerWorker, 0, cw.work)[0]
			warm, end, _ := cw.probeEnd(p0, int64(a.n))
			if i == 0 {
				first = [2]int64{warm, end}
			} else if [2]int64{warm, end} != first {
				t.Errorf("work %v: probe at %d threads times %d..%d, at 2 threads %d..%d", cw.work != nil, threads, warm, end, first[0], first[1])
			}
		}
	}
}

// TestProbeDecides: a split run goes to workers when its probe, a
// share of the run's work in chunk 0, predicts a whole run of parallelMin or more,
// and runs its chunks in turn on the caller's frame otherwise; the
// prediction scales the probe's time by its share of the run's work,
// not of its iterations (rows of very unequal length: the probe holds
// a 512th of the run's entries). The probe's time is fixed, so the test
// checks the decision, not the clock.
func TestProbeDecides(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	// The first tenth of the rows hold most of the entries.
	a := randCSR(2000, 500, 2000, rng)
	heavy := randCSR(200, 500, 40000, rng)
	a.pos = append(slices.Clone(heavy.pos), a.pos[1:]...)
	for i := len(heavy.pos); i < len(a.pos); i++ {
		a.pos[i] += heavy.pos[len(heavy.pos)-1]
	}
	a.idx, a.val = append(heavy.idx, a.idx...), append(heavy.val, a.val...)
	a.n += heavy.n
	st := storage.Store{"x": storage.RealArray(randVec(500, rng))}
	a.store(st, "A")
	e := parse(t, planSpMV, st)
	k, err := Compile(e, SchemaOf(st), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The probe's share of the run's work, as probeEnd counts it.
	const threads = 2
	nnz := a.pos[a.n]
	total := int64(a.n) + nnz
	p0 := splitChunks(int64(a.n), threads*claimsPerWorker, 0, func(p int64) int64 { return p + a.pos[min(p, int64(a.n))] })[0]
	cw := chunkWork{work: func(p int64) int64 { return p + a.pos[min(p, int64(a.n))] }}
	warm, end, share := cw.probeEnd(p0, int64(a.n))
	if want := float64(end-warm+a.pos[end]-a.pos[warm]) / float64(total); math.Abs(share-want) > 1e-12 || end-p0[0] >= (p0[1]-p0[0])/2 {
		t.Fatalf("probe of chunk %v timed from %d to %d with share %.4f, want %.4f", p0, warm, end, share, want)
	}
	const took = 10 * time.Microsecond
	predicted := time.Duration(float64(took) / share)
	savedTimer, savedMin := probeTimer, parallelMin
	defer func() { probeTimer, parallelMin = savedTimer, savedMin }()
	probeTimer = func() func() time.Duration { return func() time.Duration { return took } }
	for _, tc := range []struct {
		min     time.Duration
		workers int
	}{{predicted - time.Microsecond, 2}, {predicted + time.Microsecond, 1}} {
		parallelMin = tc.min
		var mu sync.Mutex
		goroutines := map[string]bool{}
		seen := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(goroutines)
		}
		chunkTrace = func(int, [2]int64) func() {
			mu.Lock()
			goroutines[goroutineID()] = true
			mu.Unlock()
			if tc.workers < 2 {
				return nil
			}
			// A worker started for the run may find every chunk claimed
			// before it is scheduled: a chunk waits (a while at most)
			// until a second goroutine has run one, so that the count
			// shows the decision, not the scheduler.
			return func() {
				for deadline := time.Now().Add(time.Second); seen() < 2 && time.Now().Before(deadline); {
					time.Sleep(50 * time.Microsecond)
				}
			}
		}
		got, err := k.Run(st)
		chunkTrace = nil
		if err != nil {
			t.Fatal(err)
		}
		if len(goroutines) != tc.workers {
			t.Errorf("probe predicts %v, parallelMin %v: chunks ran on %d goroutines, want %d", predicted, tc.min, len(goroutines), tc.workers)
		}
		agreeValue(t, e, st, got)
	}
}

// goroutineID returns the calling goroutine's number, from its stack's
// first line.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// TestProbeTimesWarmRun: the probe's prediction leaves out the fixed
// cost of a run's first iterations on a frame. On a clock where each
// iteration takes 1 µs and the first call 1 ms more, the probe predicts
// the run's 128 ms (the time its iterations take), not 17 times that.
func TestProbeTimesWarmRun(t *testing.T) {
	saved := probeTimer
	defer func() { probeTimer = saved }()
	var clock time.Duration
	probeTimer = func() func() time.Duration {
		t0 := clock
		return func() time.Duration { return clock - t0 }
	}
	first := true
	cw := chunkWork{run: func(_ int, _ *frame, from, to int64) {
		if first {
			clock += time.Millisecond
			first = false
		}
		clock += time.Duration(to-from) * time.Microsecond
	}}
	const n = 128_000
	_, long, predicted := probeRun(newFrame(1, 1, 0), chunks(n, 128), cw)
	if want := n * time.Microsecond; !long || predicted < want*99/100 || predicted > want*101/100 {
		t.Errorf("probe predicts %v (long %v), want %v", predicted, long, want)
	}
}
