package ir

import "strings"

// Base is the scalar kind at the leaves of a type.
type Base uint8

const (
	Unknown Base = iota // not yet inferred
	Int                 // int64, Go semantics (truncating division)
	Real                // float64, IEEE
	Bool                // only in conditions; never stored in a dictionary
)

func (b Base) String() string {
	switch b {
	case Int:
		return "int"
	case Real:
		return "real"
	case Bool:
		return "bool"
	}
	return "?"
}

// Type is a possibly nested dictionary type. Every SDQLite dictionary has
// integer keys, so a type is fully described by how deeply dictionaries nest
// (Depth 0 is a scalar) and the scalar kind of the leaves.
type Type struct {
	Depth int
	Base  Base
}

// Scalar types, for convenience.
var (
	IntType  = Type{0, Int}
	RealType = Type{0, Real}
	BoolType = Type{0, Bool}
)

// Dict returns the type of a dictionary whose values have type t.
func (t Type) Dict() Type { return Type{t.Depth + 1, t.Base} }

// Elem returns the value type of dictionary type t (t.Depth must be > 0).
func (t Type) Elem() Type { return Type{t.Depth - 1, t.Base} }

// IsScalar reports whether t is not a dictionary.
func (t Type) IsScalar() bool { return t.Depth == 0 }

// String renders t as e.g. "real", "{int -> real}", "{int -> {int -> int}}".
func (t Type) String() string {
	var sb strings.Builder
	for i := 0; i < t.Depth; i++ {
		sb.WriteString("{int -> ")
	}
	sb.WriteString(t.Base.String())
	for i := 0; i < t.Depth; i++ {
		sb.WriteString("}")
	}
	return sb.String()
}
