package engine

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Limits bound one run of a kernel. A run that passes one stops with an
// *Error whose Limit names it, at the next check: the outermost sum of the
// plan (at the top, or the value or body of a top let) runs its positions
// in windows and checks between them. A window starts at one position
// and doubles while it takes under windowTarget, so the checks cost
// nothing measurable and come every few milliseconds. The checks are no
// finer than one position of that sum: a plan whose top is not a sum is
// not checked, nor is a single position that runs long by itself (a top
// sum over 0:1 around a loop of 10^12). Between two checks a run can grow
// by what one window allocates plus one doubling of a dictionary, or
// than heapEvery's allocation: a check reads the heap (a few
// microseconds, as much as a short kernel's windows together) at most
// that often.
type Limits struct {
	// Memory is the most bytes of heap objects the process may hold
	// while the run goes on (its inputs included); 0: no bound. Past it
	// a check collects garbage (at most every gcEvery) and stops the run
	// if the heap still is.
	Memory uint64
	// Time is how long one run may take; 0: no bound.
	Time time.Duration
}

func (l Limits) none() bool { return l.Memory == 0 && l.Time == 0 }

// Check returns a function that reports the first limit passed since
// Check was called, for runs the engine does not drive (the interpreter
// calls it every so many steps).
func (l Limits) Check() func() error {
	m := &monitor{lim: l}
	m.reset()
	return func() error {
		if e := m.check(); e != nil {
			return e
		}
		return nil
	}
}

// monitor checks the limits of the runs of one kernel.
type monitor struct {
	lim     Limits
	start   time.Time
	stopped atomic.Pointer[Error] // the first limit passed: every worker stops
	lastGC  atomic.Int64          // when collect last collected, in ns since start
	// lastHeap: when a check last read the heap, in ns since start.
	lastHeap atomic.Int64
}

// heapEvery bounds how often the checks read the heap.
const heapEvery = time.Millisecond

// heapDue reports whether a check is to read the heap now: heapEvery
// after the run's start or the last read (one worker reads, the others
// go on).
func (m *monitor) heapDue() bool {
	now, last := int64(time.Since(m.start)), m.lastHeap.Load()
	return now-last >= int64(heapEvery) && m.lastHeap.CompareAndSwap(last, now)
}

// collect collects garbage, which is not held, before the heap is judged
// against the limit; at most every gcEvery, so that a run whose garbage
// keeps the heap above the limit is not slowed to a crawl. It reports
// whether it collected.
func (m *monitor) collect() bool {
	now, last := int64(time.Since(m.start)), m.lastGC.Load()
	if last != 0 && now-last < int64(gcEvery) || !m.lastGC.CompareAndSwap(last, now) {
		return false
	}
	runtime.GC()
	return true
}

// gcEvery bounds how often a check collects garbage.
const gcEvery = 20 * time.Millisecond

func (m *monitor) reset() {
	m.start = time.Now()
	m.stopped.Store(nil)
	m.lastGC.Store(0)
	m.lastHeap.Store(0)
}

// check reports the limit the run has passed, if any.
func (m *monitor) check() *Error {
	if e := m.stopped.Load(); e != nil {
		return e
	}
	var e *Error
	if m.lim.Time > 0 {
		if d := time.Since(m.start); d > m.lim.Time {
			e = &Error{Limit: "time", Msg: fmt.Sprintf("the run stopped at its time limit, %v", m.lim.Time)}
		}
	}
	if e == nil && m.lim.Memory > 0 && m.heapDue() && HeapBytes() > m.lim.Memory && m.collect() {
		if h := HeapBytes(); h > m.lim.Memory {
			e = &Error{Limit: "memory", Msg: fmt.Sprintf("the run stopped at its memory limit: it holds %s, the limit is %s", Bytes(h), Bytes(m.lim.Memory))}
		}
	}
	if e != nil && !m.stopped.CompareAndSwap(nil, e) {
		e = m.stopped.Load()
	}
	return e
}

// Bytes formats a byte count for messages: 512 B, 3.2 MiB, 1.5 GiB.
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n)/unit, 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[i])
}

// windowTarget is how long a window of a checked loop aims to take.
const windowTarget = 10 * time.Millisecond

// firstWindow is the positions of a checked loop's first window: one, as
// a position of the top sum may be a long loop of its own.
const firstWindow = 1

// growWindows lets windows grow (tests keep every window one position).
var growWindows = true

// windowEnd is the end of a window of at most w positions from from: at
// to, or at a multiple of w, so that past the first few windows start
// and end where blocks of rows that kernels run whole do (sell's chunks
// of 8 rows), rather than one position short of them.
func windowEnd(from, to, w int64) int64 {
	return min(to, from+w-from%w)
}

// runChecked runs positions from..to-1 of loop l in windows, checking
// the run's limits between them; without limits (m nil) in one call.
func runChecked(m *monitor, l *loop, fr *frame, st srcState, from, to int64, b *builder) {
	if m == nil {
		l.run(fr, st, from, to, b)
		return
	}
	w := fr.win
	if w == 0 {
		w = firstWindow
	}
	defer func() { fr.win = w }()
	for from < to && fr.err == nil {
		hi := windowEnd(from, to, w)
		t0 := time.Now()
		l.run(fr, st, from, hi, b)
		from = hi
		if e := m.check(); e != nil {
			fr.fail(e)
			return
		}
		if growWindows && time.Since(t0) < windowTarget && w < 1<<40 {
			w *= 2
		}
	}
}
