package engine

import (
	"slices"
	"sync"

	"github.com/storel/storel/ir"
)

// Rows of a nested result scattered by index-array keys (MMM, TTM: the
// Gustavson form). An outer loop keys a row of the result per iteration;
// the loops below add a * V(q) at key I(q) of that row over a segment of
// an index array per entry. The row's dense storage is the level's
// workspace (workspace.go): the scatter writes it by key and marks the
// keys it writes, and the row is compacted to a sorted list or handed a
// dense slice when the next row opens. Rows are disjoint, so a parallel
// split over the outer loop needs no private copies.
//
// The leaf loop is the segment's scatter (rowScatter): one call of
// scatterAdd per segment, the factor a read once, where batches of
// positions would pay their setup for the few entries of a sparse row.

// rowScatter runs positions lo..hi-1 of the leaf segment loop l as one
// scatter into the dense real row b, or reports false (nothing added)
// when it cannot: guards to test, or values past the end of x. A row
// appending its entries in key order (sequential mode, appendrow.go) is
// settled into the workspace first: a segment's keys are in order, the
// next segment's start over.
func (sc *segScatter) rowScatter(fr *frame, l *nloop, lo, hi int64, b *builder) bool {
	if b == nil || !b.spec.dense || !b.spec.real || len(l.vec.guards) > 0 {
		return false
	}
	idx := l.arr.ints
	if lo < 0 || hi > int64(len(idx)) || (sc.x != nil && hi > sc.x.n) {
		return false
	}
	t := 1.0
	if sc.t != nil {
		s := fr.vstate(l.vec)
		tv, ok := s.eval(fr, sc.t, lo, 1)
		if !ok {
			return false // a read off its array: the batches find the error
		}
		t = s.reals(sc.t, tv, 1)[0]
	}
	b.holdKeysOf(l.arr)
	keys := idx[lo:hi]
	switch {
	case sc.x == nil:
		for _, k := range keys {
			b.addReal(k, t)
		}
	case sc.xInt:
		scatterAdd(b, keys, sc.x.ints[lo:hi], t)
	default:
		scatterAdd(b, keys, sc.x.reals[lo:hi], t)
	}
	nestSaw("row scatter")
	return true
}

// rowsScatter runs a loop o whose body is lets and guards and then one
// leaf scatter l (rowScatter) into o's row, with l's window P(w):P(w+1):
// o's body is vectorized over o's positions with l replaced by {w -> t}
// (the window's index and the scatter's factor), and each position's
// segment is then scattered into the row, a batch of positions at a time,
// with no call per position.
type rowsScatter struct {
	v    *vloop // key: w, val: t, over o's positions
	leaf *nloop
	pos  *cell // P
	// views: v's lets, w and t are each a slice of an array at the
	// batch's positions (laneView), so a batch whose guards the facts
	// discharge for the run (decide) takes the slices, with no
	// evaluation of its nodes.
	views      bool
	wArr, tArr *cell
	letArrs    []*cell
	// rows: the leaf walks row w of a built dictionary (dictrows.go)
	// instead of a segment of an index array.
	rows   dictFn
	gather *rowGather // the rows hold positions: the values are read at them
	// The rows compressed (dictrows.go), for the dictionary csrOf.
	mu    sync.Mutex
	csrOf dict
	csr   *builtCSR
}

// scatterLeaf returns the loop o's body ends in, after guards and lets
// of no loop (nil where there is none), and whether o may scatter rows
// at all: o not over a dictionary, its value a dense row of reals.
func scatterLeaf(o *nloop, lb loopBody) (*nloop, bool) {
	if o.kind == itDict || lb.spec == nil || lb.spec.depth != 1 || !lb.spec.dense || !lb.spec.real {
		return nil, false
	}
	var leaf *nloop
	for s := o.stmt; s != nil; s = s.next {
		switch {
		case s.kind == stGuard, s.kind == stLet && s.loop == nil && !s.hasPost():
		case s.kind == stLoop && s.next == nil:
			leaf = s.loop
		default:
			return nil, false
		}
	}
	return leaf, true
}

// rowsScatterOf returns o's rowsScatter, or nil when o's body does not
// have that form. o's variables are bound; body is o's body.
func (c *compiler) rowsScatterOf(o *nloop, body *ir.Expr, lb loopBody) *rowsScatter {
	leaf, ok := scatterLeaf(o, lb)
	if !ok {
		return nil
	}
	if leaf != nil && leaf.kind == itDict {
		return c.dictRowsScatterOf(o, body, lb, leaf)
	}
	if leaf == nil || leaf.wsRow == nil || leaf.wsRow.x == nil || len(leaf.vec.guards) > 0 {
		return nil
	}
	// The window: I(P(w):P(w + 1)), P an int array, w any int
	// expression (a CSR row's key, a hash level's slot of a key).
	src := leaf.e.Args[0]
	win, end := src.Args[1], src.Args[2]
	if win.Op != ir.OpLookup || end.Op != ir.OpLookup || len(win.Args) != 2 || len(end.Args) != 2 ||
		win.Args[0].Op != ir.OpGlobal || ir.Format(win.Args[0]) != ir.Format(end.Args[0]) ||
		ir.Format(end.Args[1]) != ir.Format(ir.Binary(ir.OpAdd, win.Args[1], ir.IntConst(1))) {
		return nil
	}
	pos := c.cell(win.Args[0])
	if pos.info.Kind != ir.ObjArray || pos.info.Elem != ir.Int {
		return nil
	}
	t := scatterFactor(leaf)
	if t == nil {
		return nil
	}
	v := c.windowsOf(o, body, lb, leaf, win.Args[1], t)
	if v == nil {
		return nil
	}
	r := &rowsScatter{v: v, leaf: leaf, pos: pos}
	r.viewsOf()
	return r
}

// viewsOf sets r.views where v's values are slices of arrays at the
// positions (laneView): w an int and t a real view, every let a view
// (its reads must stay inside its array, which viewed tests).
func (r *rowsScatter) viewsOf() {
	v := r.v
	r.wArr, r.tArr = laneView(v.key), laneView(v.val)
	if r.wArr == nil || r.tArr == nil || v.key.real || !v.val.real {
		return
	}
	r.letArrs = r.letArrs[:0]
	for _, l := range v.lets {
		a := laneView(l)
		if a == nil {
			return
		}
		r.letArrs = append(r.letArrs, a)
	}
	r.views = true
}

// laneView returns the array whose values at positions p are node nd's
// values at p: the loop's own value (vVal), a read at the position
// (vRead of vLane), or a let of either; nil for any other node.
func laneView(nd *vnode) *cell {
	for nd.op == vLetRef {
		nd = nd.a
	}
	switch {
	case nd.op == vVal:
		return nd.cl
	case nd.op == vRead && nd.a.op == vLane:
		return nd.cl
	}
	return nil
}

// viewed returns the slices of w and t over positions p0..p0+n-1, or
// false when a view's positions leave its array (the batch's lanes then
// run through o's statements, which find the error).
func (r *rowsScatter) viewed(p0 int64, n int) (ws []int64, ts []float64, ok bool) {
	hi := p0 + int64(n)
	inside := func(c *cell, real bool) bool {
		l := int64(len(c.ints))
		if real {
			l = int64(len(c.reals))
		}
		return p0 >= 0 && hi <= min(l, c.n)
	}
	for i, c := range r.letArrs {
		if !inside(c, r.v.lets[i].real) {
			return nil, nil, false
		}
	}
	if !inside(r.wArr, false) || !inside(r.tArr, true) {
		return nil, nil, false
	}
	return r.wArr.ints[p0:hi], r.tArr.reals[p0:hi], true
}

// windowsOf vectorizes o's body over its positions with the leaf loop
// replaced by {w -> t}: each position's window w and factor t; nil when
// the body does not vectorize so.
func (c *compiler) windowsOf(o *nloop, body *ir.Expr, lb loopBody, leaf *nloop, w, t *ir.Expr) *vloop {
	row := &ir.Expr{Op: ir.OpSingleton, Args: []*ir.Expr{w, t}, Type: leaf.e.Type, Pos: leaf.e.Pos}
	synth := replaceLeaf(body, leaf.e, row)
	if synth == nil {
		return nil
	}
	lets, guards := len(o.info.lets), len(o.info.guards)
	v := c.vectorize(o, synth, lb)
	o.info.lets, o.info.guards = o.info.lets[:lets], o.info.guards[:guards]
	if v == nil || v.key == nil || v.key2 != nil {
		return nil
	}
	return v
}

// scatterFactor is the factor t of the leaf scatter's value x(p) * t (or
// t * x(p)): the operand that reads none of the leaf's variables.
func scatterFactor(l *nloop) *ir.Expr {
	body := l.e.Args[1]
	if body.Op != ir.OpSingleton || body.Args[1].Op != ir.OpMul {
		return nil
	}
	reads := func(e *ir.Expr) bool {
		fv := ir.FreeVars(e)
		return fv[l.e.Vars[0]] || fv[l.e.Vars[1]]
	}
	a, b := body.Args[1].Args[0], body.Args[1].Args[1]
	switch {
	case reads(a) && !reads(b):
		return b
	case reads(b) && !reads(a):
		return a
	}
	return nil
}

// replaceLeaf returns body, a chain of lets and guards ending in leaf,
// with leaf replaced by row; nil when body is not such a chain.
func replaceLeaf(body, leaf, row *ir.Expr) *ir.Expr {
	switch {
	case body == leaf:
		return row
	case body.Op == ir.OpLet && len(body.Args) == 2, body.Op == ir.OpIf && len(body.Args) == 2:
		in := replaceLeaf(body.Args[1], leaf, row)
		if in == nil {
			return nil
		}
		cp := *body
		cp.Args = []*ir.Expr{body.Args[0], in}
		cp.Type = row.Type
		return &cp
	}
	return nil
}

// run runs positions lo..hi-1 of o into the row b, or reports false
// (nothing added) when b is not a dense real row it can write.
func (r *rowsScatter) run(fr *frame, o *nloop, lo, hi int64, b *builder) bool {
	if b == nil || !b.spec.dense || !b.spec.real {
		return false
	}
	v, l := r.v, r.leaf
	s := fr.vstate(v)
	v.decide(fr, s, lo, hi)
	if fr.err != nil {
		return true
	}
	var t dict // the built rows (dictrows.go)
	switch {
	case r.rows != nil:
		if t = r.rows(fr); fr.err != nil {
			return true
		}
	case hi-lo <= shortRun:
		b.holdKeysOf(l.arr)
		r.lanes(fr, s, o, lo, hi, b)
		return true
	case r.views && !s.ranged && s.rows == nil && !slices.Contains(s.skip, false):
		b.holdKeysOf(l.arr)
		r.runViews(fr, o, lo, hi, b)
		return true
	default:
		b.holdKeysOf(l.arr)
	}
	for p0 := lo; p0 < hi; p0 += vbatch {
		n := int(min(hi-p0, vbatch))
		if !r.batch(fr, s, o, t, p0, n, b) {
			o.runPerIteration(fr, p0, p0+int64(n), b)
		}
		if fr.err != nil {
			return true
		}
	}
	if t != nil {
		nestSaw("dict rows scatter")
	} else {
		nestSaw("rows scatter")
	}
	return true
}

// runViews runs positions lo..hi-1 of o, whose guards the facts
// discharge, in batches whose windows and factors are slices of arrays
// (viewed); a batch whose slice leaves its array runs per iteration.
func (r *rowsScatter) runViews(fr *frame, o *nloop, lo, hi int64, b *builder) {
	for p0 := lo; p0 < hi; p0 += vbatch {
		n := int(min(hi-p0, vbatch))
		if ws, ts, ok := r.viewed(p0, n); ok {
			r.scatter(fr, o, p0, ws, ts, b)
		} else {
			o.runPerIteration(fr, p0, p0+int64(n), b)
		}
		if fr.err != nil {
			return
		}
	}
	nestSaw("rows scatter")
	nestSaw("rows views")
}

// lanes runs positions lo..hi-1 of o one at a time, each position's
// window and factor evaluated lane by lane (lane.go): a short call (the
// fibers of a sparse tensor, TTM's) spends more on a batch's set-up than
// on its work. A position whose guard fails, whose read leaves its array
// or whose window is off runs through o's statements.
func (r *rowsScatter) lanes(fr *frame, s *vstate, o *nloop, lo, hi int64, b *builder) {
	v, l := r.v, r.leaf
	for _, nd := range v.invs {
		if !nd.konst {
			s.setInv(fr, nd)
		}
	}
	s.fetchDicts(fr, v)
	nestSaw("rows lanes")
	sc, pa, idx := l.wsRow, r.pos.ints, l.arr.ints
	lim := min(int64(len(idx)), l.arr.n, sc.x.n)
	for p := lo; p < hi; p++ {
		w, t, ok := r.lane(s, p)
		var wl, wh int64 = -1, 0
		if ok && inWindows(w, pa) {
			wl, wh = pa[w], pa[w+1]
		}
		if wl < 0 || wl > wh || wh > lim {
			o.runPerIteration(fr, p, p+1, b)
			if fr.err != nil {
				return
			}
			continue
		}
		if sc.xInt {
			scatterAdd(b, idx[wl:wh], sc.x.ints[wl:wh], t)
		} else {
			scatterAdd(b, idx[wl:wh], sc.x.reals[wl:wh], t)
		}
	}
}

// lane evaluates the lets, guards, window and factor of position p;
// false when a guard fails or a read leaves its array.
func (r *rowsScatter) lane(s *vstate, p int64) (int64, float64, bool) {
	v := r.v
	if !v.laneLets(s, p) {
		return 0, 0, false
	}
	w, ok := s.laneI(v.key, p)
	if !ok {
		return 0, 0, false
	}
	t, ok := s.laneF(v.val, p)
	return w, t, ok
}

// scatters reports whether statements s, guards and lets, end in a loop
// that scatters into the row (rowScatter, rowsScatter or a merge's pairRows).
func scatters(s *nstmt) bool {
	for ; s != nil; s = s.next {
		if s.kind == stLoop {
			return s.next == nil && (s.loop.wsRow != nil || s.loop.rowsc != nil || s.loop.merge != nil && s.loop.merge.rows != nil)
		}
		if s.kind != stGuard && s.kind != stLet {
			return false
		}
	}
	return false
}

// leaveRowsInOrder takes b, a dictionary of rows, out of sequential mode
// (seqrows.go) unless it is the level of a deeper one's: a row scattered
// into is settled into the workspace at its first scatter, so the mode's
// appending saves nothing, while its rows lose the streak of dense rows
// (workspace.go) that rows of a narrow product (MMM's 250 columns) take.
func (b *builder) leaveRowsInOrder() {
	if x := b.x; x != nil && (x.sequential || x.seq != nil) && (x.seq == nil || x.seq.outer == nil) {
		b.leaveSequential()
		nestSaw("rows out of sequence")
	}
}

// batch runs positions p0..p0+n-1, the segments of an index array or
// the rows of t, or reports false (nothing added) when a guard fails in
// a lane or a read leaves its array.
func (r *rowsScatter) batch(fr *frame, s *vstate, o *nloop, t dict, p0 int64, n int, b *builder) bool {
	v := r.v
	if !v.check(fr, s, p0, n) {
		return false
	}
	kv, ok := s.eval(fr, v.key, p0, n)
	if !ok {
		return false
	}
	ws := s.ints(v.key, kv, n)
	tv, ok := s.eval(fr, v.val, p0, n)
	if !ok {
		return false
	}
	ts := s.reals(v.val, tv, n)
	if t != nil {
		return r.scatterBuilt(fr, s, o, t, p0, ws, ts, b)
	}
	r.scatter(fr, o, p0, ws, ts, b)
	return true
}

// scatter adds the segments of windows ws, times ts, into the row b
// (scatterRows).
func (r *rowsScatter) scatter(fr *frame, o *nloop, p0 int64, ws []int64, ts []float64, b *builder) {
	sc, l := r.leaf.wsRow, r.leaf
	if sc.xInt {
		scatterRows(fr, o, r.pos.ints, l.arr.ints, l.arr.n, b, p0, ws, ts, sc.x.ints)
	} else {
		scatterRows(fr, o, r.pos.ints, l.arr.ints, l.arr.n, b, p0, ws, ts, sc.x.reals)
	}
}

// laneRunner runs one lane of a batch (a loop's position, a merge's
// pair) through its statements, which find the exact error.
type laneRunner interface {
	runLane(fr *frame, p int64, b *builder)
}

func (nl *nloop) runLane(fr *frame, p int64, b *builder) { nl.runPerIteration(fr, p, p+1, b) }

// scatterRows adds ts[q] * x(p) at key idx(p) of the row b for the
// positions p (below n) of segment pa(ws[q]):pa(ws[q]+1) of every lane q
// (o's lane p0+q); a lane whose segment is off runs through o's
// statements, which find the exact error. The keys written are marked in
// the workspace's bitmap, or the row is swept whole (sweep.go).
func scatterRows[V number](fr *frame, o laneRunner, pa, idx []int64, n int64, b *builder, p0 int64, ws []int64, ts []float64, x []V) {
	lim := min(int64(len(idx)), int64(len(x)), n)
	idx, x = idx[:lim], x[:lim]
	ts = ts[:len(ws)]
	b.settle()
	wk := b.ws
	// As scatterAdd decides for a call: keys marked in a bitmap of the
	// slice, or the slice swept whole, when it is at most bitmapFactor
	// times the batch's rows; else listed.
	general := wk != nil && !wk.marking && !wk.sweep && len(b.reals) > bitmapFactor*len(ws)
	// marks: the keys go into the bitmap bm. bm is nil while the slice
	// is empty (no key is inside it, so addRows writes none), which is
	// why marks, not bm, says whether to take the bitmap again once
	// scatterAdd has grown the slice.
	var bm []uint64
	marks := !general && wk != nil && !wk.sweeps(len(b.reals))
	if marks {
		growBits(&wk.bits, (len(b.reals)+63)>>6)
		wk.marking, bm = true, wk.bits
	}
	for q := 0; q < len(ws); q++ {
		if !general {
			// Every lane in one loop, up to the first that leaves it.
			if q += addRows(b.reals, bm, pa, idx, x, ws[q:], ts[q:]); q == len(ws) {
				return
			}
		}
		w := ws[q]
		var lo, hi int64 = -1, 0
		if inWindows(w, pa) {
			lo, hi = pa[w], pa[w+1]
		}
		if lo < 0 || lo > hi || hi > lim {
			o.runLane(fr, p0+int64(q), b)
			if fr.err != nil {
				return
			}
			continue
		}
		// The lane whole (general), or from its first key outside the
		// slice (addRows added the keys before it): scatterAdd grows
		// the slice.
		i := lo
		if !general {
			i = lo + keysInside(idx[lo:hi], len(b.reals))
		}
		scatterAdd(b, idx[i:hi], x[i:hi], ts[q])
		if marks {
			bm = wk.bits
		}
	}
}

// addRows adds ts[q] * x(p) at key idx[p] of out for the positions p of
// window pa[w]:pa[w+1] of each lane q (w = ws[q]), marking the keys in
// bm, a bitmap of out, unless bm is nil, and returns the lanes done: it
// stops at the first lane whose window leaves pa or idx, or one of whose
// keys falls outside out, having added that lane's keys before the first
// such key. One function for the whole batch, as a hand-written loop nest
// has it: a call per lane costs more than a short segment's work. The
// loops with and without marks are functions of their own: in one, the
// registers the marking loop holds pushed a value of the other's inner
// loop to the stack (a load more per entry, ~2% of the scatter's time).
func addRows[V number](out []float64, bm []uint64, pa, idx []int64, x []V, ws []int64, ts []float64) int {
	if bm == nil {
		return addRowsPlain(out, pa, idx, x, ws, ts)
	}
	return addRowsMarked(out, bm, pa, idx, x, ws, ts)
}

//go:noinline
func addRowsPlain[V number](out []float64, pa, idx []int64, x []V, ws []int64, ts []float64) int {
	x = x[:len(idx)]
	ts = ts[:len(ws)]
	for q, w := range ws {
		lo, hi, ok := laneWindow(w, pa, len(idx))
		if !ok {
			return q
		}
		t, seg, vals := ts[q], idx[lo:hi], x[lo:hi]
		vals = vals[:len(seg)]
		for i, j := range seg {
			if uint64(j) >= uint64(len(out)) {
				return q
			}
			out[j] += t * float64(vals[i])
		}
	}
	return len(ws)
}

//go:noinline
func addRowsMarked[V number](out []float64, bm []uint64, pa, idx []int64, x []V, ws []int64, ts []float64) int {
	x = x[:len(idx)]
	ts = ts[:len(ws)]
	bm = bm[:(len(out)+63)>>6]
	for q, w := range ws {
		lo, hi, ok := laneWindow(w, pa, len(idx))
		if !ok {
			return q
		}
		t, seg, vals := ts[q], idx[lo:hi], x[lo:hi]
		vals = vals[:len(seg)]
		for i, j := range seg {
			if uint64(j) >= uint64(len(out)) {
				return q
			}
			out[j] += t * float64(vals[i])
			bm[j>>6] |= 1 << (j & 63)
		}
	}
	return len(ws)
}

// laneWindow returns window w of the position array pa, lo..hi, and
// whether it is one (inWindows) inside an index array of length n.
func laneWindow(w int64, pa []int64, n int) (lo, hi int64, ok bool) {
	if !inWindows(w, pa) {
		return 0, 0, false
	}
	lo, hi = pa[w], pa[w+1]
	return lo, hi, lo >= 0 && lo <= hi && hi <= int64(n)
}

// inWindows reports whether w is a window of the position array pa:
// pa(w) and pa(w+1) are in it.
func inWindows(w int64, pa []int64) bool {
	return uint64(w) < uint64(len(pa)) && uint64(w+1) < uint64(len(pa))
}

// keysInside is the number of leading keys of seg inside a slice of
// length n.
func keysInside(seg []int64, n int) int64 {
	for i, j := range seg {
		if uint64(j) >= uint64(n) {
			return int64(i)
		}
	}
	return int64(len(seg))
}

// laneFree reports whether node n has one value for every lane of its
// loop: it reads none of the loop's variables, lets or rows.
func laneFree(n *vnode) bool {
	if n == nil {
		return true
	}
	switch n.op {
	case vInv:
		return !n.row
	case vLane, vVal, vLetRef, vDictRead, vDictKey, vDictVal, vRowLet, vIn, vDot:
		return false
	}
	return laneFree(n.a) && laneFree(n.b) && laneFree(n.c)
}
