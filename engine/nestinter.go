package engine

import (
	"maps"
	"slices"
	"unsafe"

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
// The same rows serve a row's dot bound by a let and then a loop over
// the same row's entries scattering them by column, scaled by the dot
// (BATAX: dotThenScatter's steps): the dots run as above into sums of
// their own, then each row scatters, rows in order. No dot reads the
// result, so the order of the result's additions is the general path's.
//
// Nothing is matched by shape: interRow puts every index in a
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
	// scatter: each row's dot, times scale (nil: 1), goes back over the
	// same row's entries, each its value times the scaled dot into the
	// result at its column (a dot bound by a let, then a loop over the
	// row: BATAX), rather than into the result at P(q+a); perm is nil.
	scatter bool
	scale   realFn
	// fac: the scatter's value is fac times the scaled dot (no values).
	fac realFn
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
// steps are fp's, or nil: either one sum per row into the result at a
// key of the row, or dotThenScatter's steps whose two loops walk the
// same interleaved row.
func (c *compiler) interleavedOf(o *nloop, fp *flatPlan) *interleaved {
	sk := o.sink
	if o.kind != itRange || sk.spec == nil || !sk.spec.dense || !sk.spec.real || sk.spec.depth != 1 {
		return nil
	}
	if let, loop, scaled, a, ok := dotThenScatter(o, fp); ok {
		return c.interDotScatter(o, let.loop, loop.loop, let.name, scaled, a)
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
	if s == nil || s.loop == nil || s.child != nil || s.hasPost() || s.accF < 0 {
		return nil
	}
	it := &interleaved{}
	colE, valE, ok := c.dotTerms(s.loop, it)
	if !ok || !c.interRow(o, s.loop, colE, valE, it) {
		return nil
	}
	// The rows' key: P(q + a) for an int array P, the same in every lane.
	a := c.lanesOf(o, s.loop)
	var perm string
	for lane := range int64(interH) {
		a.lane = lane
		p, off, ok := a.arrayAt(s.keyE)
		if !ok || (lane > 0 && (p != perm || off != it.a)) {
			return nil
		}
		perm, it.a = p, off
	}
	it.perm = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: perm})
	return it
}

// interDotScatter returns the interleaved form of a row's dot (loop dot,
// bound by a let) and a scatter of the same row's entries by column
// scaled by the variable scaled, which is the dot times a (nil: 1), or
// nil.
func (c *compiler) interDotScatter(o, dot, scat *nloop, let, scaled string, a *ir.Expr) *interleaved {
	it := &interleaved{scatter: true}
	colE, valE, ok := c.dotTerms(dot, it)
	if !ok || !c.interRow(o, dot, colE, valE, it) || !scat.rowRange || scat.e.Args[1].Op != ir.OpSingleton {
		return nil
	}
	// The scatter: { col -> v } over the dot's row, its column where the
	// dot reads it and v the scaled dot times the value at that index
	// (V(iv) * scaled) or times a factor invariant in the rows.
	body := scat.e.Args[1]
	v := body.Args[1]
	var sValE, fac *ir.Expr
	if v.Op == ir.OpMul && len(v.Args) == 2 {
		f, t := v.Args[0], v.Args[1]
		if isVar(f, scaled) {
			f, t = t, f
		}
		v = t
		switch {
		case f.Op == ir.OpLookup && f.Args[0].Op == ir.OpGlobal && it.vals != nil && f.Args[0].Name == it.vals.name:
			sValE = f.Args[1]
		case it.vals == nil && !containsLoop(f) && safe(f) && !readsAny(f, o.e.Vars[0], o.e.Vars[1], scat.e.Vars[0], scat.e.Vars[1], let, scaled):
			fac = f
		default:
			return nil
		}
	}
	if !isVar(v, scaled) || (sValE == nil) != (it.vals == nil) || !columnLike(body.Args[0]) {
		return nil
	}
	again := &interleaved{x: it.x, vals: it.vals}
	if !c.interRow(o, scat, body.Args[0], sValE, again) || again.rlen != it.rlen || again.b != it.b ||
		again.cpos != it.cpos || again.d != it.d || again.cols != it.cols {
		return nil
	}
	if a != nil {
		it.scale = asReal(c.expr(a))
	}
	if fac != nil {
		it.fac = asReal(c.expr(fac))
	}
	return it
}

func isVar(e *ir.Expr, name string) bool { return e.Op == ir.OpVar && e.Name == name }

// readsAny reports whether e reads one of the variables names.
func readsAny(e *ir.Expr, names ...string) bool {
	fv := ir.FreeVars(e)
	for _, n := range names {
		if fv[n] {
			return true
		}
	}
	return false
}

// dotTerms splits the body of row loop l, a product of x(col) and at
// most one value read, into it.x and it.vals: the column's and the
// value's index expressions, or false.
func (c *compiler) dotTerms(l *nloop, it *interleaved) (colE, valE *ir.Expr, ok bool) {
	terms := operands(ir.OpMul, l.e.Args[1], nil)
	if len(terms) > 2 {
		return nil, nil, false
	}
	for _, t := range terms {
		if t.Op != ir.OpLookup || t.Args[0].Op != ir.OpGlobal {
			return nil, nil, false
		}
		info, ok := c.schema[t.Args[0].Name]
		switch {
		case !ok || info.Kind != ir.ObjArray:
			return nil, nil, false
		case info.Elem == ir.Real && it.x == nil && columnLike(t.Args[1]):
			it.x, colE = c.cell(t.Args[0]), t.Args[1]
		case valE == nil && (info.Elem == ir.Real || info.Elem == ir.Int):
			it.vals, valE = c.cell(t.Args[0]), t.Args[1]
		default:
			return nil, nil, false
		}
	}
	return colE, valE, it.x != nil
}

// lanesOf is the lane analysis of row loop l inside outer loop o.
func (c *compiler) lanesOf(o, l *nloop) *lanes {
	return &lanes{c: c, q: [2]string{o.e.Vars[0], o.e.Vars[1]}, k: [2]string{l.e.Vars[0], l.e.Vars[1]}, reads: map[string]read{}}
}

// arrayAt reports that e is G(q + off) for an int array G, the same in
// every lane: G and off.
func (a *lanes) arrayAt(e *ir.Expr) (string, int64, bool) {
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
		return r.g, r.idx["1"] - a.lane, true
	}
	return "", 0, false
}

// interRow proves that row loop l of o walks an interleaved row: its
// range 0:R(q+b), at step k of row q = 8c+l the column colE the half
// 2*Cp(c+d) + l + 8k of the words of an int array C, and the value valE
// (nil: none) the entry at that same index. It sets it's rlen, b, cpos,
// d and cols.
func (c *compiler) interRow(o, l *nloop, colE, valE *ir.Expr, it *interleaved) bool {
	if !l.rowRange {
		return false
	}
	src := l.e.Args[0]
	a := c.lanesOf(o, l)
	var base0 linear
	var rlen, cols string
	for lane := range int64(interH) {
		a.lane = lane
		if lo, ok := a.form(src.Args[0]); !ok || len(lo) != 0 {
			return false // the kernels run each row's steps from 0
		}
		r, off, ok := a.arrayAt(src.Args[1])
		if !ok || (lane > 0 && (r != rlen || off != it.b)) {
			return false
		}
		rlen, it.b = r, off
		// The column: a half of C(w), the one the lane's if picks.
		ce := colE
		for ce.Op == ir.OpIf && len(ce.Args) == 3 {
			cf, ok := a.form(ce.Args[0])
			cv, isConst := cf.constant()
			if !ok || !isConst {
				return false
			}
			if cv != 0 {
				ce = ce.Args[1]
			} else {
				ce = ce.Args[2]
			}
		}
		half, ok := halfOf(ce)
		if !ok || ce.Args[0].Op != ir.OpLookup || ce.Args[0].Args[0].Op != ir.OpGlobal {
			return false
		}
		cr := ce.Args[0]
		if lane > 0 && cr.Args[0].Name != cols {
			return false
		}
		cols = cr.Args[0].Name
		if info := c.schema[cols]; info.Kind != ir.ObjArray || info.Elem != ir.Int {
			return false
		}
		w, ok := a.form(cr.Args[1])
		if !ok {
			return false
		}
		// Index 2w+h of the array read as 32-bit halves.
		cb := constLinear(half).add(w, 2)
		if cb["k"] != interH {
			return false
		}
		if valE != nil {
			vb, ok := a.form(valE)
			if !ok || !maps.Equal(vb, cb) {
				return false
			}
		}
		delete(cb, "k")
		if lane == 0 {
			base0 = cb
		} else if !maps.Equal(cb, constLinear(lane).add(base0, 1)) {
			return false
		}
	}
	// The chunk's base is 2 * Cp(c + d): its words from Cp(c + d) on.
	if len(base0) != 1 {
		return false
	}
	for key, m := range base0 {
		r, ok := a.reads[key]
		if !ok || m != 2 || !r.idx.only("c") || r.idx["c"] != 1 {
			return false
		}
		it.cpos, it.d = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: r.g}), r.idx["1"]
	}
	it.rlen = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: rlen})
	it.cols = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: cols})
	return true
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
	scale, fac := 1.0, 1.0
	if it.scale != nil {
		if scale = it.scale(fr); fr.err != nil {
			return true
		}
	}
	if it.fac != nil {
		if fac = it.fac(fr); fr.err != nil {
			return true
		}
	}
	if it.scatter {
		b.holdKeys(cols.halfMax, 2*int64(len(cols.ints)))
	}
	rows := func(a, z int64) bool {
		for q := a; q < z; q++ {
			if !it.row(q, scale, fac, b) {
				if o.flatRows(fr, q, q+1, b); fr.err != nil {
					return false
				}
			}
		}
		return true
	}
	// Chunks c0..c1-1: rows inside lo..hi-1, lanes inside the arrays.
	c0 := max((max(lo, 0)+h-1)/h, ceilDiv(-it.b, h), -it.d)
	c1 := min(hi/h, (int64(len(rlen.ints))-it.b)/h, int64(len(cpos.ints))-it.d)
	if !it.scatter {
		c0, c1 = max(c0, ceilDiv(-it.a, h)), min(c1, (int64(len(perm.ints))-it.a)/h)
	}
	if c0 >= c1 {
		rows(lo, hi)
		return true
	}
	if !rows(lo, c0*h) {
		return true
	}
	R, Cp := rlen.ints[c0*h+it.b:c1*h+it.b], cpos.ints[c0+it.d:c1+it.d]
	var P []int64
	var sums []float64
	if it.scatter {
		// The kernels leave the rows' dots in sums, lane by lane, each
		// at its own key; the rows then scatter them in order (no dot
		// reads the result).
		sums = make([]float64, h*min(c1-c0, sellChunkCalls))
	} else {
		b.holdKeysOf(perm)
		P = perm.ints[c0*h+it.a : c1*h+it.a]
	}
	nestSaw("interleaved")
	for c := int64(0); c < c1-c0; {
		end := min(c1-c0, c+sellChunkCalls)
		var done int64
		if it.scatter {
			sums := sums[:(end-c)*h]
			clear(sums)
			done = c + it.chunks(sums, interIota[:(end-c)*h], R[c*h:end*h], Cp[c:end], 0, end-c)
			it.scatterChunks(sums[:(done-c)*h], R[c*h:done*h], Cp[c:done], scale, fac, b)
		} else {
			done = it.chunks(b.reals, P, R, Cp, c, end)
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

// interIota is the keys 0, 1, ... of the rows' dots of one kernel call.
var interIota = func() []int64 {
	k := make([]int64, interH*sellChunkCalls)
	for i := range k {
		k[i] = int64(i)
	}
	return k
}()

// chunks runs sellChunks over it's columns, values and x: chunks c..end-1
// of P, R and Cp into out; the first chunk it did not run.
func (it *interleaved) chunks(out []float64, P, R, Cp []int64, c, end int64) int64 {
	cols, x := it.cols.ints, it.x.reals
	switch {
	case it.vals == nil:
		return sellChunks[float64](out, P, R, Cp, cols, nil, x, c, end, false)
	case it.vals.info.Elem == ir.Real:
		return sellChunks(out, P, R, Cp, cols, it.vals.reals, x, c, end, false)
	}
	// Int values, converted as they are read: exactly in SIMD when
	// |v| < 2^51 (interkernel_amd64.s).
	exact := it.vals.imin >= -1<<51 && it.vals.imax < 1<<51
	return sellChunks(out, P, R, Cp, cols, it.vals.ints, x, c, end, exact)
}

// row runs row q alone, lane q%8 of chunk q/8, into b, adding its terms
// in order from 0.0 as the kernels do, and then the sum at the row's key
// or, scattering, each entry's value (or fac) times scale times the sum
// at its column, in order; false, having run nothing, when q < 0 or a read
// would leave its array. The caller has checked that every half of the
// columns' words indexes x.
func (it *interleaved) row(q int64, scale, fac float64, b *builder) bool {
	const h = int64(interH)
	kq, rq, cq := q+it.a, q+it.b, q/h+it.d
	if q < 0 || (!it.scatter && (kq < 0 || kq >= int64(len(it.perm.ints)))) || rq < 0 || rq >= int64(len(it.rlen.ints)) ||
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
	n = max(n, 0)
	var s float64
	switch {
	case it.vals == nil:
		s = interDot[float64](cols, nil, x, base, n)
	case it.vals.info.Elem == ir.Real:
		s = interDot(cols, it.vals.reals, x, base, n)
	default:
		s = interDot(cols, it.vals.ints, x, base, n)
	}
	if !it.scatter {
		b.addReal(it.perm.ints[kq], s)
		return true
	}
	it.scatterRow(n, base, scale*s, fac, b)
	return true
}

// scatterChunks scatters the rows of chunks the kernels ran, in order:
// row q adds its entries times scale*sums[q] (and fac) as scatterRow
// does, its lengths R and word offsets Cp the chunks'.
func (it *interleaved) scatterChunks(sums []float64, R, Cp []int64, scale, fac float64, b *builder) {
	const h = int64(interH)
	if it.cols.halfMax >= int64(len(b.reals)) {
		for q := range int64(len(sums)) {
			it.scatterRow(R[q], 2*Cp[q/h]+q%h, scale*sums[q], fac, b)
		}
		return
	}
	// fac is 1 without a factor: t*1 is t.
	out, cols := b.reals, it.cols.ints
	switch {
	case it.vals == nil:
		sellScatterRows[float64](out, sums, R, Cp, cols, nil, scale, fac)
	case it.vals.info.Elem == ir.Real:
		sellScatterRows(out, sums, R, Cp, cols, it.vals.reals, scale, fac)
	default:
		sellScatterRows(out, sums, R, Cp, cols, it.vals.ints, scale, fac)
	}
}

// scatterRow adds, for k < n, the entry at half index base + 8k (or
// fac, without values) times the scaled dot t into b at its column, in
// order. The caller has checked that the entries lie inside the arrays.
func (it *interleaved) scatterRow(n, base int64, t, fac float64, b *builder) {
	const h = int64(interH)
	n = max(n, 0)
	if it.fac != nil {
		t = fac * t
	}
	cols := it.cols.ints
	if it.cols.halfMax >= int64(len(b.reals)) {
		// A column past the dense level: each goes through addReal.
		for k := range n {
			i := base + h*k
			v := t
			switch {
			case it.vals == nil:
			case it.vals.info.Elem == ir.Real:
				v = it.vals.reals[i] * t
			default:
				v = float64(it.vals.ints[i]) * t
			}
			b.addReal(cols[i>>1]>>(32*(i&1))&(storage.PackedHalf-1), v)
		}
		return
	}
	switch {
	case it.vals == nil:
		interScatter[float64](b.reals, cols, nil, base, n, t)
	case it.vals.info.Elem == ir.Real:
		interScatter(b.reals, cols, it.vals.reals, base, n, t)
	default:
		interScatter(b.reals, cols, it.vals.ints, base, n, t)
	}
}

// interDot is the sum over k < n of the entry at half index base + 8k
// (1 where vals is nil) times x at its column, in order from 0.0.
func interDot[V number](cols []int64, vals []V, x []float64, base, n int64) float64 {
	const h, low = int64(interH), storage.PackedHalf - 1
	s := 0.0
	if vals == nil {
		for i := base; i < base+h*n; i += h {
			s += x[cols[i>>1]>>(32*(i&1))&low]
		}
		return s
	}
	for i := base; i < base+h*n; i += h {
		s += float64(vals[i]) * x[cols[i>>1]>>(32*(i&1))&low]
	}
	return s
}

// interScatter adds, for k < n, the entry at half index base + 8k (1
// where vals is nil) times t into out at its column, in order, without
// checks (as in fit.go): the caller has checked that the entries lie
// inside cols and vals and that every half of cols' words indexes out.
func interScatter[V number](out []float64, cols []int64, vals []V, base, n int64, t float64) {
	const h = int64(interH)
	// A row's entries are 8 halves apart, so every one is the same half
	// of its word: the shift is the row's, and the words are 4 apart.
	shift, w := uint(32*(base&1)), base>>1
	op, cp := unsafe.Pointer(unsafe.SliceData(out)), unsafe.Pointer(unsafe.SliceData(cols))
	if vals == nil {
		for k := range n {
			*(*float64)(unsafe.Add(op, int64(uint32(at[int64](cp, w+h/2*k)>>shift))*8)) += t
		}
		return
	}
	vp := unsafe.Pointer(unsafe.SliceData(vals))
	for k := range n {
		*(*float64)(unsafe.Add(op, int64(uint32(at[int64](cp, w+h/2*k)>>shift))*8)) += float64(at[V](vp, base+h*k)) * t
	}
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return -(-a / b)
	}
	return (a + b - 1) / b
}
