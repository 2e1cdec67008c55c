package engine

import (
	"math"
	"slices"
	"sync"

	"github.com/storel/storel/storage"
)

// dict is a dictionary value at run time. Entries are visited by position
// 0..size()-1 in increasing key order. Views of physical data (arrays,
// ranges, subarrays, hash maps, tries) list every stored entry, explicit
// zeros included; dictionaries the plan builds list only non-zero entries
// (paper semantics: a dictionary of zeros equals the empty one, and the
// interpreter drops zero entries from what it builds).
//
// The accessors that do not match a dictionary's depth and leaf kind are
// never called: the compiler knows every type statically.
type dict interface {
	size() int
	keyAt(p int) int64
	intAt(p int) int64
	realAt(p int) float64
	dictAt(p int) dict
	// getInt and getReal return the value at k, zero if absent. ok is
	// false only for a whole physical array read outside its positions.
	getInt(k int64) (v int64, ok bool)
	getReal(k int64) (v float64, ok bool)
	// getDict returns the dictionary at k, the empty dictionary if absent.
	getDict(k int64) dict
}

// emptyDict is the empty dictionary of any depth.
type emptyDict struct {
	noKids
	noScalars
}

var empty dict = emptyDict{}

func (emptyDict) size() int       { return 0 }
func (emptyDict) keyAt(int) int64 { return 0 }

// noKids gives a dictionary of scalars the methods of nested values.
type noKids struct{}

func (noKids) dictAt(int) dict    { return empty }
func (noKids) getDict(int64) dict { return empty }

// noScalars gives a dictionary of dictionaries the methods of scalar
// values (zero, as a missing key's).
type noScalars struct{}

func (noScalars) intAt(int) int64               { return 0 }
func (noScalars) realAt(int) float64            { return 0 }
func (noScalars) getInt(int64) (int64, bool)    { return 0, true }
func (noScalars) getReal(int64) (float64, bool) { return 0, true }

// either returns a or b, whichever is a V: for a function generic over
// reals and ints, the one of a pair of fields (reals, ints) of its type.
func either[V, A, B any](a A, b B) V {
	if v, ok := any(a).(V); ok {
		return v
	}
	return any(b).(V)
}

// valueAt is entry i of reals (real) or else of ints, as a V: the
// accessors of a leaf holding either.
func valueAt[V int64 | float64](real bool, reals []float64, ints []int64, i int64) V {
	if real {
		return V(reals[i])
	}
	return V(ints[i])
}

// arrView is positions lo..hi-1 of a physical array. whole marks the
// entire array: reading it outside its positions is a data error, while a
// window (a subarray) just reads zero outside itself.
type arrView struct {
	noKids
	name   string
	ints   []int64
	reals  []float64
	real   bool
	lo, hi int64
	whole  bool
}

func (a *arrView) size() int         { return int(a.hi - a.lo) }
func (a *arrView) keyAt(p int) int64 { return a.lo + int64(p) }
func (a *arrView) intAt(p int) int64 {
	return valueAt[int64](a.real, a.reals, a.ints, a.lo+int64(p))
}
func (a *arrView) realAt(p int) float64 {
	return valueAt[float64](a.real, a.reals, a.ints, a.lo+int64(p))
}
func (a *arrView) getInt(k int64) (int64, bool) {
	if k < a.lo || k >= a.hi {
		return 0, !a.whole
	}
	return valueAt[int64](a.real, a.reals, a.ints, k), true
}
func (a *arrView) getReal(k int64) (float64, bool) {
	if k < a.lo || k >= a.hi {
		return 0, !a.whole
	}
	return valueAt[float64](a.real, a.reals, a.ints, k), true
}

// rangeView is lo:hi, the dictionary {i -> i}.
type rangeView struct {
	noKids
	lo, hi int64
}

func (r *rangeView) size() int {
	if r.hi <= r.lo {
		return 0
	}
	return int(r.hi - r.lo)
}
func (r *rangeView) keyAt(p int) int64    { return r.lo + int64(p) }
func (r *rangeView) intAt(p int) int64    { return r.lo + int64(p) }
func (r *rangeView) realAt(p int) float64 { return float64(r.lo + int64(p)) }
func (r *rangeView) has(k int64) bool     { return k >= r.lo && k < r.hi }
func (r *rangeView) getInt(k int64) (int64, bool) {
	if r.has(k) {
		return k, true
	}
	return 0, true
}
func (r *rangeView) getReal(k int64) (float64, bool) {
	if r.has(k) {
		return float64(k), true
	}
	return 0, true
}

// subView is base(lo:hi) for a base that is not a physical array: every
// position lo..hi-1 is an entry, holding base's value or zero.
type subView struct {
	base   dict
	lo, hi int64
}

func (s *subView) size() int         { return int(s.hi - s.lo) }
func (s *subView) keyAt(p int) int64 { return s.lo + int64(p) }
func (s *subView) intAt(p int) int64 {
	v, _ := s.base.getInt(s.lo + int64(p))
	return v
}
func (s *subView) realAt(p int) float64 {
	v, _ := s.base.getReal(s.lo + int64(p))
	return v
}
func (s *subView) dictAt(p int) dict { return s.base.getDict(s.lo + int64(p)) }
func (s *subView) has(k int64) bool  { return k >= s.lo && k < s.hi }
func (s *subView) getInt(k int64) (int64, bool) {
	if !s.has(k) {
		return 0, true
	}
	v, _ := s.base.getInt(k)
	return v, true
}
func (s *subView) getReal(k int64) (float64, bool) {
	if !s.has(k) {
		return 0, true
	}
	v, _ := s.base.getReal(k)
	return v, true
}
func (s *subView) getDict(k int64) dict {
	if !s.has(k) {
		return empty
	}
	return s.base.getDict(k)
}

// trieView is one node of a physical trie with levels more levels below it
// (1: the node holds the values). Node keys are sorted (checked when the
// run starts).
type trieView struct {
	node   *storage.TrieNode
	levels int
	real   bool
}

func (t *trieView) size() int         { return len(t.node.Keys) }
func (t *trieView) keyAt(p int) int64 { return t.node.Keys[p] }
func (t *trieView) intAt(p int) int64 {
	return valueAt[int64](t.real, t.node.F, t.node.I, int64(p))
}
func (t *trieView) realAt(p int) float64 {
	return valueAt[float64](t.real, t.node.F, t.node.I, int64(p))
}
func (t *trieView) dictAt(p int) dict {
	return &trieView{node: t.node.Children[p], levels: t.levels - 1, real: t.real}
}
func (t *trieView) getInt(k int64) (int64, bool) {
	if p, ok := t.node.Index[k]; ok {
		return t.intAt(p), true
	}
	return 0, true
}
func (t *trieView) getReal(k int64) (float64, bool) {
	if p, ok := t.node.Index[k]; ok {
		return t.realAt(p), true
	}
	return 0, true
}
func (t *trieView) getDict(k int64) dict {
	if p, ok := t.node.Index[k]; ok {
		return t.dictAt(p)
	}
	return empty
}

// denseLeaf is a built dictionary of scalars stored by key in a slice
// (keys 0..len-1) plus a map for the keys outside it. The list of its
// non-zero keys, which iteration needs, is made on first use, with their
// values alongside (vals: a walk of a mostly-zero row, a dense copy of a
// sparse matrix's row, then reads only its entries, as slices).
type denseLeaf struct {
	noKids
	ints   []int64
	reals  []float64
	real   bool
	spillI map[int64]int64
	spillF map[int64]float64
	once   sync.Once
	keys   []int64
	valsI  []int64
	valsF  []float64
}

func (d *denseLeaf) list() []int64 {
	d.once.Do(func() {
		var lo, hi []int64
		for _, k := range sortedKeys(d.spillF) {
			if d.spillF[k] != 0 {
				if k < 0 {
					lo = append(lo, k)
				} else {
					hi = append(hi, k)
				}
			}
		}
		for _, k := range sortedKeys(d.spillI) {
			if d.spillI[k] != 0 {
				if k < 0 {
					lo = append(lo, k)
				} else {
					hi = append(hi, k)
				}
			}
		}
		n := 0
		for _, v := range d.reals {
			if v != 0 {
				n++
			}
		}
		for _, v := range d.ints {
			if v != 0 {
				n++
			}
		}
		keys := make([]int64, 0, len(lo)+n+len(hi))
		keys = append(keys, lo...)
		for k, v := range d.reals {
			if v != 0 {
				keys = append(keys, int64(k))
			}
		}
		for k, v := range d.ints {
			if v != 0 {
				keys = append(keys, int64(k))
			}
		}
		d.keys = append(keys, hi...)
		if d.real {
			d.valsF = make([]float64, len(d.keys))
			gatherDense(d.valsF, d.reals, d.keys, d.spillF)
		} else {
			d.valsI = make([]int64, len(d.keys))
			gatherDense(d.valsI, d.ints, d.keys, d.spillI)
		}
	})
	return d.keys
}

func (d *denseLeaf) size() int         { return len(d.list()) }
func (d *denseLeaf) keyAt(p int) int64 { return d.list()[p] }
func (d *denseLeaf) intAt(p int) int64 { v, _ := d.getInt(d.list()[p]); return v }
func (d *denseLeaf) realAt(p int) float64 {
	v, _ := d.getReal(d.list()[p])
	return v
}
func (d *denseLeaf) getInt(k int64) (int64, bool)    { return denseAt[int64](d, k), true }
func (d *denseLeaf) getReal(k int64) (float64, bool) { return denseAt[float64](d, k), true }

// denseAt is the value at key k of d, as a V.
func denseAt[V int64 | float64](d *denseLeaf, k int64) V {
	switch {
	case d.real && uint64(k) < uint64(len(d.reals)):
		return V(d.reals[k])
	case d.real:
		return V(d.spillF[k])
	case uint64(k) < uint64(len(d.ints)):
		return V(d.ints[k])
	}
	return V(d.spillI[k])
}

// hashLeaf is a built dictionary of scalars in a Go map; the sorted list
// of its non-zero keys is made on first use.
type hashLeaf struct {
	noKids
	ints  map[int64]int64
	reals map[int64]float64
	real  bool
	once  sync.Once
	keys  []int64
}

func (h *hashLeaf) list() []int64 {
	h.once.Do(func() {
		for k, v := range h.reals {
			if v != 0 {
				h.keys = append(h.keys, k)
			}
		}
		for k, v := range h.ints {
			if v != 0 {
				h.keys = append(h.keys, k)
			}
		}
		slices.Sort(h.keys)
	})
	return h.keys
}

func (h *hashLeaf) size() int         { return len(h.list()) }
func (h *hashLeaf) keyAt(p int) int64 { return h.list()[p] }
func (h *hashLeaf) intAt(p int) int64 { v, _ := h.getInt(h.list()[p]); return v }
func (h *hashLeaf) realAt(p int) float64 {
	v, _ := h.getReal(h.list()[p])
	return v
}
func (h *hashLeaf) getInt(k int64) (int64, bool) {
	if h.real {
		return int64(h.reals[k]), true
	}
	return h.ints[k], true
}
func (h *hashLeaf) getReal(k int64) (float64, bool) {
	if h.real {
		return h.reals[k], true
	}
	return float64(h.ints[k]), true
}

// denseNode is a built dictionary of dictionaries, by key in a slice plus
// a map for keys outside it. On first use (init) its children are frozen
// and the empty ones dropped.
type denseNode struct {
	noScalars
	b     *builder
	once  sync.Once
	kids  []dict // nil: absent
	spill map[int64]dict
	keys  []int64
}

func (d *denseNode) init() {
	d.once.Do(func() {
		b := d.b
		s := b.spec
		d.kids = make([]dict, len(b.x.kids))
		var hi []int64
		for _, k := range sortedKeys(b.x.mkids) {
			c := b.x.mkids[k].done(s.kid)
			if c == nil {
				continue
			}
			if d.spill == nil {
				d.spill = map[int64]dict{}
			}
			d.spill[k] = c
			if k < 0 {
				d.keys = append(d.keys, k)
			} else {
				hi = append(hi, k)
			}
		}
		for k := range b.x.kids {
			if c := b.x.kids[k].done(s.kid); c != nil {
				d.kids[k] = c
				d.keys = append(d.keys, int64(k))
			}
		}
		d.keys = append(d.keys, hi...)
		d.b = nil
	})
}

func (d *denseNode) size() int         { d.init(); return len(d.keys) }
func (d *denseNode) keyAt(p int) int64 { d.init(); return d.keys[p] }
func (d *denseNode) dictAt(p int) dict { d.init(); return d.getDict(d.keys[p]) }
func (d *denseNode) getDict(k int64) dict {
	d.init()
	if uint64(k) < uint64(len(d.kids)) {
		if c := d.kids[k]; c != nil {
			return c
		}
		return empty
	}
	if c, ok := d.spill[k]; ok {
		return c
	}
	return empty
}

// hashNode is a built dictionary of dictionaries in a Go map, frozen on
// first use like denseNode.
type hashNode struct {
	noScalars
	b    *builder
	once sync.Once
	kids map[int64]dict
	keys []int64
}

func (h *hashNode) init() {
	h.once.Do(func() {
		b := h.b
		h.kids = make(map[int64]dict, len(b.x.mkids))
		for k, c := range b.x.mkids {
			if d := c.done(b.spec.kid); d != nil {
				h.kids[k] = d
				h.keys = append(h.keys, k)
			}
		}
		slices.Sort(h.keys)
		h.b = nil
	})
}

func (h *hashNode) size() int         { h.init(); return len(h.keys) }
func (h *hashNode) keyAt(p int) int64 { h.init(); return h.keys[p] }
func (h *hashNode) dictAt(p int) dict { h.init(); return h.kids[h.keys[p]] }
func (h *hashNode) getDict(k int64) dict {
	h.init()
	if c, ok := h.kids[k]; ok {
		return c
	}
	return empty
}

// listLeaf is a built dictionary of scalars as sorted keys with values
// alongside; on first use the zero entries are dropped from the list.
type listLeaf struct {
	noKids
	keys  []int64
	ints  []int64
	reals []float64
	real  bool
	once  sync.Once
	dense denseIndex // by key, for loops that read it at many keys (nesttemp.go)
}

func (l *listLeaf) init() {
	l.once.Do(func() {
		n := 0
		for i := range l.keys {
			if (l.real && l.reals[i] != 0) || (!l.real && l.ints[i] != 0) {
				l.keys[n] = l.keys[i]
				if l.real {
					l.reals[n] = l.reals[i]
				} else {
					l.ints[n] = l.ints[i]
				}
				n++
			}
		}
		l.keys = l.keys[:n]
		if l.real {
			l.reals = l.reals[:n]
		} else {
			l.ints = l.ints[:n]
		}
	})
}

func (l *listLeaf) size() int         { l.init(); return len(l.keys) }
func (l *listLeaf) keyAt(p int) int64 { l.init(); return l.keys[p] }
func (l *listLeaf) intAt(p int) int64 {
	l.init()
	return valueAt[int64](l.real, l.reals, l.ints, int64(p))
}
func (l *listLeaf) realAt(p int) float64 {
	l.init()
	return valueAt[float64](l.real, l.reals, l.ints, int64(p))
}
func (l *listLeaf) find(k int64) (int, bool) {
	l.init()
	return slices.BinarySearch(l.keys, k)
}
func (l *listLeaf) getInt(k int64) (int64, bool) {
	if p, ok := l.find(k); ok {
		return l.intAt(p), true
	}
	return 0, true
}
func (l *listLeaf) getReal(k int64) (float64, bool) {
	if p, ok := l.find(k); ok {
		return l.realAt(p), true
	}
	return 0, true
}

// rowLeaf is a closed row of scalars of a workspace level (see
// workspace.go) frozen as it is: the builder's own sorted list, whose
// values are all non-zero (the compaction drops zeros, and so does the
// merge of spilled keys), so it needs neither the dropping of zeros on
// first use of listLeaf nor an allocation: freezing a result of 100k
// rows allocated 100k listLeafs of 96 bytes, scanned by the collector.
type rowLeaf builder

func (r *rowLeaf) size() int         { return (*builder)(r).listLen() }
func (r *rowLeaf) keyAt(p int) int64 { return (*builder)(r).listKey(p) }
func (r *rowLeaf) intAt(p int) int64 {
	return valueAt[int64](r.spec.real, r.reals, r.ints, int64(p))
}
func (r *rowLeaf) realAt(p int) float64 {
	return valueAt[float64](r.spec.real, r.reals, r.ints, int64(p))
}
func (r *rowLeaf) dictAt(int) dict { return empty }
func (r *rowLeaf) getInt(k int64) (int64, bool) {
	if p, ok := r.find(k); ok {
		return r.intAt(p), true
	}
	return 0, true
}
func (r *rowLeaf) getReal(k int64) (float64, bool) {
	if p, ok := r.find(k); ok {
		return r.realAt(p), true
	}
	return 0, true
}
func (r *rowLeaf) getDict(int64) dict { return empty }

// find is the position of key k in the row's sorted keys, if there.
func (r *rowLeaf) find(k int64) (int, bool) {
	if r.nkeys == nil {
		return slices.BinarySearch(r.lkeys, k)
	}
	if k != int64(int32(k)) {
		return 0, false
	}
	return slices.BinarySearch(r.nkeys, int32(k))
}

// listNode is a built dictionary of dictionaries as sorted keys with
// children alongside, frozen on first use like denseNode.
type listNode struct {
	noScalars
	b    *builder
	once sync.Once
	keys []int64
	kids []dict
}

func (l *listNode) init() {
	l.once.Do(func() {
		b := l.b
		for i, k := range b.lkeys {
			if d := b.x.kids[i].done(b.spec.kid); d != nil {
				l.keys = append(l.keys, k)
				l.kids = append(l.kids, d)
			}
		}
		l.b = nil
	})
}

func (l *listNode) size() int         { l.init(); return len(l.keys) }
func (l *listNode) keyAt(p int) int64 { l.init(); return l.keys[p] }
func (l *listNode) dictAt(p int) dict { l.init(); return l.kids[p] }
func (l *listNode) getDict(k int64) dict {
	l.init()
	if p, ok := slices.BinarySearch(l.keys, k); ok {
		return l.kids[p]
	}
	return empty
}

// dictIsZero reports whether every scalar in d (of the given depth) is
// zero.
func dictIsZero(d dict, depth int, real bool) bool {
	n := d.size()
	for p := 0; p < n; p++ {
		switch {
		case depth > 1:
			if !dictIsZero(d.dictAt(p), depth-1, real) {
				return false
			}
		case real:
			if d.realAt(p) != 0 {
				return false
			}
		default:
			if d.intAt(p) != 0 {
				return false
			}
		}
	}
	return true
}

// dictEqual compares two dictionaries as the interpreter does (zero
// entries ignored, exact comparison).
func dictEqual(a, b dict, depth int, realA, realB bool) bool {
	i, j := 0, 0
	na, nb := a.size(), b.size()
	zero := func(d dict, p int, real bool) bool {
		switch {
		case depth > 1:
			return dictIsZero(d.dictAt(p), depth-1, real)
		case real:
			return d.realAt(p) == 0
		}
		return d.intAt(p) == 0
	}
	for {
		for i < na && zero(a, i, realA) {
			i++
		}
		for j < nb && zero(b, j, realB) {
			j++
		}
		if i == na || j == nb {
			return i == na && j == nb
		}
		if a.keyAt(i) != b.keyAt(j) {
			return false
		}
		switch {
		case depth > 1:
			if !dictEqual(a.dictAt(i), b.dictAt(j), depth-1, realA, realB) {
				return false
			}
		case realA || realB:
			x, y := a.realAt(i), b.realAt(j)
			if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				return false
			}
		default:
			if a.intAt(i) != b.intAt(j) {
				return false
			}
		}
		i++
		j++
	}
}
