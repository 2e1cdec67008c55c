package eval

import (
	"errors"
	"fmt"
	"math"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// binary applies a two-operand operator other than && and || (which
// short-circuit and are evaluated in place).
func binary(op ir.Op, a, b value.Value) (value.Value, error) {
	switch op {
	case ir.OpAdd:
		if err := noBools(op, a, b); err != nil {
			return nil, err
		}
		return value.Add(a, b)
	case ir.OpSub:
		if err := noBools(op, a, b); err != nil {
			return nil, err
		}
		return subtract(a, b)
	case ir.OpMul:
		if err := noBools(op, a, b); err != nil {
			return nil, err
		}
		return value.Mul(a, b)
	case ir.OpDiv:
		return divide(a, b)
	case ir.OpMod:
		return modulo(a, b)
	}
	return compare(op, a, b)
}

func noBools(op ir.Op, a, b value.Value) error {
	_, ab := a.(bool)
	_, bb := b.(bool)
	if ab || bb {
		return fmt.Errorf("cannot apply %s to %s and %s", op, value.Kind(a), value.Kind(b))
	}
	return nil
}

// subtract is a - b: Go arithmetic on numbers, a + (-1)*b on dictionaries.
func subtract(a, b value.Value) (value.Value, error) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return x - y, nil
		}
	}
	x, okx := value.ToReal(a)
	y, oky := value.ToReal(b)
	if okx && oky {
		return x - y, nil
	}
	nb, err := value.Neg(b)
	if err != nil {
		return nil, err
	}
	return value.Add(a, nb)
}

// numbers returns a and b as ints when both are ints, else as reals.
func numbers(op ir.Op, a, b value.Value) (x, y int64, fx, fy float64, ints bool, err error) {
	x, xi := a.(int64)
	y, yi := b.(int64)
	if xi && yi {
		return x, y, 0, 0, true, nil
	}
	fx, okx := value.ToReal(a)
	fy, oky := value.ToReal(b)
	if !okx || !oky {
		return 0, 0, 0, 0, false, fmt.Errorf("cannot apply %s to %s and %s", op, value.Kind(a), value.Kind(b))
	}
	return 0, 0, fx, fy, false, nil
}

// divide truncates int/int (Go semantics) and follows IEEE for reals.
func divide(a, b value.Value) (value.Value, error) {
	x, y, fx, fy, ints, err := numbers(ir.OpDiv, a, b)
	switch {
	case err != nil:
		return nil, err
	case !ints:
		return fx / fy, nil
	case y == 0:
		return nil, errors.New("integer division by zero")
	}
	return x / y, nil
}

// modulo is Go's % on ints (the sign follows the dividend) and math.Mod,
// which agrees with it, on reals.
func modulo(a, b value.Value) (value.Value, error) {
	x, y, fx, fy, ints, err := numbers(ir.OpMod, a, b)
	switch {
	case err != nil:
		return nil, err
	case !ints:
		return math.Mod(fx, fy), nil
	case y == 0:
		return nil, errors.New("integer modulo by zero")
	}
	return x % y, nil
}

func compare(op ir.Op, a, b value.Value) (value.Value, error) {
	if x, ok := a.(bool); ok {
		y, ok := b.(bool)
		if ok && (op == ir.OpEq || op == ir.OpNe) {
			return (x == y) == (op == ir.OpEq), nil
		}
		return nil, fmt.Errorf("cannot apply %s to %s and %s", op, value.Kind(a), value.Kind(b))
	}
	_, ad := a.(*value.Dict)
	_, bd := b.(*value.Dict)
	if ad || bd {
		if op == ir.OpEq || op == ir.OpNe {
			return value.Equal(a, b, 0) == (op == ir.OpEq), nil
		}
		return nil, fmt.Errorf("cannot apply %s to %s and %s", op, value.Kind(a), value.Kind(b))
	}
	x, y, fx, fy, ints, err := numbers(op, a, b)
	if err != nil {
		return nil, err
	}
	var c int // -1, 0, 1; reals compare with IEEE rules below
	if ints {
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
		return cmpResult(op, c), nil
	}
	switch op {
	case ir.OpEq:
		return fx == fy, nil
	case ir.OpNe:
		return fx != fy, nil
	case ir.OpLt:
		return fx < fy, nil
	case ir.OpLe:
		return fx <= fy, nil
	case ir.OpGt:
		return fx > fy, nil
	case ir.OpGe:
		return fx >= fy, nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

func cmpResult(op ir.Op, c int) bool {
	switch op {
	case ir.OpEq:
		return c == 0
	case ir.OpNe:
		return c != 0
	case ir.OpLt:
		return c < 0
	case ir.OpLe:
		return c <= 0
	case ir.OpGt:
		return c > 0
	}
	return c >= 0 // OpGe
}

// call applies a built-in scalar function.
func call(name string, args []value.Value) (value.Value, error) {
	for _, a := range args {
		if _, ok := value.ToReal(a); !ok {
			return nil, fmt.Errorf("%s: argument is %s, not a number", name, value.Kind(a))
		}
	}
	arity := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d argument(s), not %d", name, n, len(args))
		}
		return nil
	}
	switch name {
	case "exp", "log", "sqrt":
		if err := arity(1); err != nil {
			return nil, err
		}
		x, _ := value.ToReal(args[0])
		switch name {
		case "exp":
			return math.Exp(x), nil
		case "log":
			return math.Log(x), nil
		}
		return math.Sqrt(x), nil
	case "abs":
		if err := arity(1); err != nil {
			return nil, err
		}
		if x, ok := args[0].(int64); ok {
			if x < 0 {
				return -x, nil
			}
			return x, nil
		}
		return math.Abs(args[0].(float64)), nil
	case "even_bits", "odd_bits":
		if err := arity(1); err != nil {
			return nil, err
		}
		x, ok := args[0].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: argument is real, not int", name)
		}
		if name == "odd_bits" {
			return int64(ir.CompactEvenBits(uint64(x) >> 1)), nil
		}
		return int64(ir.CompactEvenBits(uint64(x))), nil
	case "min", "max":
		if len(args) < 1 {
			return nil, fmt.Errorf("%s takes at least one argument", name)
		}
		return minMax(name == "min", args), nil
	}
	return nil, fmt.Errorf("unknown function %s", name)
}

// minMax returns the least (or greatest) argument: an int when all are
// ints, else a real (NaN if any is NaN).
func minMax(isMin bool, args []value.Value) value.Value {
	allInts := true
	for _, a := range args {
		if _, ok := a.(int64); !ok {
			allInts = false
		}
	}
	if allInts {
		m := args[0].(int64)
		for _, a := range args[1:] {
			x := a.(int64)
			if (isMin && x < m) || (!isMin && x > m) {
				m = x
			}
		}
		return m
	}
	m, _ := value.ToReal(args[0])
	for _, a := range args[1:] {
		x, _ := value.ToReal(a)
		if isMin {
			m = math.Min(m, x)
		} else {
			m = math.Max(m, x)
		}
	}
	return m
}
