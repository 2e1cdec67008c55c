package ir

import "fmt"

// CheckShape reports whether node e (not its children) has the number of
// operands and binders its operator needs, so that code walking a plan can
// index Args and Vars freely. It returns nil or a message naming the node.
func CheckShape(e *Expr) error {
	args, vars := -1, 0
	switch e.Op {
	case OpConst, OpVar, OpGlobal:
		args = 0
	case OpNeg, OpNot:
		args = 1
	case OpSingleton, OpLookup, OpRange:
		args = 2
	case OpSubArray:
		args = 3
	case OpIf:
		if len(e.Args) != 2 && len(e.Args) != 3 {
			return fmt.Errorf("malformed if: %d operands", len(e.Args))
		}
	case OpLet:
		args, vars = 2, 1
	case OpSum:
		args, vars = 2, 2
	case OpMerge:
		args, vars = 3, 3
	case OpCall:
	default:
		if !e.Op.IsBinary() {
			return fmt.Errorf("unknown %s node", e.Op)
		}
		args = 2
	}
	if args >= 0 && len(e.Args) != args {
		return fmt.Errorf("malformed %s: %d operands, want %d", e.Op, len(e.Args), args)
	}
	if len(e.Vars) != vars {
		return fmt.Errorf("malformed %s: %d binders, want %d", e.Op, len(e.Vars), vars)
	}
	for _, a := range e.Args {
		if a == nil {
			return fmt.Errorf("malformed %s: missing operand", e.Op)
		}
	}
	return nil
}

// CompactEvenBits gathers bits 0, 2, 4, ... of x into bits 0, 1, 2, ...:
// the decoding of one coordinate of a Z-order (Morton) index, which is what
// the built-ins even_bits(d) and odd_bits(d) = CompactEvenBits(d >> 1) do.
func CompactEvenBits(x uint64) uint64 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0f0f0f0f0f0f0f0f
	x = (x | x>>4) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	x = (x | x>>16) & 0x00000000ffffffff
	return x
}
