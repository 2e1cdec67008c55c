package ir

import "testing"

func TestPrintAndSubst(t *testing.T) {
	// sum(<k, v> in A) { k -> v * x }  with x := k  must rename the binder k.
	body := Singleton(AnnNone, Var("k"), Binary(OpMul, Var("v"), Var("x")))
	e := Sum("k", "v", Global("A"), body)
	got := Subst(e, map[string]*Expr{"x": Var("k")}).String()
	want := "sum(<k1, v> in A) { k1 -> v * k }"
	if got != want {
		t.Fatalf("Subst: got %q, want %q", got, want)
	}
	if fv := FreeVars(e); len(fv) != 1 || !fv["x"] {
		t.Fatalf("FreeVars = %v, want {x}", fv)
	}
	// Shadowing: substituting k inside a sum that binds k changes nothing.
	if Subst(e, map[string]*Expr{"k": IntConst(3)}) != e {
		t.Fatalf("Subst under shadowing binder changed the tree")
	}
	// Precedence: (a + b) * c and a - (b - c) keep their parentheses;
	// a prefix form as an operand is parenthesized.
	x := Binary(OpMul, Binary(OpAdd, Var("a"), Var("b")), Var("c"))
	if s := x.String(); s != "(a + b) * c" {
		t.Fatalf("got %q", s)
	}
	y := Binary(OpSub, Var("a"), Binary(OpSub, Var("b"), Var("c")))
	if s := y.String(); s != "a - (b - c)" {
		t.Fatalf("got %q", s)
	}
	z := Binary(OpMul, e, Var("y"))
	if s := z.String(); s != "(sum(<k, v> in A) { k -> v * x }) * y" {
		t.Fatalf("got %q", s)
	}
}
