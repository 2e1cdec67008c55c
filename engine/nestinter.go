package engine

import (
	"maps"
	"slices"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Interleaved rows: a primitive of position space for row-dependent
// ranges. When rows q = 8c+l (lane l of chunk c) of an outer range loop
// each add into a dense real result, at key P(q+a), the sum
//
//	sum(<k, _> in 0:R(q+b)) [V(iv)] * x(col)
//
// and the reads at step k of the eight rows of a chunk are adjacent,
// lane by lane (iv = base(c) + l + 8k, and col a 32-bit half of a word
// of an int array C whose half index 2w+h is the same base(c) + l + 8k),
// the chunk's eight rows run as SIMD lanes: one load of eight columns,
// gathers of x, one load of eight values per step (interkernel_amd64.s; Go on
// other CPUs). That is the layout of sliced ELLPACK (storage's sell) and
// of any user mapping that interleaves rows the same way.
//
// Nothing is matched by shape: interleavedOf puts every index in a
// linear normal form with q = 8c+l for each lane l (q/8, q%8 and q%2
// fold for c >= 0; an if on the lane folds to its branch; array reads
// are atoms at a normalized index) and proves the adjacency from those
// forms. Each lane adds its terms in the plan's order from 0.0 and then
// into the result, lanes in order: the bits of the position-space path.
// Rows outside whole chunks, and chunks whose arrays do not check
// (keys, words or values out of range), run in position space, which
// reports what is wrong.

// interH is the number of interleaved rows: the kernels' lane count.
const interH = storage.SellHeight

// interleaved is an outer loop's body run as interleaved rows.
type interleaved struct {
	perm, rlen, cpos *cell // the rows' keys, lengths, chunk bases
	a, b, d          int64 // offsets: key P(q+a), length R(q+b), base 2*Cp(c+d)
	cols, x          *cell
	vals             *cell // nil: no value factor (a pattern matrix)
}

// lanes is the normal-form analysis for one lane.
type lanes struct {
	c     *compiler
	q     [2]string // the outer loop's variables (its key)
	k     [2]string // the inner loop's variables
	lane  int64
	reads map[string]read // atoms that are reads: the array and index
}

type read struct {
	g   string
	idx linear
}

// form puts int expression e in normal form for the lane, or reports
// false.
func (a *lanes) form(e *ir.Expr) (linear, bool) {
	switch e.Op {
	case ir.OpConst:
		if e.Type.Depth != 0 || e.Type.Base == ir.Real || !smallCoef(e.I) {
			return nil, false
		}
		return constLinear(e.I), true
	case ir.OpVar:
		switch e.Name {
		case a.q[0], a.q[1]:
			return linear{"c": interH, "1": a.lane}.add(nil, 0), true
		case a.k[0], a.k[1]:
			return atomLinear("k"), true
		}
		return atomLinear("v:" + e.Name), true
	case ir.OpGlobal:
		if e.Type.Depth != 0 {
			return nil, false
		}
		return atomLinear("g:" + e.Name), true
	case ir.OpNeg:
		f, ok := a.form(e.Args[0])
		return linear{}.add(f, -1), ok
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod, ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		f, ok1 := a.form(e.Args[0])
		g, ok2 := a.form(e.Args[1])
		if !ok1 || !ok2 {
			return nil, false
		}
		return binForm(e.Op, f, g)
	case ir.OpIf:
		if len(e.Args) != 3 {
			return nil, false
		}
		cf, ok := a.form(e.Args[0])
		cv, isConst := cf.constant()
		if !ok || !isConst {
			return nil, false
		}
		if cv != 0 {
			return a.form(e.Args[1])
		}
		return a.form(e.Args[2])
	case ir.OpLookup:
		g := e.Args[0]
		if g.Op != ir.OpGlobal {
			return nil, false
		}
		info, ok := a.c.schema[g.Name]
		if !ok || info.Kind != ir.ObjArray || info.Elem != ir.Int {
			return nil, false
		}
		idx, ok := a.form(e.Args[1])
		if !ok || idx["k"] != 0 {
			return nil, false // a read that moves with k is a gather, not linear
		}
		key := "r:" + g.Name + "[" + idx.String() + "]"
		a.reads[key] = read{g.Name, idx}
		return atomLinear(key), true
	}
	return nil, false
}

// binForm combines the forms of a binary operation. / and % fold only
// for a dividend m*c + r with m, r >= 0 and m a multiple of the divisor
// (c >= 0: the caller runs chunks of rows q >= 0), where Go's truncating
// division is exact arithmetic.
func binForm(op ir.Op, f, g linear) (linear, bool) {
	fc, fConst := f.constant()
	gc, gConst := g.constant()
	switch op {
	case ir.OpAdd:
		return f.add(g, 1), true
	case ir.OpSub:
		return f.add(g, -1), true
	case ir.OpMul:
		for _, v := range slices.Concat(slices.Collect(maps.Values(f)), slices.Collect(maps.Values(g))) {
			if !smallCoef(v) {
				return nil, false
			}
		}
		if !fConst && !gConst {
			return nil, false
		}
		out, _ := f.times(g)
		for _, v := range out {
			if !smallCoef(v) {
				return nil, false // the products stay clear of overflow
			}
		}
		return out, true
	case ir.OpDiv, ir.OpMod:
		if !gConst || gc <= 0 {
			return nil, false
		}
		m, r := f["c"], f["1"]
		if !f.only("c") || m < 0 || m%gc != 0 || r < 0 {
			return nil, false
		}
		if op == ir.OpMod {
			return constLinear(r % gc), true
		}
		return linear{"c": m / gc, "1": r / gc}.add(nil, 0), true
	}
	if !fConst || !gConst {
		return nil, false
	}
	return constLinear(b2i(cmpInt(op, fc, gc))), true
}

// interleavedOf returns the interleaved form of outer loop o whose flat
// steps are fp's, or nil.
func (c *compiler) interleavedOf(o *nloop, fp *flatPlan) *interleaved {
	sk := o.sink
	if o.kind != itRange || sk.spec == nil || !sk.spec.dense || !sk.spec.real || sk.spec.depth != 1 {
		return nil
	}
	var s *nstmt
	for _, st := range fp.steps {
		switch {
		case st.kind == stGuard:
		case st.kind == stSingle && s == nil:
			s = st
		default:
			return nil
		}
	}
	if s == nil || s.loop == nil || s.child != nil || s.hasPost() || s.accF < 0 || !s.loop.rowRange {
		return nil
	}
	l := s.loop
	src := l.e.Args[0]
	terms := operands(ir.OpMul, l.e.Args[1], nil)
	if len(terms) > 2 {
		return nil
	}
	it := &interleaved{}
	var colE, valE *ir.Expr
	for _, t := range terms {
		if t.Op != ir.OpLookup || t.Args[0].Op != ir.OpGlobal {
			return nil
		}
		info, ok := c.schema[t.Args[0].Name]
		switch {
		case !ok || info.Kind != ir.ObjArray:
			return nil
		case info.Elem == ir.Real && it.x == nil && columnLike(t.Args[1]):
			it.x, colE = c.cell(t.Args[0]), t.Args[1]
		case valE == nil && (info.Elem == ir.Real || info.Elem == ir.Int):
			it.vals, valE = c.cell(t.Args[0]), t.Args[1]
		default:
			return nil
		}
	}
	if it.x == nil {
		return nil
	}
	a := &lanes{c: c, q: [2]string{o.e.Vars[0], o.e.Vars[1]}, k: [2]string{l.e.Vars[0], l.e.Vars[1]}, reads: map[string]read{}}
	// arrayAt: e is G(q + off) for an int array G, the same in every lane.
	arrayAt := func(e *ir.Expr, lane int64) (string, int64, bool) {
		if e.Op != ir.OpLookup || e.Args[0].Op != ir.OpGlobal {
			return "", 0, false
		}
		f, ok := a.form(e)
		if !ok || len(f) != 1 {
			return "", 0, false
		}
		for key := range f {
			r, ok := a.reads[key]
			if !ok || f[key] != 1 || !r.idx.only("c") || r.idx["c"] != interH {
				return "", 0, false
			}
			return r.g, r.idx["1"] - lane, true
		}
		return "", 0, false
	}
	var base0 linear
	var perm, rlen, cols string
	for lane := range int64(interH) {
		a.lane = lane
		p, off, ok := arrayAt(s.keyE, lane)
		if !ok || (lane > 0 && (p != perm || off != it.a)) {
			return nil
		}
		perm, it.a = p, off
		if lo, ok := a.form(src.Args[0]); !ok || len(lo) != 0 {
			return nil // the kernels run each row's steps from 0
		}
		r, off, ok := arrayAt(src.Args[1], lane)
		if !ok || (lane > 0 && (r != rlen || off != it.b)) {
			return nil
		}
		rlen, it.b = r, off
		// The column: a half of C(w), the one the lane's if picks.
		ce := colE
		for ce.Op == ir.OpIf && len(ce.Args) == 3 {
			cf, ok := a.form(ce.Args[0])
			cv, isConst := cf.constant()
			if !ok || !isConst {
				return nil
			}
			if cv != 0 {
				ce = ce.Args[1]
			} else {
				ce = ce.Args[2]
			}
		}
		half, ok := halfOf(ce)
		if !ok || ce.Args[0].Op != ir.OpLookup || ce.Args[0].Args[0].Op != ir.OpGlobal {
			return nil
		}
		cr := ce.Args[0]
		if lane > 0 && cr.Args[0].Name != cols {
			return nil
		}
		cols = cr.Args[0].Name
		if info := c.schema[cols]; info.Kind != ir.ObjArray || info.Elem != ir.Int {
			return nil
		}
		w, ok := a.form(cr.Args[1])
		if !ok {
			return nil
		}
		// Index 2w+h of the array read as 32-bit halves.
		cb := constLinear(half).add(w, 2)
		if cb["k"] != interH {
			return nil
		}
		if valE != nil {
			vb, ok := a.form(valE)
			if !ok || !maps.Equal(vb, cb) {
				return nil
			}
		}
		delete(cb, "k")
		if lane == 0 {
			base0 = cb
		} else if !maps.Equal(cb, constLinear(lane).add(base0, 1)) {
			return nil
		}
	}
	// The chunk's base is 2 * Cp(c + d): its words from Cp(c + d) on.
	if len(base0) != 1 {
		return nil
	}
	for key, m := range base0 {
		r, ok := a.reads[key]
		if !ok || m != 2 || !r.idx.only("c") || r.idx["c"] != 1 {
			return nil
		}
		it.cpos, it.d = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: r.g}), r.idx["1"]
	}
	it.perm = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: perm})
	it.rlen = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: rlen})
	it.cols = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: cols})
	return it
}

// halfOf reports which 32-bit half of a word e reads: w % 2^32 the low
// (0), w / 2^32 the high (1).
func halfOf(e *ir.Expr) (int64, bool) {
	if (e.Op != ir.OpMod && e.Op != ir.OpDiv) || e.Args[1].Op != ir.OpConst || e.Args[1].I != storage.PackedHalf {
		return 0, false
	}
	if e.Op == ir.OpMod {
		return 0, true
	}
	return 1, true
}

// columnLike reports whether e is a half of a word, or an if choosing
// between such halves.
func columnLike(e *ir.Expr) bool {
	if e.Op == ir.OpIf && len(e.Args) == 3 {
		return columnLike(e.Args[1]) && columnLike(e.Args[2])
	}
	_, ok := halfOf(e)
	return ok
}

// run runs rows lo..hi-1 of o: whole chunks of rows q >= 0 as
// interleaved lanes, the rows of partial chunks (and of chunks that fail
// a check) one at a time as lanes, any row whose reads leave their
// arrays in position space, which reports it. False, having run
// nothing, when the arrays rule the kernels out.
func (it *interleaved) run(fr *frame, o *nloop, lo, hi int64, b *builder) bool {
	const h = int64(interH)
	perm, rlen, cpos, cols, x := it.perm, it.rlen, it.cpos, it.cols, it.x
	if b.ws != nil || b.spec.depth != 1 || !b.spec.dense || !b.spec.real ||
		cols.halfMax < 0 || cols.halfMax >= min(int64(len(x.reals)), 1<<31) {
		return false
	}
	rows := func(a, z int64) bool {
		for q := a; q < z; q++ {
			if !it.row(q, b) {
				if o.flatRows(fr, q, q+1, b); fr.err != nil {
					return false
				}
			}
		}
		return true
	}
	// Chunks c0..c1-1: rows inside lo..hi-1, lanes inside the arrays.
	c0 := max((max(lo, 0)+h-1)/h, ceilDiv(-it.a, h), ceilDiv(-it.b, h), -it.d)
	c1 := min(hi/h, (int64(len(perm.ints))-it.a)/h, (int64(len(rlen.ints))-it.b)/h, int64(len(cpos.ints))-it.d)
	if c0 >= c1 {
		rows(lo, hi)
		return true
	}
	if !rows(lo, c0*h) {
		return true
	}
	b.holdKeysOf(perm)
	P, R, Cp := perm.ints[c0*h+it.a:c1*h+it.a], rlen.ints[c0*h+it.b:c1*h+it.b], cpos.ints[c0+it.d:c1+it.d]
	// Int values convert exactly in SIMD when |v| < 2^51 (interkernel_amd64.s).
	exact := it.vals != nil && it.vals.imin >= -1<<51 && it.vals.imax < 1<<51
	nestSaw("interleaved")
	for c := int64(0); c < c1-c0; {
		end := min(c1-c0, c+sellChunkCalls)
		var done int64
		switch {
		case it.vals == nil:
			done = sellChunks[float64](b.reals, P, R, Cp, cols.ints, nil, x.reals, c, end, false)
		case it.vals.info.Elem == ir.Real:
			done = sellChunks(b.reals, P, R, Cp, cols.ints, it.vals.reals, x.reals, c, end, false)
		default: // int values, converted as they are read
			done = sellChunks(b.reals, P, R, Cp, cols.ints, it.vals.ints, x.reals, c, end, exact)
		}
		if c = done; c < end {
			// The chunk failed a check: its rows one at a time.
			if q := (c0 + c) * h; !rows(q, q+h) {
				return true
			}
			c++
		}
	}
	rows(c1*h, hi)
	return true
}

// row runs row q alone, lane q%8 of chunk q/8, into b, adding its terms
// in order from 0.0 as the kernels do; false, having run nothing, when
// q < 0 or a read would leave its array. The caller has checked that
// every half of the columns' words indexes x.
func (it *interleaved) row(q int64, b *builder) bool {
	const h = int64(interH)
	kq, rq, cq := q+it.a, q+it.b, q/h+it.d
	if q < 0 || kq < 0 || kq >= int64(len(it.perm.ints)) || rq < 0 || rq >= int64(len(it.rlen.ints)) ||
		cq < 0 || cq >= int64(len(it.cpos.ints)) {
		return false
	}
	n, base := it.rlen.ints[rq], 2*it.cpos.ints[cq]+q%h
	cols, x := it.cols.ints, it.x.reals
	if n > 0 {
		// Half index base + 8(n-1) inside cols (and vals), without
		// overflow.
		limit := 2 * int64(len(cols))
		if it.vals != nil {
			limit = min(limit, it.vals.n)
		}
		if base < 0 || base >= limit || n-1 > (limit-1-base)/h {
			return false
		}
	}
	s := 0.0
	for k := range max(n, 0) {
		i := base + h*k
		col := cols[i>>1] >> (32 * (i & 1)) & (storage.PackedHalf - 1)
		switch {
		case it.vals == nil:
			s += x[col]
		case it.vals.info.Elem == ir.Real:
			s += it.vals.reals[i] * x[col]
		default:
			s += float64(it.vals.ints[i]) * x[col]
		}
	}
	b.addReal(it.perm.ints[kq], s)
	return true
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return -(-a / b)
	}
	return (a + b - 1) / b
}
