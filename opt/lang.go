package opt

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// The e-graph language of SDQLite. Every ir.Op has an operator; binders are
// children: a sum node is (sum K V src body) where K and V are the classes
// of the variables' occurrences. Keeping binder names as children (not in
// the payload) lets one compiled pattern match a sum whatever its variables
// are called, match an occurrence of the bound variable in the body (the
// pattern (sum ?k ?v ?s (if (== ?k ?e) ?b)) repeats ?k), and lets a rule's
// right-hand side reuse or rename binders.
const (
	opVar    egraph.Op = iota // a variable, as an occurrence or a binder child; payload: name symbol
	opGlobal                  // physical object; payload: name symbol
	opInt                     // int constant; payload: the int64 bits
	opReal                    // real constant; payload: the float64 bits
	opBool                    // bool constant; payload 0 or 1
	opEmpty                   // the empty dictionary; payload: depth<<8 | base
	opNeg
	opNot
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
	opCall     // payload: function name symbol; any number of children
	opSingle   // (single k v); payload: ir.Ann
	opLookup   // (lookup d k)
	opRange    // (range lo hi)
	opSubArray // (subarray d lo hi)
	opIf       // (if c then)
	opIfElse   // (ifelse c then else)
	opLet      // (let X val body)
	opSum      // (sum K V src body)
	opMerge    // (merge K1 K2 V e1 e2 body)
	numOps
)

var opNames = [numOps]string{
	opVar: "var", opGlobal: "global", opInt: "int", opReal: "real", opBool: "bool",
	opEmpty: "empty", opNeg: "neg", opNot: "not", opAdd: "+", opSub: "-", opMul: "*", opDiv: "/",
	opMod: "%", opEq: "==", opNe: "!=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=", opAnd: "&&",
	opOr: "||", opCall: "call", opSingle: "single", opLookup: "lookup", opRange: "range",
	opSubArray: "subarray", opIf: "if", opIfElse: "ifelse", opLet: "let", opSum: "sum", opMerge: "merge",
}

var opArity = [numOps]int{
	opNeg: 1, opNot: 1, opAdd: 2, opSub: 2, opMul: 2, opDiv: 2, opMod: 2, opEq: 2, opNe: 2,
	opLt: 2, opLe: 2, opGt: 2, opGe: 2, opAnd: 2, opOr: 2, opCall: -1, opSingle: 2, opLookup: 2,
	opRange: 2, opSubArray: 3, opIf: 2, opIfElse: 3, opLet: 3, opSum: 4, opMerge: 6,
}

// irToOp and opToIR translate the operators that are one-to-one.
var irToOp = map[ir.Op]egraph.Op{
	ir.OpNeg: opNeg, ir.OpNot: opNot, ir.OpAdd: opAdd, ir.OpSub: opSub, ir.OpMul: opMul,
	ir.OpDiv: opDiv, ir.OpMod: opMod, ir.OpEq: opEq, ir.OpNe: opNe, ir.OpLt: opLt, ir.OpLe: opLe,
	ir.OpGt: opGt, ir.OpGe: opGe, ir.OpAnd: opAnd, ir.OpOr: opOr, ir.OpCall: opCall,
	ir.OpSingleton: opSingle, ir.OpLookup: opLookup, ir.OpRange: opRange, ir.OpSubArray: opSubArray,
	ir.OpLet: opLet, ir.OpSum: opSum, ir.OpMerge: opMerge,
}

var opToIR [numOps]ir.Op

func init() {
	for k, v := range irToOp {
		opToIR[v] = k
	}
	opToIR[opIf], opToIR[opIfElse] = ir.OpIf, ir.OpIf
}

// binderCount is the number of leading bind children of a binder operator.
func binderCount(op egraph.Op) int {
	switch op {
	case opLet:
		return 1
	case opSum:
		return 2
	case opMerge:
		return 3
	}
	return 0
}

// inScope reports whether child i of a node with operator op sees the
// node's binders (the body only).
func inScope(op egraph.Op, i int) bool {
	switch op {
	case opLet:
		return i == 2
	case opSum:
		return i == 3
	case opMerge:
		return i == 5
	}
	return false
}

// isBinaryOp reports whether op is a two-argument scalar or dictionary
// operator.
func isBinaryOp(op egraph.Op) bool { return op >= opAdd && op <= opOr }

// lang implements egraph.Language. Names (variables, globals, functions)
// are interned in syms and carried as payloads.
type lang struct {
	syms egraph.Symbols
}

func emptyPayload(t ir.Type) uint64 { return uint64(t.Depth)<<8 | uint64(t.Base) }
func emptyType(p uint64) ir.Type    { return ir.Type{Depth: int(p >> 8), Base: ir.Base(p & 0xff)} }

// Parse implements egraph.Language for the s-expressions that rule
// patterns compile to: heads are operator names, "single@unique" and the
// like for annotated singletons, "var:x", "global:A", "call:exp", and
// constants "int:3", "real:1.5", "bool:true", "empty:2:real".
func (l *lang) Parse(head string, nargs int) (egraph.Op, uint64, error) {
	if name, rest, ok := strings.Cut(head, ":"); ok {
		switch name {
		case "var":
			return opVar, l.syms.Intern(rest), nil
		case "global":
			return opGlobal, l.syms.Intern(rest), nil
		case "call":
			return opCall, l.syms.Intern(rest), nil
		case "int":
			v, err := strconv.ParseInt(rest, 10, 64)
			return opInt, uint64(v), err
		case "real":
			v, err := strconv.ParseFloat(rest, 64)
			return opReal, math.Float64bits(v), err
		case "bool":
			if rest == "true" {
				return opBool, 1, nil
			}
			return opBool, 0, nil
		case "empty":
			d, b, _ := strings.Cut(rest, ":")
			depth, err := strconv.Atoi(d)
			base := map[string]ir.Base{"int": ir.Int, "real": ir.Real}[b]
			return opEmpty, emptyPayload(ir.Type{Depth: depth, Base: base}), err
		}
	}
	if ann, ok := strings.CutPrefix(head, "single"); ok {
		for _, a := range []ir.Ann{ir.AnnNone, ir.AnnUnique, ir.AnnDense, ir.AnnHash} {
			if ann == a.String() {
				return opSingle, uint64(a), checkArity(head, 2, nargs)
			}
		}
	}
	for op := egraph.Op(opNeg); op < numOps; op++ {
		if opNames[op] == head {
			return op, 0, checkArity(head, opArity[op], nargs)
		}
	}
	return 0, 0, fmt.Errorf("unknown operator %q", head)
}

func checkArity(head string, want, got int) error {
	if want >= 0 && want != got {
		return fmt.Errorf("%s takes %d arguments, got %d", head, want, got)
	}
	return nil
}

// Format implements egraph.Language.
func (l *lang) Format(op egraph.Op, payload uint64) string {
	switch op {
	case opVar, opGlobal, opCall:
		return opNames[op] + ":" + l.syms.Name(payload)
	case opInt:
		return "int:" + strconv.FormatInt(int64(payload), 10)
	case opReal:
		return "real:" + strconv.FormatFloat(math.Float64frombits(payload), 'g', -1, 64)
	case opBool:
		return "bool:" + strconv.FormatBool(payload != 0)
	case opEmpty:
		t := emptyType(payload)
		return "empty:" + strconv.Itoa(t.Depth) + ":" + t.Base.String()
	case opSingle:
		return "single" + ir.Ann(payload).String()
	}
	if op < numOps {
		return opNames[op]
	}
	return fmt.Sprintf("op%d", op)
}

// constNode returns the e-node of constant e.
func constNode(e *ir.Expr) egraph.Node {
	switch {
	case e.Type.Depth > 0:
		return egraph.Node{Op: opEmpty, Payload: emptyPayload(e.Type)}
	case e.Type.Base == ir.Real:
		return egraph.Node{Op: opReal, Payload: math.Float64bits(e.F)}
	case e.Type.Base == ir.Bool:
		return egraph.Node{Op: opBool, Payload: uint64(e.I & 1)}
	}
	return egraph.Node{Op: opInt, Payload: uint64(e.I)}
}

// zeroNode returns the node of the zero of type t.
func zeroNode(t ir.Type) egraph.Node {
	switch {
	case t.Depth > 0:
		return egraph.Node{Op: opEmpty, Payload: emptyPayload(t)}
	case t.Base == ir.Real:
		return egraph.Node{Op: opReal, Payload: math.Float64bits(0)}
	case t.Base == ir.Bool:
		return egraph.Node{Op: opBool}
	}
	return egraph.Node{Op: opInt}
}

// isZeroNode reports whether n is a zero constant of any type.
func isZeroNode(n egraph.Node) bool {
	switch n.Op {
	case opInt:
		return n.Payload == 0
	case opReal:
		return math.Float64frombits(n.Payload) == 0
	case opEmpty:
		return true
	}
	return false
}

// isOneNode reports whether n is the constant 1 or 1.0.
func isOneNode(n egraph.Node) bool {
	switch n.Op {
	case opInt:
		return n.Payload == 1
	case opReal:
		return math.Float64frombits(n.Payload) == 1
	}
	return false
}
