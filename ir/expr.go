package ir

import "fmt"

// Pos is a source position. File may be empty for generated code.
type Pos struct {
	File      string
	Line, Col int // 1-based; Line 0 means "no position"
}

func (p Pos) IsValid() bool { return p.Line > 0 }

// BuiltinSource is the file name of text storel generates itself, such
// as a format's standard mapping, described by desc ("the csr mapping of
// A"). The user never sees that text, so a position in it prints as desc
// alone, without a line and column.
func BuiltinSource(desc string) string { return "<" + desc + ">" }

// Builtin returns the description of p's file when it is a BuiltinSource.
func (p Pos) Builtin() (string, bool) {
	if len(p.File) > 2 && p.File[0] == '<' && p.File[len(p.File)-1] == '>' {
		return p.File[1 : len(p.File)-1], true
	}
	return "", false
}

func (p Pos) String() string {
	if desc, ok := p.Builtin(); ok {
		return desc
	}
	if !p.IsValid() {
		if p.File != "" {
			return p.File
		}
		return "-"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Op is the operator of an expression node.
type Op uint8

const (
	OpInvalid Op = iota

	// Leaves.
	OpConst  // scalar constant in I (Int, Bool as 0/1) or F (Real); with Type.Depth > 0 the empty dictionary
	OpVar    // local variable Name (bound by Let, Sum, Merge, or a tensor definition)
	OpGlobal // physical object Name declared by CREATE SCALAR/ARRAY/HASHMAP/TRIE

	// Scalar operators. Add, Sub and Mul also apply to dictionaries (key-wise;
	// scalar*dict scales every value). Comparisons and logic yield Bool.
	OpNeg
	OpNot
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd
	OpOr
	OpCall // scalar function Name(Args...): exp log abs sqrt even_bits odd_bits min max

	// Dictionary constructs.
	OpSingleton // { Args[0] -> Args[1] } with annotation Ann
	OpLookup    // Args[0](Args[1])
	OpRange     // Args[0]:Args[1], the dictionary {i -> i} for i in [a, b)
	OpSubArray  // Args[0](Args[1]:Args[2]), {i -> e(i)} for i in [a, b)

	// Control and binders.
	OpIf    // if Args[0] then Args[1] [else Args[2]]; without else, zero of the type
	OpLet   // let Vars[0] = Args[0] in Args[1]
	OpSum   // sum(<Vars[0], Vars[1]> in Args[0]) Args[1]
	OpMerge // merge(<Vars[0], Vars[1], Vars[2]> in <Args[0], Args[1]>) Args[2]
)

var opNames = [...]string{
	OpInvalid: "invalid", OpConst: "const", OpVar: "var", OpGlobal: "global",
	OpNeg: "neg", OpNot: "not", OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%",
	OpEq: "==", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpAnd: "&&", OpOr: "||",
	OpCall: "call", OpSingleton: "singleton", OpLookup: "lookup", OpRange: "range",
	OpSubArray: "subarray", OpIf: "if", OpLet: "let", OpSum: "sum", OpMerge: "merge",
}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// IsBinary reports whether o is a two-argument infix operator.
func (o Op) IsBinary() bool { return o >= OpAdd && o <= OpOr }

// Ann is the annotation on a singleton dictionary.
type Ann uint8

const (
	AnnNone   Ann = iota // logical {k -> e}: cost infinity until the optimizer picks a representation
	AnnUnique            // @unique: keys produced by the enclosing sum are distinct (optimizer hint only)
	AnnDense             // @dense: build into a dense array
	AnnHash              // @hash: build into a hash map
)

func (a Ann) String() string {
	switch a {
	case AnnUnique:
		return "@unique"
	case AnnDense:
		return "@dense"
	case AnnHash:
		return "@hash"
	}
	return ""
}

// Expr is a node of the core calculus. Which fields are meaningful depends
// on Op (see the Op constants). Nodes are treated as immutable once built:
// transformations build new nodes and may share unchanged subtrees.
type Expr struct {
	Op   Op
	Args []*Expr
	Vars []string // binder names: Let [x]; Sum [k, v]; Merge [k1, k2, v]
	Name string   // OpVar, OpGlobal: the name; OpCall: the function
	I    int64    // OpConst of Int or Bool type
	F    float64  // OpConst of Real type
	Ann  Ann      // OpSingleton
	Type Type     // filled by the type checker; Unknown before
	Pos  Pos
}

// Constructors. They leave Type unknown unless it is evident.

func IntConst(v int64) *Expr    { return &Expr{Op: OpConst, I: v, Type: IntType} }
func RealConst(v float64) *Expr { return &Expr{Op: OpConst, F: v, Type: RealType} }
func BoolConst(v bool) *Expr {
	e := &Expr{Op: OpConst, Type: BoolType}
	if v {
		e.I = 1
	}
	return e
}

// Zero returns the zero of type t: 0, 0.0, false or the empty dictionary.
func Zero(t Type) *Expr { return &Expr{Op: OpConst, Type: t} }

func Var(name string) *Expr    { return &Expr{Op: OpVar, Name: name} }
func Global(name string) *Expr { return &Expr{Op: OpGlobal, Name: name} }

func Binary(op Op, a, b *Expr) *Expr { return &Expr{Op: op, Args: []*Expr{a, b}} }
func Neg(a *Expr) *Expr              { return &Expr{Op: OpNeg, Args: []*Expr{a}} }
func Not(a *Expr) *Expr              { return &Expr{Op: OpNot, Args: []*Expr{a}} }
func Call(fn string, args ...*Expr) *Expr {
	return &Expr{Op: OpCall, Name: fn, Args: args}
}

func Singleton(ann Ann, k, v *Expr) *Expr {
	return &Expr{Op: OpSingleton, Ann: ann, Args: []*Expr{k, v}}
}
func Lookup(d, k *Expr) *Expr  { return &Expr{Op: OpLookup, Args: []*Expr{d, k}} }
func Range(lo, hi *Expr) *Expr { return &Expr{Op: OpRange, Args: []*Expr{lo, hi}} }
func SubArray(d, lo, hi *Expr) *Expr {
	return &Expr{Op: OpSubArray, Args: []*Expr{d, lo, hi}}
}

// If builds "if c then t" when els is nil, else "if c then t else els".
func If(c, t, els *Expr) *Expr {
	if els == nil {
		return &Expr{Op: OpIf, Args: []*Expr{c, t}}
	}
	return &Expr{Op: OpIf, Args: []*Expr{c, t, els}}
}

func Let(x string, val, body *Expr) *Expr {
	return &Expr{Op: OpLet, Vars: []string{x}, Args: []*Expr{val, body}}
}

func Sum(k, v string, src, body *Expr) *Expr {
	return &Expr{Op: OpSum, Vars: []string{k, v}, Args: []*Expr{src, body}}
}

func Merge(k1, k2, v string, e1, e2, body *Expr) *Expr {
	return &Expr{Op: OpMerge, Vars: []string{k1, k2, v}, Args: []*Expr{e1, e2, body}}
}

// At sets the position of e and returns e, for chaining.
func (e *Expr) At(p Pos) *Expr { e.Pos = p; return e }

// Bool returns the value of a Bool constant.
func (e *Expr) Bool() bool { return e.I != 0 }

// BinderScope reports which arguments of e see e's binders: for Let and Sum
// the body (Args[1]) only; for Merge the body (Args[2]) only.
func (e *Expr) BinderScope(arg int) bool {
	switch e.Op {
	case OpLet, OpSum:
		return arg == 1
	case OpMerge:
		return arg == 2
	}
	return false
}

// Shallow returns a copy of e's node with its own Args and Vars slices; the
// children themselves are shared.
func (e *Expr) Shallow() *Expr {
	c := *e
	c.Args = append([]*Expr(nil), e.Args...)
	c.Vars = append([]string(nil), e.Vars...)
	return &c
}

// Walk calls f on e and then on its descendants in pre-order while f
// returns true.
func Walk(e *Expr, f func(*Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, a := range e.Args {
		Walk(a, f)
	}
}

// Size returns the number of nodes in e.
func Size(e *Expr) int {
	n := 0
	Walk(e, func(*Expr) bool { n++; return true })
	return n
}
