package eval

import (
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

func TestRuntimeErrors(t *testing.T) {
	st := storage.Store{
		"C_pos2": storage.IntArray([]int64{0, 3, 3, 5}),
		"C_idx2": storage.IntArray([]int64{0, 2, 3, 0, 3}),
		"C_val":  storage.RealArray([]float64{6, 9, 8, 5, 7}),
		"one":    storage.RealArray([]float64{1}),
		"zero":   storage.IntScalar(0),
	}
	tests := []struct {
		name string
		e    *ir.Expr
		opt  Options
		want string
	}{
		{"lookup past end",
			at(3, 7, look(gl("C_pos2"), n(5))), Options{},
			"t.sdql:3:7: C_pos2(5) is past the end of C_pos2, which has 4 elements"},
		{"lookup at length",
			at(1, 1, look(gl("C_pos2"), add(n(2), n(2)))), Options{},
			"t.sdql:1:1: C_pos2(4) is past the end of C_pos2, which has 4 elements"},
		{"lookup before start",
			at(2, 4, look(gl("C_val"), n(-1))), Options{},
			"t.sdql:2:4: C_val(-1) is before the start of C_val"},
		{"one element",
			at(2, 4, look(gl("one"), n(1))), Options{},
			"t.sdql:2:4: one(1) is past the end of one, which has 1 element"},
		// Through a let, the dictionary still knows which array it views.
		{"lookup past end through let",
			let("p", gl("C_pos2"), at(4, 2, look(vr("p"), n(9)))), Options{},
			"t.sdql:4:2: C_pos2(9) is past the end of C_pos2, which has 4 elements"},
		{"lookup past end inside a sum",
			sum("row", "_", rng(n(0), n(4)), at(5, 9, look(gl("C_pos2"), add(vr("row"), n(1))))), Options{},
			"t.sdql:5:9: C_pos2(4) is past the end of C_pos2, which has 4 elements"},
		{"subarray past end",
			at(6, 3, subarr(gl("C_idx2"), n(3), n(7))), Options{},
			"t.sdql:6:3: C_idx2(3:7) runs past the end of C_idx2, which has 5 elements"},
		{"subarray before start",
			at(6, 3, subarr(gl("C_idx2"), n(-2), n(1))), Options{},
			"t.sdql:6:3: C_idx2(-2:1) starts before the start of C_idx2"},
		{"subarray backwards",
			at(7, 1, sum("p", "j", subarr(gl("C_idx2"), n(4), n(2)), vr("j"))), Options{},
			"t.sdql:7:1: C_idx2(4:2): the segment starts after it ends"},
		{"subarray backwards on a range",
			at(7, 1, subarr(rng(n(0), n(9)), n(4), n(2))), Options{},
			"t.sdql:7:1: (0:9)(4:2): the segment starts after it ends"},
		{"int division by zero",
			add(n(1), at(8, 5, div(n(1), gl("zero")))), Options{},
			"t.sdql:8:5: integer division by zero"},
		{"int modulo by zero",
			at(8, 6, ir.Binary(ir.OpMod, n(1), gl("zero"))), Options{},
			"t.sdql:8:6: integer modulo by zero"},
		{"unbound variable",
			sum("i", "x", gl("C_val"), at(9, 2, mul(vr("x"), at(9, 6, vr("q"))))), Options{},
			"t.sdql:9:6: unbound variable q"},
		{"variable bound only in the body is unbound in the source",
			sum("i", "x", at(9, 3, vr("i")), vr("x")), Options{},
			"t.sdql:9:3: unbound variable i"},
		{"unknown object",
			at(10, 1, look(gl("nope"), n(0))), Options{},
			"t.sdql:10:1: no data for physical object nope"},
		{"step limit",
			at(11, 1, sum("i", "_", rng(n(0), n(1000)), vr("i"))), Options{MaxSteps: 100},
			"t.sdql:11:1: evaluation stopped after 100 steps"},
		{"unknown function",
			at(12, 1, ir.Call("cosh", n(1))), Options{},
			"t.sdql:12:1: unknown function cosh"},
		{"function arity",
			at(12, 2, ir.Call("exp", n(1), n(2))), Options{},
			"t.sdql:12:2: exp takes 1 argument(s), not 2"},
		{"real key",
			at(13, 1, single(at(13, 3, re(1.5)), n(1))), Options{},
			"t.sdql:13:3: dictionary key or index is real, not int"},
		{"merge of a matrix",
			at(14, 1, ir.Merge("a", "b", "v", sum("i", "_", rng(n(0), n(2)), single(vr("i"), single(n(0), n(1)))), gl("C_idx2"), n(1))), Options{},
			"t.sdql:14:1: merge iterates vectors of numbers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runErr(t, tc.e, st, tc.opt)
			wantSubstr(t, got, tc.want)
		})
	}
}

// A node without a position (as produced by a rewrite) reports the
// position of the nearest enclosing node that has one.
func TestErrorPositionFromEnclosingNode(t *testing.T) {
	st := storage.Store{"A": storage.IntArray([]int64{1, 2})}
	e := at(3, 1, add(n(1), look(gl("A"), n(2)))) // the lookup has no position
	got := runErr(t, e, st, Options{})
	want := "t.sdql:3:1: A(2) is past the end of A, which has 2 elements"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Without any position the message stands alone.
	got = runErr(t, look(gl("A"), n(-3)), st, Options{})
	if got != "A(-3) is before the start of A: positions start at 0" {
		t.Fatalf("got %q", got)
	}
}

func TestMalformedAndUntyped(t *testing.T) {
	st := storage.Store{"A": storage.IntArray([]int64{1, 2})}
	// Untyped: the zero of a sum depends on its type.
	e := at(1, 1, sum("i", "v", gl("A"), vr("v")))
	if _, err := Eval(e, st); err == nil || err.Error() != "t.sdql:1:1: sum node has no type (run the type checker first)" {
		t.Fatalf("untyped sum: %v", err)
	}
	bad := []*ir.Expr{
		{Op: ir.OpAdd, Args: []*ir.Expr{n(1)}, Type: ir.IntType},
		{Op: ir.OpSum, Args: []*ir.Expr{gl("A"), n(1)}, Vars: []string{"i"}, Type: ir.IntType},
		{Op: ir.OpLookup, Args: []*ir.Expr{gl("A"), nil}, Type: ir.IntType},
		{Op: ir.OpInvalid},
		{Op: ir.Op(200)},
	}
	for _, e := range bad {
		if _, err := Eval(e, st); err == nil {
			t.Errorf("Eval(%s) succeeded, want an error", e)
		}
	}
	if _, err := Eval(nil, st); err == nil {
		t.Errorf("Eval(nil) succeeded")
	}
}

func TestBadPhysicalObjects(t *testing.T) {
	dup := storage.NewTrie(ir.Real, []int64{3})
	dup.Root.Keys = []int64{1, 1}
	dup.Root.F = []float64{1, 2}
	short := storage.NewHashMap(ir.Int, []int64{3})
	short.Keys = []storage.HKey{{1}}
	st := storage.Store{
		"dup":   dup,
		"short": short,
		"bools": &storage.Array{Elem: ir.Bool},
	}
	for _, name := range []string{"dup", "short", "bools"} {
		e := at(1, 1, sum("k", "v", gl(name), n(1)))
		e.Args[0].Type = ir.Type{Depth: 1, Base: ir.Real}
		e.Type = ir.IntType
		e.Args[1].Type = ir.IntType
		if _, err := Eval(e, st); err == nil {
			t.Errorf("summing over bad object %s succeeded", name)
		} else {
			wantSubstr(t, err.Error(), "t.sdql:1:1: ")
		}
	}
}
