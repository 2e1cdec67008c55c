package engine

import "github.com/storel/storel/ir"

// Runs of equal values of an int array, found while walking: a sorted
// COO level (storage's mapping of coo) is walked as sum(<p, i> in
// runs(A(lo:hi))), one iteration per run, p its first position and i its
// value, and the run's positions are p:runend(A, p, hi). Nothing is
// stored at load; the walk reads each position of the window once to
// find the next run, as a walk of its entries would.

// runsArray returns the cell and window of runs(A(lo:hi)) or runs(A).
func (c *compiler) runsArray(src *ir.Expr) (*cell, func(fr *frame) (int64, int64, bool)) {
	if src.Op != ir.OpCall || src.Name != "runs" || len(src.Args) != 1 {
		return nil, nil
	}
	w := src.Args[0]
	g := w
	if w.Op == ir.OpSubArray {
		g = w.Args[0]
	}
	if g.Op != ir.OpGlobal {
		return nil, nil
	}
	cl := c.cell(g)
	if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Int {
		return nil, nil
	}
	if w.Op == ir.OpSubArray {
		return cl, c.window(w, cl)
	}
	return cl, func(*frame) (int64, int64, bool) { return 0, int64(len(cl.ints)), true }
}

// runEnd returns the position after the run of a's values that starts
// at p, at most hi.
func runEnd(a []int64, p, hi int64) int64 {
	if p >= hi {
		return p
	}
	v := a[p]
	q := p + 1
	for q < hi && a[q] == v {
		q++
	}
	return q
}

// runStart returns the first run that starts at or after p in window
// lo:hi of a: p itself unless p continues the run before it.
func runStart(a []int64, lo, p, hi int64) int64 {
	if p <= lo || p >= hi || a[p] != a[p-1] {
		return p
	}
	return runEnd(a, p, hi)
}

// runSlots are the frame slots where a loop over the runs of arr keeps
// the end of its current run and the bound it read up to.
type runSlots struct {
	arr     *cell
	end, hi int
}

// runSlotsOf allocates the run slots of a loop over the runs of cl whose
// position is in slot ks; none (-1) when the position is unused.
func (c *compiler) runSlotsOf(cl *cell, ks int) runSlots {
	if ks < 0 {
		return runSlots{end: -1, hi: -1}
	}
	rs := runSlots{arr: cl, end: c.newSlot(ir.IntType), hi: c.newSlot(ir.IntType)}
	if c.runEnds == nil {
		c.runEnds = map[int]runSlots{}
	}
	c.runEnds[ks] = rs
	return rs
}

// set records the end e of the run the loop is at, found reading up to hi.
func (rs runSlots) set(fr *frame, e, hi int64) {
	if rs.end >= 0 {
		fr.i[rs.end], fr.i[rs.hi] = e, hi
	}
}

// runEnd compiles runend(A, p, hi). Where p is the position of an
// enclosing loop over A's runs, the loop has found the run's end.
func (c *compiler) runEnd(e *ir.Expr) cx {
	if len(e.Args) != 3 || e.Args[0].Op != ir.OpGlobal {
		c.bail(e, "runend needs an int array, a position and a bound")
	}
	cl := c.cell(e.Args[0])
	if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Int {
		c.bail(e, "runend needs an int array, not %s", describe(e.Args[0]))
	}
	p, hi := c.intExpr(e.Args[1], "run position"), c.intExpr(e.Args[2], "run bound")
	// As the interpreter: p itself when p >= hi, else p must be one of
	// A's positions; the run stops at A's end whatever hi.
	scan := func(fr *frame, q, h int64) int64 {
		if q >= h {
			return q
		}
		if q < 0 || q >= int64(len(cl.ints)) {
			fr.fail(errAt(e, "runend: position %d is outside %s", q, ir.Format(e.Args[0])))
			return q
		}
		return runEnd(cl.ints, q, min(h, int64(len(cl.ints))))
	}
	if v := e.Args[1]; v.Op == ir.OpVar {
		if b, ok := c.lookupVar(v.Name); ok {
			if rs, ok := c.runEnds[b.slot]; ok && rs.arr == cl {
				return intCx(func(fr *frame) int64 {
					q, h := p(fr), hi(fr)
					end, read := fr.i[rs.end], fr.i[rs.hi]
					switch {
					case q >= h:
						return q
					case h <= read || end < read:
						// The run ends at end unless h cuts it.
						return min(end, h)
					}
					return scan(fr, q, h)
				})
			}
		}
	}
	return intCx(func(fr *frame) int64 { return scan(fr, p(fr), hi(fr)) })
}

// runsRun runs body once per run of cl's values whose first position is
// in st.lo+from..st.lo+to-1: a split run's chunk starts at the first run
// that starts in it and takes its last run whole.
func runsRun(cl *cell, ks, vs int, rs runSlots, body bodyFn) func(*frame, srcState, int64, int64, *builder) {
	return func(fr *frame, st srcState, from, to int64, b *builder) {
		a := cl.ints
		p := runStart(a, st.lo, st.lo+from, st.hi)
		end := st.lo + to
		for p < end {
			e := runEnd(a, p, st.hi)
			rs.set(fr, e, st.hi)
			setIterVars(fr, ks, vs, cl, false, p)
			body(fr, b)
			if fr.err != nil {
				return
			}
			p = e
		}
	}
}
