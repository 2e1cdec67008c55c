package engine

// Inner loops of sparse products, generic in the element type of the
// physical arrays they read: real arrays, and int ones (pattern matrices
// store their values as ints) converted in a register as they are read,
// exactly as the interpreter converts an int factor of a real product.

// number is the element type of a physical array.
type number interface{ int64 | float64 }

// scatterAdd adds a*vals[q] at key idx[q] of the dense builder bd for every q: the inner loop of sparse
// products. In workspace mode it records the keys it writes: in a bitmap
// of the whole slice when the slice is narrow (see scatterMark), else in
// the workspace's touched list.
func scatterAdd[V number](bd *builder, idx []int64, vals []V, a float64) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
	if w := bd.ws; w != nil {
		if w.marking || w.sweep || len(out) <= bitmapFactor*len(idx) {
			if w.sweeps(len(out)) {
				scatterPlain(bd, idx, vals, a)
				return
			}
			scatterMark(bd, w, idx, vals, a)
			return
		}
		tch := w.touched
		for q, j := range idx {
			v := a * float64(vals[q])
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
	scatterPlain(bd, idx, vals, a)
}

// scatterPlain is scatterAdd tracking no keys: outside workspace mode, or
// in sweep mode.
func scatterPlain[V number](bd *builder, idx []int64, vals []V, a float64) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
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
}

// scatterMark is scatterAdd in workspace mode on a slice at most
// bitmapFactor times longer than the keys of this call (MMM's rows of
// 250 columns, TTM's of 64): the keys written are marked in the
// workspace's bitmap of the whole slice, which release reads back in
// order (markedRange, sweepMarked). A mark costs no branch, where
// listing a key tests whether its entry was zero, and release needs no
// pass of its own over listed keys. Keys outside the slice take the
// general path and are listed.
func scatterMark[V number](bd *builder, w *workspace, idx []int64, vals []V, a float64) {
	vals = vals[:len(idx)]
	bd.settle() // the loops below write the slice directly
	out := bd.reals
	growBits(&w.bits, (len(out)+63)>>6)
	bm := w.bits
	w.marking = true
	for q, j := range idx {
		v := a * float64(vals[q])
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
// matrix's rows), in dotFit's partial sums once the row's indices are
// checked. It stops at the first row that needs the general path
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
		for _, j := range idx[l:h] {
			if uint64(j) >= uint64(len(y)) {
				return q
			}
		}
		out[q] += ((a * gatherFit(idx, y, l, h)) * b) * c
	}
	return hi
}
