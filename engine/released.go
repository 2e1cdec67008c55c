package engine

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The storage of a released result. A large result's rows live in the
// blocks of its levels (workspace.go), most of them of the full size
// (maxBlock entries). Made afresh, each run's blocks are memory the
// process has not touched since the collector freed the last run's: the
// heap goal follows how much of the output each cycle finds built, the
// scavenger returns the pages in between to the OS, and the next run
// faults them in again (MMM on bcsstk16: ~900 page faults, ~2 ms of
// system time a run, a third of its Go loop's time). A caller that is
// done with a result says so (Result.Release); its full blocks then go
// to a pool that later runs, of any kernel, take their full blocks
// from. The pool is a sync.Pool: blocks no run takes back are dropped by
// the collector's next cycles, so a released result holds no memory for
// long.

// blockPools holds released full blocks by the size of their entries:
// 4 bytes (keys), 8 bytes (values).
var blockPools [2]sync.Pool

func poolClass(size uintptr) int { return int(size / 8) }

// runBlocks lists the full blocks a run made, for its result.
type runBlocks struct {
	mu     sync.Mutex
	closed bool // the run is over: blocks made later are not its result's
	blocks [2][]unsafe.Pointer
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

// stop ends the run's list and returns its blocks.
func (s *blockSink) stop() [2][]unsafe.Pointer {
	r := s.run.Swap(nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.blocks
}

// fullBlock returns a block of maxBlock entries of the given size, taken
// from the pool if one is there, and lists it in r.
func (r *runBlocks) fullBlock(size uintptr) unsafe.Pointer {
	c := poolClass(size)
	p, _ := blockPools[c].Get().(unsafe.Pointer)
	if p == nil {
		p = mallocgc(maxBlock*size, nil, false)
	}
	r.mu.Lock()
	if !r.closed {
		r.blocks[c] = append(r.blocks[c], p)
	}
	r.mu.Unlock()
	return p
}

// Release tells the engine that the caller is done with r and with every
// dictionary read from it (Value's result is a copy and stays valid):
// the storage of r's rows goes to later runs. r holds no value after.
func (r *Result) Release() {
	for c, ps := range r.blocks {
		for _, p := range ps {
			blockPools[c].Put(p)
		}
	}
	*r = Result{Type: r.Type, Stats: r.Stats}
}
