package engine

import "github.com/storel/storel/ir"

// A dense range moved outward. A loop whose body is a range over keys
// that do not depend on it, each iteration adding {k -> v} into one row,
//
//	sum(<p, x> in S) lets in sum(<k, _> in lo:hi) {k -> v}
//
// (TTM's fiber: per entry l of A(i,j,:), the row B(:,l) scaled; any
// sparse loop above a dense output row) adds a short run into the row
// once per entry of S: each run goes through the row's builder. The same
// sum with the loops swapped,
//
//	sum(<k, _> in lo:hi) {k -> sum(<p, x> in S) lets in v}
//
// is a range whose value holds a loop that does not read k: it lifts
// (nestlift.go), the row's lanes accumulated in a buffer of the range's
// length over all of S and added into the row once. Each lane sums its
// terms in S's order from zero, as the interpreter sums S before adding
// its total into the row. A let of a loop-free value moves inside with
// S's body; one that reads an array at the loop's position is put in
// place of its variable, so the product reads it as a factor with the
// others. An empty range runs the loops as written, which evaluate S's
// lets (and their errors) though they add nothing.

// swapRange returns e with its range moved outward as above, or nil when
// e is not of that form: e a sum (not a merge) whose body, after lets
// and guards that read no loop of their own, is a sum over a range whose
// bounds cannot fail and read nothing e binds, and whose body is a
// singleton of a real scalar at the range's key.
func (c *compiler) swapRange(e *ir.Expr, lb loopBody) *ir.Expr {
	if e.Op != ir.OpSum || lb.spec == nil || lb.spec.depth != 1 || !lb.spec.real {
		return nil
	}
	bound := map[string]bool{e.Vars[0]: true, e.Vars[1]: true}
	var wrap []*ir.Expr // the lets and guards above the range, outermost first
	r := e.Args[1]
	for r.Op == ir.OpLet || r.Op == ir.OpIf && len(r.Args) == 2 {
		if containsLoop(r.Args[0]) {
			return nil
		}
		if r.Op == ir.OpLet {
			bound[r.Vars[0]] = true
		}
		wrap = append(wrap, r)
		r = r.Args[1]
	}
	if r.Op != ir.OpSum || r.Args[0].Op != ir.OpRange {
		return nil
	}
	k, kv := r.Vars[0], r.Vars[1]
	src, single := r.Args[0], r.Args[1]
	for _, b := range src.Args {
		fv := ir.FreeVars(b)
		for v := range bound {
			if fv[v] {
				return nil
			}
		}
		if !safe(b) {
			return nil
		}
	}
	if single.Op != ir.OpSingleton || !isVarSlot(single.Args[0], k) || single.Args[1].Type.Depth != 0 || single.Args[1].Type.Base != ir.Real {
		return nil
	}
	// The range's variables move above S and the lets: none of those may
	// bind or read a variable of the same name.
	free := ir.FreeVars(e)
	if bound[k] || bound[kv] || free[k] || free[kv] {
		return nil
	}
	v := single.Args[1]
	rt := v.Type
	for i := len(wrap) - 1; i >= 0; i-- {
		w := wrap[i]
		if w.Op == ir.OpLet && inlineLet(w.Args[0]) {
			v = ir.Subst(v, map[string]*ir.Expr{w.Vars[0]: w.Args[0]})
			continue
		}
		x := *w
		x.Args = []*ir.Expr{w.Args[0], v}
		x.Type = rt
		v = &x
	}
	in := *e
	in.Args = []*ir.Expr{e.Args[0], v}
	in.Type = rt
	s := *single
	s.Args = []*ir.Expr{single.Args[0], &in}
	out := *r
	out.Args = []*ir.Expr{src, &s}
	out.Type = e.Type
	return &out
}

// inlineLet reports whether a let of value v may be put in place of its
// variable: a real read of an array at an index with no loop, which a
// product reads as a factor (the read is repeated per key, its errors
// the same).
func inlineLet(v *ir.Expr) bool {
	return v.Op == ir.OpLookup && len(v.Args) == 2 && v.Args[0].Op == ir.OpGlobal && v.Type.Depth == 0 &&
		v.Type.Base == ir.Real && !containsLoop(v.Args[1]) && safe(v.Args[1])
}

// swappedLoop lowers e, a sum whose range swapRange moves outward, as
// the swapped loops when the range lifts, the loops as written kept for
// a range found empty; nil (nothing lowered) when e has no such range or
// the loops as written cannot be lowered.
func (c *compiler) swappedLoop(e *ir.Expr, lb loopBody) *loop {
	sw := c.swapRange(e, lb)
	if sw == nil {
		return nil
	}
	split, n0, d0 := c.splitNext, len(c.nests), len(c.declined)
	c.asWritten = true
	orig := c.nestLoop(e, lb)
	c.asWritten = false
	if orig == nil {
		// The caller lowers it again, as written, and records why not.
		c.splitNext, c.declined = split, c.declined[:d0]
		return nil
	}
	n1 := len(c.nests)
	c.splitNext = split
	l := c.nestLoop(sw, lb)
	if l == nil || l.nest.lift == nil {
		c.nests, c.declined = c.nests[:n1], c.declined[:d0]
		return orig
	}
	// Explain lists the loops that run.
	c.nests = append(c.nests[:n0], c.nests[n1:]...)
	l.nest.orig = orig.nest
	l.nest.info.exec = "swapped outward from inside " + loopHead(e) + ": " + l.nest.info.exec
	return l
}
