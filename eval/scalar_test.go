package eval

import (
	"math"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

func call1(fn string, args ...*ir.Expr) *ir.Expr { return ir.Call(fn, args...) }

func TestScalarOperators(t *testing.T) {
	st := storage.Store{"s": storage.IntScalar(-7), "x": storage.RealScalar(2.5)}
	inf := math.Inf(1)
	tests := []struct {
		e    *ir.Expr
		want value.Value
	}{
		{add(n(2), n(3)), int64(5)},
		{add(n(2), re(0.5)), 2.5},
		{sub(n(2), n(5)), int64(-3)},
		{sub(re(2), n(5)), -3.0},
		{mul(n(-4), n(3)), int64(-12)},
		{mul(n(3), re(0.5)), 1.5},
		{div(n(7), n(2)), int64(7) / 2},
		{div(gl("s"), n(2)), int64(-7) / 2}, // truncation toward zero: -3
		{div(n(7), re(2)), 3.5},
		{div(re(1), re(0)), inf},
		{div(re(-1), n(0)), math.Inf(-1)},
		{ir.Binary(ir.OpMod, gl("s"), n(3)), int64(-7) % 3},
		{ir.Binary(ir.OpMod, n(7), n(-3)), int64(7) % -3},
		{ir.Binary(ir.OpMod, re(7.5), n(2)), math.Mod(7.5, 2)},
		{ir.Neg(gl("x")), -2.5},
		{ir.Neg(n(4)), int64(-4)},
		{eq(n(2), re(2)), true},
		{ir.Binary(ir.OpNe, n(2), n(2)), false},
		{ir.Binary(ir.OpLt, n(2), re(2.5)), true},
		{ir.Binary(ir.OpLe, n(3), n(3)), true},
		{ir.Binary(ir.OpGt, gl("s"), n(-8)), true},
		{ir.Binary(ir.OpGe, re(1), n(2)), false},
		{ir.Binary(ir.OpLt, re(math.NaN()), re(1)), false},
		{eq(re(math.NaN()), re(math.NaN())), false},
		{ir.Not(eq(n(1), n(2))), true},
		{and(eq(n(1), n(1)), ir.Binary(ir.OpLt, n(1), n(2))), true},
		{ir.Binary(ir.OpOr, eq(n(1), n(2)), eq(n(3), n(3))), true},
		{eq(ir.BoolConst(true), eq(n(1), n(1))), true},
		// && and || short-circuit: the division by zero is never evaluated.
		{and(eq(n(1), n(2)), eq(div(n(1), n(0)), n(0))), false},
		{ir.Binary(ir.OpOr, eq(n(1), n(1)), eq(div(n(1), n(0)), n(0))), true},
		{call1("exp", n(1)), math.Exp(1)},
		{call1("log", re(10)), math.Log(10)},
		{call1("sqrt", n(2)), math.Sqrt(2)},
		{call1("abs", gl("s")), int64(7)},
		{call1("abs", re(-2.25)), 2.25},
		{call1("min", n(3), gl("s")), int64(-7)},
		{call1("max", n(3), gl("s")), int64(3)},
		{call1("min", n(3), re(2.5)), 2.5},
		{call1("max", n(3), re(2.5)), 3.0},
		{ifte(ir.Binary(ir.OpLt, gl("s"), n(0)), n(1), n(2)), int64(1)},
		{ifte(ir.Binary(ir.OpGt, gl("s"), n(0)), n(1), nil), int64(0)},
		{ifte(ir.Binary(ir.OpGt, gl("s"), n(0)), gl("x"), nil), 0.0},
		// int and real mix as real: the int branch of a real if is real.
		{ifte(ir.Binary(ir.OpLt, gl("s"), n(0)), n(1), re(2.5)), 1.0},
		{let("y", mul(gl("x"), n(2)), add(vr("y"), vr("y"))), 10.0},
		{let("y", n(1), let("y", n(2), vr("y"))), int64(2)}, // shadowing
	}
	for _, tc := range tests {
		got := run(t, tc.e, st)
		if !sameScalar(got, tc.want) {
			t.Errorf("%s = %v (%T), want %v (%T)", tc.e, got, got, tc.want, tc.want)
		}
	}
}

// sameScalar compares exactly, kinds included (an int result is not a
// real one).
func sameScalar(a, b value.Value) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	return a == b
}

func TestZOrderBits(t *testing.T) {
	r := newRand(1)
	for range 200 {
		d := int64(r.Uint64() >> uint(r.IntN(64)))
		var even, odd int64
		for b := 0; b < 32; b++ {
			even |= (d >> (2 * b) & 1) << b
			odd |= (d >> (2*b + 1) & 1) << b
		}
		if got := run(t, call1("even_bits", n(d)), nil); got != even {
			t.Fatalf("even_bits(%b) = %b, want %b", d, got, even)
		}
		if got := run(t, call1("odd_bits", n(d)), nil); got != odd {
			t.Fatalf("odd_bits(%b) = %b, want %b", d, got, odd)
		}
	}
	// Spot check on a value whose bits are easy to read: d = 0b100111
	// has even bits (0, 2, 4) = 1, 1, 0 and odd bits (1, 3, 5) = 1, 0, 1.
	if got := run(t, call1("even_bits", n(0b100111)), nil); got != int64(0b011) {
		t.Fatalf("even_bits(0b100111) = %b", got)
	}
	if got := run(t, call1("odd_bits", n(0b100111)), nil); got != int64(0b101) {
		t.Fatalf("odd_bits(0b100111) = %b", got)
	}
}
