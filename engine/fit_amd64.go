//go:build !purego

package engine

import "unsafe"

// The CSR row dots in assembly (fit_amd64.s): Go's loop (csrDot) keeps
// spilling a bound inside the inner loop and runs 1.15-1.25x the time
// of the same loop in C; these run it as C does.

//go:noescape
func dotRowsReal(h *int64, out *float64, rows int64, l int64, idx *int64, x *float64, n int64, y *float64, a float64, b float64, c float64) int64

//go:noescape
func dotRowsInt(h *int64, out *float64, rows int64, l int64, idx *int64, x *int64, n int64, y *float64, a float64, b float64, c float64) int64

// asmChunk bounds the rows of one assembly call: the runtime cannot
// preempt assembly, so a long call would hold up a collection.
const asmChunk = 4096

// csrDotAsm is csrDot in assembly, for y of reals (false otherwise).
func csrDotAsm[X, Y number](out []float64, h []int64, l int64, idx []int64, x []X, y []Y, n int64, a, b, c float64) (int, bool) {
	ys, ok := any(y).([]float64)
	if !ok || len(h) == 0 {
		return 0, false
	}
	out = out[:len(h)]
	ip, yp := unsafe.SliceData(idx), unsafe.SliceData(ys)
	xi, isInt := any(x).([]int64)
	xr, _ := any(x).([]float64)
	for k := 0; k < len(h); k += asmChunk {
		rows := int64(min(asmChunk, len(h)-k))
		var done int64
		if isInt {
			done = dotRowsInt(&h[k], &out[k], rows, l, ip, unsafe.SliceData(xi), n, yp, a, b, c)
		} else {
			done = dotRowsReal(&h[k], &out[k], rows, l, ip, unsafe.SliceData(xr), n, yp, a, b, c)
		}
		if done < rows {
			return k + int(done), true
		}
		l = h[k+int(rows)-1]
	}
	return len(h), true
}
