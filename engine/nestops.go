package engine

import (
	"math/bits"

	"github.com/storel/storel/ir"
)

// Integer / and %, real /, comparisons and the three-way if in the
// vectorized batches. A batch never reports an error itself: a lane
// dividing an int by zero, or a branch of an if that fails in some lane
// (a read outside its array, a division by zero), makes the batch run
// through the closures, which evaluate only the branch taken and report
// the interpreter's error at its position. Ints divide as Go does (and
// the interpreter): the quotient truncates toward zero, the remainder
// takes the dividend's sign.

// cannotFail reports whether / or % e cannot fail: a real division, or
// an int one by a nonzero constant.
func cannotFail(e *ir.Expr) bool {
	if e.Type.Depth == 0 && e.Type.Base == ir.Real {
		return true
	}
	d := e.Args[1]
	return d.Op == ir.OpConst && d.Type.Depth == 0 && d.Type.Base == ir.Int && d.I != 0
}

// divide builds / or % of e's operands, both real when either is.
func (x *vctx) divide(e *ir.Expr) *vnode {
	a, b := x.expr(e.Args[0]), x.expr(e.Args[1])
	a, b = x.sameKind(a, b)
	op := vDiv
	if e.Op == ir.OpMod {
		if a.real {
			panic(noVec{}) // the checker takes % of ints only
		}
		op = vMod
	}
	return x.node(&vnode{op: op, real: a.real, a: a, b: b})
}

// sameKind converts the int one of a and b to real when the other is.
func (x *vctx) sameKind(a, b *vnode) (*vnode, *vnode) {
	switch {
	case a.real && !b.real:
		b = x.node(&vnode{op: vToReal, real: true, a: b})
	case b.real && !a.real:
		a = x.node(&vnode{op: vToReal, real: true, a: a})
	}
	return a, b
}

// choose builds if c then a else b, a and b of the same kind.
func (x *vctx) choose(e *ir.Expr) *vnode {
	c := x.cond(e.Args[0])
	a, b := x.sameKind(x.expr(e.Args[1]), x.expr(e.Args[2]))
	return x.node(&vnode{op: vIf, real: a.real, a: a, b: b, c: c})
}

// cond builds a condition as an int node of lanes 1 (true) and 0.
func (x *vctx) cond(e *ir.Expr) *vnode {
	switch e.Op {
	case ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpEq, ir.OpNe:
		a, b := x.sameKind(x.expr(e.Args[0]), x.expr(e.Args[1]))
		return x.node(&vnode{op: vCmp, cmp: e.Op, a: a, b: b, text: ir.Format(e)})
	case ir.OpAnd, ir.OpOr:
		op := vAnd
		if e.Op == ir.OpOr {
			op = vOr
		}
		return x.node(&vnode{op: op, a: x.cond(e.Args[0]), b: x.cond(e.Args[1])})
	case ir.OpNot:
		return x.node(&vnode{op: vNot, a: x.cond(e.Args[0])})
	}
	panic(noVec{})
}

// evalOp computes a node of this file over positions p0..p0+n-1; false
// sends the batch to the closures.
func (s *vstate) evalOp(fr *frame, nd *vnode, p0 int64, n int) (*vval, bool) {
	if nd.op == vNot {
		a, ok := s.eval(fr, nd.a, p0, n)
		if !ok {
			return nil, false
		}
		buf := s.ibuf(nd, n)
		for l, v := range s.ints(nd.a, a, n) {
			buf[l] = v ^ 1
		}
		return s.put(nd, vval{iv: buf}), true
	}
	switch nd.op {
	case vIf:
		return s.evalIf(fr, nd, p0, n)
	case vDot:
		return s.evalDot(fr, nd, p0, n)
	}
	a, b, ok := s.operands(fr, nd, p0, n)
	if !ok {
		return nil, false
	}
	switch {
	case nd.op == vCmp && nd.a.real:
		return s.put(nd, vval{iv: cmpLanes(nd.cmp, s.reals(nd.a, a, n), s.reals(nd.b, b, n), s.ibuf(nd, n))}), true
	case nd.op == vCmp:
		return s.put(nd, vval{iv: cmpLanes(nd.cmp, s.ints(nd.a, a, n), s.ints(nd.b, b, n), s.ibuf(nd, n))}), true
	case nd.op == vAnd || nd.op == vOr:
		av, bv := s.ints(nd.a, a, n), s.ints(nd.b, b, n)
		buf := s.ibuf(nd, n)
		for l := range buf {
			if nd.op == vAnd {
				buf[l] = av[l] & bv[l]
			} else {
				buf[l] = av[l] | bv[l]
			}
		}
		return s.put(nd, vval{iv: buf}), true
	case nd.real:
		av, bv := s.reals(nd.a, a, n), s.reals(nd.b, b, n)
		buf := s.fbuf(nd, n)
		for l := range buf {
			buf[l] = av[l] / bv[l]
		}
		return s.put(nd, vval{fv: buf}), true
	}
	av := s.ints(nd.a, a, n)
	buf := s.ibuf(nd, n)
	if b.scalar {
		return s.put(nd, vval{iv: buf}), divByScalar(nd.op == vMod, buf, av, b.i)
	}
	bv := s.ints(nd.b, b, n)
	for l := range buf {
		if bv[l] == 0 {
			return nil, false
		}
		buf[l] = divInt(nd.op, av[l], bv[l])
	}
	return s.put(nd, vval{iv: buf}), true
}

// operands computes nd's two operands, a then b (not b where a fails).
func (s *vstate) operands(fr *frame, nd *vnode, p0 int64, n int) (a, b *vval, ok bool) {
	if a, ok = s.eval(fr, nd.a, p0, n); ok {
		b, ok = s.eval(fr, nd.b, p0, n)
	}
	return a, b, ok
}

// evalIf computes if c then a else b over the batch. Where every lane
// takes one branch only that branch is computed, so that the other's
// failure does not send the batch to the closures.
func (s *vstate) evalIf(fr *frame, nd *vnode, p0 int64, n int) (*vval, bool) {
	c, ok := s.eval(fr, nd.c, p0, n)
	if !ok {
		return nil, false
	}
	cv := s.ints(nd.c, c, n)
	ones := 0
	for _, t := range cv {
		ones += int(t)
	}
	if ones == n || ones == 0 {
		br := nd.a
		if ones == 0 {
			br = nd.b
		}
		r, ok := s.eval(fr, br, p0, n)
		if !ok {
			return nil, false
		}
		return s.put(nd, *r), true
	}
	a, b, ok := s.operands(fr, nd, p0, n)
	if !ok {
		return nil, false
	}
	if nd.real {
		buf := s.fbuf(nd, n)
		pick(buf, s.reals(nd.a, a, n), s.reals(nd.b, b, n), cv)
		return s.put(nd, vval{fv: buf}), true
	}
	buf := s.ibuf(nd, n)
	pick(buf, s.ints(nd.a, a, n), s.ints(nd.b, b, n), cv)
	return s.put(nd, vval{iv: buf}), true
}

// pick sets buf[l] to a[l] where c[l] is 1, else to b[l].
func pick[T int64 | float64](buf, a, b []T, c []int64) {
	for l, t := range c {
		if t != 0 {
			buf[l] = a[l]
		} else {
			buf[l] = b[l]
		}
	}
}

// divByScalar sets buf to av / d (or av % d when mod), false when d is
// zero. A power of two divides by shifts, rounding toward zero.
func divByScalar(mod bool, buf, av []int64, d int64) bool {
	switch {
	case d == 0:
		return false
	case d > 0 && d&(d-1) == 0:
		sh := uint(bits.TrailingZeros64(uint64(d)))
		m := d - 1
		for l, v := range av {
			q := (v + (v>>63)&m) >> sh
			if mod {
				buf[l] = v - q<<sh
			} else {
				buf[l] = q
			}
		}
	case mod:
		for l, v := range av {
			buf[l] = v % d
		}
	default:
		for l, v := range av {
			buf[l] = v / d
		}
	}
	return true
}

func divInt(op vop, a, b int64) int64 {
	if op == vMod {
		return a % b
	}
	return a / b
}

// cmpLanes sets buf[l] to 1 where av[l] op bv[l] holds, else 0.
func cmpLanes[T int64 | float64](op ir.Op, av, bv []T, buf []int64) []int64 {
	for l := range buf {
		buf[l] = b2i(cmpInt(op, av[l], bv[l]))
	}
	return buf
}

func b2i(t bool) int64 {
	if t {
		return 1
	}
	return 0
}

// laneOpI is int node nd (of this file) at position p.
func (s *vstate) laneOpI(nd *vnode, p int64) (int64, bool) {
	switch nd.op {
	case vNot:
		a, ok := s.laneI(nd.a, p)
		return a ^ 1, ok
	case vIf:
		return laneIf(s, nd, p, s.laneI)
	case vCmp:
		if nd.a.real {
			a, ok1 := s.laneF(nd.a, p)
			b, ok2 := s.laneF(nd.b, p)
			return b2i(cmpInt(nd.cmp, a, b)), ok1 && ok2
		}
	}
	a, ok1 := s.laneI(nd.a, p)
	b, ok2 := s.laneI(nd.b, p)
	switch nd.op {
	case vCmp:
		return b2i(cmpInt(nd.cmp, a, b)), ok1 && ok2
	case vAnd:
		return a & b, ok1 && ok2
	case vOr:
		return a | b, ok1 && ok2
	}
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return divInt(nd.op, a, b), true
}

// laneOpF is real node nd (of this file) at position p.
func (s *vstate) laneOpF(nd *vnode, p int64) (float64, bool) {
	switch nd.op {
	case vIf:
		return laneIf(s, nd, p, s.laneF)
	case vDot:
		return s.laneDot(nd, p)
	}
	a, ok1 := s.laneF(nd.a, p)
	b, ok2 := s.laneF(nd.b, p)
	return a / b, ok1 && ok2
}

// laneIf is if node nd at position p, get reading the branch taken.
func laneIf[T int64 | float64](s *vstate, nd *vnode, p int64, get func(*vnode, int64) (T, bool)) (T, bool) {
	c, ok := s.laneI(nd.c, p)
	switch {
	case !ok:
		var zero T
		return zero, false
	case c != 0:
		return get(nd.a, p)
	}
	return get(nd.b, p)
}
