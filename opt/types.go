package opt

import (
	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// The types of e-nodes, computed from their children's types exactly as the
// front end's checker does (sdql/check.go), so that every plan extracted
// from the e-graph is fully typed. nodeType also rejects ill-typed nodes: a
// rule's right-hand side that would not type-check is not added.

func promote(a, b ir.Base) ir.Base {
	if a == ir.Real || b == ir.Real {
		return ir.Real
	}
	return a
}

func isNumber(t ir.Type) bool { return t.Depth == 0 && (t.Base == ir.Int || t.Base == ir.Real) }

// typeEnv gives the types the node rules cannot compute: variables and
// globals.
type typeEnv interface {
	varType(sym uint64) (ir.Type, bool)
	globalType(sym uint64) (ir.Type, bool)
	symName(sym uint64) string
}

// nodeType returns the type of n given its children's types, and false if
// n is ill-typed.
func nodeType(env typeEnv, n egraph.Node, kids []ir.Type) (ir.Type, bool) {
	switch n.Op {
	case opVar:
		return env.varType(n.Payload)
	case opGlobal:
		return env.globalType(n.Payload)
	case opInt:
		return ir.IntType, true
	case opReal:
		return ir.RealType, true
	case opBool:
		return ir.BoolType, true
	case opEmpty:
		return emptyType(n.Payload), true
	case opNeg:
		return kids[0], kids[0].Base == ir.Int || kids[0].Base == ir.Real
	case opNot:
		return ir.BoolType, kids[0] == ir.BoolType
	case opAdd, opSub:
		a, b := kids[0], kids[1]
		if a.Depth != b.Depth || a.Base == ir.Bool || b.Base == ir.Bool {
			return ir.Type{}, false
		}
		return ir.Type{Depth: a.Depth, Base: promote(a.Base, b.Base)}, true
	case opMul:
		a, b := kids[0], kids[1]
		if a.Base == ir.Bool || b.Base == ir.Bool || (a.Depth > 0 && b.Depth > 0 && a.Depth != b.Depth) {
			return ir.Type{}, false
		}
		return ir.Type{Depth: max(a.Depth, b.Depth), Base: promote(a.Base, b.Base)}, true
	case opDiv:
		a, b := kids[0], kids[1]
		if !isNumber(a) || !isNumber(b) {
			return ir.Type{}, false
		}
		if a.Base == ir.Int && b.Base == ir.Int {
			return ir.IntType, true
		}
		return ir.RealType, true
	case opMod:
		return ir.IntType, kids[0] == ir.IntType && kids[1] == ir.IntType
	case opEq, opNe, opLt, opLe, opGt, opGe:
		return ir.BoolType, isNumber(kids[0]) && isNumber(kids[1])
	case opAnd, opOr:
		return ir.BoolType, kids[0] == ir.BoolType && kids[1] == ir.BoolType
	case opCall:
		vec := ir.Type{Depth: 1, Base: ir.Int}
		switch env.symName(n.Payload) {
		case "runs":
			return vec, len(kids) == 1 && kids[0] == vec
		case "runend":
			return ir.IntType, len(kids) == 3 && kids[0] == vec && kids[1] == ir.IntType && kids[2] == ir.IntType
		}
		for _, k := range kids {
			if !isNumber(k) {
				return ir.Type{}, false
			}
		}
		switch env.symName(n.Payload) {
		case "exp", "log", "sqrt":
			return ir.RealType, len(kids) == 1
		case "even_bits", "odd_bits":
			return ir.IntType, len(kids) == 1 && kids[0] == ir.IntType
		case "abs":
			if len(kids) != 1 {
				return ir.Type{}, false
			}
			return kids[0], true
		case "min", "max":
			if len(kids) != 2 {
				return ir.Type{}, false
			}
			return ir.Type{Base: promote(kids[0].Base, kids[1].Base)}, true
		}
		return ir.Type{}, false
	case opSingle:
		v := kids[1]
		return v.Dict(), kids[0] == ir.IntType && v.Base != ir.Bool && v.Base != ir.Unknown
	case opLookup:
		d := kids[0]
		return d.Elem(), d.Depth > 0 && kids[1] == ir.IntType
	case opRange:
		return ir.Type{Depth: 1, Base: ir.Int}, kids[0] == ir.IntType && kids[1] == ir.IntType
	case opSubArray:
		return kids[0], kids[0].Depth > 0 && kids[1] == ir.IntType && kids[2] == ir.IntType
	case opIf:
		return kids[1], kids[0] == ir.BoolType
	case opIfElse:
		a, b := kids[1], kids[2]
		if kids[0] != ir.BoolType || a.Depth != b.Depth || (a.Base == ir.Bool) != (b.Base == ir.Bool) {
			return ir.Type{}, false
		}
		return ir.Type{Depth: a.Depth, Base: promote(a.Base, b.Base)}, true
	case opLet:
		return kids[2], kids[1].Base != ir.Unknown
	case opSum:
		return kids[3], kids[2].Depth > 0 && kids[3].Base != ir.Bool
	case opMerge:
		vec := ir.Type{Depth: 1, Base: ir.Int}
		return kids[5], kids[3] == vec && kids[4] == vec && kids[5].Base != ir.Bool
	}
	return ir.Type{}, false
}
