package sdql

import (
	"math"
	"strings"

	"github.com/storel/storel/ir"
)

// desugarer turns syntax trees into the core calculus following the
// paper's Table 1, resolving every name on the way.
type desugarer struct {
	errs  *errorSink
	namer *ir.Namer

	// Names of the unit. declAt and tensorAt list every declared object and
	// tensor of the whole unit (to explain references to later ones);
	// decls and tensors hold those defined so far.
	declAt   map[string]ir.Pos
	tensorAt map[string]ir.Pos
	decls    map[string]*ir.Decl
	tensors  map[string]bool
	// globals are the free names of CompileExpr, with their types.
	globals map[string]ir.Type
	// freeAsGlobals makes every unbound name a global (for tests that only
	// desugar).
	freeAsGlobals bool
	notes         *desugarNotes

	sizing  string // while desugaring the sizes of object sizing, its name
	current string // the tensor being defined, if any
}

// desugarNotes tell the type checker where desugaring made nodes the user
// did not write, so that its messages speak of what the user wrote.
type desugarNotes struct {
	// repeated: the equality test made for a variable bound twice in one
	// sum head, with the variable's name.
	repeated map[*ir.Expr]string
	// tupleLevels: the source of an inner sum made from a tuple pattern
	// (a fresh intermediate variable), with the pattern's text.
	tupleLevels map[*ir.Expr]string
}

// scope is an immutable chain of local variables: the source name and the
// name it has in the IR (they differ only for renamed binders).
type scope struct {
	name, irName string
	parent       *scope
}

func (s *scope) lookup(name string) (string, bool) {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s.irName, true
		}
	}
	return "", false
}

func (s *scope) push(name, irName string) *scope {
	return &scope{name: name, irName: irName, parent: s}
}

func newDesugarer(errs *errorSink, idents map[string]bool) *desugarer {
	return &desugarer{
		errs:     errs,
		namer:    ir.NewNamer(idents),
		declAt:   map[string]ir.Pos{},
		tensorAt: map[string]ir.Pos{},
		decls:    map[string]*ir.Decl{},
		tensors:  map[string]bool{},
		globals:  map[string]ir.Type{},
		notes:    &desugarNotes{repeated: map[*ir.Expr]string{}, tupleLevels: map[*ir.Expr]string{}},
	}
}

// program desugars the statements of a compilation unit in order.
func (d *desugarer) program(files []*File) *ir.Program {
	var stmts []Stmt
	for _, f := range files {
		stmts = append(stmts, f.Stmts...)
	}
	// Every name the unit defines, so that a reference to a later
	// definition gets a precise message, and so that no local variable
	// reuses an object's name (printed plans must read back unambiguously).
	for _, s := range stmts {
		switch s := s.(type) {
		case *CreateObjects:
			for _, o := range s.Objects {
				if _, ok := d.declAt[o.Name.Name]; !ok {
					d.declAt[o.Name.Name] = o.Name.At
				}
			}
		case *CreateTensor:
			if _, ok := d.tensorAt[s.Name.Name]; !ok {
				d.tensorAt[s.Name.Name] = s.Name.At
			}
		}
	}
	prog := &ir.Program{}
	defined := map[string]ir.Pos{}
	define := func(id *Ident) bool {
		if at, ok := defined[id.Name]; ok {
			where := "at " + at.String()
			if desc, builtin := at.Builtin(); builtin {
				where = "by " + desc
			}
			d.errs.errorf(id.At, "%s is already defined %s; every object and tensor needs its own name", id.Name, where)
			return false
		}
		defined[id.Name] = id.At
		return true
	}
	for i, s := range stmts {
		switch s := s.(type) {
		case *CreateObjects:
			for _, o := range s.Objects {
				decl := &ir.Decl{Name: o.Name.Name, Kind: s.Kind, Elem: s.Elem, Pos: o.Name.At}
				d.sizing = o.Name.Name
				for _, dim := range o.Dims {
					decl.Dims = append(decl.Dims, d.expr(dim, nil))
				}
				d.sizing = ""
				if define(o.Name) {
					d.decls[decl.Name] = decl
					prog.Decls = append(prog.Decls, decl)
				}
			}
		case *CreateTensor:
			d.current = s.Name.Name
			def := d.expr(s.Def, nil)
			d.current = ""
			if define(s.Name) {
				d.tensors[s.Name.Name] = true
				prog.Tensors = append(prog.Tensors, &ir.Tensor{Name: s.Name.Name, Def: def, Pos: s.Name.At})
			}
		case *ExprStmt:
			if i != len(stmts)-1 {
				d.errs.errorf(startPos(s.X), "a bare expression must be the last statement: it is the program's result")
			}
			prog.Result = d.expr(s.X, nil)
		}
	}
	return prog
}

func invalid(pos ir.Pos) *ir.Expr { return &ir.Expr{Op: ir.OpInvalid, Pos: pos} }

// resolve turns a name in an expression into a local variable, a tensor
// (a variable bound by Compose) or a declared object.
func (d *desugarer) resolve(id *Ident, sc *scope) *ir.Expr {
	name := id.Name
	if irName, ok := sc.lookup(name); ok {
		return ir.Var(irName).At(id.At)
	}
	if d.sizing != "" {
		if d.decls[name] != nil {
			return ir.Global(name).At(id.At)
		}
		switch {
		case name == d.sizing:
			d.errs.errorf(id.At, "the size of %s cannot depend on %s itself", name, name)
		case d.tensorAt[name].IsValid():
			d.errs.errorf(id.At, "the size of %s cannot use the tensor %s: sizes are computed from physical objects declared before", d.sizing, name)
		case d.declAt[name].IsValid():
			d.errs.errorf(id.At, "the size of %s uses %s, which is declared later (at %s): declare %s first", d.sizing, name, d.declAt[name], name)
		default:
			d.errs.errorf(id.At, "undefined: %s", name)
		}
		return invalid(id.At)
	}
	if d.tensors[name] {
		return ir.Var(name).At(id.At)
	}
	if d.decls[name] != nil {
		return ir.Global(name).At(id.At)
	}
	if _, ok := d.globals[name]; ok || d.freeAsGlobals {
		return ir.Global(name).At(id.At)
	}
	switch {
	case name == d.current:
		d.errs.errorf(id.At, "tensor %s cannot refer to itself: a tensor is defined from the objects and tensors before it", name)
	case d.tensorAt[name].IsValid():
		d.errs.errorf(id.At, "undefined: %s (the tensor %s is defined later, at %s; define it before it is used)", name, name, d.tensorAt[name])
	case d.declAt[name].IsValid():
		d.errs.errorf(id.At, "undefined: %s (the object %s is declared later, at %s; declare it before it is used)", name, name, d.declAt[name])
	default:
		d.errs.errorf(id.At, "undefined: %s", name)
	}
	return invalid(id.At)
}

// bind introduces a local variable named by id and returns its IR name;
// the wildcard _ gets a fresh name that nothing refers to.
func (d *desugarer) bind(id *Ident) string {
	if id.Name == "_" {
		return d.namer.Fresh("_u")
	}
	if at, ok := d.declAt[id.Name]; ok {
		d.errs.errorf(id.At, "%s is the name of an object declared at %s; choose another name for this variable", id.Name, at)
	} else if _, ok := d.globals[id.Name]; ok {
		d.errs.errorf(id.At, "%s is the name of a global object; choose another name for this variable", id.Name)
	}
	return id.Name
}

// expr desugars one expression in scope sc.
func (d *desugarer) expr(e Expr, sc *scope) *ir.Expr {
	switch e := e.(type) {
	case *Ident:
		return d.resolve(e, sc)
	case *IntLit:
		if e.Value > math.MaxInt64 {
			d.errs.errorf(e.At, "integer %s does not fit in 64 bits", e.Text)
			return invalid(e.At)
		}
		return ir.IntConst(int64(e.Value)).At(e.At)
	case *RealLit:
		return ir.RealConst(e.Value).At(e.At)
	case *BoolLit:
		return ir.BoolConst(e.Value).At(e.At)
	case *Paren:
		return d.expr(e.X, sc)
	case *Tuple:
		if len(e.Elems) == 0 {
			d.errs.errorf(e.At, "() can only be the key of a dictionary entry, where { () -> e } means e")
			return invalid(e.At)
		}
		d.errs.errorf(e.At, "a tuple %s can only be the key of a dictionary entry { %s -> v } or of a sum pattern <%s, v>", Format(e), Format(e), Format(e))
		return invalid(e.At)
	case *Unary:
		return d.unary(e, sc)
	case *Binary:
		return ir.Binary(e.Op, d.expr(e.X, sc), d.expr(e.Y, sc)).At(e.At)
	case *Range:
		return ir.Range(d.expr(e.Lo, sc), d.expr(e.Hi, sc)).At(e.At)
	case *Apply:
		// e(a, b) is e(a)(b) (Table 1); an argument a:b is a subarray.
		cur := d.expr(e.Fn, sc)
		for _, a := range e.Args {
			if r, ok := a.(*Range); ok {
				cur = ir.SubArray(cur, d.expr(r.Lo, sc), d.expr(r.Hi, sc)).At(e.At)
			} else {
				cur = ir.Lookup(cur, d.expr(a, sc)).At(e.At)
			}
		}
		return cur
	case *Call:
		args := make([]*ir.Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = d.expr(a, sc)
		}
		return ir.Call(e.Fn, args...).At(e.At)
	case *Dict:
		return d.dict(e, sc)
	case *If:
		var els *ir.Expr
		if e.Else != nil {
			els = d.expr(e.Else, sc)
		}
		return ir.If(d.expr(e.Cond, sc), d.expr(e.Then, sc), els).At(e.At)
	case *Let:
		return d.let(e, 0, sc)
	case *Sum:
		return d.gens(e, 0, sc, map[string]string{})
	case *Merge:
		return d.merge(e, sc)
	}
	return invalid(e.Pos())
}

// unary folds a minus written right before a non-zero number into a
// negative constant, the form in which the printer writes negative
// constants. (-0 stays a negation, so that it prints as it was written.)
func (d *desugarer) unary(e *Unary, sc *scope) *ir.Expr {
	if e.Op == ir.OpNot {
		return ir.Not(d.expr(e.X, sc)).At(e.At)
	}
	switch lit := stripParens(e.X).(type) {
	case *IntLit:
		if lit.Value == 1<<63 {
			return ir.IntConst(math.MinInt64).At(e.At)
		}
		if x := d.expr(lit, sc); x.Op == ir.OpConst && x.I != 0 {
			return ir.IntConst(-x.I).At(e.At)
		}
	case *RealLit:
		if lit.Value != 0 {
			return ir.RealConst(-lit.Value).At(e.At)
		}
	}
	return ir.Neg(d.expr(e.X, sc)).At(e.At)
}

// startPos returns where the text of e begins (an operator node's own
// position is its operator).
func startPos(e Expr) ir.Pos {
	for {
		switch x := e.(type) {
		case *Binary:
			e = x.X
		case *Range:
			e = x.Lo
		case *Apply:
			e = x.Fn
		default:
			return e.Pos()
		}
	}
}

func stripParens(e Expr) Expr {
	for {
		p, ok := e.(*Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

// emptyDict is {} before type checking: a dictionary whose depth and leaf
// type the checker infers from the context.
func emptyDict(pos ir.Pos) *ir.Expr {
	return &ir.Expr{Op: ir.OpConst, Type: ir.Type{Depth: 1, Base: ir.Unknown}, Pos: pos}
}

// dict desugars a dictionary literal: several entries are the sum of their
// singletons; a tuple key curries (Table 1); {() -> e} is e.
func (d *desugarer) dict(e *Dict, sc *scope) *ir.Expr {
	if len(e.Entries) == 0 {
		return emptyDict(e.At)
	}
	var sum *ir.Expr
	for _, en := range e.Entries {
		s := d.entry(en, sc)
		if sum == nil {
			sum = s
		} else {
			sum = ir.Binary(ir.OpAdd, sum, s).At(en.At)
		}
	}
	return sum
}

func (d *desugarer) entry(en *Entry, sc *scope) *ir.Expr {
	tup, isTuple := en.Key.(*Tuple)
	if !isTuple {
		key := d.expr(en.Key, sc)
		return ir.Singleton(en.Ann, key, d.expr(en.Value, sc)).At(en.At)
	}
	keys := make([]*ir.Expr, len(tup.Elems))
	for i, k := range tup.Elems {
		keys[i] = d.expr(k, sc)
	}
	v := d.expr(en.Value, sc)
	switch {
	case len(keys) == 0 && en.Ann != ir.AnnNone:
		d.errs.errorf(en.At, "%s needs a key to annotate: { () -> e } is just e", en.Ann)
	case len(keys) > 1 && en.Ann == ir.AnnUnique:
		d.errs.errorf(en.At, "@unique cannot annotate the tuple key %s: distinct pairs do not make the outer keys distinct; write nested singletons and mark each level that is unique, e.g. { @unique %s -> { @unique %s -> v } }",
			Format(tup), Format(tup.Elems[0]), Format(tup.Elems[1]))
	}
	// @dense and @hash apply to every level of the curried key.
	for i := len(keys) - 1; i >= 0; i-- {
		pos := en.At
		if i > 0 {
			pos = tup.Elems[i].Pos()
		}
		v = ir.Singleton(en.Ann, keys[i], v).At(pos)
	}
	return v
}

// let desugars let x1 = e1, ..., xn = en in body into nested lets.
func (d *desugarer) let(l *Let, i int, sc *scope) *ir.Expr {
	if i == len(l.Binds) {
		return d.expr(l.Body, sc)
	}
	b := l.Binds[i]
	val := d.expr(b.Value, sc)
	name := d.bind(b.Name)
	if b.Name.Name != "_" {
		sc = sc.push(b.Name.Name, name)
	}
	pos := l.At
	if i > 0 {
		pos = b.Name.At
	}
	return ir.Let(name, val, d.let(l, i+1, sc)).At(pos)
}

// sumLevel is one nested sum produced by a generator: a tuple key of n
// components gives n levels, linked by fresh intermediate variables.
type sumLevel struct {
	key, val string
	tests    []*ir.Expr // equality tests for variables bound a second time
	pos      ir.Pos
}

// gens desugars generators i.. of a sum (Table 1): generators nest left to
// right, a tuple key uncurries into nested sums, and a variable bound a
// second time in the same head gets a fresh name and an equality test right
// after the sum that binds it. head maps each variable of the head to the
// IR name of its first binding.
func (d *desugarer) gens(s *Sum, i int, sc *scope, head map[string]string) *ir.Expr {
	if i == len(s.Gens) {
		return d.expr(s.Body, sc)
	}
	g := s.Gens[i]
	src := d.expr(g.Src, sc)
	levels := make([]sumLevel, len(g.Keys))
	bindHere := func(id *Ident, lv *sumLevel) string {
		if id.Name == "_" {
			return d.bind(id)
		}
		if first, ok := head[id.Name]; ok {
			fresh := d.namer.Fresh(id.Name)
			test := ir.Binary(ir.OpEq, ir.Var(first).At(id.At), ir.Var(fresh).At(id.At)).At(id.At)
			d.notes.repeated[test] = id.Name
			lv.tests = append(lv.tests, test)
			return fresh
		}
		name := d.bind(id)
		head[id.Name] = name
		sc = sc.push(id.Name, name)
		return name
	}
	for j, k := range g.Keys {
		lv := &levels[j]
		lv.pos = k.At
		if j == 0 {
			lv.pos = g.At
			if i == 0 {
				lv.pos = s.At
			}
		}
		lv.key = bindHere(k, lv)
		if j < len(g.Keys)-1 {
			lv.val = d.namer.Fresh("w")
		} else {
			lv.val = bindHere(g.Value, lv)
		}
	}
	inner := d.gens(s, i+1, sc, head)
	for j := len(levels) - 1; j >= 0; j-- {
		lv := levels[j]
		for t := len(lv.tests) - 1; t >= 0; t-- {
			inner = ir.If(lv.tests[t], inner, nil).At(lv.tests[t].Pos)
		}
		levelSrc := src
		if j > 0 {
			levelSrc = ir.Var(levels[j-1].val).At(lv.pos)
			d.notes.tupleLevels[levelSrc] = patternText(g)
		}
		inner = ir.Sum(lv.key, lv.val, levelSrc, inner).At(lv.pos)
	}
	return inner
}

func patternText(g *Generator) string {
	names := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		names[i] = k.Name
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// merge desugars merge(<k1, k2, v> in <e1, e2>) body.
func (d *desugarer) merge(m *Merge, sc *scope) *ir.Expr {
	e1, e2 := d.expr(m.E1, sc), d.expr(m.E2, sc)
	seen := map[string]bool{}
	var names []string
	for _, id := range []*Ident{m.K1, m.K2, m.V} {
		if id.Name != "_" && seen[id.Name] {
			d.errs.errorf(id.At, "merge binds %s twice: its three variables need distinct names", id.Name)
		}
		seen[id.Name] = true
		name := d.bind(id)
		if id.Name != "_" {
			sc = sc.push(id.Name, name)
		}
		names = append(names, name)
	}
	return ir.Merge(names[0], names[1], names[2], e1, e2, d.expr(m.Body, sc)).At(m.At)
}
