package eval

import (
	"math"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// sum evaluates sum(<k, v> in src) body: the bodies for every entry of src
// in increasing key order, added up.
func (in *interp) sum(e *ir.Expr) (value.Value, error) {
	src, body := e.Args[0], e.Args[1]
	if v, done, err := in.sumByKey(e); done || err != nil {
		return v, err
	}
	s, err := in.seqOf(src)
	if err != nil {
		return nil, err
	}
	acc := newAccum(e.Type)
	end := in.startUniqueCheck(e)
	base := len(in.env)
	in.push(e.Vars[0], nil)
	in.push(e.Vars[1], nil)
	err = s.each(func(k int64, v value.Value) error {
		if err := in.tick(e); err != nil {
			return err
		}
		in.env[base].val, in.env[base+1].val = k, v
		if body.Op == ir.OpSingleton && acc.dict {
			// Add the entry in place rather than build {key -> val}
			// and add that: the same sum without the allocations.
			if err := in.tick(body); err != nil {
				return err
			}
			key, val, err := in.singletonEntry(body)
			if err != nil {
				return locate(body, err)
			}
			return wrap(body, acc.root.addAt(key, val))
		}
		b, err := in.eval(body)
		if err != nil {
			return err
		}
		return wrap(body, acc.add(b))
	})
	in.env = in.env[:base]
	end()
	if err != nil {
		return nil, err
	}
	return promoteFrom(acc.result(), e, body), nil
}

// merge evaluates merge(<k1, k2, v> in <e1, e2>) body: for every entry
// (k1, v) of e1 in key order and every entry (k2, u) of e2 in key order
// with u == v, the body with k1, k2, v bound, added up. The entries of e2
// are indexed by value, which visits the same pairs in the same order as
// the nested loops without their quadratic cost.
func (in *interp) merge(e *ir.Expr) (value.Value, error) {
	s1, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, err
	}
	s2, err := in.seqOf(e.Args[1])
	if err != nil {
		return nil, err
	}
	idx, err := indexByValue(e.Args[1], s2)
	if err != nil {
		return nil, err
	}
	body := e.Args[2]
	acc := newAccum(e.Type)
	base := len(in.env)
	in.push(e.Vars[0], nil)
	in.push(e.Vars[1], nil)
	in.push(e.Vars[2], nil)
	err = s1.each(func(k1 int64, v value.Value) error {
		matches, err := idx.matches(e.Args[0], v)
		if err != nil {
			return err
		}
		for _, k2 := range matches {
			if err := in.tick(e); err != nil {
				return err
			}
			in.env[base].val, in.env[base+1].val, in.env[base+2].val = k1, k2, v
			b, err := in.eval(body)
			if err != nil {
				return err
			}
			if err := acc.add(b); err != nil {
				return wrap(body, err)
			}
		}
		return nil
	})
	in.env = in.env[:base]
	if err != nil {
		return nil, err
	}
	return promoteFrom(acc.result(), e, body), nil
}

// valueIndex lists the keys of a vector's entries by their value, each
// list in increasing key order.
type valueIndex struct {
	ints  map[int64][]int64
	reals map[float64][]int64
	// intEntries keeps the int entries in key order, for the rare real
	// probe too large to be compared through the map.
	intEntries []intEntry
}

type intEntry struct{ key, val int64 }

func indexByValue(e *ir.Expr, s seq) (*valueIndex, error) {
	idx := &valueIndex{ints: map[int64][]int64{}, reals: map[float64][]int64{}}
	err := s.each(func(k int64, v value.Value) error {
		switch x := v.(type) {
		case int64:
			idx.ints[x] = append(idx.ints[x], k)
			idx.intEntries = append(idx.intEntries, intEntry{k, x})
		case float64:
			idx.reals[x] = append(idx.reals[x], k)
		default:
			return errorf(e, "merge iterates vectors of numbers, but an entry holds %s", value.Kind(v))
		}
		return nil
	})
	return idx, err
}

// exactInt is the range of reals in which every integer is a float64.
const exactInt = 1 << 53

// matches returns the keys of the entries whose value equals v (ints and
// reals compare as reals; NaN equals nothing), in increasing key order.
func (idx *valueIndex) matches(e *ir.Expr, v value.Value) ([]int64, error) {
	switch x := v.(type) {
	case int64:
		if len(idx.reals) == 0 {
			return idx.ints[x], nil
		}
		return mergeKeys(idx.ints[x], idx.reals[float64(x)]), nil
	case float64:
		var fromInts []int64
		switch {
		case len(idx.ints) == 0 || x != math.Trunc(x):
		case math.Abs(x) < exactInt:
			fromInts = idx.ints[int64(x)]
		default:
			for _, en := range idx.intEntries {
				if float64(en.val) == x {
					fromInts = append(fromInts, en.key)
				}
			}
		}
		return mergeKeys(fromInts, idx.reals[x]), nil
	}
	return nil, errorf(e, "merge iterates vectors of numbers, but an entry holds %s", value.Kind(v))
}

// mergeKeys merges two increasing key lists.
func mergeKeys(a, b []int64) []int64 {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]int64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
