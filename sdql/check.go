package sdql

import (
	"fmt"

	"github.com/storel/storel/ir"
)

// checker infers the type of every node of desugared expressions and
// reports type errors. It does not stop at the first error: a node whose
// type cannot be known gets the unknown type, which silences errors about
// its parents so that each mistake is reported once.
type checker struct {
	errs    *errorSink
	globals map[string]ir.Type
	locals  map[string][]ir.Type // innermost binding last
	notes   *desugarNotes
}

// pendingEmpty is the internal type of {} (and of expressions built only
// from {}) until the context tells its depth and leaf type.
var pendingEmpty = ir.Type{Depth: -1}

// poisoned is the type of an expression with an error already reported.
var poisoned = ir.Type{}

func known(t ir.Type) bool   { return t.Base != ir.Unknown }
func pending(t ir.Type) bool { return t.Depth < 0 }

func isNumber(t ir.Type) bool { return t.Depth == 0 && (t.Base == ir.Int || t.Base == ir.Real) }

func promote(a, b ir.Base) ir.Base {
	if a == ir.Real || b == ir.Real {
		return ir.Real
	}
	return a
}

func newChecker(errs *errorSink, notes *desugarNotes) *checker {
	return &checker{errs: errs, globals: map[string]ir.Type{}, locals: map[string][]ir.Type{}, notes: notes}
}

func (c *checker) push(name string, t ir.Type) { c.locals[name] = append(c.locals[name], t) }
func (c *checker) pop(name string)             { c.locals[name] = c.locals[name][:len(c.locals[name])-1] }

// program checks declarations, tensors and the result in order.
func (c *checker) program(p *ir.Program) {
	for _, d := range p.Decls {
		for _, dim := range d.Dims {
			t := c.need(dim)
			if known(t) && t != ir.IntType {
				c.errs.errorf(dim.Pos, "the size of %s must be an int, but %s", d.Name, isA(dim))
			}
		}
		c.globals[d.Name] = d.Type()
	}
	for _, t := range p.Tensors {
		ty := c.need(t.Def)
		if ty.Base == ir.Bool {
			c.errs.errorf(t.Pos, "tensor %s cannot hold a bool: its definition must be a number or a dictionary", t.Name)
		}
		c.push(t.Name, ty)
	}
	if p.Result != nil {
		c.need(p.Result)
	}
	for _, d := range p.Decls {
		for _, dim := range d.Dims {
			sweep(dim)
		}
	}
	for _, t := range p.Tensors {
		sweep(t.Def)
	}
	sweep(p.Result)
}

// sweep gives the unknown type to any node left pending next to an error,
// so that no node keeps the checker's internal marker.
func sweep(e *ir.Expr) {
	ir.Walk(e, func(n *ir.Expr) bool {
		if n != nil && pending(n.Type) {
			n.Type = poisoned
		}
		return true
	})
}

// need checks e where its type must be settled: a {} whose type nothing
// around it tells is an error.
func (c *checker) need(e *ir.Expr) ir.Type {
	t := c.check(e)
	if pending(t) {
		c.errs.errorf(e.Pos, "cannot tell which dictionary {} is here; write it where the other operand of +, -, * or the other branch of if gives its type")
		c.settle(e, poisoned)
		return poisoned
	}
	return t
}

// settle gives every pending node of e the type t (a pending node's
// pending children are in value positions, so they get t too, or t's
// element type below a singleton).
func (c *checker) settle(e *ir.Expr, t ir.Type) {
	if e == nil || !pending(e.Type) {
		return
	}
	e.Type = t
	for i, a := range e.Args {
		if a == nil || !pending(a.Type) {
			continue
		}
		switch {
		case e.Op == ir.OpSingleton && i == 1:
			if t.Depth > 0 {
				c.settle(a, t.Elem())
			} else {
				c.settle(a, poisoned)
			}
		default:
			c.settle(a, t)
		}
	}
}

// aType renders t with an article: "an int", "a {int -> real}".
func aType(t ir.Type) string {
	s := t.String()
	if t.Depth == 0 && t.Base == ir.Int {
		return "an " + s
	}
	return "a " + s
}

// subject names e for a message: its name, or its text when short.
func subject(e *ir.Expr) string {
	switch e.Op {
	case ir.OpVar, ir.OpGlobal:
		return e.Name
	}
	if e.Op == ir.OpConst && e.Type.Depth > 0 && !known(e.Type) {
		return "{}"
	}
	s := e.String()
	if len(s) > 40 {
		return "that expression"
	}
	return s
}

// isA says what e is: "N is an int scalar", "A is a {int -> real}".
func isA(e *ir.Expr) string { return subject(e) + " is " + kindOf(e.Type) }

// kindOf describes a type: "an int scalar", "a bool", "a {int -> real}".
func kindOf(t ir.Type) string {
	if t.Depth == 0 && t.Base != ir.Bool {
		return aType(t) + " scalar"
	}
	return aType(t)
}

// check infers and records the type of e and of its descendants.
func (c *checker) check(e *ir.Expr) ir.Type {
	t := c.infer(e)
	e.Type = t
	return t
}

func (c *checker) infer(e *ir.Expr) ir.Type {
	switch e.Op {
	case ir.OpInvalid:
		return poisoned
	case ir.OpConst:
		if e.Type.Depth > 0 && !known(e.Type) {
			return pendingEmpty
		}
		return e.Type
	case ir.OpVar:
		if ts := c.locals[e.Name]; len(ts) > 0 {
			return ts[len(ts)-1]
		}
		return poisoned
	case ir.OpGlobal:
		if t, ok := c.globals[e.Name]; ok {
			return t
		}
		return poisoned
	case ir.OpNeg:
		t := c.need(e.Args[0])
		if t.Base == ir.Bool {
			c.errs.errorf(e.Pos, "cannot negate a bool with -: use ! (or not) for logical negation")
			return poisoned
		}
		return t
	case ir.OpNot:
		t := c.need(e.Args[0])
		if known(t) && t != ir.BoolType {
			c.errs.errorf(e.Pos, "! needs a bool, but %s", isA(e.Args[0]))
		}
		return ir.BoolType
	case ir.OpAdd, ir.OpSub:
		return c.addSub(e)
	case ir.OpMul:
		return c.mul(e)
	case ir.OpDiv:
		a, b := c.need(e.Args[0]), c.need(e.Args[1])
		if !c.numbers(e, "/ divides numbers", a, b) {
			return poisoned
		}
		if a.Base == ir.Int && b.Base == ir.Int {
			return ir.IntType
		}
		return ir.RealType
	case ir.OpMod:
		a, b := c.need(e.Args[0]), c.need(e.Args[1])
		ok := true
		for i, t := range []ir.Type{a, b} {
			if known(t) && t != ir.IntType {
				c.errs.errorf(e.Pos, "%% needs ints on both sides, but %s", isA(e.Args[i]))
				ok = false
			}
		}
		if !ok || !known(a) || !known(b) {
			return poisoned
		}
		return ir.IntType
	case ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		a, b := c.need(e.Args[0]), c.need(e.Args[1])
		if name, ok := c.notes.repeated[e]; ok {
			for _, t := range []ir.Type{a, b} {
				if known(t) && !isNumber(t) {
					c.errs.errorf(e.Pos, "%s is bound twice in this sum, which requires its two values to be equal, but one of them is %s and only numbers can be compared", name, aType(t))
					break
				}
			}
			return ir.BoolType
		}
		c.numbers(e, e.Op.String()+" compares numbers", a, b)
		return ir.BoolType
	case ir.OpAnd, ir.OpOr:
		a, b := c.need(e.Args[0]), c.need(e.Args[1])
		for i, t := range []ir.Type{a, b} {
			if known(t) && t != ir.BoolType {
				c.errs.errorf(e.Pos, "%s needs bools on both sides, but %s", e.Op, isA(e.Args[i]))
			}
		}
		return ir.BoolType
	case ir.OpCall:
		return c.call(e)
	case ir.OpSingleton:
		k := c.need(e.Args[0])
		if known(k) && k != ir.IntType {
			c.errs.errorf(e.Args[0].Pos, "a dictionary key must be an int, but %s", isA(e.Args[0]))
		}
		v := c.check(e.Args[1])
		switch {
		case pending(v):
			return pendingEmpty
		case v.Base == ir.Bool:
			c.errs.errorf(e.Args[1].Pos, "a dictionary value must be a number or a dictionary, but %s", isA(e.Args[1]))
			return poisoned
		case !known(v):
			return poisoned
		}
		return v.Dict()
	case ir.OpLookup:
		d, k := c.need(e.Args[0]), c.need(e.Args[1])
		c.index(e.Args[1], k, "an index")
		if !known(d) {
			return poisoned
		}
		if d.Depth == 0 {
			c.errs.errorf(e.Pos, "cannot look up a key in %s: it is %s, not a dictionary", subject(e.Args[0]), kindOf(d))
			return poisoned
		}
		return d.Elem()
	case ir.OpRange:
		lo, hi := c.need(e.Args[0]), c.need(e.Args[1])
		c.index(e.Args[0], lo, "a range bound")
		c.index(e.Args[1], hi, "a range bound")
		return ir.Type{Depth: 1, Base: ir.Int}
	case ir.OpSubArray:
		d := c.need(e.Args[0])
		lo, hi := c.need(e.Args[1]), c.need(e.Args[2])
		c.index(e.Args[1], lo, "a subarray bound")
		c.index(e.Args[2], hi, "a subarray bound")
		if !known(d) {
			return poisoned
		}
		if d.Depth == 0 {
			c.errs.errorf(e.Pos, "cannot take a subarray of %s: it is %s, not a dictionary", subject(e.Args[0]), kindOf(d))
			return poisoned
		}
		return d
	case ir.OpIf:
		return c.ifThen(e)
	case ir.OpLet:
		v := c.need(e.Args[0])
		c.push(e.Vars[0], v)
		t := c.check(e.Args[1])
		c.pop(e.Vars[0])
		return t
	case ir.OpSum:
		return c.sum(e)
	case ir.OpMerge:
		return c.merge(e)
	}
	return poisoned
}

// numbers checks that a and b are numeric scalars for operator e.
func (c *checker) numbers(e *ir.Expr, what string, a, b ir.Type) bool {
	ok := true
	for i, t := range []ir.Type{a, b} {
		if known(t) && !isNumber(t) {
			c.errs.errorf(e.Pos, "%s, but %s", what, isA(e.Args[i]))
			ok = false
		}
	}
	return ok && known(a) && known(b)
}

// index checks that an index or bound is an int.
func (c *checker) index(e *ir.Expr, t ir.Type, what string) {
	if known(t) && t != ir.IntType {
		c.errs.errorf(e.Pos, "%s must be an int, but %s", what, isA(e))
	}
}

// pair checks both operands of a binary node, letting a {} on one side
// take its type from a dictionary on the other. bothEmpty reports that
// both sides are still pending.
func (c *checker) pair(e *ir.Expr) (a, b ir.Type, bothEmpty bool) {
	a, b = c.check(e.Args[0]), c.check(e.Args[1])
	switch {
	case pending(a) && pending(b):
		return a, b, true
	case pending(a) && b.Depth > 0 && known(b):
		c.settle(e.Args[0], b)
		a = b
	case pending(b) && a.Depth > 0 && known(a):
		c.settle(e.Args[1], a)
		b = a
	}
	return a, b, false
}

func (c *checker) addSub(e *ir.Expr) ir.Type {
	a, b, bothEmpty := c.pair(e)
	if bothEmpty {
		return pendingEmpty
	}
	verb := "add"
	if e.Op == ir.OpSub {
		verb = "subtract"
	}
	for i, t := range []ir.Type{a, b} {
		if pending(t) {
			other := e.Args[1-i]
			if known(other.Type) {
				c.errs.errorf(e.Pos, "cannot %s {} and %s: {} is a dictionary, but %s", verb, subject(other), isA(other))
			}
			c.settle(e.Args[i], poisoned)
			return poisoned
		}
		if t.Base == ir.Bool {
			c.errs.errorf(e.Pos, "cannot %s bools: %s needs numbers or dictionaries, but %s", verb, e.Op, isA(e.Args[i]))
			return poisoned
		}
	}
	if !known(a) || !known(b) {
		return poisoned
	}
	if a.Depth != b.Depth {
		if e.Op == ir.OpAdd {
			c.errs.errorf(e.Pos, "cannot add %s to %s: both sides of + must have the same dictionary depth", aType(a), aType(b))
		} else {
			c.errs.errorf(e.Pos, "cannot subtract %s from %s: both sides of - must have the same dictionary depth", aType(b), aType(a))
		}
		return poisoned
	}
	return ir.Type{Depth: a.Depth, Base: promote(a.Base, b.Base)}
}

func (c *checker) mul(e *ir.Expr) ir.Type {
	a, b, bothEmpty := c.pair(e)
	if bothEmpty {
		return pendingEmpty
	}
	for i, t := range []ir.Type{a, b} {
		if t.Base == ir.Bool {
			c.errs.errorf(e.Pos, "cannot multiply bools: * needs numbers or dictionaries, but %s", isA(e.Args[i]))
			return poisoned
		}
	}
	// {} times a scalar scales the empty dictionary: still pending.
	if pending(a) || pending(b) {
		other := a
		if pending(a) {
			other = b
		}
		if !known(other) {
			return poisoned
		}
		return pendingEmpty
	}
	if !known(a) || !known(b) {
		return poisoned
	}
	base := promote(a.Base, b.Base)
	switch {
	case a.Depth == 0:
		return ir.Type{Depth: b.Depth, Base: base}
	case b.Depth == 0:
		return ir.Type{Depth: a.Depth, Base: base}
	case a.Depth != b.Depth:
		c.errs.errorf(e.Pos, "cannot multiply %s by %s: a product of two dictionaries is key-wise, so both need the same depth (multiply by a scalar to scale every value)", aType(a), aType(b))
		return poisoned
	}
	return ir.Type{Depth: a.Depth, Base: base}
}

func (c *checker) call(e *ir.Expr) ir.Type {
	if e.Name == "runs" || e.Name == "runend" {
		return c.runsCall(e)
	}
	ok := true
	var types []ir.Type
	for _, a := range e.Args {
		t := c.need(a)
		types = append(types, t)
		switch {
		case !known(t):
			ok = false
		case e.Name == "even_bits" || e.Name == "odd_bits":
			if t != ir.IntType {
				c.errs.errorf(a.Pos, "%s needs an int, but %s", e.Name, isA(a))
				ok = false
			}
		case !isNumber(t):
			c.errs.errorf(a.Pos, "%s needs a number, but %s", e.Name, isA(a))
			ok = false
		}
	}
	if want := builtinArity[e.Name]; len(e.Args) != want {
		c.errs.errorf(e.Pos, "%s takes %d argument%s, not %d", e.Name, want, plural(want), len(e.Args))
		return poisoned
	}
	switch e.Name {
	case "exp", "log", "sqrt":
		return ir.RealType
	case "even_bits", "odd_bits":
		return ir.IntType
	}
	if !ok {
		return poisoned
	}
	switch e.Name {
	case "abs":
		return types[0]
	case "min", "max":
		return ir.Type{Base: promote(types[0].Base, types[1].Base)}
	}
	c.errs.errorf(e.Pos, "unknown function %s", e.Name)
	return poisoned
}

// runsCall types runs(D), the first position of each run of equal values
// of the int array D (a window of one) mapped to the value, and
// runend(A, p, hi), the position after the run of A's values that starts
// at p, at most hi.
func (c *checker) runsCall(e *ir.Expr) ir.Type {
	want := builtinArity[e.Name]
	if len(e.Args) != want {
		c.errs.errorf(e.Pos, "%s takes %d argument%s, not %d", e.Name, want, plural(want), len(e.Args))
		return poisoned
	}
	vec := ir.Type{Depth: 1, Base: ir.Int}
	d := c.need(e.Args[0])
	ok := known(d)
	if ok && d != vec {
		c.errs.errorf(e.Args[0].Pos, "%s needs an int array, but %s", e.Name, isA(e.Args[0]))
		ok = false
	}
	for _, a := range e.Args[1:] {
		t := c.need(a)
		c.index(a, t, "a position")
		ok = ok && known(t)
	}
	switch {
	case !ok:
		return poisoned
	case e.Name == "runs":
		return vec
	}
	return ir.IntType
}

func (c *checker) ifThen(e *ir.Expr) ir.Type {
	cond := c.need(e.Args[0])
	if known(cond) && cond != ir.BoolType {
		hint := ""
		if isNumber(cond) {
			hint = fmt.Sprintf(" (write %s != 0 to test for a non-zero value)", subject(e.Args[0]))
		}
		c.errs.errorf(e.Args[0].Pos, "the condition of if must be a bool, but %s%s", isA(e.Args[0]), hint)
	}
	then := c.check(e.Args[1])
	if len(e.Args) < 3 {
		return then
	}
	els := c.check(e.Args[2])
	switch {
	case pending(then) && pending(els):
		return pendingEmpty
	case pending(then) || pending(els):
		other, otherArg, emptyArg := els, e.Args[2], e.Args[1]
		if pending(els) {
			other, otherArg, emptyArg = then, e.Args[1], e.Args[2]
		}
		if !known(other) {
			c.settle(emptyArg, poisoned)
			return poisoned
		}
		if other.Depth == 0 {
			c.errs.errorf(emptyArg.Pos, "the branches of if differ: one is {}, a dictionary, but %s", isA(otherArg))
			c.settle(emptyArg, poisoned)
			return poisoned
		}
		c.settle(emptyArg, other)
		return other
	case !known(then) || !known(els):
		return poisoned
	case (then.Base == ir.Bool) != (els.Base == ir.Bool) || then.Depth != els.Depth:
		c.errs.errorf(e.Pos, "the branches of if must have the same type up to int/real, but the then branch is %s and the else branch is %s", aType(then), aType(els))
		return poisoned
	}
	return ir.Type{Depth: then.Depth, Base: promote(then.Base, els.Base)}
}

// body checks the body of a sum or merge, which is added up.
func (c *checker) body(e *ir.Expr, what string) ir.Type {
	t := c.check(e)
	if t.Base == ir.Bool {
		c.errs.errorf(e.Pos, "the body of %s is added up, so it must be a number or a dictionary, but %s", what, isA(e))
		return poisoned
	}
	return t
}

func (c *checker) sum(e *ir.Expr) ir.Type {
	src := c.need(e.Args[0])
	elem := poisoned
	switch {
	case !known(src):
	case src.Depth == 0:
		if pat, ok := c.notes.tupleLevels[e.Args[0]]; ok {
			c.errs.errorf(e.Args[0].Pos, "the key pattern %s has more components than the dictionary has levels: nothing is left to iterate for %s", pat, e.Vars[0])
			break
		}
		c.errs.errorf(e.Args[0].Pos, "sum needs a dictionary to iterate over, but %s", isA(e.Args[0]))
	default:
		elem = src.Elem()
	}
	k, v := e.Vars[0], e.Vars[1]
	c.push(k, ir.IntType)
	c.push(v, elem)
	t := c.body(e.Args[1], "sum")
	c.pop(v)
	c.pop(k)
	return t
}

func (c *checker) merge(e *ir.Expr) ir.Type {
	for _, src := range e.Args[:2] {
		t := c.need(src)
		if known(t) && t != (ir.Type{Depth: 1, Base: ir.Int}) {
			c.errs.errorf(src.Pos, "merge intersects two sorted vectors of ints, {int -> int}, but %s", isA(src))
		}
	}
	for _, v := range e.Vars {
		c.push(v, ir.IntType)
	}
	t := c.body(e.Args[2], "merge")
	for _, v := range e.Vars {
		c.pop(v)
	}
	return t
}
