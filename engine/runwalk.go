package engine

import (
	"fmt"
	"slices"
	"strconv"
	"unsafe"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Walks of runs as segment loops. A plan that walks the runs of a sorted
// coordinate array, and the runs of another array within each of them,
//
//	sum(<p0, i> in runs(A(lo:hi)))
//	  ... sum(<p1, j> in runs(B(p0:runend(A, p0, hi))))
//	        ... sum(<p2, k> in C(p1:runend(B, p1, runend(A, p0, hi)))) ...
//
// (a COO's mapping) reads it the way a plan reads a compressed sparse
// fiber tree once the runs are known: the run layout holds, per level,
// each run's first position (·rs), its value (·rk) and, below the first
// level, the first run within each run of the level above (·rq), and the
// walk is rewritten, before lowering, into loops over those arrays (each
// a synthetic physical array of the kernel):
//
//	sum(<r0, i> in A·rk(0:A·rn))
//	  ... sum(<r1, j> in B·rk(B·rq(r0):B·rq(r0 + 1)))
//	        ... sum(<p2, k> in C(B·rs(r1):B·rs(r1 + 1))) ...
//
// So a COO runs in every form of the nest a compressed format does. The
// layout is found in one pass over the arrays by Prepare (or the first
// run, without it), and kept while they stay the same arrays (nothing is
// stored at load). A walk of runs the rewrite does not recognize (a window that is
// not closed nor a run of the level above) stays an itRuns loop (runs.go).
// The names carry '·', which the parser accepts in no name.

// runNode is one level of a run layout: the runs of arr within the
// window lo:hi (the first level) or within each run of parent.
type runNode struct {
	id     int
	arr    string
	parent *runNode
	lo, hi *ir.Expr // the first level's window: closed expressions
	// names of the synthetic objects
	starts, keys, firsts, count string
	// the cells, once compiled
	rs, rk, rq, rn *cell
	// the layout last found, and the arrays it was found from
	from     runsFrom
	rsA, rkA *storage.Array
	rqA      *storage.Array
	rnS      *storage.Scalar
	builds   int // layouts found, for tests
}

// runsFrom identifies the data a layout was found from.
type runsFrom struct {
	arr, parent unsafe.Pointer
	n, lo, hi   int64
	parentN     int
}

// runKeyPart names the array of a run layout's values.
const runKeyPart = "·rk"

type runWalker struct {
	schema Schema
	names  map[string]bool
	nodes  []*runNode
	added  Schema
	nm     *ir.Namer
}

// runWalks rewrites the walks of runs in plan, adding the synthetic
// objects to schema (a copy when any is added). It returns plan itself
// when nothing is rewritten.
func runWalks(plan *ir.Expr, schema Schema) (*ir.Expr, Schema, []*runNode) {
	names := ir.AllNames(plan, nil)
	w := &runWalker{schema: schema, names: names, nm: ir.NewNamer(names)}
	out := w.expr(plan)
	if len(w.nodes) == 0 {
		return plan, schema, nil
	}
	return out, withAdded(schema, w.added), w.nodes
}

func (w *runWalker) expr(e *ir.Expr) *ir.Expr {
	return replaceWhere(e, func(n *ir.Expr) *ir.Expr {
		switch n.Op {
		case ir.OpSum:
			walk, r, body, ok := w.runWalk(n.Args[0], n.Vars[0], n.Args[1])
			if !ok {
				return nil
			}
			out := n.Shallow()
			out.Vars = []string{r, n.Vars[1]}
			out.Args = []*ir.Expr{walk, w.expr(body)}
			return out
		case ir.OpMerge:
			// A merge with the runs of a sorted array (the runs' values
			// increase: a sorted vector) walks the run keys as it would
			// a compressed level's coordinates.
			for side := 0; side < 2; side++ {
				walk, r, body, ok := w.runWalk(n.Args[side], n.Vars[side], n.Args[2])
				if !ok {
					continue
				}
				out := n.Shallow()
				out.Vars = slices.Clone(n.Vars)
				out.Vars[side] = r
				out.Args = slices.Clone(n.Args)
				out.Args[side], out.Args[2] = walk, body
				return w.expr(out)
			}
		}
		return nil
	})
}

// runWalk rewrites a walk of src binding position p, with body body,
// when src is the runs of a window the layout knows: it returns the walk
// of the run keys, the run's variable that replaces p and the body
// reading the run's bounds; ok is false otherwise.
func (w *runWalker) runWalk(src *ir.Expr, p string, body *ir.Expr) (walk *ir.Expr, r string, out *ir.Expr, ok bool) {
	if src.Op != ir.OpCall || src.Name != "runs" || len(src.Args) != 1 || src.Args[0].Op != ir.OpSubArray {
		return nil, "", nil, false
	}
	win := src.Args[0]
	if win.Args[0].Op != ir.OpGlobal {
		return nil, "", nil, false
	}
	arr := win.Args[0].Name
	if g, ok := w.schema[arr]; !ok || g.Kind != ir.ObjArray || g.Elem != ir.Int {
		return nil, "", nil, false
	}
	var node *runNode
	if closedBound(win.Args[1]) && closedBound(win.Args[2]) {
		node = w.node(arr, nil, win.Args[1], win.Args[2])
		walk = ir.SubArray(w.global(node.keys), ir.IntConst(0), w.global(node.count))
	} else if parent, x := w.runOf(win.Args[1], win.Args[2]); parent != nil {
		node = w.node(arr, parent, nil, nil)
		rq := w.global(node.firsts)
		walk = ir.SubArray(w.global(node.keys), runAt(rq, x), runAt(rq, plusOneExpr(x)))
	} else {
		return nil, "", nil, false
	}
	walk.Type = ir.Type{Depth: 1, Base: ir.Int}
	r = w.nm.Fresh(p + "r")
	rs := w.global(node.starts)
	hi := ir.Format(win.Args[2])
	// runend(A, p, hi) is the next run's start; p is the run's.
	out = replaceWhere(body, func(x *ir.Expr) *ir.Expr {
		if x.Op == ir.OpCall && x.Name == "runend" && len(x.Args) == 3 && x.Args[0].Op == ir.OpGlobal && x.Args[0].Name == arr &&
			isVarSlot(x.Args[1], p) && ir.Format(x.Args[2]) == hi {
			return runAt(rs, plusOneExpr(typedVar(r)))
		}
		return nil
	})
	out = ir.Subst(out, map[string]*ir.Expr{p: runAt(rs, typedVar(r))})
	return walk, r, w.runColumns(out, rs, r), true
}

// runColumns rewrites the walks of a run's positions in e, sum(<q, u> in
// S(r):S(r + 1)) b (a user's mapping walked by runs, rule RN1), whose body
// reads an int array Y at every position, into walks of Y's segment,
// sum(<q, v> in Y(S(r):S(r + 1))) b[Y(q) := v]: the column loop of a
// compressed level, which the nest's forms take (a scatter by the
// segment's keys). b reads Y(q) at every q whatever the data, so the
// segment reads no position the walk did not.
func (w *runWalker) runColumns(e *ir.Expr, rs *ir.Expr, r string) *ir.Expr {
	lo, hi := ir.Format(runAt(rs, typedVar(r))), ir.Format(runAt(rs, plusOneExpr(typedVar(r))))
	return replaceWhere(e, func(n *ir.Expr) *ir.Expr {
		if n.Op != ir.OpSum || n.Args[0].Op != ir.OpRange || ir.Format(n.Args[0].Args[0]) != lo || ir.Format(n.Args[0].Args[1]) != hi {
			return nil
		}
		q, u := n.Vars[0], n.Vars[1]
		y := w.readAlways(n.Args[1], q)
		if y == "" || u == q {
			return nil
		}
		v := w.nm.Fresh(q + "v")
		body := n.Args[1]
		if u != "_" {
			body = ir.Subst(body, map[string]*ir.Expr{u: typedVar(q)})
		}
		body = replaceWhere(body, func(x *ir.Expr) *ir.Expr {
			if x.Op == ir.OpLookup && x.Args[0].Op == ir.OpGlobal && x.Args[0].Name == y && isVarSlot(x.Args[1], q) {
				return typedVar(v)
			}
			return nil
		})
		if ir.Occurs(q, body) && !w.boundOnce(n.Args[1], q) {
			return nil
		}
		seg := ir.SubArray(ir.Global(y), n.Args[0].Args[0], n.Args[0].Args[1])
		seg.Args[0].Type = ir.Type{Depth: 1, Base: ir.Int}
		seg.Type = seg.Args[0].Type
		out := n.Shallow()
		out.Vars = []string{q, v}
		out.Args = []*ir.Expr{seg, body}
		return out
	})
}

// readAlways returns an int array that e reads at q wherever e is
// evaluated (not under a branch or a loop's body), or "".
func (w *runWalker) readAlways(e *ir.Expr, q string) string {
	switch e.Op {
	case ir.OpLookup:
		if e.Args[0].Op == ir.OpGlobal && e.Args[1].Op == ir.OpVar && e.Args[1].Name == q {
			if g, ok := w.schema[e.Args[0].Name]; ok && g.Kind == ir.ObjArray && g.Elem == ir.Int {
				return e.Args[0].Name
			}
		}
	case ir.OpIf:
		return w.readAlways(e.Args[0], q)
	case ir.OpSum, ir.OpMerge:
		return w.readAlways(e.Args[0], q)
	}
	for _, a := range e.Args {
		if y := w.readAlways(a, q); y != "" {
			return y
		}
	}
	return ""
}

// boundOnce reports whether no binder in e rebinds q.
func (w *runWalker) boundOnce(e *ir.Expr, q string) bool {
	ok := true
	ir.Walk(e, func(x *ir.Expr) bool {
		if slices.Contains(x.Vars, q) {
			ok = false
		}
		return ok
	})
	return ok
}

// runOf recognizes the window S(x):S(x + 1), one run of the level whose
// starts S are, and returns that level and x.
func (w *runWalker) runOf(lo, hi *ir.Expr) (*runNode, *ir.Expr) {
	if lo.Op != ir.OpLookup || hi.Op != ir.OpLookup || lo.Args[0].Op != ir.OpGlobal || hi.Args[0].Op != ir.OpGlobal ||
		lo.Args[0].Name != hi.Args[0].Name || ir.Format(hi.Args[1]) != ir.Format(plusOneExpr(lo.Args[1])) {
		return nil, nil
	}
	for _, n := range w.nodes {
		if n.starts == lo.Args[0].Name {
			return n, lo.Args[1]
		}
	}
	return nil, nil
}

// node returns the level of arr's runs below parent (within lo:hi for
// the first level), adding it if new.
func (w *runWalker) node(arr string, parent *runNode, lo, hi *ir.Expr) *runNode {
	for _, n := range w.nodes {
		if n.arr == arr && n.parent == parent && (parent != nil || ir.Format(n.lo) == ir.Format(lo) && ir.Format(n.hi) == ir.Format(hi)) {
			return n
		}
	}
	id := len(w.nodes)
	name := func(part string) string {
		s := arr + part + strconv.Itoa(id)
		if w.added == nil {
			w.added = Schema{}
		}
		w.added[s] = GlobalInfo{Kind: ir.ObjArray, Elem: ir.Int}
		return s
	}
	n := &runNode{id: id, arr: arr, parent: parent, lo: lo, hi: hi,
		starts: name("·rs"), keys: name(runKeyPart), firsts: name("·rq"), count: name("·rn")}
	w.added[n.count] = GlobalInfo{Kind: ir.ObjScalar, Elem: ir.Int}
	w.nodes = append(w.nodes, n)
	return n
}

func (w *runWalker) global(name string) *ir.Expr {
	g := ir.Global(name)
	g.Type = w.added[name].Type()
	return g
}

func runAt(arr, k *ir.Expr) *ir.Expr {
	e := ir.Lookup(arr, k)
	e.Type = ir.IntType
	return e
}

func typedVar(name string) *ir.Expr {
	v := ir.Var(name)
	v.Type = ir.IntType
	return v
}

func plusOneExpr(x *ir.Expr) *ir.Expr {
	e := ir.Binary(ir.OpAdd, x, ir.IntConst(1))
	e.Type = ir.IntType
	return e
}

// closedBound reports whether e is an int the run's objects give: a
// constant, a scalar or an array's element at a constant.
func closedBound(e *ir.Expr) bool {
	switch e.Op {
	case ir.OpConst:
		return e.Type == ir.IntType
	case ir.OpGlobal:
		return true
	case ir.OpLookup:
		return e.Args[0].Op == ir.OpGlobal && e.Args[1].Op == ir.OpConst
	}
	return false
}

// bindRuns points the compiled layout's cells at their objects. The
// arrays and bounds the layout is found from are cells too, so that a
// run binds and checks them even where the rewritten plan reads them no
// more.
func (c *compiler) bindRuns(nodes []*runNode) {
	for _, n := range nodes {
		c.cell(&ir.Expr{Op: ir.OpGlobal, Name: n.arr})
		for _, b := range []*ir.Expr{n.lo, n.hi} {
			if b == nil {
				continue
			}
			switch b.Op {
			case ir.OpGlobal:
				c.cell(b)
			case ir.OpLookup:
				c.cell(b.Args[0])
			}
		}
		get := func(name string) *cell {
			if cl, ok := c.cells[name]; ok {
				return cl
			}
			return &cell{name: name, info: c.schema[name]}
		}
		n.rs, n.rk, n.rq, n.rn = get(n.starts), get(n.keys), get(n.firsts), get(n.count)
		for _, cl := range []*cell{n.rs, n.rk, n.rq, n.rn} {
			cl.runs = n
		}
	}
}

// boundValue evaluates a closed bound from st's objects.
func boundValue(e *ir.Expr, st storage.Store) (int64, error) {
	switch e.Op {
	case ir.OpConst:
		return e.I, nil
	case ir.OpGlobal:
		if s, ok := st[e.Name].(*storage.Scalar); ok && s.Elem == ir.Int {
			return s.I, nil
		}
	case ir.OpLookup:
		if a, ok := st[e.Args[0].Name].(*storage.Array); ok && a.Elem == ir.Int {
			k := e.Args[1].I
			if k < 0 || k >= int64(len(a.I)) {
				return 0, fmt.Errorf("%s: index %d is outside 0..%d", ir.Format(e), k, len(a.I)-1)
			}
			return a.I[k], nil
		}
	}
	return 0, fmt.Errorf("%s is not an int the run's objects give", ir.Format(e))
}

// find finds the runs of n in st's arrays, its parent's found first. The
// layout found last is kept while the arrays are the same, so that
// Prepare finds it once and every run, the first included, reuses it.
func (n *runNode) find(st storage.Store) error {
	src, ok := st[n.arr].(*storage.Array)
	if !ok || src.Elem != ir.Int {
		return fmt.Errorf("runs of %s: not an int array", n.arr)
	}
	a := src.I
	from := runsFrom{n: int64(len(a))}
	if len(a) > 0 {
		from.arr = unsafe.Pointer(&a[0])
	}
	var ps []int64
	if n.parent != nil {
		if n.parent.rsA == nil {
			return fmt.Errorf("runs of %s: the runs above it are not found", n.arr)
		}
		ps = n.parent.rsA.I
		if len(ps) > 0 && (ps[0] < 0 || ps[len(ps)-1] > int64(len(a))) {
			return fmt.Errorf("runs of %s: the runs above it end at %d, past its %d positions", n.arr, ps[len(ps)-1], len(a))
		}
		from.parentN = len(ps)
		if len(ps) > 0 {
			from.parent = unsafe.Pointer(&ps[0])
		}
	} else {
		lo, err := boundValue(n.lo, st)
		if err != nil {
			return err
		}
		hi, err := boundValue(n.hi, st)
		if err != nil {
			return err
		}
		if lo < 0 || hi > int64(len(a)) || lo > hi {
			return fmt.Errorf("runs(%s(%d:%d)): the window is outside 0..%d", n.arr, lo, hi, len(a))
		}
		from.lo, from.hi = lo, hi
	}
	if n.rsA != nil && from == n.from {
		return nil
	}
	n.builds++
	var rs, rk, rq []int64
	// heads adds the runs of a window lo:hi, each where it starts.
	heads := func(lo, hi int64) {
		for p := lo; p < hi; p = runEnd(a, p, hi) {
			rs, rk = append(rs, p), append(rk, a[p])
		}
	}
	if n.parent == nil {
		heads(from.lo, from.hi)
		rs = append(rs, from.hi)
	} else {
		rq = make([]int64, len(ps))
		for r := 0; r+1 < len(ps); r++ {
			rq[r] = int64(len(rk))
			heads(ps[r], ps[r+1])
		}
		if len(ps) > 0 {
			rq[len(ps)-1] = int64(len(rk))
			rs = append(rs, ps[len(ps)-1])
		}
	}
	if rs == nil {
		rs = []int64{0}
	}
	n.rsA, n.rkA, n.rqA, n.rnS = storage.IntArray(rs), storage.IntArray(rk), storage.IntArray(rq), storage.IntScalar(int64(len(rk)))
	n.from = from
	return nil
}

// bind points n's cells at the layout find found.
func (n *runNode) bind() error {
	for _, b := range []struct {
		cl  *cell
		obj storage.Object
	}{{n.rs, n.rsA}, {n.rk, n.rkA}, {n.rq, n.rqA}, {n.rn, n.rnS}} {
		if err := b.cl.bind(b.obj); err != nil {
			return err
		}
	}
	return nil
}
