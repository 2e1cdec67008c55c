package engine

import "unsafe"

// Loops over index arrays known to fit. When every value of an index
// array lies in [0, len(y)) (the range Array.IntRange remembers, checked
// once per call by the caller), reading y[idx[p]] needs no check per
// entry. Go's own bounds check is that check, so these loops read y, and
// the arrays whose positions they have validated, through pointers.
// The per-entry check costs a textbook SpMV loop a sizeable fraction of
// its time against the same loop in C.
//
// Every function here computes exactly what its checked twin computes,
// in the same order (TestFitLoops compares them bit for bit), and stops
// where its twin stops on bad row bounds.

// narrowRead, when set (by tests), is called each time a row loop is
// given an index array's 32-bit copy to read.
var narrowRead func()

// useNarrow gives the row loops their index arrays' 32-bit copies where
// they read them (narrowRows); TestNarrowRatio turns it off to compare.
var useNarrow = narrowRows

// fits reports whether every value of the index array in c lies in
// [0, n).
func (c *cell) fits(n int) bool { return c.imin >= 0 && c.imax < int64(n) }

// at reads element k of a (8-byte elements: number is int64 or float64).
func at[T number](a unsafe.Pointer, k int64) T { return *(*T)(unsafe.Add(a, k*8)) }

// csrDot runs CSR rows without checks on idx, whose values all index y:
// row k of out sums p = l..h[k]-1, with l the bound before (the argument
// l for row 0). It stops at the
// first row with l < 0, l > h[k] or h[k] > n and returns the rows done.
// Carrying the bound over keeps the loop's few registers for the inner
// loop.
func csrDot[X, Y number](out []float64, h []int64, l int64, idx []int64, x []X, y []Y, n int64, a, b, c float64) int {
	out = out[:len(h)]
	for k, h := range h {
		if l < 0 || l > h || h > n {
			return k
		}
		out[k] += ((a * dotFit(idx, x, y, l, h)) * b) * c
		l = h
	}
	return len(h)
}

// csrRowsIn reports whether CSR rows p (row k from p[k] to p[k+1]) all
// lie in order within an array of n elements.
func csrRowsIn(p []int64, n int64) bool {
	if len(p) == 0 || p[0] < 0 {
		return false
	}
	for k := 1; k < len(p); k++ {
		if p[k] < p[k-1] {
			return false
		}
	}
	return p[len(p)-1] <= n
}

// csrSum adds into out[k] the sum of x[p] over row k's positions p =
// p[k]..p[k+1]-1 (checked by csrRowsIn) in dotFit's partial sums: the
// dot with ones, each term x[p] times 1.0 exactly, so a row sums at the
// add's throughput as a row's dot does. The sum s goes in as
// ((a*s)*b)*c with a, b, c = sc, as csrDot's.
func csrSum(out []float64, p []int64, x []float64, sc [3]float64) {
	out = out[:len(p)-1]
	for k := range out {
		row := x[p[k]:p[k+1]]
		var s0, s1, s2, s3 float64
		q := 0
		for ; q+dotLanes <= len(row); q += dotLanes {
			s0 += row[q]
			s1 += row[q+1]
			s2 += row[q+2]
			s3 += row[q+3]
		}
		if q < len(row) {
			s0 += row[q]
			if q+1 < len(row) {
				s1 += row[q+1]
				if q+2 < len(row) {
					s2 += row[q+2]
				}
			}
		}
		out[k] += ((sc[0] * ((s0 + s1) + (s2 + s3))) * sc[1]) * sc[2]
	}
}

// csrDotScatter is dotScatterRows's row loop for CSR rows whose indices
// fit: for row k, t = ((a*s)*b)*c with s the sum of x[p]*y[idx1[p]]
// over p = l1..h1[k]-1, then out[idx2[p]] += t*v[p] over p =
// l2..h2[k]-1 (l1, l2 carried over as in csrDot). It stops at the first
// row whose bounds are bad and returns the rows done.
func csrDotScatter[X, Y number](out []float64, h1 []int64, l1 int64, idx1 []int64, x []X, y []Y, n1 int64, h2 []int64, l2 int64, idx2 []int64, v []X, n2 int64, a, b, c float64) int {
	h2 = h2[:len(h1)]
	for k, e1 := range h1 {
		e2 := h2[k]
		if l1 < 0 || l1 > e1 || e1 > n1 || l2 < 0 || l2 > e2 || e2 > n2 {
			return k
		}
		scatterFit(out, idx2, v, l2, e2, ((a*dotFit(idx1, x, y, l1, e1))*b)*c)
		l1, l2 = e1, e2
	}
	return len(h1)
}

// csrScaleScatter adds v[p]*ts[k] at out[idx[p]] over CSR row k (p =
// l..h[k]-1, as csrDot), for an idx whose values all index out, each row
// scaled by its own factor. It stops at the first row with l < 0, l >
// h[k] or h[k] > n and returns the rows done.
func csrScaleScatter[X number](out []float64, h []int64, l int64, idx []int64, v []X, n int64, ts []float64) int {
	ts = ts[:len(h)]
	for k, e := range h {
		if l < 0 || l > e || e > n {
			return k
		}
		scatterFit(out, idx, v, l, e, ts[k])
		l = e
	}
	return len(h)
}

// csrGatherScatter is csrDotScatter for a pattern matrix (no value
// arrays): t = ((a*s)*b)*c with s the sum of y[idx1[p]], then
// out[idx2[p]] += t.
func csrGatherScatter[Y number](out []float64, h1 []int64, l1 int64, idx1 []int64, y []Y, n1 int64, h2 []int64, l2 int64, idx2 []int64, n2 int64, a, b, c float64) int {
	h2 = h2[:len(h1)]
	ip2, op := unsafe.Pointer(unsafe.SliceData(idx2)), unsafe.Pointer(unsafe.SliceData(out))
	for k, e1 := range h1 {
		e2 := h2[k]
		if l1 < 0 || l1 > e1 || e1 > n1 || l2 < 0 || l2 > e2 || e2 > n2 {
			return k
		}
		t := ((a * gatherFit(idx1, y, l1, e1)) * b) * c
		for p := l2; p < e2; p++ {
			*(*float64)(unsafe.Add(op, at[int64](ip2, p)*8)) += t
		}
		l1, l2 = e1, e2
	}
	return len(h1)
}

// rowsGatherFit is rowsGather for an idx whose values all index y: CSR
// rows run without checks in assembly where there is any (reading nidx,
// as csrDotAsm); everything else takes rowsGather.
func rowsGatherFit[Y number](out []float64, pl, ph []int64, ol, oh int64, idx []int64, nidx []int32, y []Y, n, lo, hi int64, a, b, c float64) int64 {
	if h, ok := csrRows(pl, ph, ol, oh, lo, hi); ok {
		if k, ok := csrGatherAsm(out[lo:hi], h, pl[lo+ol], idx, nidx, y, min(n, int64(len(idx))), a, b, c); ok {
			return lo + int64(k)
		}
	}
	return rowsGather(out, pl, ph, ol, oh, idx, y, n, lo, hi, a, b, c)
}

// dotFit returns x[p]*y[idx[p]] summed over p = l..h-1, which the caller
// has checked lie within idx and x, for an idx whose values all index y.
// The terms go to dotLanes partial sums by p-l mod dotLanes, each in
// order from 0.0, added as (s0+s1)+(s2+s3): four independent chains
// instead of one add waiting on the last (a row's dot runs at the add's
// throughput, not its latency). The assembly row loops sum in this
// order too.
func dotFit[X, Y number](idx []int64, x []X, y []Y, l, h int64) float64 {
	return laneDot[X, Y](unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y)), -1, l, h)
}

// gatherFit returns y[idx[p]] summed over p = l..h-1 (a pattern matrix's
// row) in dotFit's partial sums, for p and idx checked as dotFit's: a dot
// whose every value is a 1.0 (y times 1.0 is y exactly).
func gatherFit[Y number](idx []int64, y []Y, l, h int64) float64 {
	one := 1.0
	return laneDot[float64, Y](unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(&one), unsafe.Pointer(unsafe.SliceData(y)), 0, l, h)
}

// laneDot is dotFit's loop over raw arrays, reading the value of p at
// x[p&xmask]: xmask -1 reads x along the row, 0 reads x[0] throughout.
func laneDot[X, Y number](ip, xp, yp unsafe.Pointer, xmask, l, h int64) float64 {
	term := func(p int64) float64 { return float64(at[X](xp, p&xmask)) * float64(at[Y](yp, at[int64](ip, p))) }
	var s0, s1, s2, s3 float64
	p := l
	for ; p+dotLanes <= h; p += dotLanes {
		s0 += term(p)
		s1 += term(p + 1)
		s2 += term(p + 2)
		s3 += term(p + 3)
	}
	if p < h {
		s0 += term(p)
		if p+1 < h {
			s1 += term(p + 1)
			if p+2 < h {
				s2 += term(p + 2)
			}
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// dotLanes is the partial sums of a row's dot (dotFit).
const dotLanes = 4

// scatterFit adds t*v[p] at out[idx[p]] for p = l..h-1, which the caller
// has checked lie within idx and v, for an idx whose values all index
// out: scatterAdd's dense loop.
func scatterFit[V number](out []float64, idx []int64, v []V, l, h int64, t float64) {
	ip, vp, op := unsafe.Pointer(unsafe.SliceData(idx)), unsafe.Pointer(unsafe.SliceData(v)), unsafe.Pointer(unsafe.SliceData(out))
	for p := l; p < h; p++ {
		o := (*float64)(unsafe.Add(op, at[int64](ip, p)*8))
		*o += t * float64(at[V](vp, p))
	}
}

// csrRows returns the upper bounds ph[q+oh] of rows q = lo..hi-1 when
// their lower bounds are the upper bounds of the rows before (the same
// array, oh = ol+1) and all of them lie inside it.
func csrRows(pl, ph []int64, ol, oh, lo, hi int64) ([]int64, bool) {
	if len(pl) == 0 || len(ph) == 0 || unsafe.SliceData(pl) != unsafe.SliceData(ph) || len(pl) != len(ph) || oh != ol+1 ||
		lo >= hi || lo+ol < 0 || hi+oh > int64(len(ph)) || lo+ol >= int64(len(pl)) {
		return nil, false
	}
	return ph[lo+oh : hi+oh], true
}
