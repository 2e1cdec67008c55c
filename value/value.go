package value

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/storel/storel/ir"
)

// Value is int64, float64, bool or *Dict.
type Value = any

// Dict is an immutable dictionary with int64 keys in increasing order.
type Dict struct {
	Keys []int64
	Vals []Value
}

// Empty is the empty dictionary.
var Empty = &Dict{}

// Len returns the number of stored entries (explicit zeros included).
func (d *Dict) Len() int { return len(d.Keys) }

// Get returns the value stored at k.
func (d *Dict) Get(k int64) (Value, bool) {
	i := sort.Search(len(d.Keys), func(i int) bool { return d.Keys[i] >= k })
	if i < len(d.Keys) && d.Keys[i] == k {
		return d.Vals[i], true
	}
	return nil, false
}

// Builder accumulates key-wise sums of entries and yields a Dict without
// zero entries.
type Builder struct {
	m map[int64]Value
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{m: map[int64]Value{}} }

// Add adds v at key k (key-wise +).
func (b *Builder) Add(k int64, v Value) error {
	if old, ok := b.m[k]; ok {
		s, err := Add(old, v)
		if err != nil {
			return err
		}
		b.m[k] = s
		return nil
	}
	b.m[k] = v
	return nil
}

// Dict returns the accumulated dictionary, dropping zero entries.
func (b *Builder) Dict() *Dict {
	keys := make([]int64, 0, len(b.m))
	for k, v := range b.m {
		if !IsZero(v) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	vals := make([]Value, len(keys))
	for i, k := range keys {
		vals[i] = b.m[k]
	}
	return &Dict{Keys: keys, Vals: vals}
}

// Singleton returns {k -> v}, or the empty dictionary if v is zero.
func Singleton(k int64, v Value) *Dict {
	if IsZero(v) {
		return Empty
	}
	return &Dict{Keys: []int64{k}, Vals: []Value{v}}
}

// IsZero reports whether v is 0, 0.0, false, or a dictionary holding only
// zeros.
func IsZero(v Value) bool {
	switch x := v.(type) {
	case int64:
		return x == 0
	case float64:
		return x == 0
	case bool:
		return !x
	case *Dict:
		for _, e := range x.Vals {
			if !IsZero(e) {
				return false
			}
		}
		return true
	}
	return v == nil
}

// Zero returns the zero value of type t.
func Zero(t ir.Type) Value {
	if t.Depth > 0 {
		return Empty
	}
	switch t.Base {
	case ir.Real:
		return 0.0
	case ir.Bool:
		return false
	}
	return int64(0)
}

// ToReal converts a numeric scalar to float64.
func ToReal(v Value) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Add returns a + b: numeric addition (int+real is real) or key-wise
// dictionary addition. Adding zero of any kind returns the other operand.
func Add(a, b Value) (Value, error) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x + y, nil
		case float64:
			return float64(x) + y, nil
		case *Dict:
			if x == 0 {
				return y, nil
			}
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return x + float64(y), nil
		case float64:
			return x + y, nil
		case *Dict:
			if x == 0 {
				return y, nil
			}
		}
	case *Dict:
		switch y := b.(type) {
		case *Dict:
			return addDicts(x, y)
		case int64:
			if y == 0 {
				return x, nil
			}
		case float64:
			if y == 0 {
				return x, nil
			}
		}
	}
	return nil, fmt.Errorf("cannot add %s and %s", Kind(a), Kind(b))
}

func addDicts(x, y *Dict) (Value, error) {
	keys := make([]int64, 0, len(x.Keys)+len(y.Keys))
	vals := make([]Value, 0, len(x.Keys)+len(y.Keys))
	push := func(k int64, v Value) {
		if !IsZero(v) {
			keys = append(keys, k)
			vals = append(vals, v)
		}
	}
	i, j := 0, 0
	for i < len(x.Keys) || j < len(y.Keys) {
		switch {
		case j == len(y.Keys) || (i < len(x.Keys) && x.Keys[i] < y.Keys[j]):
			push(x.Keys[i], x.Vals[i])
			i++
		case i == len(x.Keys) || y.Keys[j] < x.Keys[i]:
			push(y.Keys[j], y.Vals[j])
			j++
		default:
			s, err := Add(x.Vals[i], y.Vals[j])
			if err != nil {
				return nil, err
			}
			push(x.Keys[i], s)
			i++
			j++
		}
	}
	return &Dict{Keys: keys, Vals: vals}, nil
}

// Mul returns a * b: numeric product, scalar times dictionary (scales
// every value), or key-wise product of two dictionaries.
func Mul(a, b Value) (Value, error) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x * y, nil
		case float64:
			return float64(x) * y, nil
		case *Dict:
			return scale(a, y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return x * float64(y), nil
		case float64:
			return x * y, nil
		case *Dict:
			return scale(a, y)
		}
	case *Dict:
		switch y := b.(type) {
		case *Dict:
			return mulDicts(x, y)
		case int64, float64:
			return scaleRight(x, b)
		}
	}
	return nil, fmt.Errorf("cannot multiply %s and %s", Kind(a), Kind(b))
}

func scale(s Value, d *Dict) (Value, error) {
	out := &Dict{}
	for i, k := range d.Keys {
		p, err := Mul(s, d.Vals[i])
		if err != nil {
			return nil, err
		}
		if !IsZero(p) {
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, p)
		}
	}
	return out, nil
}

func scaleRight(d *Dict, s Value) (Value, error) {
	out := &Dict{}
	for i, k := range d.Keys {
		p, err := Mul(d.Vals[i], s)
		if err != nil {
			return nil, err
		}
		if !IsZero(p) {
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, p)
		}
	}
	return out, nil
}

func mulDicts(x, y *Dict) (Value, error) {
	out := &Dict{}
	i, j := 0, 0
	for i < len(x.Keys) && j < len(y.Keys) {
		switch {
		case x.Keys[i] < y.Keys[j]:
			i++
		case y.Keys[j] < x.Keys[i]:
			j++
		default:
			p, err := Mul(x.Vals[i], y.Vals[j])
			if err != nil {
				return nil, err
			}
			if !IsZero(p) {
				out.Keys = append(out.Keys, x.Keys[i])
				out.Vals = append(out.Vals, p)
			}
			i++
			j++
		}
	}
	return out, nil
}

// Neg returns -v (key-wise for dictionaries).
func Neg(v Value) (Value, error) {
	switch x := v.(type) {
	case int64:
		return -x, nil
	case float64:
		return -x, nil
	case *Dict:
		return scale(int64(-1), x)
	}
	return nil, fmt.Errorf("cannot negate %s", Kind(v))
}

// Kind names the kind of v for messages.
func Kind(v Value) string {
	switch v.(type) {
	case int64:
		return "int"
	case float64:
		return "real"
	case bool:
		return "bool"
	case *Dict:
		return "dictionary"
	}
	return fmt.Sprintf("%T", v)
}

// Equal reports whether a and b are equal as dictionaries-with-zero-
// elimination, comparing reals with relative tolerance tol (0 for exact).
// Ints and reals compare numerically.
func Equal(a, b Value, tol float64) bool {
	da, aok := a.(*Dict)
	db, bok := b.(*Dict)
	switch {
	case aok && bok:
		i, j := 0, 0
		for {
			for i < len(da.Keys) && IsZero(da.Vals[i]) {
				i++
			}
			for j < len(db.Keys) && IsZero(db.Vals[j]) {
				j++
			}
			if i == len(da.Keys) || j == len(db.Keys) {
				return i == len(da.Keys) && j == len(db.Keys)
			}
			if da.Keys[i] != db.Keys[j] || !Equal(da.Vals[i], db.Vals[j], tol) {
				return false
			}
			i++
			j++
		}
	case aok:
		return IsZero(a) && IsZero(b)
	case bok:
		return IsZero(a) && IsZero(b)
	}
	if x, ok := a.(bool); ok {
		y, ok := b.(bool)
		return ok && x == y
	}
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return x == y
		}
	}
	x, ok1 := ToReal(a)
	y, ok2 := ToReal(b)
	if !ok1 || !ok2 {
		return false
	}
	return CloseReal(x, y, tol)
}

// CloseReal reports whether x and y agree within relative tolerance tol
// (with an absolute floor of tol for values near zero).
func CloseReal(x, y, tol float64) bool {
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
		return true
	}
	d := math.Abs(x - y)
	m := math.Max(math.Abs(x), math.Abs(y))
	return d <= tol*math.Max(m, 1)
}

// Entry is one non-zero scalar of a (possibly nested) value with its
// coordinates, outermost first.
type Entry struct {
	Coords []int64
	Val    Value // int64 or float64
}

// Entries flattens v into its non-zero scalars in lexicographic coordinate
// order. A scalar yields one entry with no coordinates (even if zero).
func Entries(v Value) []Entry {
	if _, ok := v.(*Dict); !ok {
		return []Entry{{Val: v}}
	}
	var out []Entry
	var walk func(v Value, prefix []int64)
	walk = func(v Value, prefix []int64) {
		d, ok := v.(*Dict)
		if !ok {
			if !IsZero(v) {
				out = append(out, Entry{Coords: append([]int64(nil), prefix...), Val: v})
			}
			return
		}
		for i, k := range d.Keys {
			walk(d.Vals[i], append(prefix, k))
		}
	}
	walk(v, nil)
	return out
}

// Format renders v compactly, e.g. {0 -> {1 -> 2.5}, 3 -> {0 -> 1}}.
func Format(v Value) string {
	var sb strings.Builder
	format(&sb, v)
	return sb.String()
}

func format(sb *strings.Builder, v Value) {
	switch x := v.(type) {
	case *Dict:
		sb.WriteString("{")
		first := true
		for i, k := range x.Keys {
			if IsZero(x.Vals[i]) {
				continue
			}
			if !first {
				sb.WriteString(", ")
			}
			first = false
			fmt.Fprintf(sb, "%d -> ", k)
			format(sb, x.Vals[i])
		}
		sb.WriteString("}")
	case float64:
		sb.WriteString(ir.FormatReal(x))
	default:
		fmt.Fprint(sb, x)
	}
}
