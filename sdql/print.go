package sdql

import (
	"strings"

	"github.com/storel/storel/ir"
)

// Format prints a syntax tree (a *File, a Stmt or an Expr) back as
// SDQLite, keeping the parentheses the user wrote and adding none, so that
// it parses back to the same tree. Bodies of sum, let, if and merge go on
// their own indented lines.
func Format(n Node) string {
	p := &astPrinter{}
	p.node(n)
	return p.sb.String()
}

// formatGrouped prints like Format but also parenthesizes every operand
// that is itself an operator application, a range or a prefix form, so the
// grouping the parser chose is visible (used by the parser's golden tests).
func formatGrouped(n Node) string {
	p := &astPrinter{grouped: true}
	p.node(n)
	return p.sb.String()
}

type astPrinter struct {
	sb      strings.Builder
	indent  int
	grouped bool
}

// printContext says where an expression appears, which decides whether
// grouped mode wraps it in parentheses.
type printContext uint8

const (
	ctxFree    printContext = iota // anywhere its extent is already clear
	ctxOperand                     // operand of an operator or the function of an application
)

func (p *astPrinter) str(s string) { p.sb.WriteString(s) }

func (p *astPrinter) newline() {
	p.sb.WriteByte('\n')
	p.str(strings.Repeat("  ", p.indent))
}

func (p *astPrinter) node(n Node) {
	switch n := n.(type) {
	case *File:
		for i, s := range n.Stmts {
			if i > 0 {
				p.newline()
			}
			p.stmt(s)
			if _, bare := s.(*ExprStmt); bare && i < len(n.Stmts)-1 {
				p.str(";")
			}
		}
	case Stmt:
		p.stmt(n)
	case Expr:
		p.expr(n, ctxFree)
	}
}

func (p *astPrinter) stmt(s Stmt) {
	switch s := s.(type) {
	case *CreateObjects:
		p.str("CREATE ")
		if s.Typed {
			p.str(s.Elem.String())
			p.str(" ")
		}
		p.str(s.Kind.String())
		for i, o := range s.Objects {
			if i > 0 {
				p.str(",")
			}
			p.str(" ")
			p.str(o.Name.Name)
			switch s.Kind {
			case ir.ObjArray, ir.ObjHashMap:
				p.str("(")
				p.list(o.Dims, ctxFree)
				p.str(")")
			case ir.ObjTrie:
				for _, d := range o.Dims {
					p.str("(")
					p.expr(d, ctxFree)
					p.str(")")
				}
			}
		}
		p.str(";")
	case *CreateTensor:
		p.str("CREATE TENSOR ")
		p.str(s.Name.Name)
		p.str(" AS")
		p.indent++
		p.newline()
		p.expr(s.Def, ctxFree)
		p.indent--
		p.str(";")
	case *ExprStmt:
		p.expr(s.X, ctxFree)
	}
}

func (p *astPrinter) list(es []Expr, ctx printContext) {
	for i, e := range es {
		if i > 0 {
			p.str(", ")
		}
		p.expr(e, ctx)
	}
}

// body prints the body of a prefix form on its own indented line.
func (p *astPrinter) body(e Expr) {
	p.indent++
	p.newline()
	p.expr(e, ctxFree)
	p.indent--
}

func (p *astPrinter) expr(e Expr, ctx printContext) {
	if p.grouped && ctx == ctxOperand {
		switch e.(type) {
		case *Binary, *Unary, *Range, *Sum, *Let, *If, *Merge:
			p.str("(")
			defer p.str(")")
		}
	}
	switch e := e.(type) {
	case *Ident:
		p.str(e.Name)
	case *IntLit:
		p.str(e.Text)
	case *RealLit:
		p.str(e.Text)
	case *BoolLit:
		if e.Value {
			p.str("true")
		} else {
			p.str("false")
		}
	case *Paren:
		p.str("(")
		p.expr(e.X, ctxFree)
		p.str(")")
	case *Tuple:
		p.str("(")
		p.list(e.Elems, ctxFree)
		p.str(")")
	case *Unary:
		if e.Op == ir.OpNeg {
			p.str("-")
		} else {
			p.str("!")
		}
		p.expr(e.X, ctxOperand)
	case *Binary:
		p.expr(e.X, ctxOperand)
		p.str(" ")
		p.str(e.Op.String())
		p.str(" ")
		p.expr(e.Y, ctxOperand)
	case *Range:
		p.expr(e.Lo, ctxOperand)
		p.str(":")
		p.expr(e.Hi, ctxOperand)
	case *Apply:
		p.expr(e.Fn, ctxOperand)
		p.str("(")
		p.list(e.Args, ctxFree)
		p.str(")")
	case *Call:
		p.str(e.Fn)
		p.str("(")
		p.list(e.Args, ctxFree)
		p.str(")")
	case *Dict:
		if len(e.Entries) == 0 {
			p.str("{}")
			return
		}
		p.str("{ ")
		for i, en := range e.Entries {
			if i > 0 {
				p.str(", ")
			}
			if en.Ann != ir.AnnNone {
				p.str(en.Ann.String())
				p.str(" ")
			}
			p.expr(en.Key, ctxFree)
			p.str(" -> ")
			p.expr(en.Value, ctxFree)
		}
		p.str(" }")
	case *If:
		p.str("if ")
		p.expr(e.Cond, ctxFree)
		p.str(" then")
		p.body(e.Then)
		if e.Else != nil {
			p.newline()
			p.str("else")
			p.body(e.Else)
		}
	case *Let:
		p.str("let ")
		for i, b := range e.Binds {
			if i > 0 {
				p.str(", ")
			}
			p.str(b.Name.Name)
			p.str(" = ")
			p.expr(b.Value, ctxFree)
		}
		p.str(" in")
		p.newline()
		p.expr(e.Body, ctxFree)
	case *Sum:
		p.str("sum(")
		for i, g := range e.Gens {
			if i > 0 {
				p.str(", ")
			}
			p.str("<")
			if g.Tuple {
				p.str("(")
			}
			for j, k := range g.Keys {
				if j > 0 {
					p.str(", ")
				}
				p.str(k.Name)
			}
			if g.Tuple {
				p.str(")")
			}
			p.str(", ")
			p.str(g.Value.Name)
			p.str("> in ")
			p.expr(g.Src, ctxFree)
		}
		p.str(")")
		p.body(e.Body)
	case *Merge:
		p.str("merge(<")
		p.str(e.K1.Name + ", " + e.K2.Name + ", " + e.V.Name)
		p.str("> in <")
		p.expr(e.E1, ctxFree)
		p.str(", ")
		p.expr(e.E2, ctxFree)
		p.str(">)")
		p.body(e.Body)
	}
}
