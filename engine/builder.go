package engine

import (
	"slices"
)

// bspec says how a dictionary under construction is represented, level by
// level: dense (a slice indexed by key, for @dense singletons), hash (a Go
// map, for @hash ones) or list (for unannotated and @unique ones: a sorted
// list while keys arrive in increasing order, as they do when a storage
// mapping is walked, turning into a Go map at the first key out of order).
type bspec struct {
	depth int // levels of keys; 1: the values are scalars
	real  bool
	dense bool
	list  bool
	kid   *bspec // depth > 1: the spec of the values
	out   *blockSink
}

// maxDenseJump bounds how far past its current length a dense level grows
// at once: keys beyond both this and twice the length go to the spill map,
// so one stray huge key cannot allocate gigabytes.
const maxDenseJump = 1 << 16

// builder accumulates a dictionary in place: leaves with +=, children
// recursively. The zero value is not usable; see newBuilder.
//
// Most builders are the rows of a nested level (one per key of the level
// above: a hundred thousand or more for MTTKRP and MMM), and what
// they cost per row is what they cost in all. So the struct holds what a
// row of scalars uses while it is built and once it is closed (its
// values, its keys as a list, its workspace: 128 bytes, 7 pointers for
// the collector to scan), and the fields of the rarer cases (children,
// hash levels, keys spilled out of a dense slice, the workspaces of the
// dictionary) live in a side struct that only the builders needing one
// get (see builderAux). A closed row of a workspace level is frozen as it
// is (rowLeaf), and dense levels grow by doubling (growTo).
// BenchmarkBuildRows measures the per-row cost.
type builder struct {
	spec *bspec
	// Scalar leaves (depth 1), dense: by key.
	reals []float64
	ints  []int64
	// List mode: keys in increasing order, with reals, ints or kids
	// aligned to them. A closed row of a workspace leaf level keeps them
	// narrow, in nkeys (lkeys nil; see releaseLeaf); listLen and listKey
	// read either.
	lkeys []int64
	nkeys []int32
	// Workspace mode, for the dense levels below the outermost (see
	// workspace.go): while open, reals, ints or kids are the workspace's
	// slice and the workspace lists the keys written; closed, the
	// entries are in list mode (or b has a dense slice of its own and
	// ws is nil).
	ws     *workspace
	x      *builderAux // nil until needed
	listed bool
	open   bool
	// app: a sequential row taking its entries in increasing key order
	// (appendrow.go): they are in its workspace's append list, not its
	// slice, and reals and ints are empty.
	app bool
	// grown: a closed list row's keys and values are storage of its own
	// (appendKid), not carved from the level's blocks, so appending
	// within their capacity overwrites no other row.
	grown bool
	moved int32 // entries copied back into the workspace by reopenings
}

// listLen is the number of keys of a list-mode builder.
func (b *builder) listLen() int { return len(b.lkeys) + len(b.nkeys) }

// listKey is key i of a list-mode builder.
func (b *builder) listKey(i int) int64 {
	if b.nkeys != nil {
		return int64(b.nkeys[i])
	}
	return b.lkeys[i]
}

// addList adds the entries of a list (keys and vals aligned, vals at
// least as long) to b.
func addList[K int32 | int64, V int64 | float64](b *builder, keys []K, vals []V) {
	vals = vals[:len(keys)]
	switch vs := any(vals).(type) {
	case []float64:
		for i, k := range keys {
			b.addReal(int64(k), vs[i])
		}
	case []int64:
		for i, k := range keys {
			b.addInt(int64(k), vs[i])
		}
	}
}

// builderAux holds the fields of a builder that a row of scalars built
// in a workspace does not use: every builder of children has one, leaves
// get one for a hash level or a key spilled out of their dense slice.
type builderAux struct {
	mreal map[int64]float64 // hash, or dense keys outside the slice
	mint  map[int64]int64
	// Children (depth > 1).
	kids  []kid // dense: by key
	mkids map[int64]*kid
	tree  *tree // the workspaces of the dictionary b belongs to
	// Sequential mode (seqrows.go): sequential until the first row,
	// seq while in the mode.
	sequential bool
	seq        *seqRows
	// coll: the entries of a dictionary of rows collecting (collect.go).
	coll *collected
	// The spill map's keys in order (and its children, aligned), sorted
	// by the worker that built a private result (sortSpill), so that the
	// merge, which one worker runs, does not sort them; stale when the
	// map has grown since.
	spillKeys []int64
	spillKids []*kid
	// reach, if not 0, bounds the keys of a dense level of children: a
	// private result of a split run, whose first key may lie far past
	// maxDenseJump (rows of a later chunk), grows its slice up to it
	// rather than keep its rows in a map (see splitReach).
	reach int64
	// firstKid: the first non-empty child of a dense level when its
	// length was firstKidOf (sortSpill); -1: not known.
	firstKid, firstKidOf int
}

// sortSpill sorts the keys of b's spill map ahead of a merge of b, and
// finds the first of b's dense children, below which the merge has
// nothing to visit (a later chunk's rows start far from key 0).
func (b *builder) sortSpill() {
	x := b.x
	if x == nil {
		return
	}
	x.firstKid, x.firstKidOf = 0, -1
	if x.coll != nil {
		return
	}
	if b.spec.depth > 1 && b.spec.dense && !b.listed && x.seq == nil && !x.sequential {
		for x.firstKid < len(x.kids) && x.kids[x.firstKid].b == nil && x.kids[x.firstKid].view == nil {
			x.firstKid++
		}
		x.firstKidOf = len(x.kids)
	}
	switch {
	case len(x.mkids) > 0:
		x.spillKeys = sortedKeys(x.mkids)
		x.spillKids = make([]*kid, len(x.spillKeys))
		for i, k := range x.spillKeys {
			x.spillKids[i] = x.mkids[k]
		}
	case len(x.mreal) > 0:
		x.spillKeys = sortedKeys(x.mreal)
	case len(x.mint) > 0:
		x.spillKeys = sortedKeys(x.mint)
	}
}

// spilled returns the keys of map m in order: sortSpill's, unless m has
// grown since.
func spilled[V any](x *builderAux, m map[int64]V) []int64 {
	if len(x.spillKeys) == len(m) {
		return x.spillKeys
	}
	x.spillKids = nil
	return sortedKeys(m)
}

// aux returns b's side struct, making it if need be.
func (b *builder) aux() *builderAux {
	if b.x == nil {
		b.x = &builderAux{}
	}
	return b.x
}

// kid is one child of a builder. Until two values meet at its key it may
// hold the single dictionary added there, shared as it is (explicit zeros
// of a physical view included, exactly as the interpreter keeps it);
// accumulating anything else turns it into a builder.
type kid struct {
	b    *builder
	view dict
}

// newBuilder returns the builder of a whole dictionary (the outermost
// level); its dense levels below are in workspace mode.
func newBuilder(s *bspec) *builder {
	b := &builder{spec: s}
	if s.depth > 1 {
		b.x = &builderAux{sequential: startsSequential(s)}
		b.x.tree = &tree{root: b, out: s.out.current()}
	}
	b.init()
	return b
}

func (b *builder) init() {
	s := b.spec
	if s.depth > 1 && b.x == nil {
		b.x = &builderAux{}
	}
	if s.list {
		b.listed = true
		return
	}
	if !s.dense {
		x := b.aux()
		switch {
		case s.depth > 1:
			x.mkids = map[int64]*kid{}
		case s.real:
			x.mreal = map[int64]float64{}
		default:
			x.mint = map[int64]int64{}
		}
	}
}

// denseGrowth returns the new length (k+1) of a dense level of length n
// that must hold key k, or 0 if k belongs in the spill map.
func denseGrowth(n int, k int64) int {
	return denseGrowthWithin(n, k, 0)
}

// denseGrowthWithin is denseGrowth for a level whose keys are known to
// lie below reach (0: not known), which may grow to any key below it.
func denseGrowthWithin(n int, k int64, reach int64) int {
	if k < 0 {
		return 0
	}
	need := k + 1
	limit := max(int64(2*n), maxDenseJump, reach)
	if need > limit {
		return 0
	}
	return int(need)
}

// growTo lengthens s to n. Elements past the length are zero: nothing is
// ever written there (a workspace zeroes what it lent). Keys spilled to a
// map are never below the capacity of the dense slice (see unspill), so
// extending the length within the capacity cannot cover one.
//
// The capacity at least doubles up to doubleUpTo elements (append grows
// a large slice by a quarter): a dense level whose keys arrive one by one
// (the rows of MTTKRP, keyed by B's first level: 117659 of them) is then
// copied about once in all rather than four times, which for a level of
// children (pointers: the copy goes through the collector's write
// barriers while it marks) is costly.
func growTo[T any](s []T, n int) []T {
	if n > cap(s) {
		c := cap(s) + cap(s)/4
		if cap(s) < doubleUpTo {
			c = 2 * cap(s)
		}
		t := make([]T, len(s), max(n, c))
		copy(t, s)
		s = t
	}
	return s[:n]
}

// doubleUpTo: see growTo.
const doubleUpTo = 1 << 22

// maxReserve bounds the up-front sizing of a level from a loop's bounds;
// beyond it the level grows as keys arrive.
const maxReserve = 1 << 27

// reserve makes a dense level hold keys up to n-1 without growing.
func (b *builder) reserve(n int64) {
	if n > maxReserve || n <= 0 {
		return
	}
	switch {
	case b.spec.depth > 1:
		if n > int64(len(b.x.kids)) {
			b.growKids(int(n))
		}
	case b.spec.real:
		if n > int64(len(b.reals)) {
			b.growReals(int(n))
		}
	default:
		if n > int64(len(b.ints)) {
			b.growInts(int(n))
		}
	}
}

// holdKeysOf grows the real dense level b to hold every key of the int
// array in c (its range is known) when that is at most denseKeysFactor
// times the array's length, or maxDenseJump: a loop adding at those keys
// then needs no check per key. The zeros the level gains are no entries.
// Without the bound relative to the array, a level could not jump to a
// key past maxDenseJump at once (a matrix with more columns than that
// would keep BATAX's scatter in its checked loop); with it,
// one stray huge key still goes to the spill map rather than allocate
// gigabytes.
func (b *builder) holdKeysOf(c *cell) {
	if c.imin >= 0 {
		b.holdKeys(c.imax, int64(len(c.ints)))
	}
}

// holdKeys is holdKeysOf for n keys from 0 to kmax.
func (b *builder) holdKeys(kmax, n int64) {
	if b.app {
		return // no slice to size while the row appends
	}
	if kmax < int64(len(b.reals)) || kmax >= max(maxDenseJump, denseKeysFactor*n) {
		return
	}
	b.growReals(int(kmax + 1))
}

// denseKeysFactor bounds holdKeysOf's dense level against the length of
// the keys' array: 8 bytes per key against 8 per array entry, so the
// level takes at most this many times the array's memory.
const denseKeysFactor = 4

// realsGrown, when set (by tests), is called each time a builder's dense
// values move to a larger array.
var realsGrown func()

// growReals lengthens the dense slice to n, moving into it the spilled
// entries its new capacity covers.
func (b *builder) growReals(n int) { growDense(b, &b.reals, n) }

// growInts is growReals for an int level.
func (b *builder) growInts(n int) { growDense(b, &b.ints, n) }

// growDense is growReals or growInts, s being b.reals or b.ints.
func growDense[V int64 | float64](b *builder, s *[]V, n int) {
	b.settle()
	c := cap(*s)
	if c == 0 && n >= longRow {
		// Made whole: a released result's row may serve (released.go).
		*s = pooledRow[V](n, b.spec.out.current(), true)
	} else {
		*s = growTo(*s, n)
	}
	if cap(*s) == c {
		return
	}
	if realsGrown != nil {
		realsGrown()
	}
	if b.x != nil {
		if m := *either[*map[int64]V](&b.x.mreal, &b.x.mint); len(m) > 0 {
			*s = unspill(b, *s, m)
		}
	}
}

func (b *builder) growKids(n int) {
	x := b.x
	c := cap(x.kids)
	x.kids = growTo(x.kids, n)
	if cap(x.kids) > c && len(x.mkids) > 0 {
		for k, v := range x.mkids {
			if k >= 0 && k < int64(cap(x.kids)) {
				if k >= int64(len(x.kids)) {
					x.kids = x.kids[:k+1]
				}
				b.track(k)
				x.kids[k] = *v
				delete(x.mkids, k)
			}
		}
	}
}

// unspill moves the spilled entries that the capacity of the dense slice
// s now covers into it (keeping every spilled key at or above the
// capacity, so no key is ever both in the slice and in the map).
func unspill[V int64 | float64](b *builder, s []V, spill map[int64]V) []V {
	for k, v := range spill {
		if k >= 0 && k < int64(cap(s)) {
			if k >= int64(len(s)) {
				s = s[:k+1]
			}
			if s[k] == 0 {
				b.track(k)
			}
			s[k] += v
			delete(spill, k)
		}
	}
	return s
}

// track records that key k of a workspace-mode builder is written.
func (b *builder) track(k int64) {
	if b.ws != nil {
		b.ws.touched = append(b.ws.touched, k)
	}
}

// addReal adds v at key k of a depth-1 real builder.
func (b *builder) addReal(k int64, v float64) {
	if b.spec.dense {
		if uint64(k) < uint64(len(b.reals)) {
			if b.ws != nil && b.reals[k] == 0 {
				if v == 0 {
					return // no entry, and no key to list
				}
				b.ws.touched = append(b.ws.touched, k)
			}
			b.reals[k] += v
			return
		}
		b.addRealSlow(k, v)
		return
	}
	if b.listed {
		n := len(b.lkeys)
		switch {
		case n == 0 || k > b.lkeys[n-1]:
			b.lkeys = append(b.lkeys, k)
			b.reals = append(b.reals, v)
			return
		case k == b.lkeys[n-1]:
			b.reals[n-1] += v
			return
		}
		b.unlist()
	}
	b.x.mreal[k] += v
}

// unlist turns a list-mode builder into a hash one.
func (b *builder) unlist() {
	b.listed = false
	x := b.aux()
	switch {
	case b.spec.depth > 1:
		x.mkids = make(map[int64]*kid, 2*len(b.lkeys))
		for i, k := range b.lkeys {
			x.mkids[k] = &x.kids[i]
		}
		x.kids = nil
	case b.spec.real:
		x.mreal = make(map[int64]float64, 2*len(b.lkeys))
		for i, k := range b.lkeys {
			x.mreal[k] = b.reals[i]
		}
		b.reals = nil
	default:
		x.mint = make(map[int64]int64, 2*len(b.lkeys))
		for i, k := range b.lkeys {
			x.mint[k] = b.ints[i]
		}
		b.ints = nil
	}
	b.lkeys = nil
}

// addRow adds vals at keys lo, lo+1, ... as addReal does.
func (b *builder) addRow(lo int64, vals []float64) {
	// A run into a new sequential row (the row of one outer key, written
	// once: MTTKRP's rank per i) is appended where it is to stay; a
	// second run at the same keys settles the row.
	if b.app {
		q := appendVals(b, &b.ws.realBlock, lo, nil, vals)
		if q == len(vals) {
			return
		}
		lo, vals = lo+int64(q), vals[q:]
	}
	b.settle()
	if !b.spec.dense || lo < 0 || int64(len(b.reals))-lo < int64(len(vals)) {
		for q, v := range vals {
			b.addReal(lo+int64(q), v)
		}
		return
	}
	out := b.reals[lo:][:len(vals)]
	if b.ws == nil {
		for q, v := range vals {
			out[q] += v
		}
		return
	}
	for q, v := range vals {
		if out[q] == 0 {
			if v == 0 {
				continue
			}
			b.ws.touched = append(b.ws.touched, lo+int64(q))
		}
		out[q] += v
	}
}

// addRealSlow adds v at a key k of a dense level outside its slice: the
// slice grows to hold k, or k goes to the spill map.
func (b *builder) addRealSlow(k int64, v float64) { addSlow(b, &b.reals, k, v) }

// addIntSlow is addRealSlow for an int level.
func (b *builder) addIntSlow(k int64, v int64) { addSlow(b, &b.ints, k, v) }

// addSlow is addRealSlow or addIntSlow, s being b.reals or b.ints.
func addSlow[V int64 | float64](b *builder, s *[]V, k int64, v V) {
	if b.app {
		if appendVals(b, either[*[]V](&b.ws.realBlock, &b.ws.intBlock), k, nil, []V{v}) == 1 {
			return
		}
		addList(b, []int64{k}, []V{v})
		return
	}
	switch {
	case uint64(k) < uint64(len(*s)):
	case uint64(k) < uint64(cap(*s)):
		*s = (*s)[:k+1]
	default:
		if n := denseGrowth(len(*s), k); n > 0 {
			growDense(b, s, n)
		}
	}
	if uint64(k) < uint64(len(*s)) {
		if b.ws != nil && (*s)[k] == 0 {
			b.ws.touched = append(b.ws.touched, k)
		}
		(*s)[k] += v
		return
	}
	x := b.aux()
	m := either[*map[int64]V](&x.mreal, &x.mint)
	if *m == nil {
		*m = map[int64]V{}
	}
	(*m)[k] += v
}

// addInt adds v at key k of a depth-1 int builder.
func (b *builder) addInt(k int64, v int64) {
	if b.spec.dense {
		if uint64(k) < uint64(len(b.ints)) {
			if b.ws != nil && b.ints[k] == 0 {
				if v == 0 {
					return // no entry, and no key to list
				}
				b.ws.touched = append(b.ws.touched, k)
			}
			b.ints[k] += v
			return
		}
		b.addIntSlow(k, v)
		return
	}
	if b.listed {
		n := len(b.lkeys)
		switch {
		case n == 0 || k > b.lkeys[n-1]:
			b.lkeys = append(b.lkeys, k)
			b.ints = append(b.ints, v)
			return
		case k == b.lkeys[n-1]:
			b.ints[n-1] += v
			return
		}
		b.unlist()
	}
	b.x.mint[k] += v
}

// slot returns the child at key k, creating it empty.
func (b *builder) slot(k int64) *kid {
	x := b.x
	if x.coll != nil {
		b.leaveCollect()
	}
	if x.sequential || x.seq != nil {
		b.leaveSequential()
	}
	if b.spec.dense {
		if uint64(k) >= uint64(len(x.kids)) {
			switch {
			case uint64(k) < uint64(cap(x.kids)):
				x.kids = x.kids[:k+1]
			default:
				if n := denseGrowthWithin(len(x.kids), k, x.reach); n > 0 {
					b.growKids(n)
				}
			}
		}
		if uint64(k) < uint64(len(x.kids)) {
			c := &x.kids[k]
			if b.ws != nil && c.b == nil && c.view == nil {
				b.ws.touched = append(b.ws.touched, k)
			}
			return c
		}
		if x.mkids == nil {
			x.mkids = map[int64]*kid{}
		}
	}
	if b.listed {
		n := len(b.lkeys)
		switch {
		case n == 0 || k > b.lkeys[n-1]:
			// The pointer is used at once, before the next append.
			b.lkeys = append(b.lkeys, k)
			x.kids = append(x.kids, kid{})
			return &x.kids[n]
		case k == b.lkeys[n-1]:
			return &x.kids[n-1]
		}
		b.unlist()
	}
	c := x.mkids[k]
	if c == nil {
		c = &kid{}
		x.mkids[k] = c
	}
	return c
}

// child returns the builder of the child at key k, for accumulating into
// it in place.
func (b *builder) child(k int64) *builder {
	if x := b.x; x.coll != nil {
		b.leaveCollect()
	} else if x.sequential || x.seq != nil {
		if c := b.seqRow(k); c != nil {
			return c
		}
	}
	if kids := b.x.kids; b.spec.dense && uint64(k) < uint64(len(kids)) {
		if c := kids[k].b; c != nil {
			c.acquire()
			return c
		}
	}
	return b.slot(k).builder(b)
}

// builder returns the child's builder, open for adding, creating it (from
// the view it holds, if any) in parent.
func (c *kid) builder(parent *builder) *builder {
	if c.b == nil {
		nb := parent.newKid()
		nb.acquire()
		c.b = nb
		if c.view != nil {
			nb.absorb(c.view, 1, false)
			c.view = nil
		}
		return nb
	}
	c.b.acquire()
	return c.b
}

// newKid returns an empty builder for a child of b. A dense level below
// the outermost is in workspace mode: the dictionary's workspace for the
// level holds the entries of the child being built.
func (b *builder) newKid() *builder {
	s := b.spec.kid
	t := b.x.tree
	if s.dense {
		w := t.workspace(s.depth)
		if s.depth == 1 {
			if r := w.streakRow(t, s); r != nil {
				return r
			}
		}
		// Closed and empty.
		nb := t.alloc()
		nb.spec, nb.ws, nb.listed = s, w, true
		if s.depth > 1 {
			nb.x = &builderAux{tree: t}
		}
		return nb
	}
	nb := t.alloc()
	nb.spec = s
	if s.depth > 1 {
		nb.x = &builderAux{tree: t}
	}
	nb.init()
	return nb
}

// addDict adds dictionary d at key k (d's depth is the builder's depth
// minus one). The first dictionary at a key is kept as it is.
func (b *builder) addDict(k int64, d dict) {
	c := b.slot(k)
	if c.b == nil && c.view == nil {
		c.view = d
		return
	}
	c.builder(b).absorb(d, 1, false)
}

// absorb adds every entry of d (of the builder's depth) times sign, which
// is 1 or -1. The children of d are shared as addDict shares them unless
// copy is set or sign is -1; then they are copied (zeros dropped).
func (b *builder) absorb(d dict, sign int, copy bool) {
	b.settle()
	n := d.size()
	s := b.spec
	switch {
	case s.depth > 1:
		for p := 0; p < n; p++ {
			if sign == 1 && !copy {
				b.addDict(d.keyAt(p), d.dictAt(p))
			} else if c := d.dictAt(p); !dictIsZero(c, s.depth-1, s.real) {
				// The interpreter drops a copied child of zeros before
				// adding, leaving the key untouched.
				b.child(d.keyAt(p)).absorb(c, sign, true)
			}
		}
	case s.real:
		f := float64(sign)
		for p := 0; p < n; p++ {
			v := d.realAt(p)
			if sign != 1 {
				v *= f
			}
			b.addReal(d.keyAt(p), v)
		}
	default:
		for p := 0; p < n; p++ {
			b.addInt(d.keyAt(p), d.intAt(p)*int64(sign))
		}
	}
}

// absorbScaled adds s*v (or v*s when right is set; the same number, but
// kept in the interpreter's order) for every scalar v of d.
func (b *builder) absorbScaledReal(d dict, s float64, right bool) {
	b.settle()
	n := d.size()
	if b.spec.depth > 1 {
		for p := 0; p < n; p++ {
			// A child whose products are all zero is dropped by the
			// interpreter before adding: leave its key untouched.
			if c := d.dictAt(p); scaledNonZero(c, b.spec.depth-1, s) {
				b.child(d.keyAt(p)).absorbScaledReal(c, s, right)
			}
		}
		return
	}
	// A batch at a time: keys and values read as slices where d has
	// them, the products added by addReals (a scatter into a dense row,
	// grown once to d's last key, as adding it alone would grow it).
	if b.spec.dense && b.ws == nil && !b.app && n > 0 {
		if k := d.keyAt(n - 1); k >= int64(len(b.reals)) {
			if m := denseGrowth(len(b.reals), k); m > 0 {
				b.growReals(m)
			}
		}
	}
	var kb [vbatch]int64
	var vb [vbatch]float64
	for p := 0; p < n; p += vbatch {
		m := min(n-p, vbatch)
		keys, vals, out := entryKeys(d, p, m, kb[:m]), entryVals(d, p, m, vb[:m]), vb[:m]
		for l, v := range vals {
			if right {
				out[l] = v * s
			} else {
				out[l] = s * v
			}
		}
		addReals(b, keys, out)
	}
}

func (b *builder) absorbScaledInt(d dict, s int64) {
	b.settle()
	n := d.size()
	if b.spec.depth > 1 {
		for p := 0; p < n; p++ {
			if c := d.dictAt(p); s != 0 && !dictIsZero(c, b.spec.depth-1, false) {
				b.child(d.keyAt(p)).absorbScaledInt(c, s)
			}
		}
		return
	}
	for p := 0; p < n; p++ {
		b.addInt(d.keyAt(p), s*d.intAt(p))
	}
}

// absorbProduct adds the key-wise product of x and y (both of the
// builder's depth; leaves real when the builder's are).
func (b *builder) absorbProduct(x, y dict) {
	b.settle()
	i, j := 0, 0
	nx, ny := x.size(), y.size()
	for i < nx && j < ny {
		kx, ky := x.keyAt(i), y.keyAt(j)
		switch {
		case kx < ky:
			i++
		case ky < kx:
			j++
		default:
			switch {
			case b.spec.depth > 1:
				if cx, cy := x.dictAt(i), y.dictAt(j); productNonZero(cx, cy, b.spec.depth-1) {
					b.child(kx).absorbProduct(cx, cy)
				}
			case b.spec.real:
				b.addReal(kx, x.realAt(i)*y.realAt(j))
			default:
				b.addInt(kx, x.intAt(i)*y.intAt(j))
			}
			i++
			j++
		}
	}
}

// scaledNonZero reports whether s times some scalar of d (of the given
// depth) is not zero.
func scaledNonZero(d dict, depth int, s float64) bool {
	n := d.size()
	for p := 0; p < n; p++ {
		if depth > 1 {
			if scaledNonZero(d.dictAt(p), depth-1, s) {
				return true
			}
		} else if s*d.realAt(p) != 0 {
			return true
		}
	}
	return false
}

// productNonZero reports whether the key-wise product of x and y (of the
// given depth) has a non-zero scalar.
func productNonZero(x, y dict, depth int) bool {
	i, j := 0, 0
	nx, ny := x.size(), y.size()
	for i < nx && j < ny {
		kx, ky := x.keyAt(i), y.keyAt(j)
		switch {
		case kx < ky:
			i++
		case ky < kx:
			j++
		default:
			if depth > 1 {
				if productNonZero(x.dictAt(i), y.dictAt(j), depth-1) {
					return true
				}
			} else if x.realAt(i)*y.realAt(j) != 0 {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// mergeRoots merges the root builders os into b, in order, as mergeRoot
// does one at a time. Rows in sequential mode (seqrows.go) merge by
// appending each part's records after the ones before: those are sized
// once for all the parts, not grown part after part (a result split in
// many chunks would copy its records about as many times over).
func (b *builder) mergeRoots(os []*builder) {
	if x := b.x; x != nil && x.seq != nil && x.seq.outer == nil {
		s := x.seq
		rows, chunks := 1, 1 // and each part's open row, once closed
		for _, o := range os {
			if o.x != nil && o.x.seq != nil {
				rows += len(o.x.seq.keys) + 1
				chunks += len(o.x.seq.chunks) + 1
			}
		}
		s.keys, s.vEnds, s.cEnds = slices.Grow(s.keys, rows), slices.Grow(s.vEnds, rows), slices.Grow(s.cEnds, rows)
		s.chunks = slices.Grow(s.chunks, chunks)
	}
	for _, o := range os {
		b.mergeRoot(o)
	}
}

// mergeRoot adds the dictionary o (same spec, another worker's) into b, in
// place; o is consumed.
func (b *builder) mergeRoot(o *builder) {
	if b.mergeCollected(o) {
		return
	}
	if b.appendSequential(o) {
		return
	}
	if o.x != nil {
		o.leaveSequential()
	}
	if o.x != nil && o.x.tree != nil {
		o.x.tree.closeAll()
		if b.x != nil && b.x.tree != nil {
			// Children of o move into b and keep o's workspaces.
			b.x.tree.adopted = append(b.x.tree.adopted, o.x.tree)
		}
	}
	b.merge(o)
}

// merge adds o (same spec) into b, in place; o is consumed.
func (b *builder) merge(o *builder) {
	if b.x != nil {
		b.leaveCollect()
	}
	if o.x != nil {
		o.leaveCollect()
	}
	b.settle()
	o.settle()
	if o.open {
		o.release()
	}
	s := b.spec
	switch {
	case s.depth > 1:
		visit := func(k int64, c *kid) {
			if c.b == nil && c.view == nil {
				return
			}
			dst := b.slot(k)
			if dst.b == nil && dst.view == nil {
				*dst = *c
				return
			}
			if c.view != nil {
				dst.builder(b).absorb(c.view, 1, false)
				return
			}
			dst.builder(b).merge(c.b)
		}
		ox := o.x
		if o.listed {
			for i, k := range o.lkeys {
				visit(k, &ox.kids[i])
			}
		} else {
			from := 0
			if ox.firstKidOf == len(ox.kids) && ox.seq == nil {
				from = ox.firstKid
			}
			if n := len(ox.kids); s.dense && n > from && n > len(b.x.kids) && !b.listed && b.x.seq == nil && !b.x.sequential {
				b.growKids(n) // once, not a doubling per key
			}
			for k := from; k < len(ox.kids); k++ {
				visit(int64(k), &ox.kids[k])
			}
		}
		keys := spilled(ox, ox.mkids)
		for i, k := range keys {
			if ox.spillKids != nil {
				visit(k, ox.spillKids[i])
			} else {
				visit(k, ox.mkids[k])
			}
		}
	case o.listed && s.real:
		addList(b, o.nkeys, o.reals) // one of the two lists is empty
		addList(b, o.lkeys, o.reals)
	case o.listed:
		addList(b, o.nkeys, o.ints)
		addList(b, o.lkeys, o.ints)
	case s.real:
		for k, v := range o.reals {
			if v != 0 {
				b.addReal(int64(k), v)
			}
		}
		if o.x != nil {
			for _, k := range spilled(o.x, o.x.mreal) {
				b.addReal(k, o.x.mreal[k])
			}
		}
	default:
		for k, v := range o.ints {
			if v != 0 {
				b.addInt(int64(k), v)
			}
		}
		if o.x != nil {
			for _, k := range spilled(o.x, o.x.mint) {
				b.addInt(k, o.x.mint[k])
			}
		}
	}
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// freeze returns the finished dictionary. Zero scalars and empty children
// are dropped from the list of entries.
func (b *builder) freeze() dict {
	s := b.spec
	switch {
	case b.x != nil && b.x.tree != nil && b.x.tree.root == b:
		// Nothing is added any more: compact what the workspaces hold
		// and let them go.
		if b.finishSequential() {
			b.x.tree.finish()
			return b.x.seq.freeze(s)
		}
		if b.x.coll != nil {
			if d := b.freezeCollected(); d != nil {
				b.x.tree.finish()
				return d
			}
		}
		b.x.tree.finish()
	case b.open:
		b.release()
	}
	switch {
	case s.depth > 1:
		return b.freezeNode()
	case b.listed && b.ws != nil:
		// A compacted row of a workspace level: no zeros.
		return (*rowLeaf)(b)
	case b.listed:
		return &listLeaf{keys: b.lkeys, ints: b.ints, reals: b.reals, real: s.real}
	}
	var x builderAux
	if b.x != nil {
		x = *b.x
	}
	switch {
	case s.dense:
		return &denseLeaf{ints: b.ints, reals: b.reals, real: s.real, spillI: x.mint, spillF: x.mreal}
	case s.real:
		return &hashLeaf{reals: x.mreal, real: true}
	default:
		return &hashLeaf{ints: x.mint}
	}
}

// done returns the finished child, or nil if it is empty or all zeros.
func (c *kid) done(s *bspec) dict {
	var d dict
	switch {
	case c.b != nil:
		d = c.b.freeze()
	case c.view != nil:
		d = c.view
		if dictIsZero(d, s.depth, s.real) {
			return nil
		}
	default:
		return nil
	}
	if isEmpty(d) {
		return nil
	}
	return d
}

// isEmpty reports whether d has no entries, without listing the keys of a
// built leaf.
func isEmpty(d dict) bool {
	switch x := d.(type) {
	case *denseLeaf:
		return !hasNonZeros(x.reals, x.ints, 1) && !anyNonZero(x.spillF) && !anyNonZero(x.spillI)
	case *listLeaf:
		return !hasNonZeros(x.reals, x.ints, 1)
	case *hashLeaf:
		return !anyNonZero(x.reals) && !anyNonZero(x.ints)
	}
	return d.size() == 0
}

// anyNonZero reports whether a value of m is not zero.
func anyNonZero[T int64 | float64](m map[int64]T) bool {
	for _, v := range m {
		if v != 0 {
			return true
		}
	}
	return false
}

// freezeNode returns the finished dictionary of dictionaries. Its
// children are frozen, and the empty ones dropped, on first use (see
// denseNode.init): a result that is only converted at the end costs
// nothing more here.
func (b *builder) freezeNode() dict {
	switch {
	case b.listed:
		return &listNode{b: b}
	case b.spec.dense:
		return &denseNode{b: b}
	}
	return &hashNode{b: b}
}
