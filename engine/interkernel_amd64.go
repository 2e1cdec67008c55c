//go:build !purego

package engine

import (
	"unsafe"

	"github.com/storel/storel/storage"
)

// The interleaved rows' kernel in AVX2 (interkernel_amd64.s): per step
// of a chunk, one load of eight 32-bit columns, two masked gathers of x
// (VGATHERDPD) and two vector adds. The same loop in Go (sellChunksGo) reads each column
// and each x with scalar loads, well short of the memory bandwidth this
// loop reaches.

//go:noescape
func sellRows(out *float64, nout int64, perm *int64, rlen *int64, cpos *int64, chunks int64, cols *int64, ncols int64, vals unsafe.Pointer, nvals int64, x *float64, ints int64) int64

// useAVX2 selects the assembly kernel; tests turn it off to compare.
var useAVX2 = cpuAVX2

// sellChunks runs chunks c0..c1-1 as sellChunksGo does, giving the same
// bits, in assembly where the CPU has AVX2 and the values are reals or
// ints known to lie in [-2^51, 2^51) (exact), which convert exactly.
func sellChunks[V number](out []float64, perm, rlen, cpos, cols []int64, vals []V, x []float64, c0, c1 int64, exact bool) int64 {
	const h = int64(storage.SellHeight)
	ints := intFlag(vals)
	if !useAVX2 || c0 >= c1 || len(out) == 0 || len(cols) == 0 || ints == 1 && !exact {
		return sellChunksGo(out, perm, rlen, cpos, cols, vals, x, c0, c1)
	}
	// Bounds the kernel relies on: lanes and chunk offsets exist (the
	// caller's check, made again here), words and keys it checks itself.
	_, _, _ = perm[c1*h-1], rlen[c1*h-1], cpos[c1-1]
	var vp unsafe.Pointer
	if vals != nil {
		vp = unsafe.Pointer(unsafe.SliceData(vals))
	}
	done := sellRows(&out[0], int64(len(out)), &perm[c0*h], &rlen[c0*h], &cpos[c0], c1-c0,
		&cols[0], int64(len(cols)), vp, int64(len(vals)), unsafe.SliceData(x), ints)
	return c0 + done
}

//go:noescape
func sellScatter(out *float64, sums *float64, rlen *int64, cpos *int64, rows int64, cols *int64, vals unsafe.Pointer, scale float64, fac float64, ints int64)

// sellScatterRows runs sellScatterGo's rows, giving the same bits, in
// assembly: a Go loop's speed here moved with where the linker put it.
func sellScatterRows[V number](out, sums []float64, rlen, cpos, cols []int64, vals []V, scale, fac float64) {
	const h = storage.SellHeight
	if len(sums) == 0 {
		return
	}
	_, _ = rlen[len(sums)-1], cpos[(len(sums)-1)/h]
	ints := intFlag(vals)
	var vp unsafe.Pointer
	if vals == nil {
		ints = 2
	} else {
		vp = unsafe.Pointer(unsafe.SliceData(vals))
	}
	sellScatter(&out[0], &sums[0], &rlen[0], &cpos[0], int64(len(sums)), unsafe.SliceData(cols), vp, scale, fac, ints)
}
