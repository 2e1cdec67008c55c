package opt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// Patterns of the rule file are written in SDQLite: every identifier is a
// metavariable (an expression, or a variable where a binder is expected),
// 0 and 1 stand for the zero and one of any type, and a right-hand side
// may substitute: e[x := r]. This file parses them.

type patKind uint8

const (
	pMeta  patKind = iota // a metavariable
	pNode                 // an operator applied to sub-patterns
	pZero                 // 0 of any type
	pOne                  // 1 or 1.0
	pConst                // a specific constant (other ints, true, false)
	pSubst                // kids[0][name := kids[1]], or kids[0][kids[2] := kids[1]]
	pKeys                 // keys(x): the range lo:hi+1 of the int x's values (right-hand sides)
	pWidth                // width(x): max+1 of the values of the int array x in the data (right-hand sides)
)

// annAny marks a singleton pattern written without annotation: it matches
// any annotation, and on a right-hand side copies the left-hand side's.
const annAny = -1

// annLogicalOrUnique matches the two annotations that leave a dictionary
// without a physical representation.
const annLogicalOrUnique = -2

type pat struct {
	kind    patKind
	name    string // pMeta: the metavariable; pSubst: the substituted variable
	op      egraph.Op
	payload uint64
	fn      string // opCall: the function
	ann     int    // opSingle: an ir.Ann, annAny or annLogicalOrUnique
	kids    []*pat // binder ops: the binders first (pMeta)
	col     int
}

func (p *pat) String() string {
	var sb strings.Builder
	p.format(&sb)
	return sb.String()
}

func (p *pat) format(sb *strings.Builder) {
	switch p.kind {
	case pMeta:
		sb.WriteString(p.name)
		return
	case pZero:
		sb.WriteString("0")
		return
	case pOne:
		sb.WriteString("1")
		return
	case pSubst:
		p.kids[0].format(sb)
		if len(p.kids) > 2 {
			sb.WriteString("[")
			p.kids[2].format(sb)
			sb.WriteString(" := ")
		} else {
			sb.WriteString("[" + p.name + " := ")
		}
		p.kids[1].format(sb)
		sb.WriteString("]")
		return
	case pConst:
		sb.WriteString(constText(p.op, p.payload))
		return
	case pKeys, pWidth:
		sb.WriteString(map[patKind]string{pKeys: "keys(", pWidth: "width("}[p.kind])
		p.kids[0].format(sb)
		sb.WriteString(")")
		return
	}
	sb.WriteString("(" + opNames[p.op])
	if p.op == opCall {
		sb.WriteString(":" + p.fn)
	}
	if p.op == opSingle && p.ann >= 0 {
		sb.WriteString(ir.Ann(p.ann).String())
	}
	for _, k := range p.kids {
		sb.WriteString(" ")
		k.format(sb)
	}
	sb.WriteString(")")
}

func constText(op egraph.Op, payload uint64) string {
	if op == opBool {
		return strconv.FormatBool(payload != 0)
	}
	return strconv.FormatInt(int64(payload), 10)
}

// builtins are the scalar functions of SDQLite; f(x) with another name is
// a lookup.
var builtins = map[string]bool{"exp": true, "log": true, "sqrt": true, "abs": true, "min": true,
	"max": true, "even_bits": true, "odd_bits": true, "runs": true, "runend": true}

var keywords = map[string]bool{"sum": true, "merge": true, "let": true, "in": true, "if": true,
	"then": true, "else": true, "true": true, "false": true}

// token kinds of the pattern scanner.
type tok struct {
	text string // the punctuation or word
	kind byte   // 'i' identifier, 'n' number, '@' annotation, 'p' punctuation, 0 end
	col  int
}

func scanPattern(src string) ([]tok, error) {
	var toks []tok
	puncts := []string{"<=>", "=>", ":=", "->", "==", "!=", "<=", ">=", "&&", "||",
		"(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "+", "-", "*", "/", "%", "!", "="}
	i := 0
	for i < len(src) {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '@' || c == '_' || unicode.IsLetter(c):
			j := i + 1
			for j < len(src) && (src[j] == '_' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			kind := byte('i')
			if c == '@' {
				kind = '@'
			}
			toks = append(toks, tok{src[i:j], kind, i + 1})
			i = j
		case unicode.IsDigit(c):
			j := i
			for j < len(src) && (unicode.IsDigit(rune(src[j])) || src[j] == '.') {
				j++
			}
			toks = append(toks, tok{src[i:j], 'n', i + 1})
			i = j
		default:
			matched := false
			for _, p := range puncts {
				if strings.HasPrefix(src[i:], p) {
					toks = append(toks, tok{p, 'p', i + 1})
					i += len(p)
					matched = true
					break
				}
			}
			if !matched {
				return nil, fmt.Errorf("col %d: unexpected character %q", i+1, c)
			}
		}
	}
	return append(toks, tok{kind: 0, col: len(src) + 1}), nil
}

type patParser struct {
	toks []tok
	pos  int
}

type patError struct {
	col int
	msg string
}

func (e *patError) Error() string { return fmt.Sprintf("col %d: %s", e.col, e.msg) }

func (p *patParser) peek() tok { return p.toks[p.pos] }

func (p *patParser) next() tok {
	t := p.toks[p.pos]
	if t.kind != 0 {
		p.pos++
	}
	return t
}

func (p *patParser) is(text string) bool {
	t := p.peek()
	return (t.kind == 'p' || t.kind == 'i') && t.text == text
}

func (p *patParser) fail(format string, args ...any) {
	panic(&patError{p.peek().col, fmt.Sprintf(format, args...)})
}

func (p *patParser) expect(text string) {
	if !p.is(text) {
		p.fail("expected %q, found %s", text, p.describe())
	}
	p.next()
}

func (p *patParser) describe() string {
	t := p.peek()
	if t.kind == 0 {
		return "the end"
	}
	return strconv.Quote(t.text)
}

func (p *patParser) ident() *pat {
	t := p.peek()
	if t.kind != 'i' || keywords[t.text] {
		p.fail("expected a variable, found %s", p.describe())
	}
	p.next()
	return &pat{kind: pMeta, name: t.text, col: t.col}
}

// parsePatterns parses "lhs => rhs" or "lhs <=> rhs".
func parseRewrite(src string) (lhs, rhs *pat, bidir bool, err error) {
	toks, err := scanPattern(src)
	if err != nil {
		return nil, nil, false, err
	}
	p := &patParser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*patError)
			if !ok {
				panic(r)
			}
			err = pe
		}
	}()
	lhs = p.expr()
	switch {
	case p.is("=>"):
	case p.is("<=>"):
		bidir = true
	default:
		p.fail("expected => or <=>, found %s", p.describe())
	}
	p.next()
	rhs = p.expr()
	if p.peek().kind != 0 {
		p.fail("unexpected %s after the right-hand side", p.describe())
	}
	return lhs, rhs, bidir, nil
}

func (p *patParser) expr() *pat {
	switch {
	case p.is("sum"), p.is("merge"), p.is("let"), p.is("if"):
		return p.prefix()
	}
	return p.binary(0)
}

func (p *patParser) prefix() *pat {
	t := p.next()
	col := t.col
	switch t.text {
	case "sum":
		p.expect("(")
		p.expect("<")
		k := p.ident()
		p.expect(",")
		v := p.ident()
		p.expect(">")
		p.expect("in")
		src := p.expr()
		p.expect(")")
		body := p.expr()
		return &pat{kind: pNode, op: opSum, kids: []*pat{k, v, src, body}, col: col}
	case "merge":
		p.expect("(")
		p.expect("<")
		a := p.ident()
		p.expect(",")
		b := p.ident()
		p.expect(",")
		c := p.ident()
		p.expect(">")
		p.expect("in")
		p.expect("<")
		e1 := p.binary(precAddLevel)
		p.expect(",")
		e2 := p.binary(precAddLevel)
		p.expect(">")
		p.expect(")")
		body := p.expr()
		return &pat{kind: pNode, op: opMerge, kids: []*pat{a, b, c, e1, e2, body}, col: col}
	case "let":
		x := p.ident()
		p.expect("=")
		val := p.expr()
		p.expect("in")
		body := p.expr()
		return &pat{kind: pNode, op: opLet, kids: []*pat{x, val, body}, col: col}
	default: // if
		c := p.expr()
		p.expect("then")
		then := p.expr()
		if p.is("else") {
			p.next()
			els := p.expr()
			return &pat{kind: pNode, op: opIfElse, kids: []*pat{c, then, els}, col: col}
		}
		return &pat{kind: pNode, op: opIf, kids: []*pat{c, then}, col: col}
	}
}

// Binary precedence levels, loosest first, as in the ir printer.
const (
	precOrLevel = iota
	precAndLevel
	precCmpLevel
	precRangeLevel
	precAddLevel
	precMulLevel
)

var binaryOps = []map[string]egraph.Op{
	precOrLevel:    {"||": opOr},
	precAndLevel:   {"&&": opAnd},
	precCmpLevel:   {"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe},
	precRangeLevel: {":": opRange},
	precAddLevel:   {"+": opAdd, "-": opSub},
	precMulLevel:   {"*": opMul, "/": opDiv, "%": opMod},
}

func (p *patParser) binary(level int) *pat {
	if level > precMulLevel {
		return p.unary()
	}
	left := p.binary(level + 1)
	for {
		t := p.peek()
		op, ok := binaryOps[level][t.text]
		if !ok || t.kind != 'p' {
			return left
		}
		// In merge(<a, b, c> in <e1, e2>) a '>' closes the list.
		p.next()
		right := p.binary(level + 1)
		left = &pat{kind: pNode, op: op, kids: []*pat{left, right}, col: t.col}
		if level == precCmpLevel || level == precRangeLevel {
			return left // these do not chain
		}
	}
}

func (p *patParser) unary() *pat {
	t := p.peek()
	switch {
	case p.is("-"):
		p.next()
		return &pat{kind: pNode, op: opNeg, kids: []*pat{p.unary()}, col: t.col}
	case p.is("!"):
		p.next()
		return &pat{kind: pNode, op: opNot, kids: []*pat{p.unary()}, col: t.col}
	}
	return p.postfix()
}

func (p *patParser) postfix() *pat {
	e := p.primary()
	for {
		switch {
		case p.is("("):
			t := p.next()
			if e.kind == pMeta && (e.name == "keys" || e.name == "width") {
				x := p.ident()
				p.expect(")")
				kind := pKeys
				if e.name == "width" {
					kind = pWidth
				}
				e = &pat{kind: kind, kids: []*pat{x}, col: e.col}
				continue
			}
			if e.kind == pMeta && builtins[e.name] {
				var args []*pat
				for !p.is(")") {
					args = append(args, p.expr())
					if !p.is(")") {
						p.expect(",")
					}
				}
				p.next()
				e = &pat{kind: pNode, op: opCall, fn: e.name, kids: args, col: e.col}
				continue
			}
			arg := p.expr()
			p.expect(")")
			if arg.kind == pNode && arg.op == opRange {
				e = &pat{kind: pNode, op: opSubArray, kids: []*pat{e, arg.kids[0], arg.kids[1]}, col: t.col}
			} else {
				e = &pat{kind: pNode, op: opLookup, kids: []*pat{e, arg}, col: t.col}
			}
		case p.is("["):
			// e[x := r] substitutes a variable; e[t := r], t a term,
			// replaces the occurrences of t (see substituter.replace).
			t := p.next()
			x := p.postfix()
			p.expect(":=")
			r := p.expr()
			p.expect("]")
			if x.kind == pMeta {
				e = &pat{kind: pSubst, name: x.name, kids: []*pat{e, r}, col: t.col}
			} else {
				e = &pat{kind: pSubst, kids: []*pat{e, r, x}, col: t.col}
			}
		default:
			return e
		}
	}
}

func (p *patParser) primary() *pat {
	t := p.peek()
	switch {
	case t.kind == 'n':
		p.next()
		switch t.text {
		case "0":
			return &pat{kind: pZero, col: t.col}
		case "1":
			return &pat{kind: pOne, col: t.col}
		}
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.fail("only integer constants may appear in a pattern, not %s", t.text)
		}
		return &pat{kind: pConst, op: opInt, payload: uint64(v), col: t.col}
	case p.is("true"), p.is("false"):
		p.next()
		var v uint64
		if t.text == "true" {
			v = 1
		}
		return &pat{kind: pConst, op: opBool, payload: v, col: t.col}
	case p.is("("):
		p.next()
		e := p.expr()
		p.expect(")")
		return e
	case p.is("{"):
		p.next()
		ann := annAny
		if p.peek().kind == '@' {
			a := p.next()
			switch a.text {
			case "@unique":
				ann = int(ir.AnnUnique)
			case "@dense":
				ann = int(ir.AnnDense)
			case "@hash":
				ann = int(ir.AnnHash)
			case "@logical":
				ann = int(ir.AnnNone)
			case "@unphysical":
				ann = annLogicalOrUnique
			default:
				p.fail("unknown annotation %s (known: @unique @dense @hash @logical @unphysical)", a.text)
			}
		}
		k := p.binary(precOrLevel)
		p.expect("->")
		v := p.expr()
		p.expect("}")
		return &pat{kind: pNode, op: opSingle, ann: ann, kids: []*pat{k, v}, col: t.col}
	case p.is("sum"), p.is("merge"), p.is("let"), p.is("if"):
		return p.prefix()
	case t.kind == 'i' && !keywords[t.text]:
		return p.ident()
	}
	p.fail("expected an expression, found %s", p.describe())
	return nil
}
