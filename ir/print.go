package ir

import (
	"strconv"
	"strings"
)

// Precedence levels of the SDQLite grammar, loosest first. The prefix forms
// (sum, merge, let, if) extend as far right as possible, so the printer
// parenthesizes them whenever they are an operand.
const (
	precPrefix = iota
	precOr
	precAnd
	precCmp
	precRange
	precAdd
	precMul
	precUnary
	precPostfix
)

func binaryPrec(op Op) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return precCmp
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv, OpMod:
		return precMul
	}
	return precPostfix
}

// String prints e as SDQLite on one line.
func (e *Expr) String() string {
	p := printer{oneLine: true}
	p.expr(e, precPrefix)
	return p.sb.String()
}

// Format prints e as indented, multi-line SDQLite that parses back to an
// equal expression.
func Format(e *Expr) string {
	p := printer{}
	p.expr(e, precPrefix)
	return p.sb.String()
}

type printer struct {
	sb      strings.Builder
	indent  int
	oneLine bool
}

func (p *printer) newline() {
	if p.oneLine {
		p.sb.WriteByte(' ')
		return
	}
	p.sb.WriteByte('\n')
	for i := 0; i < p.indent; i++ {
		p.sb.WriteString("  ")
	}
}

func (p *printer) str(s string) { p.sb.WriteString(s) }

// FormatReal prints a float so that it reads back as a real (always with a
// '.', an exponent, or as inf/nan).
func FormatReal(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

func (p *printer) expr(e *Expr, ctx int) {
	if e == nil {
		p.str("<nil>")
		return
	}
	prec := exprPrec(e)
	if prec < ctx {
		p.str("(")
		defer p.str(")")
	}
	switch e.Op {
	case OpConst:
		switch {
		case e.Type.Depth > 0:
			p.str("{}")
		case e.Type.Base == Real:
			p.str(FormatReal(e.F))
		case e.Type.Base == Bool:
			p.str(strconv.FormatBool(e.I != 0))
		default:
			p.str(strconv.FormatInt(e.I, 10))
		}
	case OpVar, OpGlobal:
		p.str(e.Name)
	case OpNeg:
		p.str("-")
		p.expr(e.Args[0], precUnary)
	case OpNot:
		p.str("!")
		p.expr(e.Args[0], precUnary)
	case OpCall:
		p.str(e.Name)
		p.str("(")
		for i, a := range e.Args {
			if i > 0 {
				p.str(", ")
			}
			p.expr(a, precPrefix+1)
		}
		p.str(")")
	case OpSingleton:
		p.str("{ ")
		if e.Ann != AnnNone {
			p.str(e.Ann.String())
			p.str(" ")
		}
		p.expr(e.Args[0], precPrefix+1)
		p.str(" -> ")
		p.expr(e.Args[1], precPrefix)
		p.str(" }")
	case OpLookup:
		p.expr(e.Args[0], precPostfix)
		p.str("(")
		p.expr(e.Args[1], precPrefix+1)
		p.str(")")
	case OpRange:
		p.expr(e.Args[0], precRange+1)
		p.str(":")
		p.expr(e.Args[1], precRange+1)
	case OpSubArray:
		p.expr(e.Args[0], precPostfix)
		p.str("(")
		p.expr(e.Args[1], precRange+1)
		p.str(":")
		p.expr(e.Args[2], precRange+1)
		p.str(")")
	case OpIf:
		p.str("if ")
		p.expr(e.Args[0], precPrefix+1)
		p.str(" then")
		if len(e.Args) == 3 && exprPrec(e.Args[1]) == precPrefix {
			// A prefix form before else would swallow it (dangling else).
			p.indent++
			p.newline()
			p.expr(e.Args[1], precPrefix+1)
			p.indent--
		} else {
			p.body(e.Args[1])
		}
		if len(e.Args) == 3 {
			p.newline()
			p.str("else")
			p.body(e.Args[2])
		}
	case OpLet:
		p.str("let ")
		p.str(e.Vars[0])
		p.str(" =")
		// The value ends at "in", so a prefix form needs no parentheses;
		// a long one goes on its own indented lines.
		if exprPrec(e.Args[0]) == precPrefix && !p.oneLine {
			p.body(e.Args[0])
			p.newline()
			p.str("in")
		} else {
			p.str(" ")
			p.expr(e.Args[0], precPrefix)
			p.str(" in")
		}
		p.newline()
		p.expr(e.Args[1], precPrefix)
	case OpSum:
		p.str("sum(<")
		p.str(e.Vars[0])
		p.str(", ")
		p.str(e.Vars[1])
		p.str("> in ")
		p.expr(e.Args[0], precPrefix+1)
		p.str(")")
		p.body(e.Args[1])
	case OpMerge:
		p.str("merge(<")
		p.str(strings.Join(e.Vars, ", "))
		p.str("> in <")
		p.expr(e.Args[0], precPrefix+1)
		p.str(", ")
		p.expr(e.Args[1], precPrefix+1)
		p.str(">)")
		p.body(e.Args[2])
	default:
		if e.Op.IsBinary() {
			bp := binaryPrec(e.Op)
			left, right := bp, bp+1
			if bp == precCmp {
				left = bp + 1 // comparisons do not chain
			}
			p.expr(e.Args[0], left)
			p.str(" ")
			p.str(e.Op.String())
			p.str(" ")
			p.expr(e.Args[1], right)
			return
		}
		p.str("<" + e.Op.String() + ">")
	}
}

// body prints the body of a prefix form on its own, indented line.
func (p *printer) body(b *Expr) {
	p.indent++
	p.newline()
	p.expr(b, precPrefix)
	p.indent--
}

func exprPrec(e *Expr) int {
	switch e.Op {
	case OpIf, OpLet, OpSum, OpMerge:
		return precPrefix
	case OpRange:
		return precRange
	case OpNeg, OpNot:
		return precUnary
	case OpConst:
		if e.Type.Depth == 0 && ((e.Type.Base == Real && e.F < 0) || (e.Type.Base != Real && e.I < 0 && e.Type.Base != Bool)) {
			return precUnary
		}
		return precPostfix
	}
	if e.Op.IsBinary() {
		return binaryPrec(e.Op)
	}
	return precPostfix
}
