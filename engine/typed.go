package engine

import (
	"github.com/storel/storel/ir"
)

// The inner loops of fused products, generic in the element type of the
// physical arrays they read: real arrays, and int ones (pattern matrices
// store their values as ints) converted in a register as they are read,
// exactly as the interpreter converts an int factor of a real product.

// number is the element type of a physical array.
type number interface{ int64 | float64 }

// length is the length of the array a variant reads.
func (v *variant) length() int64 {
	if v.ints {
		return int64(len(v.arr.ints))
	}
	return int64(len(v.arr.reals))
}

// get reads position k of the variant's array (in bounds).
func (v *variant) get(k int64) float64 {
	if v.ints {
		return float64(v.arr.ints[k])
	}
	return v.arr.reals[k]
}

// scatter adds v's array over positions lo..hi-1 (in bounds) at keys
// idx[lo:hi] of bd, as scatterAdd says.
func (v *variant) scatter(bd *builder, idx []int64, lo, hi int64, a, b, c float64, only bool) {
	if v.ints {
		scatterAdd(bd, idx[lo:hi], v.arr.ints[lo:hi], a, b, c, only)
		return
	}
	scatterAdd(bd, idx[lo:hi], v.arr.reals[lo:hi], a, b, c, only)
}

// scatterAdd adds a*vals[q], times b then c unless only is set, at key
// idx[q] of the dense builder bd for every q: the inner loop of sparse
// products. In workspace mode it records the keys it writes: in a bitmap
// of the whole slice when the slice is narrow (see scatterMark), else in
// the workspace's touched list.
func scatterAdd[V number](bd *builder, idx []int64, vals []V, a, b, c float64, only bool) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
	if w := bd.ws; w != nil {
		if w.marking || w.sweep || len(out) <= bitmapFactor*len(idx) {
			if w.sweeps(len(out)) {
				scatterPlain(bd, idx, vals, a, b, c, only)
				return
			}
			scatterMark(bd, w, idx, vals, a, b, c, only)
			return
		}
		tch := w.touched
		for q, j := range idx {
			v := a * float64(vals[q])
			if !only {
				v = (v * b) * c
			}
			if uint64(j) < uint64(len(out)) {
				if out[j] == 0 {
					tch = append(tch, j)
				}
				out[j] += v
				continue
			}
			bd.reals, w.touched = out, tch
			bd.addRealSlow(j, v)
			out, tch = bd.reals, w.touched
		}
		bd.reals, w.touched = out, tch
		return
	}
	scatterPlain(bd, idx, vals, a, b, c, only)
}

// scatterPlain is scatterAdd tracking no keys: outside workspace mode, or
// in sweep mode.
func scatterPlain[V number](bd *builder, idx []int64, vals []V, a, b, c float64, only bool) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
	if only {
		for q, j := range idx {
			v := a * float64(vals[q])
			if uint64(j) < uint64(len(out)) {
				out[j] += v
				continue
			}
			bd.reals = out
			bd.addRealSlow(j, v)
			out = bd.reals
		}
		bd.reals = out
		return
	}
	for q, j := range idx {
		v := ((a * float64(vals[q])) * b) * c
		if uint64(j) < uint64(len(out)) {
			out[j] += v
			continue
		}
		bd.reals = out
		bd.addRealSlow(j, v)
		out = bd.reals
	}
	bd.reals = out
}

// scatterMark is scatterAdd in workspace mode on a slice at most
// bitmapFactor times longer than the keys of this call (MMM's rows of
// 250 columns, TTM's of 64): the keys written are marked in the
// workspace's bitmap of the whole slice, which release reads back in
// order (markedRange, sweepMarked). A mark costs no branch, where
// listing a key tests whether its entry was zero, and release needs no
// pass of its own over listed keys. Keys outside the slice take the
// general path and are listed.
func scatterMark[V number](bd *builder, w *workspace, idx []int64, vals []V, a, b, c float64, only bool) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
	growBits(&w.bits, (len(out)+63)>>6)
	bm := w.bits
	w.marking = true
	for q, j := range idx {
		v := a * float64(vals[q])
		if !only {
			v = (v * b) * c
		}
		if uint64(j) < uint64(len(out)) {
			out[j] += v
			bm[j>>6] |= 1 << (j & 63)
			continue
		}
		bd.reals = out
		bd.addRealSlow(j, v)
		out = bd.reals
		if len(out) > len(bm)<<6 {
			growBits(&w.bits, (len(out)+63)>>6)
			bm = w.bits
		}
	}
	bd.reals = out
}

// rowsGather adds, for rows q = lo, lo+1, ... of out, ((a*s)*b)*c where
// s sums y[idx[p]] over the segment pl[q+ol]:ph[q+oh] (a pattern
// matrix's rows). It stops at the first row that needs the general path
// (bounds out of order or past n, an index outside y) and returns it (hi
// when done); that row is not added.
func rowsGather[Y number](out []float64, pl, ph []int64, ol, oh int64, idx []int64, y []Y, n, lo, hi int64, a, b, c float64) int64 {
	out = out[:hi]
	n = min(n, int64(len(idx)))
	idx = idx[:n]
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
		for _, j := range idx[l:h] {
			if uint64(j) >= uint64(len(y)) {
				return q
			}
			s += float64(y[j])
		}
		out[q] += ((a * s) * b) * c
	}
	return hi
}

// rowProduct is nestedRun's loop for its most common case, the rows of
// MMM by a narrow factor: the builder has a dense slice of its own (a
// streak: workspace.go) or is in workspace mode over a slice at most
// bitmapFactor times longer than the positions of the call, the
// factor of each position is read from an array (A_val(p), directly or
// through a let the window prelude would load), and no prelude step
// needs running. It then runs all positions in one loop without calls
// (markProduct), where the general loop made three calls per position
// and kept its state in the frame. The factor may be real or int
// (pattern and integer matrices), and the rows may be a streak's.
type rowProduct struct {
	outer, lo, hi *cell // k = outer(p); segment lo(k+loOff):hi(k+hiOff)
	loOff, hiOff  int64
	idx           *cell // keys of the inner segment
	v             *variant
	a             *cell // a(p+aOff), reals or ints
	aOff          int64
}

// run runs positions start..end-1 into bd if it can and returns the first
// position left to the general loop (end when done). The frame's slots
// for the loop's variables are left as they were: nothing reads them
// once the loop is over, and the general loop sets them for every
// position it runs.
func (r *rowProduct) run(bd *builder, start, end, lim int64) int64 {
	bd.settle()
	w := bd.ws
	if !bd.spec.real || start >= end || int64(len(r.outer.ints)) < end {
		return start
	}
	if w != nil && !w.marking && !w.sweep && int64(len(bd.reals)) > bitmapFactor*(end-start) {
		return start
	}
	if r.a.info.Elem == ir.Real {
		return runRows(r, bd, w, r.a.reals, start, end, lim)
	}
	return runRows(r, bd, w, r.a.ints, start, end, lim)
}

// runRows is rowProduct.run once the factors' type is known.
func runRows[A number](r *rowProduct, bd *builder, w *workspace, avals []A, start, end, lim int64) int64 {
	if start+r.aOff < 0 || end+r.aOff > int64(len(avals)) {
		return start
	}
	avals = avals[start+r.aOff : end+r.aOff]
	var bm []uint64 // nil: no marks (a slice of bd's own, or sweep mode)
	if w != nil && !w.sweeps(len(bd.reals)) {
		growBits(&w.bits, (len(bd.reals)+63)>>6)
		w.marking, bm = true, w.bits
	}
	var p, q, h int64
	outer, pa, pb, idx := r.outer.ints, r.lo.ints, r.hi.ints, r.idx.ints
	if r.v.ints {
		p, q, h = markProduct(bd.reals, bm, outer, pa, pb, r.loOff, r.hiOff, lim, idx, r.v.arr.ints, avals, start, end)
	} else {
		p, q, h = markProduct(bd.reals, bm, outer, pa, pb, r.loOff, r.hiOff, lim, idx, r.v.arr.reals, avals, start, end)
	}
	if q < 0 {
		return p
	}
	// A key outside the slice at q: the rest of the segment takes the
	// general path of scatterAdd, which grows the slice.
	r.v.scatter(bd, idx, q, h, float64(avals[p-start]), 1, 1, true)
	return p + 1
}

// markProduct adds a[p-start]*vals[q] at key idx[q] of out, marking the
// key in bm (which covers out; bm is nil in sweep mode: no marks), for
// the positions q of segment pa[k+loOff]:pb[k+hiOff] (within lim) of
// every position p in start..end-1, k = outer[p]: scatterMark's loop
// for a whole row. It stops at the first position whose segment is off,
// returned with q = -1 and nothing of it added, or at a key outside out,
// returned with its position q and the segment's end h, the keys before
// it added.
func markProduct[V, A number](out []float64, bm []uint64, outer, pa, pb []int64, loOff, hiOff, lim int64, idx []int64, vals []V, a []A, start, end int64) (p, q, h int64) {
	idx, vals = idx[:lim], vals[:lim]
	outer = outer[:end]
	a = a[:end-start]
	for p = start; p < end; p++ {
		k := outer[p]
		kl, kh := k+loOff, k+hiOff
		if uint64(kl) >= uint64(len(pa)) || uint64(kh) >= uint64(len(pb)) {
			return p, -1, 0
		}
		l, h := pa[kl], pb[kh]
		if l < 0 || l > h || h > lim {
			return p, -1, 0
		}
		var i int64
		if bm != nil {
			i = markSeg(out, bm, idx[l:h], vals[l:h], float64(a[p-start]))
		} else {
			i = addSeg(out, idx[l:h], vals[l:h], float64(a[p-start]))
		}
		if i < h-l {
			return p, l + i, h
		}
	}
	return end, -1, 0
}

// markSeg adds a*vals[i] at key seg[i] of out and marks the key in bm,
// stopping at the first key outside out, whose position it returns
// (len(seg) when done). A function of its own, so that its loop keeps
// everything in registers: inlined in markProduct's loop, Go spilled the
// loop counter and four other values to the stack. The gain is small:
// what bounds the loop is the read-modify-write
// of out[j] and of the bitmap's word, the same few words again and
// again.
//
//go:noinline
func markSeg[V number](out []float64, bm []uint64, seg []int64, vals []V, a float64) int64 {
	vals = vals[:len(seg)]
	for i, j := range seg {
		if uint64(j) >= uint64(len(out)) {
			return int64(i)
		}
		out[j] += a * float64(vals[i])
		bm[j>>6] |= 1 << (j & 63)
	}
	return int64(len(seg))
}

// addSeg is markSeg without marks, for rows in sweep mode.
//
//go:noinline
func addSeg[V number](out []float64, seg []int64, vals []V, a float64) int64 {
	vals = vals[:len(seg)]
	for i, j := range seg {
		if uint64(j) >= uint64(len(out)) {
			return int64(i)
		}
		out[j] += a * float64(vals[i])
	}
	return int64(len(seg))
}
