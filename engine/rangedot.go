package engine

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/storel/storel/ir"
)

// A sum over a range inside a vectorized body: sum(<k, _> in lo:hi)
// f0 * f1 * f2, each factor a real array read at an index affine in k or
// a value that does not read k (SDDMM's rank dot per entry, U(i,k) and
// V(j,k) at two different bases). Each lane runs it as one straight
// loop over k, its reads bounds-checked once per lane at the range's
// ends (two factors over one range: once per batch, by the interval
// facts of the index arrays their bases read where those prove it),
// adding the products in k's order from 0 as the loop per entry does:
// the same bits. A lane whose read leaves its array sends the batch to
// the closures, which report the interpreter's error.

// Measured (go test ./engine -run XXX -bench 'ShortLoops/SDDMM-rank8|NestShapes/dense-MV'
// -benchtime 20x, three rounds alternating builds with the lifted dot per
// entry and with range dots, on the shared 2-core machine at a load average of
// 6-8: min of the rounds, ms; the loop is the Go loop of each benchmark):
//
//	plan                         lifted   range dot   loop
//	SDDMM, rank 8, 240k entries    40         7.2      2.1-3.4
//	dense MV, 2000 x 2000          26         6.5      1.8-5.2
//
// CPU samples (-cpuprofile) for SDDMM: 690-780 ms lifted, 200-240 range
// dot, 60-90 the loop, for 30 runs each.

// vdot is a range dot's bounds and factors, multiplied left to right.
// by, where set, is a real the dot is multiplied by (a * sum, the sum
// written in place or a let used once): each lane's sum is multiplied as
// it is stored, not in a node and a pass of its own (IEEE products
// commute, so the bits are a * sum's).
type vdot struct {
	lo, hi *vnode
	fs     []vdotFactor
	tests  []vdotTest
	by     *vnode
}

// vdotTest is a comparison of a + sa*k and b + sb*k (v: a, sa, b, sb).
type vdotTest struct {
	op ir.Op
	v  [4]*vnode
}

// vdotFactor is a real array read at base + stride*k, or (cl nil) val.
// facts: base's interval facts (factBounded) bound it over a batch, so
// a batch whose facts keep the reads inside the array skips the scan
// of its bases. run: where the base and the dot's bounds read only
// values of the whole run (vnode.konst) and arrays, the facts give the
// same answer for every batch: decided once per run, in slot run-1 of
// vstate.dotIn (0: per batch).
type vdotFactor struct {
	cl           *cell
	base, stride *vnode
	val          *vnode
	facts        bool
	run          int
}

// runBounded reports whether n, factBounded, reads no value that changes
// within a run of the kernel: its interval is then the run's.
func runBounded(n *vnode) bool {
	switch n.op {
	case vInv:
		return n.konst
	case vVal, vRead:
		return true
	case vAdd, vSub, vMul:
		return runBounded(n.a) && runBounded(n.b)
	}
	return false
}

// factBounded reports whether interval bounds int node n over any batch
// of positions: it reads only invariants of the whole loop entry (none
// that change from row to row in position space), int arrays (whose
// min and max, known once the data is bound, bound every read) and
// their sums and products.
func factBounded(n *vnode) bool {
	switch n.op {
	case vInv:
		return !n.row && !n.real
	case vVal, vRead:
		return !n.real
	case vAdd, vSub, vMul:
		return factBounded(n.a) && factBounded(n.b)
	}
	return false
}

// onlyRangeSums reports whether every loop of e, the body of nl, is a
// sum over a range with no loop inside (those the batches run as range
// dots), its bounds not reading nl's variables where nl is a range.
func onlyRangeSums(e *ir.Expr, nl *nloop) bool {
	ok := true
	ir.Walk(e, func(n *ir.Expr) bool {
		switch n.Op {
		case ir.OpMerge:
			ok = false
		case ir.OpSum:
			fv := ir.FreeVars(n.Args[0])
			ok = n.Args[0].Op == ir.OpRange && !containsLoop(n.Args[0]) && !containsLoop(n.Args[1]) &&
				(nl.kind != itRange || !fv[nl.e.Vars[0]] && !fv[nl.e.Vars[1]])
		}
		return ok
	})
	return ok
}

// rangeDot builds the node of sum e, or panics noVec.
func (x *vctx) rangeDot(e *ir.Expr) *vnode {
	t := x.c.typeOf(e)
	if e.Args[0].Op != ir.OpRange || t.Depth != 0 || t.Base != ir.Real {
		panic(noVec{})
	}
	kv := map[string]bool{e.Vars[0]: true, e.Vars[1]: true}
	reads := func(e *ir.Expr) bool {
		for v := range ir.FreeVars(e) {
			if kv[v] {
				return true
			}
		}
		return false
	}
	d := &vdot{lo: x.intExpr(e.Args[0].Args[0]), hi: x.intExpr(e.Args[0].Args[1])}
	// A guard on the body or a factor must hold for every k of a lane
	// (else the batch goes to the closures): the factor is then its value.
	strip := func(f *ir.Expr) *ir.Expr {
		for ; f.Op == ir.OpIf && len(f.Args) == 2; f = f.Args[1] {
			x.dotTests(f.Args[0], reads, d)
		}
		return f
	}
	var fs []*ir.Expr
	b := strip(e.Args[1])
	for ; b.Op == ir.OpMul; b = strip(b.Args[0]) {
		fs = append(fs, strip(b.Args[1]))
	}
	fs = append(fs, b)
	if len(fs) > 3 {
		panic(noVec{})
	}
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		if !reads(f) {
			// (A factor that reads k is typed below: k is not in scope.)
			if x.c.typeOf(f).Base != ir.Real {
				panic(noVec{})
			}
			d.fs = append(d.fs, vdotFactor{val: x.expr(f)})
			continue
		}
		if f.Op != ir.OpLookup || f.Args[0].Op != ir.OpGlobal {
			panic(noVec{})
		}
		cl := x.c.cell(f.Args[0])
		if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Real {
			panic(noVec{})
		}
		base, stride := x.affineIn(f.Args[1], reads)
		bn := x.termNode(base)
		df := vdotFactor{cl: cl, base: bn, stride: x.termNode(stride)}
		// A base of invariants alone is one value a batch, checked as
		// such; facts matter where it reads an array.
		if src := intervalSource(bn); len(src) > 0 && factBounded(bn) {
			df.facts = true
			when := "per batch"
			if runBounded(bn) && runBounded(d.lo) && runBounded(d.hi) {
				x.v.facts++
				df.run, when = x.v.facts, "once per run"
			}
			x.nl.info.guards = append(x.nl.info.guards, fmt.Sprintf("reads of %s inside %s: discharged %s by interval facts (%s), else checked from the batch's least and greatest base",
				ir.Format(f), cl.name, when, strings.Join(slices.Compact(src), ", ")))
		}
		d.fs = append(d.fs, df)
	}
	return x.node(&vnode{op: vDot, real: true, dot: d, text: ir.Format(e)})
}

// dotTests adds the conjuncts of cond, comparisons of ints affine in k,
// to d's tests.
func (x *vctx) dotTests(cond *ir.Expr, reads func(*ir.Expr) bool, d *vdot) {
	switch cond.Op {
	case ir.OpAnd:
		x.dotTests(cond.Args[0], reads, d)
		x.dotTests(cond.Args[1], reads, d)
		return
	case ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpEq, ir.OpNe:
		a, sa := x.affineIn(cond.Args[0], reads)
		b, sb := x.affineIn(cond.Args[1], reads)
		d.tests = append(d.tests, vdotTest{cond.Op, [4]*vnode{x.termNode(a), x.termNode(sa), x.termNode(b), x.termNode(sb)}})
		x.nl.info.guards = append(x.nl.info.guards, ir.Format(cond)+": discharged per lane at the ends of its range, else the batch runs the closures")
		return
	}
	panic(noVec{})
}

// aterm is an int term of an affine form: n, or the constant c where n
// is nil.
type aterm struct {
	n *vnode
	c int64
}

// node is t as a node.
func (x *vctx) termNode(t aterm) *vnode {
	if t.n != nil {
		return t.n
	}
	return x.node(&vnode{op: vInv, fi: func(*frame) int64 { return t.c }, text: fmt.Sprint(t.c), konst: true})
}

// combine is a op b (vAdd, vSub, vMul), folding constants.
func (x *vctx) combine(op vop, a, b aterm) aterm {
	switch {
	case a.n == nil && b.n == nil:
		return aterm{c: arithOp(op, a.c, b.c)}
	case op == vMul && (a.n == nil && a.c == 0 || b.n == nil && b.c == 0):
		return aterm{}
	case op == vMul && a.n == nil && a.c == 1:
		return b
	case (op == vMul && b.c == 1 || op != vMul && b.c == 0) && b.n == nil:
		return a
	case op == vAdd && a.n == nil && a.c == 0:
		return b
	}
	return aterm{n: x.node(&vnode{op: op, a: x.termNode(a), b: x.termNode(b)})}
}

// affineIn splits int e into base + stride*k, k the variable reads
// detects.
func (x *vctx) affineIn(e *ir.Expr, reads func(*ir.Expr) bool) (base, stride aterm) {
	if !reads(e) {
		return aterm{n: x.intExpr(e)}, aterm{}
	}
	switch e.Op {
	case ir.OpVar:
		return aterm{}, aterm{c: 1}
	case ir.OpAdd, ir.OpSub:
		b0, s0 := x.affineIn(e.Args[0], reads)
		b1, s1 := x.affineIn(e.Args[1], reads)
		op := vAdd
		if e.Op == ir.OpSub {
			op = vSub
		}
		return x.combine(op, b0, b1), x.combine(op, s0, s1)
	case ir.OpMul:
		a, c := e.Args[0], e.Args[1]
		if reads(c) {
			a, c = c, a
		}
		if reads(c) {
			panic(noVec{})
		}
		f := aterm{n: x.intExpr(c)}
		b0, s0 := x.affineIn(a, reads)
		return x.combine(vMul, b0, f), x.combine(vMul, s0, f)
	}
	panic(noVec{})
}

// evalDot is a batch's range dots.
func (s *vstate) evalDot(fr *frame, nd *vnode, p0 int64, n int) (*vval, bool) {
	d := nd.dot
	lo, ok1 := s.eval(fr, d.lo, p0, n)
	hi, ok2 := s.eval(fr, d.hi, p0, n)
	if !ok1 || !ok2 {
		return nil, false
	}
	var base, stride [3]*vval
	scale := [3]int64{1, 1, 1}
	var vals [3][]float64
	var rb vval // a base per row (rowBase), where one is
	byRow := -1 // its factor
	uniform := lo.scalar && hi.scalar
	for i, f := range d.fs {
		var ok1, ok2 bool
		switch {
		case f.cl == nil:
			var r *vval
			r, ok1 = s.eval(fr, f.val, p0, n)
			ok2, uniform = ok1, false
			if ok1 {
				vals[i] = s.reals(f.val, r, n)
			}
		case uniform && byRow < 0 && len(d.fs) == 2 && f.base.rowUniform() && s.longRows(p0, n):
			rb, scale[i] = s.rowBase(fr, f.base, p0, n)
			if rb.rows {
				base[i], byRow = &rb, i
			} else {
				base[i] = s.put(f.base, rb)
			}
			ok1 = true
			fallthrough
		default:
			if base[i] == nil {
				base[i], scale[i], ok1 = s.scaledBase(fr, f.base, p0, n)
			}
			stride[i], ok2 = s.eval(fr, f.stride, p0, n)
			uniform = uniform && ok2 && stride[i].scalar && stride[i].i == 1
		}
		if !ok1 || !ok2 {
			return nil, false
		}
	}
	if byRow >= 0 {
		// Only dotByRows reads a base per row: with the other factor's
		// base not a vector of the lanes, the lanes' bases after all.
		if o := base[1-byRow]; !uniform || o == nil || o.iv == nil || o.aff || o.scalar {
			var ok bool
			if base[byRow], scale[byRow], ok = s.scaledBase(fr, d.fs[byRow].base, p0, n); !ok {
				return nil, false
			}
		}
	}
	for _, t := range d.tests {
		var v [4][]int64
		for i, nd := range t.v {
			r, ok := s.eval(fr, nd, p0, n)
			if !ok {
				return nil, false
			}
			v[i] = s.ints(nd, r, n)
		}
		los, his := s.ints(d.lo, lo, n), s.ints(d.hi, hi, n)
		for l := range n {
			if !affineHolds(t.op, v[0][l], v[1][l], v[2][l], v[3][l], los[l], his[l]) {
				return nil, false
			}
		}
	}
	var by []float64
	if d.by != nil {
		r, ok := s.eval(fr, d.by, p0, n)
		if !ok {
			return nil, false
		}
		by = s.reals(d.by, r, n)
		nestSaw("range dot times a factor")
	}
	out := s.fbuf(nd, n)
	nestSaw("range dot")
	if uniform && len(d.fs) <= 2 {
		return s.put(nd, vval{fv: out}), s.dot2(fr, d, lo.i, hi.i, p0, &base, &scale, by, out)
	}
	for i, f := range d.fs {
		if scale[i] != 1 {
			base[i], scale[i] = s.unscale(f.base, base[i], scale[i], n), 1
		}
	}
	var los, his []int64 = s.ints(d.lo, lo, n), s.ints(d.hi, hi, n)
	var bs, sts [3][]int64
	for i, f := range d.fs {
		if f.cl != nil {
			bs[i], sts[i] = s.ints(f.base, base[i], n), s.ints(f.stride, stride[i], n)
		}
	}
	var b, st [3]int64
	var v [3]float64
	for l := range out {
		for i := range d.fs {
			if vals[i] != nil {
				v[i] = vals[i][l]
			} else {
				b[i], st[i] = bs[i][l], sts[i][l]
			}
		}
		x, ok := s.dotLane(d, los[l], his[l], &b, &st, &v)
		if !ok {
			return nil, false
		}
		out[l] = x
	}
	scaleBy(out, by)
	return s.put(nd, vval{fv: out}), true
}

// scaleBy multiplies each lane of out by by's (none where by is nil).
func scaleBy(out, by []float64) {
	if by == nil {
		return
	}
	by = by[:len(out)]
	for l, x := range out {
		out[l] = by[l] * x
	}
}

// dot2 is the batch's dots of one or two reads over the same k range
// lo..hi-1, each lane's reads at base[i] + k (a base one value for the
// batch read as such, not spread over the lanes): the bounds checked once
// for the batch (by the bases' interval facts where they prove them, else
// from the bases' least and greatest), then a straight loop per lane,
// four lanes at a time where the lanes' bases differ.
func (s *vstate) dot2(fr *frame, d *vdot, lo, hi, p0 int64, base *[3]*vval, scale *[3]int64, by, out []float64) bool {
	if lo >= hi {
		clear(out)
		scaleBy(out, by)
		return true
	}
	n := len(out)
	for i, f := range d.fs {
		if !s.dotBaseInside(fr, f, base[i], scale[i], lo, hi, p0, n) {
			return false
		}
	}
	m := hi - lo
	if len(d.fs) == 1 {
		// A lone factor's sum (a row sum): each lane's adds in k's
		// order, eight lanes' chains at a time to hide the adds' latency.
		nestSaw("range dot of a lone factor, eight lanes at a time")
		a, sc := base[0], scale[0]
		switch {
		case a.scalar:
			one := [1]int64{a.i}
			sumLanes(d.fs[0].cl.reals, one[:], 1, lo, m, out[:1])
			for l := range out {
				out[l] = out[0]
			}
		case a.iv != nil && !a.aff:
			sumLanes(d.fs[0].cl.reals, a.iv[:n], sc, lo, m, out)
		default:
			a = s.unscale(d.fs[0].base, a, sc, n)
			sumLanes(d.fs[0].cl.reals, s.ints(d.fs[0].base, a, n), 1, lo, m, out)
		}
		scaleBy(out, by)
		return true
	}
	as, bs := d.fs[0].cl.reals, d.fs[1].cl.reals
	a, b := base[0], base[1]
	switch {
	case a.scalar && b.scalar:
		x, y := as[a.i+lo:][:m], bs[b.i+lo:][:m]
		y = y[:len(x)]
		acc := 0.0
		for q := range x {
			acc += float64(x[q] * y[q])
		}
		for l := range out {
			out[l] = acc
		}
		scaleBy(out, by)
	case a.scalar && b.iv != nil && !b.aff:
		dotOne(as[a.i+lo:][:m], bs, b.iv[:n], scale[1], lo, by, out)
	case b.scalar && a.iv != nil && !a.aff:
		// Products commute bit for bit: the same sums.
		dotOne(bs[b.i+lo:][:m], as, a.iv[:n], scale[0], lo, by, out)
	case a.rows:
		s.dotByRows(as, bs, a.iv, b.iv[:n], scale[0], scale[1], lo, m, p0, by, out)
	case b.rows:
		// Products commute bit for bit: the same sums.
		s.dotByRows(bs, as, b.iv, a.iv[:n], scale[1], scale[0], lo, m, p0, by, out)
	default:
		a, b = s.unscale(d.fs[0].base, a, scale[0], n), s.unscale(d.fs[1].base, b, scale[1], n)
		dotTwo(as, bs, s.ints(d.fs[0].base, a, n), s.ints(d.fs[1].base, b, n), lo, m, by, out)
	}
	return true
}

// dotByRows is dotOne row by row over a batch in position space
// (s.rows, lanes from p0) whose first factor's base, x times xsc, is one
// value in every lane of a row (rowUniform: SDDMM's U(i,:) over the
// entries of row i), x[r] that of the batch's row s.row0+r (rowBase):
// each row's lanes read the same m values of xs instead of a gather per
// lane.
func (s *vstate) dotByRows(xs, ys []float64, x, y []int64, xsc, ysc, lo, m, p0 int64, by, out []float64) {
	p, hi := s.rows, p0+int64(len(out))
	for r := s.row0; r+1 < len(p) && p[r] < hi; r++ {
		l0, l1 := max(p[r], p0)-p0, min(p[r+1], hi)-p0
		if l0 >= l1 {
			continue
		}
		var byr []float64
		if by != nil {
			byr = by[l0:l1]
		}
		dotOne(xs[x[r-s.row0]*xsc+lo:][:m], ys, y[l0:l1], ysc, lo, byr, out[l0:l1])
	}
}

// rowBase is scaledBase for a base that is one value in all the lanes
// of a row (rowUniform) of a batch in position space: its value once
// per row of the batch, rows s.row0 on that start before p0+n (rows
// set), not spread over the lanes; a scalar where it reads no row's
// variable.
func (s *vstate) rowBase(fr *frame, nd *vnode, p0 int64, n int) (vval, int64) {
	nr := 0
	for r := s.row0; r+1 < len(s.rows) && s.rows[r] < p0+int64(n); r++ {
		nr++
	}
	var v vval
	if nd.op == vMul {
		a, b := s.perRow(fr, nd.a, nr), s.perRow(fr, nd.b, nr)
		switch {
		case a.rows && b.scalar:
			nestSaw("range dot base per row")
			return a, b.i
		case b.rows && a.scalar:
			nestSaw("range dot base per row")
			return b, a.i
		}
		v = s.joinRows(nd, a, b, nr)
	} else {
		v = s.perRow(fr, nd, nr)
	}
	if v.rows {
		nestSaw("range dot base per row")
	}
	return v, 1
}

// perRow is rowUniform int node nd's value for the nr rows of the batch
// from s.row0, as rowBase.
func (s *vstate) perRow(fr *frame, nd *vnode, nr int) vval {
	if nd.op == vInv {
		switch {
		case nd.konst:
			return s.vals[nd.id]
		case nd.row:
			return vval{rows: true, iv: s.rowI[nd.id][s.row0:][:nr]}
		}
		return vval{scalar: true, i: nd.fi(fr)}
	}
	return s.joinRows(nd, s.perRow(fr, nd.a, nr), s.perRow(fr, nd.b, nr), nr)
}

// joinRows is perRow of nd from its operands' values a and b.
func (s *vstate) joinRows(nd *vnode, a, b vval, nr int) vval {
	if a.scalar && b.scalar {
		return vval{scalar: true, i: arithOp(nd.op, a.i, b.i)}
	}
	// Kept apart from the node's lane buffer (ibuf), which a lane
	// evaluation of the node in the same batch would overwrite; rowI
	// holds per-row values of row invariants only.
	buf := grow(&s.rowI[nd.id], nr)
	vecOp(nd.op, buf, a.iv, a.i, b.iv, b.i)
	return vval{rows: true, iv: buf}
}

// longRows reports whether a batch of n lanes from p0 is in position
// space (s.rows) with rows of dotLanes lanes or more on average: shorter
// rows would call dotOne for a lane or two (TTM's fibers of one or two
// entries), where a gather per lane costs less.
func (s *vstate) longRows(p0 int64, n int) bool {
	if s.rows == nil {
		return false
	}
	r := s.row0 + n/dotLanes
	return r+1 >= len(s.rows) || s.rows[r] >= p0+int64(n)
}

// rowsMinMax is minMax of v, one value per row of a batch of n lanes
// from p0 (rowBase), over the rows that have lanes in the batch: no lane
// reads an empty row's value.
func (s *vstate) rowsMinMax(v []int64, p0 int64, n int) (int64, int64) {
	p, hi := s.rows, p0+int64(n)
	b0, b1 := v[0], v[0] // row s.row0 holds lane 0
	for r := s.row0 + 1; r+1 < len(p) && p[r] < hi; r++ {
		if p[r+1] == p[r] {
			continue
		}
		if x := v[r-s.row0]; x < b0 {
			b0 = x
		} else if x > b1 {
			b1 = x
		}
	}
	return b0, b1
}

// rowUniform reports whether int node n has one value in all the lanes
// of a row in position space: it reads no lane, only invariants and
// the row's variables (spread over its lanes).
func (n *vnode) rowUniform() bool {
	switch n.op {
	case vInv:
		return true
	case vAdd, vSub, vMul:
		return n.a.rowUniform() && n.b.rowUniform()
	}
	return false
}

// dotBaseInside reports whether base + k, for each k in lo..hi-1 (lo <
// hi), is inside an array of n elements for every base of b (times
// scale: see scaledBase).
func (s *vstate) dotBaseInside(fr *frame, f vdotFactor, b *vval, scale, lo, hi, p0 int64, n int) bool {
	var b0, b1 int64
	switch {
	case b.scalar:
		b0, b1 = b.i, b.i
	case f.facts:
		if f.run > 0 && s.dotIn[f.run-1] == 1 {
			nestSaw("range dot bounds by facts")
			return true
		}
		if f.run == 0 || s.dotIn[f.run-1] == 0 {
			b0, b1, ok := f.base.interval(fr, p0, p0+int64(n))
			in := ok && inside(b0, b1, lo, hi, len(f.cl.reals))
			if f.run > 0 {
				nestSaw("range dot bounds decided for the run")
				s.dotIn[f.run-1] = -1
				if in {
					s.dotIn[f.run-1] = 1
				}
			}
			if in {
				nestSaw("range dot bounds by facts")
				return true
			}
		}
		fallthrough
	default:
		if b.rows {
			b0, b1 = s.rowsMinMax(b.iv, p0, n)
		} else {
			ib := s.ints(f.base, b, n)
			if len(ib) == 0 {
				return true
			}
			b0, b1 = minMax(ib)
		}
		if scale != 1 {
			if !small(b0) || !small(b1) || !small(scale) {
				return false
			}
			b0, b1 = min(b0*scale, b1*scale), max(b0*scale, b1*scale)
		}
	}
	return inside(b0, b1, lo, hi, len(f.cl.reals))
}

// inside reports whether b + k is inside an array of n elements for
// every b in b0..b1 and k in lo..hi-1 (lo < hi).
func inside(b0, b1, lo, hi int64, n int) bool {
	return small(b0) && small(b1) && small(lo) && small(hi) && b0+lo >= 0 && b1+hi-1 < int64(n)
}

// minMax is the least and the greatest of v (not empty), in one pass.
func minMax(v []int64) (int64, int64) {
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// scaledBase evaluates a range dot's base for a batch. A base that is a
// vector of the lanes times a scalar (a row's offset j*L in a dense
// matrix) comes back as the vector and the scalar, so that the dot
// scales each lane's index where it reads rather than in a pass of its
// own; any other base as its value and scale 1.
func (s *vstate) scaledBase(fr *frame, nd *vnode, p0 int64, n int) (*vval, int64, bool) {
	if nd.op != vMul || nd.real {
		v, ok := s.eval(fr, nd, p0, n)
		return v, 1, ok
	}
	a, ok1 := s.eval(fr, nd.a, p0, n)
	b, ok2 := s.eval(fr, nd.b, p0, n)
	if !ok1 || !ok2 {
		return nil, 1, false
	}
	if b.scalar && !a.scalar && !a.aff {
		nestSaw("range dot base scaled where read")
		return a, b.i, true
	}
	if a.scalar && !b.scalar && !b.aff {
		nestSaw("range dot base scaled where read")
		return b, a.i, true
	}
	return s.put(nd, s.intArith(nd, a, b, n)), 1, true
}

// unscale is base (a vector from scaledBase) times scale as node nd's
// value, or base itself when scale is 1.
func (s *vstate) unscale(nd *vnode, base *vval, scale int64, n int) *vval {
	if scale == 1 {
		return base
	}
	buf := s.ibuf(nd, n)
	for l, x := range base.iv[:n] {
		buf[l] = x * scale
	}
	return s.put(nd, vval{iv: buf})
}

// Where the lanes' rows are long, the lane loops (sumLanes, dotOne,
// dotTwo) run their k lanes' chains of adds on lanes a stride apart:
// lanes r, r+g, ..., r+(k-1)g with g = n/k (strideLanes), not k adjacent
// lanes. Adjacent lanes read adjacent rows where the lanes are a range
// of keys (a dense matrix's rows): k adjacent rows are k streams a row
// long, which the hardware prefetcher learns anew every k rows, where
// rows a stride apart are k streams of g rows each. Each lane's sum is
// the same chain, so the bits do not change. The strided loop calls
// sum8 or dot4 per k lanes (in place, the register allocator spills the
// loop's counter), which pays where the k rows hold streamGroup values
// or more; shorter rows (SDDMM's rank-8 dots) keep adjacent lanes and
// the loop in place.
//
// Measured: a go test in engine timing sumLanes and dotOne (x shared)
// before and after, over a dense matrix's rows in batches of 256 lanes,
// CPU time of the thread, 15 rounds alternating, min and median ms:
//
//	rows x values           sumLanes before / after    dotOne before / after
//	4884 x 250 (9.8 MB)     0.34 0.56 / 0.23 0.28      0.72 1.06 / 0.41 0.44
//	39072 x 250 (78 MB)     7.34 7.72 / 4.46 5.01      10.6 11.8 / 4.29 4.67
//	19078 x 64              0.84 1.30 / 0.25 0.29      1.23 1.70 / 0.39 0.47
//	38156 x 32              0.45 0.94 / 0.28 0.46      0.44 0.65 / 0.45 0.61
//
// (dotOne's 4 x 32 values stay adjacent; strided, an earlier build took
// 0.55 0.77 there.)

// streamGroup is the least number of values, k rows of m, that k lanes
// read a stride apart.
const streamGroup = 256

// strideLanes is g for n lanes of rows of m values run k at a time: the
// lanes r + j*g for r < g and j < k run together, the last n - k*g
// lanes as adjacent lanes; 0 where the rows are short or the lanes too
// few to stride.
func strideLanes(n, k int, m int64) int {
	if int64(k)*m < streamGroup || n < 2*k {
		return 0
	}
	nestSaw("range dot lanes a stride apart")
	return n / k
}

// sumLanes is each lane l's sum over q < m of bs[bb[l]*scale+lo+q], in
// q's order from 0: the loop per lane, the same bits, eight lanes' chains
// of adds at a time (the adds' throughput, not their latency).
func sumLanes(bs []float64, bb []int64, scale, lo, m int64, out []float64) {
	g := strideLanes(len(out), 8, m)
	bb = bb[:len(out)]
	row := func(l int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(bs[bb[l]*scale+lo:][:m])) }
	for r := range g {
		a0, a1, a2, a3, a4, a5, a6, a7 := sum8(row(r), row(r+g), row(r+2*g), row(r+3*g), row(r+4*g), row(r+5*g), row(r+6*g), row(r+7*g), m)
		out[r], out[r+g], out[r+2*g], out[r+3*g] = a0, a1, a2, a3
		out[r+4*g], out[r+5*g], out[r+6*g], out[r+7*g] = a4, a5, a6, a7
	}
	sumAdjacent(bs, bb[8*g:], scale, lo, m, out[8*g:])
}

// sumAdjacent is sumLanes with adjacent lanes together.
func sumAdjacent(bs []float64, bb []int64, scale, lo, m int64, out []float64) {
	l := 0
	for ; l+8 <= len(out); l += 8 {
		var y [8][]float64
		for j := range y {
			y[j] = bs[bb[l+j]*scale+lo:][:m]
		}
		y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1][:len(y[0])], y[2][:len(y[0])], y[3][:len(y[0])], y[4][:len(y[0])], y[5][:len(y[0])], y[6][:len(y[0])], y[7][:len(y[0])]
		var a0, a1, a2, a3, a4, a5, a6, a7 float64
		for q := range y0 {
			a0 += y0[q]
			a1 += y1[q]
			a2 += y2[q]
			a3 += y3[q]
			a4 += y4[q]
			a5 += y5[q]
			a6 += y6[q]
			a7 += y7[q]
		}
		out[l], out[l+1], out[l+2], out[l+3] = a0, a1, a2, a3
		out[l+4], out[l+5], out[l+6], out[l+7] = a4, a5, a6, a7
	}
	for ; l < len(out); l++ {
		acc := 0.0
		for _, x := range bs[bb[l]*scale+lo:][:m] {
			acc += x
		}
		out[l] = acc
	}
}

// sum8 is the sums of the m values at each of y0..y7 (rows the caller
// has sliced), each in order from 0.0. Raw pointers keep the call's
// arguments and results in registers; inlined into its caller, the
// loop's counter was spilled.
func sum8(y0, y1, y2, y3, y4, y5, y6, y7 unsafe.Pointer, m int64) (a0, a1, a2, a3, a4, a5, a6, a7 float64) {
	for q := range m {
		a0 += at[float64](y0, q)
		a1 += at[float64](y1, q)
		a2 += at[float64](y2, q)
		a3 += at[float64](y3, q)
		a4 += at[float64](y4, q)
		a5 += at[float64](y5, q)
		a6 += at[float64](y6, q)
		a7 += at[float64](y7, q)
	}
	return
}

// dot4 is the dots of the m values at x0 and y0, ..., x3 and y3 (as
// sum8's rows), each in order from 0.0.
func dot4(x0, x1, x2, x3, y0, y1, y2, y3 unsafe.Pointer, m int64) (a0, a1, a2, a3 float64) {
	for q := range m {
		a0 += float64(at[float64](x0, q) * at[float64](y0, q))
		a1 += float64(at[float64](x1, q) * at[float64](y1, q))
		a2 += float64(at[float64](x2, q) * at[float64](y2, q))
		a3 += float64(at[float64](x3, q) * at[float64](y3, q))
	}
	return
}

// dotOne is dotTwo with the first reads the same m values x for every
// lane, the second's bases bb times scale.
func dotOne(x, bs []float64, bb []int64, scale, lo int64, by, out []float64) {
	m := int64(len(x))
	g := strideLanes(len(out), 4, m)
	bb = bb[:len(out)]
	xp := unsafe.Pointer(unsafe.SliceData(x))
	row := func(l int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(bs[bb[l]*scale+lo:][:m])) }
	for r := range g {
		a0, a1, a2, a3 := dot4(xp, xp, xp, xp, row(r), row(r+g), row(r+2*g), row(r+3*g), m)
		out[r], out[r+g], out[r+2*g], out[r+3*g] = a0, a1, a2, a3
	}
	scaleBy(out[:4*g], by[:min(len(by), 4*g)])
	if by != nil {
		by = by[4*g:]
	}
	dotOneAdjacent(x, bs, bb[4*g:], scale, lo, by, out[4*g:])
}

// dotOneAdjacent is dotOne with adjacent lanes together.
func dotOneAdjacent(x, bs []float64, bb []int64, scale, lo int64, by, out []float64) {
	m := int64(len(x))
	if by != nil {
		by = by[:len(out)]
	}
	l := dotColumnsAsm(x, bs, bb, scale, lo, by, out)
	for ; l+4 <= len(out); l += 4 {
		y0, y1, y2, y3 := bs[bb[l]*scale+lo:][:m], bs[bb[l+1]*scale+lo:][:m], bs[bb[l+2]*scale+lo:][:m], bs[bb[l+3]*scale+lo:][:m]
		y0, y1, y2, y3 = y0[:len(x)], y1[:len(x)], y2[:len(x)], y3[:len(x)]
		var a0, a1, a2, a3 float64
		for q, xq := range x {
			a0 += float64(xq * y0[q])
			a1 += float64(xq * y1[q])
			a2 += float64(xq * y2[q])
			a3 += float64(xq * y3[q])
		}
		if by != nil {
			a0, a1, a2, a3 = by[l]*a0, by[l+1]*a1, by[l+2]*a2, by[l+3]*a3
		}
		out[l], out[l+1], out[l+2], out[l+3] = a0, a1, a2, a3
	}
	for ; l < len(out); l++ {
		y := bs[bb[l]*scale+lo:][:m]
		y = y[:len(x)]
		acc := 0.0
		for q, xq := range x {
			acc += float64(xq * y[q])
		}
		if by != nil {
			acc = by[l] * acc
		}
		out[l] = acc
	}
}

// dotTwo is each lane l's sum over q < m of as[ba[l]+lo+q] *
// bs[bb[l]+lo+q], in q's order, times by[l] where by is not nil.
func dotTwo(as, bs []float64, ba, bb []int64, lo, m int64, by, out []float64) {
	g := strideLanes(len(out), 4, m)
	ba, bb = ba[:len(out)], bb[:len(out)]
	x := func(l int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(as[ba[l]+lo:][:m])) }
	y := func(l int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(bs[bb[l]+lo:][:m])) }
	for r := range g {
		l1, l2, l3 := r+g, r+2*g, r+3*g
		out[r], out[l1], out[l2], out[l3] = dot4(x(r), x(l1), x(l2), x(l3), y(r), y(l1), y(l2), y(l3), m)
	}
	scaleBy(out[:4*g], by[:min(len(by), 4*g)])
	if by != nil {
		by = by[4*g:]
	}
	dotTwoAdjacent(as, bs, ba[4*g:], bb[4*g:], lo, m, by, out[4*g:])
}

// dotTwoAdjacent is dotTwo with adjacent lanes together.
func dotTwoAdjacent(as, bs []float64, ba, bb []int64, lo, m int64, by, out []float64) {
	if by != nil {
		by = by[:len(out)]
	}
	// Four lanes at a time: each lane's sum is one chain of adds in k's
	// order, and four independent chains hide the adds' latency.
	l := 0
	for ; l+4 <= len(out); l += 4 {
		x0, y0 := as[ba[l]+lo:][:m], bs[bb[l]+lo:][:m]
		x1, y1 := as[ba[l+1]+lo:][:m], bs[bb[l+1]+lo:][:m]
		x2, y2 := as[ba[l+2]+lo:][:m], bs[bb[l+2]+lo:][:m]
		x3, y3 := as[ba[l+3]+lo:][:m], bs[bb[l+3]+lo:][:m]
		y0, x1, y1, x2, y2, x3, y3 = y0[:len(x0)], x1[:len(x0)], y1[:len(x0)], x2[:len(x0)], y2[:len(x0)], x3[:len(x0)], y3[:len(x0)]
		var a0, a1, a2, a3 float64
		for q := range x0 {
			a0 += float64(x0[q] * y0[q])
			a1 += float64(x1[q] * y1[q])
			a2 += float64(x2[q] * y2[q])
			a3 += float64(x3[q] * y3[q])
		}
		if by != nil {
			a0, a1, a2, a3 = by[l]*a0, by[l+1]*a1, by[l+2]*a2, by[l+3]*a3
		}
		out[l], out[l+1], out[l+2], out[l+3] = a0, a1, a2, a3
	}
	for ; l < len(out); l++ {
		x, y := as[ba[l]+lo:][:m], bs[bb[l]+lo:][:m]
		y = y[:len(x)]
		acc := 0.0
		for q := range x {
			acc += float64(x[q] * y[q])
		}
		if by != nil {
			acc = by[l] * acc
		}
		out[l] = acc
	}
}

// laneDot is range dot nd at position p.
func (s *vstate) laneDot(nd *vnode, p int64) (float64, bool) {
	d := nd.dot
	lo, ok1 := s.laneI(d.lo, p)
	hi, ok2 := s.laneI(d.hi, p)
	if !ok1 || !ok2 {
		return 0, false
	}
	for _, t := range d.tests {
		var v [4]int64
		for i, nd := range t.v {
			var ok bool
			if v[i], ok = s.laneI(nd, p); !ok {
				return 0, false
			}
		}
		if !affineHolds(t.op, v[0], v[1], v[2], v[3], lo, hi) {
			return 0, false
		}
	}
	var b, st [3]int64
	var v [3]float64
	for i, f := range d.fs {
		var ok1, ok2 bool
		if f.cl == nil {
			v[i], ok1 = s.laneF(f.val, p)
			ok2 = true
		} else {
			b[i], ok1 = s.laneI(f.base, p)
			st[i], ok2 = s.laneI(f.stride, p)
		}
		if !ok1 || !ok2 {
			return 0, false
		}
	}
	nestSaw("range dot")
	x, ok := s.dotLane(d, lo, hi, &b, &st, &v)
	if d.by != nil && ok {
		var a float64
		if a, ok = s.laneF(d.by, p); ok {
			x = a * x
		}
	}
	return x, ok
}

// dotLane is one lane's sum over k in lo..hi-1, factor i read at
// b[i] + st[i]*k (or v[i]); false when a read leaves its array.
func (s *vstate) dotLane(d *vdot, lo, hi int64, b, st *[3]int64, v *[3]float64) (float64, bool) {
	if lo >= hi {
		return 0, true
	}
	if !small(lo) || !small(hi) {
		return 0, false
	}
	var p lprod
	views := [3]*lview{&p.a, &p.b, &p.c}
	if len(s.one) < 4 {
		s.one = make([]float64, 4)
	}
	s.one[3] = 1 // a lone factor times 1: the same value
	p.b = lview{src: s.one[3:]}
	for i, f := range d.fs {
		w := views[i]
		if f.cl == nil {
			s.one[i] = v[i]
			*w = lview{src: s.one[i : i+1]}
			continue
		}
		if !small(b[i]) || !small(st[i]) {
			return 0, false
		}
		first, last := b[i]+st[i]*lo, b[i]+st[i]*(hi-1)
		if min(first, last) < 0 || max(first, last) >= int64(len(f.cl.reals)) {
			return 0, false
		}
		*w = lview{src: f.cl.reals, k: first, stride: st[i]}
	}
	return p.dot(0, int(hi-lo)), true
}

// affineHolds reports whether a + sa*k op b + sb*k for every k in
// lo..hi-1 (none: it holds): the difference is linear in k, so its ends
// decide. Values too large to be exact fail.
func affineHolds(op ir.Op, a, sa, b, sb, lo, hi int64) bool {
	if lo >= hi {
		return true
	}
	if !small(a) || !small(b) || !small(sa) || !small(sb) || !small(lo) || !small(hi) {
		return false
	}
	d0, d1 := a+sa*lo-(b+sb*lo), a+sa*(hi-1)-(b+sb*(hi-1))
	return proven(op, min(d0, d1), max(d0, d1), 0, 0)
}
