package engine

import (
	"fmt"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// GlobalInfo describes a physical object a plan reads: its kind, the kind
// of its elements, and for a hash map its arity, for a trie its depth.
type GlobalInfo struct {
	Kind  ir.ObjKind
	Elem  ir.Base
	Arity int
}

// Type is the logical type of the object.
func (g GlobalInfo) Type() ir.Type {
	switch g.Kind {
	case ir.ObjScalar:
		return ir.Type{Depth: 0, Base: g.Elem}
	case ir.ObjArray:
		return ir.Type{Depth: 1, Base: g.Elem}
	}
	return ir.Type{Depth: g.Arity, Base: g.Elem}
}

// Schema maps the name of every physical object a plan may read to its
// description. A kernel compiled for a schema runs on any store whose
// objects match it.
type Schema map[string]GlobalInfo

// SchemaOf describes the objects of a store.
func SchemaOf(st storage.Store) Schema {
	s := Schema{}
	for name, obj := range st {
		if obj == nil {
			continue
		}
		s[name] = infoOf(obj)
	}
	return s
}

func infoOf(obj storage.Object) GlobalInfo {
	g := GlobalInfo{Kind: obj.Kind(), Elem: obj.ElemType()}
	switch o := obj.(type) {
	case *storage.HashMap:
		g.Arity = o.Arity
	case *storage.Trie:
		g.Arity = o.Depth
	}
	return g
}

// cell is where the closures of a kernel find a physical object. Run
// fills the cells before executing; closures read them.
type cell struct {
	name string
	info GlobalInfo
	// needView: the plan uses the object as a dictionary value, so the
	// run prepares view (and, for a hash map, the sorted groups).
	needView bool

	// needSorted: the array is a merge operand; descents[p] counts the
	// positions q <= p with ints[q] < ints[q-1], so a segment's sortedness
	// is checked in O(1); the array remembers them (storage.Array.Descents).
	needSorted bool
	descents   []int32

	// needNarrow: a CSR row loop reads the array as column indices;
	// where the assembly reads int32s (narrowRows), narrow is the
	// array's 32-bit copy (Array.Narrow; nil when a value does not fit).
	needNarrow bool
	narrow     []int32

	scalarI int64
	scalarF float64
	n       int64 // an array's length
	// imin, imax: the smallest and largest of ints (Array.IntRange);
	// a loop reading y[ints[p]] checks no index when they fit y.
	imin, imax int64
	// nondecr: no value of ints is less than the one before it
	// (Array.NonDecreasing), so the segments a positions array bounds are
	// all in order.
	nondecr bool
	// halfMax: the largest 32-bit half of ints' values (Array.Halves),
	// -1 when an int is negative: sell packs two columns per word.
	halfMax int64
	ints    []int64
	reals   []float64
	// array: the bound array, for what storage remembers of it
	// (Array.IncreasesWithin: segBounds.sorted)
	array *storage.Array
	hash  *storage.HashMap // for a trie: its entries flattened (trieLevels)
	trie  *storage.Trie
	// flat is a trie's entries as a hash map (trieLevels), flattened
	// from the root flatOf; checkedOf holding checkedN entries is the
	// trie checkTrie passed last.
	flat              *storage.HashMap
	flatOf, checkedOf *storage.TrieNode
	checkedN          int
	view              dict
	// groups is the level layout of the last hash map bound (hashView).
	groups *hashLevels
	// needLevels: walks of the hash map were rewritten into loops over
	// its layout's arrays (hashwalk.go), which level cells read.
	needLevels bool
	// level: the cell is one array of a hash map's layout, bound from
	// the map's cell rather than from the store.
	level *levelRef
	// runs: the cell is one object of a run layout (runwalk.go), bound
	// from the arrays whose runs it holds.
	runs *runNode
}

// bind points c at obj, checking that obj matches the schema and is well
// formed.
func (c *cell) bind(obj storage.Object) error {
	if obj == nil {
		return fmt.Errorf("no data for physical object %s", c.name)
	}
	got := infoOf(obj)
	if got != c.info {
		return fmt.Errorf("physical object %s is %s %s (arity %d), but the kernel was compiled for %s %s (arity %d)",
			c.name, got.Elem, got.Kind, got.Arity, c.info.Elem, c.info.Kind, c.info.Arity)
	}
	if c.info.Elem != ir.Int && c.info.Elem != ir.Real {
		return fmt.Errorf("physical object %s holds %s values; only int and real are supported", c.name, c.info.Elem)
	}
	real := c.info.Elem == ir.Real
	c.view, c.array = nil, nil
	switch o := obj.(type) {
	case *storage.Scalar:
		c.scalarI, c.scalarF = o.I, o.F
	case *storage.Array:
		c.ints, c.reals, c.n, c.array = o.I, o.F, int64(o.Len()), o
		c.imin, c.imax, c.halfMax, c.nondecr = 0, -1, -1, false
		if o.Elem == ir.Int {
			c.imin, c.imax = o.IntRange()
			c.nondecr = o.NonDecreasing()
			if low, high, ok := o.Halves(); ok {
				c.halfMax = max(low[1], high[1])
			}
		}
		if c.needSorted {
			c.descents = o.Descents()
		}
		if c.needNarrow && useNarrow && o.Elem == ir.Int {
			c.narrow = o.Narrow()
		}
		if c.needView {
			c.view = &arrView{name: c.name, ints: o.I, reals: o.F, real: real, lo: 0, hi: int64(o.Len()), whole: true}
		}
	case *storage.HashMap:
		if err := checkHashMap(o); err != nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
		c.hash = o
		if c.needView || c.needLevels {
			v, err := c.hashView(o)
			if err != nil {
				return fmt.Errorf("%s: %v", c.name, err)
			}
			if c.needView {
				c.view = v
			}
		}
	case *storage.Trie:
		// A trie checked already, the same root holding as many entries,
		// is taken as unchanged (as for a hash map's layout: build a new
		// Trie rather than change its keys in place).
		if n := trieEntries(o.Root, o.Depth); o.Root == nil || c.checkedOf != o.Root || c.checkedN != n {
			if err := checkTrie(o); err != nil {
				return fmt.Errorf("%s: %v", c.name, err)
			}
			c.checkedOf, c.checkedN = o.Root, trieEntries(o.Root, o.Depth) // (checkTrie sets a nil root)
		}
		c.trie = o
		c.view = &trieView{node: o.Root, levels: o.Depth, real: real}
		if c.needLevels {
			c.hash = c.trieLevels(o, c.checkedN)
			if _, err := c.hashView(c.hash); err != nil {
				return fmt.Errorf("%s: %v", c.name, err)
			}
		}
	default:
		return fmt.Errorf("physical object %s has unsupported kind %T", c.name, obj)
	}
	return nil
}

func checkLeaves(elem ir.Base, keys, ints, reals int) error {
	switch {
	case elem == ir.Int && ints != keys:
		return fmt.Errorf("%d keys but %d int values", keys, ints)
	case elem == ir.Real && reals != keys:
		return fmt.Errorf("%d keys but %d real values", keys, reals)
	}
	return nil
}

func checkHashMap(h *storage.HashMap) error {
	if h.Arity < 1 || h.Arity > storage.MaxHashArity {
		return fmt.Errorf("hash map arity %d is not between 1 and %d", h.Arity, storage.MaxHashArity)
	}
	return checkLeaves(h.Elem, len(h.Keys), len(h.I), len(h.F))
}

// checkTrie verifies that every node is well formed and its keys sorted
// and distinct, which iteration relies on.
func checkTrie(t *storage.Trie) error {
	if t.Depth < 1 {
		return fmt.Errorf("trie depth %d is less than 1", t.Depth)
	}
	if t.Root == nil {
		t.Root = &storage.TrieNode{Index: map[int64]int{}}
	}
	var walk func(n *storage.TrieNode, level int) error
	walk = func(n *storage.TrieNode, level int) error {
		last := level == t.Depth-1
		if last {
			if err := checkLeaves(t.Elem, len(n.Keys), len(n.I), len(n.F)); err != nil {
				return fmt.Errorf("trie node at level %d: %v", level+1, err)
			}
		} else if len(n.Children) != len(n.Keys) {
			return fmt.Errorf("trie node at level %d has %d keys but %d children", level+1, len(n.Keys), len(n.Children))
		}
		if len(n.Index) != len(n.Keys) {
			return fmt.Errorf("trie node at level %d has %d keys but %d index entries", level+1, len(n.Keys), len(n.Index))
		}
		for i, k := range n.Keys {
			if i > 0 && n.Keys[i-1] >= k {
				return fmt.Errorf("trie node at level %d is not sorted (call Trie.Finish) or stores key %d twice", level+1, k)
			}
			if !last {
				if n.Children[i] == nil {
					return fmt.Errorf("trie node at level %d has no child for key %d", level+1, k)
				}
				if err := walk(n.Children[i], level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(t.Root, 0)
}

// levelObject is the array of a bound hash map's layout that level cell c
// reads.
func (c *cell) levelObject() storage.Object {
	g := c.level.hash.groups
	if g == nil || c.level.hash.hash == nil {
		return nil
	}
	return g.levelObject(*c.level)
}

// unbind drops the cell's references to the store after a run.
func (c *cell) unbind() {
	c.ints, c.reals, c.array, c.hash, c.trie, c.view, c.narrow, c.descents = nil, nil, nil, nil, nil, nil, nil, nil
}

// sortedSegment reports whether ints[lo:hi] is non-decreasing.
func (c *cell) sortedSegment(lo, hi int64) bool {
	if hi-lo < 2 {
		return true
	}
	return c.descents[hi-1] == c.descents[lo]
}

// trieLevels returns the n entries of trie t as a hash map, in key order,
// for the level layout walks of t read (hashwalk.go): a trie read as a
// nested dictionary lists what a hash map of its key tuples lists. The
// keys are flattened again only when t's root or entry count changes (as
// for a hash map, build a new Trie rather than change its keys in place);
// the values are read again at every bind.
func (c *cell) trieLevels(t *storage.Trie, n int) *storage.HashMap {
	h := c.flat
	fresh := h == nil || c.flatOf != t.Root || len(h.Keys) != n
	if fresh {
		h = &storage.HashMap{Elem: t.Elem, Arity: t.Depth, Dims: t.Dims, Keys: make([]storage.HKey, 0, n)}
		if t.Elem == ir.Real {
			h.F = make([]float64, 0, n)
		} else {
			h.I = make([]int64, 0, n)
		}
		c.flat, c.flatOf = h, t.Root
	} else {
		h.F, h.I = h.F[:0], h.I[:0]
	}
	var key storage.HKey
	var walk func(nd *storage.TrieNode, level int)
	walk = func(nd *storage.TrieNode, level int) {
		if level < t.Depth-1 {
			for q, k := range nd.Keys {
				key[level] = k
				walk(nd.Children[q], level+1)
			}
			return
		}
		// A leaf node's values in one copy.
		h.F, h.I = append(h.F, nd.F...), append(h.I, nd.I...)
		if fresh {
			for _, k := range nd.Keys {
				key[level] = k
				h.Keys = append(h.Keys, key)
			}
		}
	}
	walk(t.Root, 0)
	return h
}

// trieEntries counts the leaves below nd (depth levels).
func trieEntries(nd *storage.TrieNode, depth int) int {
	switch {
	case nd == nil:
		return 0
	case depth == 1:
		return len(nd.Keys)
	}
	n := 0
	for _, ch := range nd.Children {
		n += trieEntries(ch, depth-1)
	}
	return n
}
