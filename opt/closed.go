package opt

import (
	"strconv"

	"github.com/storel/storel/ir"
)

// hoistClosed binds every closed build of e that runs inside a loop by a
// let at the top of the plan: a dictionary built by a sum or merge that
// reads no variable (a transposed copy of a tensor, a vector of row sums)
// has the same value wherever it runs, so it is built once, as the cost
// model charges it (planCost.once), however deep the loops around the
// place a rewrite left it. Builds inside a hoisted one's loops are hoisted
// first, and equal builds share one let. A build that is not inside a loop
// runs once where it is and stays, and so does one that safe rejects: out
// of its loop, a build a test guarded would run where the test fails.
func hoistClosed(e *ir.Expr, safe func(*ir.Expr) bool) *ir.Expr {
	used := ir.AllNames(e, nil)
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Op == ir.OpGlobal {
			used[n.Name] = true
		}
		return true
	})
	names := ir.NewNamer(used)
	type bind struct {
		x   string
		val *ir.Expr
	}
	var binds []bind
	seen := map[string]string{}
	var walk func(e *ir.Expr, inLoop bool) *ir.Expr
	walk = func(e *ir.Expr, inLoop bool) *ir.Expr {
		if e == nil || len(e.Args) == 0 {
			return e
		}
		hoist := inLoop && closedBuildTerm(e) && safe(e)
		c := e.Shallow()
		for i, a := range e.Args {
			c.Args[i] = walk(a, inLoop && !hoist || loopBody(e, i))
		}
		if !hoist {
			return c
		}
		key := ir.Format(canonBinders(c))
		x, ok := seen[key]
		if !ok {
			x = names.Fresh("t")
			seen[key] = x
			binds = append(binds, bind{x, c})
		}
		return &ir.Expr{Op: ir.OpVar, Name: x, Type: c.Type, Pos: c.Pos}
	}
	out := walk(e, false)
	for i := len(binds) - 1; i >= 0; i-- {
		b := binds[i]
		l := ir.Let(b.x, b.val, out)
		l.Type, l.Pos = out.Type, b.val.Pos
		out = l
	}
	return out
}

// closedBuildTerm is closedBuild for a term: a sum or merge building a
// dictionary, with no free variable.
func closedBuildTerm(e *ir.Expr) bool {
	return (e.Op == ir.OpSum || e.Op == ir.OpMerge) && e.Type.Depth > 0 && len(ir.FreeVars(e)) == 0
}

// canonBinders renames e's binders b1, b2, ... in the order they appear,
// so that two terms equal up to their binders' names print alike.
func canonBinders(e *ir.Expr) *ir.Expr {
	n := 0
	return renameBinders(e, func(string) string {
		n++
		return "b" + strconv.Itoa(n)
	})
}

// loopBody reports whether argument i of e runs once per step of e's
// loop.
func loopBody(e *ir.Expr, i int) bool {
	return e.Op == ir.OpSum && i == 1 || e.Op == ir.OpMerge && i == 2
}
