package eval

import (
	"cmp"
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
// *accNode once a second dictionary has been added at that key. Keys are
// kept in arrival order; while they arrive increasing (the common case: a
// sum over a dictionary keyed by its own key) no map is needed.
type accNode struct {
	keys  []int64
	vals  []value.Value
	index map[int64]int // position of each key; nil while keys increase
}

func newAccNode() *accNode { return &accNode{} }

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
	last := len(n.keys) - 1
	if n.index == nil {
		switch {
		case last < 0 || k > n.keys[last]:
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, v)
			return nil
		case k == n.keys[last]:
			return n.combine(last, v)
		}
		if i, found := slices.BinarySearch(n.keys, k); found {
			return n.combine(i, v)
		}
		n.index = make(map[int64]int, 2*len(n.keys))
		for i, key := range n.keys {
			n.index[key] = i
		}
	}
	if i, ok := n.index[k]; ok {
		return n.combine(i, v)
	}
	n.index[k] = len(n.keys)
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	return nil
}

// combine adds v to the value at position i.
func (n *accNode) combine(i int, v value.Value) error {
	switch o := n.vals[i].(type) {
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
		n.vals[i] = c
		return nil
	}
	s, err := value.Add(n.vals[i], v)
	if err != nil {
		return err
	}
	n.vals[i] = s
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
	d := &value.Dict{Keys: make([]int64, 0, len(n.keys)), Vals: make([]value.Value, 0, len(n.keys))}
	var order []int // positions in increasing key order, when keys came unordered
	if n.index != nil {
		order = make([]int, len(n.keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(n.keys[a], n.keys[b]) })
	}
	for j := range n.keys {
		i := j
		if order != nil {
			i = order[j]
		}
		v := n.vals[i]
		if c, ok := v.(*accNode); ok {
			v = c.dict()
		}
		if value.IsZero(v) {
			continue
		}
		d.Keys = append(d.Keys, n.keys[i])
		d.Vals = append(d.Vals, v)
	}
	return d
}
