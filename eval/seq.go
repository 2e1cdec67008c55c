package eval

import (
	"sort"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// seq is a dictionary seen by iteration and lookup. Ranges, physical
// arrays and subarrays are walked in place rather than copied into a
// value.Dict first; the entries and their order are exactly those of the
// dictionary the expression denotes.
type seq interface {
	// each calls f on every entry in increasing key order, explicit zeros
	// included.
	each(f func(k int64, v value.Value) error) error
	// find returns the value stored at k, if any.
	find(k int64) (value.Value, bool)
	// size returns the number of entries.
	size() int64
	// array reports whether the seq is a whole physical array, its name
	// and length: reading such an array outside 0..n-1 is a data error.
	array() (name string, n int64, whole bool)
}

// dictSeq is a materialized dictionary. viewOf names the physical array
// it views, if any.
type dictSeq struct {
	d      *value.Dict
	viewOf string
}

func (s dictSeq) each(f func(int64, value.Value) error) error {
	for i, k := range s.d.Keys {
		if err := f(k, s.d.Vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s dictSeq) find(k int64) (value.Value, bool) { return dictFind(s.d, k) }
func (s dictSeq) size() int64                      { return int64(len(s.d.Keys)) }
func (s dictSeq) array() (string, int64, bool) {
	return s.viewOf, int64(len(s.d.Keys)), s.viewOf != ""
}

// dictFind looks k up in d: by offset when d's keys are contiguous (arrays,
// ranges, subarrays, dense results), by binary search otherwise.
func dictFind(d *value.Dict, k int64) (value.Value, bool) {
	n := len(d.Keys)
	if n == 0 {
		return nil, false
	}
	first, last := d.Keys[0], d.Keys[n-1]
	if k < first || k > last {
		return nil, false
	}
	// Keys strictly increase, so last-first == n-1 means every key in
	// between is present (the wrapped difference cannot collide).
	if last-first == int64(n-1) {
		return d.Vals[k-first], true
	}
	i := sort.Search(n, func(i int) bool { return d.Keys[i] >= k })
	if i < n && d.Keys[i] == k {
		return d.Vals[i], true
	}
	return nil, false
}

// arraySeq is positions lo..hi-1 of a physical array; whole is set when
// the window is the entire array.
type arraySeq struct {
	a      *storage.Array
	name   string
	lo, hi int64
	whole  bool
}

func (s arraySeq) at(i int64) value.Value {
	if s.a.Elem == ir.Real {
		return s.a.F[i]
	}
	return s.a.I[i]
}

func (s arraySeq) each(f func(int64, value.Value) error) error {
	for i := s.lo; i < s.hi; i++ {
		if err := f(i, s.at(i)); err != nil {
			return err
		}
	}
	return nil
}

func (s arraySeq) find(k int64) (value.Value, bool) {
	if k < s.lo || k >= s.hi {
		return nil, false
	}
	return s.at(k), true
}

func (s arraySeq) size() int64                  { return s.hi - s.lo }
func (s arraySeq) array() (string, int64, bool) { return s.name, s.hi, s.whole }

// rangeSeq is lo:hi, the dictionary {i -> i} for lo <= i < hi.
type rangeSeq struct{ lo, hi int64 }

func (s rangeSeq) each(f func(int64, value.Value) error) error {
	for i := s.lo; i < s.hi; i++ {
		if err := f(i, i); err != nil {
			return err
		}
	}
	return nil
}

func (s rangeSeq) find(k int64) (value.Value, bool) {
	if k < s.lo || k >= s.hi {
		return nil, false
	}
	return k, true
}

func (s rangeSeq) size() int64 {
	if s.hi < s.lo {
		return 0
	}
	return s.hi - s.lo
}

func (rangeSeq) array() (string, int64, bool) { return "", 0, false }

// subSeq is base(lo:hi) for a base that is not a physical array: the
// dictionary {i -> base(i)} for lo <= i < hi, every position kept, a
// missing key of base reading as zero.
type subSeq struct {
	base   seq
	lo, hi int64
	zero   value.Value
}

func (s subSeq) each(f func(int64, value.Value) error) error {
	for i := s.lo; i < s.hi; i++ {
		v, ok := s.base.find(i)
		if !ok {
			v = s.zero
		}
		if err := f(i, v); err != nil {
			return err
		}
	}
	return nil
}

func (s subSeq) find(k int64) (value.Value, bool) {
	if k < s.lo || k >= s.hi {
		return nil, false
	}
	if v, ok := s.base.find(k); ok {
		return v, true
	}
	return s.zero, true
}

func (s subSeq) size() int64                { return s.hi - s.lo }
func (subSeq) array() (string, int64, bool) { return "", 0, false }

// materialize copies s into a dictionary, keeping every entry. A whole
// physical array comes from the cache.
func (in *interp) materialize(s seq) *value.Dict {
	switch x := s.(type) {
	case dictSeq:
		return x.d
	case arraySeq:
		if x.whole {
			return in.arrayDict(x.name, x.a)
		}
	}
	n := s.size()
	d := &value.Dict{Keys: make([]int64, 0, n), Vals: make([]value.Value, 0, n)}
	_ = s.each(func(k int64, v value.Value) error {
		d.Keys = append(d.Keys, k)
		d.Vals = append(d.Vals, v)
		return nil
	})
	return d
}

// seqOf evaluates a dictionary-valued expression as a seq, walking ranges,
// physical arrays and subarrays in place.
func (in *interp) seqOf(e *ir.Expr) (seq, error) {
	switch e.Op {
	case ir.OpRange, ir.OpSubArray, ir.OpGlobal:
		if err := in.tick(e); err != nil {
			return nil, err
		}
		s, err := in.seqNode(e)
		if err != nil {
			return nil, locate(e, err)
		}
		return s, nil
	}
	v, err := in.eval(e)
	if err != nil {
		return nil, err
	}
	return in.seqOfValue(e, v)
}

func (in *interp) seqOfValue(e *ir.Expr, v value.Value) (seq, error) {
	d, ok := v.(*value.Dict)
	if !ok {
		return nil, errorf(e, "expected a dictionary, found %s", value.Kind(v))
	}
	return dictSeq{d: d, viewOf: in.arrayName[d]}, nil
}

func (in *interp) seqNode(e *ir.Expr) (seq, error) {
	switch e.Op {
	case ir.OpRange:
		lo, err := in.evalKey(e.Args[0])
		if err != nil {
			return nil, err
		}
		hi, err := in.evalKey(e.Args[1])
		if err != nil {
			return nil, err
		}
		return rangeSeq{lo, hi}, nil
	case ir.OpSubArray:
		return in.subarray(e)
	case ir.OpGlobal:
		obj, err := in.object(e)
		if err != nil {
			return nil, err
		}
		if a, ok := obj.(*storage.Array); ok {
			if err := checkArray(e.Name, a); err != nil {
				return nil, errorf(e, "%v", err)
			}
			if s, ok := in.wholeArrays[e.Name]; ok {
				return s, nil
			}
			s := seq(arraySeq{a: a, name: e.Name, lo: 0, hi: int64(a.Len()), whole: true})
			in.wholeArrays[e.Name] = s
			return s, nil
		}
		v, err := in.globalValue(e)
		if err != nil {
			return nil, err
		}
		return in.seqOfValue(e, v)
	}
	panic("seqNode: " + e.Op.String())
}

func (in *interp) subarray(e *ir.Expr) (seq, error) {
	base, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, err
	}
	lo, err := in.evalKey(e.Args[1])
	if err != nil {
		return nil, err
	}
	hi, err := in.evalKey(e.Args[2])
	if err != nil {
		return nil, err
	}
	name, n, whole := base.array()
	if !whole {
		name = describe(e.Args[0])
	}
	if lo > hi {
		return nil, errorf(e, "%s(%d:%d): the segment starts after it ends", name, lo, hi)
	}
	if whole {
		switch {
		case lo < 0:
			return nil, errorf(e, "%s(%d:%d) starts before the start of %s: positions start at 0", name, lo, hi, name)
		case hi > n:
			return nil, errorf(e, "%s(%d:%d) runs past the end of %s, which has %s", name, lo, hi, name, elements(n))
		}
		if a, ok := base.(arraySeq); ok {
			return arraySeq{a: a.a, name: a.name, lo: lo, hi: hi}, nil
		}
	}
	return subSeq{base: base, lo: lo, hi: hi, zero: value.Zero(e.Type.Elem())}, nil
}

// describe names a dictionary expression in a message, briefly.
func describe(e *ir.Expr) string {
	s := e.String()
	if len(s) > 40 {
		return "(" + s[:37] + "...)"
	}
	if e.Op == ir.OpVar || e.Op == ir.OpGlobal || e.Op == ir.OpLookup {
		return s
	}
	return "(" + s + ")"
}
