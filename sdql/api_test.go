package sdql

import (
	"errors"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
)

const csrProgram = `CREATE int SCALAR C_len1, C_nnz;
CREATE int ARRAY C_pos2(C_len1 + 1);
CREATE int ARRAY C_idx2(C_nnz);
CREATE ARRAY C_val(C_nnz);
CREATE int HASHMAP H(C_len1, 4);
CREATE TRIE T(C_len1)(4)(2);
CREATE TENSOR C AS sum(<row,_> in 0:C_len1)
    { @unique row ->
      sum(<off,col> in C_idx2(C_pos2(row):C_pos2(row+1)))
        { @unique col -> C_val(off) }
    };
CREATE TENSOR D AS 2 * C;
`

func TestCompileFillsProgram(t *testing.T) {
	p, err := Compile(
		Source{Name: "csr.sdql", Text: []byte(csrProgram)},
		Source{Name: "q.sdql", Text: []byte("sum(<i, row> in D) row(0)")},
	)
	if err != nil {
		t.Fatal(err)
	}
	type declWant struct {
		name string
		kind ir.ObjKind
		elem ir.Base
		dims string
		typ  string
	}
	want := []declWant{
		{"C_len1", ir.ObjScalar, ir.Int, "", "int"},
		{"C_nnz", ir.ObjScalar, ir.Int, "", "int"},
		{"C_pos2", ir.ObjArray, ir.Int, "C_len1 + 1", "{int -> int}"},
		{"C_idx2", ir.ObjArray, ir.Int, "C_nnz", "{int -> int}"},
		{"C_val", ir.ObjArray, ir.Real, "C_nnz", "{int -> real}"}, // real by default
		{"H", ir.ObjHashMap, ir.Int, "C_len1 4", "{int -> {int -> int}}"},
		{"T", ir.ObjTrie, ir.Real, "C_len1 4 2", "{int -> {int -> {int -> real}}}"},
	}
	if len(p.Decls) != len(want) {
		t.Fatalf("got %d declarations, want %d", len(p.Decls), len(want))
	}
	for i, w := range want {
		d := p.Decls[i]
		var dims []string
		for _, dim := range d.Dims {
			dims = append(dims, dim.String())
			if dim.Type != ir.IntType {
				t.Errorf("%s: size %s has type %s", d.Name, dim, dim.Type)
			}
		}
		if d.Name != w.name || d.Kind != w.kind || d.Elem != w.elem || strings.Join(dims, " ") != w.dims || d.Type().String() != w.typ {
			t.Errorf("declaration %d = %s %s %s (%s) %s, want %+v", i, d.Name, d.Kind, d.Elem, dims, d.Type(), w)
		}
		if d.Pos.File != "csr.sdql" || !d.Pos.IsValid() {
			t.Errorf("%s has position %s", d.Name, d.Pos)
		}
	}
	if p.Decl("C_val") != p.Decls[4] || p.Decl("nope") != nil {
		t.Errorf("Program.Decl lookup is wrong")
	}
	if len(p.Tensors) != 2 || p.Tensors[0].Name != "C" || p.Tensors[1].Name != "D" {
		t.Fatalf("tensors: %+v", p.Tensors)
	}
	if got := p.Tensors[0].Pos.String(); got != "csr.sdql:7:15" {
		t.Errorf("tensor C at %s", got)
	}
	if d := p.Tensors[1].Def; d.Args[1].Op != ir.OpVar || d.Args[1].Name != "C" {
		t.Errorf("a tensor reference must be a variable (bound by Compose), got %s", d.Args[1].Op)
	}
	if p.Result == nil || p.Result.Type.String() != "real" || p.Result.Pos.File != "q.sdql" {
		t.Errorf("result: %v", p.Result)
	}
	// The naive plan binds the tensors the result needs.
	plan := p.Compose("")
	if plan == nil || plan.Op != ir.OpLet || plan.Vars[0] != "C" || plan.Args[1].Vars[0] != "D" {
		t.Fatalf("Compose gave %v", plan)
	}
}

// The naive plan printed by ir.Format compiles again over the declared
// objects and prints the same.
func TestComposedPlanReadsBack(t *testing.T) {
	p, err := Compile(
		Source{Name: "csr.sdql", Text: []byte(csrProgram)},
		Source{Name: "q.sdql", Text: []byte("sum(<(i, j), v> in D, <(j, k), w> in C) { (i, k) -> v * w }")},
	)
	if err != nil {
		t.Fatal(err)
	}
	plan := p.Compose("")
	env := map[string]ir.Type{}
	for _, d := range p.Decls {
		env[d.Name] = d.Type()
	}
	text := ir.Format(plan)
	again, err := CompileExpr("plan.sdql", []byte(text), env)
	if err != nil {
		t.Fatalf("composed plan does not compile:\n%s\n%v", text, err)
	}
	if ir.Format(again) != text || again.Type != plan.Type {
		t.Fatalf("composed plan changed:\n%s\nbecame\n%s", text, ir.Format(again))
	}
}

func TestErrorsAreListedWithCarets(t *testing.T) {
	src := "CREATE int SCALAR N;\nCREATE TENSOR X AS sum(<i, v> in N) v;\nCREATE TENSOR Y AS C_pos3(1) + 1.5 * {1 -> 2};\n"
	_, err := Compile(Source{Name: "bad.sdql", Text: []byte(src)})
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not an ErrorList", err)
	}
	if len(list) != 2 {
		t.Fatalf("got %d errors, want 2 (the undefined name must not also fail the +):\n%v", len(list), err)
	}
	first := list[0]
	if first.Pos.String() != "bad.sdql:2:34" || first.Line != "CREATE TENSOR X AS sum(<i, v> in N) v;" ||
		first.Error() != "bad.sdql:2:34: sum needs a dictionary to iterate over, but N is an int scalar" {
		t.Errorf("first error: %#v / %q", first, first.Error())
	}
	want := "bad.sdql:2:34: sum needs a dictionary to iterate over, but N is an int scalar\n" +
		"CREATE TENSOR X AS sum(<i, v> in N) v;\n" +
		"                                 ^\n" +
		"bad.sdql:3:20: undefined: C_pos3\n" +
		"CREATE TENSOR Y AS C_pos3(1) + 1.5 * {1 -> 2};\n" +
		"                   ^"
	if got := err.Error(); got != want {
		t.Errorf("ErrorList.Error() =\n%s\nwant\n%s", got, want)
	}
}

func TestErrorsAreCapped(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString("CREATE TENSOR T")
		sb.WriteString(strings.Repeat("x", i))
		sb.WriteString(" AS undefined;\n")
	}
	_, err := Compile(Source{Name: "many.sdql", Text: []byte(sb.String())})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != maxErrors+1 || list[maxErrors].Msg != "too many errors" {
		t.Fatalf("want %d errors and a final 'too many errors', got %d", maxErrors, len(list))
	}
}

func TestParseExpr(t *testing.T) {
	e, err := ParseExpr("e.sdql", []byte("(sum(<(i, j), v> in A) { (j, i) -> v }) + B(1, 2:3);"))
	if err != nil {
		t.Fatal(err)
	}
	bin, ok := e.(*Binary)
	if !ok || bin.Op != ir.OpAdd {
		t.Fatalf("want a sum at the top, got %T", e)
	}
	if paren, ok := bin.X.(*Paren); !ok {
		t.Fatalf("left operand is %T", bin.X)
	} else if _, ok := paren.X.(*Sum); !ok {
		t.Fatalf("left operand is (%T)", paren.X)
	}
	if got := Format(e); got != "(sum(<(i, j), v> in A)\n  { (j, i) -> v }) + B(1, 2:3)" {
		t.Errorf("Format = %q", got)
	}
	if e.Pos().String() != "e.sdql:1:41" || bin.X.Pos().String() != "e.sdql:1:1" {
		t.Errorf("positions %s %s", e.Pos(), bin.X.Pos())
	}
	if _, err := ParseExpr("e.sdql", []byte("CREATE int SCALAR n")); err == nil {
		t.Errorf("a statement is not an expression")
	}
}

func TestCompileExprTypes(t *testing.T) {
	env := map[string]ir.Type{"A": {Depth: 2, Base: ir.Real}, "x": ir.IntType}
	e, err := CompileExpr("e.sdql", []byte("sum(<(i, j), v> in A) { j -> v * x }"), env)
	if err != nil {
		t.Fatal(err)
	}
	if e.Type.String() != "{int -> real}" {
		t.Errorf("type %s", e.Type)
	}
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Type.Base == ir.Unknown {
			t.Errorf("untyped node %s", n)
		}
		if n.Op == ir.OpGlobal && n.Name == "A" && n.Type != env["A"] {
			t.Errorf("global A typed %s", n.Type)
		}
		return true
	})
}

func TestTallTreesAreRefused(t *testing.T) {
	long := strings.Repeat("1 + ", maxHeight+5) + "1"
	_, err := Compile(Source{Name: "long.sdql", Text: []byte("CREATE TENSOR T AS " + long + ";\nCREATE TENSOR U AS (")})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 || !strings.Contains(list[0].Msg, "expression too large") || list[1].Pos.String() != "long.sdql:2:21" {
		var msgs []string
		for _, e := range list {
			msgs = append(msgs, e.Pos.String()+": "+e.Msg)
		}
		t.Fatalf("want a refusal and the next statement's error, got %q", msgs)
	}
	if _, err := CompileExpr("e.sdql", []byte(long), nil); err == nil {
		t.Fatalf("CompileExpr accepted a tree of height %d", maxHeight+5)
	}
	ok := strings.Repeat("1 + ", maxHeight/2) + "1"
	if _, err := CompileExpr("e.sdql", []byte(ok), nil); err != nil {
		t.Fatalf("a chain of %d terms is refused: %.200s", maxHeight/2, err)
	}
}

func TestCaretOnLongLines(t *testing.T) {
	line := strings.Repeat("a + ", 100) + "b + " + strings.Repeat("a + ", 100) + "a"
	e := &Error{Pos: ir.Pos{File: "f", Line: 1, Col: 401}, Msg: "m", Line: line}
	lines := strings.Split(e.Caret(), "\n")
	if len(lines) != 3 || len(lines[1]) != maxCaretLine+6 || !strings.HasPrefix(lines[1], "...") || !strings.HasSuffix(lines[1], "...") {
		t.Fatalf("long line not cut to a window:\n%s", e.Caret())
	}
	if at := strings.Index(lines[2], "^"); lines[1][at] != 'b' {
		t.Fatalf("caret under %q, want b:\n%s", lines[1][at], e.Caret())
	}
	short := &Error{Pos: ir.Pos{File: "f", Line: 1, Col: 3}, Msg: "m", Line: "\tx + y"}
	if got := short.Caret(); got != "f:1:3: m\n\tx + y\n\t ^" {
		t.Fatalf("got %q", got)
	}
}
