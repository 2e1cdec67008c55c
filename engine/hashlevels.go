package engine

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// A physical HASHMAP is read as the nested dictionary the interpreter
// lists (eval/phys.go): its entries in increasing key-tuple order, grouped
// level by level. hashLevels lays that dictionary out once per map the way
// a compressed sparse fiber tree is stored: per level the keys of its
// nodes in order, per level above the last the bounds of each node's
// children, and the leaf values in the same order. A row of any level is
// then a run of consecutive positions (hashRow), so a loop of the nest
// reads its keys and values as slices (nesttemp.go's dictEntries) rather
// than entry by entry, and a lookup is a binary search of the row's keys
// or, at the first level when its keys are dense, one read of a position
// table.
type hashLevels struct {
	h *storage.HashMap
	// keysData and n are h.Keys as the layout saw it.
	keysData *storage.HKey
	n        int
	arity    int
	real     bool
	// keys[l][q] is the key of node q of level l; the nodes of a row
	// are consecutive and their keys increase.
	keys [][]int64
	// kids[l][q]..kids[l][q+1] are the children of node q of level l.
	kids [][]int64
	// rows[l][q] is the row of the children of node q of level l
	// (l < arity-1), made once, on the first read of a row (a walk
	// rewritten into segment loops reads none), so that walking the
	// tree node by node allocates nothing.
	rowsOnce sync.Once
	rows     [][]hashRow
	// order lists h's entries by key tuple; nil when h stores them in
	// that order already (storage.Build does).
	order []int32
	// ints or reals are the leaf values in key order: h's own slice when
	// order is nil, else gathered at every bind (values may change in
	// place while the keys stay).
	ints  []int64
	reals []float64
	// at0[k] is the position of key k among level 0's nodes, -1 when k
	// is absent; nil when those keys are negative or too sparse.
	at0  []int32
	root hashRow
	// The layout as arrays, for walks rewritten into segment loops
	// (hashwalk.go): keyArrs[l] holds keys[l], posArrs[l] the bounds of
	// the children of level l's nodes, valArr the leaf values.
	keyArrs, posArrs []*storage.Array
	valArr           *storage.Array
	// For rows looked up by key (hashwalk.go), per level above the last,
	// made on first use: the slot of each node by key prefix, and the
	// bounds of each slot's children.
	slotOnce []sync.Once
	slotMaps []*storage.HashMap
	rowArrs  []*storage.Array
	atOnce   sync.Once
	atArr    *storage.Array
}

// hashRow is the nodes lo..hi-1 of one level of a hash map's layout: the
// whole map (level 0) or the children of one node.
type hashRow struct {
	g      *hashLevels
	level  int
	lo, hi int
}

// hashView returns h laid out by levels. The layout is kept with the cell
// while h and its key slice stay the same, so repeated runs of a kernel
// over the same store neither re-sort the entries nor rebuild the levels
// (the same rule as storage.Array.Narrow: build a new HashMap rather than
// change Keys in place); only the leaf values are read again.
func (c *cell) hashView(h *storage.HashMap) (*hashRow, error) {
	g, err := c.layout(h)
	if err != nil {
		return nil, err
	}
	g.readValues()
	return &g.root, nil
}

// layout returns the level layout of h, kept with the cell (hashView).
func (c *cell) layout(h *storage.HashMap) (*hashLevels, error) {
	g := c.groups
	if g == nil || g.h != h || g.keysData != unsafe.SliceData(h.Keys) || g.n != len(h.Keys) {
		var err error
		if g, err = layOutHashMap(h); err != nil {
			return nil, err
		}
		c.groups = g
	}
	return g, nil
}

// hashOrder orders the entries of h by key tuple: nil when they are in
// strictly increasing order already (checked in one pass).
func hashOrder(h *storage.HashMap) ([]int32, error) {
	cmp := func(a, b int32) int { return storage.CompareKeys(&h.Keys[a], &h.Keys[b], h.Arity) }
	sorted := true
	for i := 1; i < len(h.Keys) && sorted; i++ {
		sorted = cmp(int32(i-1), int32(i)) < 0
	}
	if sorted {
		return nil, nil
	}
	order := make([]int32, len(h.Keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, cmp)
	for i := 1; i < len(order); i++ {
		if cmp(order[i-1], order[i]) == 0 {
			return nil, fmt.Errorf("key %v is stored twice", h.Keys[order[i]][:h.Arity])
		}
	}
	return order, nil
}

// layOutHashMap builds the level layout of h (checked by checkHashMap).
func layOutHashMap(h *storage.HashMap) (*hashLevels, error) {
	order, err := hashOrder(h)
	if err != nil {
		return nil, err
	}
	d := h.Arity
	g := &hashLevels{h: h, keysData: unsafe.SliceData(h.Keys), n: len(h.Keys), arity: d, real: h.Elem == ir.Real, order: order}
	g.keys = make([][]int64, d)
	// kids[l][q]..kids[l][q+1] are the children of node q of level l.
	kids := make([][]int64, d-1)
	var prev *storage.HKey
	for i := range h.Keys {
		k := &h.Keys[i]
		if order != nil {
			k = &h.Keys[order[i]]
		}
		// The entry opens a node at every level from the first component
		// in which it differs from the entry before it.
		l := 0
		if prev != nil {
			for l < d && prev[l] == k[l] {
				l++
			}
		}
		for ; l < d; l++ {
			if l < d-1 {
				kids[l] = append(kids[l], int64(len(g.keys[l+1])))
			}
			g.keys[l] = append(g.keys[l], k[l])
		}
		prev = k
	}
	for l := range g.keys {
		g.keyArrs = append(g.keyArrs, storage.IntArray(g.keys[l]))
	}
	for l := range kids {
		kids[l] = append(kids[l], int64(len(g.keys[l+1])))
		g.posArrs = append(g.posArrs, storage.IntArray(kids[l]))
	}
	g.kids = kids
	g.slotOnce, g.slotMaps, g.rowArrs = make([]sync.Once, d-1), make([]*storage.HashMap, d-1), make([]*storage.Array, d-1)
	g.root = hashRow{g: g, level: 0, lo: 0, hi: len(g.keys[0])}
	if k0 := g.keys[0]; len(k0) > 0 && k0[0] >= 0 && k0[len(k0)-1] < max(maxDenseJump, denseKeysFactor*int64(len(k0))) {
		g.at0 = make([]int32, k0[len(k0)-1]+1)
		for k := range g.at0 {
			g.at0[k] = -1
		}
		for q, k := range k0 {
			g.at0[k] = int32(q)
		}
	}
	return g, nil
}

func (g *hashLevels) makeRows() {
	g.rows = make([][]hashRow, len(g.kids))
	for l, kids := range g.kids {
		g.rows[l] = make([]hashRow, len(g.keys[l]))
		for q := range g.rows[l] {
			g.rows[l][q] = hashRow{g: g, level: l + 1, lo: int(kids[q]), hi: int(kids[q+1])}
		}
	}
}

// readValues points the leaf values at h's, in key order.
func (g *hashLevels) readValues() {
	g.gatherValues()
	if g.valArr == nil || unsafe.SliceData(g.valArr.F) != unsafe.SliceData(g.reals) || len(g.valArr.F) != len(g.reals) ||
		unsafe.SliceData(g.valArr.I) != unsafe.SliceData(g.ints) || len(g.valArr.I) != len(g.ints) {
		g.valArr = &storage.Array{Elem: g.h.Elem, I: g.ints, F: g.reals}
	}
}

func (g *hashLevels) gatherValues() {
	h := g.h
	if g.order == nil {
		g.ints, g.reals = h.I, h.F
		return
	}
	if g.real {
		g.reals = inOrder(g.reals, h.F, g.order)
		return
	}
	g.ints = inOrder(g.ints, h.I, g.order)
}

// inOrder returns src[order[q]] for each q, in dst when it has the length.
func inOrder[V int64 | float64](dst, src []V, order []int32) []V {
	if len(dst) != len(order) {
		dst = make([]V, len(order))
	}
	for q, e := range order {
		dst[q] = src[e]
	}
	return dst
}

func (v *hashRow) leaf() bool        { return v.level == v.g.arity-1 }
func (v *hashRow) size() int         { return v.hi - v.lo }
func (v *hashRow) keyAt(p int) int64 { return v.g.keys[v.level][v.lo+p] }
func (v *hashRow) keySlice() []int64 { return v.g.keys[v.level][v.lo:v.hi] }

func (v *hashRow) intAt(p int) int64 {
	return valueAt[int64](v.g.real, v.g.reals, v.g.ints, int64(v.lo+p))
}

func (v *hashRow) realAt(p int) float64 {
	return valueAt[float64](v.g.real, v.g.reals, v.g.ints, int64(v.lo+p))
}

func (v *hashRow) dictAt(p int) dict {
	if v.leaf() {
		return empty
	}
	v.g.rowsOnce.Do(v.g.makeRows)
	return &v.g.rows[v.level][v.lo+p]
}

// find returns the position of key k in the row: a read of the position
// table for the whole map when it has one, else a binary search.
func (v *hashRow) find(k int64) (int, bool) {
	if v.level == 0 && v.g.at0 != nil {
		if uint64(k) >= uint64(len(v.g.at0)) {
			return 0, false
		}
		q := v.g.at0[k]
		return int(q), q >= 0
	}
	return slices.BinarySearch(v.keySlice(), k)
}

func (v *hashRow) getInt(k int64) (int64, bool) {
	if p, ok := v.find(k); ok {
		return v.intAt(p), true
	}
	return 0, true
}

func (v *hashRow) getReal(k int64) (float64, bool) {
	if p, ok := v.find(k); ok {
		return v.realAt(p), true
	}
	return 0, true
}

func (v *hashRow) getDict(k int64) dict {
	if p, ok := v.find(k); ok {
		return v.dictAt(p)
	}
	return empty
}
