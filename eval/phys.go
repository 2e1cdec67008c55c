package eval

import (
	"fmt"
	"sort"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// object returns the physical object a global names.
func (in *interp) object(e *ir.Expr) (storage.Object, error) {
	obj, ok := in.st[e.Name]
	if !ok || obj == nil {
		return nil, errorf(e, "no data for physical object %s", e.Name)
	}
	return obj, nil
}

// globalValue returns the logical value of a physical object: a scalar, or
// a dictionary built once per object (paper §4): an array is the
// dictionary over every position 0..n-1, a hash map of arity d and a trie
// of depth d are d-deep nested dictionaries. Entries stored in a hash map
// or trie are kept even when their value is zero, as for arrays, so that
// iteration visits exactly what is stored.
func (in *interp) globalValue(e *ir.Expr) (value.Value, error) {
	obj, err := in.object(e)
	if err != nil {
		return nil, err
	}
	if d, ok := in.objects[e.Name]; ok {
		return d, nil
	}
	var d *value.Dict
	switch o := obj.(type) {
	case *storage.Scalar:
		switch o.Elem {
		case ir.Int:
			return o.I, nil
		case ir.Real:
			return o.F, nil
		}
		return nil, errorf(e, "scalar %s holds %s values; only int and real are supported", e.Name, o.Elem)
	case *storage.Array:
		if err := checkArray(e.Name, o); err != nil {
			return nil, errorf(e, "%v", err)
		}
		return in.arrayDict(e.Name, o), nil
	case *storage.HashMap:
		d, err = hashMapDict(o)
	case *storage.Trie:
		d, err = trieDict(o)
	default:
		return nil, errorf(e, "physical object %s has unsupported kind %T", e.Name, obj)
	}
	if err != nil {
		return nil, errorf(e, "%s: %v", e.Name, err)
	}
	in.objects[e.Name] = d
	return d, nil
}

func checkArray(name string, a *storage.Array) error {
	switch a.Elem {
	case ir.Int, ir.Real:
		return nil
	}
	return fmt.Errorf("array %s holds %s values; only int and real are supported", name, a.Elem)
}

// arrayDict returns the dictionary {i -> a(i)} over every position of a,
// cached, and remembers that it views array name.
func (in *interp) arrayDict(name string, a *storage.Array) *value.Dict {
	if d, ok := in.objects[name]; ok {
		return d
	}
	n := a.Len()
	d := &value.Dict{Keys: make([]int64, n), Vals: make([]value.Value, n)}
	for i := range n {
		d.Keys[i] = int64(i)
		if a.Elem == ir.Real {
			d.Vals[i] = a.F[i]
		} else {
			d.Vals[i] = a.I[i]
		}
	}
	in.objects[name] = d
	in.arrayName[d] = name
	return d
}

func hashMapDict(h *storage.HashMap) (*value.Dict, error) {
	if h.Arity < 1 || h.Arity > storage.MaxHashArity {
		return nil, fmt.Errorf("hash map arity %d is not between 1 and %d", h.Arity, storage.MaxHashArity)
	}
	if err := checkLeaves(h.Elem, len(h.Keys), len(h.I), len(h.F)); err != nil {
		return nil, err
	}
	order := make([]int, len(h.Keys))
	for i := range order {
		order[i] = i
	}
	less := func(a, b int) int { return storage.CompareKeys(&h.Keys[order[a]], &h.Keys[order[b]], h.Arity) }
	sort.Slice(order, func(a, b int) bool { return less(a, b) < 0 })
	for i := 1; i < len(order); i++ {
		if less(i-1, i) == 0 {
			return nil, fmt.Errorf("key %v is stored twice", h.Keys[order[i]][:h.Arity])
		}
	}
	// build nests the sorted entries order[lo:hi], which agree on the
	// first level components, into a dictionary over component level.
	var build func(lo, hi, level int) *value.Dict
	build = func(lo, hi, level int) *value.Dict {
		d := &value.Dict{}
		for i := lo; i < hi; {
			k := h.Keys[order[i]][level]
			j := i + 1
			for j < hi && h.Keys[order[j]][level] == k {
				j++
			}
			d.Keys = append(d.Keys, k)
			if level == h.Arity-1 {
				d.Vals = append(d.Vals, leaf(h.Elem, h.I, h.F, order[i]))
			} else {
				d.Vals = append(d.Vals, build(i, j, level+1))
			}
			i = j
		}
		return d
	}
	return build(0, len(order), 0), nil
}

func trieDict(t *storage.Trie) (*value.Dict, error) {
	if t.Depth < 1 {
		return nil, fmt.Errorf("trie depth %d is less than 1", t.Depth)
	}
	if t.Root == nil {
		return &value.Dict{}, nil
	}
	var build func(n *storage.TrieNode, level int) (*value.Dict, error)
	build = func(n *storage.TrieNode, level int) (*value.Dict, error) {
		last := level == t.Depth-1
		if last {
			if err := checkLeaves(t.Elem, len(n.Keys), len(n.I), len(n.F)); err != nil {
				return nil, err
			}
		} else if len(n.Children) != len(n.Keys) {
			return nil, fmt.Errorf("trie node at level %d has %d keys but %d children", level+1, len(n.Keys), len(n.Children))
		}
		// Finish sorts keys, but a trie built by hand may not be finished.
		order := make([]int, len(n.Keys))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return n.Keys[order[a]] < n.Keys[order[b]] })
		d := &value.Dict{Keys: make([]int64, len(order)), Vals: make([]value.Value, len(order))}
		for i, p := range order {
			d.Keys[i] = n.Keys[p]
			if i > 0 && d.Keys[i] == d.Keys[i-1] {
				return nil, fmt.Errorf("key %d is stored twice in a trie node at level %d", d.Keys[i], level+1)
			}
			if last {
				d.Vals[i] = leaf(t.Elem, n.I, n.F, p)
				continue
			}
			if n.Children[p] == nil {
				return nil, fmt.Errorf("trie node at level %d has no child for key %d", level+1, n.Keys[p])
			}
			c, err := build(n.Children[p], level+1)
			if err != nil {
				return nil, err
			}
			d.Vals[i] = c
		}
		return d, nil
	}
	return build(t.Root, 0)
}

func checkLeaves(elem ir.Base, keys, ints, reals int) error {
	switch {
	case elem == ir.Int && ints != keys:
		return fmt.Errorf("%d keys but %d int values", keys, ints)
	case elem == ir.Real && reals != keys:
		return fmt.Errorf("%d keys but %d real values", keys, reals)
	case elem != ir.Int && elem != ir.Real:
		return fmt.Errorf("holds %s values; only int and real are supported", elem)
	}
	return nil
}

func leaf(elem ir.Base, ints []int64, reals []float64, i int) value.Value {
	if elem == ir.Real {
		return reals[i]
	}
	return ints[i]
}
