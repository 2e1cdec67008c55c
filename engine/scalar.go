package engine

import (
	"math"

	"github.com/storel/storel/ir"
)

// scalar compiles a scalar-typed expression.
func (c *compiler) scalar(e *ir.Expr) cx {
	switch e.Op {
	case ir.OpConst:
		switch e.Type.Base {
		case ir.Real:
			return constReal(e.F)
		case ir.Bool:
			v := e.I != 0
			return boolCx(func(*frame) bool { return v })
		}
		return constInt(e.I)
	case ir.OpVar:
		b, ok := c.lookupVar(e.Name)
		if !ok || b.slot < 0 {
			c.bail(e, "unbound variable %s", e.Name)
		}
		s := b.slot
		switch b.t.Base {
		case ir.Real:
			x := realCx(func(fr *frame) float64 { return fr.f[s] })
			x.slot = s
			return x
		case ir.Bool:
			return boolCx(func(fr *frame) bool { return fr.i[s] != 0 })
		}
		x := intCx(func(fr *frame) int64 { return fr.i[s] })
		x.slot = s
		x.aff, x.affSlot = true, s
		return x
	case ir.OpGlobal:
		cl := c.cell(e)
		if cl.info.Kind != ir.ObjScalar {
			c.bail(e, "internal: %s is not a scalar", e.Name)
		}
		if cl.info.Elem == ir.Real {
			return realCx(func(*frame) float64 { return cl.scalarF })
		}
		return intCx(func(*frame) int64 { return cl.scalarI })
	case ir.OpNeg:
		a := c.expr(e.Args[0])
		switch a.t.Base {
		case ir.Real:
			f := a.f
			return realCx(func(fr *frame) float64 { return -f(fr) })
		case ir.Int:
			f := a.i
			return intCx(func(fr *frame) int64 { return -f(fr) })
		}
		c.bail(e, "cannot negate %s (use !)", a.t)
	case ir.OpNot:
		f := c.boolExpr(e.Args[0])
		return boolCx(func(fr *frame) bool { return !f(fr) })
	case ir.OpAnd:
		a, b := c.boolExpr(e.Args[0]), c.boolExpr(e.Args[1])
		return boolCx(func(fr *frame) bool { return a(fr) && b(fr) })
	case ir.OpOr:
		a, b := c.boolExpr(e.Args[0]), c.boolExpr(e.Args[1])
		return boolCx(func(fr *frame) bool { return a(fr) || b(fr) })
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod:
		return c.arith(e)
	case ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		return c.compare(e)
	case ir.OpCall:
		return c.call(e)
	case ir.OpLookup:
		return c.lookupScalar(e)
	case ir.OpIf:
		return c.ifScalar(e)
	case ir.OpLet:
		return c.letScalar(e)
	case ir.OpSum:
		return c.scalarSum(e, c.loopAll)
	case ir.OpMerge:
		return c.scalarSum(e, c.compileMerge)
	}
	c.bail(e, "cannot compile %s as a scalar", e.Op)
	return cx{}
}

func (c *compiler) arith(e *ir.Expr) cx {
	a, b := c.expr(e.Args[0]), c.expr(e.Args[1])
	if a.t.Base == ir.Bool || b.t.Base == ir.Bool {
		c.bail(e, "cannot apply %s to %s and %s", e.Op, a.t, b.t)
	}
	if a.t.Base == ir.Int && b.t.Base == ir.Int {
		x := c.intArith(e, a, b)
		return toType(x, promote(x.t, e).Base)
	}
	return c.realArith(e, asReal(a), asReal(b), a, b)
}

func (c *compiler) intArith(e *ir.Expr, a, b cx) cx {
	fa, fb := a.i, b.i
	switch e.Op {
	case ir.OpAdd:
		switch {
		case a.isConst && b.isConst:
			return constInt(a.ci + b.ci)
		case a.aff && b.isConst:
			s, k := a.affSlot, a.affOff+b.ci
			x := intCx(func(fr *frame) int64 { return fr.i[s] + k })
			x.aff, x.affSlot, x.affOff = true, s, k
			return x
		case a.isConst && b.aff:
			s, k := b.affSlot, b.affOff+a.ci
			x := intCx(func(fr *frame) int64 { return fr.i[s] + k })
			x.aff, x.affSlot, x.affOff = true, s, k
			return x
		case a.slot >= 0 && b.slot >= 0:
			s, t := a.slot, b.slot
			return intCx(func(fr *frame) int64 { return fr.i[s] + fr.i[t] })
		case b.isConst:
			k := b.ci
			return intCx(func(fr *frame) int64 { return fa(fr) + k })
		}
		return intCx(func(fr *frame) int64 { return fa(fr) + fb(fr) })
	case ir.OpSub:
		switch {
		case a.isConst && b.isConst:
			return constInt(a.ci - b.ci)
		case a.aff && b.isConst:
			s, k := a.affSlot, a.affOff-b.ci
			x := intCx(func(fr *frame) int64 { return fr.i[s] + k })
			x.aff, x.affSlot, x.affOff = true, s, k
			return x
		case b.isConst:
			k := b.ci
			return intCx(func(fr *frame) int64 { return fa(fr) - k })
		}
		return intCx(func(fr *frame) int64 { return fa(fr) - fb(fr) })
	case ir.OpMul:
		switch {
		case a.isConst && b.isConst:
			return constInt(a.ci * b.ci)
		case a.slot >= 0 && b.isConst:
			s, k := a.slot, b.ci
			return intCx(func(fr *frame) int64 { return fr.i[s] * k })
		case a.slot >= 0 && b.slot >= 0:
			s, t := a.slot, b.slot
			return intCx(func(fr *frame) int64 { return fr.i[s] * fr.i[t] })
		}
		return intCx(func(fr *frame) int64 { return fa(fr) * fb(fr) })
	case ir.OpDiv:
		if b.isConst && b.ci != 0 {
			k := b.ci
			return intCx(func(fr *frame) int64 { return fa(fr) / k })
		}
		return intCx(func(fr *frame) int64 {
			x, y := fa(fr), fb(fr)
			if y == 0 {
				fr.fail(errAt(e, "integer division by zero%s", planText(e)))
				return 0
			}
			return x / y
		})
	case ir.OpMod:
		if b.isConst && b.ci != 0 {
			k := b.ci
			return intCx(func(fr *frame) int64 { return fa(fr) % k })
		}
		return intCx(func(fr *frame) int64 {
			x, y := fa(fr), fb(fr)
			if y == 0 {
				fr.fail(errAt(e, "integer modulo by zero%s", planText(e)))
				return 0
			}
			return x % y
		})
	}
	c.bail(e, "internal: arithmetic %s", e.Op)
	return cx{}
}

func (c *compiler) realArith(e *ir.Expr, fa, fb realFn, a, b cx) cx {
	switch e.Op {
	case ir.OpAdd:
		return realCx(func(fr *frame) float64 { return fa(fr) + fb(fr) })
	case ir.OpSub:
		return realCx(func(fr *frame) float64 { return fa(fr) - fb(fr) })
	case ir.OpMul:
		switch {
		case a.slot >= 0 && a.t.Base == ir.Real && b.slot >= 0 && b.t.Base == ir.Real:
			s, t := a.slot, b.slot
			return realCx(func(fr *frame) float64 { return fr.f[s] * fr.f[t] })
		case a.slot >= 0 && a.t.Base == ir.Real:
			s := a.slot
			return realCx(func(fr *frame) float64 { return fr.f[s] * fb(fr) })
		case b.slot >= 0 && b.t.Base == ir.Real:
			s := b.slot
			return realCx(func(fr *frame) float64 { return fa(fr) * fr.f[s] })
		}
		return realCx(func(fr *frame) float64 { return fa(fr) * fb(fr) })
	case ir.OpDiv:
		return realCx(func(fr *frame) float64 { return fa(fr) / fb(fr) })
	case ir.OpMod:
		return realCx(func(fr *frame) float64 { return math.Mod(fa(fr), fb(fr)) })
	}
	c.bail(e, "internal: arithmetic %s", e.Op)
	return cx{}
}

func (c *compiler) compare(e *ir.Expr) cx {
	a, b := c.expr(e.Args[0]), c.expr(e.Args[1])
	op := e.Op
	switch {
	case a.t.Depth > 0 || b.t.Depth > 0:
		if (op != ir.OpEq && op != ir.OpNe) || a.t.Depth != b.t.Depth {
			c.bail(e, "cannot apply %s to %s and %s", op, a.t, b.t)
		}
		fa, fb := a.d, b.d
		depth, ra, rb := a.t.Depth, a.t.Base == ir.Real, b.t.Base == ir.Real
		want := op == ir.OpEq
		return boolCx(func(fr *frame) bool { return dictEqual(fa(fr), fb(fr), depth, ra, rb) == want })
	case a.t.Base == ir.Bool || b.t.Base == ir.Bool:
		if a.t.Base != b.t.Base || (op != ir.OpEq && op != ir.OpNe) {
			c.bail(e, "cannot apply %s to %s and %s", op, a.t, b.t)
		}
		fa, fb := a.b, b.b
		if op == ir.OpEq {
			return boolCx(func(fr *frame) bool { return fa(fr) == fb(fr) })
		}
		return boolCx(func(fr *frame) bool { return fa(fr) != fb(fr) })
	case a.t.Base == ir.Int && b.t.Base == ir.Int:
		fa, fb := a.i, b.i
		if a.slot >= 0 && b.slot >= 0 {
			s, t := a.slot, b.slot
			switch op {
			case ir.OpEq:
				return boolCx(func(fr *frame) bool { return fr.i[s] == fr.i[t] })
			case ir.OpLt:
				return boolCx(func(fr *frame) bool { return fr.i[s] < fr.i[t] })
			}
		}
		return boolCx(compareOf(op, fa, fb))
	}
	return boolCx(compareOf(op, asReal(a), asReal(b)))
}

// compareOf returns the closure of fa op fb, op a comparison.
func compareOf[T int64 | float64](op ir.Op, fa, fb func(*frame) T) boolFn {
	switch op {
	case ir.OpEq:
		return func(fr *frame) bool { return fa(fr) == fb(fr) }
	case ir.OpNe:
		return func(fr *frame) bool { return fa(fr) != fb(fr) }
	case ir.OpLt:
		return func(fr *frame) bool { return fa(fr) < fb(fr) }
	case ir.OpLe:
		return func(fr *frame) bool { return fa(fr) <= fb(fr) }
	case ir.OpGt:
		return func(fr *frame) bool { return fa(fr) > fb(fr) }
	}
	return func(fr *frame) bool { return fa(fr) >= fb(fr) }
}

func (c *compiler) call(e *ir.Expr) cx {
	if e.Name == "runend" {
		return c.runEnd(e)
	}
	args := make([]cx, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a)
		if args[i].t.Depth != 0 || args[i].t.Base == ir.Bool {
			c.bail(a, "%s: argument is %s, not a number", e.Name, args[i].t)
		}
	}
	arity := func(n int) {
		if len(args) != n {
			c.bail(e, "%s takes %d argument(s), not %d", e.Name, n, len(args))
		}
	}
	switch e.Name {
	case "exp", "log", "sqrt":
		arity(1)
		f := asReal(args[0])
		fn := map[string]func(float64) float64{"exp": math.Exp, "log": math.Log, "sqrt": math.Sqrt}[e.Name]
		return realCx(func(fr *frame) float64 { return fn(f(fr)) })
	case "abs":
		arity(1)
		if args[0].t.Base == ir.Int {
			f := args[0].i
			return intCx(func(fr *frame) int64 {
				x := f(fr)
				if x < 0 {
					return -x
				}
				return x
			})
		}
		f := args[0].f
		return realCx(func(fr *frame) float64 { return math.Abs(f(fr)) })
	case "even_bits", "odd_bits":
		arity(1)
		if args[0].t.Base != ir.Int {
			c.bail(e, "%s: argument is real, not int", e.Name)
		}
		f := args[0].i
		if e.Name == "odd_bits" {
			return intCx(func(fr *frame) int64 { return int64(ir.CompactEvenBits(uint64(f(fr)) >> 1)) })
		}
		return intCx(func(fr *frame) int64 { return int64(ir.CompactEvenBits(uint64(f(fr)))) })
	case "min", "max":
		if len(args) == 0 {
			c.bail(e, "%s takes at least one argument", e.Name)
		}
		isMin := e.Name == "min"
		allInts := true
		for _, a := range args {
			allInts = allInts && a.t.Base == ir.Int
		}
		if allInts {
			fs := make([]intFn, len(args))
			for i, a := range args {
				fs[i] = a.i
			}
			return intCx(func(fr *frame) int64 {
				m := fs[0](fr)
				for _, f := range fs[1:] {
					x := f(fr)
					if (isMin && x < m) || (!isMin && x > m) {
						m = x
					}
				}
				return m
			})
		}
		fs := make([]realFn, len(args))
		for i, a := range args {
			fs[i] = asReal(a)
		}
		return realCx(func(fr *frame) float64 {
			m := fs[0](fr)
			for _, f := range fs[1:] {
				if isMin {
					m = math.Min(m, f(fr))
				} else {
					m = math.Max(m, f(fr))
				}
			}
			return m
		})
	}
	c.bail(e, "unknown function %s", e.Name)
	return cx{}
}

func (c *compiler) ifScalar(e *ir.Expr) cx {
	t := c.typeOf(e)
	cond := c.boolExpr(e.Args[0])
	then := toType(c.expr(e.Args[1]), t.Base)
	var els cx
	if len(e.Args) == 3 {
		els = toType(c.expr(e.Args[2]), t.Base)
	}
	switch t.Base {
	case ir.Real:
		return realCx(ifThen(cond, then.f, els.f))
	case ir.Bool:
		return boolCx(ifThen(cond, then.b, els.b))
	}
	return intCx(ifThen(cond, then.i, els.i))
}

// ifThen returns the closure of "if cond then a else b"; with b nil, of
// "if cond then a" (the zero value otherwise).
func ifThen[T any](cond boolFn, a, b func(*frame) T) func(*frame) T {
	if b == nil {
		return func(fr *frame) T {
			if cond(fr) {
				return a(fr)
			}
			var zero T
			return zero
		}
	}
	return func(fr *frame) T {
		if cond(fr) {
			return a(fr)
		}
		return b(fr)
	}
}

// letValue compiles the value of a let and returns a closure storing it in
// a new slot for the let's variable (bound in scope until unbind).
func (c *compiler) letValue(e *ir.Expr) func(*frame) {
	v := c.expr(e.Args[0])
	return setter(v, c.bind(e.Vars[0], v.t))
}

func (c *compiler) letScalar(e *ir.Expr) cx {
	set := c.letValue(e)
	body := c.expr(e.Args[1])
	c.unbind(1)
	return withPrologue(set, body)
}
