package engine

import (
	"github.com/storel/storel/ir"
)

// Optimized plans wrap loop bodies in guards and lets:
//
//	sum(<p, k> in A_idx2(...))
//	  if 0 <= k && k < B_len1 then
//	    let t = A_val(p) in
//	      sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> B_val(q) * t }
//
// A prelude is that sequence of guards (if without else) and lets in
// front of a body's core; preludeRun and fused bodies run it, guards made
// of comparisons of int variables tested in place.

// step is one piece of a prelude.
type step struct {
	set   func(*frame) // a let: store the value in its slot
	cond  boolFn       // a guard tested through its closure
	tests []rangeTest  // a guard of simple comparisons (cond nil)
	read  *arrayLet    // a let of a physical array read, done in place
}

// arrayLet is let x = A(i + c) for a physical array A and an int variable
// i.
type arrayLet struct {
	arr  *cell
	slot int // of i
	off  int64
	dst  int // x's slot (real or int by A's elements)
	e    *ir.Expr
}

func (l *arrayLet) run(fr *frame) bool {
	k := fr.i[l.slot] + l.off
	if l.arr.info.Elem == ir.Real {
		a := l.arr.reals
		if uint64(k) >= uint64(len(a)) {
			fr.fail(boundsError(l.e, l.arr.name, k, int64(len(a))))
			return false
		}
		fr.f[l.dst] = a[k]
		return true
	}
	a := l.arr.ints
	if uint64(k) >= uint64(len(a)) {
		fr.fail(boundsError(l.e, l.arr.name, k, int64(len(a))))
		return false
	}
	fr.i[l.dst] = a[k]
	return true
}

// rangeTest is x op bound for an int variable x.
type rangeTest struct {
	slot  int
	op    ir.Op
	bound operand
}

// operand is an int constant, variable or physical scalar.
type operand struct {
	slot int // >= 0: a variable
	cl   *cell
	k    int64
}

func (o *operand) value(fr *frame) int64 {
	switch {
	case o.slot >= 0:
		return fr.i[o.slot]
	case o.cl != nil:
		return o.cl.scalarI
	}
	return o.k
}

func (t *rangeTest) holds(fr *frame) bool {
	return cmpInt(t.op, fr.i[t.slot], t.bound.value(fr))
}

// runSteps runs a prelude; false when a guard fails or an error occurs
// (then the core must not run).
func runSteps(fr *frame, steps []step) bool {
	for i := range steps {
		s := &steps[i]
		switch {
		case s.read != nil:
			if !s.read.run(fr) {
				return false
			}
		case s.set != nil:
			s.set(fr)
			if fr.err != nil {
				return false
			}
		case s.cond != nil:
			if !s.cond(fr) {
				return false
			}
		default:
			for j := range s.tests {
				if !s.tests[j].holds(fr) {
					return false
				}
			}
		}
	}
	return true
}

// stripPrelude splits body into its prelude (guards and lets, outermost
// first) and its core.
func stripPrelude(body *ir.Expr) ([]*ir.Expr, *ir.Expr) {
	var pre []*ir.Expr
	for {
		switch {
		case body.Op == ir.OpIf && len(body.Args) == 2:
			pre = append(pre, body)
			body = body.Args[1]
		case body.Op == ir.OpLet:
			pre = append(pre, body)
			body = body.Args[1]
		default:
			return pre, body
		}
	}
}

// letNames lists the variables the lets of a prelude bind.
func letNames(pre []*ir.Expr) []string {
	var names []string
	for _, p := range pre {
		if p.Op == ir.OpLet {
			names = append(names, p.Vars[0])
		}
	}
	return names
}

// declarePrelude declares the variables of a prelude's lets for type
// inference (no slots) and returns how many it declared.
func (c *compiler) declarePrelude(pre []*ir.Expr) int {
	n := 0
	for _, p := range pre {
		if p.Op == ir.OpLet {
			c.declare(p.Vars[0], c.typeOf(p.Args[0]))
			n++
		}
	}
	return n
}

// compileSteps compiles a prelude, binding the lets' variables (the caller
// unbinds the returned count once the core is compiled).
func (c *compiler) compileSteps(pre []*ir.Expr) ([]step, int) {
	var steps []step
	lets := 0
	for _, p := range pre {
		if p.Op == ir.OpLet {
			if v := p.Args[0]; v.Op == ir.OpLookup && v.Args[0].Op == ir.OpGlobal {
				if cl := c.cell(v.Args[0]); cl.info.Kind == ir.ObjArray {
					if k := c.keyFn(v.Args[1]); k.aff {
						dst := c.bind(p.Vars[0], ir.Type{Base: cl.info.Elem})
						steps = append(steps, step{read: &arrayLet{arr: cl, slot: k.affSlot, off: k.affOff, dst: dst, e: v}})
						lets++
						continue
					}
				}
			}
			steps = append(steps, step{set: c.letValue(p)})
			lets++
			continue
		}
		steps = append(steps, c.guardStep(p.Args[0]))
	}
	return steps, lets
}

// guardStep compiles a condition, in place when it is a conjunction of
// comparisons between an int variable and an int constant, variable or
// physical scalar.
func (c *compiler) guardStep(cond *ir.Expr) step {
	var conj []*ir.Expr
	var flatten func(e *ir.Expr)
	flatten = func(e *ir.Expr) {
		if e.Op == ir.OpAnd {
			flatten(e.Args[0])
			flatten(e.Args[1])
			return
		}
		conj = append(conj, e)
	}
	flatten(cond)
	var tests []rangeTest
	for _, e := range conj {
		t, ok := c.rangeTest(e)
		if !ok {
			return step{cond: c.boolExpr(cond)}
		}
		tests = append(tests, t)
	}
	return step{tests: tests}
}

var flipped = map[ir.Op]ir.Op{ir.OpLt: ir.OpGt, ir.OpLe: ir.OpGe, ir.OpGt: ir.OpLt, ir.OpGe: ir.OpLe, ir.OpEq: ir.OpEq, ir.OpNe: ir.OpNe}

func (c *compiler) rangeTest(e *ir.Expr) (rangeTest, bool) {
	op, ok := flipped[e.Op]
	if !ok {
		return rangeTest{}, false
	}
	x, y := e.Args[0], e.Args[1]
	if sx, ok := c.intSlot(x); ok {
		if b, ok := c.intOperand(y); ok {
			return rangeTest{slot: sx, op: e.Op, bound: b}, true
		}
	}
	if sy, ok := c.intSlot(y); ok {
		if b, ok := c.intOperand(x); ok {
			return rangeTest{slot: sy, op: op, bound: b}, true
		}
	}
	return rangeTest{}, false
}

// intSlot returns the slot of an int variable.
func (c *compiler) intSlot(e *ir.Expr) (int, bool) {
	if e.Op != ir.OpVar {
		return 0, false
	}
	b, ok := c.lookupVar(e.Name)
	if !ok || b.slot < 0 || b.t != ir.IntType {
		return 0, false
	}
	return b.slot, true
}

func (c *compiler) intOperand(e *ir.Expr) (operand, bool) {
	if s, ok := c.intSlot(e); ok {
		return operand{slot: s}, true
	}
	switch e.Op {
	case ir.OpConst:
		if c.typeOf(e) == ir.IntType {
			return operand{slot: -1, k: e.I}, true
		}
	case ir.OpGlobal:
		if cl := c.cell(e); cl.info.Kind == ir.ObjScalar && cl.info.Elem == ir.Int {
			return operand{slot: -1, cl: cl}, true
		}
	}
	return operand{}, false
}

// windowPrelude is a prelude of an outer loop that can run
// without its steps: guards comparing the key k (slot vs) with constants
// and physical scalars, and lets of physical arrays read at the position
// p (slot ks). For a window of positions whose keys all pass the guards
// (decided from the key array's range, Array.IntRange) and whose reads
// all fall inside their arrays, the loop stores the lets' values itself:
// in the MMM plan
//
//	sum(<p, k> in A_idx2(...)) if 0 <= k && k < B_len1 then let t = A_val(p) in ...
//
// that is one unchecked load per entry instead of running the steps
// through closures.
type windowPrelude struct {
	tests []rangeTest
	reads []*arrayLet
}

// windowPreludeOf returns steps as a windowPrelude, or nil if one of them
// is of another kind.
func windowPreludeOf(steps []step, ks, vs int) *windowPrelude {
	if len(steps) == 0 || ks < 0 {
		return nil
	}
	w := &windowPrelude{}
	for _, s := range steps {
		switch {
		case s.read != nil:
			if s.read.slot != ks {
				return nil
			}
			w.reads = append(w.reads, s.read)
		case s.set == nil && s.cond == nil:
			for _, t := range s.tests {
				if t.slot != vs || t.bound.slot >= 0 {
					return nil
				}
			}
			w.tests = append(w.tests, s.tests...)
		default:
			return nil
		}
	}
	return w
}

// covers reports whether, for every position of [plo, phi) and every key
// of [kmin, kmax], the guards hold and the reads fall inside their
// arrays.
func (w *windowPrelude) covers(kmin, kmax, plo, phi int64) bool {
	for _, r := range w.reads {
		n := int64(len(r.arr.ints))
		if r.arr.info.Elem == ir.Real {
			n = int64(len(r.arr.reals))
		}
		if plo < phi && (plo+r.off < 0 || phi-1+r.off >= n) {
			return false
		}
	}
	if kmin > kmax {
		return true
	}
	for i := range w.tests {
		// By pointer: a copy of the test went through the stack, and that
		// store stalled behind the stores of the rows compacted before.
		t := &w.tests[i]
		b := t.bound.value(nil)
		var ok bool
		switch t.op {
		case ir.OpLt:
			ok = kmax < b
		case ir.OpLe:
			ok = kmax <= b
		case ir.OpGt:
			ok = kmin > b
		case ir.OpGe:
			ok = kmin >= b
		case ir.OpEq:
			ok = kmin == b && kmax == b
		default:
			ok = b < kmin || b > kmax
		}
		if !ok {
			return false
		}
	}
	return true
}

// load stores the lets' values at position p (covers said they exist).
func (w *windowPrelude) load(fr *frame, p int64) {
	for _, r := range w.reads {
		if r.arr.info.Elem == ir.Real {
			fr.f[r.dst] = r.arr.reals[p+r.off]
		} else {
			fr.i[r.dst] = r.arr.ints[p+r.off]
		}
	}
}
