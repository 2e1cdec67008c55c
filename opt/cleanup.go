package opt

import "github.com/storel/storel/ir"

// cleanup tidies an extracted plan without changing its cost: the fusion
// rules leave lets that only rename a variable (let k = i in ...) or bind
// a scalar read once (let v = A_val(p) in ... v ...), which the paper's
// plans (Fig. 1 (d)) write inline. A let is inlined when its value is a
// variable or a constant, or a scalar used once and not inside a loop of
// its body (where inlining would repeat the work); a let whose variable is
// unused is dropped. With keepSums, a let whose value is a sum stays: its
// use may be an operand, which the engine would run as a kernel of its
// own (LT8); the fusion stage's plan inlines them, so that the stages
// after it see the loops joined.
func cleanup(e *ir.Expr, keepSums bool) *ir.Expr {
	if e == nil || len(e.Args) == 0 {
		return e
	}
	c := e.Shallow()
	for i, a := range e.Args {
		c.Args[i] = cleanup(a, keepSums)
	}
	if c.Op != ir.OpLet {
		return c
	}
	x, val, body := c.Vars[0], c.Args[0], c.Args[1]
	count, inLoop := occurrences(body, x, false)
	switch {
	case count == 0:
		return body
	case val.Op == ir.OpVar || val.Op == ir.OpConst || (val.Op == ir.OpGlobal && val.Type.Depth == 0):
		return cleanup(ir.Subst(body, map[string]*ir.Expr{x: val}), keepSums)
	case val.Type.Depth == 0 && count == 1 && !inLoop && !(keepSums && val.Op == ir.OpSum):
		return cleanup(ir.Subst(body, map[string]*ir.Expr{x: val}), keepSums)
	}
	return c
}

// inlineCheap inlines every let whose value is a cheap scalar (see
// cheapScalar), wherever its uses are: between stages, it leaves the
// exploration no lets to float around loops, and costs at most a
// repeated array read that a later hoisting rule may take out again.
func inlineCheap(e *ir.Expr) *ir.Expr {
	if e == nil || len(e.Args) == 0 {
		return e
	}
	c := e.Shallow()
	for i, a := range e.Args {
		c.Args[i] = inlineCheap(a)
	}
	if c.Op == ir.OpLet && cheapScalar(c.Args[0], 3) {
		return inlineCheap(ir.Subst(c.Args[1], map[string]*ir.Expr{c.Vars[0]: c.Args[0]}))
	}
	return c
}

// cheapScalar reports whether e is a scalar computed by at most depth
// reads and index operations from variables and constants: k, 3, N, k+1,
// A_val(p), A_pos2(i+1), C_val(k * C_len2 + j) (a dense matrix's entry).
func cheapScalar(e *ir.Expr, depth int) bool {
	if e.Type.Depth > 0 {
		return false
	}
	switch e.Op {
	case ir.OpVar, ir.OpConst, ir.OpGlobal:
		return true
	case ir.OpLookup:
		return depth > 0 && e.Args[0].Op == ir.OpGlobal && cheapScalar(e.Args[1], depth-1)
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		// A product of an index (row times width), not of values.
		if e.Op == ir.OpMul && e.Type != ir.IntType {
			return false
		}
		return depth > 0 && cheapScalar(e.Args[0], depth-1) && cheapScalar(e.Args[1], depth-1)
	}
	return false
}

// unusedAsUnderscore writes _ for the loop variables a body does not
// read, as a person would. Only for the final plan: the optimizer's
// stages need every binder named uniquely.
func unusedAsUnderscore(e *ir.Expr) *ir.Expr {
	if e == nil || len(e.Args) == 0 {
		return e
	}
	c := e.Shallow()
	for i, a := range e.Args {
		c.Args[i] = unusedAsUnderscore(a)
	}
	if c.Op == ir.OpSum || c.Op == ir.OpMerge {
		fv := ir.FreeVars(c.Args[len(c.Args)-1])
		for i, v := range c.Vars {
			if !fv[v] {
				c.Vars[i] = "_"
			}
		}
	}
	return c
}

// occurrences counts the free occurrences of x in e and reports whether
// one is inside a sum or merge body of e.
func occurrences(e *ir.Expr, x string, inLoop bool) (int, bool) {
	if e == nil {
		return 0, false
	}
	if e.Op == ir.OpVar {
		if e.Name == x {
			return 1, inLoop
		}
		return 0, false
	}
	n, loop := 0, false
	for i, a := range e.Args {
		scoped := e.BinderScope(i)
		if scoped {
			shadow := false
			for _, v := range e.Vars {
				if v == x {
					shadow = true
				}
			}
			if shadow {
				continue
			}
		}
		k, l := occurrences(a, x, inLoop || (scoped && (e.Op == ir.OpSum || e.Op == ir.OpMerge)))
		n += k
		loop = loop || l
	}
	return n, loop
}
