package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

func compileSrc(t *testing.T, src string, st storage.Store, opts Options) *Kernel {
	t.Helper()
	e, err := sdql.CompileExpr("limits.sdql", []byte(src), envOf(st))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile(e, SchemaOf(st), opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A loop that would run for hours stops at its time limit.
func TestTimeLimitStopsALongRun(t *testing.T) {
	st := storage.Store{"n": storage.IntScalar(1 << 50)}
	for _, threads := range []int{1, 3} {
		k := compileSrc(t, "sum(<i,_> in 0:n) { i % 7 -> 1.0 }", st, Options{Threads: threads, Limits: Limits{Time: 50 * time.Millisecond}})
		_, err := k.Exec(st)
		e, ok := err.(*Error)
		if !ok || e.Limit != "time" {
			t.Fatalf("threads=%d: got %v, want a time limit error", threads, err)
		}
		if !strings.Contains(e.Msg, "time limit, 50ms") {
			t.Errorf("threads=%d: message %q does not name the limit", threads, e.Msg)
		}
	}
}

// A result that grows without bound stops at the memory limit, before the
// machine runs out.
func TestMemoryLimitStopsAGrowingResult(t *testing.T) {
	st := storage.Store{"n": storage.IntScalar(1 << 50)}
	for _, threads := range []int{1, 3} {
		lim := Limits{Memory: HeapBytes() + 16<<20}
		k := compileSrc(t, "sum(<i,_> in 0:n) { @hash i -> 1.0 }", st, Options{Threads: threads, Limits: lim})
		_, err := k.Exec(st)
		e, ok := err.(*Error)
		if !ok || e.Limit != "memory" {
			t.Fatalf("threads=%d: got %v, want a memory limit error", threads, err)
		}
		if !strings.Contains(e.Msg, "the limit is "+Bytes(lim.Memory)) {
			t.Errorf("threads=%d: message %q does not name the limit", threads, e.Msg)
		}
	}
}

// Running the top sum in windows of one position, checking the limits
// between them, gives the interpreter's results on random programs.
func TestCheckedRunsAgree(t *testing.T) {
	defer func() { growWindows = true }()
	growWindows = false
	rng := rand.New(rand.NewPCG(3, 9))
	lim := Limits{Time: time.Hour, Memory: 1 << 50}
	checked, compared := 0, 0
	for i := 0; checked < 300 && i < 5000; i++ {
		st := randomStore(rng)
		g := &gen{rng: rng}
		types := []gtype{tInt, tReal, {depth: 1}, {depth: 1, real: true}, {depth: 2, real: true}, {depth: 2}}
		srcs := []struct {
			src string
			v   gtype
		}{{"0:n", tInt}, {"R", tReal}, {"H", gtype{depth: 1, real: true}}, {"I(1:6)", tInt}}
		top := srcs[g.pick(len(srcs))]
		t0 := types[g.pick(len(types))]
		body := g.withVars([]gvar{{"k0", tInt}, {"v0", top.v}}, func() string { return g.expr(t0, 4+g.pick(10)) })
		src := "sum(<k0, v0> in " + top.src + ") " + body
		e, err := sdql.CompileExpr("random.sdql", []byte(src), envOf(st))
		if err != nil {
			continue
		}
		checked++
		want, werr := eval.EvalWith(e, st, eval.Options{MaxSteps: 1_000_000})
		if werr != nil {
			continue
		}
		compared++
		for _, threads := range []int{1, 3} {
			k, err := Compile(e, SchemaOf(st), Options{Threads: threads, Limits: lim})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			got, err := k.Run(st)
			if err != nil {
				t.Fatalf("threads=%d: %s\nengine failed: %v\ninterpreter: %s", threads, src, err, value.Format(want))
			}
			if !value.Equal(got, want, 1e-9) {
				t.Fatalf("threads=%d: %s\nengine:      %s\ninterpreter: %s", threads, src, value.Format(got), value.Format(want))
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d of %d programs ran", compared, checked)
	}
}

// The checks read the heap at most every heapEvery: a short kernel's
// windows (a few microseconds each) would otherwise spend as much on
// the reads as on their work.
func TestHeapReadsSpaced(t *testing.T) {
	m := &monitor{lim: Limits{Memory: 1 << 50}}
	m.reset()
	reads := 0
	start := time.Now()
	for time.Since(start) < 5*heapEvery {
		if m.heapDue() {
			reads++
		}
	}
	// A loop descheduled past its whole time makes no read in it; a
	// read is due by now all the same.
	if reads == 0 && m.heapDue() {
		reads++
	}
	// Each read heapEvery after the one before (or the start): at most
	// one per heapEvery of the loop's time, and at least one.
	if max := int(time.Since(m.start) / heapEvery); reads < 1 || reads > max {
		t.Errorf("%d heap reads in %v; want 1 to %d", reads, time.Since(start), max)
	}
}

// Windows that double from one position, from any start, end at
// multiples of their sizes: all but a few positions lie in windows that
// cover whole aligned blocks of 8, which the interleaved rows run as
// chunks rather than row by row.
func TestWindowsAlign(t *testing.T) {
	for _, start := range []int64{0, 1, 5, 13, 1000, 4093} {
		for _, n := range []int64{1, 9, 4884, 1 << 20} {
			from, w, loose := start, int64(1), int64(0)
			for from < start+n {
				hi := windowEnd(from, start+n, w)
				if hi <= from || hi-from > w || (hi != start+n && hi%w != 0) {
					t.Fatalf("start %d, n %d: window of %d from %d ends at %d", start, n, w, from, hi)
				}
				// Positions of the window outside its whole blocks of 8.
				loose += hi - from - 8*max(0, hi/8-(from+7)/8)
				from, w = hi, 2*w
			}
			if loose > 24 {
				t.Errorf("start %d, n %d: %d positions outside whole blocks of 8", start, n, loose)
			}
		}
	}
}
