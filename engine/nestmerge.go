package engine

import (
	"fmt"
	"math"

	"github.com/storel/storel/ir"
)

// The merge iterator of the loop-nest IR (itMerge):
// merge(<k1, k2, v> in <A(l1:h1), B(l2:h2)>) body, two sorted segments of
// int arrays whose bounds are read in place, summed into a real scalar
// sink. Opening it reads both segments' bounds; the leaf loop runs their
// intersection (a galloping seek on the side that is behind, so a short
// side against a long one costs the short side times a logarithm) and
// writes the matched pairs (k1, k2, the key) into batches; the body, a
// real expression of array reads at k1, k2 or the key and invariants,
// is evaluated node by node over each batch and its terms are added
// into the sink in the pairs' order. The pairs and their order are the
// interpreter's nested loops': equal keys pair every position of the
// first run with every position of the second, first-operand positions
// outermost; so the sums have the interpreter's bits.
//
// Anything the batches cannot take as it comes — bounds out of order or
// past their arrays, an unsorted segment, a read past its array — runs
// the whole merge on the closure path's merge (merge.go), which gives
// the interpreter's result or its exact error.

// mbatch is the number of pairs evaluated together.
const mbatch = 256

// seekPairs is the most pairs of a merge against a range evaluated one
// by one rather than in a batch.
const seekPairs = 8

// mop is the operation of a node of a merge body.
type mop uint8

const (
	mRead mop = iota // a real array at k1, k2 or the key (at)
	mInv             // a real invariant, computed once per batch
	mNeg
	mAdd
	mSub
	mMul
	mIf // if cond then a, cond not reading the merge's variables
)

// mnode is a node of a merge body; its operands come before it.
type mnode struct {
	op   mop
	at   int // mRead: 0 k1, 1 k2, 2 the key
	cl   *cell
	slot int // mInv: a read of cl at this int slot, or -1 (inv)
	inv  realFn
	cond boolFn
	a, b int
}

// nmerge is the iterator and body of an itMerge loop.
type nmerge struct {
	id      int
	seg     [2]*segBounds
	ops     [2]*segBounds          // the operands' bounds (seg, or pairRows' own), or nil
	general func(*frame, *builder) // the closure path's merge
	acc     int                    // the real accumulator
	prog    []mnode                // the body, operands first; the last node is its value
	reads   [3][]*cell             // the arrays read at k1, k2 and the key
	// dot: the body is x1(k1) * x2(k2), summed by the merge-dot
	// primitive (dotMerge) as the pairs are found, without batches.
	dot    bool
	x1, x2 *cell
	// row: the segment of the loop whose body the merge is, when it is
	// one of rows of merges run by runRows
	row *segBounds
	// rlo, rhi: the bounds of a range second operand lo:hi (seg[1] is
	// then nil), met by a seek into the first (seekRange)
	rlo, rhi intFn
	// guard: the test of if guard then merge(...), or nil
	guard boolFn
	// keyed: each pair adds its term into the loop's dictionary at its
	// k1, k2 or key (kat: 0, 1, 2), not into the accumulator
	keyed bool
	kat   int
	// rows: the pairs scatter segments into the loop's dense row
	// (nestmergerows.go); prog is then each pair's factor
	rows *pairRows
}

// mergeState is one frame's working memory for an itMerge loop.
type mergeState struct {
	pos  [3][]int64 // per pair of a batch: k1, k2 and the key
	regs [][]float64
	// rs: the operands' readers, made at the first run of the frame
	// (the arrays stay bound for the frame's life)
	rs   [2]segReader
	rsOK bool
	row  segReader // runRows: the segment of the loop around the merge
	// fixed: the table of a pairRows merge's first operand, whose bounds
	// do not move in a run (built at its first open in the frame)
	fixed fixedTable
	// sorted: the operands whose segments are all sorted in the run
	// (segBounds.sorted), known once sortedOK
	sorted   [2]bool
	sortedOK bool
}

// retire readies s for another run: its batches and the table's memory
// stay, the readers of the run's arrays go.
func (s *mergeState) retire() {
	*s = mergeState{pos: s.pos, regs: s.regs, fixed: fixedTable{tab: s.fixed.tab[:0]}}
}

func (fr *frame) mstate(m *nmerge) *mergeState {
	for len(fr.mst) <= m.id {
		fr.mst = append(fr.mst, nil)
	}
	s := fr.mst[m.id]
	if s == nil {
		s = &mergeState{regs: make([][]float64, len(m.prog))}
		for i := range s.pos {
			s.pos[i] = make([]int64, mbatch)
		}
		for i := range s.regs {
			s.regs[i] = make([]float64, mbatch)
		}
		fr.mst[m.id] = s
	}
	return s
}

// lowerMerge builds the itMerge nloop of merge e into sink lb, or
// declines it. e may be if c then merge(...) (a guard between a factor
// and the merge, productSum), c not a loop: the test runs when the merge
// opens, and where it fails the merge has no pairs (the if's zero).
func (c *compiler) lowerMerge(e *ir.Expr, lb loopBody) *nloop {
	m := &nmerge{id: c.nmerge, acc: lb.accF}
	var body *ir.Expr
	if e.Op == ir.OpMerge {
		body = e.Args[2]
	}
	if lb.spec != nil && e.Op == ir.OpMerge && containsLoop(body) {
		return c.lowerMergeRows(e, lb)
	}
	if lb.spec != nil {
		// merge(...) { v -> x }, v a variable of the merge, into a
		// dictionary of reals (a hash map): each pair adds its term at
		// its own key, as the interpreter adds {v -> x} per pair.
		if e.Op != ir.OpMerge || lb.spec.depth != 1 || !lb.spec.real || body.Op != ir.OpSingleton ||
			body.Args[0].Op != ir.OpVar || e.Args[1].Op == ir.OpRange {
			c.noNest("a merge into a dictionary other than a real entry per pair at a key the merge binds")
		}
		if m.kat = mergeVarAt(e, body.Args[0].Name); m.kat < 0 {
			c.noNest("a merge into a dictionary at a key the merge does not bind")
		}
		m.keyed, body = true, body.Args[1]
	} else if lb.accF < 0 {
		c.noNest("an int merge")
	}
	var guard *ir.Expr
	if e.Op == ir.OpIf {
		guard, e = e.Args[0], e.Args[1]
		m.guard = c.boolExpr(guard)
		body = e.Args[2]
	}
	for i := range m.seg {
		src := e.Args[i]
		if i == 1 && src.Op == ir.OpRange {
			// lo:hi against a sorted segment (the optimizer's l:l+1 for
			// a lookup into a sorted row): a seek.
			m.rlo, m.rhi = c.intExpr(src.Args[0], "range bound"), c.intExpr(src.Args[1], "range bound")
			continue
		}
		if src.Op != ir.OpSubArray || src.Args[0].Op != ir.OpGlobal {
			c.noNest("a merge operand that is not a segment of an index array")
		}
		cl := c.cell(src.Args[0])
		if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Int {
			c.noNest("a merge operand that is not a segment of an int array")
		}
		if _, m.seg[i] = c.segment(src, cl); m.seg[i] == nil {
			c.noNest("a merge operand whose bounds are not read in place")
		}
	}
	m.ops = m.seg
	c.declare(e.Vars[0], ir.IntType)
	c.declare(e.Vars[1], ir.IntType)
	c.declare(e.Vars[2], ir.IntType)
	if t := c.typeOf(body); t.Depth != 0 || t.Base != ir.Real {
		c.noNest("a merge whose body is not a real scalar")
	}
	m.body(c, e, body)
	c.unbind(3)
	if p := m.prog; m.rlo == nil && !m.keyed && len(p) == 3 && p[2].op == mMul && p[0].op == mRead && p[1].op == mRead && p[0].at != p[1].at && p[0].at != 2 && p[1].at != 2 {
		// x(k2) * y(k1) is y(k1) * x(k2): a product of two reals is
		// the same either way round.
		m.dot, m.x1, m.x2 = true, p[p[0].at].cl, p[p[1].at].cl
	}
	// The closure path's merge, for what the batches do not take.
	m.general = c.compileMerge(e, lb)
	c.nmerge++
	nl := &nloop{e: e, kind: itMerge, sink: lb, merge: m, ks: -1, vs: -1}
	nl.open = func(*frame) (int64, int64, bool) { return 0, 1, true }
	nl.info.iter = "merge (sorted intersection, galloping seeks) of " + ir.Format(e.Args[0]) + " and " + ir.Format(e.Args[1])
	nl.info.exec = fmt.Sprintf("matched pairs in batches of %d, the body %s over each batch", mbatch, ir.Format(body))
	if m.rlo != nil {
		nl.info.iter = "seek (galloping) of the keys " + ir.Format(e.Args[1]) + " in " + ir.Format(e.Args[0])
		nl.info.exec = fmt.Sprintf("the body %s at each key found, one by one (at most %d keys) or in batches of %d", ir.Format(body), seekPairs, mbatch)
	}
	if m.dot {
		nl.info.exec = "the merge-dot primitive " + ir.Format(body) + ", summed as the pairs are found"
	}
	if m.keyed {
		nl.info.exec += "; each pair's term added into the dictionary at its " + e.Vars[m.kat]
	}
	if guard != nil {
		nl.info.guards = append(nl.info.guards, ir.Format(guard)+", tested as the merge opens (false: no pairs)")
	}
	nl.info.sink = sinkName(lb)
	return nl
}

// body compiles the merge body b into m.prog, or declines the merge.
func (m *nmerge) body(c *compiler, e, b *ir.Expr) int {
	at := func(v string) int { return mergeVarAt(e, v) }
	fv := ir.FreeVars(b)
	inv := !fv[e.Vars[0]] && !fv[e.Vars[1]] && !fv[e.Vars[2]] && !containsLoop(b)
	if t := c.typeOf(b); t.Depth != 0 || (t.Base != ir.Real || b.Type.Base != ir.Real) && !(inv && t.Base == ir.Int) {
		c.noNest("a merge body with a value that is not real")
	}
	n := mnode{}
	switch {
	case inv:
		// Evaluated once a batch has pairs; where it fails, the whole
		// merge runs again on the closure path for the interpreter's
		// error. An int invariant (a factor of a real product) is
		// converted as the interpreter converts it.
		n = mnode{op: mInv, slot: -1}
		if cl, slot := c.arrayAtSlot(b); cl != nil {
			n.cl, n.slot = cl, slot
		} else {
			n.inv = asReal(c.expr(b))
		}
	case b.Op == ir.OpLookup && b.Args[0].Op == ir.OpGlobal && b.Args[1].Op == ir.OpVar && at(b.Args[1].Name) >= 0:
		cl := c.cell(b.Args[0])
		if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Real {
			c.noNest("a merge body reading a dictionary that is not a real array")
		}
		n = mnode{op: mRead, at: at(b.Args[1].Name), cl: cl}
		m.reads[n.at] = append(m.reads[n.at], cl)
	case b.Op == ir.OpIf && len(b.Args) == 2 && !mergeVarIn(ir.FreeVars(b.Args[0]), e) && !containsLoop(b.Args[0]):
		// A test of the loop around: decided once per batch.
		n = mnode{op: mIf, cond: c.boolExpr(b.Args[0]), a: m.body(c, e, b.Args[1])}
	case b.Op == ir.OpNeg:
		n = mnode{op: mNeg, a: m.body(c, e, b.Args[0])}
	case b.Op == ir.OpAdd || b.Op == ir.OpSub || b.Op == ir.OpMul:
		n = mnode{op: map[ir.Op]mop{ir.OpAdd: mAdd, ir.OpSub: mSub, ir.OpMul: mMul}[b.Op]}
		n.a = m.body(c, e, b.Args[0])
		n.b = m.body(c, e, b.Args[1])
	default:
		c.noNest("a merge body other than sums and products of real arrays read at its positions or key, and invariants")
	}
	m.prog = append(m.prog, n)
	return len(m.prog) - 1
}

// run adds the merge's terms into its accumulator (keyed: into b), and
// reports whether it had pairs.
func (m *nmerge) run(fr *frame, b *builder) bool {
	if m.guard != nil && !m.guard(fr) {
		return fr.err != nil
	}
	if m.rlo != nil {
		return m.seekRange(fr)
	}
	if m.rows != nil {
		return m.runRows(fr, b)
	}
	// A keyed merge adds its terms into b at its pairs' keys (each).
	s0, s1 := m.seg[0], m.seg[1]
	l1, h1, ok1 := s0.inPlace(fr)
	l2, h2, ok2 := s1.inPlace(fr)
	switch {
	case ok1 && ok2 && (l1 == h1 || l2 == h2):
		return false
	case !ok1 || !ok2 || !m.fit(fr, 0, l1, h1) || !m.fit(fr, 1, l2, h2) ||
		m.keyed && !m.each(fr, s0.arr.ints, s1.arr.ints, l1, h1, l2, h2, b, 0, false):
		m.general(fr, b)
		return true // perhaps
	case m.keyed:
		return true
	}
	return m.pairs(fr, l1, h1, l2, h2)
}

// mergeVarAt returns the index of the merge's variable named v (a later
// binder shadows an earlier one), or -1.
func mergeVarAt(e *ir.Expr, v string) int {
	for i := 2; i >= 0; i-- {
		if e.Vars[i] == v {
			return i
		}
	}
	return -1
}

// seekRange is run for a range second operand lo:hi: the positions of
// the first operand's segment whose keys lie in lo..hi-1, found by a
// seek, paired with their keys (k2 and the key alike), in the order of
// the closure path's seek.
func (m *nmerge) seekRange(fr *frame) bool {
	l1, h1, ok := m.seg[0].inPlace(fr)
	if !ok || !m.fit(fr, 0, l1, h1) {
		m.general(fr, nil)
		return true // perhaps
	}
	lo, hi := m.rlo(fr), m.rhi(fr)
	if fr.err != nil || l1 == h1 {
		return fr.err != nil
	}
	a := m.seg[0].arr.ints[l1:h1]
	q := seek(a, 0, lo)
	if q == len(a) || a[q] >= hi {
		return false
	}
	end := seek(a, q, hi)
	if a[q] < 0 || !fits(m.reads[1], a[end-1]+1) || !fits(m.reads[2], a[end-1]+1) {
		// A read at a key outside its array: the closure path reports it.
		m.general(fr, nil)
		return true
	}
	acc0 := fr.f[m.acc]
	if end-q <= seekPairs && len(m.prog) <= len(scalarRegs{}) {
		// A key or a few (a lookup l:l+1): pair by pair, without batches.
		var regs scalarRegs
		var holds [len(scalarRegs{})]bool
		acc := acc0
		for i, k := range a[q:end] {
			x, ok := m.term(fr, &regs, &holds, [3]int64{l1 + int64(q+i), k, k}, i == 0)
			if !ok {
				m.retry(fr, acc0)
				return true
			}
			acc += x
		}
		fr.f[m.acc] = acc
		return true
	}
	st := fr.mstate(m)
	for q < end {
		n := min(end-q, mbatch)
		for i, k := range a[q : q+n] {
			st.pos[0][i], st.pos[1][i], st.pos[2][i] = l1+int64(q+i), k, k
		}
		q += n
		if !m.flush(fr, st, n) {
			m.retry(fr, acc0)
			return true
		}
	}
	return true
}

// fit reports whether operand i's segment l:h, in order inside its
// array, is sorted and every array read at its positions holds it.
func (m *nmerge) fit(fr *frame, i int, l, h int64) bool {
	return (m.sortedOps(fr)[i] || m.seg[i].arr.sortedSegment(l, h)) && fits(m.reads[i], h)
}

// sortedOps reports, per operand, whether its every segment in the run
// is sorted (segBounds.sorted), asked at the frame's first open.
func (m *nmerge) sortedOps(fr *frame) *[2]bool {
	st := fr.mstate(m)
	if !st.sortedOK {
		for i, sb := range m.ops {
			st.sorted[i] = sb != nil && sb.sorted()
		}
		st.sortedOK = true
	}
	return &st.sorted
}

// pairs is run on two nonempty segments that fit.
func (m *nmerge) pairs(fr *frame, l1, h1, l2, h2 int64) bool {
	s0, s1 := m.seg[0], m.seg[1]
	acc0 := fr.f[m.acc]
	a, b := s0.arr.ints[l1:h1], s1.arr.ints[l2:h2]
	if m.dot {
		fr.f[m.acc] = dotMerge(a, b, m.x1.reals[l1:], m.x2.reals[l2:], acc0, nil, nil)
		return fr.f[m.acc] != acc0 // (a zero sum is no entry either)
	}
	st := fr.mstate(m)
	var ps pairs
	for {
		n := ps.fill(a, b, l1, l2, st.pos[0], st.pos[1], st.pos[2])
		if n == 0 {
			return ps.any
		}
		if !m.flush(fr, st, n) {
			m.retry(fr, acc0)
			return true
		}
	}
}

// retry runs the merge again on the closure path, from the accumulator's
// value acc0 before it and no error: that path adds the same terms or
// stops at the interpreter's error.
func (m *nmerge) retry(fr *frame, acc0 float64) {
	fr.err = nil
	fr.f[m.acc] = acc0
	m.general(fr, nil)
}

// fits reports whether positions below h read inside every array of cls.
func fits(cls []*cell, h int64) bool {
	for _, cl := range cls {
		if h > int64(len(cl.reals)) {
			return false
		}
	}
	return true
}

// flush evaluates the body over a batch of n pairs and adds its terms
// into the accumulator in order; false (nothing added) when a read at
// the key falls outside its array or an invariant fails.
func (m *nmerge) flush(fr *frame, st *mergeState, n int) bool {
	if !m.eval(fr, st, n) {
		return false
	}
	acc := fr.f[m.acc]
	for _, x := range st.regs[len(m.prog)-1][:n] {
		acc += x
	}
	fr.f[m.acc] = acc
	return true
}

// eval evaluates the body over a batch of n pairs, its terms into the
// last register; false when a read at the key falls outside its array or
// an invariant fails.
func (m *nmerge) eval(fr *frame, st *mergeState, n int) bool {
	keys := st.pos[2][:n]
	for _, cl := range m.reads[2] {
		if keys[0] < 0 || keys[n-1] >= int64(len(cl.reals)) { // keys ascend
			return false
		}
	}
	for k := range m.prog {
		nd := &m.prog[k]
		r := st.regs[k][:n]
		switch nd.op {
		case mRead:
			src := nd.cl.reals
			for l, p := range st.pos[nd.at][:n] {
				r[l] = src[p]
			}
		case mInv:
			v, ok := nd.invariant(fr)
			if !ok {
				return false
			}
			for l := range r {
				r[l] = v
			}
		case mIf:
			ok := nd.cond(fr)
			if fr.err != nil {
				return false
			}
			if !ok {
				clear(r)
				break
			}
			copy(r, st.regs[nd.a][:n])
		case mNeg:
			for l, x := range st.regs[nd.a][:n] {
				r[l] = -x
			}
		case mAdd:
			for l, x := range st.regs[nd.a][:n] {
				r[l] = x + st.regs[nd.b][l]
			}
		case mSub:
			for l, x := range st.regs[nd.a][:n] {
				r[l] = x - st.regs[nd.b][l]
			}
		case mMul:
			for l, x := range st.regs[nd.a][:n] {
				r[l] = x * st.regs[nd.b][l]
			}
		}
	}
	return true
}

// each adds the terms of the merge of two nonempty segments that fit one
// by one at key k of b, the interpreter's additions into a dictionary
// (dense: into b's dense row in place, k inside it and listed); false,
// with nothing added, when a batch cannot be evaluated (the closure path
// then finds the interpreter's result or error).
func (m *nmerge) each(fr *frame, a1, a2 []int64, l1, h1, l2, h2 int64, b *builder, k int64, dense bool) bool {
	a, bb := a1[l1:h1], a2[l2:h2]
	if len(m.reads[2]) == 0 {
	} else if lo, hi := max(a[0], bb[0]), min(a[len(a)-1], bb[len(bb)-1]); lo <= hi && !fits(m.reads[2], hi+1) || lo < 0 {
		// A pair's key past an array read at it. (Checked for all the
		// pairs at once: the invariants, evaluated alike for every
		// batch, fail on the first or not at all, so no batch fails
		// once one has added its terms.)
		return false
	}
	if len(m.prog) <= len(scalarRegs{}) {
		return m.eachPair(fr, a, bb, l1, l2, b, k, dense)
	}
	st := fr.mstate(m)
	var ps pairs
	for first := true; ; first = false {
		n := ps.fill(a, bb, l1, l2, st.pos[0], st.pos[1], st.pos[2])
		if n == 0 {
			return true
		}
		if !m.eval(fr, st, n) {
			fr.err = nil
			return !first
		}
		for l, x := range st.regs[len(m.prog)-1][:n] {
			switch {
			case m.keyed:
				b.addReal(st.pos[m.kat][l], x)
			case dense:
				b.reals[k] += x
			default:
				b.addReal(k, x)
			}
		}
	}
}

// mergeVarIn reports whether a variable of merge e is among fv.
func mergeVarIn(fv map[string]bool, e *ir.Expr) bool {
	return fv[e.Vars[0]] || fv[e.Vars[1]] || fv[e.Vars[2]]
}

// lowerMergeInto lowers merge(...) { k -> v }, a merge adding a real
// term per pair at a key k it does not bind into a dense real row, as a
// singleton statement whose sum is the merge of v: its accumulator
// starts at the row's entry at k and the terms are added to it one by
// one, the interpreter's additions into the entry. Nil for another
// merge.
func (c *compiler) lowerMergeInto(e *ir.Expr, lb loopBody) *nstmt {
	sg := e.Args[2]
	if lb.spec == nil || lb.spec.depth != 1 || !lb.spec.dense || !lb.spec.real || sg.Op != ir.OpSingleton || e.Args[1].Op == ir.OpRange {
		return nil
	}
	key, vt := sg.Args[0], c.typeOf(e).Elem()
	if key.Op != ir.OpVar || mergeVarIn(map[string]bool{key.Name: true}, e) || vt.Depth != 0 || vt.Base != ir.Real {
		return nil
	}
	k := c.keyFn(key) // a variable: it cannot fail
	general := c.compileMerge(e, lb)
	acc := c.newSlot(vt)
	sum := &ir.Expr{Op: ir.OpMerge, Vars: e.Vars, Args: []*ir.Expr{e.Args[0], e.Args[1], sg.Args[1]}, Type: vt, Pos: e.Pos}
	inner := c.nestLoop(sum, scalarBody(vt, acc))
	if inner == nil {
		c.noNest("inner loop: " + c.lastWhy)
	}
	inner.nest.info.sink = "the dense row's entry at " + key.Name + ", the terms added to it in the pairs' order"
	return &nstmt{kind: stSingle, key: k.i, keyE: key, loop: inner.nest, accF: acc, accI: -1, into: general}
}

// mergeInto runs a singleton statement of lowerMergeInto at key k of b.
func (s *nstmt) mergeInto(fr *frame, b *builder, k int64) {
	if out := b.reals; uint64(k) < uint64(len(out)) && (b.ws == nil || out[k] != 0) {
		fr.f[s.accF] = out[k]
		if s.loop.merge.run(fr, nil); fr.err == nil {
			out[k] = fr.f[s.accF]
		}
		return
	}
	// A key past the row, or one a workspace has yet to list: the terms
	// are added one by one.
	m := s.loop.merge
	s0, s1 := m.seg[0], m.seg[1]
	l1, h1, ok1 := s0.inPlace(fr)
	l2, h2, ok2 := s1.inPlace(fr)
	switch {
	case ok1 && ok2 && (l1 == h1 || l2 == h2):
	case !ok1 || !ok2 || !m.fit(fr, 0, l1, h1) || !m.fit(fr, 1, l2, h2) || !m.each(fr, s0.arr.ints, s1.arr.ints, l1, h1, l2, h2, b, k, false):
		s.into(fr, b)
	}
}

// rowMerge runs a loop whose body is one singleton whose value is a
// merge (SDDMM and MTTKRP with CSR factors, a row of merges over an
// index array's keys): the merge's operand whose bounds do not move with
// the loop is read and checked once per run, and per iteration only the
// other one; the key, the loop's own variable, is read from its slot;
// the sum goes into a dense row in place.
type rowMerge struct {
	s       *nstmt
	m       *nmerge
	fixed   int // the operand that does not move with the loop, or -1
	keySlot int // the frame slot of the key, or -1 (computed)
	// keyed: the other operand is the row of the loop's value (an index
	// array's key), read without the frame; an iteration whose merge
	// has no pairs and adds nothing is then passed over before the
	// frame's slots are set.
	keyed bool
	mv    int // the operand read per iteration (with fixed < 0, both: 0)
	// post: the statement's factors applied to the merge's sum (s.post)
	// as a program of reads at the frame's slots, or nil
	post []pnode
	// chain: post is a left-deep product of leaves: leaf, leaf, mul,
	// leaf, mul, ...
	chain bool
	// idle: keyed with a fixed operand, and a merge without pairs adds
	// nothing (no factors apply to its sum)
	idle bool
	// dotKeyed: keyed with a fixed operand, the merge a merge-dot, its
	// sum added at the loop's key or position times a chain of factors
	// or alone (dotRows)
	dotKeyed bool
	// index: with dotKeyed and the moving operand second, the tables
	// over its rows that tell a seek where to start (seekIndex), or nil
	index *seekIndex
}

// rowMergeOf returns the rowMerge of loop nl over sink lb, or nil.
func (c *compiler) rowMergeOf(nl *nloop, lb loopBody) *rowMerge {
	s := nl.stmt
	if nl.flat != nil || nl.up != nil || nl.kind == itDict || s == nil || s.kind != stSingle || s.child != nil ||
		s.loop == nil || s.loop.merge == nil || s.loop.merge.rlo != nil || s.loop.merge.guard != nil || s.accF < 0 || lb.spec == nil || !lb.spec.real || lb.spec.depth != 1 {
		return nil
	}
	r := &rowMerge{s: s, m: s.loop.merge, fixed: -1, keySlot: -1}
	defer func() {
		if r.mv = 1 - r.fixed; r.fixed < 0 {
			r.mv = 0
		}
	}()
	on := func(slot int) bool { return slot >= 0 && (slot == nl.ks || slot == nl.vs) }
	for i := 1; i >= 0; i-- {
		if sb := r.m.seg[i]; !on(sb.loSlot) && !on(sb.hiSlot) {
			r.fixed = i
		}
	}
	if f := r.fixed; f >= 0 && nl.kind != itRange && !nl.vreal && nl.vs >= 0 {
		sb := r.m.seg[1-f]
		r.keyed = sb.loSlot == nl.vs && sb.hiSlot == nl.vs
	}
	if s.postE != nil {
		r.post = c.postProg(s.postE, fmt.Sprintf("sum·%d", s.accF), nil)
		r.chain = isChain(r.post)
	}
	r.idle = r.keyed && (s.into != nil || s.post == nil)
	if k := s.keyE; k.Op == ir.OpVar {
		switch e := nl.e; {
		case k.Name == e.Vars[1] && nl.vs >= 0 && !nl.vreal:
			r.keySlot = nl.vs
		case k.Name == e.Vars[0] && k.Name != e.Vars[1] && nl.ks >= 0:
			r.keySlot = nl.ks
		}
	}
	r.dotKeyed = r.keyed && r.m.dot && s.into == nil && (s.post == nil || r.chain) && r.keySlot >= 0 && (r.keySlot == nl.ks || r.keySlot == nl.vs)
	if r.dotKeyed && r.fixed == 0 && !seekIndexOff {
		r.index = c.seekIndexOf(r.m.seg[1])
	}
	return r
}

// run runs iterations lo..hi-1 of nl into b; false, with nothing run,
// when the fixed operand does not fit (the statements then find what is
// wrong).
func (r *rowMerge) run(fr *frame, nl *nloop, lo, hi int64, b *builder, rs *[2]segReader, up *upVars) bool {
	s, f, mv := r.s, r.fixed, r.mv
	var seg [2][2]int64
	if f >= 0 {
		l, h, ok := rs[f].at(up.slot(fr, rs[f].loSlot), up.slot(fr, rs[f].hiSlot))
		if !ok || !rs[f].fit(l, h) {
			return false
		}
		seg[f] = [2]int64{l, h}
	}
	if r.dotKeyed {
		up.bind(fr) // (the factors may read the loops around)
		return r.dotRows(fr, nl, lo, hi, b, rs, seg)
	}
	arr := nl.arr
	if nl.kind == itRange {
		arr = nil
	}
	keyed := r.keyed
	var keys []int64
	rm := &rs[mv]
	none := false // the fixed operand is empty
	if keyed {
		keys, none = arr.ints, seg[f][0] == seg[f][1]
	}
	for p := lo; p < hi; p++ {
		var l, h int64
		var ok bool
		if keyed {
			j := keys[p]
			if l, h, ok = rm.at(j, j); ok && (none || l == h) && (s.into != nil || s.post == nil) {
				continue
			}
		}
		if r.iter(fr, nl, p, b, rs, up, seg, l, h, ok) {
			return true
		}
	}
	return true
}

// dotRows is run when every merge of the row is a merge-dot whose factors
// read the loop's position and key or what the frame holds: each
// iteration reads the moving operand's row, the merge-dot and the factors
// without the frame (SDDMM with CSR factors). An iteration it cannot run
// so (bounds out of order, a read past an array) goes to iter.
func (r *rowMerge) dotRows(fr *frame, nl *nloop, lo, hi int64, b *builder, rs *[2]segReader, seg [2][2]int64) bool {
	f, keys, post := r.fixed, nl.arr.ints, r.post
	rf, rm := &rs[f], &rs[r.mv]
	fl, fh := seg[f][0], seg[f][1]
	fa, fv := rf.ints[fl:fh], rf.vals[fl:]
	for p := lo; p < hi; p++ {
		j := keys[p]
		l, h, ok := rm.at(j, j)
		if !ok || !rm.fit(l, h) {
			if r.iter(fr, nl, p, b, rs, nil, seg, l, h, ok) {
				return true
			}
			continue
		}
		v := 0.0
		switch {
		case l == h || fl == fh:
		case f == 0:
			ri, tab := r.index.row(j)
			v = dotMerge(fa, rm.ints[l:h], fv, rm.vals[l:], 0, ri, tab)
		default:
			v = dotMerge(rm.ints[l:h], fa, rm.vals[l:], fv, 0, nil, nil)
		}
		if post == nil {
			if v == 0 { // (a zero sum is no entry either)
				continue
			}
		} else {
			x, ok := post[0].leafAt(fr, v, p, j, nl.ks, nl.vs)
			for i := 1; ok && i < len(post); i += 2 {
				var y float64
				y, ok = post[i].leafAt(fr, v, p, j, nl.ks, nl.vs)
				x *= y
			}
			if !ok {
				if r.iter(fr, nl, p, b, rs, nil, seg, l, h, true) {
					return true
				}
				continue
			}
			v = x
		}
		k := j
		if r.keySlot == nl.ks {
			k = p
		}
		if out := b.reals; uint64(k) < uint64(len(out)) && (b.ws == nil || out[k] != 0) {
			out[k] += v
		} else {
			b.addReal(k, v)
		}
	}
	return true
}

// iter runs iteration p of nl into b, seg holding the fixed operand's
// segment and, keyed, l:h the moving one's (ok: its bounds were in
// order); true when it stopped at an error.
func (r *rowMerge) iter(fr *frame, nl *nloop, p int64, b *builder, rs *[2]segReader, up *upVars, seg [2][2]int64, l, h int64, ok bool) bool {
	m, s, f, mv := r.m, r.s, r.fixed, r.mv
	if r.idle && ok && l < h && rs[mv].fit(l, h) {
		// Two sorted segments whose key ranges do not meet have no
		// pairs: nothing to add, and nothing to set in the frame.
		a, c := &rs[f], &rs[mv]
		fl, fh := seg[f][0], seg[f][1]
		if fl < fh && (a.ints[fh-1] < c.ints[l] || c.ints[h-1] < a.ints[fl]) {
			return false
		}
	}
	arr := nl.arr
	if nl.kind == itRange {
		arr = nil
	}
	up.bind(fr)
	setIterVars(fr, nl.ks, nl.vs, arr, nl.vreal, p)
	var k int64
	if r.keySlot >= 0 {
		k = fr.i[r.keySlot]
	} else if k = s.key(fr); fr.err != nil {
		return true
	}
	if !r.keyed {
		l, h, ok = rs[mv].read(fr)
	}
	seg[mv] = [2]int64{l, h}
	if f < 0 {
		l, h, in := rs[1].read(fr)
		ok = ok && in
		seg[1] = [2]int64{l, h}
	}
	l1, h1, l2, h2 := seg[0][0], seg[0][1], seg[1][0], seg[1][1]
	pairs := ok && l1 < h1 && l2 < h2
	if !ok || pairs && (f != 0 && !rs[0].fit(l1, h1) || f != 1 && !rs[1].fit(l2, h2)) {
		// The statements find what is wrong, or run the closure
		// path's merge.
		nl.exec(fr, s, b)
		return fr.err != nil
	}
	if !pairs && (s.into != nil || s.post == nil) {
		// A merge without pairs adds a zero (no entry) unless
		// factors apply to it (0 times an infinity is NaN).
		return false
	}
	out := b.reals
	dense := uint64(k) < uint64(len(out)) && (b.ws == nil || out[k] != 0)
	if s.into != nil {
		if !m.each(fr, rs[0].ints, rs[1].ints, l1, h1, l2, h2, b, k, dense) {
			s.into(fr, b)
		}
		return fr.err != nil
	}
	had, v := false, 0.0
	switch {
	case pairs && m.dot:
		v = dotMerge(rs[0].ints[l1:h1], rs[1].ints[l2:h2], rs[0].vals[l1:], rs[1].vals[l2:], 0, nil, nil)
		had = v != 0 // (a zero sum is no entry either)
	case pairs:
		fr.f[m.acc] = 0
		if had = m.pairs(fr, l1, h1, l2, h2); fr.err != nil {
			s.preErr(fr)
			return true
		}
		v = fr.f[m.acc]
	}
	if !had && s.post == nil {
		return false
	}
	if s.post != nil {
		x, ok := 0.0, false
		if r.chain && len(r.post) == 3 {
			// f0 * f1, the commonest (a value times the sum), inline
			var y float64
			x, ok = r.post[0].leaf(fr, v)
			y, ok2 := r.post[1].leaf(fr, v)
			x, ok = x*y, ok && ok2
		} else {
			x, ok = r.postOf(fr, v)
		}
		if ok {
			v = x
		} else {
			fr.f[s.accF] = v
			if v = s.post(fr); fr.err != nil {
				return true
			}
		}
	}
	if dense {
		out[k] += v
	} else {
		b.addReal(k, v)
	}
	return false
}

// rowsLoop returns the inner loop when nl's body, behind guards the
// facts discharged for this run (decided), is one loop over a segment
// read in place whose body is one merge into a row (rowMerge); else nil.
func (nl *nloop) rowsLoop(fr *frame) *nloop {
	if nl.kind == itDict || nl.kind == itRuns {
		return nil
	}
	s := nl.stmt
	for ; s.kind == stGuard; s = s.next {
		if s.proof == nil || fr.i[s.proof.slot] == 0 {
			return nil
		}
	}
	if s.kind != stLoop || s.loop.mrow == nil || s.loop.mrow.m.row == nil {
		return nil
	}
	return s.loop
}

// runRows runs iterations lo..hi-1 of nl, whose body is the loop in of
// rowsLoop: MTTKRP's loop over B's fibers (i,k,:) around the loop over
// C's row k. Each iteration opens the inner loop's segment in place and
// runs the rows of merges directly.
func (nl *nloop) runRows(fr *frame, in *nloop, lo, hi int64, b *builder) {
	arr := nl.arr
	if nl.kind == itRange {
		arr = nil
	}
	m := in.mrow.m
	rs := m.readersOf(fr)
	sr := fr.mst[m.id].row
	keyed := arr != nil && !nl.vreal && nl.vs >= 0 && sr.loSlot == nl.vs && sr.hiSlot == nl.vs
	var keys []int64
	if keyed {
		keys = arr.ints
	}
	r := in.mrow
	var rf, rm *segReader
	var ikeys []int64
	if r.idle {
		rf, rm, ikeys = &rs[r.fixed], &rs[r.mv], in.arr.ints
	}
	for p := lo; p < hi; p++ {
		var l, h int64
		var ok bool
		up := upVars{nl: nl, p: p}
		if keyed {
			// An empty row is passed over, and the frame's slots are
			// set only once a merge has work.
			k := keys[p]
			if l, h, ok = sr.at(k, k); ok && l == h {
				continue
			}
		} else {
			up.bind(fr)
			l, h, ok = sr.read(fr)
		}
		if !ok {
			// The bounds' closures report what is wrong.
			up.bind(fr)
			if l, h, ok = in.open(fr); !ok {
				if fr.err != nil {
					return
				}
				continue
			}
		}
		if l < h && r.idle {
			// Rows of merges that add nothing are passed over without
			// a call: the fixed operand fits and is empty, or every
			// moving operand's row in l..h is empty. (Bounds out of
			// order make the run find what is wrong.)
			fl, fh, fok := rf.at(up.slot(fr, rf.loSlot), up.slot(fr, rf.hiSlot))
			if fok && rf.fit(fl, fh) {
				var seg [2][2]int64
				seg[r.fixed] = [2]int64{fl, fh}
				var fk0, fk1 int64 // the fixed operand's first and last keys
				if fl < fh {
					fk0, fk1 = rf.ints[fl], rf.ints[fh-1]
				}
				for q := l; q < h; q++ {
					j := ikeys[q]
					ml, mh, mok := rm.at(j, j)
					if mok && (fl == fh || ml == mh || rm.fit(ml, mh) && (rm.ints[mh-1] < fk0 || fk1 < rm.ints[ml])) {
						// Empty, or sorted key ranges that do not meet:
						// no pairs.
						continue
					}
					if r.iter(fr, in, q, b, rs, &up, seg, ml, mh, mok) {
						return
					}
				}
				continue
			}
		}
		if l < h && !r.run(fr, in, l, h, b, rs, &up) {
			up.bind(fr)
			in.run(fr, l, h, b)
		}
		if fr.err != nil {
			return
		}
	}
}

// scalarRegs are the registers of a body evaluated one pair at a time.
type scalarRegs [16]float64

// arith sets register x to op (mNeg, mAdd, mSub or mMul) of registers a
// and b.
func (r *scalarRegs) arith(op mop, x, a, b int) {
	switch op {
	case mNeg:
		r[x] = -r[a]
	case mAdd:
		r[x] = r[a] + r[b]
	case mSub:
		r[x] = r[a] - r[b]
	case mMul:
		r[x] = r[a] * r[b]
	}
}

// eachPair is each with the body evaluated pair by pair, which costs
// less than a batch when the merges hold a pair or two (MTTKRP's fibers
// against a sparse factor's rows); the invariants and tests of the loop
// around are evaluated once, at the first pair.
func (m *nmerge) eachPair(fr *frame, a, bb []int64, l1, l2 int64, b *builder, k int64, dense bool) bool {
	var ps pairs
	i, j, ok := ps.next(a, bb)
	if !ok {
		return true // (most merges of short rows meet nothing)
	}
	var regs scalarRegs
	var holds [len(scalarRegs{})]bool
	for first := true; ok; i, j, ok = ps.next(a, bb) {
		at := [3]int64{l1 + int64(i), l2 + int64(j), a[i]}
		x, ok := m.term(fr, &regs, &holds, at, first)
		switch {
		case !ok:
			return false
		case m.keyed:
			b.addReal(at[m.kat], x)
		case dense:
			b.reals[k] += x
		default:
			b.addReal(k, x)
		}
		first = false
	}
	return true
}

// term evaluates the body at one pair (its positions and key at), the
// invariants and tests into regs and holds at the first pair only; false
// when an invariant or a test fails.
func (m *nmerge) term(fr *frame, regs *scalarRegs, holds *[len(scalarRegs{})]bool, at [3]int64, first bool) (float64, bool) {
	for x := range m.prog {
		nd := &m.prog[x]
		switch nd.op {
		case mRead:
			regs[x] = nd.cl.reals[at[nd.at]]
		case mInv:
			if first {
				var ok bool
				if regs[x], ok = nd.invariant(fr); !ok {
					return 0, false
				}
			}
		case mIf:
			if first {
				if holds[x] = nd.cond(fr); fr.err != nil {
					fr.err = nil
					return 0, false
				}
			}
			regs[x] = 0
			if holds[x] {
				regs[x] = regs[nd.a]
			}
		default:
			regs.arith(nd.op, x, nd.a, nd.b)
		}
	}
	return regs[len(m.prog)-1], true
}

// segReader is a segBounds's fields as a loop reads them, for a read of
// the bounds that inlines.
type segReader struct {
	lo, hi         []int64
	loSlot, hiSlot int
	loOff, hiOff   int64
	n              uint64
	desc           []int32   // the array's descents (cell.sortedSegment)
	sorted         bool      // every segment is sorted (segBounds.sorted)
	reads          int64     // the shortest array read at the segment's positions
	ints           []int64   // the array
	vals           []float64 // a merge-dot's values read at the positions
}

func (s *segBounds) reader() segReader {
	return segReader{s.lo.ints, s.hi.ints, s.loSlot, s.hiSlot, s.loOff, s.hiOff, uint64(s.arr.n), s.arr.descents, s.sorted(), math.MaxInt64, s.arr.ints, nil}
}

// fit is nmerge.fit for a segment l:h read by s.
func (s *segReader) fit(l, h int64) bool {
	return h <= s.reads && (s.sorted || h-l < 2 || s.desc[h-1] == s.desc[l])
}

// readersOf returns the operands' segReaders for frame fr.
func (m *nmerge) readersOf(fr *frame) *[2]segReader {
	st := fr.mstate(m)
	if !st.rsOK {
		st.rs, st.rsOK = m.readers(), true
		if r := m.row; r != nil {
			st.row = r.reader()
		}
	}
	return &st.rs
}

// readers are the operands' segReaders for a run (their arrays are bound
// per run).
func (m *nmerge) readers() (rs [2]segReader) {
	for i, sb := range m.seg {
		rs[i] = sb.reader()
		for _, cl := range m.reads[i] {
			rs[i].reads = min(rs[i].reads, int64(len(cl.reals)))
		}
	}
	if m.dot {
		rs[0].vals, rs[1].vals = m.x1.reals, m.x2.reals
	}
	return rs
}

// read is segBounds.inPlace.
func (s *segReader) read(fr *frame) (int64, int64, bool) {
	return s.at(fr.i[s.loSlot], fr.i[s.hiSlot])
}

// at is read with x and y the values of the slots of the lower and
// upper bound.
func (s *segReader) at(x, y int64) (int64, int64, bool) {
	kl, kh := uint64(x+s.loOff), uint64(y+s.hiOff)
	if kl < uint64(len(s.lo)) && kh < uint64(len(s.hi)) {
		if l, h := s.lo[kl], s.hi[kh]; uint64(h) <= s.n && uint64(l) <= uint64(h) { // 0 <= l <= h <= n
			return l, h, true
		}
	}
	return 0, 0, false
}

// pnode is a node of a program of factors applied to a sum: mRead reads
// cl at the int slot, mInv is the sum (slot -1) or the real slot, and
// mNeg, mAdd, mSub, mMul as in a merge body.
type pnode struct {
	op   mop
	cl   *cell
	slot int
	a, b int
}

// postProg compiles the real expression e, in which the variable sum is
// a merge's sum, into a program appended to p, or returns nil when e has
// another node.
func (c *compiler) postProg(e *ir.Expr, sum string, p []pnode) []pnode {
	if e.Type.Base != ir.Real || e.Type.Depth != 0 || len(p) >= len(scalarRegs{}) {
		return nil
	}
	n := pnode{slot: -1}
	switch e.Op {
	case ir.OpVar:
		n.op = mInv
		if e.Name != sum {
			b, ok := c.lookupVar(e.Name)
			if !ok || b.slot < 0 || b.t != ir.RealType {
				return nil
			}
			n.slot = b.slot
		}
	case ir.OpLookup:
		cl, slot := c.arrayAtSlot(e)
		if cl == nil {
			return nil
		}
		n = pnode{op: mRead, cl: cl, slot: slot}
	case ir.OpNeg:
		if p = c.postProg(e.Args[0], sum, p); p == nil {
			return nil
		}
		n = pnode{op: mNeg, a: len(p) - 1}
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		if p = c.postProg(e.Args[0], sum, p); p == nil {
			return nil
		}
		a := len(p) - 1
		if p = c.postProg(e.Args[1], sum, p); p == nil {
			return nil
		}
		n = pnode{op: map[ir.Op]mop{ir.OpAdd: mAdd, ir.OpSub: mSub, ir.OpMul: mMul}[e.Op], a: a, b: len(p) - 1}
	default:
		return nil
	}
	return append(p, n)
}

// postOf applies r.post to the sum v; false when there is no program or
// a read falls outside its array (the closure reports it).
func (r *rowMerge) postOf(fr *frame, v float64) (float64, bool) {
	if r.post == nil {
		return 0, false
	}
	if r.chain {
		// ((f0 * f1) * f2) ..., each factor a leaf: f0 at 0, the others
		// at the odd places.
		x, ok := r.post[0].leaf(fr, v)
		for i := 1; ok && i < len(r.post); i += 2 {
			var f float64
			f, ok = r.post[i].leaf(fr, v)
			x *= f
		}
		return x, ok
	}
	var regs scalarRegs
	for x := range r.post {
		nd := &r.post[x]
		if nd.op == mRead || nd.op == mInv {
			var ok bool
			if regs[x], ok = nd.leaf(fr, v); !ok {
				return 0, false
			}
			continue
		}
		regs.arith(nd.op, x, nd.a, nd.b)
	}
	return regs[len(r.post)-1], true
}

// isChain reports whether program p is leaf, leaf, mul, leaf, mul, ...,
// each mul of the one before it and the leaf before it.
func isChain(p []pnode) bool {
	if len(p) < 3 || len(p)%2 == 0 {
		return false
	}
	leaf := func(n pnode) bool { return n.op == mRead || n.op == mInv }
	if !leaf(p[0]) {
		return false
	}
	for i := 1; i+1 < len(p); i += 2 {
		if !leaf(p[i]) || p[i+1].op != mMul || p[i+1].a != i-1 || p[i+1].b != i {
			return false
		}
	}
	return true
}

// leafAt is leaf in a loop whose position p and key j are not in the
// frame's slots ks and vs.
func (nd *pnode) leafAt(fr *frame, v float64, p, j int64, ks, vs int) (float64, bool) {
	if nd.op != mRead {
		return nd.leaf(fr, v)
	}
	var k int64
	switch nd.slot {
	case ks:
		k = p
	case vs:
		k = j
	default:
		k = fr.i[nd.slot]
	}
	if uint64(k) >= uint64(len(nd.cl.reals)) {
		return 0, false
	}
	return nd.cl.reals[k], true
}

// leaf is the value of a leaf of a post program, v the sum; false when
// a read falls outside its array.
func (nd *pnode) leaf(fr *frame, v float64) (float64, bool) {
	switch {
	case nd.op == mRead:
		k := fr.i[nd.slot]
		if uint64(k) >= uint64(len(nd.cl.reals)) {
			return 0, false
		}
		return nd.cl.reals[k], true
	case nd.slot >= 0:
		return fr.f[nd.slot], true
	}
	return v, true
}

// invariant is the value of an mInv node; false when it cannot be had
// (the closure path then finds the interpreter's error, if any).
func (nd *mnode) invariant(fr *frame) (float64, bool) {
	if nd.slot >= 0 {
		k := fr.i[nd.slot]
		if uint64(k) >= uint64(len(nd.cl.reals)) {
			return 0, false
		}
		return nd.cl.reals[k], true
	}
	v := nd.inv(fr)
	if fr.err != nil {
		fr.err = nil
		return 0, false
	}
	return v, true
}

// arrayAtSlot returns the real array and the int slot of e when e reads a
// real array at a variable held in a slot, or nil.
func (c *compiler) arrayAtSlot(e *ir.Expr) (*cell, int) {
	if e.Op != ir.OpLookup || e.Args[0].Op != ir.OpGlobal || e.Args[1].Op != ir.OpVar {
		return nil, -1
	}
	b, ok := c.lookupVar(e.Args[1].Name)
	if cl := c.cell(e.Args[0]); ok && b.slot >= 0 && b.t == ir.IntType && cl.info.Kind == ir.ObjArray && cl.info.Elem == ir.Real {
		return cl, b.slot
	}
	return nil, -1
}

// upVars are the variables of the loop around a row of merges at its
// position p, set in the frame only once something reads them there.
type upVars struct {
	nl  *nloop
	p   int64
	set bool
}

// bind sets the variables in the frame (u nil: they are set).
func (u *upVars) bind(fr *frame) {
	if u != nil && !u.set {
		u.nl.setVars(fr, u.p)
		u.set = true
	}
}

// slot is the value of int slot i, read from u while it is not set.
func (u *upVars) slot(fr *frame, i int) int64 {
	if u != nil && !u.set {
		// (Only a loop over an int array's positions leaves them unset.)
		switch {
		case i == u.nl.ks:
			return u.p
		case i == u.nl.vs && !u.nl.vreal:
			return u.nl.arr.ints[u.p]
		}
	}
	return fr.i[i]
}
