package engine

import (
	"github.com/storel/storel/ir"
)

// bodyFn runs the body of a loop once, adding into b (nil for scalar
// sums, which add into a frame slot).
type bodyFn func(fr *frame, b *builder)

// srcState is an evaluated loop source: a window lo..hi of keys (ranges,
// arrays, subarrays) or a dictionary.
type srcState struct {
	lo, hi int64
	d      dict
}

// loop is a compiled sum: open evaluates the source; run executes the
// body for the positions from..to-1 of the source, so that a parallel sum
// can split them.
type loop struct {
	open  func(fr *frame) (srcState, bool)
	count func(st srcState) int64
	run   func(fr *frame, st srcState, from, to int64, b *builder)
	// nest is set when the sum was lowered to the loop-nest IR (nest.go).
	nest *nloop
	// work, if set, is the cumulative work of the loop's positions
	// (split.go), by which a split run cuts its chunks.
	work workFunc
}

// chunks cuts the n iterations of a split run from state st into at most
// parts chunks.
func (l *loop) chunks(st srcState, n int64, parts int) [][2]int64 {
	return splitChunks(n, parts, st.lo, l.work)
}

// runWork returns the work of a run's n iterations from st: their
// cumulative work where the loop has one, else n.
func (l *loop) runWork(st srcState, n int64) int64 {
	if l.work == nil {
		return n
	}
	return l.work(st.lo+n) - l.work(st.lo)
}

func (l *loop) all(fr *frame, b *builder) {
	st, ok := l.open(fr)
	if !ok {
		return
	}
	l.run(fr, st, 0, l.count(st), b)
}

func windowCount(st srcState) int64 {
	if st.hi <= st.lo {
		return 0
	}
	return st.hi - st.lo
}

func dictCount(st srcState) int64 { return int64(st.d.size()) }

// varSlots binds the key and value variables of a sum for its body and
// reports their slots, -1 for a variable the body does not use.
func (c *compiler) varSlots(e *ir.Expr, body *ir.Expr, vt ir.Type) (ks, vs int) {
	fv := ir.FreeVars(body)
	ks = c.bind(e.Vars[0], ir.IntType)
	vs = c.bind(e.Vars[1], vt)
	if !fv[e.Vars[0]] || e.Vars[0] == e.Vars[1] {
		ks = -1
	}
	if !fv[e.Vars[1]] {
		vs = -1
	}
	return ks, vs
}

// loopBody says what the body of a sum or merge adds into: a real or int
// accumulator slot (scalar sums) or a builder of the given spec.
type loopBody struct {
	accF, accI int // scalar sums: the accumulator slot, else -1
	spec       *bspec
	neg        sgn
}

func scalarBody(t ir.Type, slot int) loopBody {
	if t.Base == ir.Real {
		return loopBody{accF: slot, accI: -1}
	}
	return loopBody{accF: -1, accI: slot}
}

func accumBody(spec *bspec, neg sgn) loopBody {
	return loopBody{accF: -1, accI: -1, spec: spec, neg: neg}
}

// bodyOf compiles the body of a loop (with the loop's variables in scope).
func (c *compiler) bodyOf(body *ir.Expr, lb loopBody) bodyFn {
	switch {
	case lb.spec != nil:
		return bodyFn(c.accum(body, lb.spec, lb.neg))
	case lb.accF >= 0:
		f := asReal(c.expr(body))
		acc := lb.accF
		return func(fr *frame, _ *builder) { fr.f[acc] += f(fr) }
	}
	x := c.expr(body)
	if x.t.Depth != 0 || x.t.Base != ir.Int {
		c.bail(body, "internal: int sum of %s", x.t)
	}
	f, acc := x.i, lb.accI
	return func(fr *frame, _ *builder) { fr.i[acc] += f(fr) }
}

// compileLoop compiles sum e whose body adds as lb says.
func (c *compiler) compileLoop(e *ir.Expr, lb loopBody) *loop {
	src, bodyExpr := e.Args[0], e.Args[1]
	mkBody := func() bodyFn { return c.bodyOf(bodyExpr, lb) }
	st := c.typeOf(src)
	if st.Depth == 0 {
		c.bail(e, "sum iterates %s, which is not a dictionary", describe(src))
	}
	vt := st.Elem()
	if l := c.nestLoop(e, lb); l != nil {
		return l
	}
	switch src.Op {
	case ir.OpRange:
		lo, hi := c.intExpr(src.Args[0], "range bound"), c.intExpr(src.Args[1], "range bound")
		ks, vs := c.varSlots(e, bodyExpr, vt)
		open := func(fr *frame) (srcState, bool) {
			l, h := lo(fr), hi(fr)
			return srcState{lo: l, hi: h}, true
		}
		body := mkBody()
		c.unbind(2)
		return &loop{
			open:  open,
			count: windowCount,
			run: func(fr *frame, st srcState, from, to int64, b *builder) {
				for k := st.lo + from; k < st.lo+to; k++ {
					if ks >= 0 {
						fr.i[ks] = k
					}
					if vs >= 0 {
						fr.i[vs] = k
					}
					body(fr, b)
					if fr.err != nil {
						return
					}
				}
			},
		}
	case ir.OpGlobal, ir.OpSubArray:
		g := src
		if src.Op == ir.OpSubArray {
			g = src.Args[0]
		}
		if g.Op != ir.OpGlobal {
			break
		}
		cl := c.cell(g)
		switch {
		case cl.info.Kind == ir.ObjArray:
			var open func(fr *frame) (srcState, bool)
			if src.Op == ir.OpSubArray {
				win := c.window(src, cl)
				open = func(fr *frame) (srcState, bool) {
					l, h, ok := win(fr)
					return srcState{lo: l, hi: h}, ok
				}
			} else {
				open = func(*frame) (srcState, bool) {
					n := len(cl.ints)
					if cl.info.Elem == ir.Real {
						n = len(cl.reals)
					}
					return srcState{lo: 0, hi: int64(n)}, true
				}
			}
			ks, vs := c.varSlots(e, bodyExpr, vt)
			body := mkBody()
			c.unbind(2)
			return &loop{open: open, count: windowCount, run: arrayRun(cl, ks, vs, body)}
		}
	}
	if cl, win := c.runsArray(src); cl != nil {
		ks, vs := c.varSlots(e, bodyExpr, vt)
		rs := c.runSlotsOf(cl, ks)
		body := mkBody()
		c.unbind(2)
		open := func(fr *frame) (srcState, bool) {
			l, h, ok := win(fr)
			return srcState{lo: l, hi: h}, ok
		}
		return &loop{open: open, count: windowCount, run: runsRun(cl, ks, vs, rs, body)}
	}
	d, _ := c.dictExpr(src)
	ks, vs := c.varSlots(e, bodyExpr, vt)
	body := mkBody()
	c.unbind(2)
	return &loop{
		open: func(fr *frame) (srcState, bool) {
			m := d(fr)
			return srcState{d: m}, fr.err == nil
		},
		count: dictCount,
		run:   dictRun(ks, vs, vt, body),
	}
}

func arrayRun(cl *cell, ks, vs int, body bodyFn) func(*frame, srcState, int64, int64, *builder) {
	if cl.info.Elem == ir.Real {
		return arrayRunOf(&cl.reals, ks, vs, body, func(fr *frame) []float64 { return fr.f })
	}
	return arrayRunOf(&cl.ints, ks, vs, body, func(fr *frame) []int64 { return fr.i })
}

// arrayRunOf is arrayRun over the array *arr (read at each run), its
// values put in slot vs of slots(fr) (the frame's slots are never
// reallocated, so read once per run).
func arrayRunOf[T int64 | float64](arr *[]T, ks, vs int, body bodyFn, slots func(*frame) []T) func(*frame, srcState, int64, int64, *builder) {
	return func(fr *frame, st srcState, from, to int64, b *builder) {
		a, vals := *arr, slots(fr)
		for p := st.lo + from; p < st.lo+to; p++ {
			if ks >= 0 {
				fr.i[ks] = p
			}
			if vs >= 0 {
				vals[vs] = a[p]
			}
			body(fr, b)
			if fr.err != nil {
				return
			}
		}
	}
}

func dictRun(ks, vs int, vt ir.Type, body bodyFn) func(*frame, srcState, int64, int64, *builder) {
	return func(fr *frame, st srcState, from, to int64, b *builder) {
		d := st.d
		for p := int(from); p < int(to); p++ {
			if ks >= 0 {
				fr.i[ks] = d.keyAt(p)
			}
			if vs >= 0 {
				switch {
				case vt.Depth > 0:
					fr.d[vs] = d.dictAt(p)
				case vt.Base == ir.Real:
					fr.f[vs] = d.realAt(p)
				default:
					fr.i[vs] = d.intAt(p)
				}
			}
			body(fr, b)
			if fr.err != nil {
				return
			}
		}
	}
}

// scalarSum compiles a sum (a loop or a merge, as run compiles it) whose
// value is a scalar.
func (c *compiler) scalarSum(e *ir.Expr, run func(*ir.Expr, loopBody) accFn) cx {
	t := c.typeOf(e)
	if t.Base != ir.Real && t.Base != ir.Int {
		c.bail(e, "cannot sum %s values", t)
	}
	acc := c.newSlot(ir.Type{Base: t.Base})
	all := run(e, scalarBody(t, acc))
	if t.Base == ir.Real {
		return realCx(func(fr *frame) float64 {
			fr.f[acc] = 0
			all(fr, nil)
			return fr.f[acc]
		})
	}
	return intCx(func(fr *frame) int64 {
		fr.i[acc] = 0
		all(fr, nil)
		return fr.i[acc]
	})
}

// loopAll compiles sum e as a loop run over its whole source.
func (c *compiler) loopAll(e *ir.Expr, lb loopBody) accFn { return c.compileLoop(e, lb).all }

// sumAccum compiles a dictionary-valued sum accumulating into a builder.
func (c *compiler) sumAccum(e *ir.Expr, spec *bspec, neg sgn) accFn {
	return c.loopAll(e, accumBody(spec, neg))
}
