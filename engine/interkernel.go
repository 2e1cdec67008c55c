package engine

import (
	"unsafe"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// The interleaved rows' kernel (nestinter.go): chunks of eight rows
// whose reads at step k lie side by side, lane by lane, each lane adding
// its terms in order from 0.0 and then its sum into out at its key,
// lanes in order. interkernel_amd64.s runs it with AVX2; this Go loop on other
// CPUs, and where the values are ints too large to convert exactly in
// SIMD. A dot-and-scatter then scatters the chunks' rows one after
// another (sellScatterGo; in SSE2 on amd64).

// sellChunkCalls bounds the chunks of one kernel call: the runtime cannot
// preempt assembly.
const sellChunkCalls = 512

// sellChunksGo is the kernel of sellChunks in Go: it runs chunks c0..c1-1
// into out and returns the first chunk it did not run, stopping before a
// chunk with a key outside out or words or values outside their arrays.
// The caller has checked that the halves of every word of cols index x
// (so x is read without a check, as in fit.go) and that the chunks'
// lanes lie inside perm, rlen and cpos. Each lane adds its terms in
// order from 0.0, as the general path does.
func sellChunksGo[V number](out []float64, perm, rlen, cpos, cols []int64, vals []V, x []float64, c0, c1 int64) int64 {
	const h = int64(storage.SellHeight)
	xp := unsafe.Pointer(unsafe.SliceData(x))
	for c := c0; c < c1; c++ {
		p, r := (*[h]int64)(perm[c*h:]), (*[h]int64)(rlen[c*h:])
		n, w := int64(0), cpos[c]
		for l := range h {
			n = max(n, r[l])
			if uint64(p[l]) >= uint64(len(out)) {
				return c
			}
		}
		if !sellFits(w, n, int64(len(cols)), int64(len(vals)), vals != nil) {
			return c
		}
		// The lanes one by one, unrolled: Go keeps neither an array of
		// sums nor a loop over lanes in registers.
		r0, r1, r2, r3, r4, r5, r6, r7 := r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
		var s0, s1, s2, s3, s4, s5, s6, s7 float64
		words := cols[w : w+4*n]
		const low = storage.PackedHalf - 1
		if vals == nil {
			for k := range n {
				ws := (*[4]int64)(words[4*k:])
				if k < r0 {
					s0 += at[float64](xp, ws[0]&low)
				}
				if k < r1 {
					s1 += at[float64](xp, ws[0]>>32)
				}
				if k < r2 {
					s2 += at[float64](xp, ws[1]&low)
				}
				if k < r3 {
					s3 += at[float64](xp, ws[1]>>32)
				}
				if k < r4 {
					s4 += at[float64](xp, ws[2]&low)
				}
				if k < r5 {
					s5 += at[float64](xp, ws[2]>>32)
				}
				if k < r6 {
					s6 += at[float64](xp, ws[3]&low)
				}
				if k < r7 {
					s7 += at[float64](xp, ws[3]>>32)
				}
			}
		} else {
			vs := vals[2*w : 2*w+8*n]
			for k := range n {
				ws, v := (*[4]int64)(words[4*k:]), (*[h]V)(vs[8*k:])
				if k < r0 {
					s0 += float64(v[0]) * at[float64](xp, ws[0]&low)
				}
				if k < r1 {
					s1 += float64(v[1]) * at[float64](xp, ws[0]>>32)
				}
				if k < r2 {
					s2 += float64(v[2]) * at[float64](xp, ws[1]&low)
				}
				if k < r3 {
					s3 += float64(v[3]) * at[float64](xp, ws[1]>>32)
				}
				if k < r4 {
					s4 += float64(v[4]) * at[float64](xp, ws[2]&low)
				}
				if k < r5 {
					s5 += float64(v[5]) * at[float64](xp, ws[2]>>32)
				}
				if k < r6 {
					s6 += float64(v[6]) * at[float64](xp, ws[3]&low)
				}
				if k < r7 {
					s7 += float64(v[7]) * at[float64](xp, ws[3]>>32)
				}
			}
		}
		out[p[0]] += s0
		out[p[1]] += s1
		out[p[2]] += s2
		out[p[3]] += s3
		out[p[4]] += s4
		out[p[5]] += s5
		out[p[6]] += s6
		out[p[7]] += s7
	}
	return c1
}

// sellScatterGo scatters rows 0..len(sums)-1 of chunks whose lane
// lengths are rlen and word offsets cpos, rows in order: row q (lane q%8
// of chunk q/8) adds each entry's value (1 without values) times
// (scale*sums[q])*fac into out at its column, entries in order. The
// caller has checked that the entries lie inside cols and vals and that
// every half of cols' words indexes out.
func sellScatterGo[V number](out, sums []float64, rlen, cpos, cols []int64, vals []V, scale, fac float64) {
	const h = int64(storage.SellHeight)
	for q := range int64(len(sums)) {
		interScatter(out, cols, vals, 2*cpos[q/h]+q%h, rlen[q], scale*sums[q]*fac)
	}
}

// sellFits reports whether a chunk whose words start at w and whose
// longest lane has n steps reads inside cols (and vals): words w..w+4n-1,
// values 2w..2w+8n-1.
func sellFits(w, n, ncols, nvals int64, valued bool) bool {
	if w < 0 || w > ncols || n > ncols || w+4*n > ncols {
		return false
	}
	return !valued || 2*w+8*n <= nvals
}

// operands flattens a chain of op (+ or *) into its operands.
func operands(op ir.Op, e *ir.Expr, out []*ir.Expr) []*ir.Expr {
	if e.Op != op {
		return append(out, e)
	}
	for _, a := range e.Args {
		out = operands(op, a, out)
	}
	return out
}

// The kernels, Go and assembly, are written for eight lanes.
var (
	_ [storage.SellHeight - 8]struct{}
	_ [8 - storage.SellHeight]struct{}
)
