package opt

import (
	"math"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// Reading a physical array past its end is an error, and the plans the
// fusion rules build guard their reads (if lo <= e && e < hi then x(e)). A
// rule that moves an expression where it is evaluated more often (out of
// an if, out of a loop that may not run) must not move a read that may
// fail out of its guard. The optimizer therefore bounds int expressions by
// intervals (from constants, int scalars, and the extreme values and
// lengths of the data's int arrays) and calls a class safe when none of
// its terms can fail: every read of a physical array is provably within
// it, and no int division can be by zero.

// interval is an inclusive range of int values; ok false means unbounded.
type interval struct {
	lo, hi int64
	ok     bool
}

func point(v int64) interval { return interval{v, v, true} }

// hull is the smallest interval holding a and b (unbounded if either is).
func (a interval) hull(b interval) interval {
	if !a.ok || !b.ok {
		return interval{}
	}
	return interval{min(a.lo, b.lo), max(a.hi, b.hi), true}
}

func (a interval) meet(b interval) interval {
	switch {
	case !a.ok:
		return b
	case !b.ok:
		return a
	}
	return interval{max(a.lo, b.lo), min(a.hi, b.hi), true}
}

// within reports whether a lies in [lo, hi].
func (a interval) within(lo, hi int64) bool { return a.ok && a.lo >= lo && a.hi <= hi }

// bounded keeps an interval only while its ends are far from overflow.
func bounded(lo, hi float64) interval {
	const limit = 1 << 60
	if math.IsNaN(lo) || math.IsNaN(hi) || lo < -limit || hi > limit {
		return interval{}
	}
	return interval{int64(lo), int64(hi), true}
}

// nodeInterval bounds the value of an int node.
func (s *session) nodeInterval(g *graph, n egraph.Node, d *Data) interval {
	if d.Type.Base == ir.Int && d.Type.Depth > 0 {
		return s.dictInterval(g, n)
	}
	if d.Type != ir.IntType {
		return interval{}
	}
	if d.Known {
		return point(d.Value)
	}
	kid := func(i int) interval { return g.Data(n.Children[i]).Range }
	switch n.Op {
	case opVar:
		return s.vars[n.Payload].rng
	case opAdd, opSub, opMul:
		a, b := kid(0), kid(1)
		if !a.ok || !b.ok {
			return interval{}
		}
		al, ah, bl, bh := float64(a.lo), float64(a.hi), float64(b.lo), float64(b.hi)
		switch n.Op {
		case opAdd:
			return bounded(al+bl, ah+bh)
		case opSub:
			return bounded(al-bh, ah-bl)
		}
		p := []float64{al * bl, al * bh, ah * bl, ah * bh}
		return bounded(min(p[0], p[1], p[2], p[3]), max(p[0], p[1], p[2], p[3]))
	case opLookup:
		if name, ok := s.globalName(g, n.Children[0]); ok {
			if as, ok := s.stats.Arrays[name]; ok && as.HasRange {
				return interval{as.Min, as.Max, true}
			}
			return interval{}
		}
		// A built dictionary: one of its values, or 0 for a missing key.
		return kid(0).hull(point(0))
	case opDiv, opMod:
		// Non-negative by positive: truncation is floor, and a remainder
		// is below the divisor and at most the dividend. A(e) % 2^32 and
		// A(e) / 2^32 take the halves' ranges of the array's words.
		a, b := kid(0), kid(1)
		if !a.ok || !b.ok || a.lo < 0 || b.lo <= 0 {
			return interval{}
		}
		if b.lo == half && b.hi == half {
			if as, ok := s.lookupStats(g, n.Children[0]); ok && as.HasRange && as.Min >= 0 {
				if n.Op == opMod {
					return interval{as.Low[0], as.Low[1], true}
				}
				return interval{as.High[0], as.High[1], true}
			}
		}
		if n.Op == opMod {
			return interval{0, min(a.hi, b.hi-1), true}
		}
		return interval{a.lo / b.hi, a.hi / b.lo, true}
	case opIf:
		// if c then e is e (where c holds) or 0.
		e := s.narrowed(g, kid(1), n.Children[0], n.Children[1])
		if e.ok {
			return interval{min(e.lo, 0), max(e.hi, 0), true}
		}
	case opIfElse:
		a, b := kid(1), kid(2)
		if a.ok && b.ok {
			return interval{min(a.lo, b.lo), max(a.hi, b.hi), true}
		}
	case opLet:
		return kid(2)
	case opCall:
		// runend(A, p, hi) is between p and max(p, hi).
		if s.symName(n.Payload) == "runend" && len(n.Children) == 3 {
			p, h := kid(1), kid(2)
			if p.ok && h.ok {
				return interval{p.lo, max(p.hi, h.hi), true}
			}
		}
	}
	return interval{}
}

// dictInterval bounds the values of a dictionary of ints that the plan
// builds (a copy that stores positions: M4): a singleton's value is its
// entry; a sum's entries are its body's when no two iterations build an
// entry at the same keys (sumAddsNone), else they may be sums of them. A
// lookup's row holds some of the dictionary's values, and a walk binds
// them (sourceRanges).
func (s *session) dictInterval(g *graph, n egraph.Node) interval {
	kid := func(i int) interval { return g.Data(n.Children[i]).Range }
	switch n.Op {
	case opVar:
		return s.vars[n.Payload].rng
	case opSingle:
		return kid(1)
	case opSum:
		if s.sumAddsNone(g, n) {
			return kid(3)
		}
	case opLookup:
		if !s.isGlobalClass(g, n.Children[0]) {
			return kid(0)
		}
	case opLet:
		return kid(2)
	case opIf:
		return kid(1)
	case opIfElse:
		return kid(1).hull(kid(2))
	}
	return interval{}
}

// sumAddsNone reports whether the iterations of sum node n build their
// entries at different keys: its key is a key of every entry of its body,
// or its value is, and the source's values are distinct (sortedvec).
func (s *session) sumAddsNone(g *graph, n egraph.Node) bool {
	keys := g.Data(n.Children[3]).Keys
	k, _ := bindSym(g, n.Children[0])
	if keys.has(uint32(k)) {
		return true
	}
	v, _ := bindSym(g, n.Children[1])
	return keys.has(uint32(v)) && s.conds.sortedVec(n.Children[2])
}

// nodeKeys computes Data.Keys of a dictionary of ints.
func (s *session) nodeKeys(g *graph, n egraph.Node, d *Data) varSet {
	if d.Type.Base != ir.Int || d.Type.Depth == 0 {
		return nil
	}
	kid := func(i int) varSet { return g.Data(n.Children[i]).Keys }
	switch n.Op {
	case opSingle:
		if k, ok := bindSym(g, n.Children[0]); ok {
			return kid(1).union(singletonSet(uint32(k)))
		}
		return kid(1)
	case opSum:
		k, _ := bindSym(g, n.Children[0])
		v, _ := bindSym(g, n.Children[1])
		return kid(3).minus(uint32(k), uint32(v))
	case opLet:
		x, _ := bindSym(g, n.Children[0])
		return kid(2).minus(uint32(x))
	case opIf:
		return kid(1)
	}
	return nil
}

// lookupStats returns the statistics of the physical array class c reads
// from, when some term of c is a lookup into one.
func (s *session) lookupStats(g *graph, c egraph.ClassID) (ArrayStats, bool) {
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		if n.Op != opLookup {
			continue
		}
		if name, ok := s.globalName(g, n.Children[0]); ok {
			as, ok := s.stats.Arrays[name]
			return as, ok
		}
	}
	return ArrayStats{}, false
}

// arrayLen returns the length of a physical array class.
func (s *session) arrayLen(g *graph, c egraph.ClassID) (int64, bool) {
	name, ok := s.globalName(g, c)
	if !ok {
		return 0, false
	}
	as, ok := s.stats.Arrays[name]
	return as.Len, ok
}

// nodeSafe reports whether node n cannot fail, given its children's
// classes. The branch of if c then e runs only where c holds: e is
// judged with the ranges c allows (guardedSafe).
func (s *session) nodeSafe(g *graph, n egraph.Node) bool {
	for i, c := range n.Children {
		if i < binderCount(n.Op) {
			continue
		}
		if !g.Data(c).Safe && !(n.Op == opIf && i == 1 && s.guardedSafe(g, n.Children[0], c, guardDepth)) {
			return false
		}
	}
	if !s.bindingsConsistent(g, n) {
		return false
	}
	return s.opSafe(g, n, func(c egraph.ClassID) interval { return g.Data(c).Range })
}

// guardedOnly reports whether n is a branch if c then e that is safe only
// under its test: e's class is unsafe, and some of its terms, not
// necessarily all, are safe where c holds.
func (s *session) guardedOnly(g *graph, n egraph.Node) bool {
	return n.Op == opIf && !g.Data(n.Children[1]).Safe && s.nodeSafe(g, n)
}

// guardDepth bounds how deep guardedSafe looks into a branch.
const guardDepth = 4

// guardedSafe reports whether class c cannot fail where the test guard
// holds: some term of c whose reads, divisions and bindings are within
// bounds once the int classes guard bounds are narrowed by it (if 0 <=
// A_col(p) then let j = A_col(p) in x(j)).
func (s *session) guardedSafe(g *graph, guard, c egraph.ClassID, depth int) bool {
	if g.Data(c).Safe {
		return true
	}
	if depth == 0 || !g.Data(guard).Safe {
		return false
	}
	return s.guardedSafeMemo(g, guard, c, depth, map[guardedKey]bool{})
}

// guardedKey is one question guardedSafe asks of a class: the answers are
// kept for one branch, since the classes below it share children and a
// search without them takes time exponential in guardDepth.
type guardedKey struct {
	c     egraph.ClassID
	depth int
}

func (s *session) guardedSafeMemo(g *graph, guard, c egraph.ClassID, depth int, memo map[guardedKey]bool) bool {
	c = g.Find(c)
	if g.Data(c).Safe {
		return true
	}
	if depth == 0 {
		return false
	}
	key := guardedKey{c, depth}
	if v, ok := memo[key]; ok {
		return v
	}
	memo[key] = false
	rng := func(k egraph.ClassID) interval { return s.narrowed(g, g.Data(k).Range, guard, k) }
nodes:
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		for i, k := range n.Children {
			if i >= binderCount(n.Op) && !s.guardedSafeMemo(g, guard, k, depth-1, memo) {
				continue nodes
			}
		}
		if !s.guardedBindings(g, n, rng) {
			continue
		}
		if s.opSafe(g, n, rng) {
			memo[key] = true
			return true
		}
	}
	return false
}

// guardedBindings is bindingsConsistent with the int classes bounded by
// rng: a let's value, and the key of a singleton a sum walks.
func (s *session) guardedBindings(g *graph, n egraph.Node, rng func(egraph.ClassID) interval) bool {
	var got [3]interval
	switch n.Op {
	case opLet:
		got[0] = rng(n.Children[1])
	case opSum:
		got[0], got[1] = s.sourceRanges(g, n.Children[2])
		for _, nid := range g.Nodes(n.Children[2]) {
			if x := g.Node(nid); x.Op == opSingle {
				got[0] = got[0].meet(rng(x.Children[0]))
			}
		}
	default:
		return s.bindingsConsistent(g, n)
	}
	return s.bindingsWithin(g, n, got)
}

// opSafe reports whether n itself cannot fail (its children aside), its
// int children bounded by rng.
func (s *session) opSafe(g *graph, n egraph.Node, rng func(egraph.ClassID) interval) bool {
	switch n.Op {
	case opLookup:
		if g.Data(n.Children[0]).Card.Layout() != LayoutArray {
			return true // a missing key of a dictionary reads as zero
		}
		if !s.isGlobalClass(g, n.Children[0]) {
			return true // a subarray or range: a key outside reads as zero
		}
		ln, ok := s.arrayLen(g, n.Children[0])
		return ok && rng(n.Children[1]).within(0, ln-1)
	case opSubArray:
		// In bounds, and not backwards (lo > hi is an error too).
		ln, ok := s.arrayLen(g, n.Children[0])
		lo, hi := rng(n.Children[1]), rng(n.Children[2])
		if !ok || !lo.within(0, ln) || !hi.within(0, ln) {
			return false
		}
		if lo.hi <= hi.lo {
			return true
		}
		if s.isRunEnd(g, n.Children[1], n.Children[2]) {
			return true
		}
		p, isSeg := s.segmentArray(g, n.Children[1], n.Children[2])
		return isSeg && s.stats.Arrays[p].Sorted
	case opCall:
		// runend(A, p, e) fails where p < e is not one of A's positions.
		if s.symName(n.Payload) == "runend" && len(n.Children) == 3 {
			ln, ok := s.arrayLen(g, n.Children[0])
			p, e := rng(n.Children[1]), rng(n.Children[2])
			return ok && (p.within(0, ln-1) || p.ok && e.ok && p.lo >= e.hi)
		}
	case opDiv, opMod:
		if g.Data(n.Children[0]).Type.Base == ir.Int && g.Data(n.Children[1]).Type.Base == ir.Int {
			r := rng(n.Children[1])
			return r.ok && (r.lo > 0 || r.hi < 0)
		}
	}
	return true
}

// isRunEnd reports whether class hi is runend(A, lo, e): never below lo.
func (s *session) isRunEnd(g *graph, lo, hi egraph.ClassID) bool {
	for _, hn := range g.Nodes(hi) {
		h := g.Node(hn)
		if h.Op == opCall && s.symName(h.Payload) == "runend" && len(h.Children) == 3 && g.Find(h.Children[1]) == g.Find(lo) {
			return true
		}
	}
	return false
}

// bindingsConsistent checks that each variable n binds gets values within
// the range recorded for it. Rules rebind variables (F1r turns the loop
// variable k of sum(<k, v> in 0:n) into let k = e, under a guard that
// keeps e in 0:n); the classes of the body were judged with the recorded
// range, so a binding that may exceed it (the let moved out of its guard)
// makes the node unsafe.
func (s *session) bindingsConsistent(g *graph, n egraph.Node) bool {
	return s.bindingsWithin(g, n, s.bindingRanges(g, n))
}

// bindingsWithin reports whether the ranges got of the variables n binds
// lie within the ranges recorded for them.
func (s *session) bindingsWithin(g *graph, n egraph.Node, got [3]interval) bool {
	for i := 0; i < binderCount(n.Op); i++ {
		sym, _ := bindSym(g, n.Children[i])
		want := s.vars[sym].rng
		if want.ok && !got[i].within(want.lo, want.hi) {
			return false
		}
	}
	return true
}

// bindingRanges bounds the values each variable n binds gets.
func (s *session) bindingRanges(g *graph, n egraph.Node) (got [3]interval) {
	switch n.Op {
	case opLet:
		got[0] = g.Data(n.Children[1]).Range
	case opSum:
		got[0], got[1] = s.sourceRanges(g, n.Children[2])
	case opMerge:
		k1, v1 := s.sourceRanges(g, n.Children[3])
		k2, v2 := s.sourceRanges(g, n.Children[4])
		got = [3]interval{k1, k2, v1.meet(v2)}
	}
	return got
}

// sourceRanges bounds the key and the value a sum (or merge) over source
// class src binds.
func (s *session) sourceRanges(g *graph, src egraph.ClassID) (key, val interval) {
	key, val = s.structuralRanges(g, src)
	if d := g.Data(src); d.Type.Depth > 0 && d.Type.Base == ir.Int {
		val = val.meet(d.Range)
	}
	if c := g.Data(src).Card; len(c) > 0 {
		key = key.meet(c[0].Keys)
	}
	return key, val
}

func (s *session) structuralRanges(g *graph, src egraph.ClassID) (key, val interval) {
	for _, nid := range g.Nodes(src) {
		n := g.Node(nid)
		switch n.Op {
		case opRange:
			lo, hi := g.Data(n.Children[0]).Range, g.Data(n.Children[1]).Range
			if lo.ok && hi.ok {
				r := interval{lo.lo, hi.hi - 1, true}
				return r, r
			}
		case opSubArray:
			lo, hi := g.Data(n.Children[1]).Range, g.Data(n.Children[2]).Range
			if lo.ok && hi.ok {
				key = interval{lo.lo, hi.hi - 1, true}
			}
			if ln, ok := s.arrayLen(g, n.Children[0]); ok {
				key = key.meet(interval{0, ln - 1, true})
			}
			return key, s.arrayValues(g, n.Children[0])
		case opGlobal:
			if ln, ok := s.arrayLen(g, src); ok {
				return interval{0, ln - 1, true}, s.arrayValues(g, src)
			}
		case opCall:
			if s.symName(n.Payload) == "runs" {
				return s.structuralRanges(g, n.Children[0]) // a subset of the window's entries
			}
		}
	}
	return interval{}, interval{}
}

func (s *session) arrayValues(g *graph, c egraph.ClassID) interval {
	if name, ok := s.globalName(g, c); ok {
		if as, ok := s.stats.Arrays[name]; ok && as.HasRange {
			return interval{as.Min, as.Max, true}
		}
	}
	return interval{}
}

// guardBound bounds the int class target where the test c holds: c's
// conjuncts lo <= target, target < hi (and >=, >) cap it, so a key or a
// read produced under if c then ... is judged with the values c lets
// through (a padding key -1 skipped by if 0 <= A_col(p) is never seen by
// the loop that walks the result). ok false: c says nothing of target.
func (s *session) guardBound(g *graph, c, target egraph.ClassID) interval {
	return s.guardBoundDepth(g, c, g.Find(target), 4)
}

func (s *session) guardBoundDepth(g *graph, c, target egraph.ClassID, depth int) interval {
	const inf = math.MaxInt64
	out := interval{-inf, inf, true}
	if depth == 0 {
		return interval{}
	}
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		if n.Op == opAnd {
			out = out.meet(s.guardBoundDepth(g, n.Children[0], target, depth-1))
			out = out.meet(s.guardBoundDepth(g, n.Children[1], target, depth-1))
			continue
		}
		var a, b egraph.ClassID // the test is a < b (strict) or a <= b
		strict := false
		switch n.Op {
		case opLe, opLt:
			a, b, strict = n.Children[0], n.Children[1], n.Op == opLt
		case opGe, opGt:
			a, b, strict = n.Children[1], n.Children[0], n.Op == opGt
		default:
			continue
		}
		d := int64(0)
		if strict {
			d = 1
		}
		if g.Find(b) == target {
			if r := g.Data(a).Range; r.ok {
				out = out.meet(interval{r.lo + d, inf, true})
			}
		}
		if g.Find(a) == target {
			if r := g.Data(b).Range; r.ok {
				out = out.meet(interval{-inf, r.hi - d, true})
			}
		}
	}
	if out.lo == -inf && out.hi == inf {
		return interval{}
	}
	return out
}

// narrowed meets r with the bound the test c gives for class target,
// keeping r unbounded unless the bound is finite on both ends.
func (s *session) narrowed(g *graph, r interval, c, target egraph.ClassID) interval {
	b := s.guardBound(g, c, target)
	if !b.ok {
		return r
	}
	if !r.ok && (b.lo == math.MinInt64 || b.hi == math.MaxInt64) {
		return r
	}
	if m := r.meet(b); m.lo <= m.hi {
		return m
	}
	return r // c never holds: the branch is dead, and r still bounds it
}
