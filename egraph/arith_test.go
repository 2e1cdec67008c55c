package egraph

import (
	"fmt"
	"strconv"
)

// A tiny arithmetic language for the tests: integer constants, symbols, and
// a few operators, with a constant-folding analysis.

type arithLang struct {
	*OpTable
	syms                                            *Symbols
	num, sym, add, sub, mul, div, shl, neg, f, g, h Op
}

func newArith() *arithLang {
	l := &arithLang{OpTable: NewOpTable(), syms: &Symbols{}}
	l.add = l.Define("+", 2)
	l.sub = l.Define("-", 2)
	l.mul = l.Define("*", 2)
	l.div = l.Define("/", 2)
	l.shl = l.Define("<<", 2)
	l.neg = l.Define("neg", 1)
	l.f = l.Define("f", 1)
	l.g = l.Define("g", 1)
	l.h = l.Define("h", VariadicArity)
	l.num = l.DefineLeaf("num",
		func(tok string) (uint64, bool) {
			v, err := strconv.ParseInt(tok, 10, 64)
			return uint64(v), err == nil
		},
		func(p uint64) string { return strconv.FormatInt(int64(p), 10) })
	l.sym = l.DefineLeaf("sym",
		func(tok string) (uint64, bool) { return l.syms.Intern(tok), true },
		func(p uint64) string { return l.syms.Name(p) })
	return l
}

func (l *arithLang) Num(v int64) Node { return Node{Op: l.num, Payload: uint64(v)} }
func (l *arithLang) Sym(s string) Node {
	return Node{Op: l.sym, Payload: l.syms.Intern(s)}
}
func (l *arithLang) Op(op Op, kids ...ClassID) Node { return Node{Op: op, Children: kids} }

// constant is the constant-folding datum: the value a class is known to
// equal, if any.
type constant struct {
	val   int64
	known bool
}

type constFold struct {
	l         *arithLang
	conflicts []string // pairs of distinct constants found equal
	noModify  bool     // don't add the folded constant to its class
}

func (a *constFold) Make(g *EGraph[constant], n Node) constant {
	l := a.l
	if n.Op == l.num {
		return constant{int64(n.Payload), true}
	}
	if len(n.Children) != 2 {
		return constant{}
	}
	x, y := g.Data(n.Children[0]), g.Data(n.Children[1])
	if !x.known || !y.known {
		return constant{}
	}
	switch n.Op {
	case l.add:
		return constant{x.val + y.val, true}
	case l.sub:
		return constant{x.val - y.val, true}
	case l.mul:
		return constant{x.val * y.val, true}
	case l.div:
		if y.val != 0 && x.val%y.val == 0 {
			return constant{x.val / y.val, true}
		}
	case l.shl:
		if y.val >= 0 && y.val < 63 {
			return constant{x.val << y.val, true}
		}
	}
	return constant{}
}

func (a *constFold) Merge(into *constant, from constant) MergeResult {
	switch {
	case into.known && from.known:
		if into.val != from.val {
			a.conflicts = append(a.conflicts, fmt.Sprintf("%d=%d", into.val, from.val))
		}
		return MergeResult{}
	case from.known:
		*into = from
		return MergeResult{IntoChanged: true}
	case into.known:
		return MergeResult{FromChanged: true}
	}
	return MergeResult{}
}

func (a *constFold) Modify(g *EGraph[constant], id ClassID) {
	if d := g.Data(id); d.known && !a.noModify {
		g.Union(id, g.Add(a.l.Num(d.val)))
	}
}

func newConstGraph() (*arithLang, *constFold, *EGraph[constant]) {
	l := newArith()
	a := &constFold{l: l}
	return l, a, New[constant](l, a)
}

func newPlainGraph() (*arithLang, *EGraph[NoData]) {
	l := newArith()
	return l, New[NoData](l, NoAnalysis{})
}

func mustExpr(l Language, src string) *RecExpr {
	e, err := ParseExpr(l, src)
	if err != nil {
		panic(err)
	}
	return e
}

func mustRewrite[D any](l Language, name, lhs, rhs string) *Rewrite[D] {
	rw, err := ParseRewrite[D](l, name, lhs, rhs)
	if err != nil {
		panic(err)
	}
	return rw
}
