package egraph

import "fmt"

// Op identifies an operator of the client's language. The package gives it
// no meaning beyond identity: the client's Language names, parses and prints
// it.
type Op uint32

// ClassID names an e-class. IDs are handed out densely from 0; after a union
// only one of the two IDs is canonical, and Find maps any ID to it.
type ClassID uint32

// NodeID names one e-node stored in an e-graph. It stays valid for the life
// of the graph, though a node that turned out to duplicate another during
// rebuild is dropped from its class.
type NodeID uint32

// Node is an operator applied to child e-classes. Payload carries whatever
// small datum the operator needs (an integer constant, the bits of a float,
// an index into a client-side symbol table); operators without one leave it
// 0. Two nodes are the same node exactly when Op, Payload and Children are
// equal, which is what hash-consing relies on.
//
// In a RecExpr the same struct is reused and Children hold indices into the
// expression's node slice rather than e-class IDs.
type Node struct {
	Op       Op
	Payload  uint64
	Children []ClassID
}

// Language is what a client supplies so that patterns and expressions can be
// read from s-expressions and printed back. Arity checking belongs to Parse:
// it is told how many children the head was written with.
type Language interface {
	// Parse resolves a head: a bare atom (nargs 0) or the first atom of a
	// list with nargs children, to an operator and its payload.
	Parse(head string, nargs int) (Op, uint64, error)
	// Format prints the head of a node (operator name, or its payload for
	// leaves such as numbers and symbols).
	Format(op Op, payload uint64) string
}

// VariadicArity marks an operator of OpTable that accepts any number of
// children.
const VariadicArity = -1

type opInfo struct {
	name  string
	arity int
	// Leaf operators carrying a payload are read and printed by these.
	parseLeaf  func(tok string) (uint64, bool)
	formatLeaf func(payload uint64) string
}

// OpTable is a ready-made Language for the common case: named operators of
// fixed arity, plus leaf operators whose payload is spelled by the atom itself
// (numbers, symbols). Clients with richer needs implement Language directly.
type OpTable struct {
	ops    []opInfo
	byName map[string]Op
	leaves []Op // payload-carrying leaves, tried in definition order
}

// NewOpTable returns an empty table.
func NewOpTable() *OpTable {
	return &OpTable{byName: map[string]Op{}}
}

// Define adds an operator with a name and an arity (VariadicArity for any)
// and returns its Op. Defining a name twice is a programming error and
// panics, like regexp.MustCompile on a bad literal.
func (t *OpTable) Define(name string, arity int) Op {
	if _, dup := t.byName[name]; dup {
		panic("egraph: operator " + name + " defined twice")
	}
	op := Op(len(t.ops))
	t.ops = append(t.ops, opInfo{name: name, arity: arity})
	t.byName[name] = op
	return op
}

// DefineLeaf adds a leaf operator whose payload is read from an atom by parse
// (which reports whether the atom belongs to this operator) and printed back
// by format. Atoms that name a Define'd operator take precedence; leaves are
// tried in definition order.
func (t *OpTable) DefineLeaf(name string, parse func(tok string) (uint64, bool), format func(payload uint64) string) Op {
	op := t.Define(name, 0)
	t.ops[op].parseLeaf = parse
	t.ops[op].formatLeaf = format
	t.leaves = append(t.leaves, op)
	return op
}

// Name returns the name op was defined with.
func (t *OpTable) Name(op Op) string {
	if int(op) < len(t.ops) {
		return t.ops[op].name
	}
	return fmt.Sprintf("op%d", op)
}

// Parse implements Language.
func (t *OpTable) Parse(head string, nargs int) (Op, uint64, error) {
	if op, ok := t.byName[head]; ok && t.ops[op].parseLeaf == nil {
		if a := t.ops[op].arity; a != VariadicArity && a != nargs {
			return 0, 0, fmt.Errorf("operator %s takes %d argument%s, got %d", head, a, plural(a), nargs)
		}
		return op, 0, nil
	}
	if nargs == 0 {
		for _, op := range t.leaves {
			if p, ok := t.ops[op].parseLeaf(head); ok {
				return op, p, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("unknown operator %q", head)
}

// Format implements Language.
func (t *OpTable) Format(op Op, payload uint64) string {
	if int(op) >= len(t.ops) {
		return fmt.Sprintf("op%d", op)
	}
	if f := t.ops[op].formatLeaf; f != nil {
		return f(payload)
	}
	return t.ops[op].name
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
