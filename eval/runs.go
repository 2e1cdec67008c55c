package eval

import (
	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// runs evaluates runs(D): the entries of D whose value differs from the
// previous entry's, the first of each run of equal values.
func (in *interp) runs(e *ir.Expr) (value.Value, error) {
	s, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, err
	}
	out := &value.Dict{}
	var last value.Value
	err = s.each(func(k int64, v value.Value) error {
		if len(out.Keys) == 0 || v != last {
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, v)
		}
		last = v
		return nil
	})
	return out, err
}

// runEnd evaluates runend(A, p, hi): the first q in p+1..hi-1 whose
// A(q) differs from A(p), or hi (p itself when p >= hi).
func (in *interp) runEnd(e *ir.Expr) (value.Value, error) {
	s, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, err
	}
	p, err := in.evalKey(e.Args[1])
	if err != nil {
		return nil, err
	}
	hi, err := in.evalKey(e.Args[2])
	if err != nil {
		return nil, err
	}
	if p >= hi {
		return p, nil
	}
	first, ok := s.find(p)
	if !ok {
		return nil, errorf(e, "runend: position %d is outside %s", p, ir.Format(e.Args[0]))
	}
	q := p + 1
	for ; q < hi; q++ {
		v, ok := s.find(q)
		if !ok || v != first {
			break
		}
	}
	return q, nil
}
