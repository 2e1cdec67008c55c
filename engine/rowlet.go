package engine

import (
	"github.com/storel/storel/ir"
)

// Rows with a scalar let. The optimizer's plan for BATAX (y = beta *
// A^T A x, CSR) is a range over rows whose body computes a number from the
// row and then scatters the row scaled by it:
//
//	sum(<i, _> in 0:A_len1)
//	  let t = beta * (sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(k)) in
//	  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(q) * t }
//
// Compiled the general way, every row calls closures for the body, the
// let, its product, its sum and the inner loop: about 60 ns a row against
// two inner loops of 10 entries each on a typical sparse matrix. Here the
// let's value is analysed as a fused product of its row (evaluated in
// place, as fused loops evaluate their terms), and when that product is a
// dot product of a segment of the row and the inner loop scatters a
// segment of the row scaled by t alone, all rows run in one function,
// dotScatterRows. Any row that needs more (bounds out of order, a read
// outside x) goes through the general row, which reports the exact error.

// rowLet is a compiled range of rows with a scalar let.
type rowLet struct {
	rs     int        // the row's slot (the key's, else the value's)
	ks, vs int        // the loop's slots (-1 when unused)
	let    *fusedBody // the let's value, a fused product of the row
	slot   int        // the let variable's slot
	inner  bodyFn     // the inner loop, run after the let
	dot    *fusedLoop // fast path: the let's dot product of a row segment
	scat   *fusedLoop // fast path: the inner scatter of a row segment
	same   bool       // fast path: the dot's array X and the scatter's V have the same element type
	// pattern: the fast path of a matrix with no value array (a storage
	// mapping whose values are all 1): the dot is a gather of x and the
	// scatter adds t alone.
	pattern bool
}

// rowLetCompiled, when set (by tests), sees every rowLet compiled.
var rowLetCompiled func(*rowLet)

// rowLetLoop compiles sum e over a range (open) whose body is let t = E
// in S, E a real product of the row and S a sum accumulating into the
// same dense builder; nil when the body has another shape. It may compile
// E before giving up (then the general path compiles it again, which only
// this one level pays).
func (c *compiler) rowLetLoop(e *ir.Expr, lb loopBody, open func(*frame) (srcState, bool), ks, vs int) *loop {
	pre, core := stripPrelude(e.Args[1])
	rs := ks
	if rs < 0 {
		rs = vs
	}
	if rs < 0 || lb.spec == nil || !lb.spec.dense || lb.spec.depth != 1 || !lb.spec.real ||
		len(pre) != 1 || pre[0].Op != ir.OpLet || core.Op != ir.OpSum || c.typeOf(pre[0].Args[0]) != ir.RealType {
		return nil
	}
	let := pre[0]
	lv := loopVars{idx1: e.Vars[0], idx2: e.Vars[1], same: true}
	fb := c.analyse(let.Args[0], scalarBody(ir.RealType, 0), lv)
	if fb == nil || fb.steps != nil {
		return nil
	}
	rl := &rowLet{rs: rs, ks: ks, vs: vs, let: fb}
	rl.slot = c.bind(let.Vars[0], ir.RealType)
	inner := c.compileLoop(core, lb)
	c.unbind(1)
	rl.inner = inner.all
	if inner.direct != nil {
		rl.inner = inner.direct
	}
	rl.fastPath(inner)
	if rowLetCompiled != nil {
		rowLetCompiled(rl)
	}
	return &loop{open: open, count: windowCount, run: rl.run}
}

// fastPath sets dot and scat when the let is a pure dot product of a
// segment of the row and the inner loop adds V(q) * t at key j over a
// segment of the row, or, for a pattern matrix, when the let sums x over
// a segment of the row (a gather) and the inner loop adds t alone.
func (rl *rowLet) fastPath(inner *loop) {
	p := &rl.let.p
	if p.v2.at != atNone || p.dicts != nil {
		return
	}
	dot := rowDot(&p.v1, rl.rs)
	if dot == nil {
		return
	}
	pattern := dot.fb.shape == shapeGather
	valueAt := at1 // the scatter reads V(q)
	if pattern {
		valueAt = atNone
	} else if dot.fb.shape != shapeDot {
		return
	}
	fl := inner.fused
	if fl == nil || fl.seg == nil || fl.cl == nil || fl.seg.loSlot != rl.rs || fl.seg.hiSlot != rl.rs {
		return
	}
	fb, q := fl.fb, &fl.fb.p
	if fb.writeSlots || fb.steps != nil || fb.keyAt != at2 || q.v1.at != valueAt || q.v2.at != atNone || q.dicts != nil || q.c != nil || (q.a == nil) == (q.b == nil) {
		return
	}
	t := q.a
	if t == nil {
		t = q.b
	}
	if t.kind != invSlotF || t.slot != rl.slot || t.negate {
		return
	}
	rl.dot, rl.scat, rl.pattern = dot, fl, pattern
	if !pattern {
		dot.cl.needNarrow, fl.cl.needNarrow = true, true // csrDotScatterAsm reads them
	}
	rl.same = pattern || dot.fb.p.v1.ints == q.v1.ints
}

func (rl *rowLet) run(fr *frame, st srcState, from, to int64, bd *builder) {
	lo, hi := st.lo+from, st.lo+to
	if lo >= hi {
		return
	}
	if rl.dot != nil && rl.same {
		a, b, c := 1.0, 1.0, 1.0
		if !rl.let.pure {
			if a, b, c = rl.let.p.invariants(fr); fr.err != nil {
				return
			}
		}
		lo = rl.fast(bd, lo, hi, a, b, c)
	}
	for k := lo; k < hi; k++ {
		if rl.ks >= 0 {
			fr.i[rl.ks] = k
		}
		if rl.vs >= 0 {
			fr.i[rl.vs] = k
		}
		t, ok := rl.let.term(fr, k, k)
		if !ok {
			return
		}
		fr.f[rl.slot] = t
		rl.inner(fr, bd)
		if fr.err != nil {
			return
		}
	}
}

// fast runs dotScatterRows with the arrays' element types (a pattern
// matrix's rows with no X and no V).
func (rl *rowLet) fast(bd *builder, lo, hi int64, a, b, c float64) int64 {
	if rl.pattern {
		y := &rl.dot.fb.p.v1 // a gather reads x as its V1
		if y.ints {
			return dotScatterRows[float64](bd, rl.dot, rl.scat, true, nil, y.arr.ints, nil, lo, hi, a, b, c)
		}
		return dotScatterRows[float64](bd, rl.dot, rl.scat, true, nil, y.arr.reals, nil, lo, hi, a, b, c)
	}
	x, y := &rl.dot.fb.p.v1, &rl.dot.fb.p.v2
	v := &rl.scat.fb.p.v1
	switch {
	case !x.ints && !y.ints:
		return dotScatterRows(bd, rl.dot, rl.scat, false, x.arr.reals, y.arr.reals, v.arr.reals, lo, hi, a, b, c)
	case x.ints && !y.ints:
		return dotScatterRows(bd, rl.dot, rl.scat, false, x.arr.ints, y.arr.reals, v.arr.ints, lo, hi, a, b, c)
	case !x.ints:
		return dotScatterRows(bd, rl.dot, rl.scat, false, x.arr.reals, y.arr.ints, v.arr.reals, lo, hi, a, b, c)
	}
	return dotScatterRows(bd, rl.dot, rl.scat, false, x.arr.ints, y.arr.ints, v.arr.ints, lo, hi, a, b, c)
}

// dotScatterRows runs rows q = lo, lo+1, ... of a rowLet: t = ((a*s)*b)*c
// where s sums x[p]*y[idx[p]] over the dot's segment of row q, then
// out[idx'[p']] += t*v[p'] over the scatter's segment of row q, exactly
// as the general row computes them. A pattern matrix's rows (pattern;
// x and v unused): s sums y[idx[p]] and the scatter adds t. It stops at the first row
// that needs the general path (bounds out of order or past the arrays,
// an index outside y), before any effect of that row, and returns it (hi
// when done).
func dotScatterRows[X, Y number](bd *builder, dot, scat *fusedLoop, pattern bool, x []X, y []Y, v []X, lo, hi int64, a, b, c float64) int64 {
	s1, s2 := dot.seg, scat.seg
	pl1, ph1, pl2, ph2 := s1.lo.ints, s1.hi.ints, s2.lo.ints, s2.hi.ints
	idx1, idx2 := dot.cl.ints, scat.cl.ints
	n1 := min(s1.arr.n, int64(len(idx1)))
	n2 := min(s2.arr.n, int64(len(idx2)))
	if pattern {
		if bd.ws != nil {
			return lo // a workspace row: the general row keeps its keys
		}
	} else {
		n1, n2 = min(n1, int64(len(x))), min(n2, int64(len(v)))
	}
	// With both index arrays inside what they index, no entry needs a
	// check. The dense result (a workspace row aside) is first grown to
	// hold every key the scatter can write.
	if bd.ws == nil && lo < hi {
		bd.holdKeysOf(scat.cl)
	}
	// CSR rows (see csrRows) run without checks; other bound arrays,
	// rare in plans, take the checked loop below.
	if out := bd.reals; dot.cl.fits(len(y)) && bd.ws == nil && scat.cl.fits(len(out)) {
		h1, ok1 := csrRows(pl1, ph1, s1.loOff, s1.hiOff, lo, hi)
		h2, ok2 := csrRows(pl2, ph2, s2.loOff, s2.hiOff, lo, hi)
		if ok1 && ok2 {
			l1, l2 := pl1[lo+s1.loOff], pl2[lo+s2.loOff]
			if pattern {
				return lo + int64(csrGatherScatter(out, h1, l1, idx1, y, n1, h2, l2, idx2, n2, a, b, c))
			}
			if k, ok := csrDotScatterAsm(out, h1, l1, idx1, dot.cl.narrow, x, y, n1, h2, l2, idx2, scat.cl.narrow, v, n2, a, b, c); ok {
				return lo + int64(k)
			}
			return lo + int64(csrDotScatter(out, h1, l1, idx1, x, y, n1, h2, l2, idx2, v, n2, a, b, c))
		}
	}
	for q := lo; q < hi; q++ {
		kl1, kh1, kl2, kh2 := q+s1.loOff, q+s1.hiOff, q+s2.loOff, q+s2.hiOff
		if uint64(kl1) >= uint64(len(pl1)) || uint64(kh1) >= uint64(len(ph1)) ||
			uint64(kl2) >= uint64(len(pl2)) || uint64(kh2) >= uint64(len(ph2)) {
			return q
		}
		l1, h1, l2, h2 := pl1[kl1], ph1[kh1], pl2[kl2], ph2[kh2]
		if l1 < 0 || l1 > h1 || h1 > n1 || l2 < 0 || l2 > h2 || h2 > n2 {
			return q
		}
		if pattern {
			s, bad := sumGather(idx1[l1:h1], y, 1, 1, 1, true, 0)
			if bad >= 0 {
				return q
			}
			t := ((a * s) * b) * c
			for _, j := range idx2[l2:h2] {
				bd.addReal(j, t)
			}
			continue
		}
		s, bad := sumDot(idx1[l1:h1], x[l1:h1], y, 1, 1, 1, true, 0)
		if bad >= 0 {
			return q
		}
		if l2 < h2 {
			scatterAdd(bd, idx2[l2:h2], v[l2:h2], ((a*s)*b)*c, 1, 1, true)
		}
	}
	return hi
}
