package engine

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The storage of a released result. A large result's rows live in the
// blocks of its levels (workspace.go), most of them of the full size
// (maxBlock entries), or in one long dense row (SpMV's). Made afresh,
// each run's storage is memory the process has not touched since the
// collector freed the last run's: the heap goal follows how much of the
// output each cycle finds built, the scavenger returns the pages in
// between to the OS, and the next run faults them in again (MMM on
// bcsstk16: ~900 page faults, ~2 ms of system time a run, a third of its
// Go loop's time). A caller that is done with a result says so
// (Result.Release); its full blocks and long rows then go to pools, by
// size in bytes, that later runs of any kernel take such storage from.
// The pools are sync.Pools: storage no run takes back is dropped by the
// collector's next cycles, so a released result holds no memory for
// long.

// longRow is the fewest entries of a dense row made whole (reserved, or
// grown from nothing) that goes through the pools: shorter rows cost
// little to make, and their sizes vary more.
const longRow = 1 << 15

// pools holds a *sync.Pool per size in bytes.
var pools sync.Map

func poolOf(bytes uintptr) *sync.Pool {
	if p, ok := pools.Load(bytes); ok {
		return p.(*sync.Pool)
	}
	p, _ := pools.LoadOrStore(bytes, &sync.Pool{})
	return p.(*sync.Pool)
}

// owned is a piece of pooled storage: its address and size.
type owned struct {
	p     unsafe.Pointer
	bytes uintptr
}

// runBlocks lists the pooled storage a run made, for its result.
type runBlocks struct {
	mu     sync.Mutex
	closed bool // the run is over: storage made later is not its result's
	owned  []owned
}

// blockSink is a kernel's: the runBlocks of the run under way (nil
// between runs, so that what is built outside a run is never released).
type blockSink struct{ run atomic.Pointer[runBlocks] }

// current returns the list of the run under way; s may be nil (a
// builder made outside a kernel).
func (s *blockSink) current() *runBlocks {
	if s == nil {
		return nil
	}
	return s.run.Load()
}

// start begins a run's list.
func (s *blockSink) start() { s.run.Store(&runBlocks{}) }

// stop ends the run's list and returns it.
func (s *blockSink) stop() []owned {
	r := s.run.Swap(nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.owned
}

// take returns bytes of memory, not zeroed, from the pool of that size
// if it has some, and lists them in r.
func (r *runBlocks) take(bytes uintptr) unsafe.Pointer {
	p, _ := poolOf(bytes).Get().(unsafe.Pointer)
	if p == nil {
		p = mallocgc(bytes, nil, false)
	}
	r.mu.Lock()
	if !r.closed {
		r.owned = append(r.owned, owned{p, bytes})
	}
	r.mu.Unlock()
	return p
}

// disown takes the storage at p off r's list: it is not the result's (a
// private row the split's own pool keeps for later runs), so a release
// must not hand it out too. r may be nil (outside a run).
func (r *runBlocks) disown(p unsafe.Pointer) {
	if r == nil || p == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, o := range r.owned {
		if o.p == p {
			r.owned[i] = r.owned[len(r.owned)-1]
			r.owned = r.owned[:len(r.owned)-1]
			return
		}
	}
}

// pooledRow returns a dense row of n entries for a run (out, nil outside
// one), zeroed if zero is set.
func pooledRow[V int64 | float64](n int, out *runBlocks, zero bool) []V {
	if out == nil || n < longRow {
		if zero {
			return make([]V, n)
		}
		return unzeroedRow[V](n)
	}
	row := takeRow[V](out, n)
	if zero {
		clear(row)
	}
	return row
}

// pooledGrow returns s with room for n more entries; where the room is
// long and made in a run (out), it is taken from the pools, not zeroed
// (entries are written before they are read), and listed for the run's
// result: the records of a level's rows sized for the whole level at
// its first rows (liftRows.row), those of a level of rows of rows
// (seqOuter.closeMid).
func pooledGrow[T int | int32 | int64](s []T, n int, out *runBlocks) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	m := len(s) + n
	if out == nil || m < longRow {
		return slices.Grow(s, n)
	}
	row := takeRow[T](out, m)
	return row[:copy(row, s)]
}

// takeRow is n entries of out's pooled storage, not zeroed.
func takeRow[T int | int32 | int64 | float64](out *runBlocks, n int) []T {
	return unsafe.Slice((*T)(out.take(uintptr(n)*unsafe.Sizeof(T(0)))), n)
}

// Release tells the engine that the caller is done with r and with every
// dictionary read from it (Value's result is a copy and stays valid):
// the storage of r's rows goes to later runs. r holds no value after.
func (r *Result) Release() {
	for _, o := range r.owned {
		poolOf(o.bytes).Put(o.p)
	}
	*r = Result{Type: r.Type, Stats: r.Stats}
}
