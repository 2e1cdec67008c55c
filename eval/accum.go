package eval

import (
	"fmt"
	"slices"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// accum adds up the bodies of a sum or merge. The result is exactly the
// left fold zero + b1 + b2 + ... with value.Add, including the order in
// which floating-point values meet at each key, but a dictionary result is
// built key-wise in maps: re-adding a growing dictionary for every
// iteration would be quadratic.
type accum struct {
	dict   bool
	scalar value.Value
	root   *accNode
}

func newAccum(t ir.Type) *accum {
	if t.Depth > 0 {
		return &accum{dict: true, root: newAccNode()}
	}
	return &accum{scalar: value.Zero(t)}
}

// accNode holds the partial sum at one dictionary level. A value is a
// scalar, a *value.Dict added once so far (shared, never written), or an
// *accNode once a second dictionary has been added at that key.
type accNode struct {
	vals map[int64]value.Value
}

func newAccNode() *accNode { return &accNode{vals: map[int64]value.Value{}} }

func (a *accum) add(v value.Value) error {
	if !a.dict {
		s, err := value.Add(a.scalar, v)
		a.scalar = s
		return err
	}
	if d, ok := v.(*value.Dict); ok {
		return a.root.addDict(d)
	}
	if value.IsZero(v) {
		return nil
	}
	return fmt.Errorf("cannot add %s to a dictionary", value.Kind(v))
}

func (a *accum) result() value.Value {
	if !a.dict {
		return a.scalar
	}
	return a.root.dict()
}

func (n *accNode) addDict(d *value.Dict) error {
	for i, k := range d.Keys {
		if err := n.addAt(k, d.Vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (n *accNode) addAt(k int64, v value.Value) error {
	old, ok := n.vals[k]
	if !ok {
		n.vals[k] = v
		return nil
	}
	switch o := old.(type) {
	case *accNode:
		return o.addValue(v)
	case *value.Dict:
		d, isDict := v.(*value.Dict)
		if !isDict {
			return scalarIntoDict(v)
		}
		c := newAccNode()
		if err := c.addDict(o); err != nil {
			return err
		}
		if err := c.addDict(d); err != nil {
			return err
		}
		n.vals[k] = c
		return nil
	}
	s, err := value.Add(old, v)
	if err != nil {
		return err
	}
	n.vals[k] = s
	return nil
}

func (n *accNode) addValue(v value.Value) error {
	if d, ok := v.(*value.Dict); ok {
		return n.addDict(d)
	}
	return scalarIntoDict(v)
}

// scalarIntoDict handles a scalar meeting a dictionary: zero is the identity, anything
// else is a type error.
func scalarIntoDict(v value.Value) error {
	if value.IsZero(v) {
		return nil
	}
	return fmt.Errorf("cannot add %s to a dictionary", value.Kind(v))
}

// dict returns the accumulated dictionary without zero entries.
func (n *accNode) dict() *value.Dict {
	keys := make([]int64, 0, len(n.vals))
	for k := range n.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	d := &value.Dict{Keys: keys[:0], Vals: make([]value.Value, 0, len(keys))}
	for _, k := range keys {
		v := n.vals[k]
		if c, ok := v.(*accNode); ok {
			v = c.dict()
		}
		if value.IsZero(v) {
			continue
		}
		d.Keys = append(d.Keys, k)
		d.Vals = append(d.Vals, v)
	}
	return d
}
