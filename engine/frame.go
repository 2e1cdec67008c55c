package engine

import "sync"

// frame holds the variables of one running kernel (or of one worker of a
// parallel sum) in typed slots: ints and bools in i, reals in f,
// dictionaries in d. The compiler assigns every binder its own slot.
type frame struct {
	i []int64
	f []float64
	d []dict
	// err is the first runtime error. Operations that fail record it and
	// return a zero; loops stop at the end of the iteration that set it.
	err *Error
	// The loops' working memory, taken from mem, its kernel's.
	frameMem
	mem *memPool
	// win is runChecked's window, in positions: the chunks of a split
	// run that go in turn on one frame continue its growth instead of
	// starting again from firstWindow. parallelSum zeroes it per run.
	win int64
	// copies: what the run's frames share (a worker's is its parent's).
	copies *runCopies
}

func newFrame(ni, nf, nd int) *frame {
	return &frame{i: make([]int64, ni), f: make([]float64, nf), d: make([]dict, nd), copies: &runCopies{}}
}

// clone copies the slots for a worker, with working memory of its own
// from the pool.
func (fr *frame) clone() *frame {
	c := &frame{i: append([]int64(nil), fr.i...), f: append([]float64(nil), fr.f...), d: append([]dict(nil), fr.d...), copies: fr.copies}
	fr.mem.take(c)
	return c
}

// frameMem is the working memory of a frame's loops, by loop id:
// vectorized bodies (nestvec.go), position-space blocks (nestflat.go),
// lifted ranges (nestlift.go), merges (nestmerge.go).
type frameMem struct {
	vst []*vstate
	fst []*flatState
	lst []*liftState
	mst []*mergeState
}

// memPool keeps a kernel's frameMems from one run to the next: made
// afresh, a run's batch buffers and per-node arrays cost allocations, a
// page fault per 4 KiB touched first and the collector's work, each run
// (about a tenth of SpMV on bcsstk16). Each frame of a run, the caller's
// and every worker's, takes its own; all come back when the run ends,
// retired: what a run decided or read (invariants, facts, views of its
// arrays and dictionaries) is dropped, and only buffers whose contents
// every use writes before it reads stay.
type memPool struct {
	mu   sync.Mutex
	free []frameMem
	out  []*frame // the frames of the run under way
	keep int      // the most frameMems kept: the run's frames at once
}

// maxKeptBuffer is the longest buffer, in elements, kept between runs:
// a block's most positions. A longer one (a whole row's entries copied
// for a scatter) would hold memory the kernel is not running with.
const maxKeptBuffer = flatCap

// take gives fr a kept frameMem, or an empty one, and counts fr in the
// run. A nil pool (a frame made outside a kernel's run) keeps nothing.
func (p *memPool) take(fr *frame) {
	if p == nil {
		return
	}
	fr.mem = p
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		fr.frameMem, p.free = p.free[n-1], p.free[:n-1]
	}
	p.out = append(p.out, fr)
}

// release retires the memory of every frame of the run, which is over,
// and keeps it for the next where keep is set (every worker has stopped).
func (p *memPool) release(keep bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fr := range p.out {
		if !keep {
			break // nor is a frame touched: its worker may be writing it
		}
		if len(p.free) < p.keep {
			fr.retire()
			p.free = append(p.free, fr.frameMem)
		}
		fr.frameMem = frameMem{}
	}
	clear(p.out)
	p.out = p.out[:0]
}

// retire readies every loop state of m for another run (the states'
// retire).
func (m *frameMem) retire() {
	retireAll(m.vst)
	retireAll(m.fst)
	retireAll(m.lst)
	retireAll(m.mst)
}

func retireAll[S any, P interface {
	*S
	retire()
}](states []P) {
	for _, s := range states {
		if s != nil {
			s.retire()
		}
	}
}

// kept returns buffer b to keep for the next run: emptied where it is
// longer than maxKeptBuffer.
func kept[T any](b []T) []T {
	if cap(b) > maxKeptBuffer {
		return nil
	}
	return b
}

// keptEach applies kept to each buffer of bs.
func keptEach[T any](bs [][]T) [][]T {
	for i := range bs {
		bs[i] = kept(bs[i])
	}
	return bs
}

func (fr *frame) fail(e *Error) {
	if fr.err == nil {
		fr.err = e
	}
}

// Compiled closures, one kind per result type.
type (
	intFn  func(*frame) int64
	realFn func(*frame) float64
	boolFn func(*frame) bool
	dictFn func(*frame) dict
	// accFn adds the value of a dictionary expression into a builder.
	accFn func(*frame, *builder)
)
