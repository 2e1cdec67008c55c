package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/storel/storel/ir"
)

// How a split run's iterations are cut into chunks, and how private
// dense results are added up. Both decide whether threads pay: rows of a
// web graph differ in length by orders of magnitude, so equal counts of
// rows are unequal work, and a merge of private dense rows done by one
// worker grows with the thread count until it costs more than the loop.

// workFunc is a loop's cumulative work: work(b) - work(a) estimates the
// cost of iterations a..b-1 (positions as the loop's run takes them).
type workFunc func(p int64) int64

// splitByWork has split loop l, compiled from sum e, cut its chunks by
// e's cumulative work where it has one.
func (c *compiler) splitByWork(l *loop, e *ir.Expr) {
	var text string
	l.work, text = c.cumWork(e)
	if l.nest != nil && l.work != nil {
		l.nest.workBy = text
	}
}

// first returns the smallest end in from+1..to whose work since base
// reaches goal, or to.
func (w workFunc) first(from, to, base, goal int64) int64 {
	return from + 1 + int64(sort.Search(int(to-from-1), func(i int) bool {
		return w(from+int64(i)+1)-base >= goal
	}))
}

// cumWork returns the cumulative work of sum e's positions, counting one
// per iteration and one per position of every sum below it over a
// segment A(P(x+c):P(x+c+1)) of the iteration's key x, through range
// sums in between (the rank loop of MTTKRP): the leaves of a CSF tree
// below i are pos2(pos1(i)). nil when e's positions are not its keys or
// no segment reads them.
// The text names the work counted, for explain: A_pos2(A_pos1(i)).
func (c *compiler) cumWork(e *ir.Expr) (workFunc, string) {
	switch src := e.Args[0]; {
	case src.Op == ir.OpRange, src.Op == ir.OpSubArray,
		src.Op == ir.OpGlobal && c.cell(src).info.Kind == ir.ObjArray:
	default:
		return nil, ""
	}
	key := e.Vars[0]
	var terms []workFunc
	var texts []string
	var walk func(x *ir.Expr)
	walk = func(x *ir.Expr) {
		if x.Op == ir.OpSum {
			if pos, off, ok := c.segmentOf(x.Args[0], key); ok {
				inner, text := c.cumWork(x)
				at := fmt.Sprintf("%s(%s)", pos.name, ir.Format(x.Args[0].Args[1].Args[1]))
				if inner != nil {
					// x's positions up to at, and the work below them.
					at += " + " + strings.ReplaceAll(text, "("+x.Vars[0]+")", "("+at+")")
				}
				texts = append(texts, at)
				terms = append(terms, func(p int64) int64 {
					q := clampedAt(pos.ints, p+off)
					if inner != nil {
						return inner(q)
					}
					return q
				})
				return
			}
			if t, text := c.lookedUpWork(e, x); t != nil {
				texts = append(texts, text)
				terms = append(terms, t)
				return
			}
			if x.Args[0].Op != ir.OpRange {
				return
			}
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(e.Args[1])
	if len(terms) == 0 {
		return nil, ""
	}
	return func(p int64) int64 {
		w := p
		for _, t := range terms {
			w += t(p)
		}
		return w
	}, countedText(texts)
}

// lookedUpWork returns the cumulative work over sum e's positions of
// its inner sum x over a segment Q(P(v+c):P(v+c+1)) of e's value v (read
// from the int array e walks: a row of C for MTTKRP's k), or nil: at
// position q the row's length, times one plus the lengths of the
// segments below x of e's position q (the fiber of B a merge walks
// along each entry of the row). The lengths depend on the values e
// reads, so their prefix sums over e's array are estimated per run, once
// for the arrays a run reads (see lookedUp).
func (c *compiler) lookedUpWork(e, x *ir.Expr) (workFunc, string) {
	arr := walkedArray(e)
	if arr == nil || len(e.Vars) < 2 {
		return nil, ""
	}
	vals := c.cell(arr)
	pos, off, ok := c.segmentOf(x.Args[0], e.Vars[1])
	if vals.info.Kind != ir.ObjArray || vals.info.Elem != ir.Int || !ok {
		return nil, ""
	}
	type seg struct {
		pos *cell
		off int64
	}
	var below []seg
	text := fmt.Sprintf("%s(%s(%s))", pos.name, vals.name, e.Vars[0])
	var inner []string
	var walk func(y *ir.Expr)
	walk = func(y *ir.Expr) {
		if y.Op == ir.OpSubArray {
			if p, o, ok := c.segmentOf(y, e.Vars[0]); ok {
				below = append(below, seg{p, o})
				inner = append(inner, fmt.Sprintf("%s(%s)", p.name, e.Vars[0]))
				return
			}
		}
		for _, a := range y.Args {
			walk(a)
		}
	}
	walk(x.Args[1])
	if len(inner) > 0 {
		text += "×(1 + " + strings.Join(inner, " + ") + ")"
	}
	lu := &lookedUp{}
	return func(p int64) int64 {
		return lu.at(vals.ints, pos.ints, p, func(q int64) int64 {
			k := clampedAt(vals.ints, q) + off
			w := int64(1)
			for _, s := range below {
				w += clampedAt(s.pos.ints, q+s.off+1) - clampedAt(s.pos.ints, q+s.off)
			}
			return max(0, clampedAt(pos.ints, k+1)-clampedAt(pos.ints, k)) * max(1, w)
		})
	}, text
}

// walkedArray returns the global array sum e walks, whole or a segment
// of it, or nil.
func walkedArray(e *ir.Expr) *ir.Expr {
	src := e.Args[0]
	if src.Op == ir.OpSubArray {
		src = src.Args[0]
	}
	if src.Op != ir.OpGlobal {
		return nil
	}
	return src
}

// lookedUp caches an estimate of the prefix sums of a work per position
// of an array, for the arrays a run reads: the work at every
// lookedUpStep-th position stands for the positions up to the next (a
// pass over all of them reads the rows they look up at random: 91 ms for
// the 3.2M entries of MMM's A on cnr-2000, on a loaded machine, a third
// of the run), counted at the first run that splits and again when the
// arrays change.
type lookedUp struct {
	mu        sync.Mutex
	vals, pos []int64 // the arrays the sums were counted for
	at1       []int64 // at1[b]: the work at position b*lookedUpStep
	pre       []int64 // pre[b]: the estimated work of positions 0..b*lookedUpStep-1
}

const lookedUpStep = 64

// at returns the estimated work w of positions 0..p-1 of vals (clamped
// to its length), where w reads vals and pos.
func (lu *lookedUp) at(vals, pos []int64, p int64, w func(q int64) int64) int64 {
	p = max(0, min(p, int64(len(vals))))
	lu.mu.Lock()
	defer lu.mu.Unlock()
	if lu.pre == nil || !sameInts(lu.vals, vals) || !sameInts(lu.pos, pos) {
		n := (int64(len(vals)) + lookedUpStep - 1) / lookedUpStep
		lu.at1, lu.pre = make([]int64, n), make([]int64, n+1)
		for b := range n {
			lu.at1[b] = w(b * lookedUpStep)
			lu.pre[b+1] = lu.pre[b] + lookedUpStep*lu.at1[b]
		}
		lu.vals, lu.pos = vals, pos
	}
	b := p / lookedUpStep
	if b == int64(len(lu.at1)) {
		return lu.pre[b]
	}
	return lu.pre[b] + (p-b*lookedUpStep)*lu.at1[b]
}

// sameInts reports whether a and b are the same slice of memory.
func sameInts(a, b []int64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// countedText joins texts with +, writing a repeated one once as n×t.
func countedText(texts []string) string {
	var parts []string
	n := map[string]int{}
	for _, t := range texts {
		if n[t]++; n[t] == 1 {
			parts = append(parts, t)
		}
	}
	for i, t := range parts {
		if n[t] > 1 {
			parts[i] = fmt.Sprintf("%d×%s", n[t], t)
		}
	}
	return strings.Join(parts, " + ")
}

// segmentOf matches src = A(P(key+c):P(key+c+1)) and returns P and c.
func (c *compiler) segmentOf(src *ir.Expr, key string) (*cell, int64, bool) {
	if src.Op != ir.OpSubArray || src.Args[0].Op != ir.OpGlobal {
		return nil, 0, false
	}
	bound := func(b *ir.Expr) (string, int64, bool) {
		if b.Op != ir.OpLookup || b.Args[0].Op != ir.OpGlobal {
			return "", 0, false
		}
		off, ok := keyPlus(b.Args[1], key)
		return b.Args[0].Name, off, ok
	}
	pl, lo, ok1 := bound(src.Args[1])
	ph, hi, ok2 := bound(src.Args[2])
	if !ok1 || !ok2 || pl != ph || hi != lo+1 {
		return nil, 0, false
	}
	pos := c.cell(src.Args[1].Args[0])
	if pos.info.Kind != ir.ObjArray || pos.info.Elem != ir.Int {
		return nil, 0, false
	}
	return pos, lo, true
}

// keyPlus matches key, key + c or c + key for a constant c.
func keyPlus(e *ir.Expr, key string) (int64, bool) {
	isKey := func(x *ir.Expr) bool { return x.Op == ir.OpVar && x.Name == key }
	isConst := func(x *ir.Expr) bool { return x.Op == ir.OpConst && x.Type.Depth == 0 && x.Type.Base == ir.Int }
	switch {
	case isKey(e):
		return 0, true
	case e.Op == ir.OpAdd && isKey(e.Args[0]) && isConst(e.Args[1]):
		return e.Args[1].I, true
	case e.Op == ir.OpAdd && isConst(e.Args[0]) && isKey(e.Args[1]):
		return e.Args[0].I, true
	}
	return 0, false
}

// clampedAt reads a[i], clamped to a's ends: the work of a malformed position
// array is a guess; the run itself reports the error.
func clampedAt(a []int64, i int64) int64 {
	switch {
	case len(a) == 0:
		return 0
	case i < 0:
		return a[0]
	case i >= int64(len(a)):
		return a[len(a)-1]
	}
	return a[i]
}

// splitChunks cuts iterations 0..n-1 (positions lo.. of the loop) into
// at most parts contiguous, non-empty chunks of about equal work.
func splitChunks(n int64, parts int, lo int64, work workFunc) [][2]int64 {
	if work == nil || parts < 2 || n < int64(parts) {
		return chunks(n, parts)
	}
	w0, total := work(lo), work(lo+n)-work(lo)
	if total <= 0 {
		return chunks(n, parts)
	}
	out := make([][2]int64, 0, parts)
	from := int64(0)
	for k := 1; k <= parts && from < n; k++ {
		to := n
		if k < parts {
			goal := total * int64(k) / int64(parts)
			to = work.first(lo+from, lo+n, w0, goal) - lo
		}
		out = append(out, [2]int64{from, to})
		from = to
	}
	if from < n {
		out[len(out)-1][1] = n
	}
	return out
}

// splitReach returns, for sum e split across workers, a bound on the
// keys of its result's outer level read at run time (false when a key
// may be negative or there is none), or nil: the key of the singleton e
// adds is e's range key (below the range's end) or the value of an int
// array e walks (below its largest value plus one; a hash map's first
// level keys after hashWalks).
func (c *compiler) splitReach(e *ir.Expr) func(st srcState) (int64, bool) {
	ranged, arr := c.splitKey(e)
	switch {
	case ranged:
		return func(st srcState) (int64, bool) { return st.hi, st.lo >= 0 && st.hi > st.lo }
	case arr != nil:
		return func(srcState) (int64, bool) { return arr.imax + 1, arr.imin >= 0 && arr.imax >= 0 }
	}
	return nil
}

// rowReach returns, for sum e whose result is one dense row, a bound on
// the row's keys read at run time (false when a key may be negative),
// or nil: splitReach's, or, for a row keyed below e by the value of an
// inner sum over an int array (BATAX's column j), that array's largest
// value plus one. Only the singletons' keys count, so every singleton
// must be keyed by such a value.
func (c *compiler) rowReach(e *ir.Expr) func(st srcState) (int64, bool) {
	if r := c.splitReach(e); r != nil {
		return r
	}
	var arrs []*cell
	bound := map[string]*cell{} // value variables of sums over int arrays
	ok := true
	var walk func(x *ir.Expr)
	walk = func(x *ir.Expr) {
		if !ok {
			return
		}
		switch x.Op {
		case ir.OpSingleton:
			cl := (*cell)(nil)
			if x.Args[0].Op == ir.OpVar {
				cl = bound[x.Args[0].Name]
			}
			if cl == nil {
				ok = false
				return
			}
			arrs = append(arrs, cl)
			return
		case ir.OpSum:
			if arr := walkedArray(x); arr != nil && len(x.Vars) > 1 {
				if cl := c.cell(arr); cl.info.Kind == ir.ObjArray && cl.info.Elem == ir.Int {
					saved, had := bound[x.Vars[1]]
					bound[x.Vars[1]] = cl
					defer func() {
						if had {
							bound[x.Vars[1]] = saved
						} else {
							delete(bound, x.Vars[1])
						}
					}()
				}
			}
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(e.Args[1])
	if !ok || len(arrs) == 0 {
		return nil
	}
	return func(srcState) (int64, bool) {
		end := int64(0)
		for _, cl := range arrs {
			if cl.imin < 0 || cl.imax < 0 {
				return 0, false
			}
			end = max(end, cl.imax+1)
		}
		return end, true
	}
}

// splitKeyRanges returns, for sum e split across workers, the keys of
// its result's outer level each chunk of a run writes, where e's
// iterations write increasing keys (its range key, or the keys of a hash
// map's first level): chunk c's keys lie in bounds[c]..bounds[c+1]-1,
// from bounds[0] = 0 to bounds[len(parts)] = end, the run's bound on its
// keys. It returns nil for other sums, and a run returns nil where the
// bounds do not increase.
func (c *compiler) splitKeyRanges(e *ir.Expr) func(st srcState, parts [][2]int64, end int64) []int64 {
	ranged, arr := c.splitKey(e)
	if !ranged && (arr == nil || !isFirstLevelKeys(arr.name)) {
		return nil
	}
	return func(st srcState, parts [][2]int64, end int64) []int64 {
		bounds := make([]int64, len(parts)+1)
		bounds[len(parts)] = end
		for i, p := range parts[1:] {
			k := st.lo + p[0]
			if !ranged {
				k = clampedAt(arr.ints, k)
			}
			if k < bounds[i] || k > end {
				return nil
			}
			bounds[i+1] = k
		}
		return bounds
	}
}

// splitInOrder returns, for sum e split across workers, whether a run's
// iterations write its result's outer keys in strictly increasing order
// (each iteration its own key, above the one before), or nil when no run
// does: e's range key, or the values of an int array e walks where they
// increase over the run (checked per run).
func (c *compiler) splitInOrder(e *ir.Expr) func(st srcState) bool {
	ranged, arr := c.splitKey(e)
	switch {
	case ranged:
		return func(srcState) bool { return true }
	case arr != nil:
		return func(st srcState) bool { return increasing(arr.ints, st.lo, st.hi) }
	}
	return nil
}

// splitKey matches the body of sum e, below lets and guards, against a
// singleton keyed by e's range key (ranged) or by the value of the int
// array e walks (arr, a whole array or a segment of it).
func (c *compiler) splitKey(e *ir.Expr) (ranged bool, arr *cell) {
	body := e.Args[1]
	for {
		switch body.Op {
		case ir.OpLet:
			body = body.Args[1]
			continue
		case ir.OpIf:
			if len(body.Args) == 2 {
				body = body.Args[1]
				continue
			}
		}
		break
	}
	if body.Op != ir.OpSingleton || body.Args[0].Op != ir.OpVar {
		return false, nil
	}
	key := body.Args[0].Name
	switch {
	case key == e.Vars[0] && e.Args[0].Op == ir.OpRange:
		return true, nil
	case key == e.Vars[1] && walkedArray(e) != nil:
		cl := c.cell(walkedArray(e))
		if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Int {
			return false, nil
		}
		return false, cl
	}
	return false, nil
}

// mergeKids moves the children of the private results bs[1:] into
// bs[0] with one copy per result, the copies at once, when every result
// is a plain dense level of children and their keys lie in increasing,
// disjoint ranges (a split's chunks keyed by their own rows); false,
// with nothing done, otherwise. It is mergeRoot's merge for that case:
// every child moves into an empty slot.
func mergeKids(bs []*builder, pool *rowPool) bool {
	dst := bs[0]
	s := dst.spec
	if s.depth < 2 || !s.dense || len(bs) < 2 {
		return false
	}
	plain := func(b *builder) bool {
		x := b.x
		return x != nil && x.tree != nil && !b.listed && !b.open && b.ws == nil && x.seq == nil && x.coll == nil && len(x.mkids) == 0 &&
			(!x.sequential || len(x.kids) == 0)
	}
	if !plain(dst) {
		return false
	}
	hi := len(dst.x.kids)
	for _, o := range bs[1:] {
		x := o.x
		if !plain(o) || len(x.kids) > 0 && x.firstKidOf != len(x.kids) {
			return false
		}
		if len(x.kids) > 0 && x.firstKid < len(x.kids) {
			if x.firstKid < hi {
				return false
			}
			hi = len(x.kids)
		}
	}
	dst.leaveSequential()
	dst.growKids(hi)
	var wg sync.WaitGroup
	for _, o := range bs[1:] {
		x := o.x
		o.leaveSequential()
		x.tree.closeAll()
		dst.x.tree.adopted = append(dst.x.tree.adopted, x.tree)
		if f := min(x.firstKid, len(x.kids)); f < len(x.kids) {
			wg.Add(1)
			go func(kids []kid, f int) {
				defer wg.Done()
				copy(dst.x.kids[f:len(kids)], kids[f:])
				clear(kids[f:])
			}(x.kids, f)
		}
	}
	wg.Wait()
	for _, o := range bs[1:] {
		pool.putKids(o)
	}
	return true
}

// privateWorkers returns how many workers, at most threads, a split run
// of work units of work (its loop's cumulative work, or its iteration
// count) should use when each worker adds into a private dense row of
// row entries: the count that minimizes the run's predicted time,
// work/W for the loop plus the merge (mergeDense), which reads and
// zeroes every entry of the W rows, cut into key ranges merged at once:
// row*W entries over min(W, mergeLanes) goroutines' worth of memory
// bandwidth (1.9 ns per entry, against 1.6 ns per unit of BATAX's work on
// cnr-2000: TestRealMatrixThreads). One worker writes its result with no
// private rows; ties go to fewer workers. A matrix with many more
// columns than entries gains nothing from a second worker and would pay
// the merge of a row as long as it has columns.
func privateWorkers(work, row int64, threads int) int {
	best, at := 1, work
	for w := 2; w <= threads; w++ {
		if t := work/int64(w) + mergeEntryWork*row*int64(w)/int64(min(w, mergeLanes)); t < at {
			best, at = w, t
		}
	}
	return best
}

// mergeLanes is how many goroutines merging private rows at once run
// faster than fewer, before memory bandwidth bounds them: on a 16-core
// Xeon, BATAX on cnr-2000 merged 16 rows of 325,557 entries in 1.1-1.5 ms
// and 8 in 0.85 ms (bench/results/threads-16core.md): 6-9 times as fast
// as one goroutine at 1.9 ns per entry.
const mergeLanes = 6

// mergeEntryWork is the cost of merging one entry of a private dense
// row in units of a loop's work (a var so that the engine's tests can
// send every split run to workers).
var mergeEntryWork int64 = 1

// denseMergeMin is the count of entries to add below which one worker
// merges (a var so that tests can send every merge to workers).
var denseMergeMin = 1 << 16

// mergeDense adds the private results bs[1:] into bs[0], as mergeRoot in
// worker order would, with the keys cut into ranges added by workers at
// once; false, with nothing done, unless every result is a plain dense
// row of scalars. The rows of bs[1:] are zeroed as they are added and
// go back to pool.
//
// With into, an empty builder of the same row, every result, bs[0]
// included, is added into into's row instead, which is allocated
// unzeroed: each range first copies bs[0]'s entries, as bs[0] held them,
// so the bits are the same, and no goroutine zeroes a row before the
// merge (a result made by make is zeroed on the goroutine that makes it:
// 325,557 entries for BATAX on cnr-2000). Every row goes back to pool.
func mergeDense(bs []*builder, pool *rowPool, into *builder) bool {
	n := 0
	for _, b := range bs {
		s := b.spec
		if s.depth != 1 || !s.dense || b.ws != nil || b.listed || b.open ||
			(b.x != nil && (len(b.x.mreal) > 0 || len(b.x.mint) > 0)) {
			return false
		}
		n = max(n, len(b.reals), len(b.ints))
	}
	if len(bs) < 2 || n*(len(bs)-1) < denseMergeMin || into != nil && !into.reserveUnzeroed(int64(n)) {
		return false
	}
	dst, srcs := bs[0], bs[1:]
	if into != nil {
		dst, srcs = into, bs
	}
	real := dst.spec.real
	if real {
		dst.growReals(n)
	} else {
		dst.growInts(n)
	}
	ranges := chunks(int64(n), min(len(bs), max(1, 2*n*(len(bs)-1)/max(1, denseMergeMin))))
	merge := func(lo, hi int64) {
		if into != nil {
			if real {
				moveRange(dst.reals, bs[0].reals, lo, hi)
			} else {
				moveRange(dst.ints, bs[0].ints, lo, hi)
			}
			if rangeZeroed != nil {
				rangeZeroed(lo, hi)
			}
		}
		for _, b := range bs[1:] {
			if real {
				addRange(dst.reals, b.reals, lo, hi)
			} else {
				addRange(dst.ints, b.ints, lo, hi)
			}
		}
	}
	// The caller merges the first range: one goroutine fewer to wake.
	var wg sync.WaitGroup
	for i := 1; i < len(ranges); i++ {
		wg.Add(1)
		go func(lo, hi int64) {
			defer wg.Done()
			merge(lo, hi)
		}(ranges[i][0], ranges[i][1])
	}
	if len(ranges) > 0 {
		merge(ranges[0][0], ranges[0][1])
	}
	wg.Wait()
	for _, b := range srcs {
		pool.put(b)
	}
	return true
}

// addRange adds src[lo:hi] into dst, skipping zeros as addReal's callers
// do, and zeroes src[lo:hi]. No branch per value: in a private row
// written entries and zeros alternate at random (BATAX on cnr-2000),
// and a branch on each value mispredicted so often that merging took
// 3-6x as long as the same adds without it.
func addRange[V int64 | float64](dst, src []V, lo, hi int64) {
	hi = min(hi, int64(len(src)))
	if lo >= hi {
		return
	}
	switch d := any(dst[lo:hi]).(type) {
	case []float64:
		mergeReals(d, any(src[lo:hi]).([]float64))
	case []int64:
		// Adding a zero int changes nothing: no skip to keep.
		s := any(src[lo:hi]).([]int64)
		for k, v := range s {
			d[k] += v
		}
		clear(s)
	}
}

// mergeRealsGo adds src into dst where src is not ±0 (dst's -0 stays, as
// addRange's skip keeps it) and zeroes src: where src is +0 the sum is
// dst, but for -0 + +0, which is +0, so dst's sign bit is put back.
func mergeRealsGo(dst, src []float64) {
	d := dst[:len(src)]
	for k, v := range src {
		sb := math.Float64bits(v)
		zero := ((sb | -sb) >> 63) - 1 // all ones where v is +0
		d[k] = math.Float64frombits(math.Float64bits(d[k]+v) | math.Float64bits(d[k])&zero&(1<<63))
	}
	clear(src)
}

// moveRange writes src[lo:hi] into dst[lo:hi], zeros past src's end,
// and zeroes src[lo:hi].
func moveRange[V int64 | float64](dst, src []V, lo, hi int64) {
	m := max(lo, min(hi, int64(len(src))))
	copy(dst[lo:m], src[lo:m])
	clear(dst[m:hi])
	clear(src[lo:m])
}

// rowPool keeps the zeroed dense rows (and levels of children) of a
// split sum's private results from one run to the next. A fresh row of a few megabytes costs a page
// fault per 4 KiB when first written, by each worker at each run: BATAX
// on cnr-2000 (a 325,557-entry row per worker) ran 2.4x slower at 2
// threads with the collector off, when no run reuses another's memory.
type rowPool struct {
	mu    sync.Mutex
	reals [][]float64
	ints  [][]int64
	kids  [][]kid
}

// seed gives b, a new private result of a dense row of scalars, a zeroed
// row from the pool to grow into.
func (p *rowPool) seed(b *builder) {
	s := b.spec
	if s.depth > 1 && s.dense && b.x != nil && len(b.x.kids) == 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		if n := len(p.kids); n > 0 {
			b.x.kids, p.kids = p.kids[n-1], p.kids[:n-1]
		}
		return
	}
	if s.depth != 1 || !s.dense || b.x != nil || b.ws != nil || b.listed || len(b.reals)+len(b.ints) > 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.reals); s.real && n > 0 {
		b.reals, p.reals = p.reals[n-1], p.reals[:n-1]
	} else if n := len(p.ints); !s.real && n > 0 {
		b.ints, p.ints = p.ints[n-1], p.ints[:n-1]
	}
}

// putKids takes back b's level of children, which mergeKids has moved
// out and zeroed.
func (p *rowPool) putKids(b *builder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cap(b.x.kids) > 0 {
		p.kids = append(p.kids, b.x.kids[:0])
	}
	b.x.kids = nil
}

// put takes back b's row, which mergeDense has zeroed; the row is the
// pool's now, not the run's result's (released.go).
func (p *rowPool) put(b *builder) {
	out := b.spec.out.current()
	out.disown(unsafe.Pointer(unsafe.SliceData(b.reals)))
	out.disown(unsafe.Pointer(unsafe.SliceData(b.ints)))
	p.mu.Lock()
	defer p.mu.Unlock()
	if cap(b.reals) > 0 {
		p.reals = append(p.reals, b.reals[:0])
	}
	if cap(b.ints) > 0 {
		p.ints = append(p.ints, b.ints[:0])
	}
	b.reals, b.ints = nil, nil
}
