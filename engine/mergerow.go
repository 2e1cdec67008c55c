package engine

// mergeRow is addDense's loop for a product of a real array read at the
// loop's position and a scalar merge of two segments, one of which does
// not move with the loop. MTTKRP's plan over CSR factors is one:
//
//	sum(<q, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
//	  { @dense j -> C_val(q) * (if 0 <= j && j < D_len1 then
//	      merge(<p3, p5, _> in <B_idx3(B_pos3(p2):B_pos3(p2 + 1)), D_idx2(D_pos2(j):D_pos2(j + 1))>)
//	        B_val(p3) * D_val(p5)) }
//
// B's fiber is the same for every entry of C's row: its bounds and its
// order are checked once per run, and the guard once per window (when
// every key of C's index array passes it). Per entry, only D's row is
// read. The general loop went through the guard's closure, the merge's
// bounds and the order of both segments per entry, which on WordNet cost
// more than the merges (C's rows have about 0.8 entries, B's fibers one
// or two, so a run is one or two merges of one or two seeks each).
type mergeRow struct {
	arr   *variant       // the array read (at1: at the position)
	merge *mergeParts    // the merge (inPlace)
	first bool           // the merge is the product's V1, the array read V2
	guard *windowPrelude // the merge's guard (tests of the key), or nil
	fixed int            // which segment of the merge does not move: 1 or 2
}

// Set by tests: mergeRowOff keeps addDense off the mergeRow loop, and
// mergeRowStopped learns where every run of it stopped.
var (
	mergeRowOff     bool
	mergeRowStopped func(lo, stop, hi int64)
)

// mergeRowOf returns the mergeRow of a dense accumulating body with key
// slot vs and position slot ks, or nil if it does not have the shape.
func mergeRowOf(fb *fusedBody, ks, vs int) *mergeRow {
	p := &fb.p
	if fb.keyAt != at2 || ks < 0 || vs < 0 {
		return nil
	}
	r := &mergeRow{}
	var mv *variant
	switch {
	case p.v1.at == at1 && p.v2.at == atMerge:
		r.arr, mv = &p.v1, &p.v2
	case p.v1.at == atMerge && p.v2.at == at1:
		r.arr, mv, r.first = &p.v2, &p.v1, true
	default:
		return nil
	}
	if r.arr.ints {
		return nil
	}
	r.merge = mv.merge
	if mv.steps != nil {
		if r.guard = windowPreludeOf(mv.steps, ks, vs); r.guard == nil || len(r.guard.reads) > 0 {
			return nil
		}
	}
	moves := func(s *segBounds) bool {
		return s.loSlot == ks || s.loSlot == vs || s.hiSlot == ks || s.hiSlot == vs
	}
	switch {
	case !moves(r.merge.seg1):
		r.fixed = 1
	case !moves(r.merge.seg2):
		r.fixed = 2
	default:
		return nil
	}
	return r
}

// run adds the products for positions lo..hi-1 of the index array cl
// into bd and returns the position it stopped at: hi, or one
// from which the general loop must go on (the guard not covered, bounds
// out of order or past their arrays, an unsorted segment), which then
// reports what is wrong exactly as it would have.
func (r *mergeRow) run(fr *frame, cl *cell, lo, hi int64, ks, vs int, bd *builder, a, b, c float64) int64 {
	if r.guard != nil && !r.guard.covers(cl.imin, cl.imax, lo, hi) {
		return lo
	}
	x := r.arr.arr.reals
	if hi > int64(len(x)) {
		return lo
	}
	m := r.merge
	fixed, moving := m.seg1, m.seg2
	if r.fixed == 2 {
		fixed, moving = moving, fixed
	}
	fl, fh, ok := fixed.inPlace(fr)
	if !ok || !fixed.arr.sortedSegment(fl, fh) {
		return lo
	}
	fa, idx := fixed.arr.ints[fl:fh], cl.ints
	for q := lo; q < hi; q++ {
		j := idx[q]
		fr.i[ks], fr.i[vs] = q, j
		ml, mh, ok := moving.inPlace(fr)
		if !ok {
			return q
		}
		s := 0.0
		if len(fa) > 0 && ml < mh {
			if !moving.arr.sortedSegment(ml, mh) {
				return q
			}
			if mb := moving.arr.ints[ml:mh]; r.fixed == 1 {
				s = m.fb.mergeSum(fr, fa, mb, fl, ml, 0)
			} else {
				s = m.fb.mergeSum(fr, mb, fa, ml, fl, 0)
			}
			if fr.err != nil {
				return hi
			}
		}
		x1, x2 := x[q], s
		if r.first {
			x1, x2 = s, x[q]
		}
		v := (((a * x1) * b) * x2) * c
		// A workspace lists the keys it sees first (addReal).
		if out := bd.reals; uint64(j) < uint64(len(out)) && (bd.ws == nil || out[j] != 0) {
			out[j] += v
		} else {
			bd.addReal(j, v)
		}
	}
	return hi
}
