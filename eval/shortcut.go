package eval

import (
	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// keyFilter describes a sum whose body is "if k == o && ... then t" (no
// else), with k the sum's key variable and o free of the sum's variables:
// only the entry at key o can contribute, so the sum looks o up instead of
// scanning. This is what makes the naive plans of paper Table 1's
// repeated-variable sums (sum(<i,a> in A, <i,b> in B) ...) run in time
// proportional to the outer loops. Every source has distinct keys, so the
// result is the same as the scan's, bit for bit: the body (condition
// included) is evaluated with the same bindings for the one matching entry,
// and o, which does not depend on the entry, is evaluated once; when there
// are no entries it is not evaluated at all, as in the scan.
type keyFilter struct {
	other *ir.Expr // o; nil when the sum does not have this shape
}

func (in *interp) keyFilterOf(e *ir.Expr) *keyFilter {
	if f, ok := in.shortcutInfo[e]; ok {
		return f
	}
	f := &keyFilter{other: filteredKey(e)}
	in.shortcutInfo[e] = f
	return f
}

// filteredKey returns o if sum node e has the shape described above.
func filteredKey(e *ir.Expr) *ir.Expr {
	k, v := e.Vars[0], e.Vars[1]
	body := e.Args[1]
	if k == v || body.Op != ir.OpIf || len(body.Args) != 2 {
		return nil
	}
	c := body.Args[0]
	for c.Op == ir.OpAnd {
		c = c.Args[0] // the leftmost conjunct is evaluated first
	}
	if c.Op != ir.OpEq {
		return nil
	}
	for i, side := range c.Args {
		if side.Op != ir.OpVar || side.Name != k {
			continue
		}
		o := c.Args[1-i]
		if o.Type.Base != ir.Int || o.Type.Depth != 0 {
			continue
		}
		fv := ir.FreeVars(o)
		if !fv[k] && !fv[v] {
			return o
		}
	}
	return nil
}

// sumByKey evaluates sum node e by lookup when it has the keyFilter shape;
// done reports whether it did.
func (in *interp) sumByKey(e *ir.Expr) (v value.Value, done bool, err error) {
	if in.noShortcuts {
		return nil, false, nil
	}
	o := in.keyFilterOf(e).other
	if o == nil {
		return nil, false, nil
	}
	s, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, true, err
	}
	acc := newAccum(e.Type)
	if s.size() == 0 {
		return acc.result(), true, nil
	}
	kv, err := in.eval(o)
	if err != nil {
		return nil, true, err
	}
	key, ok := kv.(int64)
	if !ok {
		return nil, false, nil // not an int after all: scan
	}
	entry, found := s.find(key)
	if !found {
		return acc.result(), true, nil
	}
	if err := in.tick(e); err != nil {
		return nil, true, err
	}
	in.push(e.Vars[0], key)
	in.push(e.Vars[1], entry)
	b, err := in.eval(e.Args[1])
	in.env = in.env[:len(in.env)-2]
	if err != nil {
		return nil, true, err
	}
	if err := acc.add(b); err != nil {
		return nil, true, wrap(e.Args[1], err)
	}
	return promoteFrom(acc.result(), e, e.Args[1]), true, nil
}
