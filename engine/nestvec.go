package engine

import (
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/storel/storel/ir"
)

// The vectorized body of a leaf loop: a typed expression of factor
// accessors evaluated over a batch of consecutive positions at a time,
// each node one tight loop over the batch (or a scalar, or an affine
// function of the position that is never materialized), then added into
// the sink in the loop's order. Guards are discharged for a whole entry
// into the loop by interval facts (an index array's min and max, cached
// with the array when it was built; the loop's window) or tested per
// batch; a batch that fails a guard, or reads outside an array, runs
// through the closure body instead, which gives the interpreter's result
// and errors.

// vbatch is the number of positions evaluated together.
const vbatch = 256

type vop uint8

const (
	vInv    vop = iota // an invariant computed at loop entry (cannot fail)
	vLane              // the loop's position (range: its key)
	vVal               // the loop's value: the iterated array at the position
	vLetRef            // a vector let's value
	vRead              // array(index)
	vToReal
	vNeg
	vAdd
	vSub
	vMul
	vDictRead // a let-bound dictionary at an index (nesttemp.go)
	vDictKey  // an itDict loop's key at the position
	vDictVal  // an itDict loop's value at the position
	vRowLet   // rows as lanes: a let of the loop's body, read from its step's per-row values
	vIn       // the lanes' values given to the batch (vstate.in): an inner sum's per row
	// Division, comparisons and if (nestops.go): after vIn, so that
	// nd.op > vIn sends a node there.
	vDiv
	vMod
	vCmp // int 1 or 0: a cmp b
	vAnd
	vOr
	vNot
	vIf  // a where c, else b
	vDot // a sum over a range of a product of affine reads (rangedot.go)
)

// vnode is a node of a vectorized expression.
type vnode struct {
	op   vop
	real bool
	id   int
	a, b *vnode
	c    *vnode // vIf: the condition
	cmp  ir.Op  // vCmp: the comparison
	cl   *cell
	fi   intFn
	ff   realFn
	src  dictFn // vDictRead: the dictionary read
	text string
	fv   map[string]bool // vInv: its free variables
	row  bool            // vInv: depends on the enclosing loop's row (nestflat.go)
	// konst (vInv): reads no variable, so one value for the whole run
	// of the kernel (globals are bound before it starts): computed once
	// per frame where its vstate is made, not per batch or short call.
	konst bool
	step  int   // vRowLet: the position-space step whose values it reads
	dot   *vdot // vDot
}

// vguard is a comparison of two int vectors that must hold in every lane.
type vguard struct {
	op   ir.Op
	a, b *vnode
	text string
	// run: a and b read only values of the whole run (runBounded), so
	// the facts decide the guard once per run, in vstate.ruled.
	run bool
	// perLane: the guard reads an enclosing loop's row in position
	// space, so loop-entry facts never discharge it.
	perLane bool
}

// vloop is the vectorized body of a loop.
type vloop struct {
	id       int
	nodes    int
	lets     []*vnode
	guards   []*vguard
	key      *vnode // builder sink: the key of each lane
	key2     *vnode // and, into a two-level result, the key in key's row
	val      *vnode
	fallback bodyFn
	// filter: the guards are the whole body's test (if c then body,
	// before any let), so a lane that fails them adds nothing and the
	// rest of the batch still runs vectorized (maskedBatch).
	filter   bool
	all      []*vnode
	rowNodes []*vnode // invariants computed per row in position space
	invs     []*vnode // the invariants, computed once per short call (lane.go)
	facts    int      // range-dot factors decided once per run (vstate.dotIn)
	dot      *segDot  // position space: the rows' sums run as one primitive
	scatter  *segScatter
}

// vval is a node's value for one batch.
type vval struct {
	scalar       bool
	aff          bool // int: base + stride*lane
	rows         bool // int: iv holds a value per row of the batch (rowBase), not per lane
	i            int64
	f            float64
	base, stride int64
	iv           []int64
	fv           []float64
}

// vstate is one frame's working memory for a vloop.
type vstate struct {
	dicts []dict // the dictionaries of dictionary nodes, per short call (nesttemp.go)
	vals  []vval
	ib    [][]int64
	fb    [][]float64
	skip  []bool // guards discharged for the current entry
	// Position space (nestflat.go): rows are the row starts (and end)
	// of the block, row0 the row of the batch's first lane.
	rows   []int64
	row0   int
	rowIdx int
	r0     int64
	fl     *flatState
	ranged bool // the lanes are keys rlo + q - rows[r] of a range loop
	rlo    int64
	rlos   []int64 // or rlos[r] + q - rows[r]: bounds per row
	// keyed: the lanes go to their rows' rows (flatPlan.keyed), row r's
	// at key keysOf[r].
	keyed  *nstmt
	keysOf []int64
	rowF   [][]float64
	rowI   [][]int64
	in     []float64 // vIn's lanes for the batch
	inI    []int64   // or an int sum's
	pass   []bool    // maskedBatch: the lanes that pass the guards
	held   []bool    // maskedBatch: skip as it was before the stretches
	// One lane's node values (lane.go), by node id.
	lf []float64
	li []int64
	// A built row's keys and values copied for a scatter (dictrows.go).
	rowKeys []int64
	rowVals []float64
	rowInts []int64
	// one holds a range dot's factors that are one value for every k.
	one []float64
	// units: a scatter's factor 1 per row, where its value is x(p) alone.
	units []float64
	// dotIn: per range-dot factor whose reads the facts bound for the
	// whole run (vdotFactor.run), 0 not yet decided, 1 the reads stay
	// inside its array, -1 the facts do not show it.
	dotIn []int8
	// ruled: per guard decided once per run (vguard.run), 0 not yet
	// decided, 1 discharged, -1 tested.
	ruled []int8
	// live: made or renewed for the run under way (retire).
	live bool
}

func (fr *frame) vstate(v *vloop) *vstate {
	for len(fr.vst) <= v.id {
		fr.vst = append(fr.vst, nil)
	}
	s := fr.vst[v.id]
	if s == nil {
		s = &vstate{vals: make([]vval, v.nodes), ib: make([][]int64, v.nodes), fb: make([][]float64, v.nodes),
			skip: make([]bool, len(v.guards)), rowF: make([][]float64, v.nodes), rowI: make([][]int64, v.nodes),
			lf: make([]float64, v.nodes), li: make([]int64, v.nodes), dotIn: make([]int8, v.facts),
			ruled: make([]int8, len(v.guards))}
		fr.vst[v.id] = s
	}
	if !s.live {
		s.live = true
		for _, nd := range v.all {
			if nd.op == vInv && nd.konst {
				s.setInv(fr, nd)
				s.vals[nd.id] = vval{scalar: true, i: s.li[nd.id], f: s.lf[nd.id]}
			}
		}
	}
	return s
}

// retire readies s for another run: it keeps the batch buffers and
// drops the rest, values and decisions of the run that ended (or failed
// anywhere).
func (s *vstate) retire() {
	clear(s.vals)
	clear(s.skip)
	clear(s.lf)
	clear(s.li)
	clear(s.dotIn)
	clear(s.ruled)
	clear(s.dicts)
	*s = vstate{vals: s.vals, skip: s.skip, lf: s.lf, li: s.li, dotIn: s.dotIn, ruled: s.ruled, dicts: s.dicts,
		ib: keptEach(s.ib), fb: keptEach(s.fb), rowF: keptEach(s.rowF), rowI: keptEach(s.rowI),
		pass: s.pass, held: s.held[:0], one: s.one, units: s.units,
		rowKeys: kept(s.rowKeys), rowVals: kept(s.rowVals), rowInts: kept(s.rowInts)}
}

// vctx is the state of vectorizing one loop's body.
type vctx struct {
	c     *compiler
	nl    *nloop
	loopK string
	loopV string
	lets  map[string]*vnode
	v     *vloop
	depth int    // scope depth outside the loop's variables
	in    string // the variable read as vIn, or ""
	// rowLets are lets of nl's body read with rows as lanes (vRowLet).
	rowLets map[string]bool
	// inline: lets of a range dot read once, built where they are read
	// (onceRead).
	inline map[string]*ir.Expr
}

type noVec struct{}

// vectorize builds the vectorized body of loop nl, or returns nil when
// the body has an inner loop or a node the batches cannot evaluate.
func (c *compiler) vectorize(nl *nloop, body *ir.Expr, lb loopBody) (v *vloop) {
	// An inner sum over a range runs as a range dot per lane (rangedot.go),
	// unless its bounds change with a range's key: those rows run in
	// position space (nestflat.go).
	if containsLoop(body) && !onlyRangeSums(body, nl) {
		return nil
	}
	n0 := len(c.nests)
	fallback := c.bodyOf(body, lb)
	depth := len(c.scope)
	// A range dot's loop runs only in the fallback (or is lowered again
	// where the body is not vectorized).
	defer func() { c.nests = c.nests[:n0] }()
	lets, guards := len(nl.info.lets), len(nl.info.guards)
	if c.try(isNoVec, func() { v = c.vectorizeBody(nl, body, lb, fallback, depth) }) != nil {
		nl.info.lets, nl.info.guards = nl.info.lets[:lets], nl.info.guards[:guards]
		return nil
	}
	return v
}

func (c *compiler) vectorizeBody(nl *nloop, body *ir.Expr, lb loopBody, fallback bodyFn, depth int) *vloop {
	x := &vctx{c: c, nl: nl, loopK: nl.e.Vars[0], loopV: nl.e.Vars[1], lets: map[string]*vnode{},
		v: &vloop{fallback: fallback}, depth: depth - 2, inline: map[string]*ir.Expr{}}
	bound := 0
	// lets binds the scalar lets at the head of e and returns their body.
	lets := func(e *ir.Expr) *ir.Expr {
		for ; e.Op == ir.OpLet && c.typeOf(e.Args[0]).Depth == 0; e = e.Args[1] {
			if e.Args[0].Op == ir.OpSum && onceRead(e) {
				x.inline[e.Vars[0]] = e.Args[0]
				c.declare(e.Vars[0], c.typeOf(e.Args[0]))
				bound++
				nl.info.lets = append(nl.info.lets, letText(e, "per batch, where it is read"))
				continue
			}
			n := x.expr(e.Args[0])
			x.v.lets = append(x.v.lets, n)
			x.lets[e.Vars[0]] = n
			c.declare(e.Vars[0], c.typeOf(e.Args[0]))
			bound++
			nl.info.lets = append(nl.info.lets, letText(e, "per batch"))
		}
		return e
	}
	e := lets(body)
	whole, letFirst := 0, false
	for e.Op == ir.OpIf && len(e.Args) == 2 {
		x.guard(e.Args[0])
		whole = len(x.v.guards)
		letFirst = letFirst || bound > 0
		e = lets(e.Args[1])
	}
	switch {
	case lb.spec != nil:
		if e.Op != ir.OpSingleton {
			panic(noVec{})
		}
		x.v.key = x.intExpr(e.Args[0])
		v := e.Args[1]
		if lb.spec.depth == 2 {
			v = lets(v) // SDDMM over COO's dot, between the two keys
		}
		switch {
		case lb.spec.depth == 1:
			x.v.val = x.expr(v)
		case lb.spec.depth == 2 && v.Op == ir.OpSingleton:
			// { k -> { k2 -> value } }: a scalar level below a row.
			x.v.key2 = x.intExpr(v.Args[0])
			x.v.val = x.expr(v.Args[1])
		default:
			panic(noVec{})
		}
		if lb.spec.real && !x.v.val.real {
			x.v.val = x.node(&vnode{op: vToReal, real: true, a: x.v.val})
		}
		if !lb.spec.real && x.v.val.real {
			panic(noVec{})
		}
	default:
		if c.typeOf(e).Depth != 0 {
			panic(noVec{})
		}
		x.v.val = x.expr(e)
		if lb.accF >= 0 && !x.v.val.real {
			x.v.val = x.node(&vnode{op: vToReal, real: true, a: x.v.val})
		}
		if lb.accF < 0 && x.v.val.real {
			panic(noVec{})
		}
	}
	c.unbind(bound)
	x.v.filter = whole > 0 && whole == len(x.v.guards) && !letFirst
	c.nvec++
	x.v.id = c.nvec - 1
	for _, n := range x.v.all {
		if n.op == vInv {
			x.v.invs = append(x.v.invs, n)
		}
	}
	for _, g := range x.v.guards {
		nl.info.guards = append(nl.info.guards, g.text)
	}
	return x.v
}

// letText is let e as explain shows it, how it runs in parentheses.
func letText(e *ir.Expr, how string) string {
	return e.Vars[0] + " = " + strings.Join(strings.Fields(ir.Format(e.Args[0])), " ") + " (" + how + ")"
}

// onceRead reports whether let e's variable is read once in its body,
// where the let's value means the same (no binder on the way rebinds the
// variable or what the value reads): the value can be built where it is
// read. A batch that fails runs whole through the closures, so where
// the value is computed does not change what a batch gives.
func onceRead(e *ir.Expr) bool {
	name, free := e.Vars[0], ir.FreeVars(e.Args[0])
	reads, ok := 0, true
	ir.Walk(e.Args[1], func(n *ir.Expr) bool {
		if n.Op == ir.OpVar && n.Name == name {
			reads++
		}
		for _, v := range n.Vars {
			if v == name || free[v] {
				ok = false
			}
		}
		return ok
	})
	return ok && reads == 1
}

func containsLoop(e *ir.Expr) bool {
	found := false
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Op == ir.OpSum || n.Op == ir.OpMerge {
			found = true
		}
		return !found
	})
	return found
}

func (x *vctx) node(n *vnode) *vnode {
	n.id = x.v.nodes
	x.v.nodes++
	x.v.all = append(x.v.all, n)
	return n
}

// uses reports whether e reads the loop's variables or a vector let.
func (x *vctx) uses(e *ir.Expr) bool {
	fv := ir.FreeVars(e)
	if fv[x.loopK] || fv[x.loopV] || (x.in != "" && fv[x.in]) {
		return true
	}
	for n := range x.rowLets {
		if fv[n] {
			return true
		}
	}
	for n := range x.lets {
		if fv[n] {
			return true
		}
	}
	for n := range x.inline {
		if fv[n] {
			return true
		}
	}
	return false
}

// safe reports whether e cannot fail: constants, variables, scalars and
// + - * of them. Only those are hoisted to the loop's entry.
func safe(e *ir.Expr) bool {
	ok := true
	ir.Walk(e, func(n *ir.Expr) bool {
		switch n.Op {
		case ir.OpConst, ir.OpVar, ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpNeg, ir.OpIf, ir.OpNot, ir.OpAnd, ir.OpOr,
			ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		case ir.OpDiv, ir.OpMod:
			ok = cannotFail(n)
		case ir.OpGlobal:
			if n.Type.Depth != 0 {
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return ok
}

func (x *vctx) intExpr(e *ir.Expr) *vnode {
	n := x.expr(e)
	if n.real {
		panic(noVec{})
	}
	return n
}

// expr builds the node of scalar e, converted to real where the checker
// typed it real.
func (x *vctx) expr(e *ir.Expr) *vnode {
	t := x.c.typeOf(e)
	if t.Depth != 0 || (t.Base != ir.Int && t.Base != ir.Real) {
		panic(noVec{})
	}
	n := x.build(e)
	if t.Base == ir.Real && !n.real {
		n = x.node(&vnode{op: vToReal, real: true, a: n})
	}
	return n
}

func (x *vctx) build(e *ir.Expr) *vnode {
	if !x.uses(e) && safe(e) {
		cx := x.c.expr(e)
		n := &vnode{op: vInv, real: cx.t.Base == ir.Real, text: ir.Format(e), fv: ir.FreeVars(e)}
		n.konst = len(n.fv) == 0
		if n.real {
			n.ff = cx.f
		} else {
			n.fi = cx.i
		}
		return x.node(n)
	}
	switch e.Op {
	case ir.OpVar:
		if e.Name == x.in || x.rowLets[e.Name] {
			b, _ := x.c.lookupVar(e.Name)
			op := vIn
			if e.Name != x.in {
				op = vRowLet
			}
			return x.node(&vnode{op: op, real: b.t.Base == ir.Real, text: e.Name, step: -1})
		}
		if n, ok := x.lets[e.Name]; ok {
			return x.node(&vnode{op: vLetRef, real: n.real, a: n})
		}
		if v, ok := x.inline[e.Name]; ok {
			return x.expr(v)
		}
		if x.nl.kind == itDict {
			if n := x.dictVar(e); n != nil {
				return n
			}
		}
		if e.Name == x.loopK && e.Name != x.loopV {
			return x.node(&vnode{op: vLane, text: e.Name})
		}
		if e.Name == x.loopV {
			if x.nl.kind == itRange {
				return x.node(&vnode{op: vLane, text: e.Name})
			}
			return x.node(&vnode{op: vVal, real: x.nl.vreal, cl: x.nl.arr, text: e.Name})
		}
	case ir.OpNeg:
		a := x.expr(e.Args[0])
		return x.node(&vnode{op: vNeg, real: a.real, a: a})
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		a, b := x.expr(e.Args[0]), x.expr(e.Args[1])
		op := map[ir.Op]vop{ir.OpAdd: vAdd, ir.OpSub: vSub, ir.OpMul: vMul}[e.Op]
		if a.real != b.real {
			if !a.real {
				a = x.node(&vnode{op: vToReal, real: true, a: a})
			} else {
				b = x.node(&vnode{op: vToReal, real: true, a: b})
			}
		}
		if op == vMul && a.real {
			// a * sum: the dot (built here, read nowhere else)
			// multiplies its lanes as it stores them.
			if a.op == vDot {
				a, b = b, a
			}
			if b.op == vDot && b.dot.by == nil {
				b.dot.by = a
				return b
			}
		}
		return x.node(&vnode{op: op, real: a.real, a: a, b: b})
	case ir.OpLookup:
		g := e.Args[0]
		if g.Op != ir.OpGlobal {
			if n := x.dictRead(e); n != nil {
				return n
			}
			break
		}
		cl := x.c.cell(g)
		if cl.info.Kind != ir.ObjArray {
			break
		}
		ix := x.intExpr(e.Args[1])
		n := x.node(&vnode{op: vRead, real: cl.info.Elem == ir.Real, cl: cl, a: ix, text: ir.Format(e)})
		return n
	case ir.OpIf:
		if len(e.Args) == 3 {
			return x.choose(e)
		}
		if len(e.Args) != 2 {
			break
		}
		x.guard(e.Args[0])
		return x.expr(e.Args[1])
	case ir.OpDiv, ir.OpMod:
		return x.divide(e)
	case ir.OpSum:
		return x.rangeDot(e)
	}
	panic(noVec{})
}

// guard adds the conjuncts of cond as per-lane comparisons.
func (x *vctx) guard(cond *ir.Expr) {
	switch cond.Op {
	case ir.OpAnd:
		x.guard(cond.Args[0])
		x.guard(cond.Args[1])
		return
	case ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpEq, ir.OpNe:
		a, b := x.intExpr(cond.Args[0]), x.intExpr(cond.Args[1])
		g := &vguard{op: cond.Op, a: a, b: b, run: runBounded(a) && runBounded(b)}
		g.text = ir.Format(cond) + ": " + proofText(a, b, "batch")
		x.v.guards = append(x.v.guards, g)
		return
	}
	panic(noVec{})
}

// proofText says how a comparison is discharged.
func proofText(a, b *vnode, unit string) string {
	var facts []string
	for _, n := range []*vnode{a, b} {
		facts = append(facts, intervalSource(n)...)
	}
	if len(facts) == 0 || slices.Contains(facts, "?") {
		return "tested per " + unit
	}
	return dischargedWhen(runBounded(a) && runBounded(b)) + " by interval facts (" + strings.Join(facts, ", ") + "), else tested per " + unit
}

// dischargedWhen says when facts are taken: once per run where they read
// only values of the whole run, else at every entry into the loop.
func dischargedWhen(run bool) string {
	if run {
		return "discharged once per run"
	}
	return "discharged per loop entry"
}

func intervalSource(n *vnode) []string {
	switch n.op {
	case vVal:
		return []string{"the min/max of " + n.cl.name}
	case vRead:
		if !n.real {
			return []string{"the min/max of " + n.cl.name}
		}
	case vLane:
		return []string{"the loop's window"}
	case vDictKey:
		return []string{"the built dictionary's first and last keys"}
	case vInv:
		return nil
	case vAdd, vSub, vMul:
		return append(intervalSource(n.a), intervalSource(n.b)...)
	}
	return []string{"?"}
}

// interval bounds an int node over positions lo..hi-1 at loop entry.
func (n *vnode) interval(fr *frame, lo, hi int64) (int64, int64, bool) {
	switch n.op {
	case vInv:
		v := n.fi(fr)
		return v, v, true
	case vLane:
		return lo, hi - 1, true
	case vDictKey:
		return n.keyInterval(fr, lo, hi)
	case vVal, vRead:
		// A read anywhere in an int array (a read outside it fails on
		// its own) lies within the array's values.
		if n.real || n.cl.imax < n.cl.imin {
			return 0, 0, false
		}
		return n.cl.imin, n.cl.imax, true
	case vAdd, vSub, vMul:
		a0, a1, ok1 := n.a.interval(fr, lo, hi)
		b0, b1, ok2 := n.b.interval(fr, lo, hi)
		if !ok1 || !ok2 || !small(a0) || !small(a1) || !small(b0) || !small(b1) {
			return 0, 0, false
		}
		switch n.op {
		case vAdd:
			return a0 + b0, a1 + b1, true
		case vSub:
			return a0 - b1, a1 - b0, true
		}
		p := [4]int64{a0 * b0, a0 * b1, a1 * b0, a1 * b1}
		return min(p[0], p[1], p[2], p[3]), max(p[0], p[1], p[2], p[3]), true
	}
	return 0, 0, false
}

// small keeps interval arithmetic clear of overflow.
func small(v int64) bool { return v > -1<<30 && v < 1<<30 }

// proven reports whether op holds for every pair of values in [a0,a1]
// and [b0,b1].
func proven(op ir.Op, a0, a1, b0, b1 int64) bool {
	switch op {
	case ir.OpLt, ir.OpLe:
		return cmpInt(op, a1, b0)
	case ir.OpGt, ir.OpGe:
		return cmpInt(op, a0, b1)
	case ir.OpEq:
		return a0 == a1 && b0 == b1 && a0 == b0
	case ir.OpNe:
		return a1 < b0 || b1 < a0
	}
	return false
}

// run executes positions lo..hi-1 of nl in batches.
func (v *vloop) run(fr *frame, nl *nloop, lo, hi int64, b *builder) {
	s := fr.vstate(v)
	v.decide(fr, s, lo, hi)
	if fr.err != nil {
		return
	}
	if b != nil && v.key != nil && v.key2 == nil && v.key.op == vVal && b.spec.dense && b.spec.real {
		b.holdKeysOf(v.key.cl)
	}
	if hi-lo <= shortRun {
		v.runLanes(fr, s, nl, lo, hi, b)
		return
	}
	for p0 := lo; p0 < hi; p0 += vbatch {
		n := int(min(hi-p0, vbatch))
		if v.maskedBatch(fr, s, nl, p0, n, b) || v.batch(fr, s, nl, p0, n, b) {
			continue
		}
		v.lanes(fr, nl, p0, p0+int64(n), b)
		if fr.err != nil {
			return
		}
	}
}

// lanes runs positions lo..hi-1 through the closure body, which gives
// the interpreter's result and errors.
func (v *vloop) lanes(fr *frame, nl *nloop, lo, hi int64, b *builder) {
	nestSaw("fallback")
	for p := lo; p < hi; p++ {
		nl.setVars(fr, p)
		v.fallback(fr, b)
		if fr.err != nil {
			return
		}
	}
}

// maskedBatch runs a batch of a filter loop whose guards fail in some
// lanes (an ELL row's padding): it tests the guards in every lane, skips
// the lanes that fail them (their body, which the interpreter does not
// evaluate, adds nothing) and runs each stretch of passing lanes as a
// batch of its own, or through the closure body when that fails. It
// reports false, having run nothing, when the loop is not a filter or a
// guard cannot be tested vectorized.
func (v *vloop) maskedBatch(fr *frame, s *vstate, nl *nloop, p0 int64, n int, b *builder) bool {
	if !v.filter || s.rows != nil || s.ranged {
		return false
	}
	pass, ok := v.passing(fr, s, p0, n)
	if !ok {
		return false
	}
	nestSaw("masked")
	// The stretches pass every guard: their batches need not test them.
	skip := append(s.held[:0], s.skip...)
	s.held = skip
	for i := range s.skip {
		s.skip[i] = true
	}
	defer copy(s.skip, skip)
	for l := 0; l < n; {
		if !pass[l] {
			l++
			continue
		}
		e := l + 1
		for e < n && pass[e] {
			e++
		}
		if !v.batch(fr, s, nl, p0+int64(l), e-l, b) {
			v.lanes(fr, nl, p0+int64(l), p0+int64(e), b)
			if fr.err != nil {
				return true
			}
		}
		l = e
	}
	return true
}

// passing tests the guards not discharged in every lane of a batch: the
// lanes that pass them all, or false when a guard cannot be evaluated.
func (v *vloop) passing(fr *frame, s *vstate, p0 int64, n int) ([]bool, bool) {
	if cap(s.pass) < n {
		s.pass = make([]bool, vbatch)
	}
	pass := s.pass[:n]
	for l := range pass {
		pass[l] = true
	}
	for i, g := range v.guards {
		if s.skip[i] {
			continue
		}
		a, ok1 := s.eval(fr, g.a, p0, n)
		c, ok2 := s.eval(fr, g.b, p0, n)
		if !ok1 || !ok2 {
			return nil, false
		}
		holdIn(g.op, a, c, pass)
	}
	return pass, true
}

// decide records which guards the facts discharge for positions
// lo..hi-1.
func (v *vloop) decide(fr *frame, s *vstate, lo, hi int64) {
	for i, g := range v.guards {
		if g.run && s.ruled[i] != 0 {
			s.skip[i] = s.ruled[i] > 0
			continue
		}
		a0, a1, ok1 := g.a.interval(fr, lo, hi)
		b0, b1, ok2 := g.b.interval(fr, lo, hi)
		s.skip[i] = !g.perLane && ok1 && ok2 && proven(g.op, a0, a1, b0, b1)
		if g.run {
			s.ruled[i] = -1
			if s.skip[i] {
				s.ruled[i] = 1
			}
		}
		if s.skip[i] {
			nestSaw("discharged")
		}
	}
}

// batch evaluates and sinks positions p0..p0+n-1, or reports false
// (nothing added) when a guard fails in a lane or a read leaves its array.
func (v *vloop) batch(fr *frame, s *vstate, nl *nloop, p0 int64, n int, b *builder) bool {
	if !v.check(fr, s, p0, n) {
		return false
	}
	if v.key != nil && v.key2 == nil && s.keyed == nil && b.spec.real && b.spec.dense && b.ws == nil {
		if done, ok := v.scatterProduct(fr, s, p0, n, b); done {
			return ok
		}
	}
	val, ok := s.eval(fr, v.val, p0, n)
	if !ok {
		return false
	}
	return v.sink(fr, s, nl, val, p0, n, b)
}

// eval computes the lets, checks the guards and computes the value of a
// batch.
func (v *vloop) eval(fr *frame, s *vstate, p0 int64, n int) (*vval, bool) {
	if !v.check(fr, s, p0, n) {
		return nil, false
	}
	return s.eval(fr, v.val, p0, n)
}

// check computes the lets and tests the guards of a batch.
func (v *vloop) check(fr *frame, s *vstate, p0 int64, n int) bool {
	for _, l := range v.lets {
		_, ok := s.eval(fr, l, p0, n)
		if !ok {
			return false
		}
	}
	for i, g := range v.guards {
		if s.skip[i] {
			continue
		}
		a, ok1 := s.eval(fr, g.a, p0, n)
		c, ok2 := s.eval(fr, g.b, p0, n)
		if !ok1 || !ok2 || !allHold(g.op, a, c, n) {
			return false
		}
	}
	return true
}

// gatherProduct splits a real product with a factor read through an
// index vector, a * y(ix), so that the read is fused into the product's
// loop (or its sum's): the operands, or ok false.
func (s *vstate) gatherProduct(fr *frame, nd *vnode, p0 int64, n int) (av, src []float64, idx []int64, ok bool) {
	return s.gatherProductIn(fr, nd, p0, n, nil)
}

// gatherProductIn is gatherProduct whose index is checked in the lanes
// that pass only (all when pass is nil): the others are not read.
func (s *vstate) gatherProductIn(fr *frame, nd *vnode, p0 int64, n int, pass []bool) (av, src []float64, idx []int64, ok bool) {
	if nd.op != vMul || !nd.real {
		return nil, nil, nil, false
	}
	// The gathered factor: a real array, or a dense real vector the plan
	// built (its keys past the slice, absent or spilled, fail the check
	// below and go through dictRead).
	gathered := func(g *vnode) bool { return (g.op == vRead || g.op == vDictRead) && g.real }
	a, g := nd.a, nd.b
	if !gathered(g) {
		a, g = g, a
	}
	if !gathered(g) || g.a.op == vLane {
		return nil, nil, nil, false
	}
	if g.op == vRead {
		src = g.cl.reals
	} else if dl, ok := g.src(fr).(*denseLeaf); ok && dl.real {
		src = dl.reals
	} else {
		return nil, nil, nil, false
	}
	x, ok1 := s.eval(fr, a, p0, n)
	ix, ok2 := s.eval(fr, g.a, p0, n)
	if !ok1 || !ok2 || x.scalar || ix.scalar || ix.aff {
		return nil, nil, nil, false
	}
	idx = ix.iv[:n]
	if lo, hi, ok := g.a.interval(fr, p0, p0+int64(n)); ok && lo >= 0 && hi < int64(len(src)) {
		// The index array's range fits src: no lane need be checked.
		nestSaw("gather fits")
		return x.fv[:n], src, idx, true
	}
	for l, k := range idx {
		if uint64(k) >= uint64(len(src)) && (pass == nil || pass[l]) {
			return nil, nil, nil, false
		}
	}
	return x.fv[:n], src, idx, true
}

// sink adds a batch's values into the loop's sink.
func (v *vloop) sink(fr *frame, s *vstate, nl *nloop, val *vval, p0 int64, n int, b *builder) bool {
	if v.key == nil {
		if nl.sink.accF >= 0 {
			acc := fr.f[nl.sink.accF]
			if val.scalar {
				for range n {
					acc += val.f
				}
			} else {
				for _, x := range val.fv[:n] {
					acc += x
				}
			}
			fr.f[nl.sink.accF] = acc
			return true
		}
		acc := fr.i[nl.sink.accI]
		if val.scalar {
			acc += val.i * int64(n)
		} else {
			for _, x := range s.ints(v.val, val, n) {
				acc += x
			}
		}
		fr.i[nl.sink.accI] = acc
		return true
	}
	key, ok := s.eval(fr, v.key, p0, n)
	if !ok {
		return false
	}
	keys := s.ints(v.key, key, n)
	var keys2 []int64
	if v.key2 != nil {
		k2, ok := s.eval(fr, v.key2, p0, n)
		if !ok {
			return false
		}
		keys2 = s.ints(v.key2, k2, n)
	}
	switch {
	case s.keyed != nil && b.spec.kid.real:
		keyedRows(s, p0, keys, s.reals(v.val, val, n), b, addReals)
	case s.keyed != nil:
		keyedRows(s, p0, keys, s.ints(v.val, val, n), b, addInts)
	case b.spec.real:
		addByRows(b, keys, keys2, s.reals(v.val, val, n), addReals)
	default:
		addByRows(b, keys, keys2, s.ints(v.val, val, n), addInts)
	}
	return true
}

// keyedRows adds a batch's values vals at keys (aligned, lanes from p0
// of a block in position space) into the rows of b: each lane into the
// row at its row's key (s.keyed). Whole rows go in as a block where b
// appends rows in sequence (appendRows), written where they stay; the
// rest a run of lanes per row, as addByRows adds them.
func keyedRows[T int64 | float64](s *vstate, p0 int64, keys []int64, vals []T, b *builder, add func(*builder, []int64, []T)) {
	ends, rk, c := s.rows, s.keysOf, s.row0
	hi := p0 + int64(len(keys))
	if f, ok := any(vals).([]float64); ok {
		c = b.appendRows(ends, c, p0, hi, keys, nil, f, rk, nil)
	}
	for ; c+1 < len(ends) && ends[c] < hi; c++ {
		r0, r1 := max(ends[c], p0)-p0, min(ends[c+1], hi)-p0
		if r0 < r1 {
			addRow(b, rk[c], keys[r0:r1], vals[r0:r1], add)
		}
	}
}

// addRow adds vals at keys (aligned) into the row of b at key k.
func addRow[T int64 | float64](b *builder, k int64, keys []int64, vals []T, add func(*builder, []int64, []T)) {
	if !startCollect(b, k, keys, vals) && !appendKid(b, k, keys, vals) {
		add(b.child(k), keys, vals)
	}
}

// addByRows adds vals at keys into b with add, or, into a two-level
// result, at keys2 in the rows at keys: a run of equal outer keys goes to
// its row, found once.
func addByRows[T int64 | float64](b *builder, keys, keys2 []int64, vals []T, add func(*builder, []int64, []T)) {
	if keys2 == nil {
		add(b, keys, vals)
		return
	}
	for l := 0; l < len(keys); {
		if b.collects() && collect(b, keys[l:], keys2[l:], vals[l:]) {
			return
		}
		k, e := keys[l], l+1
		for e < len(keys) && keys[e] == k {
			e++
		}
		addRow(b, k, keys2[l:e], vals[l:e], add)
		l = e
	}
}

// addReals adds vals at keys (aligned) into the scalar level b, in order.
func addReals(b *builder, keys []int64, vals []float64) {
	if b.spec.dense && b.ws != nil && !b.app {
		scatterAdd(b, keys, vals, 1)
		return
	}
	if b.spec.dense && b.ws == nil {
		for len(keys) > 0 {
			q := scatterRuns(b.reals, keys, vals)
			if q == len(keys) {
				break
			}
			b.addReal(keys[q], vals[q])
			keys, vals = keys[q+1:], vals[q+1:]
		}
		return
	}
	if b.app {
		q := appendVals(b, &b.ws.realBlock, 0, keys, vals)
		keys, vals = keys[q:], vals[q:]
	}
	for l, k := range keys {
		b.addReal(k, vals[l])
	}
}

// addInts adds vals at keys (aligned) into the scalar level b, in order.
func addInts(b *builder, keys, vals []int64) {
	for l, k := range keys {
		b.addInt(k, vals[l])
	}
}

// scatterProduct sinks a batch whose value is a product with a gathered
// factor, a * y(ix), into a dense real row without materializing the
// products: done false when the value is not such a product; ok false
// (nothing added) when a read leaves its array. The guards were checked.
func (v *vloop) scatterProduct(fr *frame, s *vstate, p0 int64, n int, b *builder) (done, ok bool) {
	av, src, idx, ok := s.gatherProduct(fr, v.val, p0, n)
	if !ok {
		return false, false
	}
	key, ok := s.eval(fr, v.key, p0, n)
	if !ok {
		return true, false
	}
	nestSaw("gathered scatter")
	keys := s.ints(v.key, key, n)
	for len(keys) > 0 {
		q := scatterProductRuns(b.reals, keys, av, src, idx)
		if q == len(keys) {
			break
		}
		b.addReal(keys[q], float64(av[q]*src[idx[q]]))
		keys, av, idx = keys[q+1:], av[q+1:], idx[q+1:]
	}
	return true, true
}

// scatterRuns adds vals[l] into rs[keys[l]] in order, up to the first key
// outside rs, and returns how many it added. Where the keys come in runs
// (a COO row: the same key for many entries), a run is summed in a
// register from the entry's value and stored once: the same additions in
// the same order as a store per value, without each add waiting for the
// store before it. Keys that change at almost every entry (a COO's
// columns), for which looking for runs costs more than it saves
// (BenchmarkScatterRuns), take a store per value.
func scatterRuns(rs []float64, keys []int64, vals []float64) int {
	return scatterProductRuns(rs, keys, vals, nil, nil)
}

// scatterProductRuns is scatterRuns of the values av[l] * src[idx[l]]
// (av[l] when idx is nil); the caller has checked idx against src.
func scatterProductRuns(rs []float64, keys []int64, av, src []float64, idx []int64) int {
	av = av[:len(keys)]
	if idx != nil {
		idx = idx[:len(keys)]
	}
	// The test of idx is the same in every lane: the branch predictor
	// takes it for free next to the loads.
	at := func(l int) float64 {
		if idx == nil {
			return av[l]
		}
		return float64(av[l] * src[idx[l]])
	}
	if !inRuns(keys) {
		for l, k := range keys {
			if uint64(k) >= uint64(len(rs)) {
				return l
			}
			rs[k] += at(l)
		}
		return len(keys)
	}
	if idx != nil && len(keys) > 0 {
		return productRuns(rs, keys, av, src, idx)
	}
	for l := 0; l < len(keys); {
		k := keys[l]
		if uint64(k) >= uint64(len(rs)) {
			return l
		}
		acc := rs[k]
		for ; l < len(keys) && keys[l] == k; l++ {
			acc += at(l)
		}
		rs[k] = acc
	}
	return len(keys)
}

// productRuns is scatterProductRuns's runs of products in one pass: the
// run's sum stays in acc and is stored when the key changes, and the
// checked reads go unchecked, which keeps the loop to a few instructions
// per value (the loop with a compare of keys and a test of idx inside it
// ran at about half the speed of a row's dot).
func productRuns(rs []float64, keys []int64, av, src []float64, idx []int64) int {
	ap, sp, ip := unsafe.Pointer(unsafe.SliceData(av)), unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(idx))
	cur := keys[0]
	if uint64(cur) >= uint64(len(rs)) {
		return 0
	}
	acc := rs[cur]
	for l := range keys {
		if keys[l] != cur {
			rs[cur] = acc
			if cur = keys[l]; uint64(cur) >= uint64(len(rs)) {
				return l
			}
			acc = rs[cur]
		}
		acc += float64(at[float64](ap, int64(l)) * at[float64](sp, at[int64](ip, int64(l))))
	}
	rs[cur] = acc
	return len(keys)
}

// inRuns reports whether keys, judged by their first few, come in runs
// of equal keys: at least half of the first 16 repeat the one before.
func inRuns(keys []int64) bool {
	keys = keys[:min(len(keys), 17)]
	same := 0
	for l := 1; l < len(keys); l++ {
		if keys[l] == keys[l-1] {
			same++
		}
	}
	return 2*same >= len(keys)-1 && same > 0
}

// ints materializes an int value as n lanes.
func (s *vstate) ints(nd *vnode, r *vval, n int) []int64 {
	if r.iv != nil && !r.aff && !r.scalar {
		return r.iv[:n]
	}
	buf := s.ibuf(nd, n)
	switch {
	case r.scalar:
		for l := range buf {
			buf[l] = r.i
		}
	default:
		for l := range buf {
			buf[l] = r.base + r.stride*int64(l)
		}
	}
	return buf
}

// reals materializes a real value as n lanes.
func (s *vstate) reals(nd *vnode, r *vval, n int) []float64 {
	if !r.scalar {
		return r.fv[:n]
	}
	buf := s.fbuf(nd, n)
	for l := range buf {
		buf[l] = r.f
	}
	return buf
}

func (s *vstate) ibuf(nd *vnode, n int) []int64 {
	if cap(s.ib[nd.id]) < vbatch {
		s.ib[nd.id] = make([]int64, vbatch)
	}
	return s.ib[nd.id][:n]
}

func (s *vstate) fbuf(nd *vnode, n int) []float64 {
	if cap(s.fb[nd.id]) < vbatch {
		s.fb[nd.id] = make([]float64, vbatch)
	}
	return s.fb[nd.id][:n]
}

func allHold(op ir.Op, a, b *vval, n int) bool {
	if a.scalar && b.scalar {
		return cmpInt(op, a.i, b.i)
	}
	if (a.scalar || a.aff) && (b.scalar || b.aff) {
		// Both ends of a monotone difference decide every lane.
		at := func(r *vval, l int64) int64 {
			if r.scalar {
				return r.i
			}
			return r.base + r.stride*l
		}
		last := int64(n - 1)
		ok := cmpInt(op, at(a, 0), at(b, 0)) && cmpInt(op, at(a, last), at(b, last))
		if op != ir.OpEq && op != ir.OpNe {
			return ok
		}
	}
	for l := range n {
		x, y := laneInt(a, l), laneInt(b, l)
		if !cmpInt(op, x, y) {
			return false
		}
	}
	return true
}

// holdIn clears pass[l] for each lane l where a op b does not hold.
func holdIn(op ir.Op, a, b *vval, pass []bool) {
	vec := func(r *vval) bool { return !r.scalar && !r.aff && r.iv != nil }
	if a.scalar && vec(b) {
		a, b, op = b, a, flipCmp(op)
	}
	if vec(a) && b.scalar {
		if lo, hi, ok := laneBounds(op, b.i); ok {
			for l, y := range a.iv[:len(pass)] {
				pass[l] = pass[l] && lo <= y && y <= hi
			}
			return
		}
	}
	for l := range pass {
		if pass[l] && !cmpInt(op, laneInt(a, l), laneInt(b, l)) {
			pass[l] = false
		}
	}
}

// flipCmp returns the comparison that holds for b, a where op holds for a, b.
func flipCmp(op ir.Op) ir.Op {
	switch op {
	case ir.OpLt:
		return ir.OpGt
	case ir.OpLe:
		return ir.OpGe
	case ir.OpGt:
		return ir.OpLt
	case ir.OpGe:
		return ir.OpLe
	}
	return op
}

// laneBounds returns the values y with y op x as the interval [lo, hi].
func laneBounds(op ir.Op, x int64) (lo, hi int64, ok bool) {
	const minI, maxI = math.MinInt64, math.MaxInt64
	switch op {
	case ir.OpLt:
		return minI, x - 1, x != minI
	case ir.OpLe:
		return minI, x, true
	case ir.OpGt:
		return x + 1, maxI, x != maxI
	case ir.OpGe:
		return x, maxI, true
	case ir.OpEq:
		return x, x, true
	}
	return 0, 0, false
}

func laneInt(r *vval, l int) int64 {
	switch {
	case r.scalar:
		return r.i
	case r.aff:
		return r.base + r.stride*int64(l)
	}
	return r.iv[l]
}

// cmpInt applies comparison op to a and b (ints, or reals in if
// conditions: nestops.go).
func cmpInt[T int64 | float64](op ir.Op, a, b T) bool {
	switch op {
	case ir.OpLt:
		return a < b
	case ir.OpLe:
		return a <= b
	case ir.OpGt:
		return a > b
	case ir.OpGe:
		return a >= b
	case ir.OpEq:
		return a == b
	}
	return a != b
}

// eval computes node nd over positions p0..p0+n-1.
func (s *vstate) eval(fr *frame, nd *vnode, p0 int64, n int) (*vval, bool) {
	switch nd.op {
	case vInv:
		if nd.konst {
			return &s.vals[nd.id], true
		}
		if nd.row && s.rows != nil {
			if nd.real {
				buf := s.fbuf(nd, n)
				spread(buf, s.rowF[nd.id], s.rows, s.row0, p0)
				return s.put(nd, vval{fv: buf}), true
			}
			buf := s.ibuf(nd, n)
			spread(buf, s.rowI[nd.id], s.rows, s.row0, p0)
			return s.put(nd, vval{iv: buf}), true
		}
		if nd.real {
			return s.put(nd, vval{scalar: true, f: nd.ff(fr)}), true
		}
		return s.put(nd, vval{scalar: true, i: nd.fi(fr)}), true
	case vLane:
		if s.ranged {
			buf := s.ibuf(nd, n)
			r, p := s.row0, s.rows
			for l := range buf {
				q := p0 + int64(l)
				for p[r+1] <= q {
					r++
				}
				if s.rlos != nil {
					buf[l] = s.rlos[r] + q - p[r]
				} else {
					buf[l] = s.rlo + q - p[r]
				}
			}
			return s.put(nd, vval{iv: buf}), true
		}
		return s.put(nd, vval{aff: true, base: p0, stride: 1}), true
	case vVal:
		if nd.real {
			return s.put(nd, vval{fv: nd.cl.reals[p0 : p0+int64(n)]}), true
		}
		return s.put(nd, vval{iv: nd.cl.ints[p0 : p0+int64(n)]}), true
	case vLetRef:
		return &s.vals[nd.a.id], true
	case vIn:
		if !nd.real {
			return s.put(nd, vval{iv: s.inI[:n]}), true
		}
		return s.put(nd, vval{fv: s.in[:n]}), true
	case vRowLet:
		if s.fl == nil || nd.step < 0 {
			return nil, false
		}
		q := p0 - s.r0
		if nd.real {
			return s.put(nd, vval{fv: s.fl.vals[nd.step][q : q+int64(n)]}), true
		}
		return s.put(nd, vval{iv: s.fl.ivals[nd.step][q : q+int64(n)]}), true
	case vRead:
		ix, ok := s.eval(fr, nd.a, p0, n)
		if !ok {
			return nil, false
		}
		return s.read(nd, ix, n)
	case vDictKey, vDictVal:
		return s.dictEntries(fr, nd, p0, n), true
	case vDictRead:
		ix, ok := s.eval(fr, nd.a, p0, n)
		if !ok {
			return nil, false
		}
		return s.dictRead(fr, nd, ix, n)
	case vToReal:
		a, ok := s.eval(fr, nd.a, p0, n)
		if !ok {
			return nil, false
		}
		if a.scalar {
			return s.put(nd, vval{scalar: true, f: float64(a.i)}), true
		}
		buf := s.fbuf(nd, n)
		if a.aff {
			for l := range buf {
				buf[l] = float64(a.base + a.stride*int64(l))
			}
		} else {
			for l, x := range a.iv[:n] {
				buf[l] = float64(x)
			}
		}
		return s.put(nd, vval{fv: buf}), true
	case vNeg:
		a, ok := s.eval(fr, nd.a, p0, n)
		if !ok {
			return nil, false
		}
		switch {
		case a.scalar:
			return s.put(nd, vval{scalar: true, i: -a.i, f: -a.f}), true
		case a.aff:
			return s.put(nd, vval{aff: true, base: -a.base, stride: -a.stride}), true
		case nd.real:
			buf := s.fbuf(nd, n)
			for l, x := range a.fv[:n] {
				buf[l] = -x
			}
			return s.put(nd, vval{fv: buf}), true
		}
		buf := s.ibuf(nd, n)
		for l, x := range a.iv[:n] {
			buf[l] = -x
		}
		return s.put(nd, vval{iv: buf}), true
	}
	if nd.op > vIn {
		return s.evalOp(fr, nd, p0, n)
	}
	if av, src, idx, ok := s.gatherProduct(fr, nd, p0, n); ok {
		buf := s.fbuf(nd, n)
		for l, k := range idx {
			buf[l] = av[l] * src[k]
		}
		return s.put(nd, vval{fv: buf}), true
	}
	a, ok1 := s.eval(fr, nd.a, p0, n)
	b, ok2 := s.eval(fr, nd.b, p0, n)
	if !ok1 || !ok2 {
		return nil, false
	}
	if nd.real {
		return s.put(nd, s.realArith(nd, a, b, n)), true
	}
	return s.put(nd, s.intArith(nd, a, b, n)), true
}

// put stores node nd's value for the batch. Field by field, and a slice
// only where its array changes: a copy of the whole struct goes through
// the runtime's bulk write barrier while the collector marks (a large
// share of a short batch's time), and each pointer written (even nil
// over nil) through the compiler's inline one; a node's value is most
// often its own buffer again, or no slice again.
func (s *vstate) put(nd *vnode, v vval) *vval {
	p := &s.vals[nd.id]
	p.scalar, p.aff, p.i, p.f, p.base, p.stride = v.scalar, v.aff, v.i, v.f, v.base, v.stride
	setSlice(&p.iv, v.iv)
	setSlice(&p.fv, v.fv)
	return p
}

// setSlice sets *dst to src, writing no pointer when src is a slice of
// the same array that *dst's capacity covers.
func setSlice[T any](dst *[]T, src []T) {
	if unsafe.SliceData(*dst) == unsafe.SliceData(src) && cap(src) <= cap(*dst) {
		*dst = (*dst)[:len(src):cap(src)]
		return
	}
	*dst = src
}

func (s *vstate) realArith(nd *vnode, a, b *vval, n int) vval {
	if a.scalar && b.scalar {
		return vval{scalar: true, f: arithOp(nd.op, a.f, b.f)}
	}
	buf := s.fbuf(nd, n)
	var av, bv []float64
	if !a.scalar {
		av = a.fv
	}
	if !b.scalar {
		bv = b.fv
	}
	realOp(nd.op, buf, av, a.f, bv, b.f)
	return vval{fv: buf}
}

// realOp sets out to a op b (+ - or *) lane by lane; a nil operand is its
// scalar in every lane.
func realOp(op vop, out, a []float64, sa float64, b []float64, sb float64) {
	vecOp(op, out, a, sa, b, sb)
}

// vecOp is realOp for reals or ints: the operation chosen once, a
// straight loop per lane.
func vecOp[T int64 | float64](op vop, out, a []T, sa T, b []T, sb T) {
	switch {
	case a == nil:
		b = b[:len(out)]
		switch op {
		case vMul:
			for l := range out {
				out[l] = sa * b[l]
			}
		case vAdd:
			for l := range out {
				out[l] = sa + b[l]
			}
		default:
			for l := range out {
				out[l] = sa - b[l]
			}
		}
	case b == nil:
		a = a[:len(out)]
		switch op {
		case vMul:
			for l := range out {
				out[l] = a[l] * sb
			}
		case vAdd:
			for l := range out {
				out[l] = a[l] + sb
			}
		default:
			for l := range out {
				out[l] = a[l] - sb
			}
		}
	default:
		a, b = a[:len(out)], b[:len(out)]
		switch op {
		case vMul:
			for l := range out {
				out[l] = a[l] * b[l]
			}
		case vAdd:
			for l := range out {
				out[l] = a[l] + b[l]
			}
		default:
			for l := range out {
				out[l] = a[l] - b[l]
			}
		}
	}
}

// arithOp applies + - or * to two scalars.
func arithOp[T int64 | float64](op vop, a, b T) T {
	switch op {
	case vMul:
		return a * b
	case vAdd:
		return a + b
	}
	return a - b
}

func (s *vstate) intArith(nd *vnode, a, b *vval, n int) vval {
	switch {
	case a.scalar && b.scalar:
		return vval{scalar: true, i: arithOp(nd.op, a.i, b.i)}
	case (a.aff || a.scalar) && (b.aff || b.scalar) && nd.op != vMul:
		ab, as := a.i, int64(0)
		if a.aff {
			ab, as = a.base, a.stride
		}
		bb, bs := b.i, int64(0)
		if b.aff {
			bb, bs = b.base, b.stride
		}
		return vval{aff: true, base: arithOp(nd.op, ab, bb), stride: arithOp(nd.op, as, bs)}
	case a.aff && b.scalar:
		return vval{aff: true, base: a.base * b.i, stride: a.stride * b.i}
	case a.scalar && b.aff:
		return vval{aff: true, base: a.i * b.base, stride: a.i * b.stride}
	}
	buf := s.ibuf(nd, n)
	switch {
	case a.scalar && !b.aff:
		// A row's or an entry's offset plus the keys (j*L + l): no
		// materialized copy of the scalar.
		vecOp(nd.op, buf, nil, a.i, b.iv[:n], 0)
	case b.scalar && !a.aff:
		vecOp(nd.op, buf, a.iv[:n], 0, nil, b.i)
	default:
		vecOp(nd.op, buf, s.ints(nd.a, a, n), 0, s.ints(nd.b, b, n), 0)
	}
	return vval{iv: buf}
}

// read gathers array nd.cl at the lanes of ix; false when an index
// leaves the array (the batch then runs through the closures, which
// report the read).
func (s *vstate) read(nd *vnode, ix *vval, n int) (*vval, bool) {
	cl := nd.cl
	size := cl.n
	switch {
	case ix.scalar:
		if uint64(ix.i) >= uint64(size) {
			return nil, false
		}
		if nd.real {
			return s.put(nd, vval{scalar: true, f: cl.reals[ix.i]}), true
		}
		return s.put(nd, vval{scalar: true, i: cl.ints[ix.i]}), true
	case ix.aff:
		last := ix.base + ix.stride*int64(n-1)
		if uint64(ix.base) >= uint64(size) || uint64(last) >= uint64(size) {
			return nil, false
		}
		if ix.stride == 1 {
			if nd.real {
				return s.put(nd, vval{fv: cl.reals[ix.base : ix.base+int64(n)]}), true
			}
			return s.put(nd, vval{iv: cl.ints[ix.base : ix.base+int64(n)]}), true
		}
		if nd.real {
			buf := s.fbuf(nd, n)
			for l := range buf {
				buf[l] = cl.reals[ix.base+ix.stride*int64(l)]
			}
			return s.put(nd, vval{fv: buf}), true
		}
		buf := s.ibuf(nd, n)
		for l := range buf {
			buf[l] = cl.ints[ix.base+ix.stride*int64(l)]
		}
		return s.put(nd, vval{iv: buf}), true
	}
	idx := ix.iv[:n]
	if nd.real {
		buf := s.fbuf(nd, n)
		if !gatherChecked(buf, cl.reals, idx) {
			return nil, false
		}
		return s.put(nd, vval{fv: buf}), true
	}
	buf := s.ibuf(nd, n)
	if !gatherChecked(buf, cl.ints, idx) {
		return nil, false
	}
	return s.put(nd, vval{iv: buf}), true
}

// gatherChecked sets buf[l] = src[idx[l]], or reports false at an index outside
// src.
func gatherChecked[T int64 | float64](buf, src []T, idx []int64) bool {
	for l, k := range idx {
		if uint64(k) >= uint64(len(src)) {
			return false
		}
		buf[l] = src[k]
	}
	return true
}

// guardProof is a loop's statement guard that interval facts may
// discharge for a whole entry into the loop.
type guardProof struct {
	guards []*vguard
	slot   int // frame int slot: 1 while discharged
	// once: where every guard reads only values of the whole run
	// (vguard.run), the frame int slot that is 1 once slot holds the
	// run's decision; -1 where the facts depend on the entry.
	once int
}

// proveGuard returns the proof of cond over loop nl's variables, or nil
// when cond is not a conjunction of int comparisons.
func (c *compiler) proveGuard(nl *nloop, cond *ir.Expr) (p *guardProof) {
	x := &vctx{c: c, nl: nl, loopK: nl.e.Vars[0], loopV: nl.e.Vars[1], lets: map[string]*vnode{}, v: &vloop{}}
	if c.try(isNoVec, func() { x.guard(cond) }) != nil {
		return nil
	}
	p = &guardProof{guards: x.v.guards, slot: c.newSlot(ir.IntType), once: -1}
	if !slices.ContainsFunc(p.guards, func(g *vguard) bool { return !g.run }) {
		p.once = c.newSlot(ir.IntType)
	}
	return p
}

// decide records whether the facts discharge the guard for positions
// lo..hi-1.
func (p *guardProof) decide(fr *frame, lo, hi int64) {
	if p.once >= 0 {
		if fr.i[p.once] != 0 {
			return
		}
		fr.i[p.once] = 1
	}
	fr.i[p.slot] = 0
	for _, g := range p.guards {
		a0, a1, ok1 := g.a.interval(fr, lo, hi)
		b0, b1, ok2 := g.b.interval(fr, lo, hi)
		if !ok1 || !ok2 || !proven(g.op, a0, a1, b0, b1) {
			return
		}
	}
	fr.i[p.slot] = 1
	nestSaw("discharged")
}

func guardText(cond *ir.Expr, p *guardProof) string {
	if p == nil {
		return ir.Format(cond) + ": tested per iteration"
	}
	var facts []string
	for _, g := range p.guards {
		for _, f := range append(intervalSource(g.a), intervalSource(g.b)...) {
			if f == "?" {
				return ir.Format(cond) + ": tested per iteration"
			}
			if !slices.Contains(facts, f) {
				facts = append(facts, f)
			}
		}
	}
	return ir.Format(cond) + ": " + dischargedWhen(p.once >= 0) + " by interval facts (" + strings.Join(facts, ", ") + "), else tested per iteration"
}
