package engine

import (
	"fmt"
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
// layout's rows (hashRow); so does a lookup H(k) of a row, which needs a
// probe rather than a walk. The names carry '·', which the parser
// accepts in no name, so they clash with none of the program's.

// hashPart names the arrays of a hash map's layout.
const (
	hashKeyPart = "·key" // + level (1-based): the keys of the level's nodes
	hashPosPart = "·pos" // + level (2-based): the bounds of each parent's children
	hashValPart = "·val" // the leaf values
)

// levelRef says which array of which hash map's layout a synthetic cell is.
type levelRef struct {
	hash  *cell
	part  string
	level int // 1-based
}

// hashWalks rewrites the walks of hash maps in plan, adding the synthetic
// arrays to schema (a copy when any is added). It returns plan itself
// when nothing is rewritten.
func hashWalks(plan *ir.Expr, schema Schema) (*ir.Expr, Schema, map[string]levelRef) {
	w := &hashWalker{schema: schema, names: ir.AllNames(plan, nil)}
	out := w.expr(plan)
	if len(w.refs) == 0 {
		return plan, schema, nil
	}
	s := Schema{}
	for n, g := range schema {
		s[n] = g
	}
	for n, g := range w.added {
		s[n] = g
	}
	return out, s, w.refs
}

type hashWalker struct {
	schema Schema
	names  map[string]bool
	n      int
	added  Schema
	refs   map[string]levelRef
}

// expr returns e with every walk it can rewrite rewritten.
func (w *hashWalker) expr(e *ir.Expr) *ir.Expr {
	return replaceWhere(e, func(n *ir.Expr) *ir.Expr {
		if n.Op != ir.OpSum || n.Args[0].Op != ir.OpGlobal {
			return nil
		}
		g, ok := w.schema[n.Args[0].Name]
		if !ok || g.Kind != ir.ObjHashMap || g.Arity < 1 || g.Arity > storage.MaxHashArity {
			return nil
		}
		if r := w.walk(n, n.Args[0].Name, g, 1, nil); r != nil {
			// The body may walk other maps.
			r.Args[1] = w.expr(r.Args[1])
			return r
		}
		return nil
	})
}

// walk rewrites sum e over level (1-based) of hash map h, whose parent
// node's position is the variable parent (nil at the first level), or
// returns nil when the level's value is used otherwise than as a walk.
func (w *hashWalker) walk(e *ir.Expr, h string, g GlobalInfo, level int, parent *ir.Expr) *ir.Expr {
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
			r := w.walk(s, h, g, level+1, qv)
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
		val := w.array(h, g, hashValPart, 0, g.Elem)
		body = ir.Subst(body, map[string]*ir.Expr{v: {Op: ir.OpLookup, Args: []*ir.Expr{val, qv}, Type: ir.Type{Base: g.Elem}, Pos: e.Pos}})
	}
	keys := w.array(h, g, hashKeyPart, level, ir.Int)
	src := keys
	if parent != nil {
		pos := w.array(h, g, hashPosPart, level, ir.Int)
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
func (w *hashWalker) array(h string, g GlobalInfo, part string, level int, elem ir.Base) *ir.Expr {
	name := h + part
	if level > 0 {
		name += fmt.Sprint(level)
	}
	if w.added == nil {
		w.added, w.refs = Schema{}, map[string]levelRef{}
	}
	if _, ok := w.added[name]; !ok {
		w.added[name] = GlobalInfo{Kind: ir.ObjArray, Elem: elem}
		w.refs[name] = levelRef{part: part, level: level, hash: &cell{name: h, info: g}}
	}
	return &ir.Expr{Op: ir.OpGlobal, Name: name, Type: ir.Type{Depth: 1, Base: elem}}
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

// levelArray returns the array of g's layout that ref names.
func (g *hashLevels) levelArray(ref levelRef) *storage.Array {
	switch ref.part {
	case hashKeyPart:
		return g.keyArrs[ref.level-1]
	case hashPosPart:
		return g.posArrs[ref.level-2]
	}
	return g.valArr
}

// levelNote is what explain adds to the iterator of a loop over array
// name: which hash map's level it walks, or nothing.
func levelNote(name string) string {
	h, level, ok := strings.Cut(name, hashKeyPart)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (the keys of level %s of hash map %s, laid out by levels)", level, h)
}

// isFirstLevelKeys reports whether array name holds the keys of a hash
// map's first level (distinct, in increasing order).
func isFirstLevelKeys(name string) bool { return strings.HasSuffix(name, hashKeyPart+"1") }
