package sdql

import "github.com/storel/storel/ir"

// Node is any node of the SDQLite syntax tree. Every node knows where it
// starts in the source.
type Node interface {
	Pos() ir.Pos
}

// Expr is a surface expression. The concrete types are the pointer types
// below; Desugar turns them into ir.Expr.
type Expr interface {
	Node
	exprNode()
}

type (
	// Ident is a name: a local variable, a tensor or a declared object.
	Ident struct {
		At   ir.Pos
		Name string
	}

	// IntLit is an integer literal. Value may be 1<<63, which is only valid
	// right after a unary minus.
	IntLit struct {
		At    ir.Pos
		Value uint64
		Text  string
	}

	// RealLit is a real literal such as 1.5, .5, 2. or 1e-3.
	RealLit struct {
		At    ir.Pos
		Value float64
		Text  string
	}

	// BoolLit is true or false.
	BoolLit struct {
		At    ir.Pos
		Value bool
	}

	// Paren is a parenthesized expression ( X ).
	Paren struct {
		At ir.Pos
		X  Expr
	}

	// Tuple is (X1, ..., Xn) or (), valid only as a dictionary key.
	Tuple struct {
		At    ir.Pos
		Elems []Expr
	}

	// Unary is -X, !X or not X.
	Unary struct {
		At ir.Pos
		Op ir.Op // ir.OpNeg or ir.OpNot
		X  Expr
	}

	// Binary is X op Y; At is the position of the operator.
	Binary struct {
		At   ir.Pos
		Op   ir.Op // an ir binary operator (OpAdd ... OpOr)
		X, Y Expr
	}

	// Range is Lo:Hi, the dictionary {i -> i} for i in [Lo, Hi); as the
	// only argument of an application, e(Lo:Hi) is a subarray.
	Range struct {
		At     ir.Pos // position of the colon
		Lo, Hi Expr
	}

	// Apply is Fn(Args...): dictionary lookup, curried over the arguments.
	Apply struct {
		At   ir.Pos // position of the opening parenthesis
		Fn   Expr
		Args []Expr
	}

	// Call is a built-in scalar function: exp log abs sqrt even_bits
	// odd_bits min max.
	Call struct {
		At   ir.Pos
		Fn   string
		Args []Expr
	}

	// Dict is a dictionary literal { k1 -> v1, ..., kn -> vn }; no entries
	// is the empty dictionary {}.
	Dict struct {
		At      ir.Pos
		Entries []*Entry
	}

	// If is if Cond then Then [else Else].
	If struct {
		At   ir.Pos
		Cond Expr
		Then Expr
		Else Expr // nil when absent
	}

	// Let is let x1 = e1, ..., xn = en in Body.
	Let struct {
		At    ir.Pos
		Binds []*Binding
		Body  Expr
	}

	// Sum is sum(<k1,v1> in e1, ..., <kn,vn> in en) Body.
	Sum struct {
		At   ir.Pos
		Gens []*Generator
		Body Expr
	}

	// Merge is merge(<K1,K2,V> in <E1,E2>) Body, a sorted intersection.
	Merge struct {
		At        ir.Pos
		K1, K2, V *Ident
		E1, E2    Expr
		Body      Expr
	}
)

// Entry is one key -> value pair of a dictionary literal. Key is a Tuple
// for (i, j) and () keys.
type Entry struct {
	At    ir.Pos
	Ann   ir.Ann
	Key   Expr
	Value Expr
}

// Binding is x = Value in a let.
type Binding struct {
	Name  *Ident // "_" for a wildcard
	Value Expr
}

// Generator is <Key, Value> in Src. Key has one name, or several for a
// tuple pattern (Tuple reports which was written); a name may be "_".
type Generator struct {
	At    ir.Pos
	Keys  []*Ident
	Tuple bool
	Value *Ident
	Src   Expr
}

func (e *Ident) Pos() ir.Pos   { return e.At }
func (e *IntLit) Pos() ir.Pos  { return e.At }
func (e *RealLit) Pos() ir.Pos { return e.At }
func (e *BoolLit) Pos() ir.Pos { return e.At }
func (e *Paren) Pos() ir.Pos   { return e.At }
func (e *Tuple) Pos() ir.Pos   { return e.At }
func (e *Unary) Pos() ir.Pos   { return e.At }
func (e *Binary) Pos() ir.Pos  { return e.At }
func (e *Range) Pos() ir.Pos   { return e.At }
func (e *Apply) Pos() ir.Pos   { return e.At }
func (e *Call) Pos() ir.Pos    { return e.At }
func (e *Dict) Pos() ir.Pos    { return e.At }
func (e *If) Pos() ir.Pos      { return e.At }
func (e *Let) Pos() ir.Pos     { return e.At }
func (e *Sum) Pos() ir.Pos     { return e.At }
func (e *Merge) Pos() ir.Pos   { return e.At }

func (*Ident) exprNode()   {}
func (*IntLit) exprNode()  {}
func (*RealLit) exprNode() {}
func (*BoolLit) exprNode() {}
func (*Paren) exprNode()   {}
func (*Tuple) exprNode()   {}
func (*Unary) exprNode()   {}
func (*Binary) exprNode()  {}
func (*Range) exprNode()   {}
func (*Apply) exprNode()   {}
func (*Call) exprNode()    {}
func (*Dict) exprNode()    {}
func (*If) exprNode()      {}
func (*Let) exprNode()     {}
func (*Sum) exprNode()     {}
func (*Merge) exprNode()   {}

// Stmt is a statement of a compilation unit.
type Stmt interface {
	Node
	stmtNode()
}

// CreateObjects is CREATE [int|real] SCALAR|ARRAY|HASHMAP|TRIE ... declaring
// one or more physical objects of the same kind and element type.
type CreateObjects struct {
	At      ir.Pos
	Kind    ir.ObjKind
	Elem    ir.Base // ir.Real when the statement names no type
	Typed   bool    // whether int or real was written
	Objects []*ObjectSpec
}

// ObjectSpec is one declared object with its sizes: none for a SCALAR,
// one for an ARRAY, one or more for a HASHMAP or TRIE.
type ObjectSpec struct {
	Name *Ident
	Dims []Expr
}

// CreateTensor is CREATE TENSOR Name AS Def.
type CreateTensor struct {
	At   ir.Pos
	Name *Ident
	Def  Expr
}

// ExprStmt is the final bare expression of a program: its result.
type ExprStmt struct {
	X Expr
}

func (s *CreateObjects) Pos() ir.Pos { return s.At }
func (s *CreateTensor) Pos() ir.Pos  { return s.At }
func (s *ExprStmt) Pos() ir.Pos      { return s.X.Pos() }

func (*CreateObjects) stmtNode() {}
func (*CreateTensor) stmtNode()  {}
func (*ExprStmt) stmtNode()      {}

// File is the syntax tree of one source.
type File struct {
	Name  string
	Stmts []Stmt
}

// Pos returns the start of the file.
func (f *File) Pos() ir.Pos { return ir.Pos{File: f.Name, Line: 1, Col: 1} }

// children returns the subexpressions of e in source order.
func children(e Expr) []Expr {
	switch e := e.(type) {
	case *Paren:
		return []Expr{e.X}
	case *Tuple:
		return e.Elems
	case *Unary:
		return []Expr{e.X}
	case *Binary:
		return []Expr{e.X, e.Y}
	case *Range:
		return []Expr{e.Lo, e.Hi}
	case *Apply:
		return append([]Expr{e.Fn}, e.Args...)
	case *Call:
		return e.Args
	case *Dict:
		var cs []Expr
		for _, en := range e.Entries {
			cs = append(cs, en.Key, en.Value)
		}
		return cs
	case *If:
		if e.Else == nil {
			return []Expr{e.Cond, e.Then}
		}
		return []Expr{e.Cond, e.Then, e.Else}
	case *Let:
		var cs []Expr
		for _, b := range e.Binds {
			cs = append(cs, b.Value)
		}
		return append(cs, e.Body)
	case *Sum:
		var cs []Expr
		for _, g := range e.Gens {
			cs = append(cs, g.Src)
		}
		return append(cs, e.Body)
	case *Merge:
		return []Expr{e.E1, e.E2, e.Body}
	}
	return nil
}

// height returns the height of the tree of e, without recursion (it is
// used to refuse trees too tall for the recursive passes).
func height(e Expr) int {
	type item struct {
		e     Expr
		depth int
	}
	stack := []item{{e, 1}}
	maxDepth := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		maxDepth = max(maxDepth, it.depth)
		for _, c := range children(it.e) {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return maxDepth
}
