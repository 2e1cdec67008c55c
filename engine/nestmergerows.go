package engine

import (
	"fmt"
	"math"

	"github.com/storel/storel/ir"
)

// Merges whose pairs scatter rows. A sparse row of A against the rows of
// a B stored by its row keys (dcsr, or a coo whose runs of row keys the
// run layout walks, runwalk.go) meets B's rows by a merge, and each pair
// scatters one row of B, times a factor, into the result's row:
//
//	merge(<r, p, k> in <B·rk(lo:hi), A_idx2(A_pos2(i):A_pos2(i + 1))>)
//	  let t = A_val(p) in
//	  sum(<q, j> in B_idx2(B·rs(r):B·rs(r + 1))) { j -> B_val(q) * t }
//
// This is the Gustavson form of a loop over positions (rowsScatter,
// nestrows.go) with the merge's pairs in place of the positions: the
// pairs are found in batches as a merge into a scalar finds them
// (nestmerge.go), each pair's window index (a variable of the merge) and
// factor (the body's lets and factor, a merge program over the batch)
// are laid out per pair, and the batch's segments are scattered into the
// row by one call (scatterRows), with no call per pair. The row's sums
// are the interpreter's: every key's terms are added in the pairs' order.
//
// A pair whose window is off, or a batch whose factor cannot be
// evaluated, runs pair by pair through the closure path's body, which
// finds the interpreter's result or error; segments out of order or
// unsorted run the whole merge on the closure path's merge.

// pairRows is the scatter of an itMerge loop whose pairs scatter rows.
type pairRows struct {
	w        int   // the merge variable that is the window's index: 0 k1, 1 k2, 2 the key
	pos, idx *cell // the window P(w):P(w+1) of the index array I
	x        *cell // the values scattered, read at the window's positions
	slots    [3]int
	// fixed: the first operand's bounds read nothing that moves in a
	// run (B's row keys), so its seeks start from a table (fixedTable)
	fixed bool
	arr   [2]*cell // the operands' arrays
	open  [2]func(*frame) (int64, int64, bool)
	body  bodyFn // one pair's body on the closure path, its variables in slots
}

// lowerMergeRows lowers merge e, whose body is lets and then a sum over
// a window P(w):P(w+1) of an index array I adding x(q) * t at key I(q),
// into the dense real row lb; it declines any other merge.
func (c *compiler) lowerMergeRows(e *ir.Expr, lb loopBody) *nloop {
	if !lb.spec.dense || !lb.spec.real || lb.spec.depth != 1 || e.Args[1].Op == ir.OpRange {
		c.noNest("a merge into a dictionary other than a real entry per pair at a key the merge binds, or segments scattered into a dense real row")
	}
	m, r := &nmerge{id: c.nmerge, acc: -1}, &pairRows{}
	for i, src := range e.Args[:2] {
		// Any bounds: the operands open once per merge.
		if src.Op != ir.OpSubArray || src.Args[0].Op != ir.OpGlobal {
			c.noNest("a merge operand that is not a segment of an index array")
		}
		if r.arr[i] = c.cell(src.Args[0]); r.arr[i].info.Kind != ir.ObjArray || r.arr[i].info.Elem != ir.Int {
			c.noNest("a merge operand that is not a segment of an int array")
		}
		r.open[i], m.ops[i] = c.segment(src, r.arr[i])
	}
	r.fixed = len(ir.FreeVars(e.Args[0])) == 0
	for i, v := range e.Vars {
		r.slots[i] = c.bind(v, ir.IntType)
	}
	// The lets go into the factor and the window: they read no loop, so
	// where the batch evaluates them (every pair) the interpreter does.
	body, lets, unused := e.Args[2], map[string]*ir.Expr{}, []*ir.Expr{}
	for ; body.Op == ir.OpLet && len(body.Args) == 2 && !containsLoop(body.Args[0]); body = body.Args[1] {
		v := ir.Subst(body.Args[0], lets)
		if !ir.Occurs(body.Vars[0], body.Args[1]) {
			unused = append(unused, v)
		}
		lets[body.Vars[0]] = v
	}
	leaf := ir.Subst(body, lets)
	t := r.leaf(c, e, leaf)
	if t == nil || c.typeOf(t).Base != ir.Real {
		c.noNest("a merge whose pairs do other than scatter a segment times a real factor into the row")
	}
	for _, v := range unused {
		m.body(c, e, v) // evaluated for the reads' checks, as the interpreter evaluates it
	}
	m.body(c, e, t)
	// The closure paths, for what the batches do not take; their loops
	// are no nests of the kernel's own.
	n0 := len(c.nests)
	r.body = c.bodyOf(e.Args[2], lb)
	c.unbind(3)
	m.rows = r
	m.general = c.compileMerge(e, lb)
	c.nests = c.nests[:n0]
	c.nmerge++
	nl := &nloop{e: e, kind: itMerge, sink: lb, merge: m, ks: -1, vs: -1}
	nl.open = func(*frame) (int64, int64, bool) { return 0, 1, true }
	nl.info.iter = "merge (sorted intersection, galloping seeks) of " + ir.Format(e.Args[0]) + " and " + ir.Format(e.Args[1])
	nl.info.exec = fmt.Sprintf("matched pairs in batches of %d, each pair's window %s and factor %s, the batch's segments of %s scattered into the row by their keys (the row's dense workspace); a pair whose window is off through the closure path",
		mbatch, ir.Format(leaf.Args[0].Args[1]), ir.Format(t), r.idx.name)
	nl.info.sink = sinkName(lb)
	return nl
}

// leaf reads the sum that ends the body, sum(<q, j> in I(P(w):P(w+1)))
// { j -> x(q) * t } (or t * x(q)), w a variable of merge e and t reading
// neither q nor j: it sets r's arrays and window and returns t, or nil
// for another sum.
func (r *pairRows) leaf(c *compiler, e, s *ir.Expr) *ir.Expr {
	if s.Op != ir.OpSum || s.Vars[0] == s.Vars[1] {
		return nil
	}
	src, sg := s.Args[0], s.Args[1]
	if src.Op != ir.OpSubArray || src.Args[0].Op != ir.OpGlobal || sg.Op != ir.OpSingleton ||
		!isVarSlot(sg.Args[0], s.Vars[1]) || sg.Args[1].Op != ir.OpMul {
		return nil
	}
	lo, hi := src.Args[1], src.Args[2]
	if lo.Op != ir.OpLookup || hi.Op != ir.OpLookup || lo.Args[0].Op != ir.OpGlobal || ir.Format(lo.Args[0]) != ir.Format(hi.Args[0]) ||
		lo.Args[1].Op != ir.OpVar || ir.Format(hi.Args[1]) != ir.Format(ir.Binary(ir.OpAdd, lo.Args[1], ir.IntConst(1))) {
		return nil
	}
	if r.w = mergeVarAt(e, lo.Args[1].Name); r.w < 0 {
		return nil
	}
	readsLeaf := func(x *ir.Expr) bool { fv := ir.FreeVars(x); return fv[s.Vars[0]] || fv[s.Vars[1]] }
	a, b := sg.Args[1].Args[0], sg.Args[1].Args[1]
	if readsLeaf(a) {
		a, b = b, a
	}
	// b is x(q), a the factor
	if readsLeaf(a) || containsLoop(a) || b.Op != ir.OpLookup || b.Args[0].Op != ir.OpGlobal || !isVarSlot(b.Args[1], s.Vars[0]) {
		return nil
	}
	r.idx, r.pos, r.x = c.cell(src.Args[0]), c.cell(lo.Args[0]), c.cell(b.Args[0])
	for _, cl := range []*cell{r.idx, r.pos, r.x} {
		if cl.info.Kind != ir.ObjArray || cl != r.x && cl.info.Elem != ir.Int {
			return nil
		}
	}
	return a
}

// runRows adds the merge's rows into the dense real row b, and reports
// whether it had pairs.
func (m *nmerge) runRows(fr *frame, b *builder) bool {
	r := m.rows
	l1, h1, ok1 := r.open[0](fr)
	l2, h2, ok2 := r.open[1](fr)
	sorted := m.sortedOps(fr)
	fit := func(i int, l, h int64) bool {
		return (sorted[i] || r.arr[i].sortedSegment(l, h)) && fits(m.reads[i], h)
	}
	switch {
	case ok1 && ok2 && (l1 == h1 || l2 == h2):
		return false
	case !ok1 || !ok2 || !fit(0, l1, h1) || !fit(1, l2, h2) || b == nil || !b.spec.dense || !b.spec.real:
		fr.err = nil // the closure path's merge finds it again, in the interpreter's order
		m.general(fr, b)
		return true // perhaps
	}
	b.holdKeysOf(r.idx)
	st := fr.mstate(m)
	a, bb := r.arr[0].ints[l1:h1], r.arr[1].ints[l2:h2]
	var ps pairs
	if r.fixed && h1-l1 >= seekIndexFrom && h1-l1 <= math.MaxInt32 {
		ps.ix, ps.tab = st.fixed.of(a)
	}
	for {
		n := ps.fill(a, bb, l1, l2, st.pos[0], st.pos[1], st.pos[2])
		if n == 0 {
			nestSaw("merge rows scatter")
			return ps.any
		}
		if !m.eval(fr, st, n) {
			fr.err = nil
			for q := range n {
				if m.runLane(fr, int64(q), b); fr.err != nil {
					return true
				}
			}
			continue
		}
		ws, ts := st.pos[r.w][:n], st.regs[len(m.prog)-1][:n]
		if r.x.info.Elem == ir.Int {
			scatterRows(fr, m, r.pos.ints, r.idx.ints, r.idx.n, b, 0, ws, ts, r.x.ints)
		} else {
			scatterRows(fr, m, r.pos.ints, r.idx.ints, r.idx.n, b, 0, ws, ts, r.x.reals)
		}
		if fr.err != nil {
			return true
		}
	}
}

// runLane runs pair q of the frame's batch through the closure path's
// body.
func (m *nmerge) runLane(fr *frame, q int64, b *builder) {
	st, r := fr.mstate(m), m.rows
	for i, s := range r.slots {
		fr.i[s] = st.pos[i][q]
	}
	r.body(fr, b)
}

// fixedTable is a frame's table over a sorted segment a[l:h] that stays
// the same through a run (seekIndex's rowIndex): a merge of short rows
// against it (A's rows against B's row keys) starts each seek where the
// table says, usually at the key, not galloping from the last. The
// table only decides where a search starts, so the pairs and their
// order are seek's.
type fixedTable struct {
	ok  bool
	a   []int64 // the segment it was built for
	r   rowIndex
	tab []int32
}

// of returns the table of the sorted nonempty segment a, built at the
// first call of a run or when the segment changes.
func (t *fixedTable) of(a []int64) (*rowIndex, []int32) {
	if !t.ok || len(t.a) != len(a) || &t.a[0] != &a[0] {
		var size int64
		t.r, size = rowIndexOf(a, 0, int64(len(a)), 0)
		if int64(cap(t.tab)) < size {
			t.tab = make([]int32, size)
		}
		t.tab = t.tab[:size]
		t.r.fill(t.tab, a, 0, int64(len(a)))
		t.ok, t.a = true, a
	}
	return &t.r, t.tab
}
