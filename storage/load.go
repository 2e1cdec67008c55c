package storage

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// LoadObject fills the physical object declared by d from spec, the
// right-hand side of the command line's --data NAME=FILE|VALUE: a SCALAR
// from a literal, an ARRAY from a .npy or .txt file (element type per the
// declaration; reals cannot fill an int array), a HASHMAP or TRIE from a
// .mtx or .tns file whose order matches the declaration. Declared sizes
// are not checked here: they are expressions the interpreter evaluates.
func LoadObject(d *ir.Decl, spec string, opt ReadOptions) (Object, error) {
	elem := d.Elem
	if elem != ir.Int && elem != ir.Real {
		return nil, fmt.Errorf("%s: objects hold int or real, not %s", d.Name, elem)
	}
	switch d.Kind {
	case ir.ObjScalar:
		return parseScalar(d, strings.TrimSpace(spec))
	case ir.ObjArray:
		a, err := ReadArrayFile(spec, elem)
		if err != nil {
			return nil, err
		}
		if a.Elem == ir.Int {
			a.IntRange() // in the load phase, not a kernel's first run
		}
		return a, nil
	case ir.ObjHashMap, ir.ObjTrie:
		c, err := ReadTensorFile(spec, opt)
		if err != nil {
			return nil, err
		}
		if c.Order() != len(d.Dims) {
			return nil, fmt.Errorf("%s: tensor of order %d cannot fill %s %s, declared with %d dimensions",
				spec, c.Order(), d.Kind, d.Name, len(d.Dims))
		}
		if elem == ir.Int && c.Elem() != ir.Int {
			return nil, fmt.Errorf("%s: real values cannot fill int %s %s (declare it real)", spec, d.Kind, d.Name)
		}
		f := Format{Name: "hash", Kind: FormatHash}
		if d.Kind == ir.ObjTrie {
			f = Format{Name: "trie", Kind: FormatTrie}
		}
		c.Field = FieldReal
		if elem == ir.Int {
			c.Field = FieldInteger
		}
		st, err := Build(d.Name, c, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", spec, err)
		}
		if d.Kind == ir.ObjTrie {
			return st[TrieName(d.Name)], nil
		}
		return st[HashName(d.Name)], nil
	}
	return nil, fmt.Errorf("%s: cannot load an object of kind %s", d.Name, d.Kind)
}

func parseScalar(d *ir.Decl, s string) (Object, error) {
	if d.Elem == ir.Int {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
				return nil, fmt.Errorf("%s is an int SCALAR; %q is a real (declare it real)", d.Name, s)
			}
			return nil, fmt.Errorf("%s is an int SCALAR; %q is not an integer", d.Name, s)
		}
		return IntScalar(v), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%s is a real SCALAR; %q is not a number", d.Name, s)
	}
	return RealScalar(v), nil
}
