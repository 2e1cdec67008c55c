package opt

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Interleaved rows. The engine runs an outer range loop over rows q that
// adds into a dense real vector, at key P(q+a), the sum
//
//	sum(<k, _> in 0:R(q+b)) [V(iv)] * x(col)
//
// as eight rows side by side (engine/nestinter.go) when, for the rows
// q = 8c+l of a chunk, the reads at step k are adjacent lane by lane:
// col a 32-bit half of a word C(w) whose half index 2w+h is base(c) + l
// + 8k, and iv, if there is a value, the same. One load then reads the
// eight lanes' columns, one the eight values: the cost model charges
// those reads, and the halves' extraction, an eighth per entry
// (lanePriced). The proof is the engine's, on linear forms with q = 8c+l
// for each lane l, not a match of one mapping's text.

// interH is the number of rows the engine runs side by side.
const interH = storage.SellHeight

// lform is an int expression in linear normal form: each atom's
// coefficient, "1" the constant's; "c" is the row's chunk and "k" the
// inner loop's key.
type lform map[string]int64

// addScaled is f + s*g, without zero terms.
func (f lform) addScaled(g lform, s int64) lform {
	out := maps.Clone(f)
	if out == nil {
		out = lform{}
	}
	for key, v := range g {
		out[key] += s * v
	}
	maps.DeleteFunc(out, func(_ string, v int64) bool { return v == 0 })
	return out
}

// scaled is s*f.
func (f lform) scaled(s int64) lform { return lform{}.addScaled(f, s) }

// constant is f's value when it has no atom.
func (f lform) constant() (int64, bool) {
	for key := range f {
		if key != "1" {
			return 0, false
		}
	}
	return f["1"], true
}

func (f lform) String() string {
	keys := slices.Sorted(maps.Keys(f))
	var b strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&b, "%+d*%s", f[key], key)
	}
	return b.String()
}

// laneForms puts the int expressions of one lane in normal form.
type laneForms struct {
	q, k  string
	lane  int64
	reads map[string]lread // the array reads among the atoms
}

type lread struct {
	arr string
	idx lform
}

// form is e's normal form in the lane, or false.
func (a *laneForms) form(e *ir.Expr) (lform, bool) {
	switch e.Op {
	case ir.OpConst:
		if e.Type.Depth != 0 || e.Type.Base == ir.Real {
			return nil, false
		}
		return lform{"1": e.I}.scaled(1), true
	case ir.OpVar:
		switch e.Name {
		case a.q:
			return lform{"c": interH, "1": a.lane}.scaled(1), true
		case a.k:
			return lform{"k": 1}, true
		}
		return lform{"v:" + e.Name: 1}, true
	case ir.OpGlobal:
		if e.Type.Depth != 0 {
			return nil, false
		}
		return lform{"g:" + e.Name: 1}, true
	case ir.OpNeg:
		f, ok := a.form(e.Args[0])
		return f.scaled(-1), ok
	case ir.OpIf:
		if b, ok := a.pick(e); ok && b != e {
			return a.form(b)
		}
		return nil, false
	case ir.OpLookup:
		if e.Args[0].Op != ir.OpGlobal {
			return nil, false
		}
		idx, ok := a.form(e.Args[1])
		if !ok || idx["k"] != 0 {
			return nil, false // a read that moves with k is no linear term
		}
		key := "r:" + e.Args[0].Name + "[" + idx.String() + "]"
		a.reads[key] = lread{e.Args[0].Name, idx}
		return lform{key: 1}, true
	}
	if len(e.Args) != 2 {
		return nil, false
	}
	f, ok1 := a.form(e.Args[0])
	g, ok2 := a.form(e.Args[1])
	if !ok1 || !ok2 {
		return nil, false
	}
	fc, fConst := f.constant()
	gc, gConst := g.constant()
	switch e.Op {
	case ir.OpAdd:
		return f.addScaled(g, 1), true
	case ir.OpSub:
		return f.addScaled(g, -1), true
	case ir.OpMul:
		switch {
		case gConst:
			return f.scaled(gc), true
		case fConst:
			return g.scaled(fc), true
		}
		return nil, false
	case ir.OpDiv, ir.OpMod:
		// m*c + r with 0 <= r and m a multiple of the divisor: exact
		// for the chunks c >= 0 the engine runs.
		m, r := f["c"], f["1"]
		if !gConst || gc <= 0 || len(f) > 2 || len(f) == 2 && m == 0 || m < 0 || m%gc != 0 || r < 0 {
			return nil, false
		}
		if e.Op == ir.OpMod {
			return lform{"1": r % gc}.scaled(1), true
		}
		return lform{"c": m / gc, "1": r / gc}.scaled(1), true
	}
	if holds, ok := signTests[e.Op]; ok && fConst && gConst {
		return lform{"1": b2int(holds(fc - gc))}.scaled(1), true
	}
	return nil, false
}

// signTests: each comparison a op b as a test of the sign of a - b
// (the lanes' forms are small constants, so a - b does not wrap).
var signTests = map[ir.Op]func(int64) bool{
	ir.OpEq: func(d int64) bool { return d == 0 },
	ir.OpNe: func(d int64) bool { return d != 0 },
	ir.OpLt: func(d int64) bool { return d < 0 },
	ir.OpLe: func(d int64) bool { return d <= 0 },
	ir.OpGt: func(d int64) bool { return d > 0 },
	ir.OpGe: func(d int64) bool { return d >= 0 },
}

// pick follows the ifs of e whose conditions are constant in the lane to
// the branch they choose (e itself when it is no if); false when a
// condition is not constant.
func (a *laneForms) pick(e *ir.Expr) (*ir.Expr, bool) {
	for e.Op == ir.OpIf && len(e.Args) == 3 {
		cf, ok := a.form(e.Args[0])
		cv, isConst := cf.constant()
		if !ok || !isConst {
			return nil, false
		}
		e = e.Args[2-b2int(cv != 0)]
	}
	return e, true
}

func b2int(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// lanePriced returns the reads and half extractions of the inner loop of
// outer loop e that the engine runs as one load for its eight
// interleaved rows (see the top of this file), or nil where it does not
// interleave them.
func (s *session) lanePriced(e *ir.Expr) map[*ir.Expr]bool {
	if e.Op != ir.OpSum || e.Args[0].Op != ir.OpRange || len(e.Vars) < 1 || e.Type.Depth != 1 || e.Type.Base != ir.Real {
		return nil
	}
	single := e.Args[1]
	if single.Op != ir.OpSingleton || single.Ann != ir.AnnDense {
		return nil
	}
	inner := single.Args[1]
	if inner.Op != ir.OpSum || inner.Args[0].Op != ir.OpRange || len(inner.Vars) < 1 {
		return nil
	}
	var factors []*ir.Expr
	var flat func(x *ir.Expr)
	flat = func(x *ir.Expr) {
		if x.Op == ir.OpMul && x.Type.Depth == 0 {
			flat(x.Args[0])
			flat(x.Args[1])
			return
		}
		factors = append(factors, x)
	}
	flat(inner.Args[1])
	if len(factors) > 2 {
		return nil
	}
	var colE, valE *ir.Expr
	for _, f := range factors {
		if f.Op != ir.OpLookup || f.Args[0].Op != ir.OpGlobal {
			return nil
		}
		arr, ok := s.store[f.Args[0].Name].(*storage.Array)
		switch {
		case !ok:
			return nil
		case arr.Elem == ir.Real && colE == nil && f.Args[1].Op == ir.OpIf:
			colE = f.Args[1]
		case valE == nil:
			valE = f
		default:
			return nil
		}
	}
	if colE == nil {
		return nil
	}
	priced := map[*ir.Expr]bool{}
	a := &laneForms{q: e.Vars[0], k: inner.Vars[0], reads: map[string]lread{}}
	// rowRead: x is G(q + off) for an int array G, the same in each lane.
	rowRead := func(x *ir.Expr) (string, bool) {
		f, ok := a.form(x)
		if !ok || len(f) != 1 {
			return "", false
		}
		for key, m := range f {
			r, ok := a.reads[key]
			if !ok || m != 1 || len(r.idx) > 2 || r.idx["c"] != interH {
				return "", false
			}
			return fmt.Sprint(r.arr, r.idx["1"]-a.lane), true
		}
		return "", false
	}
	var key0, len0 string
	var base0 lform
	for lane := range int64(interH) {
		a.lane = lane
		kr, ok1 := rowRead(single.Args[0])
		lr, ok2 := rowRead(inner.Args[0].Args[1])
		lo, ok3 := a.form(inner.Args[0].Args[0])
		if !ok1 || !ok2 || !ok3 || len(lo) != 0 || lane > 0 && (kr != key0 || lr != len0) {
			return nil
		}
		key0, len0 = kr, lr
		// The column: the half of C(w) the lane's if picks.
		ce, ok := a.pick(colE)
		if !ok || ce.Op != ir.OpMod && ce.Op != ir.OpDiv || ce.Args[1].Op != ir.OpConst || ce.Args[1].I != storage.PackedHalf {
			return nil
		}
		cr := ce.Args[0]
		if cr.Op != ir.OpLookup || cr.Args[0].Op != ir.OpGlobal {
			return nil
		}
		if arr, ok := s.store[cr.Args[0].Name].(*storage.Array); !ok || arr.Elem != ir.Int {
			return nil
		}
		w, ok := a.form(cr.Args[1])
		if !ok {
			return nil
		}
		cb := lform{"1": b2int(ce.Op == ir.OpDiv)}.addScaled(w, 2)
		if cb["k"] != interH {
			return nil
		}
		if valE != nil {
			vb, ok := a.form(valE.Args[1])
			if !ok || !maps.Equal(vb, cb) {
				return nil
			}
		}
		delete(cb, "k")
		if lane == 0 {
			base0 = cb
		} else if !maps.Equal(cb, lform{"1": lane}.addScaled(base0, 1)) {
			return nil
		}
		priced[ce], priced[cr] = true, true
	}
	if valE != nil {
		priced[valE] = true
	}
	return priced
}
