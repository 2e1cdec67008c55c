package engine

import (
	"math"

	"github.com/storel/storel/ir"
)

// Rows of lifted ranges. A loop whose body is {j -> v}, v a lifted range
// (nestlift.go) into a dense row of reals, in a dictionary of rows in
// sequential mode (seqrows.go), opens a row per iteration: TTM's fibers
// (i, j), each a dense row of B's k computed as lanes over the fiber's
// entries. Through the builder each such row costs the statement
// dispatch, the row's opening (seqRow: the previous row closed, the next
// one started appending), the range's own checks and the room for its
// run (appendRun), then the run kept key by key (keepRun) and the row
// closed again: several times what the lanes of a fiber of one or two
// entries cost. So the loop runs its iterations itself: per iteration
// the range's lanes are written at the free end of the level's blocks,
// where the row is to stay, and the row is recorded closed at once; a
// row of lanes from key 0 with no zero (the common case) is recorded as
// the dense slice it is, with no key written. The rows, their bytes and
// their order are those of the builder's way. Where the rows' keys are
// the values the loop walks and each row's lanes are one inner loop
// whose bounds are read in place (a fiber: TTM's walk of one, MTTKRP's
// sum over a row's fibers), the rows run in blocks (liftRows.rows): a
// loop over the block's rows with no call or check per row beyond the
// inner loop's own (a walked fiber, after the first row, not even the
// loop's variables). Where the walked product is one value times lanes
// (TTM's A entry times B's row), the block's rows are staged and written
// a batch at a time (rowBatch): the walks run over the batch's
// positions walk by walk, then one loop writes its rows. So are rows
// each a sum over its fibers of such a product times the fiber's t
// (MTTKRP's B_val * D row * C row at k): t's lanes are staged per
// position from the fiber's (fibRows). The loop around such a loop, whose
// body opens a row of rows for it (TTM's i), runs it directly
// (runRowsOf): no statement dispatch per outer row; and where its
// iterations' inner iterations follow one another (a CSF level's), the
// walked rows of many of them run as one block (rowsAcross), the outer
// rows recorded after.
// An iteration the rows cannot take (a key not after the last row's,
// the row open or the mode left, a range too short or too long for
// lanes, a run of lanes that fails) runs the general way, which reports
// any error.

// liftRows is a loop whose body, after guards and lets of no loop, is a
// singleton (single) whose value is the lifted range k.
type liftRows struct {
	single *nstmt
	k      *nloop
	// block: the rows can run in blocks (rows): the singleton is the
	// loop's body and its key the value the loop walks (a CSF level's
	// coordinates), the range's bounds read no variable, and its lanes
	// are one inner loop (sum) with no guard or let before them, the
	// inner loop's bounds read in place (a fiber): the walked rows'
	// (walkedRows), or any other, MTTKRP's sum over a row's fibers
	// among them.
	block bool
	sum   *lsum
	// walked: the range's inner loop where its rows are walked
	// (walkedRows), or nil: a property of the plan, found once.
	walked *lsum
}

// liftRowsOf returns nl's liftRows, or nil when its body does not have
// that form.
func liftRowsOf(nl *nloop) *liftRows {
	s := nl.stmt
	for ; s != nil && (s.kind == stGuard || s.kind == stLet && s.loop == nil); s = s.next {
	}
	if s == nil || s.kind != stSingle || s.child == nil || s.scattered || s.child.depth != 1 || !s.child.dense || !s.child.real {
		return nil
	}
	in := s.next
	if in == nil || in.kind != stLoop || in.next != nil || in.loop.lift == nil || in.loop.kind != itRange {
		return nil
	}
	r := &liftRows{single: s, k: in.loop, walked: walkedRows(in.loop.lift.val)}
	l, key := in.loop.lift, s.keyE
	if l.val.op == lSum {
		r.sum = l.val.sum
	}
	r.block = s == nl.stmt && key.Op == ir.OpVar && key.Name == nl.e.Vars[1] && (nl.kind == itSegment || nl.kind == itArray) && !nl.vreal &&
		len(ir.FreeVars(in.loop.e.Args[0])) == 0 && len(l.tests) == 0 && len(l.steps) == 0 && r.sum != nil && r.sum.seg != nil
	return r
}

// runLiftRows runs iterations lo..hi-1 of nl, each row through the
// liftRows where it takes it, else the general way.
func (nl *nloop) runLiftRows(fr *frame, lo, hi int64, b *builder) {
	r := nl.liftRows
	if b == nil || b.spec.depth != 2 || b.x == nil {
		nl.runPerIteration(fr, lo, hi, b)
		return
	}
	s := fr.liftState(r.k)
	s.walked = r.walked
	nl.liftRowsIn(fr, lo, hi, b, s)
}

// rowsOfLifted returns the loop of lifted rows (runLiftRows) that nl's
// body, a singleton, opens a row of rows for (TTM's loop over i around
// its fibers (i, j)), or nil where the body is of another form or the
// inner loop would not run its rows by runLiftRows alone.
func rowsOfLifted(nl *nloop) *nloop {
	s := nl.stmt
	if nl.kind == itDict || nl.kind == itRuns || s == nil || s.kind != stSingle || s.child == nil || s.scattered ||
		s.next == nil || s.next.kind != stLoop || s.next.next != nil {
		return nil
	}
	if in := s.next.loop; in.liftRows != nil && in.onlyLiftRows() {
		return in
	}
	return nil
}

// onlyLiftRows reports whether run takes nl's iterations to runLiftRows
// whatever the frame, once the range is not empty.
func (nl *nloop) onlyLiftRows() bool {
	return nl.orig == nil && nl.merge == nil && nl.lift == nil && nl.vec == nil && len(nl.proofs) == 0 &&
		nl.flat == nil && nl.up == nil && nl.rowsc == nil && nl.mrow == nil && nl.kind != itDict && nl.kind != itRuns
}

// runRowsOf runs iterations lo..hi-1 of nl, whose body opens a row of
// rows that the loop rowsOf fills, as exec and run would: per iteration
// the key's row opened and the inner loop's rows run into it, with no
// statement dispatch or look-up of the lifted range's state. (Its rows
// arrive at most a few per iteration: TTM's 15 fibers per i on orghs.)
// Where the rows run in blocks, a block runs across iterations
// (rowsAcross); the iteration it stops in goes on from there this way.
func (nl *nloop) runRowsOf(fr *frame, lo, hi int64, b *builder) {
	in, single := nl.rowsOf, nl.stmt
	if b == nil || b.spec.depth != 3 || b.x == nil || !in.onlyLiftRows() {
		nl.runPerIteration(fr, lo, hi, b)
		return
	}
	r := in.liftRows
	s := fr.liftState(r.k)
	s.walked = r.walked
	for p := lo; p < hi; p++ {
		from := int64(-1) // the inner iteration p goes on from (-1: its first)
		if r.block && r.walked != nil {
			q, j := nl.rowsAcross(fr, p, hi, b, s)
			if q == hi || q > p && j < 0 {
				p = q - 1
				continue
			}
			p, from = q, j
		}
		nl.setVars(fr, p)
		k := single.key(fr)
		if fr.err != nil {
			return
		}
		ch := b.child(k)
		if j0, j1, ok := in.open(fr); ok && j0 < j1 {
			j0 = max(j0, from)
			if ch.spec.depth != 2 || ch.x == nil {
				in.runPerIteration(fr, j0, j1, ch)
			} else {
				in.liftRowsIn(fr, j0, j1, ch, s)
			}
		}
		if fr.err != nil {
			return
		}
	}
	nestSaw("rows of lifted rows")
}

// outerRows are the iterations of a block of rowsAcross: per iteration
// its key and the end of its inner iterations.
type outerRows struct {
	keys, ends [outerRowsLen]int64
}

// outerRowsLen is the most iterations of a block of rowsAcross.
const outerRowsLen = 128

// rowsAcross runs iterations p.. of nl (below hi), whose rows of rows the
// loop rowsOf fills with walked rows in blocks, as one block of its
// rows: the iterations' keys increasing and their inner iterations
// following one another (a CSF level's), the block runs them all
// (liftRows.rows, its order check starting again where an iteration's
// end), then records the iterations whose rows it ran as closeMid does.
// It returns the iteration it stopped in and the inner iteration to go
// on from there (that iteration's row of rows left open, as child would
// leave it), or -1 where no row of that iteration ran; hi where it ran
// them all. The rows' inner bounds must read the inner loop's key or
// value alone: the frame holds the last iteration's variables.
func (nl *nloop) rowsAcross(fr *frame, p, hi int64, b *builder, s *liftState) (int64, int64) {
	in := nl.rowsOf
	sq := b.x.seq
	c := &s.block
	if sq == nil || sq.outer == nil || c.n == 0 || !in.readsOwnSlots(c.rd) {
		return p, -1
	}
	o, ob := sq.outer, &s.outer
	n, last := 0, o.key
	var j0, j1 int64
	for q := p; q < hi && n < outerRowsLen; q++ {
		nl.setVars(fr, q)
		k := nl.stmt.key(fr)
		f0, f1, ok := in.open(fr)
		if fr.err != nil || !ok || k <= last || f0 > f1 || n > 0 && f0 != j1 {
			fr.err = nil
			break
		}
		if n == 0 {
			j0 = f0
		}
		ob.keys[n], ob.ends[n] = k, f1
		j1, last = f1, k
		n++
	}
	if n == 0 || !o.closeMid() {
		return p, -1
	}
	e := in.liftRows.rows(fr, in, o.mid, s, j0, j1, ob.ends[:n])
	base := len(sq.keys) - int(e-j0) // one row per inner iteration run
	if e > j0 {
		nestSaw("lifted rows across rows of rows")
	}
	sq.key = -1
	start := j0
	for a := range n {
		end := ob.ends[a]
		if e < end {
			if e == start {
				return p + int64(a), -1
			}
			o.key, o.live, sq.key = ob.keys[a], true, in.arr.ints[e-1]
			return p + int64(a), e
		}
		o.key = ob.keys[a]
		if end > start {
			o.record(base + int(end-j0))
		}
		start = end
	}
	return p + int64(n), -1
}

// readsOwnSlots reports whether rd reads bounds at nl's key or value
// alone.
func (nl *nloop) readsOwnSlots(rd segReader) bool {
	own := func(slot int) bool { return slot == nl.ks || slot == nl.vs }
	return own(rd.loSlot) && own(rd.hiSlot)
}

// liftRowsIn runs iterations lo..hi-1 of nl into b, a dictionary of
// rows, as runLiftRows does, s the lifted range's state.
func (nl *nloop) liftRowsIn(fr *frame, lo, hi int64, b *builder, s *liftState) {
	r := nl.liftRows
	end := hi // the positions of the level walked from here on
	if nl.kind == itSegment || nl.kind == itArray {
		end = max(end, int64(len(nl.arr.ints)))
	}
	for p := lo; p < hi; p++ {
		if r.block {
			if p = r.rows(fr, nl, b, s, p, hi, nil); p == hi {
				return
			}
		}
		nl.setVars(fr, p)
		if !r.row(fr, nl, b, s, end-p) {
			nl.exec(fr, nl.stmt, b)
		}
		if fr.err != nil {
			return
		}
	}
}

// rows runs iterations p.. of nl (below hi) into b as row does, a block
// of them in one loop: per row the key and the inner loop's bounds are read in
// place, its lanes written at the free end of the level's blocks and
// the row recorded as the dense slice it is, with no check or call that
// holds for every row of the block. Walked rows (s.walked), once the
// walks of the range's set-up are made (a row before went through row),
// have their positions walked into the lanes with no variable set;
// other inner loops run as values runs them (runSumIn), the loop's
// variables set and the run counted (gen) as row does. It returns the
// first iteration it did not run (p where the block cannot start): a
// key out of order, a fiber the walks cannot take, a run that fails, a
// row with a zero or with no room left go to row, the general way,
// which runs them from the start (a row's lanes are not recorded until
// all are written). The rows' keys must increase but where an iteration
// of ends starts (the rows of several rows of rows: rowsAcross).
func (r *liftRows) rows(fr *frame, nl *nloop, b *builder, s *liftState, p, hi int64, ends []int64) int64 {
	sq := b.x.seq
	l, kl, sum := s.walked, r.k, r.sum
	if sq == nil || sq.live || len(sq.chunks) == 0 {
		return p
	}
	w := sq.w
	if sq.cur.ws != w || sq.cur.spec.depth != 1 || w.appended != 0 {
		return p
	}
	// What holds for the whole run (the range's bounds, which read no
	// variable, the inner loop's reader, the walks' set-up at its
	// version) is checked at the first call and kept (s.block): the
	// loop calls rows once per row of the loop around it.
	c := &s.block
	if c.n == 0 {
		j0, j1, ok := kl.open(fr)
		if !ok || fr.err != nil || j0 != 0 || j1 < liftMin || j1 > liftLanes || j1-1 > narrowKeyLimit {
			fr.err = nil
			return p
		}
		c.n, c.rd = int(j1), sum.seg.reader()
	}
	n := c.n
	var q lprod
	var ws []atWalk
	if l != nil {
		ps := &s.setups[l.id]
		if !ps.walked || ps.ver != c.ver {
			if ps.gen == 0 || !ps.walked || ps.wj0 != 0 || ps.wn != n || ps.nw < 0 {
				return p
			}
			for i, f := range l.prod.fs {
				if f != nil && ps.majors[i] == nil && copiesAcross(f.cl.reals, ps.strides[i]) {
					return p
				}
			}
			c.ver, c.one = ps.ver, false
			// Where the product is one value times lanes (TTM's A
			// entry times B's row), the rows are staged (rb) and
			// written in one loop a batch (flush): its walks and
			// views, set here once for the set-up's version.
			ws = ps.ws[:ps.nw]
			q.walked(ws)
			if xi, bi, one := q.oneValue(); one {
				rb := &s.rows
				rb.l, rb.ws, rb.n, rb.xi, rb.bi, rb.fib = l, ws, n, xi, bi, nil
				rb.xs, rb.bs, rb.cs = q.view(xi).src, q.view(bi).src, q.c.src
				c.one = true
			}
		}
		ws = ps.ws[:ps.nw]
		q.walked(ws)
	}
	ch := &sq.chunks[len(sq.chunks)-1]
	if rest := w.realBlock[len(w.realBlock):cap(w.realBlock)]; len(rest) == 0 || !follows(ch.reals, rest[:1]) {
		return p
	}
	s.j0, s.n = 0, n
	// Staged rows: a row of more positions than a batch holds, or not
	// at the position after the last staged row's, flushes them first
	// (and the former goes through walkLanes).
	var rb *rowBatch
	if l != nil && c.one {
		rb = &s.rows
	} else if l == nil {
		rb = s.fibRows(sum, n)
	}
	m, e := 0, 0 // rows staged (iterations p-m..p-1); positions
	// The inner loop's bounds read the slots of the loop's position (p),
	// of its value (keys[p]), or of a loop around it (as they are).
	keys, rd := nl.arr.ints, c.rd
	lo3, hi3 := fr.i[rd.loSlot], fr.i[rd.hiSlot]
	p0, last := p, sq.key
	ks, vs := nl.ks, nl.vs
	// lim: the rows (the staged ones among them) the level's blocks have
	// room for, worked out again where the blocks' lengths change.
	lim := rowsFit(w, n)
	next := hi // where the next rows of rows starts (ends[0])
	if len(ends) > 0 {
		next = ends[0]
	}
	for ; p < hi && m < lim; p++ {
		for p == next {
			last, ends = -1, ends[1:]
			next = ends[0]
		}
		k := keys[p]
		switch rd.loSlot {
		case ks:
			lo3 = p
		case vs:
			lo3 = k
		}
		switch rd.hiSlot {
		case ks:
			hi3 = p
		case vs:
			hi3 = k
		}
		f0, f1, ok := rd.at(lo3, hi3)
		if k <= last || !ok || f0 >= f1 {
			break
		}
		// g0, g1: the row's positions in the walked loop (a row of
		// fibers: theirs, g1 < g0 where fibRows cannot take them)
		g0, g1 := f0, f1
		if rb != nil && rb.fib != nil {
			g0, g1 = rb.fibSpan(f0, f1)
		}
		if rb != nil && g0 <= g1 && g1-g0 <= rowBatchPos {
			if m > 0 && (g0 != rb.f0+int64(e) || e+int(g1-g0) > rowBatchPos) {
				if m = rb.flush(sq, w, ch, m); m > 0 {
					p -= int64(m)
					m = 0
					break
				}
				if lim = rowsFit(w, n); lim == 0 {
					break
				}
			}
			if m == 0 {
				rb.f0, e = g0, 0
			}
			if rb.fib != nil {
				rb.stageFibers(f0, f1)
			}
			e += int(g1 - g0)
			rb.ends[m], rb.keys[m] = int32(e), k
			last = k
			if m++; m == rowBatchLen {
				if m = rb.flush(sq, w, ch, m); m > 0 {
					p -= int64(m) - 1 // the first row not recorded
					m = 0
					break
				}
				lim = rowsFit(w, n)
			}
			continue
		}
		if m > 0 {
			if m = rb.flush(sq, w, ch, m); m > 0 {
				p -= int64(m)
				m = 0
				break
			}
		}
		run := w.realBlock[len(w.realBlock):][:n]
		if l != nil {
			if !l.covers(f0, f1) {
				break
			}
			if at, nz := walkLanes(&s.batch, ws, &q, f0, f1, run); at < f1 || !nz && !noZero(run) {
				break
			}
		} else {
			setIterVars(fr, nl.ks, nl.vs, nl.arr, false, p)
			s.gen++
			clear(run)
			if !s.runSumIn(fr, sum, f0, f1, run) || fr.err != nil || !noZero(run) {
				fr.err = nil
				break
			}
			if rb == nil {
				rb = s.fibRows(sum, n) // (runFibers' set-up is made by the first rows)
			}
		}
		w.realBlock = w.realBlock[:len(w.realBlock)+n]
		ch.reals = ch.reals[:len(ch.reals)+n]
		sq.recordRows(ch, len(ch.reals)-n, n, 1)
		push(&sq.keys, k)
		last = k
		lim = rowsFit(w, n)
	}
	if m > 0 {
		p -= int64(rb.flush(sq, w, ch, m))
	}
	if p > p0 {
		w.carved += int(p-p0) * n
		sq.key = keys[p-1]
		nestSaw("lifted rows in a block")
		if l != nil {
			nestSaw("lifted rows walked")
		}
		nestSaw("lifted rows")
		nestSaw("lifted")
		if kl.orig != nil {
			nestSaw("range swapped outward")
		}
	}
	return p
}

// rowsFit returns how many rows of n lanes w's value block has room
// for, 0 where the room (the key block's too, which dense rows leave as
// it is) is short of one: the rows staged are counted against the
// value block's.
func rowsFit(w *workspace, n int) int {
	if room(w, w.realBlock) < n {
		return 0
	}
	return (cap(w.realBlock) - len(w.realBlock)) / n
}

// blockRun is what liftRows.rows finds at its first call of a run and
// keeps: the rows' lanes (n, 0: not found yet), the inner loop's reader,
// and the version of the walks' set-up checked (0: none; a set-up made
// again has another), with what it gives the staged rows.
type blockRun struct {
	n   int
	rd  segReader
	ver uint64
	one bool // the rows are staged (rowBatch), its walks set for ver
}

// rowBatch holds rows of a walked product of one value
// (lprod.oneValue), staged to be written in one loop (set): rows whose
// positions follow one another (a CSF level's fibers), from position
// f0, per row the end of its positions and its key. Once staged, the
// walks (ws, their views xs, bs and cs: x and b of them the one value
// and the lanes) are run over all the batch's positions, walk by walk
// (walk): per position the value and the first lanes of the other
// views.
type rowBatch struct {
	x [rowBatchPos]float64
	// xv: the batch's values by position, x or, where the value's walk
	// steps by one (TTM's A_val(p)), the values themselves in xs
	xv         []float64
	kx, kb, kc [rowBatchPos]int64
	ends       [rowBatchLen]int32
	keys       [rowBatchLen]int64
	f0         int64
	l          *lsum
	ws         []atWalk
	xs, bs, cs []float64
	xi, bi, n  int
	// fib: rows of lfib's sums (fibRows), whose factor fi, t, is
	// staged per fiber (stageFibers), not walked; nil: rows of one
	// walked loop
	fib *fibWalk
	fi  int
}

// rowBatchLen and rowBatchPos are the most rows and positions a
// rowBatch holds.
const (
	rowBatchLen = 64
	rowBatchPos = 256
)

// walk sets the values and offsets of the batch's first e positions
// from its walks and returns how many from the first it set: those
// before the first where a walk's bounds do not hold or a view's lanes
// do not fit (its row goes the general way).
func (rb *rowBatch) walk(e int) int {
	rb.xv = nil
	if !rb.l.covers(rb.f0, rb.f0+int64(e)) {
		return 0
	}
	// A view's lanes fit where its offset is at most its length less
	// the lanes: checked as the walk writes the offsets, and after the
	// walks for offsets staged per fiber (stageFibers).
	bFit, cFit := uint64(len(rb.bs)-rb.n), uint64(math.MaxUint64)
	if rb.cs != nil {
		cFit = uint64(len(rb.cs) - rb.n)
	}
	bWalked, cWalked := false, false
	for i := range rb.ws {
		w := &rb.ws[i]
		dst, fit := &rb.kc, cFit
		switch w.f {
		case rb.xi:
			if rb.xv = w.run(rb.xs, rb.f0, e); rb.xv != nil {
				continue
			}
			dst, fit = &rb.kx, math.MaxUint64
		case rb.bi:
			dst, fit, bWalked = &rb.kb, bFit, true
		default:
			cWalked = true
		}
		for j := range e {
			u, ok := w.at(rb.f0 + int64(j))
			if !ok || uint64(u) > fit {
				e = j
				break
			}
			dst[j] = u
		}
	}
	lanes := func(ks *[rowBatchPos]int64, fit uint64) {
		for j := range e {
			if uint64(ks[j]) > fit {
				e = j
				return
			}
		}
	}
	if !bWalked {
		lanes(&rb.kb, bFit)
	}
	if rb.cs != nil && !cWalked {
		lanes(&rb.kc, cFit)
	}
	if rb.xv == nil {
		for j := range e {
			rb.x[j] = rb.xs[rb.kx[j]]
		}
		rb.xv = rb.x[:e]
	}
	return e
}

// setGo writes rows r < m of the batch at out[r*n:], each the sum over
// its positions p of (x[p]*bs[kb[p]+q])*cs[kc[p]+q] (cs nil:
// x[p]*bs[kb[p]+q]) for q < n, added to zero in order (walkLanes' bits
// but a zero's sign, and no zero is kept), the rows in order up to the
// first with a zero lane (or -0), which is written too, and returns
// that row (m: none).
func (rb *rowBatch) setGo(out []float64, n, m int, bs, cs []float64) int {
	p := 0
	for r := range m {
		row, c := out[r*n:][:n], []float64(nil)
		clear(row)
		for ; p < int(rb.ends[r]); p++ {
			if cs != nil {
				c = cs[rb.kc[p]:][:n]
			}
			mulAddScalarGo(row, rb.xv[p], bs[rb.kb[p]:][:n], c)
		}
		if !noZero(row) {
			return r
		}
	}
	return m
}

// flush writes the m rows staged in rb at the free end of w's blocks
// (room made for them) and records those before the first that the
// walks cannot take or that has a zero, as rows does, and returns how
// many it did not record.
func (rb *rowBatch) flush(sq *seqRows, w *workspace, ch *seqChunk, m int) int {
	n, e, mw := rb.n, rb.walk(int(rb.ends[m-1])), m
	for mw > 0 && int(rb.ends[mw-1]) > e {
		mw--
	}
	r := rb.set(w.realBlock[len(w.realBlock):][:m*n], n, mw, rb.bs, rb.cs)
	if r > 0 {
		nestSaw("lifted rows batched")
		if &rb.xv[0] != &rb.x[0] {
			nestSaw("lifted rows' values read in place")
		}
		w.realBlock = w.realBlock[:len(w.realBlock)+r*n]
		end := len(ch.reals)
		ch.reals = ch.reals[:end+r*n]
		copy(extend(&sq.keys, r), rb.keys[:r])
		sq.recordRows(ch, end, n, r)
	}
	return m - r
}

// row runs nl's body for the iteration set in fr into b, a dictionary of
// rows (s: the lifted range's state), and reports whether it did; false
// with nothing done (no row opened, nothing added, no error kept) where
// the general way is to run it: b not in sequential mode, among others.
// rows bounds the rows to come (a row per iteration; a walk of a whole
// level, TTM's fibers, has its positions from here on): the rows' keys
// are sized for them at the first rows, not grown row after row (dense
// rows of one width have no other record).
func (r *liftRows) row(fr *frame, nl *nloop, b *builder, s *liftState, rows int64) bool {
	sq := b.x.seq
	if sq == nil {
		return false
	}
	for st := nl.stmt; st != r.single; st = st.next {
		if st.kind == stGuard {
			if (st.proof == nil || fr.i[st.proof.slot] == 0) && !st.cond(fr) {
				return true // (an error is the loop's to report)
			}
			continue
		}
		if st.set(fr); fr.err != nil {
			return true
		}
	}
	k := r.single.key(fr)
	if fr.err != nil {
		return true
	}
	w := sq.w
	if k <= sq.key || sq.cur.ws != w || sq.cur.spec.depth != 1 {
		return false
	}
	kl := r.k
	lo, hi, ok := kl.open(fr)
	n := int(hi - lo)
	if !ok || fr.err != nil || hi-lo < liftMin || hi-lo > liftLanes || lo < 0 || hi-1 > narrowKeyLimit {
		fr.err = nil
		return false
	}
	if !sq.closeRow() {
		return false
	}
	if w.appended != 0 || room(w, w.realBlock) < n && !growAppend(w, &w.realBlock, n) {
		return false
	}
	l := kl.lift
	if ok, none := l.enter(fr, lo, n); !ok {
		return false
	} else if none {
		sq.key = k // an empty row records nothing
		return true
	}
	run := w.realBlock[len(w.realBlock):cap(w.realBlock)][:n]
	s.gen++
	s.j0, s.n = lo, n
	// vals: the row's lanes, in run or where they are read (kept from
	// there, not copied in first).
	vals := run
	if !s.walkRow(fr, run) {
		if vals, ok = s.values(fr, l.val, run); !ok {
			fr.err = nil
			return false
		}
		if &vals[0] != &run[0] {
			nestSaw("lifted row kept where it is read")
		}
	}
	nestSaw("lifted rows")
	nestSaw("lifted")
	if kl.orig != nil {
		nestSaw("range swapped outward")
	}
	sq.key = k
	if len(sq.keys) <= 1 && int64(cap(sq.keys)-len(sq.keys)) < rows && rows <= math.MaxInt32 {
		m := int(rows)
		var out *runBlocks
		if t := b.x.tree; t != nil {
			out = t.out
		}
		sq.keys = pooledGrow(sq.keys, m, out)
	}
	if lo == 0 && noZero(vals) {
		// As closeAppendedRow keeps a run of keys 0..n-1: the dense
		// slice where it is.
		if &vals[0] != &run[0] {
			copy(run, vals)
		}
		w.realBlock = w.realBlock[:len(w.realBlock)+n]
		w.carved += n
		store(sq, chunkReals, run, nil)
		return true
	}
	sq.live = true
	sq.cur.startAppend()
	sq.cur.keepRun(lo, vals, run)
	sq.closeAppended()
	sq.live = false
	return true
}

// noZero reports whether no value of v is zero (or -0).
func noZero(v []float64) bool {
	for _, x := range v {
		if x == 0 {
			return false
		}
	}
	return true
}

// walkedRows returns the inner loop of a lifted range's value v where v
// is the sum of one product over it whose factors are all walked with
// index parts of the whole run (TTM's fiber: A_val(p3) * B_val(k*B_len2
// + l)), else nil. Once runProd has made that set-up, a row is its
// positions walked into the lanes (walkRow): the range's chain (set,
// runSum, runProd, runAt) and its checks are not paid again per row.
func walkedRows(v *lnode) *lsum {
	if v.op != lSum {
		return nil
	}
	l := v.sum
	if l.open == nil || l.prod == nil || !l.at || !l.global || l.fib != nil {
		return nil
	}
	for i, f := range l.prod.fs {
		if f != nil && (!l.vary[i] || l.ats[i].t < 0) {
			return nil
		}
	}
	return l
}

// walkRow sets run (s's lanes) to the value of s.walked, the walks of
// its set-up made, and reports whether it did; false with run and fr
// unchanged where the set-up is not made yet for these lanes (or a
// factor is still counting toward its lane-major copy): s.values runs it.
// A position the walks cannot take goes to runProd, as in runSum.
func (s *liftState) walkRow(fr *frame, run []float64) bool {
	l := s.walked
	if l == nil {
		return false
	}
	ps := &s.setups[l.id]
	if ps.gen == 0 || !ps.walked || ps.wj0 != s.j0 || ps.wn != s.n || ps.nw < 0 {
		return false
	}
	for i, f := range l.prod.fs {
		if f != nil && ps.majors[i] == nil && copiesAcross(f.cl.reals, ps.strides[i]) {
			return false
		}
	}
	lo, hi, ok := l.open(fr)
	if !ok || fr.err != nil || lo < hi && !l.covers(lo, hi) {
		fr.err = nil
		return false
	}
	if lo >= hi {
		clear(run)
		return true
	}
	nestSaw("lifted rows walked")
	var q lprod
	ws := ps.ws[:ps.nw]
	q.walked(ws)
	if p, _ := walkLanes(&s.batch, ws, &q, lo, hi, run); p < hi {
		return s.runProd(fr, l, p, hi, run)
	}
	return true
}

// walkLanes sets run to the sum over positions lo..hi-1 (lo < hi) of
// walks ws through q (their views set), and returns the first position
// a walk's bounds do not hold at (run then holds the positions before
// it), and true where the row is that one position and no lane of it
// is zero (false: unknown).
func walkLanes(mb *mulBatch, ws []atWalk, q *lprod, lo, hi int64, run []float64) (int64, bool) {
	var k [3]int64
	if hi-lo <= shortRun && walkTo(ws, &k, lo) {
		// The first position's product is written into the lanes, not
		// added to lanes cleared first: the row's lanes are fresh
		// output, each store to them a miss. Only a zero's sign may
		// differ from 0+x (-0), and no zero is kept.
		q.a.k, q.b.k, q.c.k = k[0], k[1], k[2]
		nz := q.setTo(run)
		nestSaw("lifted rows set")
		if lo++; lo == hi {
			return hi, nz // (a fiber of one entry: most of TTM's)
		}
	} else {
		clear(run)
	}
	return walkAt(mb, ws, q, k, lo, hi, run), false
}
