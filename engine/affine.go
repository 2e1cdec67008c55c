package engine

import (
	"github.com/storel/storel/ir"
)

// Affine reads. A dense layout reads its value array at m*x + o: a row-major
// matrix D (j,l) at D_len2 * j + l. Inside a fused loop one of j and l is
// the loop's index and the rest does not change while the loop runs, so
// the read is an atAff variant: m and o are constants, variables' slots or
// physical scalars, or sums and products of them (nothing that can fail),
// and the index is one multiply-add, where the closure path calls five
// closures.
// A guard in front of the read (if 0 <= l && l < D_len2 then D_val(...))
// is the variant's steps; it is zero where they fail.

// Set by tests: affineOff compiles affine reads through their closures;
// affineRan learns whether a window with an affine read ran one of this
// file's loops (true) or the general one.
var (
	affineOff bool
	affineRan func(fast bool)
)

func noteAffine(fast bool) {
	if affineRan != nil {
		affineRan(fast)
	}
}

// affIndex is the index mul*x + off of an atAff variant, off a sum of
// terms.
type affIndex struct {
	mul  coeff
	offs []offTerm
}

// coeff is a number that does not change while a loop runs: an operand,
// or (fn non-nil) a sum or product of operands.
type coeff struct {
	op operand
	fn intFn
}

func (c *coeff) value(fr *frame) int64 {
	if c.fn != nil {
		return c.fn(fr)
	}
	return c.op.value(fr)
}

// offTerm is a term of an affine index's offset.
type offTerm struct {
	c   coeff
	neg bool
}

// at returns the index for the loop index x.
func (a *affIndex) at(fr *frame, x int64) int64 {
	m, o := a.coeffs(fr)
	return m*x + o
}

// coeffs returns m and o for the current run.
func (a *affIndex) coeffs(fr *frame) (m, o int64) {
	m = a.mul.value(fr)
	for i := range a.offs {
		t := &a.offs[i]
		if t.neg {
			o -= t.c.value(fr)
		} else {
			o += t.c.value(fr)
		}
	}
	return m, o
}

// affineRead returns the atAff variant of f, a read of a physical array
// at an affine function of one of the loop's indices, maybe behind a
// guard; ok false if f is not one.
func (c *compiler) affineRead(f *ir.Expr, lv loopVars) (variant, bool) {
	if affineOff {
		return variant{}, false
	}
	read, guard := f, (*ir.Expr)(nil)
	if f.Op == ir.OpIf && len(f.Args) == 2 {
		read, guard = f.Args[1], f.Args[0]
	}
	if read.Op != ir.OpLookup || read.Args[0].Op != ir.OpGlobal {
		return variant{}, false
	}
	cl := c.cell(read.Args[0])
	if cl.info.Kind != ir.ObjArray {
		return variant{}, false
	}
	at, ix, ok := c.affineIndex(read.Args[1], lv)
	if !ok {
		return variant{}, false
	}
	v := variant{at: atAff, arr: cl, ints: cl.info.Elem == ir.Int, dat: at, aff: ix, e: read}
	if guard != nil {
		v.steps = []step{c.guardStep(guard)}
	}
	return v, true
}

// affineIndex writes e as m*x + o1 ± o2 ..., for x one of the loop's
// indices and m and the o's sums and products of int constants, variables
// and physical scalars that do not depend on the loop (D_len2 * j + l in
// the loop over l; int arithmetic wraps, so the terms may be regrouped).
func (c *compiler) affineIndex(e *ir.Expr, lv loopVars) (int, *affIndex, bool) {
	fixed := func(e *ir.Expr) (coeff, bool) {
		if lv.dependsOn(e) || !c.cannotFail(e) {
			return coeff{}, false
		}
		if op, ok := c.intOperand(e); ok {
			return coeff{op: op}, true
		}
		return coeff{fn: c.expr(e).i}, true
	}
	var split func(e *ir.Expr, neg bool) (int, *affIndex, bool)
	split = func(e *ir.Expr, neg bool) (int, *affIndex, bool) {
		if c.typeOf(e) != ir.IntType {
			return atNone, nil, false
		}
		if at := lv.index(e); at != atNone {
			if neg {
				return atNone, nil, false // -x: not matched
			}
			return at, &affIndex{mul: coeff{op: operand{slot: -1, k: 1}}}, true
		}
		if !lv.dependsOn(e) {
			k, ok := fixed(e)
			return atNone, &affIndex{offs: []offTerm{{c: k, neg: neg}}}, ok
		}
		switch e.Op {
		case ir.OpAdd, ir.OpSub:
			a1, x1, ok1 := split(e.Args[0], neg)
			a2, x2, ok2 := split(e.Args[1], neg != (e.Op == ir.OpSub))
			if !ok1 || !ok2 || a1 != atNone && a2 != atNone {
				return atNone, nil, false
			}
			if a1 == atNone {
				a1, x1, x2 = a2, x2, x1
			}
			x1.offs = append(x1.offs, x2.offs...)
			return a1, x1, true
		case ir.OpMul:
			if neg {
				return atNone, nil, false
			}
			for _, xm := range [][2]*ir.Expr{{e.Args[1], e.Args[0]}, {e.Args[0], e.Args[1]}} {
				if at := lv.index(xm[0]); at != atNone {
					if m, ok := fixed(xm[1]); ok {
						return at, &affIndex{mul: m}, true
					}
				}
			}
		}
		return atNone, nil, false
	}
	at, ix, ok := split(e, false)
	if !ok || at == atNone {
		return atNone, nil, false
	}
	return at, ix, true
}

// cannotFail reports whether e is an int sum, difference or product of
// int constants, variables and physical scalars: it evaluates to the same
// value wherever it is evaluated, and without error.
func (c *compiler) cannotFail(e *ir.Expr) bool {
	if c.typeOf(e) != ir.IntType {
		return false
	}
	switch e.Op {
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		return c.cannotFail(e.Args[0]) && c.cannotFail(e.Args[1])
	}
	_, ok := c.intOperand(e)
	return ok
}

// affValue evaluates an atAff variant at loop indices (q, j).
func (v *variant) affValue(fr *frame, q, j int64) (float64, bool) {
	if v.steps != nil && !runSteps(fr, v.steps) {
		return 0, fr.err == nil
	}
	x := q
	if v.dat == at2 {
		x = j
	}
	k := v.aff.at(fr, x)
	if n := v.length(); uint64(k) >= uint64(n) {
		readFail(fr, v, k, int(n))
		return 0, false
	}
	return v.get(k), true
}

// affCovered reports whether v's guard, if any, holds at every key of
// positions lo..hi-1 of cl (its window, set by fuse).
func (v *variant) affCovered(cl *cell, lo, hi int64) bool {
	return v.steps == nil || coveredWindow(v.win, cl, lo, hi) != nil
}

// affDot is fusedBody.sum's loop for x(q) * y(m*j + o), y an atAff
// variant whose guard holds over the window (affLoop): s plus the terms,
// false after a read outside y (recorded in fr).
func affDot(fr *frame, p *prod, idx []int64, lo, hi int64, a, b, c float64, pure bool, s float64) (float64, bool) {
	v1, v2 := &p.v1, &p.v2
	m, o := v2.aff.coeffs(fr)
	seg := idx[lo:hi]
	var bad int
	switch {
	case !v1.ints && !v2.ints:
		s, bad = sumAffDot(seg, v1.arr.reals[lo:hi], v2.arr.reals, m, o, a, b, c, pure, s)
	case v1.ints && !v2.ints:
		s, bad = sumAffDot(seg, v1.arr.ints[lo:hi], v2.arr.reals, m, o, a, b, c, pure, s)
	case !v1.ints:
		s, bad = sumAffDot(seg, v1.arr.reals[lo:hi], v2.arr.ints, m, o, a, b, c, pure, s)
	default:
		s, bad = sumAffDot(seg, v1.arr.ints[lo:hi], v2.arr.ints, m, o, a, b, c, pure, s)
	}
	if bad >= 0 {
		readFail(fr, v2, m*seg[bad]+o, int(v2.length()))
		return s, false
	}
	return s, true
}

// sumAffDot returns s plus x[q]*y[m*idx[q]+o] for every q (or
// (((a*x[q])*b)*y[...])*c unless pure), stopping at the first index
// outside y, whose position it returns (else -1). With m 1 it is sumDot
// over y from o.
func sumAffDot[X, Y number](idx []int64, x []X, y []Y, m, o int64, a, b, c float64, pure bool, s float64) (float64, int) {
	if m == 1 && o >= 0 && o <= int64(len(y)) {
		return sumDot(idx, x, y[o:], a, b, c, pure, s)
	}
	x = x[:len(idx)]
	for q, j := range idx {
		k := m*j + o
		if uint64(k) >= uint64(len(y)) {
			return s, q
		}
		if pure {
			s += float64(x[q]) * float64(y[k])
		} else {
			s += (((a * float64(x[q])) * b) * float64(y[k])) * c
		}
	}
	return s, -1
}

// affScatter is addDense's loop for out[j] += ((a*x(q))*b)*y(m*j+o))*c, y
// an atAff variant whose guard holds over the window: false after a read
// outside y (recorded in fr).
func affScatter(fr *frame, p *prod, bd *builder, idx []int64, lo, hi int64, a, b, c float64) bool {
	v1, v2 := &p.v1, &p.v2
	m, o := v2.aff.coeffs(fr)
	seg := idx[lo:hi]
	var bad int
	switch {
	case !v1.ints && !v2.ints:
		bad = scatterAffDot(bd, seg, v1.arr.reals[lo:hi], v2.arr.reals, m, o, a, b, c)
	case v1.ints && !v2.ints:
		bad = scatterAffDot(bd, seg, v1.arr.ints[lo:hi], v2.arr.reals, m, o, a, b, c)
	case !v1.ints:
		bad = scatterAffDot(bd, seg, v1.arr.reals[lo:hi], v2.arr.ints, m, o, a, b, c)
	default:
		bad = scatterAffDot(bd, seg, v1.arr.ints[lo:hi], v2.arr.ints, m, o, a, b, c)
	}
	if bad >= 0 {
		readFail(fr, v2, m*seg[bad]+o, int(v2.length()))
		return false
	}
	return true
}

// scatterAffDot adds (((a*x[q])*b)*y[m*j+o])*c at key j = idx[q] of bd for
// every q, stopping at the first index outside y, whose position it
// returns (else -1).
func scatterAffDot[X, Y number](bd *builder, idx []int64, x []X, y []Y, m, o int64, a, b, c float64) int {
	x = x[:len(idx)]
	for q, j := range idx {
		k := m*j + o
		if uint64(k) >= uint64(len(y)) {
			return q
		}
		v := (((a * float64(x[q])) * b) * float64(y[k])) * c
		if out := bd.reals; uint64(j) < uint64(len(out)) && bd.ws == nil {
			out[j] += v
		} else {
			bd.addReal(j, v)
		}
	}
	return -1
}

// affLoop reports whether positions lo..hi-1 (a non-empty window of the
// index array cl) can run affDot or affScatter: the product is x(q) * y(m*j
// + o) for a physical array x read in bounds and an atAff y at the key j
// whose guard holds over the window.
func (fb *fusedBody) affLoop(cl *cell, lo, hi int64) bool {
	return fb.affShape(cl, lo, hi) && fb.p.v2.affCovered(cl, lo, hi)
}

// affShape is affLoop without the guard, for the callers that decided it
// once per run.
func (fb *fusedBody) affShape(cl *cell, lo, hi int64) bool {
	p := &fb.p
	return cl != nil && lo >= 0 && lo < hi && p.v1.at == at1 && p.v2.at == atAff && p.v2.dat == at2 && hi <= p.v1.length()
}

// affRowsRun is the loop over the keys l of a segment (B's fiber) with,
// inside it, a fused loop over a segment that does not move with it (C's
// row k) adding x(q) * y(m*j + l) at the keys j (affLoop): MTTKRP with D
// stored dense,
//
//	sum(<p3, l> in B_idx3(...)) if 0 <= l && l < D_len2 then
//	  sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
//	    { @dense j -> B_val(p3) * C_val(p4) * D_val(D_len2 * j + l) }
//
// The inner segment's bounds and the guards are checked once per window
// of the outer loop, not once per l; a window where they are not
// covered runs general (preludeRun). Guards that test keys only hold for
// every window or for none (the key arrays' ranges decide), so, as in
// mergeRowsRun, they are decided once per run and kept in the int slot
// memo (0: not yet, 1: covered, 2: not). nil if the loops are not of
// this shape.
func affRowsRun(cl *cell, ks, vs int, inner *loop, lb loopBody, steps []step, memo int, general func(*frame, srcState, int64, int64, *builder)) func(*frame, srcState, int64, int64, *builder) {
	fl := inner.fused
	if fl == nil || fl.seg == nil || !lb.spec.dense || fl.cl == nil || fl.fb.keyAt != at2 || affineOff {
		return nil
	}
	fb, sb := fl.fb, fl.seg
	if p := &fb.p; p.v1.at != at1 || p.v2.at != atAff || p.v2.dat != at2 {
		return nil
	}
	for _, s := range []int{sb.loSlot, sb.hiSlot} {
		if s == ks || s == vs {
			return nil // the inner segment moves with the outer loop
		}
	}
	window := windowPreludeOf(steps, ks, vs)
	if window == nil && steps != nil || fb.window == nil && fb.steps != nil {
		return nil
	}
	keysOnly := (window == nil || len(window.reads) == 0) && (fb.window == nil || len(fb.window.reads) == 0)
	direct := affRowsDirectOf(&fb.p, ks, vs)
	return func(fr *frame, st srcState, from, to int64, bd *builder) {
		lo, hi := st.lo+from, st.lo+to
		il, ih, ok := sb.inPlace(fr)
		if ok && il >= ih && (window == nil || coveredWindow(window, cl, lo, hi) != nil) {
			return // no iteration inside: the guards do nothing
		}
		covered := fr.i[memo] == 1
		if ok && (!keysOnly || fr.i[memo] == 0) {
			covered = (window == nil || coveredWindow(window, cl, lo, hi) != nil) &&
				(fb.window == nil || fb.windowOf(fl.cl, il, ih) != nil) && fb.p.v2.affCovered(fl.cl, il, ih)
			fr.i[memo] = 2
			if covered {
				fr.i[memo] = 1
			}
		}
		if !ok || !covered || !fb.affShape(fl.cl, il, ih) {
			noteAffine(false)
			general(fr, st, from, to, bd)
			return
		}
		noteAffine(true)
		outer := cl.ints
		if direct != nil && direct.run(fr, cl, fl.cl, lo, hi, il, ih, bd) {
			return
		}
		for p := lo; p < hi; p++ {
			if ks >= 0 {
				fr.i[ks] = p
			}
			if vs >= 0 {
				fr.i[vs] = outer[p]
			}
			if window != nil {
				window.load(fr, p)
			}
			a, b, c := 1.0, 1.0, 1.0
			if !fb.pure {
				if a, b, c = fb.p.invariants(fr); fr.err != nil {
					return
				}
			}
			if !affScatter(fr, &fb.p, bd, fl.cl.ints, il, ih, a, b, c) {
				return
			}
		}
	}
}

// affRowsDirect is affRowsRun's loop written out for its commonest body,
// out[j] += A(p) * x(q) * y(m*j + l) over real arrays, with m fixed for
// the window: MTTKRP's B_val(p3) * C_val(p4) * D_val(D_len2 * j + l).
type affRowsDirect struct {
	a    *inv // A at the outer position plus a.off; nil: 1
	m    operand
	x, y *cell
}

// affRowsDirectOf returns the direct loop for a product p inside a loop
// whose position and key are in slots ks and vs, or nil.
func affRowsDirectOf(p *prod, ks, vs int) *affRowsDirect {
	v1, v2 := &p.v1, &p.v2
	if p.b != nil || p.c != nil || p.dicts != nil || v1.ints || v2.ints {
		return nil
	}
	if a := p.a; a != nil && (a.kind != invArr || a.slot != ks || ks < 0 || a.negate || a.cl.info.Elem != ir.Real) {
		return nil
	}
	ix := v2.aff
	if ix.mul.fn != nil || ix.mul.op.slot >= 0 && (ix.mul.op.slot == ks || ix.mul.op.slot == vs) {
		return nil
	}
	if len(ix.offs) != 1 || ix.offs[0].neg || ix.offs[0].c.fn != nil || vs < 0 || ix.offs[0].c.op.slot != vs {
		return nil
	}
	return &affRowsDirect{a: p.a, m: ix.mul.op, x: v1.arr, y: v2.arr}
}

// run adds the terms of outer positions lo..hi-1 (keys of outer) over
// the inner positions il..ih-1 (keys of inner) when every read falls
// inside its array, decided from the key arrays' ranges; false, with
// nothing added, when that is not known.
func (d *affRowsDirect) run(fr *frame, outer, inner *cell, lo, hi, il, ih int64, bd *builder) bool {
	const lim = 1 << 30 // keys and strides small enough that m*j + l cannot overflow
	m := d.m.value(fr)
	y := d.y.reals
	jmin, jmax, lmin, lmax := inner.imin, inner.imax, outer.imin, outer.imax
	if m < 0 || m > lim || jmin < 0 || jmax > lim || lmin < 0 || lmax > lim || m*jmax+lmax >= int64(len(y)) {
		return false
	}
	var av []float64
	if d.a != nil {
		av = d.a.cl.reals
		if lo+d.a.off < 0 || hi+d.a.off > int64(len(av)) {
			return false
		}
		av = av[lo+d.a.off : hi+d.a.off]
	}
	keys, idx, x := outer.ints[lo:hi], inner.ints[il:ih], d.x.reals[il:ih]
	for p, l := range keys {
		a := 1.0
		if av != nil {
			a = av[p]
		}
		for q, j := range idx {
			v := a * x[q] * y[m*j+l]
			if out := bd.reals; uint64(j) < uint64(len(out)) && bd.ws == nil {
				out[j] += v
			} else {
				bd.addReal(j, v)
			}
		}
	}
	return true
}

// affDotRows is addDense's loop for out[j] += ((a * x(q)) * b) * s(j)) *
// c where s(j) is a fused sum over a segment that does not move with the
// loop, of A(p) * y(m*l + o(j)) (affLoop): MTTKRP with D dense in the
// other order,
//
//	sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
//	  { @dense j -> (if 0 <= j && j < D_len1 then C_val(p4)) *
//	    (sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * (if 0 <= l && l < D_len2 then D_val(D_len2 * j + l))) }
//
// The inner segment's bounds are checked once per window, not once per
// j, and the guards (which test keys only) once per run: the int slot
// fb.affMemo keeps the decision (0: not yet, 1: covered, 2: not). It
// returns the position it stopped at: lo when the window does not fit
// (the general loop runs it), hi when done, or where a read failed
// (recorded in fr).
func (fb *fusedBody) affDotRows(fr *frame, cl *cell, lo, hi int64, ks, vs int, bd *builder, a, b, c float64) int64 {
	p := &fb.p
	v1, v2 := &p.v1, &p.v2
	if cl == nil || fb.steps != nil || fb.keyAt != at2 || v2.at != atSeg || v2.steps != nil || lo < 0 || lo >= hi || v1.arr == nil || hi > v1.length() {
		return lo
	}
	if v1.at != at1 && (v1.at != atAff || v1.dat != at1 || !v1.aff.plain()) {
		return lo
	}
	in := v2.inner
	sb, ifb := in.seg, in.fb
	if ifb.p.v2.at != atAff || ifb.steps != nil || sb.loSlot == ks || sb.loSlot == vs || sb.hiSlot == ks || sb.hiSlot == vs {
		return lo // no affine read inside, or the inner segment moves with the loop
	}
	il, ih, ok := sb.inPlace(fr)
	if !ok || il >= ih {
		return lo
	}
	memo := &fr.i[fb.affMemo]
	if *memo == 0 {
		// The guards' windows test keys only: the key arrays' ranges decide.
		*memo = 2
		if v1.affCovered(cl, lo, hi) && ifb.p.v2.affCovered(in.cl, il, ih) {
			*memo = 1
		}
	}
	if *memo != 1 || !ifb.affShape(in.cl, il, ih) {
		return lo
	}
	noteAffine(true)
	idx, fidx := cl.ints, in.cl.ints[il:ih]
	// The inner sum written out when it is x(p) * y(m*l + o) over real
	// arrays and every read falls inside y (decided per j below).
	var fx, y []float64
	if ifb.pure && !ifb.p.v1.ints && !ifb.p.v2.ints {
		fx, y = ifb.p.v1.arr.reals[il:ih], ifb.p.v2.arr.reals
	}
	const lim = 1 << 30 // keys and coefficients that cannot overflow m*l + o
	lmin, lmax := in.cl.imin, in.cl.imax
	for q := lo; q < hi; q++ {
		j := idx[q]
		if ks >= 0 {
			fr.i[ks] = q
		}
		if vs >= 0 {
			fr.i[vs] = j
		}
		var x2 float64
		if m, o := ifb.p.v2.aff.coeffs(fr); fx != nil && lmin >= 0 && lmax <= lim && m >= 0 && m <= lim && o >= 0 && o <= lim && m*lmax+o < int64(len(y)) {
			for t, l := range fidx {
				x2 += fx[t] * y[m*l+o]
			}
		} else {
			a2, b2, c2 := 1.0, 1.0, 1.0
			if !ifb.pure {
				if a2, b2, c2 = ifb.p.invariants(fr); fr.err != nil {
					return q
				}
			}
			if x2, ok = affDot(fr, &ifb.p, in.cl.ints, il, ih, a2, b2, c2, ifb.pure, 0); !ok {
				return q
			}
		}
		v := (((a * v1.get(q)) * b) * x2) * c
		if out := bd.reals; uint64(j) < uint64(len(out)) && bd.ws == nil {
			out[j] += v
		} else {
			bd.addReal(j, v)
		}
	}
	return hi
}

// plain reports whether the index is x itself.
func (a *affIndex) plain() bool {
	return len(a.offs) == 0 && a.mul.fn == nil && a.mul.op.slot < 0 && a.mul.op.cl == nil && a.mul.op.k == 1
}
