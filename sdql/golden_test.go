package sdql

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/storel/storel/internal/datadriven"
	"github.com/storel/storel/ir"
)

// The golden files under testdata are the specification of the front end:
// run "go test ./sdql -rewrite" after a change and review the diff.
//
// Commands:
//
//	scan         the tokens, one a line
//	parse        the syntax tree printed back with every operand grouped
//	desugar      the desugared program (no type checking)
//	typecheck    the types of the tensors and of the result
//	types        every node of the checked program with its type
//	compile-expr NAME=TYPE...  CompileExpr with globals such as A=real:2
//	             (a {int -> {int -> real}}) or n=int
//
// An input may hold several sources, each starting with a line
// "=== name"; otherwise it is one source named test.sdql.
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, runGolden)
	})
}

func sourcesOf(input string) []Source {
	if !strings.HasPrefix(input, "=== ") {
		return []Source{{Name: "test.sdql", Text: []byte(input)}}
	}
	var srcs []Source
	for _, part := range strings.Split(input[len("=== "):], "\n=== ") {
		name, text, _ := strings.Cut(part, "\n")
		srcs = append(srcs, Source{Name: strings.TrimSpace(name), Text: []byte(text)})
	}
	return srcs
}

func runGolden(t *testing.T, d *datadriven.TestData) string {
	srcs := sourcesOf(d.Input)
	switch d.Cmd {
	case "scan":
		return scanTokens(srcs[0])
	case "parse":
		f, err := ParseFile(srcs[0])
		if err != nil {
			return err.Error()
		}
		checkParseRoundTrip(t, d, f)
		return formatGrouped(f)
	case "desugar":
		p, err := desugarUnit(srcs...)
		if err != nil {
			return err.Error()
		}
		checkPositions(t, d, p)
		text := FormatProgram(p)
		if q, err := desugarUnit(Source{Name: "roundtrip.sdql", Text: []byte(text)}); err != nil {
			t.Errorf("%s: the printed program does not read back:\n%s\n%v", d.Pos, text, err)
		} else if again := FormatProgram(q); again != text {
			t.Errorf("%s: the printed program does not round-trip:\n%s\nbecame\n%s", d.Pos, text, again)
		}
		return text
	case "typecheck", "types":
		p, err := Compile(srcs...)
		if err != nil {
			return err.Error()
		}
		checkPositions(t, d, p)
		checkTyped(t, d, p)
		checkProgramRoundTrip(t, d, p)
		if d.Cmd == "types" {
			return dumpTypes(p)
		}
		return summarizeTypes(p)
	case "compile-expr":
		env := map[string]ir.Type{}
		for _, a := range d.CmdArgs {
			if len(a.Vals) != 1 {
				d.Fatalf(t, "argument %s needs a type", a.Key)
			}
			env[a.Key] = parseTypeArg(t, d, a.Vals[0])
		}
		e, err := CompileExpr("expr.sdql", []byte(d.Input), env)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%s\n: %s", ir.Format(e), e.Type)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// parseTypeArg reads "int", "real", "real:2" (depth 2) or "int:1".
func parseTypeArg(t *testing.T, d *datadriven.TestData, s string) ir.Type {
	base, depth, _ := strings.Cut(s, ":")
	var ty ir.Type
	switch base {
	case "int":
		ty.Base = ir.Int
	case "real":
		ty.Base = ir.Real
	case "bool":
		ty.Base = ir.Bool
	default:
		d.Fatalf(t, "bad type %q", s)
	}
	if depth != "" {
		n, err := strconv.Atoi(depth)
		if err != nil {
			d.Fatalf(t, "bad depth in %q", s)
		}
		ty.Depth = n
	}
	return ty
}

func scanTokens(src Source) string {
	errs := newErrorSink()
	f := newSourceFile(src.Name, 0, src.Text)
	errs.addFile(f)
	sc := newScanner(f, errs)
	var sb strings.Builder
	for {
		tok := sc.next()
		fmt.Fprintf(&sb, "%d:%d %s", tok.pos.Line, tok.pos.Col, tok.kind)
		if tok.text != "" && tok.text != tok.kind.String() {
			fmt.Fprintf(&sb, " %s", tok.text)
		}
		sb.WriteString("\n")
		if tok.kind == tokEOF {
			break
		}
	}
	if err := errs.result(); err != nil {
		sb.WriteString(err.Error())
	}
	return sb.String()
}

func summarizeTypes(p *ir.Program) string {
	var sb strings.Builder
	for _, t := range p.Tensors {
		fmt.Fprintf(&sb, "tensor %s: %s\n", t.Name, t.Def.Type)
	}
	if p.Result != nil {
		fmt.Fprintf(&sb, "result: %s\n", p.Result.Type)
	}
	return sb.String()
}

// dumpTypes prints every node of the tensors and the result, indented by
// depth, with its type.
func dumpTypes(p *ir.Program) string {
	var sb strings.Builder
	var dump func(e *ir.Expr, depth int)
	dump = func(e *ir.Expr, depth int) {
		sb.WriteString(strings.Repeat("  ", depth))
		switch e.Op {
		case ir.OpConst:
			sb.WriteString(e.String())
		case ir.OpVar, ir.OpGlobal, ir.OpCall:
			fmt.Fprintf(&sb, "%s %s", e.Op, e.Name)
		default:
			sb.WriteString(e.Op.String())
		}
		if len(e.Vars) > 0 {
			fmt.Fprintf(&sb, " <%s>", strings.Join(e.Vars, ", "))
		}
		if e.Ann != ir.AnnNone {
			fmt.Fprintf(&sb, " %s", e.Ann)
		}
		fmt.Fprintf(&sb, " : %s\n", e.Type)
		for _, a := range e.Args {
			dump(a, depth+1)
		}
	}
	for _, t := range p.Tensors {
		fmt.Fprintf(&sb, "tensor %s\n", t.Name)
		dump(t.Def, 1)
	}
	if p.Result != nil {
		sb.WriteString("result\n")
		dump(p.Result, 1)
	}
	return sb.String()
}

func programExprs(p *ir.Program) []*ir.Expr {
	var es []*ir.Expr
	for _, d := range p.Decls {
		es = append(es, d.Dims...)
	}
	for _, t := range p.Tensors {
		es = append(es, t.Def)
	}
	if p.Result != nil {
		es = append(es, p.Result)
	}
	return es
}

// checkPositions asserts that every IR node points into the source.
func checkPositions(t *testing.T, d *datadriven.TestData, p *ir.Program) {
	for _, e := range programExprs(p) {
		ir.Walk(e, func(n *ir.Expr) bool {
			if !n.Pos.IsValid() {
				t.Errorf("%s: node %s has no position", d.Pos, n)
			}
			return true
		})
	}
}

// checkTyped asserts that the checker gave every node a type.
func checkTyped(t *testing.T, d *datadriven.TestData, p *ir.Program) {
	for _, e := range programExprs(p) {
		ir.Walk(e, func(n *ir.Expr) bool {
			if n.Type.Base == ir.Unknown || n.Type.Depth < 0 {
				t.Errorf("%s: node %s has no type", d.Pos, n)
			}
			return true
		})
	}
}

// checkParseRoundTrip asserts that Format prints a tree that parses back
// to the same tree.
func checkParseRoundTrip(t *testing.T, d *datadriven.TestData, f *File) {
	text := Format(f)
	g, err := ParseFile(Source{Name: "roundtrip.sdql", Text: []byte(text)})
	if err != nil {
		t.Errorf("%s: Format output does not parse:\n%s\n%v", d.Pos, text, err)
		return
	}
	if a, b := formatGrouped(f), formatGrouped(g); a != b {
		t.Errorf("%s: Format does not round-trip:\n%s\nreparsed as\n%s", d.Pos, a, b)
	}
}

// checkProgramRoundTrip asserts that the printed program compiles again to
// the same printed program.
func checkProgramRoundTrip(t *testing.T, d *datadriven.TestData, p *ir.Program) {
	text := FormatProgram(p)
	q, err := Compile(Source{Name: "roundtrip.sdql", Text: []byte(text)})
	if err != nil {
		t.Errorf("%s: the printed program does not compile:\n%s\n%v", d.Pos, text, err)
		return
	}
	if again := FormatProgram(q); again != text {
		t.Errorf("%s: the printed program does not round-trip:\n%s\nbecame\n%s", d.Pos, text, again)
	}
	if a, b := summarizeTypes(p), summarizeTypes(q); a != b {
		t.Errorf("%s: types changed in the round trip:\n%s\nbecame\n%s", d.Pos, a, b)
	}
}
