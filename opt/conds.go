package opt

import (
	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// condFuncs are the conditions a rule may state (see rulefile.go). Each
// gets the metavariables named in the rule, bound by the match.
var condFuncs = map[string]func(s *session, m match, args []string) bool{
	"notfree": func(s *session, m match, args []string) bool {
		r, ok := readsAny(s, m, args)
		return ok && !r
	},
	// reads(e, x, ...): e reads one of the variables x, ....
	"reads": func(s *session, m match, args []string) bool {
		r, ok := readsAny(s, m, args)
		return ok && r
	},
	// shares(a, b): a reads a variable that b reads.
	"shares": func(s *session, m match, args []string) bool {
		a, ok1 := metaClass(m, args[0])
		b, ok2 := metaClass(m, args[1])
		return ok1 && ok2 && s.g.Data(b).FV.hasAny(s.g.Data(a).FV...)
	},
	"distinct": func(s *session, m match, args []string) bool {
		seen := map[uint64]bool{}
		for _, a := range args {
			sym, ok := s.metaSym(m, a)
			if !ok || seen[sym] {
				return false
			}
			seen[sym] = true
		}
		return true
	},
	"strict": func(s *session, m match, args []string) bool {
		e, ok1 := metaClass(m, args[0])
		x, ok2 := s.metaSym(m, args[1])
		return ok1 && ok2 && s.conds.strict(e, x)
	},
	"linear": func(s *session, m match, args []string) bool {
		e, ok1 := metaClass(m, args[0])
		x, ok2 := s.metaSym(m, args[1])
		return ok1 && ok2 && s.conds.linear(e, x)
	},
	"scalar":   typeCond(func(t ir.Type) bool { return t.Depth == 0 }),
	"dict":     typeCond(func(t ir.Type) bool { return t.Depth > 0 }),
	"int":      typeCond(func(t ir.Type) bool { return t == ir.IntType }),
	"zero":     dataCond(func(d *Data) bool { return d.Zero }),
	"one":      dataCond(func(d *Data) bool { return d.One }),
	"logical":  dataCond(func(d *Data) bool { return d.Card.Layout() != LayoutArray }),
	"zerofree": dataCond(func(d *Data) bool { return !d.Zeroful }),
	"safe":     dataCond(func(d *Data) bool { return d.Safe }),
	"densekey": dataCond(func(d *Data) bool { return d.Range.within(0, maxDenseKey) }),
	"nontrivial": classCond(func(s *session, c egraph.ClassID) bool {
		return !s.hasOp(c, opVar, opGlobal, opInt, opReal, opBool, opEmpty)
	}),
	"atom": classCond(func(s *session, c egraph.ClassID) bool {
		return s.hasOp(c, opVar, opGlobal, opInt, opReal, opBool, opEmpty)
	}),
	"sortedvec":  classCond(func(s *session, c egraph.ClassID) bool { return s.conds.sortedVec(c) }),
	"sortedruns": classCond(func(s *session, c egraph.ClassID) bool { return s.sortedRuns(c) }),
	"holds":      classCond(func(s *session, c egraph.ClassID) bool { return s.holds(c, 4) }),
	"loop":       classCond(func(s *session, c egraph.ClassID) bool { return s.hasLoop(c, 3) }),
	"unbuilt":    classCond(func(s *session, c egraph.ClassID) bool { return !s.built(c) }),
	"sum":        classCond(func(s *session, c egraph.ClassID) bool { return s.hasOp(c, opSum) }),
	// sortedwithin(x, lo, hi): hi is runend(y, lo, e), one run of y's
	// values, and physical int array x never decreases within each run
	// of y's (ArrayStats.SortedWithin) and repeats values within them.
	"sortedwithin": classCond3(func(s *session, x, lo, hi egraph.ClassID) bool { return s.sortedWithin(x, lo, hi) }),
	// denserows(x, y, c): the rows of coordinates x in the segments of y
	// each hold every coordinate 0 .. max(x), and the analysis bounds c
	// to exactly those (keys(c) is then the row's coordinates, no more).
	"denserows": classCond3(func(s *session, x, y, c egraph.ClassID) bool {
		xn, ok1 := s.globalName(s.g, x)
		yn, ok2 := s.globalName(s.g, y)
		if !ok1 || !ok2 || !s.conds.denseRows(xn, yn) {
			return false
		}
		_, hi := s.store[xn].(*storage.Array).IntRange()
		return s.g.Data(c).Range == interval{0, hi, true}
	}),
}

// readsAny reports whether the class of metavariable args[0] reads one
// of the variables args[1:]; ok is false where one is unbound.
func readsAny(s *session, m match, args []string) (reads, ok bool) {
	e, ok := metaClass(m, args[0])
	if !ok {
		return false, false
	}
	fv := s.g.Data(e).FV
	for _, a := range args[1:] {
		sym, ok := s.metaSym(m, a)
		if !ok {
			return false, false
		}
		if fv.has(uint32(sym)) {
			return true, true
		}
	}
	return false, true
}

// built reports whether the class c is a dictionary the plan already
// builds as @dense or @hash: such a singleton, or a sum of them.
func (s *session) built(c egraph.ClassID) bool {
	g := s.g
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		if n.Op == opSum {
			body := n.Children[3]
			n = egraph.Node{}
			for _, bid := range g.Nodes(body) {
				if b := g.Node(bid); b.Op == opSingle {
					n = b
				}
			}
		}
		if n.Op == opSingle && (ir.Ann(n.Payload) == ir.AnnDense || ir.Ann(n.Payload) == ir.AnnHash) {
			return true
		}
	}
	return false
}

// hasLoop reports whether the class c runs a loop (a sum or a merge) in
// every term, looking depth operators down.
func (s *session) hasLoop(c egraph.ClassID, depth int) bool {
	g := s.g
	if depth == 0 {
		return false
	}
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		if n.Op == opSum || n.Op == opMerge {
			continue
		}
		loop := false
		for i := binderCount(n.Op); i < len(n.Children) && !loop; i++ {
			loop = s.hasLoop(n.Children[i], depth-1)
		}
		if !loop {
			return false
		}
	}
	return true
}

// holds reports whether the bool class c is true whatever its variables'
// values, by the intervals of its int operands (the ranges of the loops
// that bind them, the data's scalars and arrays): a comparison whose
// intervals never overlap the other way, or a conjunction of such
// (depth bounds the nesting looked into).
func (s *session) holds(c egraph.ClassID, depth int) bool {
	g := s.g
	if depth == 0 {
		return false
	}
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		if n.Op == opBool {
			if n.Payload == 1 {
				return true
			}
			continue
		}
		if n.Op == opAnd {
			if s.holds(n.Children[0], depth-1) && s.holds(n.Children[1], depth-1) {
				return true
			}
			continue
		}
		if len(n.Children) != 2 {
			continue
		}
		a, b := g.Data(n.Children[0]).Range, g.Data(n.Children[1]).Range
		if !a.ok || !b.ok {
			continue
		}
		switch n.Op {
		case opLe:
			if a.hi <= b.lo {
				return true
			}
		case opLt:
			if a.hi < b.lo {
				return true
			}
		case opGe:
			if a.lo >= b.hi {
				return true
			}
		case opGt:
			if a.lo > b.hi {
				return true
			}
		}
	}
	return false
}

func typeCond(f func(ir.Type) bool) func(*session, match, []string) bool {
	return dataCond(func(d *Data) bool { return f(d.Type) })
}

func dataCond(f func(*Data) bool) func(*session, match, []string) bool {
	return func(s *session, m match, args []string) bool {
		c, ok := metaClass(m, args[0])
		if !ok {
			return false
		}
		d := s.g.Data(c)
		return f(&d)
	}
}

func classCond(f func(*session, egraph.ClassID) bool) func(*session, match, []string) bool {
	return func(s *session, m match, args []string) bool {
		c, ok := metaClass(m, args[0])
		return ok && f(s, c)
	}
}

// classCond3 is classCond for a condition of three classes.
func classCond3(f func(s *session, a, b, c egraph.ClassID) bool) func(*session, match, []string) bool {
	return func(s *session, m match, args []string) bool {
		a, ok1 := metaClass(m, args[0])
		b, ok2 := metaClass(m, args[1])
		c, ok3 := metaClass(m, args[2])
		return ok1 && ok2 && ok3 && f(s, a, b, c)
	}
}

// maxDenseKey bounds the keys of a dictionary built as a dense array: an
// array indexed by larger keys would be mostly empty.
const maxDenseKey = 1 << 26

// metaSym returns the variable a binder metavariable is bound to.
func (s *session) metaSym(m match, name string) (uint64, bool) {
	c, ok := metaClass(m, name)
	if !ok {
		return 0, false
	}
	return bindSym(s.g, c)
}

// hasOp reports whether class c holds a node with one of the operators.
func (s *session) hasOp(c egraph.ClassID, ops ...egraph.Op) bool {
	for _, nid := range s.g.Nodes(c) {
		op := s.g.Node(nid).Op
		for _, o := range ops {
			if op == o {
				return true
			}
		}
	}
	return false
}

// condCache memoizes the recursive conditions within one iteration (the
// runner clears it after each: a class may gain a node that proves more).
type condCache struct {
	s                *session
	strictM, linearM map[classVar]bool
	onPath           map[classVar]bool
	sorted           map[[2]string]bool // (index array, segment array) -> sorted within segments
	dense            map[[2]string]bool // (index array, segment array) -> every row full (denseRows)
}

type classVar struct {
	c   egraph.ClassID
	x   uint64
	lin bool
}

func newCondCache(s *session) *condCache {
	c := &condCache{s: s, sorted: map[[2]string]bool{}, dense: map[[2]string]bool{}}
	c.reset()
	return c
}

func (c *condCache) reset() {
	c.strictM = map[classVar]bool{}
	c.linearM = map[classVar]bool{}
	c.onPath = map[classVar]bool{}
}

// strict reports whether class e is zero whenever variable x is zero: some
// node of e proves it. A cycle proves nothing.
func (c *condCache) strict(e egraph.ClassID, x uint64) bool {
	return c.prove(e, x, false)
}

// linear reports whether class e is additive in x: e[a+b/x] = e[a/x] +
// e[b/x], hence also zero when x is.
func (c *condCache) linear(e egraph.ClassID, x uint64) bool {
	return c.prove(e, x, true)
}

func (c *condCache) prove(e egraph.ClassID, x uint64, lin bool) bool {
	g := c.s.g
	e = g.Find(e)
	d := g.Data(e)
	if !d.FV.has(uint32(x)) {
		return d.Zero // e does not depend on x: only zero is linear or strict
	}
	key := classVar{e, x, lin}
	memo := c.strictM
	if lin {
		memo = c.linearM
	}
	if v, ok := memo[key]; ok {
		return v
	}
	if c.onPath[key] {
		return false
	}
	c.onPath[key] = true
	result := false
	for _, nid := range append([]egraph.NodeID(nil), g.Nodes(e)...) {
		n := g.Node(nid)
		kids := append([]egraph.ClassID(nil), n.Children...)
		if c.proveNode(n.Op, n.Payload, kids, x, lin) {
			result = true
			break
		}
	}
	delete(c.onPath, key)
	memo[key] = result
	return result
}

// proveNode checks one node. For strictness (lin false) a product needs
// one strict factor and a sum of terms needs both; for linearity a
// product needs one linear factor and the other free of x.
func (c *condCache) proveNode(op egraph.Op, payload uint64, kids []egraph.ClassID, x uint64, lin bool) bool {
	g := c.s.g
	p := func(i int) bool { return c.prove(kids[i], x, lin) }
	free := func(i int) bool { return !g.Data(kids[i]).FV.has(uint32(x)) }
	binds := func(i int) bool { sym, _ := bindSym(g, kids[i]); return sym == x }
	switch op {
	case opVar:
		return payload == x
	case opNeg:
		return p(0)
	case opAdd, opSub:
		return p(0) && p(1)
	case opMul:
		if lin {
			return (p(0) && free(1)) || (free(0) && p(1))
		}
		return p(0) || p(1)
	case opDiv:
		// x/c is linear in x for reals; 0/c is not zero when c is 0.
		return lin && g.Data(kids[0]).Type.Base == ir.Real && g.Data(kids[1]).Type.Base == ir.Real && p(0) && free(1)
	case opSingle:
		return p(1) && (!lin || free(0))
	case opLookup:
		return p(0) && (!lin || free(1))
	case opIf:
		return p(1) && (!lin || free(0))
	case opIfElse:
		return p(1) && p(2) && (!lin || free(0))
	case opLet:
		if binds(0) { // the body sees another x
			return p(1) && c.prove(kids[2], x, lin)
		}
		y, _ := bindSym(g, kids[0])
		if lin {
			return (free(1) && p(2)) || (p(1) && free(2) && c.prove(kids[2], y, true))
		}
		return p(2) || (p(1) && c.prove(kids[2], y, false))
	case opSum:
		if binds(0) || binds(1) {
			return false
		}
		v, _ := bindSym(g, kids[1])
		if lin {
			return (free(2) && p(3)) || (p(2) && free(3) && c.prove(kids[3], v, true))
		}
		return p(3) || (c.iterZero(kids[2]) && p(2))
	case opMerge:
		if binds(0) || binds(1) || binds(2) {
			return false
		}
		if lin {
			return free(3) && free(4) && p(5)
		}
		return p(5)
	}
	return false
}

// iterZero reports whether iterating a zero of source class s yields
// nothing: true for computed dictionaries, false for subarrays (which
// visit every position whatever the values).
func (c *condCache) iterZero(s egraph.ClassID) bool {
	return !c.s.hasOp(s, opSubArray, opRange)
}

// sortedVec reports whether class v is a vector of distinct ints in
// increasing order, so that merge may intersect it with a two-pointer walk:
// a range, or a segment X(P(i):P(i+1)) of an int array X that increases
// strictly within every segment of P (checked on the data).
// sortedRuns reports whether class a is a physical int array whose
// values never decrease (ArrayStats.Sorted) and repeat: equal values are
// runs of more than one position.
func (s *session) sortedRuns(a egraph.ClassID) bool {
	name, ok := s.globalName(s.g, a)
	as := s.stats.Arrays[name]
	return ok && as.Sorted && as.Runs < as.Len
}

// sortedWithin reports whether class hi is runend(y, lo, e) and class x
// a physical int array that never decreases within each run of y's
// values and repeats values within them.
func (s *session) sortedWithin(x, lo, hi egraph.ClassID) bool {
	g := s.g
	xn, ok := s.globalName(g, x)
	if !ok {
		return false
	}
	as := s.stats.Arrays[xn]
	for _, hn := range g.Nodes(hi) {
		h := g.Node(hn)
		if h.Op != opCall || s.symName(h.Payload) != "runend" || len(h.Children) != 3 || g.Find(h.Children[1]) != g.Find(lo) {
			continue
		}
		if yn, ok := s.globalName(g, h.Children[0]); ok {
			if runs, ok := as.SortedWithin[yn]; ok && runs < as.Len {
				return true
			}
		}
	}
	return false
}

func (c *condCache) sortedVec(v egraph.ClassID) bool {
	s := c.s
	g := s.g
	if g.Data(v).Type != (ir.Type{Depth: 1, Base: ir.Int}) {
		return false
	}
	for _, nid := range g.Nodes(v) {
		n := g.Node(nid)
		switch n.Op {
		case opRange:
			return true
		case opCall:
			// The runs of a window of an array that never decreases (a
			// sorted COO level) have increasing values. The window reads
			// no variable: the engine walks the runs of such a window,
			// found once, as a compressed level's coordinates.
			if s.symName(n.Payload) == "runs" && c.sortedWindow(n.Children[0]) {
				return true
			}
		case opSubArray:
			x, ok := s.globalName(g, n.Children[0])
			if !ok {
				continue
			}
			p, ok := s.segmentArray(g, n.Children[1], n.Children[2])
			if !ok {
				continue
			}
			if c.sortedWithin(x, p) {
				return true
			}
		}
	}
	return false
}

// sortedWindow reports whether class w is a window x(lo:hi) of a
// physical int array x that never decreases, with bounds the engine's
// run layout finds once (closedBound).
func (c *condCache) sortedWindow(w egraph.ClassID) bool {
	s := c.s
	for _, nid := range s.g.Nodes(w) {
		n := s.g.Node(nid)
		if n.Op != opSubArray || !s.closedBound(n.Children[1]) || !s.closedBound(n.Children[2]) {
			continue
		}
		if x, ok := s.globalName(s.g, n.Children[0]); ok && s.stats.Arrays[x].Sorted {
			return true
		}
	}
	return false
}

// closedBound reports whether class b is an int constant, a global, or a
// global read at a constant: the bounds of a window whose runs the
// engine finds once, before the loops (engine/runwalk.go).
func (s *session) closedBound(b egraph.ClassID) bool {
	for _, nid := range s.g.Nodes(b) {
		n := s.g.Node(nid)
		switch n.Op {
		case opInt, opGlobal:
			return true
		case opLookup:
			if s.isGlobalClass(s.g, n.Children[0]) && s.hasOp(n.Children[1], opInt) {
				return true
			}
		}
	}
	return false
}

// denseRows reports whether the compressed level of coordinates x in the
// segments of p stores every coordinate of every row: each row holds
// 0 .. w-1 in order, w = max(x) + 1, so row j's entry for coordinate c
// is at position j*w + c (M5).
func (c *condCache) denseRows(x, p string) bool {
	return c.onArrays(c.dense, x, p, rowsDense)
}

// onArrays is f(store, x, p), remembered in m for the session: the
// answers scan the data's arrays.
func (c *condCache) onArrays(m map[[2]string]bool, x, p string, f func(storage.Store, string, string) bool) bool {
	key := [2]string{x, p}
	if v, ok := m[key]; ok {
		return v
	}
	ok := f(c.s.store, x, p)
	m[key] = ok
	return ok
}

// rowsDense is denseRows on the data: p is 0, w, 2w, ..., len(x) and
// x(q) is q mod w.
func rowsDense(st storage.Store, x, p string) bool {
	xa, ok1 := st[x].(*storage.Array)
	pa, ok2 := st[p].(*storage.Array)
	if !ok1 || !ok2 || xa.Elem != ir.Int || pa.Elem != ir.Int || len(xa.I) == 0 || len(pa.I) < 2 {
		return false
	}
	lo, hi := xa.IntRange()
	w := hi + 1
	if lo != 0 || hi >= maxDenseKey {
		return false
	}
	for i, q := range pa.I {
		if q != int64(i)*w {
			return false
		}
	}
	if pa.I[len(pa.I)-1] != int64(len(xa.I)) {
		return false
	}
	for q, v := range xa.I {
		if v != int64(q)%w {
			return false
		}
	}
	return true
}

func (c *condCache) sortedWithin(x, p string) bool {
	return c.onArrays(c.sorted, x, p, segmentsIncrease)
}

// segmentsIncrease checks that int array x increases strictly within each
// segment [p[i], p[i+1]) of int array p.
func segmentsIncrease(st storage.Store, x, p string) bool {
	xa, ok1 := st[x].(*storage.Array)
	pa, ok2 := st[p].(*storage.Array)
	return ok1 && ok2 && xa.Elem == ir.Int && pa.Elem == ir.Int && xa.IncreasesWithin(pa)
}
