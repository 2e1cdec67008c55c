package engine

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/storel/storel/ir"
)

// Position-space execution of two levels. When every loop in the body of
// an outer loop O is a vectorized segment loop whose window follows O's
// iteration, P(x+c):P(x+c+1) with x O's key, the windows of consecutive
// iterations are adjacent: a block of O's iterations is one run of
// positions, evaluated in full batches however short each segment is
// (CSR rows of SpMV and BATAX hold a few entries each, and a batch per
// row costs more than the row). Per-iteration values (O's variables, the
// lets between the levels) are computed per row and spread over the
// row's lanes; scalar sinks are reduced per row, in the loop's order.

// flatCap bounds the positions of one block: its per-row values stay in
// cache, and the per-block work (checking the rows' bounds, the calls of
// the primitives) is spread over many rows. (SpMV on landmark, 1.1M
// entries: 4096 positions a block ran 2.5x the older row loop's time.)
const flatCap = 1 << 16

// flatRows bounds the rows of a block laid out row by row (rowBounds):
// its per-row memory is allocated per run.
const flatRows = 4096

// flatRange is the longest range an inner loop may have to run in
// position space: a longer one fills batches by itself, and its own
// batches keep reads at the key as slices instead of gathers (dense
// matrix x vector, 2000 columns: 8x slower in position space).
const flatRange = 64

// flatPlan is O's body run a block of rows at a time.
type flatPlan struct {
	ds    *dotScatter  // the steps are one dot-then-scatter row primitive
	inter *interleaved // or rows interleaved eight to a chunk (nestinter.go)
	steps []*nstmt
	// keyed: O's body ends in { key -> L }, a row of scalars at a variable
	// that L, the last step, fills: a batch's lanes go to their rows'
	// rows (keyedRows), in sequential mode written where they stay.
	keyed *nstmt
}

// planFlat decides whether loop o's statements can run in position space.
func (c *compiler) planFlat(o *nloop) *flatPlan {
	if o.kind == itDict {
		return nil // rows are read by position; its keys are not positions
	}
	names := map[string]bool{o.e.Vars[0]: true, o.e.Vars[1]: true}
	fp := &flatPlan{}
	inner := 0
steps:
	for s := o.stmt; s != nil; s = s.next {
		fp.steps = append(fp.steps, s)
		switch s.kind {
		case stGuard:
			if s.proof == nil {
				return nil
			}
			continue
		case stLet:
			if s.loop != nil {
				if !o.follows(s.loop, names) {
					return nil
				}
				inner++
			}
			names[s.name] = true
			continue
		case stLoop:
			if !o.follows(s.loop, names) {
				return nil
			}
			inner++
		case stScalar:
			if s.loop == nil || !o.follows(s.loop, names) {
				return nil
			}
			inner++
		case stSingle:
			if s.child != nil {
				l := s.next
				if s.child.depth != 1 || s.scattered || s.keyE.Op != ir.OpVar || l == nil || l.kind != stLoop || l.next != nil ||
					l.loop.kind != itSegment || l.loop.vec == nil || l.loop.vec.key == nil || l.loop.vec.key2 != nil || !o.follows(l.loop, names) {
					return nil
				}
				fp.keyed = s
				fp.steps[len(fp.steps)-1] = l
				inner++
				l.loop.vec.dot, l.loop.vec.scatter = nil, nil // its sink is rows, not a scalar or o's row
				break steps
			}
			if s.loop != nil {
				if !o.follows(s.loop, names) {
					return nil
				}
				inner++
			}
		default:
			return nil
		}
		if s.next != nil {
			return nil
		}
	}
	if inner == 0 {
		return nil
	}
	for i, s := range fp.steps {
		if s.loop != nil && s.loop.kind == itRange {
			s.loop.vec.dot = c.rangeDotOf(o, s.loop, i)
			if d := s.loop.vec.dot; d != nil && d.in != nil {
				// The row's guards are the dot's window on the index it
				// reads: lane by lane only where the dot cannot run.
				for _, g := range s.loop.vec.guards {
					if g.perLane {
						s.loop.sayGuard(g, "the segmented dot's window on the index it reads, one compare a term in the dot's loop (lane by lane in the batches where the dot cannot run)")
					}
				}
			}
		}
		if s.postVec != nil && !rowLetSteps(s.postVec, fp.steps[:i]) {
			s.postVec = nil
		}
		if s.valVec != nil && !rowLetSteps(s.valVec, fp.steps[:i]) {
			s.valVec, s.keyVec = nil, nil
		}
		if s.letVec != nil && !rowLetSteps(s.letVec, fp.steps[:i]) {
			s.letVec = nil
		}
		if s.loop != nil && s.loop.vec.scatter != nil && s.loop.vec.scatter.t != nil {
			s.loop.vec.scatter.step = rowLetStep(s.loop.vec.scatter.t, fp.steps[:i])
		}
	}
	if fp.keyed == nil {
		fp.ds = c.dotScatterOf(o, fp)
		fp.inter = c.interleavedOf(o, fp)
		c.rowScaleOf(o, fp, names)
	}
	return fp
}

// rowScale is the factors f of a row's value ((f[0]*dot)*f[1])*f[2], dot
// the row's segmented dot and every factor invariant in the rows: the
// dot primitive, which scales each row's sum by three factors, adds the
// values into the result in place (directDot) instead of the sums into
// the rows' values, then their products in batches, then the values
// into the result. With no factor it is the plain sum at the row's key.
type rowScale struct {
	f []realFn
	e []*ir.Expr // (for Explain)
}

// rowScaleOf sets rowDot on the step of fp whose loop's dot gives the
// rows' values when the last step is a real singleton at o's key whose
// value is that dot times invariant factors: the singleton's own sum
// ({i -> a * sum ...}), or the let just before it (let t = sum ... in
// {i -> a * t}), which nothing else reads. names are o's variables and
// the lets of its body (the rows' values, not invariants).
func (c *compiler) rowScaleOf(o *nloop, fp *flatPlan, names map[string]bool) {
	n := len(fp.steps)
	s := fp.steps[n-1]
	if s.kind != stSingle || s.child != nil || !o.keyIsRow(s.keyE) {
		return
	}
	invariant := func(fs []*ir.Expr) ([]realFn, bool) {
		var out []realFn
		for _, f := range fs {
			if containsLoop(f) || !safe(f) || f.Type.Depth != 0 || f.Type.Base != ir.Real {
				return nil, false
			}
			for v := range ir.FreeVars(f) {
				if names[v] {
					return nil, false
				}
			}
			out = append(out, asReal(c.expr(f)))
		}
		return out, true
	}
	var dot *nstmt
	var fs []*ir.Expr
	switch {
	case s.loop != nil && s.accF >= 0:
		f, ok := postFactors(s)
		if !ok {
			return
		}
		dot, fs = s, f
	case s.loop == nil && s.valE != nil && n >= 2:
		let := fp.steps[n-2]
		if let.kind != stLet || let.loop == nil || let.accF < 0 || !let.realLet {
			return
		}
		f, ok := postFactors(let)
		if !ok {
			return
		}
		g, ok := scaleChain(s.valE, func(x *ir.Expr) bool { return x.Op == ir.OpVar && x.Name == let.name })
		if !ok {
			return
		}
		dot, fs = let, append(f, g...)
	default:
		return
	}
	if dot.loop.vec.dot == nil || len(fs) > 3 {
		return
	}
	if f, ok := invariant(fs); ok {
		dot.rowDot = &rowScale{f: f, e: fs}
	}
}

// postFactors returns the factors of statement s's post, the factors it
// multiplies its sum by, in order (none when it has no post); false when
// the post is not such a chain of products.
func postFactors(s *nstmt) ([]*ir.Expr, bool) {
	if !s.hasPost() {
		return nil, true
	}
	if s.post == nil {
		return nil, false
	}
	sum := fmt.Sprintf("sum·%d", s.accF)
	return scaleChain(s.postE, func(x *ir.Expr) bool { return x.Op == ir.OpVar && x.Name == sum })
}

// scaleChain returns the factors f1..fn of e = ((t * f1) * f2) ... * fn,
// each product in either order (IEEE products commute), t an expression
// is accepts; false for another e.
func scaleChain(e *ir.Expr, is func(*ir.Expr) bool) ([]*ir.Expr, bool) {
	if is(e) {
		return nil, true
	}
	if e.Op != ir.OpMul || len(e.Args) != 2 || e.Type.Depth != 0 || e.Type.Base != ir.Real {
		return nil, false
	}
	for k := range 2 {
		if fs, ok := scaleChain(e.Args[k], is); ok {
			return append(fs, e.Args[1-k]), true
		}
	}
	return nil, false
}

// directDot adds the values of rows r0..r1-1 (step s's rowDot) into b at
// the rows' keys by the dot primitive; false when it cannot (the steps
// then run as they are).
func (o *nloop) directDot(fr *frame, st *flatState, s *nstmt, r0, r1 int64, b *builder) bool {
	d := s.loop.vec.dot
	if !b.spec.dense || !b.spec.real || b.ws != nil || r0 < 0 || int64(len(b.reals)) < r1 ||
		(len(s.rowDot.f) > 0 && st.keyedUp()) {
		return false
	}
	sc := [3]float64{1, 1, 1}
	for k, f := range s.rowDot.f {
		if sc[k] = f(fr); fr.err != nil {
			return true
		}
	}
	return d.rowsScaled(fr, s.loop, b.reals[r0:r1], r0, r1, sc, false)
}

// rowLetStep returns the step among steps whose real let is the whole of
// row factor t (t4 of let t4 = x(i2)), or -1.
func rowLetStep(t *vnode, steps []*nstmt) int {
	if t.op != vInv || !t.real || len(t.fv) != 1 || !t.fv[t.text] {
		return -1
	}
	for j := len(steps) - 1; j >= 0; j-- {
		if s := steps[j]; s.kind == stLet && s.name == t.text {
			if !s.realLet {
				return -1
			}
			return j
		}
	}
	return -1
}

// rowLetSteps binds the vRowLet nodes of v to the steps before it that
// set their lets; false when one is not set by such a step.
func rowLetSteps(v *vloop, steps []*nstmt) bool {
	for _, nd := range v.all {
		if nd.op != vRowLet {
			continue
		}
		nd.step = -1
		for j, s := range steps {
			if s.kind == stLet && s.name == nd.text && s.realLet == nd.real {
				nd.step = j
			}
		}
		if nd.step < 0 {
			return false
		}
	}
	return true
}

// dotScatter is BATAX's row: let t = a * (a segmented dot) in a scatter
// of the same rows scaled by t. fit.go's row loops (assembly on amd64)
// run both halves of a row in one pass.
type dotScatter struct {
	dot, scat *nloop
	a         realFn // nil: 1
}

// dotThenScatter recognizes the steps [guards..., let t = dot, scatter
// by t] of a row: the let summing over the row, the loop scattering it,
// the name of the scale the scatter reads and the factor a of that scale
// (nil: 1) that does not depend on the row, written in the let (let t =
// a * dot) or in a let of its own after it (let t = dot in let u = a * t,
// scatter by u). How the two loops walk the row is the caller's to check.
func dotThenScatter(o *nloop, fp *flatPlan) (let, loop *nstmt, scaled string, a *ir.Expr, ok bool) {
	var scale *nstmt
	for _, s := range fp.steps {
		switch {
		case s.kind == stGuard:
		case s.kind == stLet && let == nil && s.loop != nil:
			let = s
		case s.kind == stLet && let != nil && scale == nil && loop == nil && s.letOf != nil:
			scale = s
		case s.kind == stLoop && let != nil && loop == nil:
			loop = s
		default:
			return nil, nil, "", nil, false
		}
	}
	if let == nil || loop == nil || let.accF < 0 {
		return nil, nil, "", nil, false
	}
	scaled = let.name
	if scale != nil {
		scaled = scale.name
	}
	// factor returns a of a * t (or t * a; IEEE products commute), t the
	// variable or sum named by of, or nil.
	factor := func(v, of *ir.Expr, name string) *ir.Expr {
		if v == nil || v.Op != ir.OpMul {
			return nil
		}
		a, t := v.Args[0], v.Args[1]
		is := func(x *ir.Expr) bool { return x == of || (of == nil && x.Op == ir.OpVar && x.Name == name) }
		if !is(t) {
			a, t = t, a
		}
		if !is(t) || containsLoop(a) || !safe(a) {
			return nil
		}
		for n := range ir.FreeVars(a) {
			if n == o.e.Vars[0] || n == o.e.Vars[1] || n == let.name {
				return nil
			}
		}
		return a
	}
	switch {
	case let.post != nil && scale != nil:
		return nil, nil, "", nil, false
	case let.post != nil:
		a = factor(let.postOf, let.sumOf, "")
	case scale != nil:
		a = factor(scale.letOf, nil, let.name)
	}
	if (let.post != nil || scale != nil) && a == nil {
		return nil, nil, "", nil, false
	}
	return let, loop, scaled, a, true
}

// dotScatterOf recognizes dotThenScatter's steps over the same segments.
func (c *compiler) dotScatterOf(o *nloop, fp *flatPlan) *dotScatter {
	let, loop, scaled, a, ok := dotThenScatter(o, fp)
	if !ok {
		return nil
	}
	d, sc := let.loop.vec.dot, loop.loop.vec.scatter
	if d == nil || (d.y == nil && d.yd == nil) || sc == nil || sc.t == nil || sc.t.text != scaled || (d.x == nil) != (sc.x == nil) || (d.x != nil && d.xInt != sc.xInt) {
		return nil
	}
	s1, s2 := let.loop.seg, loop.loop.seg
	if s1.lo != s2.lo || s1.loOff != s2.loOff {
		return nil
	}
	ds := &dotScatter{dot: let.loop, scat: loop.loop}
	if a != nil {
		ds.a = asReal(c.expr(a))
	}
	loop.loop.arr.needNarrow = true
	return ds
}

// run adds rows r0..r1-1 into b, or reports false (nothing done).
func (ds *dotScatter) run(fr *frame, st *flatState, r0, r1 int64, b *builder) bool {
	if !b.spec.dense || !b.spec.real || b.ws != nil {
		return false
	}
	d, sc := ds.dot.vec.dot, ds.scat.vec.scatter
	sb := ds.dot.seg
	p := sb.lo.ints[r0+sb.loOff : r1+sb.loOff+1]
	q0, q1 := p[0], p[len(p)-1]
	for _, l := range []*nloop{ds.dot, ds.scat} {
		s := fr.vstate(l.vec)
		l.vec.decide(fr, s, q0, q1)
		for _, skip := range s.skip {
			if !skip {
				return false
			}
		}
	}
	idx1, idx2 := ds.dot.arr, ds.scat.arr
	b.holdKeysOf(idx2)
	y, ok := d.yReals(fr)
	if !ok || !idx1.fits(len(y)) || !idx2.fits(len(b.reals)) || q1 > idx2.n ||
		(d.x != nil && (q1 > d.x.n || q1 > sc.x.n)) {
		return false
	}
	a := 1.0
	if ds.a != nil {
		if a = ds.a(fr); fr.err != nil {
			return true
		}
	}
	h, l, out := p[1:], p[0], b.reals
	var done int
	switch {
	case d.x == nil:
		done = csrGatherScatter(out, h, l, idx1.ints, y, idx1.n, h, l, idx2.ints, idx2.n, a, 1, 1)
	case d.xInt:
		k, ok := csrDotScatterAsm(out, h, l, idx1.ints, idx1.narrow, d.x.ints, y, idx1.n, h, l, idx2.ints, idx2.narrow, sc.x.ints, idx2.n, a, 1, 1)
		if !ok {
			k = csrDotScatter(out, h, l, idx1.ints, d.x.ints, y, idx1.n, h, l, idx2.ints, sc.x.ints, idx2.n, a, 1, 1)
		}
		done = k
	default:
		k, ok := csrDotScatterAsm(out, h, l, idx1.ints, idx1.narrow, d.x.reals, y, idx1.n, h, l, idx2.ints, idx2.narrow, sc.x.reals, idx2.n, a, 1, 1)
		if !ok {
			k = csrDotScatter(out, h, l, idx1.ints, d.x.reals, y, idx1.n, h, l, idx2.ints, sc.x.reals, idx2.n, a, 1, 1)
		}
		done = k
	}
	if done != len(h) {
		panic("engine: dot-scatter rows stopped on rows its caller checked")
	}
	nestSaw("dot")
	nestSaw("dot-scatter")
	nestSaw("scatter")
	return true
}

// follows reports whether inner l is a vectorized segment loop whose
// window is P(x+c):P(x+c+1) for o's key x, marking the invariants of l
// that depend on o's per-row values (names).
func (o *nloop) follows(l *nloop, names map[string]bool) bool {
	if l.vec == nil {
		return false
	}
	sb := l.seg
	l.laid = false
	switch {
	case l.kind == itDict:
		// Each row's entries are laid out as the block is (rowBounds):
		// its source may read o's variables, not the lets of o's rows.
		if l.vdict {
			return false
		}
		for v := range ir.FreeVars(l.e.Args[0]) {
			if names[v] && v != o.e.Vars[0] && v != o.e.Vars[1] {
				return false
			}
		}
		l.laid = true
	case l.kind == itRange:
		// A range whose bounds do not change from row to row is the same
		// run of keys in every row; bounds that read o's variables (a
		// triangle, a band, a row length) are computed per row as the
		// block is laid out (rowBounds), the rows' runs still adjacent.
		src := l.e.Args[0]
		l.rowRange = false
		for _, b := range src.Args[:2] {
			for v := range ir.FreeVars(b) {
				switch {
				case v == o.e.Vars[0] || v == o.e.Vars[1]:
					l.rowRange = true
				case names[v]:
					return false // a let of o's rows: not known as the block is laid out
				}
			}
		}
		if l.lift != nil && !l.rowRange {
			return false // the same keys in every row: its lanes per call cost less than positions
		}
	case sb == nil || sb.lo != sb.hi || sb.hiOff != sb.loOff+1:
		return false
	case sb.loSlot != sb.hiSlot || (sb.loSlot != o.ks && (o.kind != itRange || sb.loSlot != o.vs)):
		return false
	}
	var rowGuards []*vguard
	for _, g := range l.vec.guards {
		if rowDependent(g.a, names) || rowDependent(g.b, names) {
			rowGuards = append(rowGuards, g)
		}
	}
	if len(rowGuards) > 0 && (!l.vec.filter || l.vec.key != nil) {
		return false
	}
	if readsRowDict(l.vec, names) {
		return false
	}
	// A filter's guard that reads the row's variables holds lane by
	// lane (segmentedMasked): facts taken at loop entry do not bound it.
	for _, g := range rowGuards {
		g.perLane = true
		l.sayGuard(g, "tested per lane (it reads the enclosing row's variables)")
	}
	for _, n := range l.vec.all {
		if n.op == vInv && n.uses(names) && !n.row {
			n.row = true
			l.vec.rowNodes = append(l.vec.rowNodes, n)
		}
	}
	if l.kind == itSegment {
		l.vec.dot = dotOf(l)
		l.vec.scatter = scatterOf(l, true)
	}
	return true
}

// sayGuard makes explain say how guard g of l is tested.
func (l *nloop) sayGuard(g *vguard, how string) {
	if i := slices.Index(l.info.guards, g.text); i >= 0 {
		cond, _, _ := strings.Cut(g.text, ": ")
		g.text = cond + ": " + how
		l.info.guards[i] = g.text
	}
}

func rowDependent(n *vnode, names map[string]bool) bool {
	if n == nil {
		return false
	}
	if n.op == vInv && n.uses(names) {
		return true
	}
	return rowDependent(n.a, names) || rowDependent(n.b, names)
}

func (n *vnode) uses(names map[string]bool) bool {
	for v := range n.fv {
		if names[v] {
			return true
		}
	}
	return false
}

// flatState is one frame's memory for running o's blocks.
type flatState struct {
	vals  [][]float64 // per step: the per-row value (lets and sums)
	ivals [][]int64
	// Per step with a range loop: its bounds for this entry, and the
	// row starts of a block in lanes (row r's lanes start at r*m); with
	// bounds per row (nloop.rowRange), each row's first key in rlos and
	// its lanes from starts[r] on.
	rlo, rhi []int64
	starts   [][]int64
	rlos     [][]int64
	dots     [][]int64  // per step with a range dot: its rows as CSR bounds
	laid     []laidRows // per step over a built dictionary: its rows' entries
	keys     []int64    // the keys of a block's rows, when computed (flatKeys)
	// valsEnd: the first row whose value flatVals left to be computed
	// row by row (a batch failed a guard or a read).
	valsEnd int64
	// up, when set, gives each row the variables of the enclosing loop
	// whose iterations it belongs to (parentFlat).
	up *upRows
}

// retire readies st for another run, keeping its buffers (frameMem).
func (st *flatState) retire() {
	clear(st.rlo)
	clear(st.rhi)
	for i := range st.laid {
		d := &st.laid[i]
		st.laid[i] = laidRows{keys: kept(d.keys)[:0], ints: kept(d.ints)[:0], reals: kept(d.reals)[:0]}
	}
	*st = flatState{vals: keptEach(st.vals), ivals: keptEach(st.ivals), rlo: st.rlo, rhi: st.rhi,
		starts: keptEach(st.starts), rlos: keptEach(st.rlos), dots: keptEach(st.dots), laid: st.laid, keys: kept(st.keys)}
}

// upRows maps rows of o to the iterations of the loop around it: row r
// belongs to iteration r0+c where bounds[c] <= r < bounds[c+1].
type upRows struct {
	p      *nloop
	bounds []int64
	r0     int64
	c      int
	// single: p's singleton whose row at its key takes the rows of each
	// iteration (nil: they add into the builder p runs into).
	single *nstmt
}

// rowSink is the builder that row r, its variables set (rowVars), adds
// into: b, or the row of b that its iteration of the enclosing loop
// keys (upRows.single).
func (o *nloop) rowSink(fr *frame, st *flatState, b *builder) *builder {
	if u := st.up; u != nil && u.single != nil {
		return b.child(u.single.key(fr))
	}
	return b
}

// keys returns the keys of the rows of u's iterations, keys[c] that of
// iteration r0+c, where the singleton's key is the value p walks (the
// entries of its index array, as a CSF level's coordinates): read in
// place, no variables set and no key evaluated per row. Nil otherwise.
func (u *upRows) keys() []int64 {
	k, p := u.single.keyE, u.p
	if k == nil || k.Op != ir.OpVar || k.Name != p.e.Vars[1] || (p.kind != itSegment && p.kind != itArray) || p.vreal || p.arr.ints == nil {
		return nil
	}
	n := int64(len(u.bounds) - 1)
	if u.r0 < 0 || u.r0+n > int64(len(p.arr.ints)) {
		return nil
	}
	return p.arr.ints[u.r0 : u.r0+n]
}

// keyedUp reports whether o runs the rows of several iterations of the
// loop around it, each iteration's into its own row (upRows.single).
func (st *flatState) keyedUp() bool { return st.up != nil && st.up.single != nil }

// rowVars sets o's variables for row r, and those of the enclosing
// loop's iteration when o runs the rows of a block of them.
func (o *nloop) rowVars(fr *frame, st *flatState, r int64) {
	o.setVars(fr, r)
	u := st.up
	if u == nil {
		return
	}
	if r < u.bounds[u.c] {
		u.c = 0
	}
	for u.bounds[u.c+1] <= r {
		u.c++
	}
	u.p.setVars(fr, u.r0+int64(u.c))
}

// runFlat runs iterations lo..hi-1 of o block by block; false when the
// facts did not discharge O's guards (the caller then runs per row).
func (o *nloop) runFlat(fr *frame, lo, hi int64, b *builder) bool {
	fp := o.flat
	for _, s := range fp.steps {
		if s.kind == stGuard && fr.i[s.proof.slot] == 0 {
			return false
		}
	}
	st := fr.flat(o)
	for i, s := range fp.steps {
		if s.loop != nil && s.loop.kind == itRange && !s.loop.rowRange {
			l, h, ok := s.loop.open(fr)
			if !ok {
				return false
			}
			st.rlo[i], st.rhi[i] = l, max(l, h)
			if h-l > flatRange && s.loop.vec.dot == nil {
				return false
			}
		}
	}
	// The row's keys reach the loop's last iteration: reserve them once,
	// not a block or a worker's range at a time (a private row of a
	// split grown range by range copies itself each time).
	full := hi
	if _, h, ok := o.open(fr); ok && h > full {
		full = h
	}
	for _, s := range fp.steps {
		if s.kind == stSingle && o.keyIsRow(s.keyE) && b.spec.dense && b.ws == nil {
			b.reserve(full)
		}
	}
	if fp.inter != nil && !st.keyedUp() && fp.inter.run(fr, o, lo, hi, b) {
		return true
	}
	o.flatRows(fr, lo, hi, b)
	return true
}

// flatRows runs rows lo..hi-1 of o block by block, once runFlat has
// opened its inner loops.
func (o *nloop) flatRows(fr *frame, lo, hi int64, b *builder) {
	fp, st := o.flat, fr.flat(o)
	for r := lo; r < hi; {
		r1, ok := o.block(fr, fp, st, r, hi)
		if ok && o.rowsLong(fp, st, r1-r) {
			// Rows this long run faster on their own, their reads at
			// the key affine (slices) rather than gathered: so do the
			// rest of the call's, without laying them out.
			for ; r < hi && fr.err == nil; r++ {
				o.rowVars(fr, st, r)
				o.exec(fr, o.stmt, o.rowSink(fr, st, b))
			}
			return
		}
		if !ok {
			// One row alone: too long for a block or with bounds the
			// per-row path reports.
			o.rowVars(fr, st, r)
			o.exec(fr, o.stmt, o.rowSink(fr, st, b))
			r++
		} else {
			nestSaw("flat")
			o.runBlock(fr, fp, r, r1, b)
			r = r1
		}
		if fr.err != nil {
			return
		}
	}
}

// rowMean is the mean row length from which a range loop whose bounds
// change from row to row runs its rows one at a time (BenchmarkRowRanges:
// rows of 7 ran 1.5x faster in position space, rows of about 20 1.5x
// slower).
const rowMean = 12

// rowsLong reports whether a block of n rows holds, in a range loop with
// bounds per row (laid out by block), rows of rowMean positions or more on
// average.
func (o *nloop) rowsLong(fp *flatPlan, st *flatState, n int64) bool {
	for i, s := range fp.steps {
		if l := s.loop; l != nil && (l.rowRange || l.laid) && l.vec.dot == nil {
			if p := st.starts[i]; p[n] >= rowMean*n {
				return true
			}
		}
	}
	return false
}

// block extends a block of rows from r while every inner segment is in
// order and inside its array and the positions stay under flatCap.
func (o *nloop) block(fr *frame, fp *flatPlan, st *flatState, r, hi int64) (int64, bool) {
	for i, s := range fp.steps {
		if s.loop == nil {
			continue
		}
		if s.loop.rowRange || s.loop.laid {
			hi = o.rowBounds(fr, st, i, s.loop, r, hi)
			continue
		}
		if s.loop.kind == itRange {
			if m := st.rhi[i] - st.rlo[i]; m > 0 {
				hi = min(hi, r+flatCap/m)
			}
			continue
		}
		sb := s.loop.seg
		hi = min(hi, segRows(sb.lo, r+sb.loOff, hi+sb.loOff, sb.arr.n)-sb.loOff)
	}
	return hi, hi > r
}

// rowBounds lays out rows r..hi-1 of inner loop l (step i): a range
// whose bounds change from row to row (each row's first key), or a
// built dictionary's rows (their entries one after another, laidRows);
// and the start of each row's lanes. It returns the first row past the
// block: before a row longer than flatRange (which runs alone, its own
// batches reading slices) or whose bounds fail (the per-row path
// reports it), and at flatCap positions.
func (o *nloop) rowBounds(fr *frame, st *flatState, i int, l *nloop, r, hi int64) int64 {
	p := grow(&st.starts[i], int(min(hi-r, flatRows))+1)[:1]
	los := grow(&st.rlos[i], cap(p))[:0]
	d := &st.laid[i]
	d.reset()
	p[0] = 0
	end := r
	for ; end < hi; end++ {
		o.rowVars(fr, st, end)
		lo, h, ok := l.open(fr)
		if !ok {
			fr.err = nil
			break
		}
		m := max(h-lo, 0)
		last := p[len(p)-1]
		if (m > flatRange && l.vec.dot == nil) || last+m > flatCap || len(p) == cap(p) {
			break
		}
		p = append(p, last+m)
		if l.laid {
			d.add(fr.d[l.dslot], int(m), l.vs >= 0, l.vreal)
		} else {
			los = append(los, lo)
		}
	}
	st.starts[i], st.rlos[i] = p, los
	return end
}

// segRows returns the first k in k0..k1 at which the segments p[k]:p[k+1]
// of the positions array c from k0 on stop being in order, inside 0..n
// and under flatCap positions in all. Where the facts of c (its values
// never decrease and lie in 0..n) put every segment in order and inside,
// only the flatCap bound is searched for, without a pass over the rows.
func segRows(c *cell, k0, k1, n int64) int64 {
	p := c.ints
	if k0 < 0 || k0 >= int64(len(p)) {
		return k0
	}
	k1 = min(k1, int64(len(p))-1)
	base := p[k0]
	if base < 0 {
		return k0
	}
	if c.nondecr && c.imin >= 0 && c.imax <= n {
		nestSaw("segments in order by facts")
		// p[k+1]-base grows with k: the first k past flatCap.
		return k0 + int64(sort.Search(int(k1-k0), func(j int) bool { return p[k0+int64(j)+1]-base > flatCap }))
	}
	k := k0
	for ; k < k1; k++ {
		e := p[k+1]
		if e < p[k] || e > n || e-base > flatCap {
			break
		}
	}
	return k
}

// runBlock runs rows r0..r1-1, step by step.
func (o *nloop) runBlock(fr *frame, fp *flatPlan, r0, r1 int64, b *builder) {
	st := fr.flat(o)
	if fp.ds != nil && !st.keyedUp() && fp.ds.run(fr, st, r0, r1, b) {
		return
	}
	rows := int(r1 - r0)
	setRow := func(r int64, upto int) {
		o.rowVars(fr, st, r)
		for i, s := range fp.steps[:upto] {
			if s.kind == stLet {
				if s.realLet {
					fr.f[s.slot()] = st.vals[i][r-r0]
				} else {
					fr.i[s.slot()] = st.ivals[i][r-r0]
				}
			}
		}
	}
	for i, s := range fp.steps {
		switch s.kind {
		case stGuard:
		case stLet:
			if s.loop == nil {
				vals, ivals := grow(&st.vals[i], rows), grow(&st.ivals[i], rows)
				from := r0
				if s.letVec != nil {
					from = o.flatLet(fr, st, s, r0, r1, vals, ivals)
				}
				for r := from; r < r1; r++ {
					setRow(r, i)
					s.set(fr)
					if fr.err != nil {
						return
					}
					if s.realLet {
						vals[r-r0] = fr.f[s.slot()]
					} else {
						ivals[r-r0] = fr.i[s.slot()]
					}
				}
				continue
			}
			if s.rowDot != nil && o.directDot(fr, st, s, r0, r1, b) {
				return // with the singleton after it, the let's one reader
			}
			o.flatSums(fr, st, fp, i, s.loop, r0, r1, setRow)
			if !o.flatPost(fr, st, s, i, r0, r1, setRow) {
				return
			}
		case stScalar:
			// Each row's value into the sink's accumulator, in row order.
			o.flatSums(fr, st, fp, i, s.loop, r0, r1, setRow)
			if !o.flatPost(fr, st, s, i, r0, r1, setRow) {
				return
			}
			if o.sink.accF >= 0 {
				acc := fr.f[o.sink.accF]
				for _, x := range st.vals[i][:rows] {
					acc += x
				}
				fr.f[o.sink.accF] = acc
			} else {
				acc := fr.i[o.sink.accI]
				for _, x := range st.ivals[i][:rows] {
					acc += x
				}
				fr.i[o.sink.accI] = acc
			}
		case stSingle:
			if s.loop != nil {
				if s.rowDot != nil && o.directDot(fr, st, s, r0, r1, b) {
					continue // row r's value added at key r in place
				}
				o.flatSums(fr, st, fp, i, s.loop, r0, r1, setRow)
				if !o.flatPost(fr, st, s, i, r0, r1, setRow) {
					return
				}
			} else if s.valVec != nil {
				o.flatVals(fr, st, s, i, r0, r1)
			}
			if s.summed() {
				if o.keyIsRow(s.keyE) && b.spec.dense && b.spec.real && b.ws == nil && (s.loop != nil || st.valsEnd == r1) {
					// Row r's value goes to key r: one pass, no call per row.
					b.reserve(r1)
					if int64(len(b.reals)) >= r1 && r0 >= 0 {
						out := b.reals[r0:r1]
						for r, x := range st.vals[i][:len(out)] {
							out[r] += x
						}
						continue
					}
				}
			}
			// The rows' keys over the whole block in full batches, whatever
			// iterations of the loop around the rows belong to.
			keys, kend := o.flatKeys(fr, st, s, i, r0, r1)
			if u := st.up; st.keyedUp() {
				// The rows of each iteration of the loop around, into
				// the row at its key: appended where they stay while the
				// keys come in order, else row by row.
				setRow(r0, i)
				appended, lim := true, min(r1, kend)
				ukeys, nkeys := u.keys(), o.keptKeys(s, r0, kend)
				if ukeys != nil {
					nestSaw("row keys read in place")
				}
				for c, g0 := u.c, r0; g0 < r1; {
					if g0 < lim {
						// The rows from c on that start before lim into
						// the sink together (the first and last maybe in
						// part).
						var nk []int32
						if nkeys != nil {
							nk = nkeys[g0-r0:]
						}
						if n := b.appendRows(u.bounds, c, g0, lim, keys[g0-r0:], nk, st.vals[i][g0-r0:], ukeys, func(c int) int64 {
							u.p.setVars(fr, u.r0+int64(c))
							return u.single.key(fr)
						}); n > c {
							c = n
							if g0 = min(lim, u.bounds[c]); g0 < u.bounds[c] {
								c-- // row c-1 goes on past lim
							}
							continue
						}
					}
					g1 := min(r1, u.bounds[c+1])
					if g1 > g0 {
						appended = false
						setRow(g0, i)
						if !o.addRows(fr, st, s, i, r0, g0, g1, keys, kend, b.child(u.single.key(fr)), setRow) {
							return
						}
					}
					g0 = g1
					c++
				}
				if appended && u.bounds[u.c+1] < r1 {
					// Rows of one iteration are in order whatever the layout.
					nestSaw("appended")
				}
				continue
			}
			if !o.addRows(fr, st, s, i, r0, r0, r1, keys, kend, b, setRow) {
				return
			}
		case stLoop:
			if sc := s.loop.vec.scatter; sc != nil && sc.rows(fr, s.loop, st, fp, i, r0, r1, setRow, b) {
				continue
			}
			if d, acc := s.loop.vec.dot, s.loop.sink.accF; d != nil && acc >= 0 && acc == o.sink.accF {
				// The rows' terms add into o's own scalar: the rows' sums
				// by the primitive, then added in row order.
				out := grow(&st.vals[i], rows)
				if d.rows(fr, s.loop, out, r0, r1) {
					a := fr.f[acc]
					for _, x := range out {
						a += x
					}
					fr.f[acc] = a
					continue
				}
				clear(out)
			}
			o.flatRun(fr, st, fp, i, s.loop, r0, r1, setRow, b, false)
		}
		if fr.err != nil {
			return
		}
	}
}

// keptKeys returns the int32 copy of the keys flatKeys read in place for
// rows r0..kend-1 (step s's key is the value o walks), where storage
// knows they increase within every segment of o's positions array and
// lie in 0..narrowKeyLimit (appendRows then reads none of them); nil
// otherwise.
func (o *nloop) keptKeys(s *nstmt, r0, kend int64) []int32 {
	kv, sb := s.keyVec, o.seg
	if kv == nil || kv.key.op != vVal || sb == nil || kv.key.cl != sb.arr || kend <= r0 {
		return nil
	}
	a := sb.arr
	if len(a.narrow) != len(a.ints) || a.imin < 0 || a.imax > narrowKeyLimit || a.array == nil || sb.lo.array == nil ||
		sb.lo != sb.hi || sb.hiOff != sb.loOff+1 || sb.loSlot != sb.hiSlot || !a.array.IncreasesWithin(sb.lo.array) {
		return nil
	}
	return a.narrow[r0:kend]
}

// addRows adds rows g0..g1-1 of a block from r0 (step i, singleton s,
// their sums computed, the keys of rows r0..kend-1 in keys) into b;
// false on an error.
func (o *nloop) addRows(fr *frame, st *flatState, s *nstmt, i int, r0, g0, g1 int64, keys []int64, kend int64, b *builder, setRow func(int64, int)) bool {
	to := g1
	if s.loop == nil {
		to = min(g1, st.valsEnd) // the values computed in batches
	}
	from := g0
	if e := min(to, kend); e > g0 && b.spec.real {
		if s.keyVec.key.op == vVal && b.spec.dense {
			b.holdKeysOf(s.keyVec.key.cl)
		}
		addReals(b, keys[g0-r0:e-r0], st.vals[i][g0-r0:e-r0])
		from = e
	}
	for r := from; r < g1; r++ {
		setRow(r, i)
		k := s.key(fr)
		if fr.err != nil {
			return false
		}
		switch {
		case s.loop != nil && s.accF >= 0, s.valVec != nil && r < to:
			b.addReal(k, st.vals[i][r-r0])
		case s.loop != nil && b.spec.real:
			b.addReal(k, float64(st.ivals[i][r-r0]))
		case s.loop != nil:
			b.addInt(k, st.ivals[i][r-r0])
		default:
			s.addVal(fr, b, k)
		}
	}
	return fr.err == nil
}

// summed reports whether singleton s's rows' values, real, are in its
// step's vals once computed (flatSums and flatPost, or flatVals).
func (s *nstmt) summed() bool { return s.loop != nil && s.accF >= 0 || s.valVec != nil }

// flatVals computes the loop-free value of singleton s for rows r0..r1-1
// of step i into st.vals[i], over the rows as lanes a batch at a time,
// up to st.valsEnd: r1, or the first row of a batch that failed a guard
// or a read (those rows then run row by row, key and value in turn, so
// errors come in row order).
func (o *nloop) flatVals(fr *frame, st *flatState, s *nstmt, i int, r0, r1 int64) {
	out := grow(&st.vals[i], int(r1-r0))
	st.valsEnd = rowBatches(fr, st, s.valVec, r0, r1, out, nil, "values")
}

// flatLet computes loop-free let s for rows r0..r1-1 into vals (a real
// let) or ivals over the rows as lanes, a batch at a time, and returns
// the first row not done: r1, or the first row of a batch that failed a
// guard or a read (from there the rows run one by one, so errors come in
// row order).
func (o *nloop) flatLet(fr *frame, st *flatState, s *nstmt, r0, r1 int64, vals []float64, ivals []int64) int64 {
	if !s.realLet {
		vals = nil
	}
	return rowBatches(fr, st, s.letVec, r0, r1, vals, ivals, "let values")
}

// rowBatches evaluates vv over rows r0..r1-1 as lanes, a batch at a
// time, into reals (ints where reals is nil) from index 0, and returns
// the first row not done: r1, or the first row of the batch that failed
// a guard or a read. saw names each batch done (nestSaw).
func rowBatches(fr *frame, st *flatState, vv *vloop, r0, r1 int64, reals []float64, ints []int64, saw string) int64 {
	vs := fr.vstate(vv)
	vv.decide(fr, vs, r0, r1)
	vs.fl, vs.r0 = st, r0
	defer func() { vs.fl = nil }()
	for p0 := r0; p0 < r1; p0 += vbatch {
		n := int(min(r1-p0, vbatch))
		val, ok := vv.eval(fr, vs, p0, n)
		if !ok {
			nestSaw("fallback")
			return p0
		}
		if reals != nil {
			copy(reals[p0-r0:], vs.reals(vv.val, val, n))
		} else {
			copy(ints[p0-r0:], vs.ints(vv.val, val, n))
		}
		nestSaw(saw)
	}
	return r1
}

// flatPost applies the factors of statement s (a product of factors and
// its sum) to the rows' sums of step i; false on an error.
func (o *nloop) flatPost(fr *frame, st *flatState, s *nstmt, i int, r0, r1 int64, setRow func(int64, int)) bool {
	if !s.hasPost() {
		return true
	}
	done := r0
	if pv := s.postVec; pv != nil {
		// The factors over the rows as lanes, a batch at a time; a batch
		// that fails a guard or a read runs row by row below.
		vs := fr.vstate(pv)
		pv.decide(fr, vs, r0, r1)
		vs.fl, vs.r0 = st, r0
		for p0 := r0; p0 < r1; p0 += vbatch {
			n := int(min(r1-p0, vbatch))
			q := p0 - r0
			if s.post != nil {
				vs.in = st.vals[i][q:]
			} else {
				vs.inI = st.ivals[i][q:]
			}
			val, ok := pv.eval(fr, vs, p0, n)
			if !ok {
				break
			}
			if s.post != nil {
				copy(st.vals[i][q:], vs.reals(pv.val, val, n))
			} else {
				copy(st.ivals[i][q:], vs.ints(pv.val, val, n))
			}
			done = p0 + int64(n)
		}
		vs.in, vs.inI, vs.fl = nil, nil, nil
		nestSaw("post")
		if done == r1 {
			return true
		}
		nestSaw("fallback")
	}
	for r := done; r < r1; r++ {
		setRow(r, i)
		q := r - r0
		if s.post != nil {
			fr.f[s.accF] = st.vals[i][q]
			st.vals[i][q] = s.post(fr)
		} else {
			fr.i[s.accI] = st.ivals[i][q]
			st.ivals[i][q] = s.posti(fr)
		}
		if fr.err != nil {
			return false
		}
	}
	return true
}

// flatKeys returns the keys of rows r0..r1-1 of step i (singleton s,
// its rows' real values computed), over the rows as lanes a batch at a
// time, and the first row without one: r1, the first whose value is
// left to be computed row by row, or the start of a batch whose key
// failed a guard or a read (those rows then go row by row, so errors
// come in row order). Keys that are the iterated array's entries are
// its slice; others are computed into st.keys.
func (o *nloop) flatKeys(fr *frame, st *flatState, s *nstmt, i int, r0, r1 int64) ([]int64, int64) {
	kv := s.keyVec
	if s.loop == nil {
		r1 = min(r1, st.valsEnd)
	}
	if kv == nil || !s.summed() || r1 <= r0 {
		return nil, r0
	}
	vs := fr.vstate(kv)
	kv.decide(fr, vs, r0, r1)
	defer func() { vs.in = nil }()
	var keys []int64
	inPlace := kv.key.op == vVal // the iterated array's entries at the rows' positions
	if !inPlace {
		keys = grow(&st.keys, int(r1-r0))[:0]
	}
	vals := st.vals[i]
	for p0 := r0; p0 < r1; p0 += vbatch {
		n := int(min(r1-p0, vbatch))
		vs.in = vals[p0-r0:]
		var k *vval
		ok := kv.check(fr, vs, p0, n)
		if ok {
			k, ok = vs.eval(fr, kv.key, p0, n)
		}
		if !ok {
			nestSaw("fallback")
			return keys, p0
		}
		if inPlace {
			keys = kv.key.cl.ints[r0 : p0+int64(n)]
		} else {
			keys = append(keys, vs.ints(kv.key, k, n)...)
		}
	}
	nestSaw("keys")
	return keys, r1
}

// flatSums computes, for rows r0..r1-1, the scalar sum of inner loop l
// into st's values of step i.
func (o *nloop) flatSums(fr *frame, st *flatState, fp *flatPlan, i int, l *nloop, r0, r1 int64, setRow func(int64, int)) {
	rows := int(r1 - r0)
	if l.sink.accF >= 0 {
		out := grow(&st.vals[i], rows)
		if l.vec.dot != nil && l.vec.dot.rows(fr, l, out, r0, r1) {
			return
		}
		clear(out)
	} else {
		clear(grow(&st.ivals[i], rows))
	}
	o.flatRun(fr, st, fp, i, l, r0, r1, setRow, nil, true)
}

// segDot is the sum of a segment loop whose value is x(p) * y(idx(p)),
// y(idx(p)) alone (x nil) or a real x(p) alone (y and yd nil: a row's
// sum of its values, the dot with ones), p the position and idx the iterated
// array, with its guards discharged and no let: the
// segmented dot product (fit.go's row loops, in assembly on amd64) runs
// the rows of a block in one call.
type segDot struct {
	x    *cell  // read at the position (real or int)
	y    *cell  // real, read at the loop's value
	yd   *vnode // or a built dense vector read there (vDictRead, nesttemp.go)
	xInt bool
	// A range loop whose reads are at B + k (rangeDotOf): base computes
	// each row's B (xbase the value's, when written otherwise: it must
	// be the same number), idx is the index array read there, o and
	// step the outer loop and its step.
	base, xbase *vloop
	idx         *cell
	o           *nloop
	step        int
	// in: the body is a filter on the index read, idx(E) in [lo, hi)
	// for the bounds' greatest lo and least hi (invariants of the
	// entry): the terms outside add nothing (an ELL row's padding).
	in []dotBound
}

// dotBound is one bound of a range dot's filter: idx(E) >= at (lower)
// or idx(E) < at.
type dotBound struct {
	at    intFn
	lower bool
}

func dotOf(l *nloop) *segDot {
	v := l.vec
	if len(v.lets) > 0 || len(v.rowNodes) > 0 || v.key != nil || l.sink.accF < 0 {
		return nil
	}
	nd := v.val
	if d := dictDotOf(l, nd); d != nil {
		return d
	}
	if nd.op == vRead && nd.real && nd.a.op == vVal && nd.a.cl == l.arr && l.arr.info.Elem == ir.Int {
		// A pattern matrix's rows: the sum of y at the row's keys.
		l.arr.needNarrow = true
		return &segDot{y: nd.cl}
	}
	if x, xInt := posRead(nd); x != nil && !xInt {
		return &segDot{x: x.cl}
	}
	if nd.op != vMul || !nd.real {
		return nil
	}
	at := func(x, g *vnode) *segDot {
		x, xInt := posRead(x)
		if x == nil || g.op != vRead || !g.real || g.a.op != vVal || g.a.cl != l.arr || l.arr.info.Elem != ir.Int {
			return nil
		}
		return &segDot{x: x.cl, y: g.cl, xInt: xInt}
	}
	d := at(nd.a, nd.b)
	if d == nil {
		d = at(nd.b, nd.a)
	}
	if d != nil {
		l.arr.needNarrow = true
	}
	return d
}

// posRead returns the read of an array at the position that real node x
// is, and whether the array is int (read through a conversion); nil for
// another node.
func posRead(x *vnode) (*vnode, bool) {
	xInt := false
	if x.op == vToReal {
		x, xInt = x.a, true
	}
	if x.op != vRead || x.a.op != vLane || x.real == xInt {
		return nil, false
	}
	return x, xInt
}

// rows sets out to the sums of rows r0..r1-1, or reports false (out
// untouched) when a guard is not discharged or the indices do not all fit
// y (the batches then check them).
func (d *segDot) rows(fr *frame, l *nloop, out []float64, r0, r1 int64) bool {
	return d.rowsScaled(fr, l, out, r0, r1, [3]float64{1, 1, 1}, true)
}

// rowsScaled is rows with each row's sum s added as ((sc[0]*s)*sc[1])*sc[2]
// into out, or with set, set so (as if out were cleared first).
func (d *segDot) rowsScaled(fr *frame, l *nloop, out []float64, r0, r1 int64, sc [3]float64, set bool) bool {
	zero := func() {
		if set {
			clear(out)
		}
	}
	s := fr.vstate(l.vec)
	var p []int64
	idx := l.arr
	if d.base != nil {
		if p = d.rangeRows(fr, r0, r1); p == nil {
			return false
		}
		idx = d.idx
	} else {
		sb := l.seg
		p = sb.lo.ints[r0+sb.loOff : r1+sb.loOff+1]
		l.vec.decide(fr, s, p[0], p[len(p)-1])
		for _, skip := range s.skip {
			if !skip {
				return false
			}
		}
	}
	if d.y == nil && d.yd == nil {
		if !csrRowsIn(p, d.x.n) {
			return false
		}
		zero()
		csrSum(out, p, d.x.reals, sc)
		nestSaw("row sums")
		return true
	}
	y, ok := d.yReals(fr)
	if !ok || (d.x != nil && p[len(p)-1] > d.x.n) {
		return false
	}
	if d.in != nil {
		lo, hi, ok := d.filterIn(fr, idx, len(y))
		if !ok {
			return false
		}
		zero()
		if d.xInt {
			csrDotIn(out, p, idx.ints, d.x.ints, y, lo, hi, sc)
		} else {
			var x []float64
			if d.x != nil {
				x = d.x.reals
			}
			k := 0
			if len(idx.narrow) == len(idx.ints) {
				k = csrDotInAsm(out, p, idx.narrow, x, d.x == nil, y, lo, hi, sc)
			}
			csrDotIn(out[k:], p[k:], idx.ints, x, y, lo, hi, sc)
		}
		nestSaw("filtered dot")
		return true
	}
	if !idx.fits(len(y)) {
		return false
	}
	// Every row is now known to run to its end: out may be the result.
	var done int
	a, b, c := sc[0], sc[1], sc[2]
	if d.x == nil {
		zero()
		done = int(rowsGatherFit(out, p, p, 0, 1, idx.ints, idx.narrow, y, idx.n, 0, int64(len(out)), a, b, c))
	} else if n := min(idx.n, d.x.n); d.xInt {
		if k, ok := csrDotAsm(out, p[1:], p[0], idx.ints, idx.narrow, d.x.ints, y, n, a, b, c, set); ok {
			done = k
		} else {
			zero()
			done = csrDot(out, p[1:], p[0], idx.ints, d.x.ints, y, n, a, b, c)
		}
	} else if k, ok := csrDotAsm(out, p[1:], p[0], idx.ints, idx.narrow, d.x.reals, y, n, a, b, c, set); ok {
		done = k
	} else {
		zero()
		done = csrDot(out, p[1:], p[0], idx.ints, d.x.reals, y, n, a, b, c)
	}
	if done != len(out) {
		panic("engine: segmented dot stopped on rows its caller checked")
	}
	nestSaw("dot")
	return true
}

// rangeDotOf returns the segmented dot of range loop l, step i of o in
// position space, whose sum is [V(E) *] y(C(E)) with E = B + k, B read
// per row: row r's terms are positions B(r)+lo..B(r)+hi-1 of V and C,
// CSR rows of them when each row's window starts where the last one's
// ends (a row-major ELL, a dense matrix's rows); nil for another body.
func (c *compiler) rangeDotOf(o, l *nloop, i int) *segDot {
	v := l.vec
	if len(v.lets) > 0 || (len(v.guards) > 0 && !v.filter) || v.key != nil || l.sink.accF < 0 {
		return nil
	}
	body := l.e.Args[1]
	var conds []*ir.Expr
	for body.Op == ir.OpIf && len(body.Args) == 2 {
		conds = operands(ir.OpAnd, body.Args[0], conds)
		body = body.Args[1]
	}
	k := l.e.Vars[0]
	base := func(e *ir.Expr) *ir.Expr { // B of E = B + k, or nil
		switch {
		case e.Op == ir.OpVar && (e.Name == k || e.Name == l.e.Vars[1]):
			return ir.IntConst(0)
		case e.Op != ir.OpAdd:
			return nil
		}
		for j, a := range e.Args {
			b := e.Args[1-j]
			fv := ir.FreeVars(b)
			if a.Op == ir.OpVar && (a.Name == k || a.Name == l.e.Vars[1]) && !fv[k] && !fv[l.e.Vars[1]] {
				return b
			}
		}
		return nil
	}
	array := func(e *ir.Expr, elem ir.Base) bool {
		if e.Op != ir.OpLookup || e.Args[0].Op != ir.OpGlobal {
			return false
		}
		info, ok := c.schema[e.Args[0].Name]
		return ok && info.Kind == ir.ObjArray && (elem == ir.Unknown || info.Elem == elem)
	}
	d := &segDot{o: o, step: i}
	var at, xat *ir.Expr // E at the column read and at the value's
	var col *ir.Expr     // idx(E)
	for _, t := range operands(ir.OpMul, body, nil) {
		switch {
		case d.y == nil && array(t, ir.Real) && array(t.Args[1], ir.Int):
			d.y, d.idx = c.cell(t.Args[0]), c.cell(t.Args[1].Args[0])
			at, col = t.Args[1].Args[1], t.Args[1]
		case d.x == nil && array(t, ir.Unknown):
			d.x = c.cell(t.Args[0])
			d.xInt = d.x.info.Elem == ir.Int
			xat = t.Args[1]
		default:
			return nil
		}
	}
	if d.y == nil {
		return nil
	}
	for _, cond := range conds {
		b, ok := c.dotBoundOf(cond, col)
		if !ok {
			return nil
		}
		d.in = append(d.in, b)
	}
	b := base(at)
	if b == nil {
		return nil
	}
	if d.base = c.vectorizeRows(o, b, ir.RealConst(0), ""); d.base == nil {
		return nil
	}
	if xat != nil && ir.Format(xat) != ir.Format(at) {
		xb := base(xat)
		if xb == nil {
			return nil
		}
		if d.xbase = c.vectorizeRows(o, xb, ir.RealConst(0), ""); d.xbase == nil {
			return nil
		}
	}
	d.idx.needNarrow = true
	return d
}

// dotBoundOf reads cond, a comparison of col with an expression of no
// variable (a constant, a global scalar), as a bound of a range dot's
// filter; false for another condition.
func (c *compiler) dotBoundOf(cond, col *ir.Expr) (dotBound, bool) {
	if len(cond.Args) != 2 {
		return dotBound{}, false
	}
	op, x, y := cond.Op, cond.Args[0], cond.Args[1]
	if ir.Format(x) != ir.Format(col) {
		x, y, op = y, x, flipCmp(op)
	}
	if ir.Format(x) != ir.Format(col) || len(ir.FreeVars(y)) > 0 || c.typeOf(y) != ir.IntType {
		return dotBound{}, false
	}
	at := c.expr(y)
	f := at.i
	switch {
	case at.isConst:
		v := at.ci
		f = func(*frame) int64 { return v }
	case f == nil && at.slot >= 0:
		slot := at.slot
		f = func(fr *frame) int64 { return fr.i[slot] }
	case f == nil:
		return dotBound{}, false
	}
	switch op {
	case ir.OpGe:
		return dotBound{at: f, lower: true}, true
	case ir.OpGt:
		return dotBound{at: func(fr *frame) int64 { return f(fr) + 1 }, lower: true}, true
	case ir.OpLt:
		return dotBound{at: f}, true
	case ir.OpLe:
		return dotBound{at: func(fr *frame) int64 { return f(fr) + 1 }}, true
	}
	return dotBound{}, false
}

// filterIn returns the filter's window [lo, hi) of the index for this
// entry, narrowed to the index array's values; false when an index in
// it would fall outside y (the batches then report the read).
func (d *segDot) filterIn(fr *frame, idx *cell, ny int) (lo, hi int64, ok bool) {
	lo, hi = idx.imin, idx.imax+1
	if idx.imax < idx.imin {
		return 0, 0, false
	}
	for _, b := range d.in {
		v := b.at(fr)
		if fr.err != nil {
			return 0, 0, false
		}
		if b.lower {
			lo = max(lo, v)
		} else {
			hi = min(hi, v)
		}
	}
	if hi <= lo {
		return 0, 0, true // nothing passes
	}
	return lo, hi, lo >= 0 && hi <= int64(ny)
}

// csrDotIn is csrDot (a, b, c = sc) of the terms whose index lies in
// [lo, hi): the others add nothing. The caller has checked [lo, hi)
// against y. The terms go into dotFit's partial sums by position:
// independent chains of additions instead of one, and a row that passes
// whole sums as dotFit.
func csrDotIn[X number](out []float64, p []int64, idx []int64, x []X, y []float64, lo, hi int64, sc [3]float64) {
	out = out[:len(p)-1]
	var one X = 1
	for r := range out {
		ix := idx[p[r]:p[r+1]]
		xp, xmask := unsafe.Pointer(&one), int64(0)
		if x != nil {
			xp, xmask = unsafe.Pointer(unsafe.SliceData(x[p[r]:p[r+1]])), -1
		}
		out[r] += ((sc[0] * laneDotIn[X](unsafe.Pointer(unsafe.SliceData(ix)), xp, y, xmask, int64(len(ix)), lo, hi)) * sc[1]) * sc[2]
	}
}

// laneDotIn is laneDot over p = 0..n-1 of the terms whose index lies in
// [lo, hi), a window that lies in y.
func laneDotIn[X number](ip, xp unsafe.Pointer, y []float64, xmask, n, lo, hi int64) float64 {
	// y is read from lo by the offset the one unsigned test bounds:
	// keeping the index live past the test costs a spill per lane.
	yp := unsafe.Add(unsafe.Pointer(unsafe.SliceData(y)), lo*8)
	w := uint64(hi - lo)
	var s [dotLanes]float64
	add := func(lane int, p int64) {
		if d := uint64(at[int64](ip, p) - lo); d < w {
			s[lane] += float64(at[X](xp, p&xmask)) * at[float64](yp, int64(d))
		}
	}
	p := int64(0)
	for ; p+dotLanes <= n; p += dotLanes {
		add(0, p)
		add(1, p+1)
		add(2, p+2)
		add(3, p+3)
	}
	if p < n {
		add(0, p)
		if p+1 < n {
			add(1, p+1)
			if p+2 < n {
				add(2, p+2)
			}
		}
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// rangeRows lays out rows r0..r1-1 of a range dot as CSR rows: the
// first row's start, then each row's end; nil when a row's window does
// not start where the last one's ends, or a base fails (the batches then
// run the rows, and report it).
func (d *segDot) rangeRows(fr *frame, r0, r1 int64) []int64 {
	st := fr.flat(d.o)
	if st.up != nil {
		return nil // the bases read the enclosing loop's rows
	}
	bs := fr.vstate(d.base)
	p := grow(&st.dots[d.step], int(r1-r0)+1)
	var los, starts []int64
	if l := d.o.flat.steps[d.step].loop; l.rowRange {
		los, starts = st.rlos[d.step], st.starts[d.step]
	}
	lo, m := st.rlo[d.step], st.rhi[d.step]-st.rlo[d.step]
	for q0 := r0; q0 < r1; q0 += vbatch {
		n := int(min(r1-q0, vbatch))
		bv, ok := bs.eval(fr, d.base.key, q0, n)
		if !ok {
			return nil
		}
		if r := int(q0 - r0); bv.aff && !bv.scalar && d.xbase == nil && los == nil && bv.stride == m && m >= 0 {
			// Bases W*i + c over the batch's rows with W the window's
			// width (a row-major ELL): each row starts where the last
			// one ends, so the rows are laid out without their bases.
			s := bv.base + lo
			if (r == 0 && s < 0) || (r > 0 && s != p[r]) || m > (math.MaxInt64-s)/int64(n) {
				return nil
			}
			pr := p[r : r+n+1]
			for j := range pr {
				pr[j] = s
				s += m
			}
			continue
		}
		bases := bs.ints(d.base.key, bv, n)
		if d.xbase != nil {
			xs := fr.vstate(d.xbase)
			xv, ok := xs.eval(fr, d.xbase.key, q0, n)
			if !ok || !slices.Equal(bases, xs.ints(d.xbase.key, xv, n)) {
				return nil
			}
		}
		for j, b := range bases {
			r := int(q0-r0) + j
			if los != nil {
				lo, m = los[r], starts[r+1]-starts[r]
			}
			s := b + lo
			if (r == 0 && s < 0) || (r > 0 && s != p[r]) || s+m < s {
				return nil
			}
			p[r], p[r+1] = s, s+m
		}
	}
	n := d.idx.n
	if d.x != nil {
		n = min(n, d.x.n)
	}
	if p[len(p)-1] > n {
		return nil
	}
	return p
}

// flatRun evaluates inner loop l over the positions of rows r0..r1-1 in
// batches, adding into its sink (b or its accumulator) or, perRow, into
// the rows' sums of step i.
func (o *nloop) flatRun(fr *frame, st *flatState, fp *flatPlan, i int, l *nloop, r0, r1 int64, setRow func(int64, int), b *builder, perRow bool) {
	v := l.vec
	s := fr.vstate(v)
	var p []int64
	var los []int64
	if l.rowRange {
		// Lane q of row r is key los[r] + q - p[r].
		p, los = st.starts[i][:r1-r0+1], st.rlos[i][:r1-r0]
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for r, x := range los {
			if p[r+1] > p[r] {
				lo, hi = min(lo, x), max(hi, x+p[r+1]-p[r])
			}
		}
		v.decide(fr, s, lo, max(lo, hi))
	} else if l.kind == itRange {
		// Lanes are numbered from 0 across the block; lane q of row r
		// is key rlo + q - p[r].
		lo, m := st.rlo[i], st.rhi[i]-st.rlo[i]
		p = grow(&st.starts[i], int(r1-r0)+1)
		for r := range p {
			p[r] = int64(r) * m
		}
		v.decide(fr, s, lo, lo+m)
		s.rlo = lo
	} else if l.laid {
		// Lane q is position q of the rows laid out (rowBounds), whose
		// keys are in order row by row only: no guard is discharged.
		p = st.starts[i][:r1-r0+1]
		fr.d[l.dslot] = &st.laid[i]
		clear(s.skip)
		nestSaw("laid out")
	} else {
		sb := l.seg
		p = sb.lo.ints[r0+sb.loOff : r1+sb.loOff+1]
		v.decide(fr, s, p[0], p[len(p)-1])
	}
	q0, q1 := p[0], p[len(p)-1]
	s.ranged = l.kind == itRange
	s.rlos = los
	s.rows = p
	s.rowIdx = i
	s.fl = st
	s.r0 = r0
	if fp.keyed != nil {
		// The rows' keys, read once a block (a variable: no error).
		rk := grow(&s.keysOf, int(r1-r0))
		for r := r0; r < r1; r++ {
			setRow(r, i)
			rk[r-r0] = fp.keyed.key(fr)
		}
		s.keyed = fp.keyed
		nestSaw("keyed rows")
	}
	defer func() { s.rows, s.fl, s.ranged, s.rlos, s.keyed = nil, nil, false, nil, nil }()
	if b != nil && v.key != nil && v.key2 == nil && v.key.op == vVal && b.spec.dense && b.spec.real && s.keyed == nil {
		b.holdKeysOf(v.key.cl)
	}
	if len(v.rowNodes) > 0 {
		s.prepareRows(fr, v, r0, r1, i, setRow)
		if fr.err != nil {
			return
		}
	}
	row, n := 0, 0
	for p0 := q0; p0 < q1; p0 += int64(n) {
		n = int(min(q1-p0, vbatch))
		for p[row+1] <= p0 {
			row++
		}
		if s.keyed != nil && p0+int64(n) < q1 {
			n = wholeRows(p, row, p0, n)
		}
		s.row0 = row
		if !perRow {
			if v.batch(fr, s, l, p0, n, b) {
				continue
			}
		} else if v.segmented(fr, s, p0, n, st, i, l) {
			continue
		}
		// Lane by lane, as the nested loops run.
		nestSaw("fallback")
		r := row
		for q := p0; q < p0+int64(n); q++ {
			for p[r+1] <= q {
				r++
			}
			setRow(r0+int64(r), i)
			if los != nil {
				l.setVars(fr, los[r]+q-p[r])
			} else if l.kind == itRange {
				l.setVars(fr, st.rlo[i]+q-p[r])
			} else {
				l.setVars(fr, q)
			}
			if s.keyed != nil {
				k := s.keyed.key(fr)
				if fr.err != nil {
					return
				}
				v.fallback(fr, b.child(k))
			} else if perRow {
				if l.sink.accF >= 0 {
					fr.f[l.sink.accF] = st.vals[i][r]
					v.fallback(fr, nil)
					st.vals[i][r] = fr.f[l.sink.accF]
				} else {
					fr.i[l.sink.accI] = st.ivals[i][r]
					v.fallback(fr, nil)
					st.ivals[i][r] = fr.i[l.sink.accI]
				}
			} else {
				v.fallback(fr, b)
			}
			if fr.err != nil {
				return
			}
		}
	}
}

// wholeRows returns the lanes of a batch of up to n from p0, in row
// row of the row starts p, that end where a row does, so that the rows
// go into a keyed sink whole (appendRows) rather than a row in two
// parts, each appended to an open row: n where no row after row starts
// within the n lanes (a row longer than a batch).
func wholeRows(p []int64, row int, p0 int64, n int) int {
	end := p0 + int64(n)
	rest := p[row+1:]
	j := sort.Search(len(rest), func(j int) bool { return rest[j] > end })
	if j > 0 && rest[j-1] > p0 {
		return int(rest[j-1] - p0)
	}
	return n
}

// prepareRows computes the per-row values of l's row-dependent
// invariants.
func (s *vstate) prepareRows(fr *frame, v *vloop, r0, r1 int64, step int, setRow func(int64, int)) {
	rows := int(r1 - r0)
	for _, nd := range v.rowNodes {
		if nd.real {
			vals := grow(&s.rowF[nd.id], rows)
			for r := r0; r < r1; r++ {
				setRow(r, step)
				vals[r-r0] = nd.ff(fr)
			}
		} else {
			vals := grow(&s.rowI[nd.id], rows)
			for r := r0; r < r1; r++ {
				setRow(r, step)
				vals[r-r0] = nd.fi(fr)
			}
		}
	}
}

// spread fills the lanes of buf, positions p0..., with the per-row
// values vals of a row node: rows are the row starts (vstate.rows), r
// the row of the first lane.
func spread[T int64 | float64](buf, vals []T, rows []int64, r int, p0 int64) {
	for l := 0; l < len(buf); r++ {
		// Row r's lanes up to its end: one fill, no test per lane.
		e := int(min(rows[r+1]-p0, int64(len(buf))))
		v := vals[r]
		for ; l < e; l++ {
			buf[l] = v
		}
	}
}

// segmented evaluates a batch of a scalar-sink loop and adds each lane
// into its row's sum, in order.
func (v *vloop) segmented(fr *frame, s *vstate, p0 int64, n int, st *flatState, i int, l *nloop) bool {
	if !v.check(fr, s, p0, n) {
		return v.filter && v.segmentedMasked(fr, s, p0, n, st, i, l)
	}
	r, p := s.row0, s.rows
	end := p0 + int64(n)
	if l.sink.accF >= 0 {
		if av, src, idx, ok := s.gatherProduct(fr, v.val, p0, n); ok {
			sums := st.vals[i]
			for q := p0; q < end; {
				for p[r+1] <= q {
					r++
				}
				stop := min(p[r+1], end)
				acc := sums[r]
				ix := idx[q-p0 : stop-p0]
				a := av[q-p0 : stop-p0]
				a = a[:len(ix)]
				for l, k := range ix {
					acc += a[l] * src[k]
				}
				sums[r] = acc
				q = stop
			}
			return true
		}
	}
	val, ok := s.eval(fr, v.val, p0, n)
	if !ok {
		return false
	}
	if l.sink.accF >= 0 {
		segSum(st.vals[i], s.reals(v.val, val, n), p, r, p0)
	} else {
		segSum(st.ivals[i], s.ints(v.val, val, n), p, r, p0)
	}
	return true
}

// segmentedMasked is segmented for a filter loop whose guards fail in
// some lanes (an ELL row's padding, marked by an index the guard
// rejects): a failing lane adds nothing, as the interpreter does not
// evaluate its body, and the rest add in order. It reports false, having
// added nothing, when a guard, a let or a passing lane's value cannot be
// evaluated in the batch.
func (v *vloop) segmentedMasked(fr *frame, s *vstate, p0 int64, n int, st *flatState, i int, l *nloop) bool {
	pass, ok := v.passing(fr, s, p0, n)
	if !ok {
		return false
	}
	for _, lt := range v.lets {
		if _, ok := s.eval(fr, lt, p0, n); !ok {
			return false
		}
	}
	nestSaw("masked")
	r, p := s.row0, s.rows
	if l.sink.accF >= 0 {
		if av, src, idx, ok := s.gatherProductIn(fr, v.val, p0, n, pass); ok {
			sums := st.vals[i]
			for q := range pass {
				if !pass[q] {
					continue
				}
				for p[r+1] <= p0+int64(q) {
					r++
				}
				sums[r] += av[q] * src[idx[q]]
			}
			return true
		}
	}
	val, ok := s.eval(fr, v.val, p0, n)
	if !ok {
		return false
	}
	if l.sink.accF >= 0 {
		segSumIn(st.vals[i], s.reals(v.val, val, n), pass, p, r, p0)
	} else {
		segSumIn(st.ivals[i], s.ints(v.val, val, n), pass, p, r, p0)
	}
	return true
}

// segSumIn is segSum of the lanes that pass.
func segSumIn[T int64 | float64](sums, vals []T, pass []bool, p []int64, r int, p0 int64) {
	for q, x := range vals {
		if !pass[q] {
			continue
		}
		for p[r+1] <= p0+int64(q) {
			r++
		}
		sums[r] += x
	}
}

// segSum adds the lanes vals (positions p0...) into the sums of their
// rows, row r first, in order.
func segSum[T int64 | float64](sums, vals []T, p []int64, r int, p0 int64) {
	end := p0 + int64(len(vals))
	for q := p0; q < end; {
		for p[r+1] <= q {
			r++
		}
		stop := min(p[r+1], end)
		acc := sums[r]
		for _, x := range vals[q-p0 : stop-p0] {
			acc += x
		}
		sums[r] = acc
		q = stop
	}
}

func (fr *frame) flat(o *nloop) *flatState {
	for len(fr.fst) <= o.flatID {
		fr.fst = append(fr.fst, nil)
	}
	st := fr.fst[o.flatID]
	if st == nil {
		n := len(o.flat.steps)
		st = &flatState{vals: make([][]float64, n), ivals: make([][]int64, n),
			rlo: make([]int64, n), rhi: make([]int64, n), starts: make([][]int64, n), rlos: make([][]int64, n), dots: make([][]int64, n), laid: make([]laidRows, n)}
		fr.fst[o.flatID] = st
	}
	return st
}

// grow sets *s to n elements, reallocated (contents dropped) when its
// capacity is short, and returns it. Doubling stops at the longest
// buffer kept between runs (maxKeptBuffer): a block's buffer doubled past
// it would be made again every run.
func grow[T int64 | float64](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n, max(n, min(2*cap(*s), maxKeptBuffer)))
	}
	*s = (*s)[:n]
	return *s
}

// keyIsRow reports whether key k is o's iteration number itself: o's key
// (a range's value too).
func (o *nloop) keyIsRow(k *ir.Expr) bool {
	return k != nil && k.Op == ir.OpVar && (k.Name == o.e.Vars[0] || (o.kind == itRange && k.Name == o.e.Vars[1]))
}

// segScatter is a segment loop adding x(p) * t into a dense real result
// at key idx(p), t a value of the row (row set: each row scales its
// entries by its own t, BATAX's second pass, in one loop) or of the
// loops around (a row of a nested result: nestrows.go).
type segScatter struct {
	x    *cell
	xInt bool
	t    *vnode // the row's factor; nil: 1, the value x(p) alone
	// step: the position-space step whose let is the factor t (a bare
	// row let, as vRowLet binds it), its per-row values read as they are;
	// -1 evaluates t row by row.
	step int
}

func scatterOf(l *nloop, row bool) *segScatter {
	v := l.vec
	if len(v.lets) > 0 || v.key == nil || v.key2 != nil || v.key.op != vVal || v.key.cl != l.arr || l.arr.info.Elem != ir.Int {
		return nil
	}
	nd := v.val
	// factor: t, a value of the row (row) or of the loops around.
	factor := func(t *vnode) bool {
		if row {
			return t.op == vInv && t.row && t.real
		}
		return t.real && laneFree(t)
	}
	if factor(nd) {
		return &segScatter{t: nd, step: -1} // a pattern's row: t at each key
	}
	// lane: x, the read of an array at the lane's position (through a
	// conversion when the array is int), or nil.
	lane := func(x *vnode) (*cell, bool) {
		xInt := false
		if x.op == vToReal {
			x, xInt = x.a, true
		}
		if x.op != vRead || x.a.op != vLane || x.real == xInt {
			return nil, false
		}
		return x.cl, xInt
	}
	if x, xInt := lane(nd); x != nil && nd.real {
		// x(p) at each key: a transpose's column sums (CSC to rows).
		l.arr.needNarrow = true
		return &segScatter{x: x, xInt: xInt, step: -1}
	}
	if nd.op != vMul || !nd.real {
		return nil
	}
	at := func(x, t *vnode) *segScatter {
		xc, xInt := lane(x)
		if xc == nil || !factor(t) {
			return nil
		}
		l.arr.needNarrow = true
		return &segScatter{x: xc, xInt: xInt, t: t, step: -1}
	}
	if sc := at(nd.a, nd.b); sc != nil {
		return sc
	}
	return at(nd.b, nd.a)
}

// rows runs rows r0..r1-1, or reports false (nothing added) when a guard
// is not discharged or the keys or positions are not known to fit.
func (sc *segScatter) rows(fr *frame, l *nloop, st *flatState, fp *flatPlan, i int, r0, r1 int64, setRow func(int64, int), b *builder) bool {
	if !b.spec.dense || !b.spec.real || b.ws != nil {
		return false
	}
	v := l.vec
	s := fr.vstate(v)
	sb := l.seg
	p := sb.lo.ints[r0+sb.loOff : r1+sb.loOff+1]
	v.decide(fr, s, p[0], p[len(p)-1])
	for _, skip := range s.skip {
		if !skip {
			return false
		}
	}
	idx := l.arr
	b.holdKeysOf(idx)
	out := b.reals
	if !idx.fits(len(out)) || (sc.x != nil && p[len(p)-1] > sc.x.n) {
		return false
	}
	var ts []float64
	switch {
	case sc.t == nil:
		ts = grow(&s.units, int(r1-r0))
		for r := range ts {
			ts[r] = 1
		}
	case sc.step >= 0:
		ts = st.vals[sc.step][:r1-r0]
	default:
		ts = grow(&s.rowF[sc.t.id], int(r1-r0))
		for r := r0; r < r1; r++ {
			setRow(r, i)
			ts[r-r0] = sc.t.ff(fr)
		}
		if fr.err != nil {
			return true
		}
	}
	keys := idx.ints
	done := 0
	if sc.x != nil {
		done = sc.fitRows(out, p, idx, ts)
	}
	for r := done; r < len(ts); r++ {
		t := ts[r]
		lo, hi := p[r], p[r+1]
		ks := keys[lo:hi]
		if sc.x == nil {
			for _, k := range ks {
				out[k] += t
			}
			continue
		}
		if sc.xInt {
			xs := sc.x.ints[lo:hi]
			for q, k := range ks {
				out[k] += float64(xs[q]) * t
			}
			continue
		}
		xs := sc.x.reals[lo:hi]
		xs = xs[:len(ks)]
		for q, k := range ks {
			out[k] += xs[q] * t
		}
	}
	nestSaw("scatter")
	return true
}

// fitRows runs the rows of positions p whose bounds lie within idx and
// x, all of whose keys index out, without checks (in assembly where there
// is any), and returns how many it ran: the rows from the first bad one on
// are left to the checked loop.
func (sc *segScatter) fitRows(out []float64, p []int64, idx *cell, ts []float64) int {
	h, l, n := p[1:], p[0], min(idx.n, sc.x.n, int64(len(idx.ints)))
	if sc.xInt {
		n = min(n, int64(len(sc.x.ints)))
		if k, ok := csrScaleScatterAsm(out, h, l, idx.ints, idx.narrow, sc.x.ints, n, ts); ok {
			return k
		}
		return csrScaleScatter(out, h, l, idx.ints, sc.x.ints, n, ts)
	}
	n = min(n, int64(len(sc.x.reals)))
	if k, ok := csrScaleScatterAsm(out, h, l, idx.ints, idx.narrow, sc.x.reals, n, ts); ok {
		return k
	}
	return csrScaleScatter(out, h, l, idx.ints, sc.x.reals, n, ts)
}

// parentFlat decides whether loop p, whose body is guards and then one
// loop o running in position space, can hand o the rows of all its
// iterations at once: o's window follows p's key, so they are adjacent
// (CSF: the fibers of level 3 under a run of level-2 entries), and
// whatever o reads of p's variables is computed per row.
func (c *compiler) parentFlat(p *nloop) *nloop {
	if p.kind == itDict {
		return nil // adjacent rows follow positions; its keys are not positions
	}
	var o *nloop
	var single *nstmt
	for s := p.stmt; s != nil; s = s.next {
		switch {
		case s.kind == stGuard && s.proof != nil:
		case s.kind == stLoop && s.next == nil && s.loop.flat != nil:
			o = s.loop
		case s.kind == stSingle && single == nil && s.child != nil && s.child.depth == 1 && s.keyE.Op == ir.OpVar &&
			s.next != nil && s.next.kind == stLoop:
			// { key -> the inner loop }: each iteration's rows go to the
			// row at its key, a variable (so never an error, and an
			// iteration without rows may skip its row: an empty row is
			// no entry).
			single = s
		default:
			return nil
		}
	}
	if o == nil || p.ks < 0 || o.flat.keyed != nil {
		return nil
	}
	if single != nil {
		// The steps must add into the rows through addRows only.
		for _, s := range o.flat.steps {
			switch {
			case s.kind == stGuard, s.kind == stLet:
			case s.kind == stSingle && s.child == nil && !o.keyIsRow(s.keyE):
			default:
				return nil
			}
		}
	}
	sb := o.seg
	if sb == nil || sb.lo != sb.hi || sb.hiOff != sb.loOff+1 || sb.loSlot != sb.hiSlot ||
		(sb.loSlot != p.ks && (p.kind != itRange || sb.loSlot != p.vs)) {
		return nil
	}
	names := map[string]bool{p.e.Vars[0]: true, p.e.Vars[1]: true}
	for _, s := range o.flat.steps {
		if s.kind == stGuard {
			// o's guards are decided once per entry into o, and one run
			// enters o once for all of p's iterations: a guard reading
			// p's variables would see the first iteration's values only.
			for _, g := range s.proof.guards {
				if rowDependent(g.a, names) || rowDependent(g.b, names) {
					return nil
				}
			}
		}
		l := s.loop
		if l == nil {
			continue
		}
		if l.kind == itRange {
			for _, b := range l.e.Args[0].Args[:2] {
				for v := range ir.FreeVars(b) {
					if names[v] {
						return nil
					}
				}
			}
		}
		for _, g := range l.vec.guards {
			if rowDependent(g.a, names) || rowDependent(g.b, names) {
				return nil
			}
		}
		if readsRowDict(l.vec, names) {
			return nil
		}
	}
	p.upSingle = single
	if single != nil {
		// Keys that are the walked array's entries go into the rows as
		// its 32-bit copy (keptKeys).
		for _, s := range o.flat.steps {
			if s.keyVec != nil && s.keyVec.key.op == vVal && s.keyVec.key.cl == sb.arr {
				sb.arr.needNarrow = true
			}
		}
	}
	for _, s := range o.flat.steps {
		// Factors or keys that read p's variables: row by row (rowVars).
		if usesNames(s.postVec, names) {
			s.postVec = nil
		}
		if usesNames(s.valVec, names) {
			s.valVec, s.keyVec = nil, nil
		}
		if usesNames(s.letVec, names) {
			s.letVec = nil
		}
		if usesNames(s.keyVec, names) {
			s.keyVec = nil
		}
		if l := s.loop; l != nil {
			for _, n := range l.vec.all {
				if n.op == vInv && n.uses(names) && !n.row {
					n.row = true
					l.vec.rowNodes = append(l.vec.rowNodes, n)
				}
			}
		}
	}
	return o
}

// usesNames reports whether an invariant of v reads one of names.
func usesNames(v *vloop, names map[string]bool) bool {
	if v == nil {
		return false
	}
	for _, n := range v.all {
		if n.op == vInv && n.uses(names) {
			return true
		}
	}
	return false
}

// runUp runs iterations lo..hi-1 of p as one entry into its inner loop
// o over all their rows; false (nothing done) when a guard of p is not
// discharged, o's rows are not in order, or o cannot run in position
// space.
func (p *nloop) runUp(fr *frame, lo, hi int64, b *builder) bool {
	for _, pr := range p.proofs {
		if fr.i[pr.slot] == 0 {
			return false
		}
	}
	o := p.up
	sb := o.seg
	k0, k1 := lo+sb.loOff, hi+sb.loOff
	pos := sb.lo.ints
	if k0 < 0 || k1 >= int64(len(pos)) {
		return false
	}
	bounds := pos[k0 : k1+1]
	for i, e := range bounds[1:] {
		if a := bounds[i]; a < 0 || e < a || e > sb.arr.n {
			return false
		}
	}
	p.setVars(fr, lo)
	for _, pr := range o.proofs {
		pr.decide(fr, bounds[0], bounds[len(bounds)-1])
	}
	st := fr.flat(o)
	nestSaw("up")
	st.up = &upRows{p: p, bounds: bounds, r0: lo, single: p.upSingle}
	defer func() { st.up = nil }()
	return o.runFlat(fr, bounds[0], bounds[len(bounds)-1], b)
}

// vectorizeRows builds an expression of loop nl's rows as a vectorized
// body over nl's positions, so that a block of rows in position space
// computes it in batches: val (real), read as the rows' values from the
// variable in (vIn: their sums), and key, when not nil, the key of each
// row's singleton. Nil when they read a variable bound inside nl's body
// (a per-row value the batches do not see) or have a node the batches
// cannot evaluate.
func (c *compiler) vectorizeRows(nl *nloop, key, val *ir.Expr, in string) (v *vloop) {
	if nl == nil {
		return nil
	}
	fv := ir.FreeVars(val)
	if key != nil {
		for n := range ir.FreeVars(key) {
			fv[n] = true
		}
	}
	rowLets := map[string]bool{}
	for n := range fv {
		if n == in || n == nl.e.Vars[0] || n == nl.e.Vars[1] {
			continue
		}
		for i := len(c.scope) - 1; i >= 0; i-- {
			if c.scope[i].name == n {
				if i >= nl.scope0 {
					if !c.rowLets || c.scope[i].t.Depth != 0 {
						return nil
					}
					rowLets[n] = true
				}
				break
			}
		}
	}
	x := &vctx{c: c, nl: nl, loopK: nl.e.Vars[0], loopV: nl.e.Vars[1], lets: map[string]*vnode{},
		v: &vloop{}, in: in, rowLets: rowLets}
	if c.try(isNoVec, func() {
		if key != nil {
			x.v.key = x.intExpr(key)
		}
		x.v.val = x.expr(val)
		if x.v.val.real != (c.typeOf(val).Base == ir.Real) {
			panic(noVec{})
		}
	}) != nil {
		return nil
	}
	c.nvec++
	x.v.id = c.nvec - 1
	return x.v
}

// postRows vectorizes the factors pe of a sum (its value the variable
// in) over rows as lanes; they may read the lets of nl's body, whose
// per-row values position space keeps (vRowLet, bound by planFlat).
func (c *compiler) postRows(nl *nloop, pe *ir.Expr, in string) *vloop {
	c.rowLets = true
	defer func() { c.rowLets = false }()
	return c.vectorizeRows(nl, nil, pe, in)
}

// rowKeys builds the keys of a singleton statement's rows (its value
// the rows' real sums) as a vectorized body, or nil.
func (c *compiler) rowKeys(nl *nloop, key *ir.Expr) *vloop {
	name := fmt.Sprintf("rows·%d", len(c.scope))
	c.scope = append(c.scope, binding{name: name, t: ir.Type{Base: ir.Real}, slot: -1})
	defer c.unbind(1)
	return c.vectorizeRows(nl, key, &ir.Expr{Op: ir.OpVar, Name: name, Type: ir.Type{Base: ir.Real}, Pos: key.Pos}, name)
}
