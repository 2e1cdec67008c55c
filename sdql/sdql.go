package sdql

import (
	"strings"

	"github.com/storel/storel/ir"
)

// Source is one SDQLite text and the name used in its positions.
type Source struct {
	Name string
	Text []byte
}

// Line returns line n (1-based) of the text, without its newline; "" past
// the end. Errors found after compilation (at run time) use it to show the
// user's text under their position.
func (s Source) Line(n int) string {
	return newSourceFile(s.Name, 0, s.Text).line(n)
}

// frontEnd holds the state shared by the passes over one compilation unit.
type frontEnd struct {
	errs   *errorSink
	idents map[string]bool
	files  []*sourceFile
}

func newFrontEnd() *frontEnd {
	return &frontEnd{errs: newErrorSink(), idents: map[string]bool{}}
}

func (fe *frontEnd) parser(src Source) *parser {
	name := src.Name
	if name == "" {
		name = "input"
	}
	f := newSourceFile(name, len(fe.files), src.Text)
	fe.files = append(fe.files, f)
	fe.errs.addFile(f)
	return newParser(f, fe.errs, fe.idents)
}

// parseFiles parses every source; it reports whether there was no error.
func (fe *frontEnd) parseFiles(srcs []Source) []*File {
	var files []*File
	for _, s := range srcs {
		p := fe.parser(s)
		files = append(files, p.parseFile(p.sc.file.name))
	}
	return files
}

// Compile parses, desugars and type-checks the sources as one compilation
// unit, in order (storage mappings first, the program last). On failure the
// error is an ErrorList holding every error found.
func Compile(srcs ...Source) (*ir.Program, error) {
	fe := newFrontEnd()
	files := fe.parseFiles(srcs)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	d := newDesugarer(fe.errs, fe.idents)
	prog := d.program(files)
	c := newChecker(fe.errs, d.notes)
	c.program(prog)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	return prog, nil
}

// ParseFile parses one source into its syntax tree without resolving
// names. The error, if any, is an ErrorList.
func ParseFile(src Source) (*File, error) {
	fe := newFrontEnd()
	files := fe.parseFiles([]Source{src})
	if err := fe.errs.result(); err != nil {
		return nil, err
	}
	return files[0], nil
}

// ParseExpr parses one expression (optionally followed by ';'). The error,
// if any, is an ErrorList.
func ParseExpr(name string, text []byte) (Expr, error) {
	fe := newFrontEnd()
	e := fe.parseOneExpr(Source{Name: name, Text: text})
	if err := fe.errs.result(); err != nil {
		return nil, err
	}
	return e, nil
}

func (fe *frontEnd) parseOneExpr(src Source) (e Expr) {
	p := fe.parser(src)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			e = nil
		}
	}()
	start := p.tok.pos
	e = p.parseExpr()
	p.checkHeight(start, &ExprStmt{X: e})
	if p.tok.kind == tokSemi {
		p.next()
	}
	if p.tok.kind != tokEOF {
		p.fail(p.tok.pos, "expected the end of the expression, found %s", p.describe())
	}
	return e
}

// CompileExpr compiles one expression whose free names are globals of the
// types given in env (for example {"A": {Depth: 2, Base: ir.Real}}). The
// error, if any, is an ErrorList.
func CompileExpr(name string, text []byte, env map[string]ir.Type) (*ir.Expr, error) {
	fe := newFrontEnd()
	ast := fe.parseOneExpr(Source{Name: name, Text: text})
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	for g := range env {
		fe.idents[g] = true
	}
	d := newDesugarer(fe.errs, fe.idents)
	for g, t := range env {
		d.globals[g] = t
	}
	e := d.expr(ast, nil)
	c := newChecker(fe.errs, d.notes)
	for g, t := range env {
		c.globals[g] = t
	}
	c.need(e)
	sweep(e)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	return e, nil
}

// desugarUnit parses and desugars a unit without type checking, for the
// golden tests of desugaring.
func desugarUnit(srcs ...Source) (*ir.Program, error) {
	fe := newFrontEnd()
	files := fe.parseFiles(srcs)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	prog := newDesugarer(fe.errs, fe.idents).program(files)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	return prog, nil
}

// desugarOnly parses and desugars one expression without type checking;
// unbound names become globals. Tests use it to round-trip untyped plans.
func desugarOnly(name string, text []byte) (*ir.Expr, error) {
	fe := newFrontEnd()
	ast := fe.parseOneExpr(Source{Name: name, Text: text})
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	d := newDesugarer(fe.errs, fe.idents)
	d.freeAsGlobals = true
	e := d.expr(ast, nil)
	if fe.errs.count() > 0 {
		return nil, fe.errs.result()
	}
	return e, nil
}

// FormatProgram prints a program as SDQLite statements that Compile reads
// back: declarations, tensor definitions (bodies indented by ir.Format) and
// the result.
func FormatProgram(p *ir.Program) string {
	var sb strings.Builder
	for _, d := range p.Decls {
		sb.WriteString("CREATE ")
		if d.Elem == ir.Int {
			sb.WriteString("int ")
		} else {
			sb.WriteString("real ")
		}
		sb.WriteString(d.Kind.String())
		sb.WriteString(" ")
		sb.WriteString(d.Name)
		switch d.Kind {
		case ir.ObjArray, ir.ObjHashMap:
			sb.WriteString("(")
			for i, dim := range d.Dims {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(indent(ir.Format(dim), "  "))
			}
			sb.WriteString(")")
		case ir.ObjTrie:
			for _, dim := range d.Dims {
				sb.WriteString("(")
				sb.WriteString(indent(ir.Format(dim), "  "))
				sb.WriteString(")")
			}
		}
		sb.WriteString(";\n")
	}
	for _, t := range p.Tensors {
		sb.WriteString("CREATE TENSOR ")
		sb.WriteString(t.Name)
		sb.WriteString(" AS\n  ")
		sb.WriteString(indent(ir.Format(t.Def), "  "))
		sb.WriteString(";\n")
	}
	if p.Result != nil {
		sb.WriteString(ir.Format(p.Result))
		sb.WriteString("\n")
	}
	return sb.String()
}

// indent prefixes every line after the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
