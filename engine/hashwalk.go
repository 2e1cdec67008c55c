package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Walks of a hash map as segment loops. A plan that walks a physical hash
// map level by level, sum(<i, r> in H) ... sum(<j, v> in r) ..., reads
// it the way a plan reads a compressed sparse fiber tree: hashLevels
// stores each level's keys, the bounds of each node's children and the
// leaf values as arrays, and the walk is rewritten, before lowering, into
// loops over those arrays (each a synthetic physical array of the
// kernel, bound from the map's layout at every run):
//
//	sum(<q1, i> in H·key1)
//	  ... sum(<q2, j> in H·key2(H·pos2(q1):H·pos2(q1 + 1)))
//	        ... H·val(q2) ...
//
// So a hash-stored input runs in every form of the nest a sparse format
// does (position space across short rows, the row primitives, a split
// over disjoint rows) with no code of its own. A level whose value is
// used otherwise than as the source of the next level's sum (looked up,
// or kept whole) is not rewritten and stays an itDict loop over the
// layout's rows (hashRow).
//
// A row looked up by key, sum(<j, v> in H(k)) ..., is the same segment
// once its node is found: one probe finds the node's slot s (1 + its
// position in its level, 0 when the key is absent), and the row is
//
//	let s = H·slot1(k) in sum(<q, j> in H·key2(H·row2(s):H·row2(s + 1))) ...
//
// where H·row2 is H·pos2 shifted by one slot, so slot 0 is the empty row
// the interpreter gives a missing key. The probe is a read of the
// layout's position table or a binary search of each level's keys.
// Where the map's first-level keys are dense (a position table covers
// them), a row looked up by one key needs no probe: H·at2 holds the
// bounds of every key's children, empty for a missing key,
//
//	if 0 <= k && k < H·n1 then sum(<q, j> in H·key2(H·at2(k):H·at2(k + 1))) ...
//
// the very loop of a CSR row with a bounds guard. That form is right only
// for maps a table covers, so a kernel compiled with it keeps one with
// the slot form and runs that one on other maps (Kernel.alt). The names carry '·', which the
// parser accepts in no name, so they clash with none of the program's.

// hashPart names the arrays of a hash map's layout.
const (
	hashKeyPart = "·key" // + level (1-based): the keys of the level's nodes
	hashPosPart = "·pos" // + level (2-based): the bounds of each parent's children
	hashValPart = "·val" // the leaf values
	// A looked-up row: the slot of a node of the level (an int hash map
	// of the level's key prefixes), and, + the next level (2-based), the
	// bounds of each slot's children with slot 0 empty.
	hashSlotPart = "·slot" // + level (1-based)
	hashRowPart  = "·row"  // + level (2-based)
	// A row looked up by one key in a map whose first-level keys are
	// dense: the bounds of each key's children, and how many keys.
	hashAtPart  = "·at" // + 2
	hashLenPart = "·n"  // + 1
)

// levelRef says which array of which hash map's layout a synthetic cell is.
type levelRef struct {
	hash  *cell
	part  string
	level int // 1-based
}

// leveled reports whether objects of kind k are laid out by levels: a
// hash map, or a trie (its entries flattened to a hash map's first,
// trieLevels).
func leveled(k ir.ObjKind) bool { return k == ir.ObjHashMap || k == ir.ObjTrie }

// hashWalks rewrites the walks of hash maps in plan, adding the synthetic
// arrays to schema (a copy when any is added). It returns plan itself
// when nothing is rewritten.
//
// With dense, a row looked up by one key reads the table of every key's
// bounds (hashAtPart), right only for maps whose first-level keys a
// position table covers.
func hashWalks(plan *ir.Expr, schema Schema, dense bool) (*ir.Expr, Schema, map[string]levelRef) {
	w := &hashWalker{schema: schema, names: ir.AllNames(plan, nil), dense: dense}
	out := w.expr(plan)
	if len(w.refs) == 0 {
		return plan, schema, nil
	}
	return out, withAdded(schema, w.added), w.refs
}

// withAdded returns a copy of schema with the synthetic objects added.
func withAdded(schema, added Schema) Schema {
	s := Schema{}
	for n, g := range schema {
		s[n] = g
	}
	for n, g := range added {
		s[n] = g
	}
	return s
}

type hashWalker struct {
	schema Schema
	dense  bool
	names  map[string]bool
	n      int
	added  Schema
	refs   map[string]levelRef
}

// expr returns e with every walk it can rewrite rewritten.
func (w *hashWalker) expr(e *ir.Expr) *ir.Expr {
	return replaceWhere(e, func(n *ir.Expr) *ir.Expr {
		if n.Op != ir.OpSum {
			return nil
		}
		if n.Args[0].Op == ir.OpLookup {
			return w.lookedUp(n)
		}
		if n.Args[0].Op != ir.OpGlobal {
			return nil
		}
		g, ok := w.schema[n.Args[0].Name]
		if !ok || !leveled(g.Kind) || g.Arity < 1 || g.Arity > storage.MaxHashArity {
			return nil
		}
		if r := w.walk(n, n.Args[0].Name, g, 1, nil, hashPosPart); r != nil {
			// The body may walk other maps.
			r.Args[1] = w.expr(r.Args[1])
			return r
		}
		return nil
	})
}

// lookedUp rewrites sum e over a row H(k1)...(kL) of hash map H (L below
// its arity) into a segment loop over the row's slot, or returns nil.
func (w *hashWalker) lookedUp(e *ir.Expr) *ir.Expr {
	root, keys := lookupChain(e.Args[0])
	if root.Op != ir.OpGlobal {
		return nil
	}
	g, ok := w.schema[root.Name]
	if !ok || !leveled(g.Kind) || len(keys) >= g.Arity || g.Arity > storage.MaxHashArity {
		return nil
	}
	if w.dense && len(keys) == 1 {
		k := w.expr(keys[0])
		r := w.walk(e, root.Name, g, 2, k, hashAtPart)
		if r == nil {
			return nil
		}
		r.Args[1] = w.expr(r.Args[1])
		n := w.global(root.Name, hashLenPart, 1, GlobalInfo{Kind: ir.ObjScalar, Elem: ir.Int}, ir.IntType)
		cmp := func(op ir.Op, a, b *ir.Expr) *ir.Expr {
			return &ir.Expr{Op: op, Args: []*ir.Expr{a, b}, Type: ir.Type{Base: ir.Bool}, Pos: e.Pos}
		}
		in := cmp(ir.OpAnd, cmp(ir.OpLe, ir.IntConst(0), k), cmp(ir.OpLt, k, n))
		return &ir.Expr{Op: ir.OpIf, Args: []*ir.Expr{in, r}, Type: e.Type, Pos: e.Pos}
	}
	slot := w.global(root.Name, hashSlotPart, len(keys), GlobalInfo{Kind: ir.ObjHashMap, Elem: ir.Int, Arity: len(keys)}, ir.Type{Depth: len(keys), Base: ir.Int})
	for _, k := range keys {
		slot = &ir.Expr{Op: ir.OpLookup, Args: []*ir.Expr{slot, w.expr(k)}, Type: ir.Type{Depth: slot.Type.Depth - 1, Base: ir.Int}, Pos: e.Pos}
	}
	r := w.walk(e, root.Name, g, len(keys)+1, slot, hashRowPart)
	if r == nil {
		return nil
	}
	r.Args[1] = w.expr(r.Args[1])
	return r
}

// walk rewrites sum e over level (1-based) of hash map h, whose parent
// node is parent (nil at the first level): its position, read in the
// bounds array posPart, or its slot, read in hashRowPart. It returns nil
// when the level's value is used otherwise than as a walk.
func (w *hashWalker) walk(e *ir.Expr, h string, g GlobalInfo, level int, parent *ir.Expr, posPart string) *ir.Expr {
	k, v := e.Vars[0], e.Vars[1]
	body := e.Args[1]
	if k == v || rebinds(body, v) {
		return nil
	}
	q := w.fresh()
	qv := &ir.Expr{Op: ir.OpVar, Name: q, Type: ir.IntType, Pos: e.Pos}
	if level < g.Arity {
		// v is a node of this level: every use must be the source of a
		// sum, the walk of the next level.
		ok := true
		body = mapSums(body, v, func(s *ir.Expr) *ir.Expr {
			r := w.walk(s, h, g, level+1, qv, hashPosPart)
			if r == nil {
				ok = false
				return s
			}
			return r
		})
		if !ok || ir.Occurs(v, body) {
			return nil
		}
	} else if ir.Occurs(v, body) {
		val := w.array(h, hashValPart, 0, g.Elem)
		body = ir.Subst(body, map[string]*ir.Expr{v: {Op: ir.OpLookup, Args: []*ir.Expr{val, qv}, Type: ir.Type{Base: g.Elem}, Pos: e.Pos}})
	}
	keys := w.array(h, hashKeyPart, level, ir.Int)
	src := keys
	if parent != nil {
		pos := w.array(h, posPart, level, ir.Int)
		at := func(x *ir.Expr) *ir.Expr {
			return &ir.Expr{Op: ir.OpLookup, Args: []*ir.Expr{pos, x}, Type: ir.IntType, Pos: e.Pos}
		}
		next := &ir.Expr{Op: ir.OpAdd, Args: []*ir.Expr{parent, ir.IntConst(1)}, Type: ir.IntType, Pos: e.Pos}
		src = &ir.Expr{Op: ir.OpSubArray, Args: []*ir.Expr{keys, at(parent), at(next)}, Type: keys.Type, Pos: e.Pos}
	}
	out := e.Shallow()
	out.Vars = []string{q, k}
	out.Args = []*ir.Expr{src, body}
	return out
}

// array returns the global naming one array of h's layout, adding it to
// the schema.
func (w *hashWalker) array(h string, part string, level int, elem ir.Base) *ir.Expr {
	return w.global(h, part, level, GlobalInfo{Kind: ir.ObjArray, Elem: elem}, ir.Type{Depth: 1, Base: elem})
}

// global returns the global naming one object of h's layout, of kind
// info and type t, adding it to the schema.
func (w *hashWalker) global(h, part string, level int, info GlobalInfo, t ir.Type) *ir.Expr {
	name := h + part
	if level > 0 {
		name += fmt.Sprint(level)
	}
	if w.added == nil {
		w.added, w.refs = Schema{}, map[string]levelRef{}
	}
	if _, ok := w.added[name]; !ok {
		w.added[name] = info
		w.refs[name] = levelRef{part: part, level: level, hash: &cell{name: h, info: w.schema[h]}}
	}
	return &ir.Expr{Op: ir.OpGlobal, Name: name, Type: t}
}

// fresh returns a name the plan does not use.
func (w *hashWalker) fresh() string {
	for {
		w.n++
		n := fmt.Sprintf("q·%d", w.n)
		if !w.names[n] {
			return n
		}
	}
}

// rebinds reports whether a binder inside e names v.
func rebinds(e *ir.Expr, v string) bool {
	found := false
	ir.Walk(e, func(n *ir.Expr) bool {
		for _, b := range n.Vars {
			found = found || b == v
		}
		return !found
	})
	return found
}

// mapSums replaces every sum over the variable v in e (which no binder of
// e rebinds) by f's rewrite of it.
func mapSums(e *ir.Expr, v string, f func(*ir.Expr) *ir.Expr) *ir.Expr {
	return replaceWhere(e, func(n *ir.Expr) *ir.Expr {
		if n.Op == ir.OpSum && n.Args[0].Op == ir.OpVar && n.Args[0].Name == v {
			return f(n)
		}
		return nil
	})
}

// replaceWhere returns e with each outermost node for which with returns
// an expression replaced by it, sharing the nodes it leaves alone.
func replaceWhere(e *ir.Expr, with func(*ir.Expr) *ir.Expr) *ir.Expr {
	if r := with(e); r != nil {
		return r
	}
	var c *ir.Expr
	for i, a := range e.Args {
		if b := replaceWhere(a, with); b != a {
			if c == nil {
				c = e.Shallow()
			}
			c.Args[i] = b
		}
	}
	if c == nil {
		return e
	}
	return c
}

// levelObject returns the object of g's layout that ref names.
func (g *hashLevels) levelObject(ref levelRef) storage.Object {
	switch ref.part {
	case hashKeyPart:
		return g.keyArrs[ref.level-1]
	case hashPosPart:
		return g.posArrs[ref.level-2]
	case hashAtPart:
		g.atOnce.Do(g.makeAt)
		return g.atArr
	case hashLenPart:
		return &storage.Scalar{Elem: ir.Int, I: int64(len(g.at0))}
	case hashSlotPart, hashRowPart:
		l := ref.level - 1 // the level of the looked-up nodes, 0-based
		if ref.part == hashRowPart {
			l--
		}
		g.slotOnce[l].Do(func() { g.makeSlots(l) })
		if ref.part == hashRowPart {
			return g.rowArrs[l]
		}
		return g.slotMaps[l]
	}
	return g.valArr
}

// makeSlots builds the slot map of level l's nodes (1 + each node's
// position, by its key prefix) and the bounds of each slot's children
// (slot 0, a missing key's, empty).
func (g *hashLevels) makeSlots(l int) {
	pre := make([]storage.HKey, len(g.keys[0]))
	for q, k := range g.keys[0] {
		pre[q][0] = k
	}
	for m := 1; m <= l; m++ {
		next := make([]storage.HKey, len(g.keys[m]))
		for p := range pre {
			for c := g.kids[m-1][p]; c < g.kids[m-1][p+1]; c++ {
				next[c] = pre[p]
				next[c][m] = g.keys[m][c]
			}
		}
		pre = next
	}
	var dims []int64
	if len(g.h.Dims) > l {
		dims = g.h.Dims[:l+1]
	}
	h := &storage.HashMap{Elem: ir.Int, Arity: l + 1, Dims: dims, Keys: pre, I: make([]int64, len(pre)), Index: make(map[storage.HKey]int, len(pre))}
	for q, k := range pre {
		h.I[q] = int64(q + 1)
		h.Index[k] = q
	}
	g.slotMaps[l] = h
	g.rowArrs[l] = storage.IntArray(append([]int64{0}, g.kids[l]...))
}

// makeAt builds the bounds of the children of every key the first
// level's position table covers, empty for a missing key (none without
// a table).
func (g *hashLevels) makeAt() {
	at := make([]int64, len(g.at0)+1)
	var end int64
	for k, q := range g.at0 {
		at[k] = end
		if q >= 0 {
			end = g.kids[0][q+1]
		}
	}
	at[len(g.at0)] = end
	g.atArr = storage.IntArray(at)
}

// covered reports whether a position table covers the first level's keys
// (the condition of the form reading hashAtPart).
func (g *hashLevels) covered() bool { return g.at0 != nil }

// slot1 is slotOf of one key.
func (g *hashLevels) slot1(k int64) int64 {
	if g.at0 != nil {
		if uint64(k) >= uint64(len(g.at0)) {
			return 0
		}
		return int64(g.at0[k]) + 1
	}
	p, ok := slices.BinarySearch(g.keys[0], k)
	if !ok {
		return 0
	}
	return int64(p) + 1
}

// slotOf returns the slot of the node at key prefix k (0 when absent): a
// read of the position table at the first level, else a binary search of
// the row's keys, level by level.
func (g *hashLevels) slotOf(k []int64) int64 {
	row := g.root
	for l, x := range k {
		p, ok := row.find(x)
		if !ok {
			return 0
		}
		q := row.lo + p
		if l == len(k)-1 {
			return int64(q) + 1
		}
		row = hashRow{g: g, level: l + 1, lo: int(g.kids[l][q]), hi: int(g.kids[l][q+1])}
	}
	return 0
}

// levelNote is what explain adds to the iterator of a loop over array
// name: which hash map's level it walks, or nothing.
func levelNote(name string) string {
	if a, _, ok := strings.Cut(name, runKeyPart); ok {
		return fmt.Sprintf(" (the values of the runs of %s, found in one pass at the first run)", a)
	}
	h, level, ok := strings.Cut(name, hashKeyPart)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (the keys of level %s of %s, laid out by levels)", level, h)
}

// isFirstLevelKeys reports whether array name holds the keys of a hash
// map's first level (distinct, in increasing order).
func isFirstLevelKeys(name string) bool { return strings.HasSuffix(name, hashKeyPart+"1") }
