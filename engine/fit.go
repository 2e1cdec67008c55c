package engine

import "unsafe"

// Loops over index arrays known to fit. When every value of an index
// array lies in [0, len(y)) (the range Array.IntRange remembers, checked
// once per call by the caller), reading y[idx[p]] needs no check per
// entry. Go's own bounds check is that check, so these loops read y, and
// the arrays whose positions they have validated, through pointers.
// Measured on the real matrices (SpMV, cnr-2000/Andrews/wiki-Vote): the
// per-entry check made Go's textbook loop 1.15-1.3x slower than the same
// loop in C; without it the loop is within about 1.05x.
//
// Every function here computes exactly what its checked twin computes,
// in the same order (TestFitLoops compares them bit for bit), and stops
// where its twin stops on bad row bounds.

// fits reports whether every value of the index array in c lies in
// [0, n).
func (c *cell) fits(n int) bool { return c.imin >= 0 && c.imax < int64(n) }

// at reads element k of a (8-byte elements: number is int64 or float64).
func at[T number](a unsafe.Pointer, k int64) T { return *(*T)(unsafe.Add(a, k*8)) }

// rowsDotFit is rowsDot for an idx whose values all index y.
func rowsDotFit[X, Y number](out []float64, pl, ph []int64, ol, oh int64, idx []int64, x []X, y []Y, n, lo, hi int64, a, b, c float64) int64 {
	out = out[:hi]
	n = min(n, int64(len(idx)), int64(len(x)))
	ip, xp, yp := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y))
	for q := lo; q < hi; q++ {
		kl, kh := q+ol, q+oh
		if uint64(kl) >= uint64(len(pl)) || uint64(kh) >= uint64(len(ph)) {
			return q
		}
		l, h := pl[kl], ph[kh]
		if l < 0 || l > h || h > n {
			return q
		}
		s := 0.0
		for p := l; p < h; p++ {
			s += float64(at[X](xp, p)) * float64(at[Y](yp, at[int64](ip, p)))
		}
		out[q] += ((a * s) * b) * c
	}
	return hi
}

// rowsGatherFit is rowsGather for an idx whose values all index y.
func rowsGatherFit[Y number](out []float64, pl, ph []int64, ol, oh int64, idx []int64, y []Y, n, lo, hi int64, a, b, c float64) int64 {
	out = out[:hi]
	n = min(n, int64(len(idx)))
	ip, yp := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(y))
	for q := lo; q < hi; q++ {
		kl, kh := q+ol, q+oh
		if uint64(kl) >= uint64(len(pl)) || uint64(kh) >= uint64(len(ph)) {
			return q
		}
		l, h := pl[kl], ph[kh]
		if l < 0 || l > h || h > n {
			return q
		}
		s := 0.0
		for p := l; p < h; p++ {
			s += float64(at[Y](yp, at[int64](ip, p)))
		}
		out[q] += ((a * s) * b) * c
	}
	return hi
}

// dotFit returns x[p]*y[idx[p]] summed over p = l..h-1, which the caller
// has checked lie within idx and x, for an idx whose values all index y.
func dotFit[X, Y number](idx []int64, x []X, y []Y, l, h int64) float64 {
	ip, xp, yp := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y))
	s := 0.0
	for p := l; p < h; p++ {
		s += float64(at[X](xp, p)) * float64(at[Y](yp, at[int64](ip, p)))
	}
	return s
}

// scatterFit adds t*v[p] at out[idx[p]] for p = l..h-1, which the caller
// has checked lie within idx and v, for an idx whose values all index
// out: scatterAdd's dense loop with only set.
func scatterFit[V number](out []float64, idx []int64, v []V, l, h int64, t float64) {
	ip, vp, op := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(v)), unsafe.Pointer(unsafe.SliceData(out))
	for p := l; p < h; p++ {
		o := (*float64)(unsafe.Add(op, at[int64](ip, p)*8))
		*o += t * float64(at[V](vp, p))
	}
}
