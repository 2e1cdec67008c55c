package opt

import (
	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// Data is the e-class analysis of the optimizer: what every expression of
// a class shares.
type Data struct {
	// Type is the class's type; every node of a class has it (rules whose
	// right-hand side would have another type are not applied).
	Type ir.Type
	// FV holds the variables that every term of the class needs: the
	// intersection over the class's nodes of their free variables. A rule
	// that moves a class out of a binder checks the binder is not in FV,
	// and extraction only builds a class from nodes whose free variables
	// are within FV, so the moved term never mentions the binder.
	FV varSet
	// Card is the structured cardinality (§5.5, Fig. 5).
	Card Card
	// Known and Value: the class is an int whose value is known (a
	// constant or an int scalar of the data): the #m of §5.5.
	Known bool
	Value int64
	// Sel is the selectivity of a bool class.
	Sel float64
	// Zero and One: the class holds the constant 0 (of any type) or 1.
	Zero, One bool
	// Zeroful: a term of the class may be a dictionary that stores
	// explicit zeros, which a sum over it visits: a physical array, range,
	// subarray, hash map or trie, or what passes one through unchanged (a
	// variable bound to one, a lookup into one, a branch, a sum whose body
	// is one). A computed dictionary (a singleton, a scaled or multiplied
	// one) holds no zeros. Rules that equate the two kinds (T1) need the
	// class to be zero-free: a sum with a non-strict body tells them apart.
	Zeroful bool
	// Range bounds an int class's value, or the values of a dictionary
	// of ints (see dictInterval); Safe: no term of the class can fail
	// (see safety.go).
	Range interval
	Safe  bool
	// Keys holds, for a dictionary of ints, variables that are a key of
	// every entry (each at one level): two such dictionaries built for
	// different values of one of them have no entry in common, so a sum
	// over that variable adds no two values (see dictInterval).
	Keys varSet
	// Pos is the source position the class's terms came from (an index
	// into session.positions, 0 for none): the first position a term of
	// the class was added with, or the position of the class a rewrite
	// matched when it built the class (see session.curPos). Extraction
	// gives it to the plan's nodes so that run-time errors name the
	// user's text. It is not part of equal: it never changes a parent.
	Pos uint32
}

func (d *Data) equal(o *Data) bool {
	return d.Type == o.Type && d.FV.equal(o.FV) && d.Card.equal(o.Card) && d.Known == o.Known &&
		d.Value == o.Value && d.Sel == o.Sel && d.Zero == o.Zero && d.One == o.One && d.Zeroful == o.Zeroful && d.Range == o.Range && d.Safe == o.Safe &&
		d.Keys.equal(o.Keys)
}

type graph = egraph.EGraph[Data]

// analysis implements egraph.Analysis for the session s.
type analysis struct{ s *session }

// Make computes the datum of one node from its children's.
func (a analysis) Make(g *graph, n egraph.Node) Data {
	s := a.s
	var d Data
	kids := s.kidTypes(g, n)
	d.Type, _ = nodeType(s, n, kids)
	d.FV = s.nodeFV(g, n)
	d.Card = s.nodeCard(g, n)
	switch n.Op {
	case opInt:
		d.Known, d.Value = true, int64(n.Payload)
	case opGlobal:
		if v, ok := s.stats.Ints[s.lang.syms.Name(n.Payload)]; ok {
			d.Known, d.Value = true, v
		}
	case opAdd, opSub, opMul:
		x, y := g.Data(n.Children[0]), g.Data(n.Children[1])
		if x.Known && y.Known && d.Type == ir.IntType {
			d.Known = true
			switch n.Op {
			case opAdd:
				d.Value = x.Value + y.Value
			case opSub:
				d.Value = x.Value - y.Value
			default:
				d.Value = x.Value * y.Value
			}
		}
	}
	if d.Type.Base == ir.Bool && d.Type.Depth == 0 {
		d.Sel = s.nodeSel(g, n)
	}
	d.Zero = isZeroNode(n)
	d.One = isOneNode(n)
	d.Zeroful = d.Type.Depth > 0 && s.nodeZeroful(g, n)
	d.Keys = s.nodeKeys(g, n, &d)
	d.Range = s.nodeInterval(g, n, &d)
	d.Safe = s.nodeSafe(g, n)
	d.Pos = s.curPos
	return d
}

// nodeZeroful computes Data.Zeroful for one dictionary-typed node.
func (s *session) nodeZeroful(g *graph, n egraph.Node) bool {
	kid := func(i int) bool { return g.Data(n.Children[i]).Zeroful }
	switch n.Op {
	case opGlobal, opRange, opSubArray:
		return true
	case opVar:
		return s.vars[n.Payload].zeroful
	case opLookup, opNeg:
		return kid(0)
	case opAdd, opSub:
		return kid(0) || kid(1)
	case opSingle, opIf:
		return kid(1)
	case opIfElse:
		return kid(1) || kid(2)
	case opLet:
		return kid(2)
	case opSum:
		return kid(3)
	case opMerge:
		return kid(5)
	}
	return false
}

// Merge joins two data of one class.
func (analysis) Merge(into *Data, from Data) egraph.MergeResult {
	old := *into
	m := old
	m.FV = old.FV.intersect(from.FV)
	m.Card = old.Card.meet(from.Card)
	if !m.Known && from.Known {
		m.Known, m.Value = true, from.Value
	}
	if m.Type.Base == ir.Unknown {
		m.Type = from.Type
	}
	if from.Sel < m.Sel {
		m.Sel = from.Sel
	}
	m.Zero = m.Zero || from.Zero
	m.One = m.One || from.One
	m.Zeroful = m.Zeroful || from.Zeroful
	m.Range = old.Range.meet(from.Range)
	m.Keys = old.Keys.union(from.Keys)
	m.Safe = old.Safe && from.Safe
	if m.Pos == 0 {
		m.Pos = from.Pos
	}
	*into = m
	return egraph.MergeResult{IntoChanged: !m.equal(&old), FromChanged: !m.equal(&from)}
}

// Modify is not used: the optimizer folds nothing eagerly.
func (analysis) Modify(*graph, egraph.ClassID) {}

func (s *session) kidTypes(g *graph, n egraph.Node) []ir.Type {
	kids := s.typeScratch[:0]
	for _, c := range n.Children {
		kids = append(kids, g.Data(c).Type)
	}
	s.typeScratch = kids
	return kids
}

// bindSym returns the variable of a binder child (a variable's class).
func bindSym(g *graph, c egraph.ClassID) (uint64, bool) {
	for _, nid := range g.Nodes(c) {
		if n := g.Node(nid); n.Op == opVar {
			return n.Payload, true
		}
	}
	return 0, false
}

// nodeFV computes the free variables of n from its children's classes.
func (s *session) nodeFV(g *graph, n egraph.Node) varSet {
	switch n.Op {
	case opVar:
		return singletonSet(uint32(n.Payload))
	case opGlobal, opInt, opReal, opBool, opEmpty:
		return nil
	}
	nb := binderCount(n.Op)
	var binders [3]uint32
	for i := 0; i < nb; i++ {
		sym, _ := bindSym(g, n.Children[i])
		binders[i] = uint32(sym)
	}
	var fv varSet
	for i, c := range n.Children {
		if i < nb {
			continue
		}
		cf := g.Data(c).FV
		if inScope(n.Op, i) {
			cf = cf.minus(binders[:nb]...)
		}
		fv = fv.union(cf)
	}
	return fv
}

// nodeSel estimates the selectivity of a bool node.
func (s *session) nodeSel(g *graph, n egraph.Node) float64 {
	kid := func(i int) float64 { return g.Data(n.Children[i]).Sel }
	switch n.Op {
	case opBool:
		return float64(n.Payload)
	case opEq:
		return selEq
	case opNe:
		return selNe
	case opLt, opLe, opGt, opGe:
		return selCmp
	case opAnd:
		if s.isBoundsTest(g, n.Children[0], n.Children[1]) {
			return 1 // a guard the optimizer wrote: it passes for data that fits its arrays
		}
		return kid(0) * kid(1)
	case opOr:
		a, b := kid(0), kid(1)
		return a + b - a*b
	case opNot:
		return 1 - kid(0)
	case opIfElse:
		return max(kid(1), kid(2))
	case opLet:
		return kid(2)
	}
	return selElse
}

// isBoundsTest recognizes lo <= e && e < hi, the guard F1r, F1s, T4 and
// LK5 put around a read.
func (s *session) isBoundsTest(g *graph, a, b egraph.ClassID) bool {
	for _, an := range g.Nodes(a) {
		x := g.Node(an)
		if x.Op != opLe {
			continue
		}
		for _, bn := range g.Nodes(b) {
			y := g.Node(bn)
			if y.Op == opLt && g.Find(x.Children[1]) == g.Find(y.Children[0]) {
				return true
			}
		}
	}
	return false
}

// nodeCard computes the structured cardinality of n (Fig. 5, extended to
// every operator).
func (s *session) nodeCard(g *graph, n egraph.Node) Card {
	kid := func(i int) Card { return g.Data(n.Children[i]).Card }
	switch n.Op {
	case opVar:
		return s.vars[n.Payload].card
	case opGlobal:
		return s.globalCard(n.Payload)
	case opEmpty:
		t := emptyType(n.Payload)
		c := make(Card, t.Depth)
		for i := range c {
			c[i] = Level{Size: 0, Layout: LayoutDense}
		}
		return c
	case opNeg:
		return kid(0)
	case opAdd, opSub:
		a, b := kid(0), kid(1)
		if len(a) == 0 || len(a) != len(b) {
			return a
		}
		out := make(Card, len(a))
		for i := range a {
			out[i] = Level{Size: a[i].Size + b[i].Size, Layout: a[i].Layout, Keys: a[i].Keys.hull(b[i].Keys)}
			out[i].Size = out[i].capped(out[i].Size)
			if b[i].Layout.rank() > a[i].Layout.rank() {
				out[i].Layout = b[i].Layout
			}
		}
		return out
	case opMul:
		a, b := kid(0), kid(1)
		switch {
		case len(a) == 0:
			return b
		case len(b) == 0:
			return a
		}
		return a.meet(b)
	case opSingle:
		l := Level{Size: s.nonZero(g, n.Children[1], 3), Layout: annLayout(ir.Ann(n.Payload)), Keys: g.Data(n.Children[0]).Range}
		return append(Card{l}, kid(1)...)
	case opLookup:
		return kid(0).Elem()
	case opRange:
		lo, hi := g.Data(n.Children[0]).Range, g.Data(n.Children[1]).Range
		l := Level{Size: s.boundsSize(g, n.Children[0], n.Children[1], -1), Layout: LayoutArray}
		if lo.ok && hi.ok {
			l.Keys = interval{lo.lo, hi.hi - 1, true}
		}
		return Card{l}
	case opSubArray:
		whole := kid(0)
		lo, hi := g.Data(n.Children[1]).Range, g.Data(n.Children[2]).Range
		l := Level{Size: s.boundsSize(g, n.Children[1], n.Children[2], whole.Size()), Layout: LayoutArray}
		if lo.ok && hi.ok {
			l.Keys = interval{lo.lo, hi.hi - 1, true}
		}
		if len(whole) > 0 {
			l.Keys = l.Keys.meet(whole[0].Keys)
		}
		return Card{l}
	case opCall:
		if s.symName(n.Payload) == "runs" {
			return s.runsCard(g, n.Children[0])
		}
	case opIf:
		out := kid(1).scaled(g.Data(n.Children[0]).Sel)
		return s.guardedKeys(g, out, n.Children[0], n.Children[1])
	case opIfElse:
		a, b := kid(1), kid(2)
		if len(a) > 0 && len(b) == len(a) && b[0].Size > a[0].Size {
			return b
		}
		return a
	case opLet:
		return kid(2)
	case opSum:
		return kid(3).scaledAt(s.invariantLevels(g, n.Children[3], n.Children[0], n.Children[1]), kid(2).Size())
	case opMerge:
		n1, n2 := kid(3).Size(), kid(4).Size()
		return kid(5).scaled(mergeMatches(n1, n2))
	}
	return nil
}

// runsCard is the cardinality of runs(w), w a window of an int array: the
// window's size scaled by the array's runs per position (all of them
// where the statistics do not say).
func (s *session) runsCard(g *graph, w egraph.ClassID) Card {
	c := g.Data(w).Card
	if len(c) != 1 {
		return c
	}
	frac := 1.0
	for _, nid := range g.Nodes(w) {
		arr := w
		if n := g.Node(nid); n.Op == opSubArray {
			arr = n.Children[0]
		}
		if name, ok := s.globalName(g, arr); ok {
			if as, ok := s.stats.Arrays[name]; ok && as.Len > 0 && as.Runs > 0 {
				frac = float64(as.Runs) / float64(as.Len)
			}
		}
	}
	l := c[0]
	l.Size = max(min(l.Size, 1), l.Size*frac)
	return Card{l}
}

// guardedKeys narrows the keys of if c then { k -> e }: the entries the
// test lets through have keys within c's bounds on k.
func (s *session) guardedKeys(g *graph, out Card, c, then egraph.ClassID) Card {
	if len(out) == 0 {
		return out
	}
	for _, nid := range g.Nodes(then) {
		n := g.Node(nid)
		if n.Op != opSingle {
			continue
		}
		if k := s.narrowed(g, out[0].Keys, c, n.Children[0]); k != out[0].Keys {
			out = append(Card{}, out...)
			out[0].Keys = k
			out[0].Size = out[0].capped(out[0].Size)
		}
	}
	return out
}

// invariantLevels counts the outer levels of body (a loop's body) whose
// keys do not depend on the loop's binders: a sum of {i -> {j -> e}} over
// j's loop keeps one entry for i and many for j. It follows the first
// singleton of each class.
func (s *session) invariantLevels(g *graph, body egraph.ClassID, binders ...egraph.ClassID) int {
	var syms [2]uint32
	for i, b := range binders {
		sym, _ := bindSym(g, b)
		syms[i] = uint32(sym)
	}
	levels := 0
	for c := body; ; {
		next := egraph.ClassID(0)
		found := false
		for _, nid := range g.Nodes(c) {
			n := g.Node(nid)
			if n.Op != opSingle {
				continue
			}
			if g.Data(n.Children[0]).FV.hasAny(syms[:len(binders)]...) {
				return levels
			}
			next, found = n.Children[1], true
			break
		}
		if !found {
			return levels
		}
		levels++
		c = next
	}
}

// mergeMatches estimates how many values two vectors of n1 and n2 entries
// share: no more than the smaller, and no more than an equality join of the
// two would keep.
func mergeMatches(n1, n2 float64) float64 {
	return min(n1, n2, n1*n2*selEq)
}

// boundsSize estimates the number of positions in lo:hi: hi-lo when both
// are known, the average segment of P for P(x):P(x+1), else hi if known,
// else whole (the size of the array a subarray is cut from) or a default.
func (s *session) boundsSize(g *graph, lo, hi egraph.ClassID, whole float64) float64 {
	l, h := g.Data(lo), g.Data(hi)
	if l.Known && h.Known {
		return float64(max(h.Value-l.Value, 0))
	}
	if s.isSuccessor(g, lo, hi) {
		return 1 // e:e+1
	}
	if p, ok := s.segmentArray(g, lo, hi); ok {
		if as, ok := s.stats.Arrays[p]; ok && as.AvgSegment > 0 {
			return as.AvgSegment
		}
	}
	if n, ok := s.runSize(g, lo, hi); ok {
		return n
	}
	n := float64(defaultRangeSize)
	if whole > 0 {
		n = whole
	}
	if h.Known {
		return float64(max(h.Value, 0))
	}
	if l.Known {
		// lo:A(e), a read of an int array (sell's row lengths): the
		// array's mean value less lo, as e runs over its indices.
		if as, ok := s.lookupStats(g, hi); ok && as.HasRange {
			return min(n, max(as.Mean-float64(l.Value), 0))
		}
	}
	return n
}

// runSize recognizes bounds p:runend(A, p, e), one run of equal values of
// A, and returns A's average run length.
func (s *session) runSize(g *graph, lo, hi egraph.ClassID) (float64, bool) {
	for _, hn := range g.Nodes(hi) {
		h := g.Node(hn)
		if h.Op != opCall || s.symName(h.Payload) != "runend" || g.Find(h.Children[1]) != g.Find(lo) {
			continue
		}
		if name, ok := s.globalName(g, h.Children[0]); ok {
			if as, ok := s.stats.Arrays[name]; ok && as.Runs > 0 {
				return float64(as.Len) / float64(as.Runs), true
			}
		}
	}
	return 0, false
}

// segmentArray recognizes bounds P(x):P(x+1) (or P(c):P(c+1) for
// constants) and returns P.
func (s *session) segmentArray(g *graph, lo, hi egraph.ClassID) (string, bool) {
	for _, ln := range g.Nodes(lo) {
		l := g.Node(ln)
		if l.Op != opLookup {
			continue
		}
		for _, hn := range g.Nodes(hi) {
			h := g.Node(hn)
			if h.Op != opLookup || g.Find(h.Children[0]) != g.Find(l.Children[0]) {
				continue
			}
			if !s.isGlobalClass(g, l.Children[0]) {
				continue
			}
			if s.isSuccessor(g, l.Children[1], h.Children[1]) {
				name, _ := s.globalName(g, l.Children[0])
				return name, true
			}
		}
	}
	return "", false
}

// isSuccessor reports whether class b is a+1.
func (s *session) isSuccessor(g *graph, a, b egraph.ClassID) bool {
	da, db := g.Data(a), g.Data(b)
	if da.Known && db.Known {
		return db.Value == da.Value+1
	}
	for _, nid := range g.Nodes(b) {
		n := g.Node(nid)
		if n.Op != opAdd {
			continue
		}
		x, y := n.Children[0], n.Children[1]
		if g.Find(x) == g.Find(a) && g.Data(y).Known && g.Data(y).Value == 1 {
			return true
		}
		if g.Find(y) == g.Find(a) && g.Data(x).Known && g.Data(x).Value == 1 {
			return true
		}
	}
	return false
}

func (s *session) isGlobalClass(g *graph, c egraph.ClassID) bool {
	_, ok := s.globalName(g, c)
	return ok
}

// globalName returns the physical object a class is, if it is one.
func (s *session) globalName(g *graph, c egraph.ClassID) (string, bool) {
	for _, nid := range g.Nodes(c) {
		if n := g.Node(nid); n.Op == opGlobal {
			return s.lang.syms.Name(n.Payload), true
		}
	}
	return "", false
}

// mostlyZero is the fraction of zeros from which nonZero counts them.
const mostlyZero = 0.5

// nonZero is the chance that the scalar class c is not zero, from the
// zeros of the mostly-zero arrays it reads (Stats.Zeros, at least
// mostlyZero): a singleton whose value is a read of such an array (a
// dense factor of density 1/32) adds an entry that often only, since a
// built dictionary stores no zeros. A product is non-zero when both
// factors are; any other value counts as non-zero (depth bounds the
// products looked into). The few explicit zeros a sparse format may
// store leave the sizes as they were: they would move the estimates of
// near-tied plans (MTTKRP's merge against a row built per fiber) by
// noise, not by what the copy of M6 saves.
func (s *session) nonZero(g *graph, c egraph.ClassID, depth int) float64 {
	if depth == 0 || g.Data(c).Type.Depth != 0 {
		return 1
	}
	p := 1.0
	for _, nid := range g.Nodes(c) {
		n := g.Node(nid)
		switch n.Op {
		case opLookup:
			if name, ok := s.globalName(g, n.Children[0]); ok {
				if as, ok := s.stats.Arrays[name]; ok && as.Zeros >= mostlyZero && as.Zeros < 1 {
					p = min(p, 1-as.Zeros)
				}
			}
		case opMul:
			p = min(p, s.nonZero(g, n.Children[0], depth-1)*s.nonZero(g, n.Children[1], depth-1))
		}
	}
	return p
}

// globalCard is the cardinality of a physical object.
func (s *session) globalCard(sym uint64) Card {
	name := s.lang.syms.Name(sym)
	if as, ok := s.stats.Arrays[name]; ok {
		return Card{{Size: float64(as.Len), Layout: LayoutArray, Keys: interval{0, as.Len - 1, true}}}
	}
	if fo, ok := s.stats.Maps[name]; ok {
		c := make(Card, len(fo))
		keys := s.stats.MapKeys[name]
		for i, x := range fo {
			c[i] = Level{Size: x, Layout: LayoutStored}
			if i < len(keys) {
				c[i].Keys = interval{0, keys[i], true}
			}
		}
		return c
	}
	t := s.globals[sym]
	c := make(Card, t.Depth)
	for i := range c {
		c[i] = Level{Size: defaultRangeSize, Layout: LayoutHash}
	}
	return c
}
