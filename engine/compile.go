package engine

import (
	"github.com/storel/storel/ir"
)

// compiler turns an expression into closures. Compile errors abort the
// whole compilation through bail (a panic caught by Compile), which keeps
// the many compile functions free of error plumbing; nothing at run time
// panics.
type compiler struct {
	schema Schema
	cells  map[string]*cell
	scope  []binding
	// runEnds: the slots where a loop over runs (runs.go), by the slot
	// of its position, keeps its run's end for runend.
	runEnds map[int]runSlots
	// levels: the objects of hash maps' layouts the plan reads
	// (hashwalk.go), by name.
	levels map[string]levelRef
	// out: the kernel's, for the dictionaries its runs build.
	out *blockSink
	// Slot counts of the frame.
	ni, nf, nd int
	threads    int
	// indexes: the seek tables a run builds after binding the cells.
	indexes []*seekIndex
	// noNests keeps every sum on the closure paths (tests, benchmarks of
	// the older compilation); nvec counts vectorized loops.
	noNests bool
	nvec    int
	// rowLets lets vectorizeRows read the lets of a loop's body per row
	// (the factors of a sum in position space, flatPost).
	rowLets bool
	fresh   int // names of the lets the nest introduces (sumLets)
	nflat   int
	nlift   int
	nmerge  int // itMerge loops lowered (nestmerge.go)
	inRow   int // lowering the value of a row of a nested result
	// What explain shows: the loops lowered, the outermost sums the IR
	// declined and why, and the sum parallelSum is about to compile.
	nests     []*nloop
	declined  []declined
	lastWhy   string
	nestDepth int
	splitNext bool
	// asWritten: nestLoop lowers loops as written, no range swapped
	// outward (nestswap.go)
	asWritten bool
	// mon checks the run's limits between windows of the top sum; nil
	// without limits.
	mon *monitor
}

type binding struct {
	name string
	t    ir.Type
	slot int
	// hash: the variable holds rows of a physical hash map's layout
	// (the value of a loop over one), which the nest walks as slices.
	hash bool
}

// bailout carries a compile error through panic to Compile.
type bailout struct{ err *Error }

func (c *compiler) bail(e *ir.Expr, format string, args ...any) {
	panic(bailout{errAt(e, format, args...)})
}

func (c *compiler) newSlot(t ir.Type) int {
	switch {
	case t.Depth > 0:
		c.nd++
		return c.nd - 1
	case t.Base == ir.Real:
		c.nf++
		return c.nf - 1
	}
	c.ni++
	return c.ni - 1
}

// bind declares a variable of type t in a new slot; unbind pops it.
func (c *compiler) bind(name string, t ir.Type) int {
	s := c.newSlot(t)
	c.scope = append(c.scope, binding{name: name, t: t, slot: s})
	return s
}

// declare binds a variable for type inference only (no slot).
func (c *compiler) declare(name string, t ir.Type) {
	c.scope = append(c.scope, binding{name: name, t: t, slot: -1})
}

func (c *compiler) unbind(n int) { c.scope = c.scope[:len(c.scope)-n] }

func (c *compiler) lookupVar(name string) (binding, bool) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i].name == name {
			return c.scope[i], true
		}
	}
	return binding{}, false
}

func (c *compiler) cell(e *ir.Expr) *cell {
	if cl, ok := c.cells[e.Name]; ok {
		return cl
	}
	info, ok := c.schema[e.Name]
	if !ok {
		c.bail(e, "no physical object %s", e.Name)
	}
	cl := &cell{name: e.Name, info: info}
	c.cells[e.Name] = cl
	return cl
}

// join is the base of a value mixing a and b: int and real mix as real.
func join(a, b ir.Base) ir.Base {
	switch {
	case a == ir.Real || b == ir.Real:
		return ir.Real
	case a == ir.Unknown:
		return b
	}
	return a
}

// promote joins a computed type with the type the checker gave node e
// (the interpreter converts int results to real where the node is real).
func promote(t ir.Type, e *ir.Expr) ir.Type {
	if e.Type.Base == ir.Real && t.Base == ir.Int {
		t.Base = ir.Real
	}
	return t
}

// typeOf infers the type of e in the current scope without compiling it.
func (c *compiler) typeOf(e *ir.Expr) ir.Type {
	switch e.Op {
	case ir.OpConst:
		t := e.Type
		if t.Base == ir.Unknown {
			t.Base = ir.Int
		}
		return t
	case ir.OpVar:
		b, ok := c.lookupVar(e.Name)
		if !ok {
			c.bail(e, "unbound variable %s", e.Name)
		}
		return b.t
	case ir.OpGlobal:
		return c.cell(e).info.Type()
	case ir.OpNeg:
		return c.typeOf(e.Args[0])
	case ir.OpNot, ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpAnd, ir.OpOr:
		return ir.BoolType
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		a, b := c.typeOf(e.Args[0]), c.typeOf(e.Args[1])
		t := ir.Type{Depth: max(a.Depth, b.Depth), Base: join(a.Base, b.Base)}
		if e.Op != ir.OpMul {
			t = promote(t, e)
		}
		return t
	case ir.OpDiv, ir.OpMod:
		a, b := c.typeOf(e.Args[0]), c.typeOf(e.Args[1])
		return ir.Type{Base: join(a.Base, b.Base)}
	case ir.OpCall:
		switch e.Name {
		case "exp", "log", "sqrt":
			return ir.RealType
		case "even_bits", "odd_bits":
			return ir.IntType
		case "abs":
			if len(e.Args) == 1 {
				return c.typeOf(e.Args[0])
			}
		case "min", "max":
			t := ir.IntType
			for _, a := range e.Args {
				t.Base = join(t.Base, c.typeOf(a).Base)
			}
			return t
		case "runs":
			if len(e.Args) == 1 {
				return c.typeOf(e.Args[0])
			}
		case "runend":
			return ir.IntType
		}
		c.bail(e, "unknown function %s/%d", e.Name, len(e.Args))
	case ir.OpSingleton:
		return c.typeOf(e.Args[1]).Dict()
	case ir.OpLookup:
		t := c.typeOf(e.Args[0])
		if t.Depth == 0 {
			c.bail(e, "%s is not a dictionary", describe(e.Args[0]))
		}
		return t.Elem()
	case ir.OpRange:
		return ir.Type{Depth: 1, Base: ir.Int}
	case ir.OpSubArray:
		return c.typeOf(e.Args[0])
	case ir.OpIf:
		t := c.typeOf(e.Args[1])
		if len(e.Args) == 3 {
			u := c.typeOf(e.Args[2])
			t.Base = join(t.Base, u.Base)
			t.Depth = max(t.Depth, u.Depth)
		}
		return promote(t, e)
	case ir.OpLet:
		vt := c.typeOf(e.Args[0])
		c.declare(e.Vars[0], vt)
		defer c.unbind(1)
		return c.typeOf(e.Args[1])
	case ir.OpSum:
		st := c.typeOf(e.Args[0])
		if st.Depth == 0 {
			c.bail(e, "sum iterates %s, which is not a dictionary", describe(e.Args[0]))
		}
		c.declare(e.Vars[0], ir.IntType)
		c.declare(e.Vars[1], st.Elem())
		defer c.unbind(2)
		return promote(c.typeOf(e.Args[1]), e)
	case ir.OpMerge:
		t1 := c.typeOf(e.Args[0])
		if t1.Depth != 1 {
			c.bail(e, "merge iterates vectors, but %s is %s", describe(e.Args[0]), t1)
		}
		c.declare(e.Vars[0], ir.IntType)
		c.declare(e.Vars[1], ir.IntType)
		c.declare(e.Vars[2], t1.Elem())
		defer c.unbind(3)
		return promote(c.typeOf(e.Args[2]), e)
	}
	c.bail(e, "cannot compile %s node", e.Op)
	return ir.Type{}
}

// checkShape verifies arities and binders before anything else looks at
// e, so later code can index Args freely.
func checkShape(e *ir.Expr) *Error {
	var bad *Error
	ir.Walk(e, func(n *ir.Expr) bool {
		if bad != nil {
			return false
		}
		if err := ir.CheckShape(n); err != nil {
			bad = errAt(n, "%v", err)
			return false
		}
		return true
	})
	return bad
}

// cx is a compiled expression: exactly one of the closures is set,
// according to t (int or bool scalars use i or b, reals f, dictionaries d).
type cx struct {
	t ir.Type
	i intFn
	f realFn
	b boolFn
	d dictFn
	// Static facts the compiler exploits.
	isConst bool
	ci      int64
	cf      float64
	slot    int // >= 0: a read of this scalar variable slot
	// aff: an int of the form fr.i[affSlot] + affOff (a variable, or a
	// variable plus a constant: the keys of most lookups).
	aff     bool
	affSlot int
	affOff  int64
}

func intCx(f intFn) cx   { return cx{t: ir.IntType, i: f, slot: -1} }
func realCx(f realFn) cx { return cx{t: ir.RealType, f: f, slot: -1} }
func boolCx(f boolFn) cx { return cx{t: ir.BoolType, b: f, slot: -1} }
func dictCx(t ir.Type, f dictFn) cx {
	return cx{t: t, d: f, slot: -1}
}

func constInt(v int64) cx {
	x := intCx(func(*frame) int64 { return v })
	x.isConst, x.ci = true, v
	return x
}

func constReal(v float64) cx {
	x := realCx(func(*frame) float64 { return v })
	x.isConst, x.cf = true, v
	return x
}

// asReal returns x as a real closure, converting an int.
func asReal(x cx) realFn {
	switch {
	case x.f != nil:
		return x.f
	case x.isConst:
		v := float64(x.ci)
		return func(*frame) float64 { return v }
	case x.slot >= 0:
		s := x.slot
		return func(fr *frame) float64 { return float64(fr.i[s]) }
	}
	g := x.i
	return func(fr *frame) float64 { return float64(g(fr)) }
}

// toType converts scalar x to base b (int to real only).
func toType(x cx, b ir.Base) cx {
	if b == ir.Real && x.t.Base == ir.Int && x.t.Depth == 0 {
		y := realCx(asReal(x))
		if x.isConst {
			y.isConst, y.cf = true, float64(x.ci)
		}
		return y
	}
	return x
}

// expr compiles e to closures returning its value.
func (c *compiler) expr(e *ir.Expr) cx {
	t := c.typeOf(e)
	if t.Depth > 0 {
		return dictCx(t, c.dictValue(e, t))
	}
	x := c.scalar(e)
	if x.t.Base != t.Base {
		if t.Base == ir.Real && x.t.Base == ir.Int {
			return toType(x, ir.Real)
		}
		c.bail(e, "internal: %s compiled as %s, typed %s", describe(e), x.t, t)
	}
	return x
}

func (c *compiler) intExpr(e *ir.Expr, what string) intFn {
	x := c.expr(e)
	if x.t.Depth != 0 || x.t.Base != ir.Int {
		c.bail(e, "%s %s is %s, not int", what, describe(e), x.t)
	}
	return x.i
}

func (c *compiler) boolExpr(e *ir.Expr) boolFn {
	x := c.expr(e)
	if x.t != ir.BoolType {
		c.bail(e, "condition %s is %s, not bool", describe(e), x.t)
	}
	return x.b
}

func (c *compiler) dictExpr(e *ir.Expr) (dictFn, ir.Type) {
	t := c.typeOf(e)
	if t.Depth == 0 {
		c.bail(e, "%s is %s, not a dictionary", describe(e), t)
	}
	return c.dictValue(e, t), t
}
