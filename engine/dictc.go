package engine

import (
	"github.com/storel/storel/ir"
)

// constructive reports whether e builds a new dictionary (rather than
// returning one that exists: a variable, a physical object, a view, a
// lookup). Constructive expressions accumulate in place into an enclosing
// builder; the others are added as whole values.
func constructive(e *ir.Expr) bool {
	switch e.Op {
	case ir.OpSingleton, ir.OpSum, ir.OpMerge, ir.OpAdd, ir.OpSub, ir.OpNeg, ir.OpMul:
		return true
	case ir.OpIf:
		return constructive(e.Args[1]) && (len(e.Args) == 2 || constructive(e.Args[2]))
	case ir.OpLet:
		return constructive(e.Args[1])
	}
	return false
}

// dictValue compiles a dictionary-typed expression to a closure returning
// its value.
func (c *compiler) dictValue(e *ir.Expr, t ir.Type) dictFn {
	switch e.Op {
	case ir.OpConst:
		return func(*frame) dict { return empty }
	case ir.OpVar:
		b, ok := c.lookupVar(e.Name)
		if !ok || b.slot < 0 {
			c.bail(e, "unbound variable %s", e.Name)
		}
		s := b.slot
		return func(fr *frame) dict { return fr.d[s] }
	case ir.OpGlobal:
		cl := c.cell(e)
		cl.needView = true
		return func(*frame) dict { return cl.view }
	case ir.OpRange:
		lo, hi := c.intExpr(e.Args[0], "range bound"), c.intExpr(e.Args[1], "range bound")
		return func(fr *frame) dict { return &rangeView{lo: lo(fr), hi: hi(fr)} }
	case ir.OpSubArray:
		return c.subarrayValue(e)
	case ir.OpLookup:
		return c.lookupDict(e)
	case ir.OpIf:
		if !constructive(e) {
			cond := c.boolExpr(e.Args[0])
			a, _ := c.dictExpr(e.Args[1])
			b := func(*frame) dict { return empty }
			if len(e.Args) == 3 {
				b, _ = c.dictExpr(e.Args[2])
			}
			return ifThen(cond, a, b)
		}
	case ir.OpLet:
		if !constructive(e) {
			set := c.letValue(e)
			body, _ := c.dictExpr(e.Args[1])
			c.unbind(1)
			return func(fr *frame) dict { set(fr); return body(fr) }
		}
	}
	return c.builtValue(e, t)
}

// builtValue compiles constructive e to a closure accumulating it into a
// fresh builder.
func (c *compiler) builtValue(e *ir.Expr, t ir.Type) dictFn {
	spec := c.specFor(e, t)
	acc := c.accum(e, spec, plus)
	return func(fr *frame) dict {
		b := newBuilder(spec)
		acc(fr, b)
		if fr.err != nil {
			return empty
		}
		return b.freeze()
	}
}

// subarrayValue compiles e(lo:hi) as a dictionary value.
func (c *compiler) subarrayValue(e *ir.Expr) dictFn {
	base := e.Args[0]
	if base.Op == ir.OpGlobal && c.cell(base).info.Kind == ir.ObjArray {
		cl := c.cell(base)
		win := c.window(e, cl)
		real := cl.info.Elem == ir.Real
		return func(fr *frame) dict {
			l, h, ok := win(fr)
			if !ok {
				return empty
			}
			return &arrView{name: cl.name, ints: cl.ints, reals: cl.reals, real: real, lo: l, hi: h}
		}
	}
	d, _ := c.dictExpr(base)
	lo, hi := c.intExpr(e.Args[1], "subarray bound"), c.intExpr(e.Args[2], "subarray bound")
	return func(fr *frame) dict {
		m := d(fr)
		l, h := lo(fr), hi(fr)
		if a, ok := m.(*arrView); ok && a.whole {
			switch {
			case l > h:
				fr.fail(errAt(e, "%s(%d:%d): the segment starts after it ends", a.name, l, h))
			case l < 0:
				fr.fail(errAt(e, "%s(%d:%d) starts before the start of %s: positions start at 0", a.name, l, h, a.name))
			case h > a.hi:
				fr.fail(errAt(e, "%s(%d:%d) runs past the end of %s, which has %s", a.name, l, h, a.name, elements(a.hi)))
			default:
				return &arrView{name: a.name, ints: a.ints, reals: a.reals, real: a.real, lo: l, hi: h}
			}
			return empty
		}
		if l > h {
			fr.fail(errAt(e, "%s(%d:%d): the segment starts after it ends", describe(base), l, h))
			return empty
		}
		return &subView{base: m, lo: l, hi: h}
	}
}

// lookupDict compiles d(k) where the result is a dictionary.
func (c *compiler) lookupDict(e *ir.Expr) dictFn {
	d, _ := c.dictExpr(e.Args[0])
	k := c.keyFn(e.Args[1]).i
	return func(fr *frame) dict {
		m := d(fr)
		return m.getDict(k(fr))
	}
}

// specFor chooses the representation of every level of the dictionary e
// builds: dense when every singleton feeding the level is @dense, hash when
// they are @dense or @hash with at least one @hash, list otherwise.
func (c *compiler) specFor(e *ir.Expr, t ir.Type) *bspec {
	type count struct{ dense, hash, other int }
	levels := make([]count, t.Depth)
	var collect func(e *ir.Expr, level int)
	collect = func(e *ir.Expr, level int) {
		if level >= len(levels) {
			return
		}
		switch e.Op {
		case ir.OpSingleton:
			switch e.Ann {
			case ir.AnnDense:
				levels[level].dense++
			case ir.AnnHash:
				levels[level].hash++
			default:
				levels[level].other++
			}
			if constructive(e.Args[1]) {
				collect(e.Args[1], level+1)
			}
		case ir.OpSum, ir.OpLet:
			collect(e.Args[1], level)
		case ir.OpMerge:
			collect(e.Args[2], level)
		case ir.OpAdd, ir.OpSub:
			collect(e.Args[0], level)
			collect(e.Args[1], level)
		case ir.OpNeg:
			collect(e.Args[0], level)
		case ir.OpIf:
			collect(e.Args[1], level)
			if len(e.Args) == 3 {
				collect(e.Args[2], level)
			}
		}
	}
	collect(e, 0)
	var spec *bspec
	for l := t.Depth - 1; l >= 0; l-- {
		lv := levels[l]
		dense := lv.dense > 0 && lv.hash == 0 && lv.other == 0
		hash := lv.hash > 0 && lv.other == 0
		spec = &bspec{
			depth: t.Depth - l,
			real:  t.Base == ir.Real,
			dense: dense,
			list:  !dense && !hash,
			kid:   spec,
			out:   c.out,
		}
	}
	return spec
}

// accum compiles e (a dictionary of the builder's depth) to a closure that
// adds its value, negated if neg, into a builder of the given spec.
// sgn says how an expression is added into a builder: negated or not,
// and whether the dictionaries it adds whole are copied (their zero entries
// dropped) rather than shared. The interpreter copies everything below a
// negation, even a double one.
type sgn uint8

const (
	plus    sgn = 0
	negBit  sgn = 1
	copyBit sgn = 2
)

func (s sgn) isNeg() bool  { return s&negBit != 0 }
func (s sgn) copies() bool { return s&copyBit != 0 }
func (s sgn) flip() sgn    { return (s ^ negBit) | copyBit }

func (s sgn) sign() int {
	if s.isNeg() {
		return -1
	}
	return 1
}

func (c *compiler) accum(e *ir.Expr, spec *bspec, neg sgn) accFn {
	t := c.typeOf(e)
	if t.Depth != spec.depth {
		c.bail(e, "internal: accumulating %s into a dictionary of depth %d", t, spec.depth)
	}
	switch e.Op {
	case ir.OpSingleton:
		return c.accumSingleton(e, spec, neg)
	case ir.OpSum:
		return c.sumAccum(e, spec, neg)
	case ir.OpMerge:
		return c.mergeAccum(e, spec, neg)
	case ir.OpAdd, ir.OpSub:
		a := c.accum(e.Args[0], spec, neg)
		nb := neg
		if e.Op == ir.OpSub {
			nb = neg.flip()
		}
		b := c.accum(e.Args[1], spec, nb)
		return func(fr *frame, bd *builder) { a(fr, bd); b(fr, bd) }
	case ir.OpNeg:
		return c.accum(e.Args[0], spec, neg.flip())
	case ir.OpIf:
		if constructive(e) {
			cond := c.boolExpr(e.Args[0])
			a := c.accum(e.Args[1], spec, neg)
			if len(e.Args) == 2 {
				return func(fr *frame, bd *builder) {
					if cond(fr) {
						a(fr, bd)
					}
				}
			}
			b := c.accum(e.Args[2], spec, neg)
			return func(fr *frame, bd *builder) {
				if cond(fr) {
					a(fr, bd)
				} else {
					b(fr, bd)
				}
			}
		}
	case ir.OpLet:
		if constructive(e) {
			set := c.letValue(e)
			body := c.accum(e.Args[1], spec, neg)
			c.unbind(1)
			return func(fr *frame, bd *builder) { set(fr); body(fr, bd) }
		}
	case ir.OpMul:
		if !(t.Base == ir.Int && spec.real) {
			return c.accumMul(e, spec, neg)
		}
	}
	// A whole dictionary value.
	d := c.dictValue(e, t)
	sign, cp := neg.sign(), neg.copies()
	return func(fr *frame, bd *builder) { bd.absorb(d(fr), sign, cp) }
}

// accumMul adds a product involving a dictionary: scalar * dict, dict *
// scalar (every value scaled) or dict * dict (key-wise).
func (c *compiler) accumMul(e *ir.Expr, spec *bspec, neg sgn) accFn {
	ta, tb := c.typeOf(e.Args[0]), c.typeOf(e.Args[1])
	switch {
	case ta.Depth == 0 || tb.Depth == 0:
		si, di := 0, 1
		if tb.Depth == 0 {
			si, di = 1, 0
		}
		s := c.expr(e.Args[si])
		d, _ := c.dictExpr(e.Args[di])
		first := func(fr *frame) (float64, int64, dict) {
			// Operands are evaluated left to right.
			if si == 0 {
				var sf float64
				var sint int64
				if s.t.Base == ir.Real {
					sf = s.f(fr)
				} else {
					sint = s.i(fr)
				}
				return sf, sint, d(fr)
			}
			m := d(fr)
			var sf float64
			var sint int64
			if s.t.Base == ir.Real {
				sf = s.f(fr)
			} else {
				sint = s.i(fr)
			}
			return sf, sint, m
		}
		if s.t.Base == ir.Bool {
			c.bail(e, "cannot multiply by a bool")
		}
		if spec.real {
			isReal := s.t.Base == ir.Real
			return func(fr *frame, bd *builder) {
				sf, sint, m := first(fr)
				if !isReal {
					sf = float64(sint)
				}
				if neg.isNeg() {
					sf = -sf
				}
				bd.absorbScaledReal(m, sf, si == 1)
			}
		}
		return func(fr *frame, bd *builder) {
			_, sint, m := first(fr)
			if neg.isNeg() {
				sint = -sint
			}
			bd.absorbScaledInt(m, sint)
		}
	case ta.Depth != tb.Depth:
		c.bail(e, "cannot multiply dictionaries of different depths (%s and %s)", ta, tb)
	}
	x, _ := c.dictExpr(e.Args[0])
	y, _ := c.dictExpr(e.Args[1])
	if !neg.isNeg() {
		return func(fr *frame, bd *builder) {
			a := x(fr)
			bd.absorbProduct(a, y(fr))
		}
	}
	// -(x*y): multiply into a scratch builder, then add it negated.
	return func(fr *frame, bd *builder) {
		a := x(fr)
		b2 := y(fr)
		tmp := newBuilder(spec)
		tmp.absorbProduct(a, b2)
		bd.absorb(tmp.freeze(), -1, true)
	}
}

// accumSingleton compiles {k -> v} added into a builder.
func (c *compiler) accumSingleton(e *ir.Expr, spec *bspec, neg sgn) accFn {
	k := c.keyFn(e.Args[0])
	vt := c.typeOf(e.Args[1])
	if vt.Depth == 0 {
		v := c.expr(e.Args[1])
		if v.t.Base == ir.Bool {
			c.bail(e, "a dictionary cannot hold bool values")
		}
		return c.leafAdd(k, v, spec, neg)
	}
	kf := k.i
	if constructive(e.Args[1]) {
		inner := c.accum(e.Args[1], spec.kid, neg)
		return func(fr *frame, bd *builder) {
			kv := kf(fr)
			inner(fr, bd.child(kv))
		}
	}
	d := c.dictValue(e.Args[1], vt)
	if neg.copies() {
		sign := neg.sign()
		return func(fr *frame, bd *builder) {
			kv := kf(fr)
			bd.child(kv).absorb(d(fr), sign, true)
		}
	}
	return func(fr *frame, bd *builder) {
		kv := kf(fr)
		bd.addDict(kv, d(fr))
	}
}

// leafAdd compiles out[k] += v for a builder of scalars.
func (c *compiler) leafAdd(k, v cx, spec *bspec, neg sgn) accFn {
	kf := k.i
	if spec.real {
		vf := asReal(v)
		if neg.isNeg() {
			g := vf
			vf = func(fr *frame) float64 { return -g(fr) }
		}
		if spec.dense {
			if k.aff && k.affOff == 0 {
				s := k.affSlot
				return func(fr *frame, b *builder) {
					kv := fr.i[s]
					x := vf(fr)
					if uint64(kv) < uint64(len(b.reals)) && b.ws == nil {
						b.reals[kv] += x
						return
					}
					b.addReal(kv, x)
				}
			}
			return func(fr *frame, b *builder) {
				kv := kf(fr)
				x := vf(fr)
				if uint64(kv) < uint64(len(b.reals)) && b.ws == nil {
					b.reals[kv] += x
					return
				}
				b.addReal(kv, x)
			}
		}
		return func(fr *frame, b *builder) {
			kv := kf(fr)
			b.addReal(kv, vf(fr))
		}
	}
	if v.t.Base != ir.Int {
		c.bail(nil, "internal: real value into an int dictionary")
	}
	vi := v.i
	if neg.isNeg() {
		g := vi
		vi = func(fr *frame) int64 { return -g(fr) }
	}
	if spec.dense {
		return func(fr *frame, b *builder) {
			kv := kf(fr)
			x := vi(fr)
			if uint64(kv) < uint64(len(b.ints)) && b.ws == nil {
				b.ints[kv] += x
				return
			}
			b.addInt(kv, x)
		}
	}
	return func(fr *frame, b *builder) {
		kv := kf(fr)
		b.addInt(kv, vi(fr))
	}
}
