package engine

import (
	"slices"
	"sync"

	"github.com/storel/storel/ir"
)

// Temporaries in the loop-nest IR: dictionaries the plan builds (a let
// t = sum ... computed once) as factor accessors and as iterators.
//
// A read t(k), or t(i)(k), of a let-bound dictionary inside a vectorized
// body is a vDictRead node: its source (a variable, or lookups into one
// at keys that do not change within the loop) is fetched once per batch
// and the lanes gathered from it. A dense vector the builder made
// (denseLeaf) is gathered from its slice, the keys outside the slice (its
// spill map) through the dictionary's own lookup; any other dictionary is
// read entry by entry. A built dictionary reads zero at an absent key; a
// physical array bound to a variable reports a read outside it, which the
// batch leaves to the closures (the interpreter's error).

// dictRead returns the node of scalar lookup e into a dictionary-valued
// expression that is not a physical object, or nil.
func (x *vctx) dictRead(e *ir.Expr) *vnode {
	t := x.c.typeOf(e)
	base := e.Args[0]
	if t.Depth != 0 || (t.Base != ir.Int && t.Base != ir.Real) || !x.invariantDict(base) {
		return nil
	}
	ix := x.intExpr(e.Args[1])
	src, _ := x.c.dictExpr(base)
	return x.node(&vnode{op: vDictRead, real: t.Base == ir.Real, a: ix, src: src, text: ir.Format(e), fv: ir.FreeVars(base)})
}

// invariantDict reports whether dictionary expression e is a variable or
// a physical hash map or trie, or lookups into one at safe keys, none of which the loop's variables or
// its vector lets change: fetching it once per batch is then exact.
func (x *vctx) invariantDict(e *ir.Expr) bool {
	if x.uses(e) {
		return false
	}
	for e.Op == ir.OpLookup {
		if !safe(e.Args[1]) {
			return false
		}
		e = e.Args[0]
	}
	if x.c.isHashGlobal(e) {
		return true
	}
	if e.Op != ir.OpVar {
		return false
	}
	b, ok := x.c.lookupVar(e.Name)
	return ok && b.slot >= 0 && b.t.Depth > 0
}

// dictRead gathers the lanes of ix from nd's dictionary; false when a
// read leaves a physical array (the batch then runs through the
// closures, which report it).
func (s *vstate) dictRead(fr *frame, nd *vnode, ix *vval, n int) (*vval, bool) {
	m := nd.src(fr)
	if ix.scalar {
		if nd.real {
			v, ok := m.getReal(ix.i)
			return s.put(nd, vval{scalar: true, f: v}), ok
		}
		v, ok := m.getInt(ix.i)
		return s.put(nd, vval{scalar: true, i: v}), ok
	}
	idx := s.ints(nd.a, ix, n)
	if dl, ok := m.(*denseLeaf); ok && dl.real == nd.real {
		if nd.real {
			buf := s.fbuf(nd, n)
			gatherDense(buf, dl.reals, idx, dl.spillF)
			return s.put(nd, vval{fv: buf}), true
		}
		buf := s.ibuf(nd, n)
		gatherDense(buf, dl.ints, idx, dl.spillI)
		return s.put(nd, vval{iv: buf}), true
	}
	if ll, ok := m.(*listLeaf); ok && ll.real == nd.real {
		if d := ll.denseIndex(); d.ok {
			nestSaw("indexed")
			if nd.real {
				buf := s.fbuf(nd, n)
				gatherDense(buf, d.reals, idx, nil)
				return s.put(nd, vval{fv: buf}), true
			}
			buf := s.ibuf(nd, n)
			gatherDense(buf, d.ints, idx, nil)
			return s.put(nd, vval{iv: buf}), true
		}
	}
	if nd.real {
		buf := s.fbuf(nd, n)
		return s.put(nd, vval{fv: buf}), gatherLookup(buf, idx, m.getReal)
	}
	buf := s.ibuf(nd, n)
	return s.put(nd, vval{iv: buf}), gatherLookup(buf, idx, m.getInt)
}

// gatherLookup sets buf[l] = get(idx[l]), or reports false at a read
// get refuses (outside a physical array).
func gatherLookup[T int64 | float64](buf []T, idx []int64, get func(int64) (T, bool)) bool {
	for l, k := range idx {
		v, ok := get(k)
		if !ok {
			return false
		}
		buf[l] = v
	}
	return true
}

// gatherDense sets buf[l] to a built dense level's value at idx[l]: its
// slice where the key falls in it, else its spill map (zero if absent).
func gatherDense[T int64 | float64](buf, src []T, idx []int64, spill map[int64]T) {
	for l, k := range idx {
		if uint64(k) < uint64(len(src)) {
			buf[l] = src[k]
		} else {
			buf[l] = spill[k]
		}
	}
}

// readsRowDict reports whether a vectorized body reads a dictionary that
// one of names (variables of an enclosing loop's row) selects: position
// space, which runs several rows' positions as one batch, cannot fetch it
// once per batch.
func readsRowDict(v *vloop, names map[string]bool) bool {
	for _, n := range v.all {
		if n.op == vDictRead && n.uses(names) {
			return true
		}
	}
	return false
}

// dictDotOf is dotOf for a segment loop whose value is y(idx(p)), or
// x(p) * y(idx(p)), y a let-bound dictionary: the segmented dot reads
// y's slice when, at run time, it is a built dense real vector.
func dictDotOf(l *nloop, nd *vnode) *segDot {
	isY := func(g *vnode) bool {
		return g.op == vDictRead && g.real && g.a.op == vVal && g.a.cl == l.arr && l.arr.info.Elem == ir.Int
	}
	var d *segDot
	switch {
	case isY(nd):
		d = &segDot{yd: nd}
	case nd.op == vMul && nd.real:
		for _, xg := range [][2]*vnode{{nd.a, nd.b}, {nd.b, nd.a}} {
			x, g := xg[0], xg[1]
			xInt := false
			if x.op == vToReal {
				x, xInt = x.a, true
			}
			if x.op == vRead && x.a.op == vLane && x.real != xInt && isY(g) {
				d = &segDot{x: x.cl, yd: g, xInt: xInt}
				break
			}
		}
	}
	if d != nil {
		l.arr.needNarrow = true
	}
	return d
}

// yReals is the vector a segmented dot reads: the physical array's, or
// the built vector's slice; false when the vector is not a dense real
// leaf or holds keys outside its slice (the batches then read it).
func (d *segDot) yReals(fr *frame) ([]float64, bool) {
	if d.yd == nil {
		return d.y.reals, true
	}
	dl, ok := d.yd.src(fr).(*denseLeaf)
	if !ok || !dl.real || len(dl.spillF) > 0 {
		return nil, false
	}
	return dl.reals, true
}

// fetchDicts records, for a short call run lane by lane (lane.go), the
// dictionary each dictionary node reads: the same for the whole call.
func (s *vstate) fetchDicts(fr *frame, v *vloop) {
	for _, nd := range v.all {
		if nd.src == nil {
			continue
		}
		if len(s.dicts) < v.nodes {
			s.dicts = make([]dict, v.nodes)
		}
		s.dicts[nd.id] = nd.src(fr)
	}
}

// laneDictI is int dictionary node nd's value at position p (a read,
// or an itDict loop's key or value).
func (s *vstate) laneDictI(nd *vnode, p int64) (int64, bool) {
	m := s.dicts[nd.id]
	switch nd.op {
	case vDictKey:
		return m.keyAt(int(p)), true
	case vDictVal:
		return m.intAt(int(p)), true
	}
	k, ok := s.laneI(nd.a, p)
	if !ok {
		return 0, false
	}
	return m.getInt(k)
}

// laneDictF is real dictionary node nd's value at position p.
func (s *vstate) laneDictF(nd *vnode, p int64) (float64, bool) {
	m := s.dicts[nd.id]
	if nd.op == vDictVal {
		return m.realAt(int(p)), true
	}
	k, ok := s.laneI(nd.a, p)
	if !ok {
		return 0, false
	}
	return m.getReal(k)
}

// A sum over a dictionary the plan built (a let-bound temporary, a row of
// one, or the value of an enclosing loop over one) is an itDict loop: its
// source is fetched when the loop is entered and kept in a frame slot,
// and its entries are visited by position 0..size()-1, the order every
// dictionary lists its entries in and the closure paths iterate (the
// interpreter's listing: increasing keys, the zeros a built level holds
// left out). The key of position p is keyAt(p), not p. In position
// space (nestflat.go), where a row of one (t(k), k a variable of the
// loop around) is walked per iteration of a loop over short rows (MMM's
// B stored by columns, its rows built once as a transposed copy), a
// block lays its rows' entries out one after another (laidRows) and
// runs them in full batches: a batch per row costs more than the row.
// Where such a walk only scatters its entries, times a factor, into a
// dense row of the result (MMM itself), the rows scatter of dictrows.go
// takes the loop first.
// (BenchmarkMMM/storel-B-csc, 100k x 100k times 100k x 250 by columns,
// ms per run in four rounds alternating with the closure path over the
// same rows, 2-core machine shared with other jobs: closures
// 3362 4254 2021 4633, laid out 1954 2111 1480 2590; go test ./engine
// -run XXX -bench 'MMM$/storel' -benchtime 2x.)

// dictIter makes nl a loop over the built dictionary src, or declines.
func (c *compiler) dictIter(nl *nloop, src *ir.Expr) {
	root := src
	for root.Op == ir.OpLookup {
		root = root.Args[0]
	}
	switch {
	case c.isHashGlobal(root):
		nl.hash = c.cell(root).info.Kind == ir.ObjHashMap
	case root.Op != ir.OpVar:
		c.noNest("its source is not a range, a physical array, a hash map or a built dictionary")
	default:
		b, ok := c.lookupVar(root.Name)
		if !ok || b.slot < 0 || b.t.Depth == 0 {
			c.noNest("its source is not a range, a physical array, a hash map or a built dictionary")
		}
		nl.hash = b.hash
	}
	d, t := c.dictExpr(src)
	slot := c.newSlot(t)
	nl.kind, nl.dslot = itDict, slot
	nl.open = func(fr *frame) (int64, int64, bool) {
		m := d(fr)
		fr.d[slot] = m
		return 0, int64(m.size()), fr.err == nil
	}
	nl.info.iter = "built dictionary " + ir.Format(src)
	if nl.hash {
		nl.info.iter = "hash map row " + ir.Format(src) + " (keys and values as slices; a lookup is a binary search, a position table at the first level)"
	}
}

// isHashGlobal reports whether e is a physical hash map or trie: the nest
// iterates it through its view (hashlevels.go for a hash map), as it does
// a dictionary the plan built.
func (c *compiler) isHashGlobal(e *ir.Expr) bool {
	if e.Op != ir.OpGlobal {
		return false
	}
	k := c.cell(e).info.Kind
	return k == ir.ObjHashMap || k == ir.ObjTrie
}

// setDictVars sets the key and value of position p of an itDict loop.
func (nl *nloop) setDictVars(fr *frame, p int64) {
	m := fr.d[nl.dslot]
	if nl.ks >= 0 {
		fr.i[nl.ks] = m.keyAt(int(p))
	}
	switch {
	case nl.vs < 0:
	case nl.vdict:
		fr.d[nl.vs] = m.dictAt(int(p))
	case nl.vreal:
		fr.f[nl.vs] = m.realAt(int(p))
	default:
		fr.i[nl.vs] = m.intAt(int(p))
	}
}

// dictVar returns the node of the key or value variable of an itDict
// loop, or nil for another variable.
func (x *vctx) dictVar(e *ir.Expr) *vnode {
	slot := x.nl.dslot
	src := func(fr *frame) dict { return fr.d[slot] }
	switch e.Name {
	case x.loopK:
		return x.node(&vnode{op: vDictKey, src: src, text: e.Name})
	case x.loopV:
		return x.node(&vnode{op: vDictVal, real: x.nl.vreal, src: src, text: e.Name})
	}
	return nil
}

// dictEntries evaluates the key (vDictKey) or value (vDictVal) of
// positions p0..p0+n-1 of the dictionary an itDict loop iterates.
func (s *vstate) dictEntries(fr *frame, nd *vnode, p0 int64, n int) *vval {
	m, q := nd.src(fr), int(p0)
	switch {
	case nd.op == vDictKey:
		return s.put(nd, vval{iv: entryKeys(m, q, n, s.ibuf(nd, n))})
	case nd.real:
		return s.put(nd, vval{fv: entryVals(m, q, n, s.fbuf(nd, n))})
	}
	return s.put(nd, vval{iv: entryVals(m, q, n, s.ibuf(nd, n))})
}

// entryKeys returns the keys of positions q..q+n-1 of m: a slice of m's
// own where its keys are one (a hash map's row, a dense vector's list, a
// sorted list's keys, rows laid out), else buf filled one entry at a
// time.
func entryKeys(m dict, q, n int, buf []int64) []int64 {
	switch d := m.(type) {
	case *laidRows:
		return d.keys[q : q+n]
	case *hashRow:
		return d.keySlice()[q : q+n]
	case *denseLeaf:
		return d.list()[q : q+n]
	case *listLeaf:
		d.init()
		return d.keys[q : q+n]
	case *rowLeaf:
		if d.nkeys != nil {
			for l, k := range d.nkeys[q : q+n] {
				buf[l] = int64(k)
			}
			return buf[:n]
		}
		return d.lkeys[q : q+n]
	}
	if n > 0 {
		nestSaw("one by one")
	}
	for l := range buf[:n] {
		buf[l] = m.keyAt(q + l)
	}
	return buf[:n]
}

// entryVals returns the values (reals or ints, as V) of positions
// q..q+n-1 of m, as entryKeys does its keys.
func entryVals[V int64 | float64](m dict, q, n int, buf []V) []V {
	_, real := any(buf).([]float64)
	var own []V
	switch d := m.(type) {
	case *laidRows:
		own = either[[]V](d.reals, d.ints)
	case *hashRow:
		if d.leaf() && d.g.real == real {
			own = either[[]V](d.g.reals, d.g.ints)[d.lo:d.hi]
		}
	case *denseLeaf:
		if d.list(); d.real == real {
			own = either[[]V](d.valsF, d.valsI)
		}
	case *listLeaf:
		if d.init(); d.real == real {
			own = either[[]V](d.reals, d.ints)
		}
	case *rowLeaf:
		if d.spec.real == real {
			own = either[[]V](d.reals, d.ints)
		}
	}
	if own != nil {
		return own[q : q+n]
	}
	if n > 0 {
		nestSaw("one by one")
	}
	for l := range buf[:n] {
		if real {
			buf[l] = V(m.realAt(q + l))
		} else {
			buf[l] = V(m.intAt(q + l))
		}
	}
	return buf[:n]
}

// laidRows holds the entries of a block's rows of an itDict loop laid
// out one after another (position space, nestflat.go): lane q of the
// block is its position q. It stands in the loop's own dictionary slot
// while the block runs, read only by the loop's key and value (positions
// 0..size()-1); its lookups, the embedded empty dictionary's, are not
// the plan's and are never made.
type laidRows struct {
	emptyDict
	keys  []int64
	ints  []int64
	reals []float64
}

func (d *laidRows) size() int            { return len(d.keys) }
func (d *laidRows) keyAt(p int) int64    { return d.keys[p] }
func (d *laidRows) intAt(p int) int64    { return d.ints[p] }
func (d *laidRows) realAt(p int) float64 { return d.reals[p] }
func (d *laidRows) reset()               { d.keys, d.ints, d.reals = d.keys[:0], d.ints[:0], d.reals[:0] }

// add appends the n entries of m: keys, and values (reals or ints) when
// vals is set.
func (d *laidRows) add(m dict, n int, vals, real bool) {
	k0 := len(d.keys)
	d.keys = slices.Grow(d.keys, n)[:k0+n]
	layOut(d.keys[k0:], entryKeys(m, 0, n, d.keys[k0:]))
	switch {
	case !vals:
	case real:
		d.reals = slices.Grow(d.reals, n)[:k0+n]
		layOut(d.reals[k0:], entryVals(m, 0, n, d.reals[k0:]))
	default:
		d.ints = slices.Grow(d.ints, n)[:k0+n]
		layOut(d.ints[k0:], entryVals(m, 0, n, d.ints[k0:]))
	}
}

// layOut copies src, an entry function's result given dst as its
// buffer, into dst unless it is dst already.
func layOut[T int64 | float64](dst, src []T) {
	if len(src) > 0 && &src[0] != &dst[0] {
		copy(dst, src)
	}
}

// denseIndex is a sorted-list leaf's values laid out by key, made on the
// first batch that reads the leaf at an index, so that a loop reading it
// at every entry (BATAX's Aᵀ·t where t is a scaled vector: a listLeaf)
// gathers instead of searching per key. ok is false when the keys are
// negative or spread too far for their number (holdKeysOf's bound).
type denseIndex struct {
	once  sync.Once
	ok    bool
	reals []float64
	ints  []int64
}

func (l *listLeaf) denseIndex() *denseIndex {
	d := &l.dense
	d.once.Do(func() {
		l.init()
		n := len(l.keys)
		if n == 0 || l.keys[0] < 0 || l.keys[n-1] >= max(maxDenseJump, denseKeysFactor*int64(n)) {
			return
		}
		size := l.keys[n-1] + 1
		if l.real {
			d.reals = make([]float64, size)
			for p, k := range l.keys {
				d.reals[k] = l.reals[p]
			}
		} else {
			d.ints = make([]int64, size)
			for p, k := range l.keys {
				d.ints[k] = l.ints[p]
			}
		}
		d.ok = true
	})
	return d
}

// keyInterval bounds the keys of positions lo..hi-1 of an itDict loop's
// dictionary: every dictionary lists its keys in increasing order, so
// they are the keys at the two ends (not so rows laid out in a block).
func (n *vnode) keyInterval(fr *frame, lo, hi int64) (int64, int64, bool) {
	m := n.src(fr)
	if _, laid := m.(*laidRows); laid || hi <= lo || hi > int64(m.size()) {
		return 0, 0, false
	}
	return m.keyAt(int(lo)), m.keyAt(int(hi - 1)), true
}
