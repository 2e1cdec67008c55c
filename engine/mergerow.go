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
// (or with the guard in front of the product, where the optimizer may
// put it). B's fiber is the same for every entry of C's row: its bounds
// and its order are checked once per run, and the guards once per window
// (when every key of C's index array passes them). Per entry, only D's row is
// read. The general loop went through the guard's closure, the merge's
// bounds and the order of both segments per entry, which costs more than
// the merges when C's rows and B's fibers hold an entry or two (a run is
// then one or two merges of one or two seeks each).
type mergeRow struct {
	arr   *variant       // the array read (at1: at the position)
	merge *mergeParts    // the merge (inPlace)
	first bool           // the merge is the product's V1, the array read V2
	guard *windowPrelude // the merge's guard (tests of the key), or nil
	// body: the loop's body; its prelude, if any, is made of tests of
	// the key (a windowPrelude, body.window).
	body  *fusedBody
	fixed int // which segment of the merge does not move: 1 or 2
	// vals1, vals2: the real arrays the merge's body multiplies, read
	// at its first and second positions, when that is all it does
	// (dotMerge); else nil.
	vals1, vals2 *cell
	// index: the moving segment's rows' tables, when directRows seeks
	// in them (fixed == 1); else nil.
	index *seekIndex
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
	if fb.keyAt != at2 || ks < 0 || vs < 0 || fb.steps != nil && (fb.window == nil || len(fb.window.reads) > 0) {
		return nil
	}
	r := &mergeRow{body: fb}
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
	if p := &r.merge.fb.p; r.merge.fb.pure && p.v1.at == at1 && p.v2.at == at2 && !p.v1.ints && !p.v2.ints {
		r.vals1, r.vals2 = p.v1.arr, p.v2.arr
	}
	return r
}

// run adds the products for positions lo..hi-1 of the index array cl
// into bd and returns the position it stopped at: hi, or one
// from which the general loop must go on (the guard not covered, bounds
// out of order or past their arrays, an unsorted segment), which then
// reports what is wrong exactly as it would have.
func (r *mergeRow) run(fr *frame, cl *cell, lo, hi int64, ks, vs int, bd *builder, a, b, c float64) int64 {
	stop := lo
	if r.covered(cl) {
		if fb := r.body; fb.steps != nil && !fb.pure {
			// Behind a prelude, the invariant factors wait for the
			// first position that passes it: this one.
			if a, b, c = fb.p.invariants(fr); fr.err != nil {
				return hi
			}
		}
		stop = r.rows(fr, cl, lo, hi, ks, vs, bd, a, b, c)
	}
	if mergeRowStopped != nil {
		mergeRowStopped(lo, stop, hi)
	}
	return stop
}

// covered reports whether every key of the index array cl passes the
// merge's guard and the body's prelude, if they have them.
func (r *mergeRow) covered(cl *cell) bool {
	return (r.guard == nil || r.guard.covers(cl.imin, cl.imax, 0, 0)) &&
		(r.body.window == nil || r.body.window.covers(cl.imin, cl.imax, 0, 0))
}

// rows is run once the guard is known to hold.
func (r *mergeRow) rows(fr *frame, cl *cell, lo, hi int64, ks, vs int, bd *builder, a, b, c float64) int64 {
	x := r.arr.arr.reals
	if hi > int64(len(x)) {
		return lo
	}
	m := r.merge
	fixed, moving := m.seg1, m.seg2
	fvals, mvals := r.vals1, r.vals2
	if r.fixed == 2 {
		fixed, moving = moving, fixed
		fvals, mvals = mvals, fvals
	}
	fl, fh, ok := fixed.inPlace(fr)
	if !ok || !fixed.arr.sortedSegment(fl, fh) {
		return lo
	}
	fa, idx := fixed.arr.ints[fl:fh], cl.ints
	// The values of the fixed segment, read once (direct): then each
	// entry's merge is dotMerge on D's row, without mergeSum's checks.
	var fv, mv []float64
	direct := fvals != nil && fh <= int64(len(fvals.reals))
	if direct {
		fv, mv = fvals.reals[fl:fh], mvals.reals
		if mergeDirect != nil && len(fa) > 0 {
			mergeDirect()
		}
	}
	if direct && moving.loSlot == vs && moving.hiSlot == vs {
		return r.directRows(moving, fa, fv, mv, x, idx, lo, hi, bd, a, b, c)
	}
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
			mb := moving.arr.ints[ml:mh]
			switch {
			case direct && mh <= int64(len(mv)) && r.fixed == 1:
				s = dotMerge(fa, mb, fv, mv[ml:mh], 0, nil, nil)
			case direct && mh <= int64(len(mv)):
				s = dotMerge(mb, fa, mv[ml:mh], fv, 0, nil, nil)
			case r.fixed == 1:
				s = m.fb.mergeSum(fr, fa, mb, fl, ml, 0)
			default:
				s = m.fb.mergeSum(fr, mb, fa, ml, fl, 0)
			}
			if fr.err != nil {
				return hi
			}
		}
		r.add(bd, j, x[q], s, a, b, c)
	}
	return hi
}

// add adds the product of the array's value xq and the merge's s, in
// the product's order, at key j of bd.
func (r *mergeRow) add(bd *builder, j int64, xq, s, a, b, c float64) {
	x1, x2 := xq, s
	if r.first {
		x1, x2 = s, xq
	}
	v := (((a * x1) * b) * x2) * c
	// A workspace lists the keys it sees first (addReal).
	if out := bd.reals; uint64(j) < uint64(len(out)) && (bd.ws == nil || out[j] != 0) {
		out[j] += v
	} else {
		bd.addReal(j, v)
	}
}

// directRows is rows when the merge is dotMerge and the moving segment
// is picked by the key alone (D's row j): the loop reads nothing through
// the frame. It stops, for the general loop to go on, at the first entry
// whose segment is out of order, past its arrays or unsorted.
func (r *mergeRow) directRows(moving *segBounds, fa []int64, fv, mv, x []float64, idx []int64, lo, hi int64, bd *builder, a, b, c float64) int64 {
	pa, pb, n, mi := moving.lo.ints, moving.hi.ints, moving.arr.n, moving.arr.ints
	for q := lo; q < hi; q++ {
		j := idx[q]
		kl, kh := j+moving.loOff, j+moving.hiOff
		if uint64(kl) >= uint64(len(pa)) || uint64(kh) >= uint64(len(pb)) {
			return q
		}
		ml, mh := pa[kl], pb[kh]
		if ml < 0 || ml > mh || mh > n {
			return q
		}
		s := 0.0
		if len(fa) > 0 && ml < mh {
			if mh > int64(len(mv)) || !moving.arr.sortedSegment(ml, mh) {
				return q
			}
			if r.fixed == 1 {
				ri, tab := r.index.row(j)
				s = dotMerge(fa, mi[ml:mh], fv, mv[ml:mh], 0, ri, tab)
			} else {
				s = dotMerge(mi[ml:mh], fa, mv[ml:mh], fv, 0, nil, nil)
			}
		}
		r.add(bd, j, x[q], s, a, b, c)
	}
	return hi
}

// mergeRowsRun runs, for every position p of a window of the int array
// cl (k = cl(p)), behind a prelude of guards on k and lets read at p (a
// windowPrelude, or none), an inner fused loop over the segment
// I(P(k + c1):P(k + c2)) whose body is a mergeRow: MTTKRP's loop over the
// keys k of B(i,:,:), C's row k inside, in one function. The guards of
// both levels are decided once per window, and each row runs the
// mergeRow loop directly. It returns nil when inner is not of that shape;
// general runs any window whose guards are not covered.
//
// Guards that only test keys hold for every window or for none: the
// decision depends on the bound arrays' key ranges and scalars alone. It
// is made at the first window of a run and kept in the int slot memo
// (0: not yet, 1: covered, 2: not), which saves, per row i, the two
// guards' four tests.
func mergeRowsRun(cl *cell, ks, vs int, inner *loop, lb loopBody, steps []step, memo int, general func(*frame, srcState, int64, int64, *builder)) func(*frame, srcState, int64, int64, *builder) {
	fl := inner.fused
	if fl == nil || fl.seg == nil || !lb.spec.dense || vs < 0 || fl.fb.mergeRow == nil {
		return nil
	}
	fb, sb, r := fl.fb, fl.seg, fl.fb.mergeRow
	if sb.loSlot != vs || sb.hiSlot != vs {
		return nil
	}
	window := windowPreludeOf(steps, ks, vs)
	if window == nil && steps != nil {
		return nil
	}
	innerAll := inner.all
	keysOnly := window == nil || len(window.reads) == 0
	return func(fr *frame, st srcState, from, to int64, bd *builder) {
		lo, hi := st.lo+from, st.lo+to
		covered := fr.i[memo] == 1
		if !keysOnly || fr.i[memo] == 0 {
			covered = (window == nil || coveredWindow(window, cl, lo, hi) != nil) && r.covered(fl.cl)
			fr.i[memo] = 2
			if covered {
				fr.i[memo] = 1
			}
		}
		if !covered || mergeRowOff {
			general(fr, st, from, to, bd)
			return
		}
		outer := cl.ints
		for p := lo; p < hi; p++ {
			k := outer[p]
			if ks >= 0 {
				fr.i[ks] = p
			}
			fr.i[vs] = k
			if window != nil {
				window.load(fr, p)
			}
			if l, h, ok := sb.inPlace(fr); ok {
				if l == h {
					continue
				}
				a, b, c := 1.0, 1.0, 1.0
				if !fb.pure {
					if a, b, c = fb.p.invariants(fr); fr.err != nil {
						return
					}
				}
				stop := r.rows(fr, fl.cl, l, h, fl.ks, fl.vs, bd, a, b, c)
				if mergeRowStopped != nil {
					mergeRowStopped(l, stop, h)
				}
				if stop < h && fr.err == nil {
					fb.addDense(fr, stop, h, fl.cl, fl.ks, fl.vs, bd)
				}
				if fr.err != nil {
					return
				}
				continue
			}
			// Bounds out of order or past their arrays: the inner loop
			// finds the exact error.
			innerAll(fr, bd)
			if fr.err != nil {
				return
			}
		}
	}
}
