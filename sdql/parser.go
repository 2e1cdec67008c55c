package sdql

import (
	"math"
	"strconv"

	"github.com/storel/storel/ir"
)

// maxNesting bounds how deeply brackets and prefix forms may nest, so that
// hostile input cannot exhaust the stack of the recursive-descent parser;
// maxHeight bounds the height of an expression tree (long operator chains
// make tall trees too) for the recursive passes after parsing.
const (
	maxNesting = 400
	maxHeight  = 10000
)

// parser is a recursive-descent parser for SDQLite with one token of
// lookahead. A syntax error is reported and unwinds (by a bailout panic
// that never leaves the package) to the enclosing statement, where parsing
// resumes after the next ';' or CREATE.
type parser struct {
	sc     *scanner
	errs   *errorSink
	tok    token
	idents map[string]bool // every identifier of the unit, to seed fresh names
	depth  int
	// noGreater is set while parsing the sources of merge(... in <e1, e2>),
	// where '>' closes the pair instead of comparing.
	noGreater bool
}

// bailout unwinds the parser to the statement level after a syntax error.
type bailout struct{}

func newParser(f *sourceFile, errs *errorSink, idents map[string]bool) *parser {
	p := &parser{sc: newScanner(f, errs), errs: errs, idents: idents}
	p.next()
	return p
}

// next advances to the next token, skipping illegal ones (the scanner has
// already reported them).
func (p *parser) next() {
	for {
		p.tok = p.sc.next()
		if p.tok.kind != tokIllegal {
			break
		}
	}
	if p.tok.kind == tokIdent {
		p.idents[p.tok.text] = true
	}
}

// fail reports a syntax error and abandons the current statement.
func (p *parser) fail(pos ir.Pos, format string, args ...any) {
	p.errs.errorf(pos, format, args...)
	panic(bailout{})
}

// describe names the current token for an error message.
func (p *parser) describe() string {
	switch p.tok.kind {
	case tokEOF:
		return "end of input"
	case tokIdent:
		return "name " + p.tok.text
	case tokInt, tokReal:
		return "number " + p.tok.text
	case tokAnnot:
		return "annotation @" + p.tok.text
	}
	if p.tok.kind.isKeyword() {
		return "keyword " + p.tok.text
	}
	return p.tok.kind.String()
}

func (p *parser) expect(kind tokenKind, context string) token {
	t := p.tok
	if t.kind != kind {
		p.fail(t.pos, "expected %s %s, found %s", kind, context, p.describe())
	}
	p.next()
	return t
}

// enter guards recursion depth; callers defer p.leave().
func (p *parser) enter() {
	p.depth++
	if p.depth > maxNesting {
		p.fail(p.tok.pos, "expression nested too deeply (more than %d levels)", maxNesting)
	}
}

func (p *parser) leave() { p.depth-- }

// recoverStatement turns a bailout into a resynchronization: it skips to
// just after the next ';' or to the next CREATE.
func (p *parser) recoverStatement() {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(bailout); !ok {
		panic(r)
	}
	p.depth = 0
	p.noGreater = false
	for p.tok.kind != tokEOF && p.tok.kind != tokCreate {
		if p.tok.kind == tokSemi {
			p.next()
			return
		}
		p.next()
	}
}

// parseFile parses a whole source: statements separated by ';'. A ';' may
// be left out before CREATE and at the end.
func (p *parser) parseFile(name string) *File {
	f := &File{Name: name}
	for p.tok.kind != tokEOF {
		if p.tok.kind == tokSemi {
			p.next()
			continue
		}
		if s := p.parseStmtRecovering(); s != nil {
			f.Stmts = append(f.Stmts, s)
		}
	}
	return f
}

func (p *parser) parseStmtRecovering() (s Stmt) {
	defer p.recoverStatement()
	start := p.tok.pos
	s = p.parseStmt()
	p.checkHeight(start, s)
	switch p.tok.kind {
	case tokSemi:
		p.next()
	case tokEOF, tokCreate:
	default:
		p.fail(p.tok.pos, "expected ; or CREATE after the statement, found %s", p.describe())
	}
	return s
}

func (p *parser) parseStmt() Stmt {
	if p.tok.kind != tokCreate {
		if !canStartExpr(p.tok.kind) {
			p.fail(p.tok.pos, "expected CREATE or an expression, found %s", p.describe())
		}
		return &ExprStmt{X: p.parseExpr()}
	}
	pos := p.tok.pos
	p.next()
	if p.tok.kind == tokTensor {
		p.next()
		name := p.parseDeclName("a tensor")
		p.expect(tokAs, "after the tensor's name (CREATE TENSOR T AS e)")
		return &CreateTensor{At: pos, Name: name, Def: p.parseExpr()}
	}
	st := &CreateObjects{At: pos, Elem: ir.Real}
	switch p.tok.kind {
	case tokIntKw:
		st.Elem, st.Typed = ir.Int, true
		p.next()
	case tokRealKw:
		st.Elem, st.Typed = ir.Real, true
		p.next()
	}
	switch p.tok.kind {
	case tokScalar:
		st.Kind = ir.ObjScalar
	case tokArray:
		st.Kind = ir.ObjArray
	case tokHashmap:
		st.Kind = ir.ObjHashMap
	case tokTrie:
		st.Kind = ir.ObjTrie
	case tokTensor:
		p.fail(p.tok.pos, "a TENSOR takes its element type from its definition: write CREATE TENSOR name AS e")
	default:
		p.fail(p.tok.pos, "expected SCALAR, ARRAY, HASHMAP, TRIE or TENSOR after CREATE, found %s", p.describe())
	}
	p.next()
	for {
		st.Objects = append(st.Objects, p.parseObjectSpec(st.Kind))
		if p.tok.kind != tokComma {
			break
		}
		p.next()
	}
	return st
}

// checkHeight refuses a statement whose expressions are too tall.
func (p *parser) checkHeight(start ir.Pos, s Stmt) {
	var es []Expr
	switch s := s.(type) {
	case *ExprStmt:
		es = append(es, s.X)
	case *CreateTensor:
		es = append(es, s.Def)
	case *CreateObjects:
		for _, o := range s.Objects {
			es = append(es, o.Dims...)
		}
	}
	for _, e := range es {
		if h := height(e); h > maxHeight {
			p.fail(start, "expression too large: its tree is %d levels deep (at most %d); split it with let", h, maxHeight)
		}
	}
}

// parseObjectSpec parses one declared name with the sizes its kind needs.
func (p *parser) parseObjectSpec(kind ir.ObjKind) *ObjectSpec {
	spec := &ObjectSpec{Name: p.parseDeclName("an object")}
	name := spec.Name.Name
	switch kind {
	case ir.ObjScalar:
		if p.tok.kind == tokLParen {
			p.fail(p.tok.pos, "a SCALAR has no size: write CREATE SCALAR %s", name)
		}
	case ir.ObjArray:
		p.expect(tokLParen, "after the array's name (CREATE ARRAY "+name+"(n))")
		spec.Dims = append(spec.Dims, p.parseNested())
		if p.tok.kind == tokComma {
			p.fail(p.tok.pos, "an ARRAY has one size: write ARRAY %s(n); use a HASHMAP or TRIE for several dimensions", name)
		}
		p.expect(tokRParen, "after the array's size")
		if p.tok.kind == tokLParen {
			p.fail(p.tok.pos, "an ARRAY has one size: write ARRAY %s(n); use a TRIE for several levels", name)
		}
	case ir.ObjHashMap:
		p.expect(tokLParen, "after the hash map's name (CREATE HASHMAP "+name+"(n1, ..., nd))")
		for {
			spec.Dims = append(spec.Dims, p.parseNested())
			if p.tok.kind != tokComma {
				break
			}
			p.next()
		}
		p.expect(tokRParen, "after the hash map's sizes")
		if p.tok.kind == tokLParen {
			p.fail(p.tok.pos, "a HASHMAP lists its sizes in one pair of parentheses: %s(n1, n2, ...)", name)
		}
	case ir.ObjTrie:
		if p.tok.kind != tokLParen {
			p.fail(p.tok.pos, "expected ( after the trie's name (CREATE TRIE %s(n1)(n2)...), found %s", name, p.describe())
		}
		for p.tok.kind == tokLParen {
			p.next()
			spec.Dims = append(spec.Dims, p.parseNested())
			if p.tok.kind == tokComma {
				p.fail(p.tok.pos, "a TRIE gives each level's size in its own parentheses: %s(n1)(n2)...", name)
			}
			p.expect(tokRParen, "after a trie level's size")
		}
	}
	return spec
}

// parseDeclName parses the name of a tensor or declared object.
func (p *parser) parseDeclName(what string) *Ident {
	t := p.tok
	switch {
	case t.kind == tokIdent:
		if _, ok := builtinArity[t.text]; ok {
			p.fail(t.pos, "%s is a built-in function and cannot name %s", t.text, what)
		}
		p.next()
		return &Ident{At: t.pos, Name: t.text}
	case t.kind.isKeyword():
		p.fail(t.pos, "%s is a keyword and cannot name %s", t.text, what)
	}
	p.fail(t.pos, "expected the name of %s, found %s", what, p.describe())
	return nil
}

// parseBinder parses a variable introduced by let, sum or merge; "_" is
// the wildcard.
func (p *parser) parseBinder() *Ident {
	t := p.tok
	switch {
	case t.kind == tokIdent:
		if _, ok := builtinArity[t.text]; ok {
			p.fail(t.pos, "%s is a built-in function and cannot name a variable", t.text)
		}
		p.next()
		return &Ident{At: t.pos, Name: t.text}
	case t.kind == tokWildcard:
		p.next()
		return &Ident{At: t.pos, Name: "_"}
	case t.kind.isKeyword():
		p.fail(t.pos, "%s is a keyword and cannot name a variable", t.text)
	}
	p.fail(t.pos, "expected a variable name, found %s", p.describe())
	return nil
}

func canStartExpr(k tokenKind) bool {
	switch k {
	case tokIdent, tokWildcard, tokInt, tokReal, tokTrue, tokFalse, tokLParen, tokLBrace,
		tokMinus, tokBang, tokNot, tokSum, tokMerge, tokLet, tokIf:
		return true
	}
	return false
}

// parseExpr parses a full expression (the loosest level).
func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	return p.parseOr()
}

// parseNested parses an expression inside brackets, where '>' compares
// again even within merge sources.
func (p *parser) parseNested() Expr {
	saved := p.noGreater
	p.noGreater = false
	e := p.parseExpr()
	p.noGreater = saved
	return e
}

func (p *parser) parseOr() Expr {
	x := p.parseAnd()
	for p.tok.kind == tokOrOr || p.tok.kind == tokOr {
		op := p.tok
		p.next()
		x = &Binary{At: op.pos, Op: ir.OpOr, X: x, Y: p.parseAnd()}
	}
	return x
}

func (p *parser) parseAnd() Expr {
	x := p.parseCmp()
	for p.tok.kind == tokAndAnd || p.tok.kind == tokAnd {
		op := p.tok
		p.next()
		x = &Binary{At: op.pos, Op: ir.OpAnd, X: x, Y: p.parseCmp()}
	}
	return x
}

// comparison returns the operator of a comparison token.
func (p *parser) comparison() (ir.Op, bool) {
	switch p.tok.kind {
	case tokEq:
		return ir.OpEq, true
	case tokNe:
		return ir.OpNe, true
	case tokLt:
		return ir.OpLt, true
	case tokLe:
		return ir.OpLe, true
	case tokGt:
		if p.noGreater {
			return 0, false
		}
		return ir.OpGt, true
	case tokGe:
		return ir.OpGe, true
	}
	return 0, false
}

func (p *parser) parseCmp() Expr {
	x := p.parseRange()
	op, ok := p.comparison()
	if !ok {
		return x
	}
	opTok := p.tok
	p.next()
	x = &Binary{At: opTok.pos, Op: op, X: x, Y: p.parseRange()}
	if _, again := p.comparison(); again {
		p.fail(p.tok.pos, "comparisons do not chain: write (a %s b) && (b %s c)", op, p.tok.kind)
	}
	return x
}

func (p *parser) parseRange() Expr {
	x := p.parseAdd()
	if p.tok.kind != tokColon {
		return x
	}
	pos := p.tok.pos
	p.next()
	x = &Range{At: pos, Lo: x, Hi: p.parseAdd()}
	if p.tok.kind == tokColon {
		p.fail(p.tok.pos, "a range has exactly two bounds: lo:hi")
	}
	return x
}

func (p *parser) parseAdd() Expr {
	x := p.parseMul()
	for {
		var op ir.Op
		switch p.tok.kind {
		case tokPlus:
			op = ir.OpAdd
		case tokMinus:
			op = ir.OpSub
		default:
			return x
		}
		pos := p.tok.pos
		p.next()
		x = &Binary{At: pos, Op: op, X: x, Y: p.parseMul()}
	}
}

func (p *parser) parseMul() Expr {
	x := p.parseUnary()
	for {
		var op ir.Op
		switch p.tok.kind {
		case tokStar:
			op = ir.OpMul
		case tokSlash:
			op = ir.OpDiv
		case tokPercent:
			op = ir.OpMod
		default:
			return x
		}
		pos := p.tok.pos
		p.next()
		x = &Binary{At: pos, Op: op, X: x, Y: p.parseUnary()}
	}
}

func (p *parser) parseUnary() Expr {
	var op ir.Op
	switch p.tok.kind {
	case tokMinus:
		op = ir.OpNeg
	case tokBang, tokNot:
		op = ir.OpNot
	default:
		return p.parsePostfix()
	}
	p.enter()
	defer p.leave()
	pos := p.tok.pos
	p.next()
	return &Unary{At: pos, Op: op, X: p.parseUnary()}
}

func (p *parser) parsePostfix() Expr {
	x := p.parsePrimary()
	for p.tok.kind == tokLParen {
		pos := p.tok.pos
		p.next()
		x = &Apply{At: pos, Fn: x, Args: p.parseArgs("index")}
	}
	return x
}

// parseArgs parses "a, b, ...)" after an opening parenthesis.
func (p *parser) parseArgs(what string) []Expr {
	if p.tok.kind == tokRParen {
		p.fail(p.tok.pos, "missing %s between ( and )", what)
	}
	var args []Expr
	for {
		args = append(args, p.parseNested())
		if p.tok.kind != tokComma {
			break
		}
		p.next()
	}
	p.expect(tokRParen, "to close the argument list")
	return args
}

func (p *parser) parsePrimary() Expr {
	t := p.tok
	switch t.kind {
	case tokIdent:
		p.next()
		if n, ok := builtinArity[t.text]; ok {
			if p.tok.kind != tokLParen {
				p.fail(t.pos, "%s is a built-in function: call it as %s", t.text, builtinUsage(t.text))
			}
			p.next()
			args := p.parseArgs("argument")
			if len(args) != n {
				p.fail(t.pos, "%s takes %d argument%s, not %d: call it as %s", t.text, n, plural(n), len(args), builtinUsage(t.text))
			}
			return &Call{At: t.pos, Fn: t.text, Args: args}
		}
		return &Ident{At: t.pos, Name: t.text}
	case tokWildcard:
		p.fail(t.pos, "_ stands for a value that is not used: it cannot appear in an expression")
	case tokInt:
		p.next()
		v, err := strconv.ParseUint(t.text, 10, 64)
		if err != nil || v > 1<<63 {
			p.errs.errorf(t.pos, "integer %s does not fit in 64 bits", t.text)
			v = 0
		}
		return &IntLit{At: t.pos, Value: v, Text: t.text}
	case tokReal:
		p.next()
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil && (math.IsInf(v, 0) || math.IsNaN(v)) {
			p.errs.errorf(t.pos, "real number %s is too large", t.text)
			v = 0
		}
		return &RealLit{At: t.pos, Value: v, Text: t.text}
	case tokTrue, tokFalse:
		p.next()
		return &BoolLit{At: t.pos, Value: t.kind == tokTrue}
	case tokLParen:
		return p.parseParenOrTuple()
	case tokLBrace:
		return p.parseDict()
	case tokSum:
		return p.parseSum()
	case tokMerge:
		return p.parseMerge()
	case tokLet:
		return p.parseLet()
	case tokIf:
		return p.parseIf()
	case tokAnnot:
		p.fail(t.pos, "an annotation such as @%s goes right after { in a dictionary literal: { @%s k -> v }", t.text, t.text)
	case tokLt:
		p.fail(t.pos, "unexpected <: a pattern <k, v> only appears in sum(<k, v> in e)")
	}
	p.fail(t.pos, "expected an expression, found %s", p.describe())
	return nil
}

func builtinUsage(fn string) string {
	if builtinArity[fn] == 2 {
		return fn + "(a, b)"
	}
	return fn + "(x)"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// parseParenOrTuple parses (e), a tuple (e1, ..., en) or the empty tuple ().
func (p *parser) parseParenOrTuple() Expr {
	pos := p.tok.pos
	p.next()
	if p.tok.kind == tokRParen {
		p.next()
		return &Tuple{At: pos}
	}
	first := p.parseNested()
	if p.tok.kind != tokComma {
		p.expect(tokRParen, "to close the parenthesis")
		return &Paren{At: pos, X: first}
	}
	tup := &Tuple{At: pos, Elems: []Expr{first}}
	for p.tok.kind == tokComma {
		p.next()
		tup.Elems = append(tup.Elems, p.parseNested())
	}
	p.expect(tokRParen, "to close the tuple")
	return tup
}

// parseDict parses { [@ann] k -> v, ... } or {}.
func (p *parser) parseDict() Expr {
	d := &Dict{At: p.tok.pos}
	p.next()
	if p.tok.kind == tokRBrace {
		p.next()
		return d
	}
	for {
		en := &Entry{At: p.tok.pos}
		if p.tok.kind == tokAnnot {
			switch p.tok.text {
			case "unique":
				en.Ann = ir.AnnUnique
			case "dense":
				en.Ann = ir.AnnDense
			case "hash":
				en.Ann = ir.AnnHash
			default:
				p.fail(p.tok.pos, "unknown annotation @%s: use @unique, @dense or @hash", p.tok.text)
			}
			p.next()
		}
		en.Key = p.parseNested()
		if p.tok.kind != tokArrow {
			p.fail(p.tok.pos, "expected -> after the key of a dictionary entry { k -> v }, found %s", p.describe())
		}
		p.next()
		en.Value = p.parseNested()
		d.Entries = append(d.Entries, en)
		if p.tok.kind != tokComma {
			break
		}
		p.next()
	}
	p.expect(tokRBrace, "to close the dictionary")
	return d
}

// parseSum parses sum(<k, v> in e, ...) body.
func (p *parser) parseSum() Expr {
	p.enter()
	defer p.leave()
	s := &Sum{At: p.tok.pos}
	p.next()
	p.expect(tokLParen, "after sum")
	saved := p.noGreater
	p.noGreater = false
	for {
		s.Gens = append(s.Gens, p.parseGenerator())
		if p.tok.kind != tokComma {
			break
		}
		p.next()
	}
	p.expect(tokRParen, "to close the head of the sum")
	p.noGreater = saved
	s.Body = p.parseExpr()
	return s
}

// parseGenerator parses <k, v> in e, where k may be a tuple (k1, ..., kn).
func (p *parser) parseGenerator() *Generator {
	g := &Generator{At: p.tok.pos}
	if p.tok.kind != tokLt {
		p.fail(p.tok.pos, "expected <key, value> in ... inside sum(...), found %s", p.describe())
	}
	p.next()
	if p.tok.kind == tokLParen {
		g.Tuple = true
		p.next()
		if p.tok.kind == tokRParen {
			p.fail(p.tok.pos, "a key pattern needs at least one variable: <(i, j), v>")
		}
		for {
			if p.tok.kind == tokLParen {
				p.fail(p.tok.pos, "key patterns do not nest: write <(i, j, k), v>")
			}
			g.Keys = append(g.Keys, p.parseBinder())
			if p.tok.kind != tokComma {
				break
			}
			p.next()
		}
		p.expect(tokRParen, "to close the key pattern")
	} else {
		g.Keys = []*Ident{p.parseBinder()}
	}
	p.expect(tokComma, "between the key and the value of <k, v>")
	if p.tok.kind == tokLParen {
		p.fail(p.tok.pos, "the value of <k, v> is a single variable; only the key can be a tuple")
	}
	g.Value = p.parseBinder()
	if p.tok.kind == tokComma {
		p.fail(p.tok.pos, "a pattern has a key and a value: <k, v>, or <(k1, k2), v> for a tuple key")
	}
	p.expect(tokGt, "to close the pattern <k, v>")
	p.expect(tokIn, "after the pattern <k, v>")
	g.Src = p.parseExpr()
	return g
}

// parseMerge parses merge(<k1, k2, v> in <e1, e2>) body.
func (p *parser) parseMerge() Expr {
	p.enter()
	defer p.leave()
	m := &Merge{At: p.tok.pos}
	p.next()
	p.expect(tokLParen, "after merge")
	p.expect(tokLt, "to open the pattern <k1, k2, v> of merge")
	m.K1 = p.parseBinder()
	p.expect(tokComma, "in the pattern <k1, k2, v> of merge")
	m.K2 = p.parseBinder()
	p.expect(tokComma, "in the pattern <k1, k2, v> of merge")
	m.V = p.parseBinder()
	p.expect(tokGt, "to close the pattern <k1, k2, v> of merge")
	p.expect(tokIn, "after the pattern of merge")
	p.expect(tokLt, "to open the pair <e1, e2> of merge")
	saved := p.noGreater
	p.noGreater = true
	m.E1 = p.parseExpr()
	p.expect(tokComma, "between the two sources <e1, e2> of merge")
	m.E2 = p.parseExpr()
	p.noGreater = saved
	p.expect(tokGt, "to close the pair <e1, e2> of merge")
	p.expect(tokRParen, "to close the head of merge")
	m.Body = p.parseExpr()
	return m
}

// parseLet parses let x = e, y = e in body.
func (p *parser) parseLet() Expr {
	p.enter()
	defer p.leave()
	l := &Let{At: p.tok.pos}
	p.next()
	for {
		b := &Binding{Name: p.parseBinder()}
		if p.tok.kind == tokEq {
			p.fail(p.tok.pos, "a let binds with a single =: let %s = e in ...", b.Name.Name)
		}
		p.expect(tokAssign, "after the variable of let")
		b.Value = p.parseExpr()
		l.Binds = append(l.Binds, b)
		if p.tok.kind != tokComma {
			break
		}
		p.next()
	}
	p.expect(tokIn, "after the bindings of let")
	l.Body = p.parseExpr()
	return l
}

// parseIf parses if c then e [else e]. The paper also writes "if (c) e"
// without then; that form is accepted when the condition is parenthesized.
func (p *parser) parseIf() Expr {
	p.enter()
	defer p.leave()
	n := &If{At: p.tok.pos}
	p.next()
	n.Cond = p.parseExpr()
	switch _, paren := n.Cond.(*Paren); {
	case p.tok.kind == tokThen:
		p.next()
	case paren && canStartExpr(p.tok.kind):
	default:
		p.fail(p.tok.pos, "expected then after the condition of if, found %s", p.describe())
	}
	n.Then = p.parseExpr()
	if p.tok.kind == tokElse {
		p.next()
		n.Else = p.parseExpr()
	}
	return n
}
