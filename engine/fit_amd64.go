//go:build !purego

package engine

import (
	"math"
	"unsafe"
)

// The CSR row loops in assembly (fit_amd64.s). Go's loops keep spilling
// a bound inside the inner loop, which the same loop in C does not; these
// run as C does.

//go:noescape
func dotRows(h *int64, out *float64, rows int64, l int64, idx unsafe.Pointer, x unsafe.Pointer, n int64, y *float64, a float64, b float64, c float64, ints int64, lo int64, w int64) int64

//go:noescape
func dotScatterRows2(h1 *int64, l1 int64, idx1 unsafe.Pointer, x unsafe.Pointer, n1 int64, y *float64, h2 *int64, l2 int64, idx2 unsafe.Pointer, v unsafe.Pointer, n2 int64, out *float64, rows int64, a float64, b float64, c float64, ints int64) int64

//go:noescape
func scaleScatterRows(h *int64, l int64, idx unsafe.Pointer, v unsafe.Pointer, n int64, ts *float64, out *float64, rows int64, ints int64) int64

// asmChunk bounds the rows of one assembly call: the runtime cannot
// preempt assembly, so one long call would hold up a collection.
const asmChunk = 4096

// intFlag is 1 when the values are ints, as the assembly takes it.
func intFlag[X number](x []X) int64 {
	if _, ok := any(x).([]int64); ok {
		return 1
	}
	return 0
}

// narrowRows says the row loops here read int32 column indices
// (Array.Narrow) when they are given them.
const narrowRows = true

// vecRows runs the row loops over int32 indices four entries a step in
// AVX2 (dotRows' ints + 16) where the CPU has it; tests turn it off to
// compare the two.
var vecRows = cpuAVX2

// vecFlag is the flag dotRows adds to mode for its vector loops: 16 for
// a dot or gather with int32 indices and real values, windowed or not
// (4, 6, 12, 14), or none, on an AVX2 CPU.
func vecFlag(mode int64) int64 {
	if vecRows && (mode == 4 || mode == 6 || mode == 12 || mode == 14) {
		return 16
	}
	return 0
}

// narrowFlag is the flag dotRows adds for an index array read as int32s,
// and the pointer it reads: nidx when it is idx narrowed, else idx. The
// pointer is untyped: as *int64 it would claim 8 bytes of a one-element
// nidx, which the race detector's pointer checks refuse.
func narrowFlag(idx []int64, nidx []int32) (unsafe.Pointer, int64) {
	if len(nidx) == len(idx) && len(idx) > 0 {
		if narrowRead != nil {
			narrowRead()
		}
		return unsafe.Pointer(unsafe.SliceData(nidx)), 4
	}
	return unsafe.Pointer(unsafe.SliceData(idx)), 0
}

// setRowsMax is the mean entries per row below which dotRows sets short
// rows rather than clearing out and running the vector loops.
const setRowsMax = 4

// rowsAsm runs rows h of dotRows in calls of at most asmChunk rows and
// returns the rows done.
func rowsAsm(out []float64, h []int64, l int64, ip, xp unsafe.Pointer, n int64, yp *float64, a, b, c float64, mode, lo, w int64) int {
	out = out[:len(h)]
	if mode >= 16 {
		nestSaw("vector rows")
	}
	for k := 0; k < len(h); k += asmChunk {
		rows := int64(min(asmChunk, len(h)-k))
		if done := dotRows(&h[k], &out[k], rows, l, ip, xp, n, yp, a, b, c, mode, lo, w); done < rows {
			return k + int(done)
		}
		l = h[k+int(rows)-1]
	}
	return len(h)
}

// csrDotAsm is csrDot in assembly, for y of reals (false otherwise, out
// untouched). It reads the column indices from nidx when that is idx
// narrowed. With set, out's rows are set to their sums, as if out were
// cleared first.
func csrDotAsm[X, Y number](out []float64, h []int64, l int64, idx []int64, nidx []int32, x []X, y []Y, n int64, a, b, c float64, set bool) (int, bool) {
	ys, ok := any(y).([]float64)
	if !ok || len(h) == 0 {
		return 0, false
	}
	ip, narrow := narrowFlag(idx, nidx)
	mode := intFlag(x) + narrow
	if set {
		// Short rows (TTV's fibers: mostly one entry) are set, one product
		// each, with no clearing; long rows gain more from the vector
		// loops than the clearing costs.
		if mode == 4 && a == 1 && b == 1 && c == 1 && (vecFlag(mode) == 0 || h[len(h)-1]-l < setRowsMax*int64(len(h))) {
			mode = 36
		} else {
			clear(out[:len(h)])
		}
	}
	if mode != 36 {
		mode += vecFlag(mode)
	}
	return rowsAsm(out, h, l, ip, unsafe.Pointer(unsafe.SliceData(x)), n, unsafe.SliceData(ys), a, b, c, mode, 0, 0), true
}

// csrDotInAsm is csrDotIn in assembly for int32 indices and x of reals,
// or none (gather): it returns the rows done, short of len(p)-1 at the
// first row whose bounds are bad.
func csrDotInAsm(out []float64, p []int64, idx []int32, x []float64, gather bool, y []float64, lo, hi int64, sc [3]float64) int {
	mode, n := int64(12), int64(len(idx))
	if gather {
		mode += 2
	} else {
		n = min(n, int64(len(x)))
	}
	if hi > lo && hi <= math.MaxInt32+1 {
		// The vector loop tests 32-bit offsets from lo against w-1.
		mode += vecFlag(mode)
	}
	ip, xp := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(x))
	return rowsAsm(out, p[1:], p[0], ip, xp, n, unsafe.SliceData(y), sc[0], sc[1], sc[2], mode, lo, hi-lo)
}

// csrGatherAsm is rowsGatherFit's CSR rows in assembly, for y of reals
// (false otherwise), reading nidx as csrDotAsm does.
func csrGatherAsm[Y number](out []float64, h []int64, l int64, idx []int64, nidx []int32, y []Y, n int64, a, b, c float64) (int, bool) {
	ys, ok := any(y).([]float64)
	if !ok || len(h) == 0 {
		return 0, false
	}
	ip, narrow := narrowFlag(idx, nidx)
	return rowsAsm(out, h, l, ip, nil, n, unsafe.SliceData(ys), a, b, c, 2+narrow+vecFlag(2+narrow), 0, 0), true
}

// csrDotScatterAsm is csrDotScatter in assembly, for y of reals (false
// otherwise). It reads the indices from nidx1 and nidx2 when both are
// their arrays narrowed.
func csrDotScatterAsm[X, Y number](out []float64, h1 []int64, l1 int64, idx1 []int64, nidx1 []int32, x []X, y []Y, n1 int64, h2 []int64, l2 int64, idx2 []int64, nidx2 []int32, v []X, n2 int64, a, b, c float64) (int, bool) {
	ys, ok := any(y).([]float64)
	if !ok || len(h1) == 0 || len(h1) != len(h2) || len(out) == 0 {
		return 0, false
	}
	ip1, xp, yp, ip2, vp, ints := unsafe.Pointer(unsafe.SliceData(idx1)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.SliceData(ys), unsafe.Pointer(unsafe.SliceData(idx2)), unsafe.Pointer(unsafe.SliceData(v)), intFlag(x)
	if n1, f1 := narrowFlag(idx1, nidx1); f1 != 0 {
		if n2, f2 := narrowFlag(idx2, nidx2); f2 != 0 {
			ip1, ip2, ints = n1, n2, ints+4
		}
	}
	for k := 0; k < len(h1); k += asmChunk {
		rows := int64(min(asmChunk, len(h1)-k))
		if done := dotScatterRows2(&h1[k], l1, ip1, xp, n1, yp, &h2[k], l2, ip2, vp, n2, &out[0], rows, a, b, c, ints); done < rows {
			return k + int(done), true
		}
		l1, l2 = h1[k+int(rows)-1], h2[k+int(rows)-1]
	}
	return len(h1), true
}

// csrScaleScatterAsm is csrScaleScatter in assembly (false where there is
// none). It reads the indices from nidx when that is idx narrowed.
func csrScaleScatterAsm[X number](out []float64, h []int64, l int64, idx []int64, nidx []int32, v []X, n int64, ts []float64) (int, bool) {
	if len(h) == 0 || len(out) == 0 {
		return 0, false
	}
	ts = ts[:len(h)]
	ip, narrow := narrowFlag(idx, nidx)
	vp := unsafe.Pointer(unsafe.SliceData(v))
	for k := 0; k < len(h); k += asmChunk {
		rows := int64(min(asmChunk, len(h)-k))
		if done := scaleScatterRows(&h[k], l, ip, vp, n, &ts[k], &out[0], rows, intFlag(v)+narrow); done < rows {
			return k + int(done), true
		}
		l = h[k+int(rows)-1]
	}
	return len(h), true
}
