package engine

import "github.com/storel/storel/ir"

// mergeLoop is a loop over an int array whose body is a merge of two
// segments adding into the loop's builder, run by the loop around it
// (mergeLoopRowsRun). MTTKRP's plan on a tensor of short fibers (CSR
// factors) is one, C's row k around the merge of B's fiber with D's row j:
//
//	sum(<q, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
//	  merge(<p3, p5, _> in <B_idx3(B_pos3(p2):B_pos3(p2 + 1)), D_idx2(D_pos2(j):D_pos2(j + 1))>)
//	    { @dense j -> (if 0 <= j && j < D_len1 then B_val(p3) * C_val(q)) * D_val(p5) }
//
// The general loop calls the merge's closure per entry, and it reads
// both segments' bounds and checks both orders before it can find that
// they do not meet: when fibers of B and rows of D hold an entry or so,
// few entries have a pair. Here the segment that does not
// move with the loop (B's fiber) is read and checked once per run, and
// per entry only the moving one (D's row j); the body runs through its
// closure at each pair, as in mergeSorted, so every pair adds exactly
// what it adds there.
type mergeLoop struct {
	cl     *cell // the loop's index array
	ks, vs int   // the loop's slots (-1: unused)
	merge  *mergeParts
	// fixed, moving: the merge's segments, fixed not depending on the
	// loop's variables; fixedFirst: fixed is the merge's first operand.
	fixed, moving *segBounds
	fixedFirst    bool
}

// Set by tests: mergeLoopOff keeps loops on the general path, and
// mergeLoopStopped learns where every run of rows stopped.
var (
	mergeLoopOff     bool
	mergeLoopStopped func(lo, stop, hi int64)
)

// mergeLoopOf returns the mergeLoop of a loop over the int array cl with
// slots ks and vs whose body is the accumulating merge m, or nil.
func mergeLoopOf(cl *cell, ks, vs int, m *mergeParts) *mergeLoop {
	if m.seg1 == nil || m.seg2 == nil || m.fb != nil || m.body == nil || cl.info.Elem != ir.Int {
		return nil
	}
	moves := func(s *segBounds) bool {
		on := func(slot int) bool { return slot >= 0 && (slot == ks || slot == vs) }
		return on(s.loSlot) || on(s.hiSlot)
	}
	ml := &mergeLoop{cl: cl, ks: ks, vs: vs, merge: m}
	switch {
	case !moves(m.seg1):
		ml.fixed, ml.moving, ml.fixedFirst = m.seg1, m.seg2, true
	case !moves(m.seg2):
		ml.fixed, ml.moving = m.seg2, m.seg1
	default:
		return nil
	}
	return ml
}

// mergeLoopRowsRun runs, for every position p of a window of the int
// array cl (k = cl(p)), behind a prelude of guards on k (or none), an
// inner mergeLoop over the segment I(P(k + c1):Q(k + c2)) whose fixed
// segment is picked by p and whose moving one by the inner loop's key:
// MTTKRP's loop over the fibers of B(i,:,:), C's row k inside.
// The bounds are read in place with no frame slot in between, as a hand
// loop reads them; the slots are written only before a pair's body runs
// or before the general loops take over. The guards are decided once per
// run, kept in the int slot memo as mergeRowsRun does. It returns nil when
// inner is not of that shape.
func mergeLoopRowsRun(cl *cell, ks, vs int, inner *loop, lb loopBody, steps []step, memo int, general func(*frame, srcState, int64, int64, *builder)) func(*frame, srcState, int64, int64, *builder) {
	ml := inner.merges
	if ml == nil || lb.spec == nil || ks < 0 || vs < 0 || ml.vs < 0 {
		return nil
	}
	sb := inner.seg
	if sb == nil || sb.loSlot != vs || sb.hiSlot != vs ||
		ml.fixed.loSlot != ks || ml.fixed.hiSlot != ks || ml.moving.loSlot != ml.vs || ml.moving.hiSlot != ml.vs {
		return nil
	}
	window := windowPreludeOf(steps, ks, vs)
	if steps != nil && (window == nil || len(window.reads) > 0) {
		return nil
	}
	innerAll, innerRun := inner.all, inner.run
	m, fx, mv := ml.merge, ml.fixed, ml.moving
	return func(fr *frame, st srcState, from, to int64, bd *builder) {
		lo, hi := st.lo+from, st.lo+to
		if fr.i[memo] == 0 {
			fr.i[memo] = 2
			if window == nil || coveredWindow(window, cl, lo, hi) != nil {
				fr.i[memo] = 1
			}
		}
		if fr.i[memo] != 1 || mergeLoopOff {
			general(fr, st, from, to, bd)
			return
		}
		outer, idx := cl.ints, ml.cl.ints
		rowLo, rowHi, rowN := sb.lo.ints, sb.hi.ints, sb.arr.n
		fixLo, fixHi, fixN, fixA := fx.lo.ints, fx.hi.ints, fx.arr.n, fx.arr.ints
		movLo, movHi, movN, movA := mv.lo.ints, mv.hi.ints, mv.arr.n, mv.arr.ints
		for p := lo; p < hi; p++ {
			k := outer[p]
			// C's row k: on anything irregular, the inner loop runs
			// the general way and finds the exact error.
			kl, kh := k+sb.loOff, k+sb.hiOff
			rl, rh := int64(-1), int64(-1)
			if uint64(kl) < uint64(len(rowLo)) && uint64(kh) < uint64(len(rowHi)) {
				rl, rh = rowLo[kl], rowHi[kh]
			}
			if rl == rh && rl >= 0 && rh <= rowN {
				continue
			}
			// B's fiber p, read once for the row.
			pl, ph := p+fx.loOff, p+fx.hiOff
			var fl, fh int64 = -1, -1
			if uint64(pl) < uint64(len(fixLo)) && uint64(ph) < uint64(len(fixHi)) {
				fl, fh = fixLo[pl], fixHi[ph]
			}
			if rl < 0 || rl > rh || rh > rowN || rh > int64(len(idx)) ||
				fl < 0 || fl > fh || fh > fixN || !fx.arr.sortedSegment(fl, fh) {
				fr.i[ks], fr.i[vs] = p, k
				if mergeLoopStopped != nil {
					mergeLoopStopped(lo, p, hi)
				}
				if innerAll(fr, bd); fr.err != nil {
					return
				}
				continue
			}
			fa := fixA[fl:fh]
			for q := rl; q < rh; q++ {
				j := idx[q]
				jl, jh := j+mv.loOff, j+mv.hiOff
				ok := uint64(jl) < uint64(len(movLo)) && uint64(jh) < uint64(len(movHi))
				var l, h int64
				if ok {
					l, h = movLo[jl], movHi[jh]
					ok = 0 <= l && l <= h && h <= movN
				}
				if ok && (len(fa) == 0 || l == h) {
					continue
				}
				fr.i[ks], fr.i[vs] = p, k
				if ml.ks >= 0 {
					fr.i[ml.ks] = q
				}
				fr.i[ml.vs] = j
				if !ok || !mv.arr.sortedSegment(l, h) {
					if mergeLoopStopped != nil {
						mergeLoopStopped(rl, q, rh)
					}
					innerRun(fr, srcState{lo: rl, hi: rh}, q-rl, rh-rl, bd)
					break
				}
				if ml.fixedFirst {
					mergeSorted(fr, bd, fa, movA[l:h], fl, l, m.k1, m.k2, m.vs, m.body)
				} else {
					mergeSorted(fr, bd, movA[l:h], fa, l, fl, m.k1, m.k2, m.vs, m.body)
				}
				if fr.err != nil {
					return
				}
			}
			if fr.err != nil {
				return
			}
		}
		if mergeLoopStopped != nil {
			mergeLoopStopped(lo, hi, hi)
		}
	}
}
