package engine

import (
	"math/bits"
	"unsafe"
)

// A dense result that a split run's workers write through, one key range
// each, need not be zeroed by the goroutine that allocates it: make
// zeroes a large slice on the caller, before any worker starts (SpMV on
// cnr-2000 at 16 threads: 0.32-0.41 ms of a 1.7 ms run, for a row of
// 325,557 entries). Such a row is allocated as it is, and each chunk
// zeroes its own range before it adds into it.

// mallocgc is the runtime's allocator, which CockroachDB and others reach
// the same way for memory they overwrite (the runtime keeps its
// signature for them: go.dev/issue/67401). typ nil: memory the
// collector does not scan. The empty unzeroed.s lets the declaration go
// without a body.
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// unzeroedRow returns a row of n entries holding whatever the memory
// held.
func unzeroedRow[V int64 | float64](n int) []V {
	if n <= 0 {
		return nil
	}
	return unsafe.Slice((*V)(mallocgc(uintptr(n)*unsafe.Sizeof(V(0)), nil, false)), n)
}

// reserveUnzeroed makes b, an empty dense row of scalars, hold keys up
// to n-1 in memory that is not zeroed, and reports whether it did (false,
// with nothing done, for any other builder, or n out of reserve's
// bounds). Until zeroRange has covered a key, b must not be read or
// added into there.
func (b *builder) reserveUnzeroed(n int64) bool {
	s := b.spec
	if s.depth != 1 || !s.dense || b.listed || b.open || b.app || b.ws != nil || b.x != nil ||
		cap(b.reals)+cap(b.ints) > 0 || n <= 0 || n > maxReserve {
		return false
	}
	if out := s.out.current(); s.real {
		b.reals = pooledRow[float64](int(n), out, false)
	} else {
		b.ints = pooledRow[int64](int(n), out, false)
	}
	if rowUnzeroed != nil {
		rowUnzeroed(n)
	}
	return true
}

// zeroRange zeroes keys lo..hi-1 of b's dense row of scalars.
func (b *builder) zeroRange(lo, hi int64) {
	if b.spec.real {
		clear(b.reals[lo:hi])
	} else {
		clear(b.ints[lo:hi])
	}
	if rangeZeroed != nil {
		rangeZeroed(lo, hi)
	}
}

// newBlock returns an empty block of a level's rows (keys or values)
// with room for n entries, in memory that is not zeroed: every entry of
// such a block is written before it is read (a row's entries where they
// stay, then kept; scratch past the kept ones written first; a dense row
// zeroed as it is carved), so zeroing it would be a pass over the level's
// whole storage for nothing (TTV on orghs: 3.6 MB an execution, the rows'
// entries being 300,000). A full block (maxBlock entries) made in a run
// (out not nil) may be one a released result gave back, and is listed
// for the run's result (released.go). So is a block of poolBlock
// entries or more, rounded up to a power of two: a level grows through
// such blocks before its blocks are full size (blockSize), and a result
// of a few full blocks has a good part of its entries there (SDDMM on
// bcsstk16: 50,000 of 290,000, made afresh every run), in sizes that
// repeat from run to run once rounded.
func newBlock[T int32 | int64 | float64](n int, out *runBlocks) []T {
	if n <= 0 {
		return nil
	}
	pooled := out != nil && n >= poolBlock && n <= maxBlock
	if pooled {
		n = 1 << bits.Len(uint(n-1))
	}
	bytes := uintptr(n) * unsafe.Sizeof(T(0))
	var p unsafe.Pointer
	if pooled {
		p = out.take(bytes)
	} else {
		p = mallocgc(bytes, nil, false)
	}
	b := unsafe.Slice((*T)(p), n)
	if blockUnzeroed != nil {
		blockUnzeroed(b)
	}
	return b[:0]
}

// rowUnzeroed and rangeZeroed, when set (by tests), are called with the
// length of each row reserveUnzeroed allocates and each range zeroRange
// zeroes, on the goroutine that does it.
var (
	rowUnzeroed func(n int64)
	rangeZeroed func(lo, hi int64)
)

// blockUnzeroed, when set (by tests), is given each block newBlock
// allocates, whole, before it is used: tests fill it with values no
// result holds, so that an entry read before it is written shows.
var blockUnzeroed func(b any)
