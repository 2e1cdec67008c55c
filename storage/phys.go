package storage

import (
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/storel/storel/ir"
)

// Object is a physical object named by a CREATE statement: *Scalar,
// *Array, *HashMap or *Trie.
type Object interface {
	Kind() ir.ObjKind
	ElemType() ir.Base
}

// Scalar is a single int or real number.
type Scalar struct {
	Elem ir.Base
	I    int64
	F    float64
}

// Array is a contiguous array of ints or reals; exactly one of I, F is used
// according to Elem.
//
// An Array must not change once a kernel has read it: the engine trusts
// the range IntRange remembered (see there).
type Array struct {
	Elem ir.Base
	I    []int64
	F    []float64

	ints   atomic.Pointer[intRange] // IntRange's answer, for the slice it scanned
	narrow atomic.Pointer[derived]  // Narrow's answer, for the slice it copied
	desc   atomic.Pointer[derived]  // Descents' answer, for the slice it counted
	within atomic.Pointer[within]   // IncreasesWithin's last answer, for the slices it scanned
}

// within is IncreasesWithin's answer for I at data (length n) and the
// segments' array at pdata (length pn).
type within struct {
	data, pdata *int64
	n, pn       int
	ok          bool
}

// derived is int32s made from I (Narrow's copy, Descents' counts), for
// the slice at data with length n.
type derived struct {
	data *int64
	n    int
	vals []int32
}

// derivedOf returns what p remembers for I as it is now, nil when
// nothing was made since I was set.
func derivedOf(p *atomic.Pointer[derived], I []int64) *derived {
	if r := p.Load(); r != nil && r.data == unsafe.SliceData(I) && r.n == len(I) {
		return r
	}
	return nil
}

// intRange is the smallest and largest value of the slice at data with
// length n, the ranges of its values' 32-bit halves (see Halves), and
// whether the values never decrease (see NonDecreasing).
type intRange struct {
	data      *int64
	n         int
	min, max  int64
	low, high [2]int64
	nondecr   bool
}

// IntRange returns the smallest and the largest value in I (0 and -1 when
// I is empty). The first call scans I; later calls return the remembered
// answer while I is the same slice (a new slice is scanned again). The
// engine uses it to read x[I[p]] without checking each index against x,
// once the range fits: an Array whose elements change in place after a
// kernel has run on it breaks that, so build a new Array instead. Safe
// for concurrent use.
func (a *Array) IntRange() (lo, hi int64) {
	r := a.ranges()
	return r.min, r.max
}

// Halves returns the ranges of the low and the high 32-bit halves of I's
// values, w % PackedHalf and w / PackedHalf, remembered with IntRange's
// answer; ok is false when I is empty or holds a negative value. An
// array packing two narrow indices per word (sell) is read through its
// halves: the optimizer and the engine check those reads against them.
func (a *Array) Halves() (low, high [2]int64, ok bool) {
	r := a.ranges()
	return r.low, r.high, len(a.I) > 0 && r.min >= 0
}

// NonDecreasing reports whether no value of I is less than the one
// before it (true when I is empty): a positions array whose segments
// p[k]:p[k+1] are all in order. Remembered with IntRange's answer, under
// the same rule.
func (a *Array) NonDecreasing() bool { return a.ranges().nondecr }

// ranges returns the intRange remembered for I, scanning I first when
// it is a new slice. Only arrays with a value of 2^32 or more are
// scanned a second time, for the halves: below it the low half is the
// value and the high half 0.
func (a *Array) ranges() *intRange {
	data := unsafe.SliceData(a.I)
	if r := a.ints.Load(); r != nil && r.data == data && r.n == len(a.I) {
		return r
	}
	r := &intRange{data: data, n: len(a.I), min: 0, max: -1, nondecr: true}
	if len(a.I) > 0 {
		r.min, r.max = a.I[0], a.I[0]
		prev := a.I[0]
		for _, v := range a.I {
			r.min = min(r.min, v)
			r.max = max(r.max, v)
			r.nondecr = r.nondecr && v >= prev
			prev = v
		}
	}
	r.low, r.high = [2]int64{r.min, r.max}, [2]int64{0, 0}
	if r.min >= 0 && r.max >= PackedHalf {
		w := a.I[0]
		r.low, r.high = [2]int64{w % PackedHalf, w % PackedHalf}, [2]int64{w / PackedHalf, w / PackedHalf}
		for _, w := range a.I {
			l, h := w%PackedHalf, w/PackedHalf
			r.low = [2]int64{min(r.low[0], l), max(r.low[1], l)}
			r.high = [2]int64{min(r.high[0], h), max(r.high[1], h)}
		}
	}
	a.ints.Store(r)
	return r
}

// IncreasesWithin reports whether I increases strictly within each
// segment [p.I[i], p.I[i+1]) (false when a segment is out of order or
// outside I): a CSR row's column indices sorted and distinct. The answer
// is remembered for the slices scanned, as IntRange's is, so the
// optimizer's stages scan a large index array once (cnr-2000's 3.2M
// column indices: a scan per stage was 50 of SpMV's 60 ms of
// optimization). Safe for concurrent use; the same rule as IntRange's
// holds: build a new Array rather than change I in place.
func (a *Array) IncreasesWithin(p *Array) bool {
	data, pdata := unsafe.SliceData(a.I), unsafe.SliceData(p.I)
	if w := a.within.Load(); w != nil && w.data == data && w.n == len(a.I) && w.pdata == pdata && w.pn == len(p.I) {
		return w.ok
	}
	ok := true
	for i := 0; i+1 < len(p.I) && ok; i++ {
		lo, hi := p.I[i], p.I[i+1]
		if lo < 0 || hi > int64(len(a.I)) || lo > hi {
			ok = false
			break
		}
		for j := lo + 1; j < hi; j++ {
			if a.I[j] <= a.I[j-1] {
				ok = false
				break
			}
		}
	}
	a.within.Store(&within{data: data, pdata: pdata, n: len(a.I), pn: len(p.I), ok: ok})
	return ok
}

// Narrow returns I's values as int32s when every value fits in 32 bits
// (nil when one does not, or I is empty). The first call copies I; later
// calls return the remembered copy while I is the same slice. A CSR row
// loop that reads its column indices from the copy reads 4 bytes per
// non-zero instead of 8, which shortens a bandwidth-bound SpMV (engine's
// TestNarrowRatio compares both ways). The copy is kept beside I, not
// instead of it (every other reader takes I), so it is made only for
// the arrays a kernel's row loops read (engine: Kernel.Prepare);
// Store.Bytes counts it. Safe for concurrent use; the same rule as
// IntRange's holds: build a new Array rather than change I in place.
func (a *Array) Narrow() []int32 {
	if r := derivedOf(&a.narrow, a.I); r != nil {
		return r.vals
	}
	r := &derived{data: unsafe.SliceData(a.I), n: len(a.I)}
	if lo, hi := a.IntRange(); len(a.I) > 0 && lo >= math.MinInt32 && hi <= math.MaxInt32 {
		r.vals = make([]int32, len(a.I))
		for p, v := range a.I {
			r.vals[p] = int32(v)
		}
	}
	a.narrow.Store(r)
	return r.vals
}

// Descents returns d, d[p] the count of values of I[1:p+1] less than the
// one before: I[lo:hi] is in order where d[hi-1] == d[lo]. The engine
// asks it of every merge operand before it seeks in its segments; a
// whole scan each run was the serial part of a threaded MTTKRP. Made
// once (engine: Kernel.Prepare) and remembered under IntRange's rule:
// build a new Array rather than change I in place; Store.Bytes counts
// it. Safe for concurrent use.
func (a *Array) Descents() []int32 {
	if r := derivedOf(&a.desc, a.I); r != nil {
		return r.vals
	}
	r := &derived{data: unsafe.SliceData(a.I), n: len(a.I), vals: make([]int32, len(a.I))}
	var n int32
	for p := 1; p < len(a.I); p++ {
		if a.I[p] < a.I[p-1] {
			n++
		}
		r.vals[p] = n
	}
	a.desc.Store(r)
	return r.vals
}

// MaxHashArity bounds the number of key components of a HASHMAP.
const MaxHashArity = 6

// HKey is a HASHMAP key; components past the map's arity are zero.
type HKey [MaxHashArity]int64

// CompareKeys orders keys by their first n components, as a HASHMAP read
// as a nested dictionary lists its entries: -1, 0 or 1.
func CompareKeys(a, b *HKey, n int) int {
	for c := range n {
		if a[c] != b[c] {
			if a[c] < b[c] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// HashMap maps tuples of Arity ints to ints or reals. Entries are kept in
// insertion order in Keys/I/F; Index finds an entry by key.
type HashMap struct {
	Elem  ir.Base
	Arity int
	Dims  []int64 // declared size of each key component
	Keys  []HKey
	I     []int64
	F     []float64
	Index map[HKey]int
}

// Trie is a tree of hash maps: level 1 maps i1 to a child, ..., the last
// level maps id to a value (paper §4).
type Trie struct {
	Elem  ir.Base
	Depth int
	Dims  []int64
	Root  *TrieNode
}

// TrieNode is one hash map of a trie. Keys are kept sorted so iteration is
// deterministic; Index finds a key's position. Inner nodes use Children,
// leaf nodes (the last level) use I or F.
type TrieNode struct {
	Keys     []int64
	Index    map[int64]int
	Children []*TrieNode
	I        []int64
	F        []float64
}

func (*Scalar) Kind() ir.ObjKind  { return ir.ObjScalar }
func (*Array) Kind() ir.ObjKind   { return ir.ObjArray }
func (*HashMap) Kind() ir.ObjKind { return ir.ObjHashMap }
func (*Trie) Kind() ir.ObjKind    { return ir.ObjTrie }

func (s *Scalar) ElemType() ir.Base  { return s.Elem }
func (a *Array) ElemType() ir.Base   { return a.Elem }
func (h *HashMap) ElemType() ir.Base { return h.Elem }
func (t *Trie) ElemType() ir.Base    { return t.Elem }

// IntScalar and RealScalar build scalars.
func IntScalar(v int64) *Scalar    { return &Scalar{Elem: ir.Int, I: v} }
func RealScalar(v float64) *Scalar { return &Scalar{Elem: ir.Real, F: v} }

// IntArray and RealArray wrap slices (not copied).
func IntArray(v []int64) *Array    { return &Array{Elem: ir.Int, I: v} }
func RealArray(v []float64) *Array { return &Array{Elem: ir.Real, F: v} }

// Len returns the number of elements.
func (a *Array) Len() int {
	if a.Elem == ir.Real {
		return len(a.F)
	}
	return len(a.I)
}

// NewHashMap returns an empty hash map with the given key sizes.
func NewHashMap(elem ir.Base, dims []int64) *HashMap {
	return &HashMap{Elem: elem, Arity: len(dims), Dims: dims, Index: map[HKey]int{}}
}

// Put adds v at key (adding to an existing value: duplicates sum, as in a
// coordinate file with repeated entries).
func (h *HashMap) Put(key []int64, i int64, f float64) error {
	if len(key) != h.Arity {
		return fmt.Errorf("key has %d components, hash map has %d", len(key), h.Arity)
	}
	var k HKey
	copy(k[:], key)
	if p, ok := h.Index[k]; ok {
		if h.Elem == ir.Real {
			h.F[p] += f
		} else {
			h.I[p] += i
		}
		return nil
	}
	h.Index[k] = len(h.Keys)
	h.Keys = append(h.Keys, k)
	if h.Elem == ir.Real {
		h.F = append(h.F, f)
	} else {
		h.I = append(h.I, i)
	}
	return nil
}

// Len returns the number of entries.
func (h *HashMap) Len() int { return len(h.Keys) }

// NewTrie returns an empty trie with the given level sizes.
func NewTrie(elem ir.Base, dims []int64) *Trie {
	return &Trie{Elem: elem, Depth: len(dims), Dims: dims, Root: &TrieNode{Index: map[int64]int{}}}
}

// Put adds v at key (duplicates sum). Call Finish after the last Put.
func (t *Trie) Put(key []int64, i int64, f float64) error {
	if len(key) != t.Depth {
		return fmt.Errorf("key has %d components, trie has %d levels", len(key), t.Depth)
	}
	n := t.Root
	for lvl, k := range key {
		p, ok := n.Index[k]
		last := lvl == len(key)-1
		if !ok {
			p = len(n.Keys)
			n.Index[k] = p
			n.Keys = append(n.Keys, k)
			switch {
			case !last:
				n.Children = append(n.Children, &TrieNode{Index: map[int64]int{}})
			case t.Elem == ir.Real:
				n.F = append(n.F, 0)
			default:
				n.I = append(n.I, 0)
			}
		}
		if last {
			if t.Elem == ir.Real {
				n.F[p] += f
			} else {
				n.I[p] += i
			}
			return nil
		}
		n = n.Children[p]
	}
	return nil
}

// Finish sorts every node's keys so iteration is in increasing key order.
func (t *Trie) Finish() { t.Root.sortKeys() }

func (n *TrieNode) sortKeys() {
	perm := make([]int, len(n.Keys))
	for i := range perm {
		perm[i] = i
	}
	sort.Slice(perm, func(a, b int) bool { return n.Keys[perm[a]] < n.Keys[perm[b]] })
	keys := make([]int64, len(perm))
	for i, p := range perm {
		keys[i] = n.Keys[p]
		n.Index[keys[i]] = i
	}
	n.Keys = keys
	if n.Children != nil {
		ch := make([]*TrieNode, len(perm))
		for i, p := range perm {
			ch[i] = n.Children[p]
			ch[i].sortKeys()
		}
		n.Children = ch
	}
	if n.I != nil {
		v := make([]int64, len(perm))
		for i, p := range perm {
			v[i] = n.I[p]
		}
		n.I = v
	}
	if n.F != nil {
		v := make([]float64, len(perm))
		for i, p := range perm {
			v[i] = n.F[p]
		}
		n.F = v
	}
}

// Store holds the physical objects of one run, by name.
type Store map[string]Object

// Bytes estimates the memory the store's objects hold: 8 bytes per array
// element, 4 more per element of an array's 32-bit copy (Narrow) and 4
// per element of its descent counts (Descents);
// for hash maps and tries, their entries' keys and values plus their Go
// maps' index (measured with Go 1.26 at a million keys: 38 bytes per key
// of a map[int64]int, 134 of a map[HKey]int, HKey being 6 ints).
func (s Store) Bytes() int64 {
	const mapEntry, hkeyEntry = 38, 134
	var n int64
	for _, o := range s {
		switch x := o.(type) {
		case *Scalar:
			n += 8
		case *Array:
			n += 8 * int64(x.Len())
			for _, p := range []*atomic.Pointer[derived]{&x.narrow, &x.desc} {
				if r := derivedOf(p, x.I); r != nil {
					n += 4 * int64(len(r.vals))
				}
			}
		case *HashMap:
			n += int64(len(x.Keys))*(int64(len(HKey{}))*8+8) + int64(len(x.Index))*hkeyEntry
		case *Trie:
			n += x.Root.bytes(mapEntry)
		}
	}
	return n
}

func (t *TrieNode) bytes(mapEntry int64) int64 {
	if t == nil {
		return 0
	}
	n := 8*int64(len(t.Keys)+len(t.I)+len(t.F)+len(t.Children)) + mapEntry*int64(len(t.Index))
	for _, c := range t.Children {
		n += c.bytes(mapEntry)
	}
	return n
}
