package engine

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/storel/storel/ir"
)

// A dense range lifted inward. A range loop j whose body is {j -> v}
// into a dense real row, where v holds loops whose windows do not read j
// (MTTKRP's rank between two compressed levels; any plan with a dense
// range above sparse ones), would enter those loops once per j, each
// entry costing more than the few entries it holds. Lifted, the inner
// loops run once for a run of j's lanes, every value that reads j is a
// vector of the lanes (a read at an index affine in j is a slice of the
// array, or a strided gather), accumulators are vectors, and each lane
// sees the same operations in the same order as the loop per j: the
// same bits. A run that fails (a read outside its array, a window out of
// order, any error) is dropped, nothing added, and the loop runs per j,
// which reports the interpreter's error.

// Measured (go test ./engine -run XXX -bench 'ShortLoops|NestShapes'
// -benchtime 10x, three rounds alternating builds without and with lanes,
// on the shared 2-core machine at a load average of 7-15: min of
// the rounds, ms; the loop is the Go loop of each benchmark):
//
//	plan                                    per j    lanes   loop
//	MTTKRP, the optimizer's (j above B's k)  248       73     35-153
//	MTTKRP, j innermost (a call per entry)   1283      577    36-129
//	SDDMM, rank 8 (a dot a call)             210       81     4-11
//
// On real data (storel run, 1 thread): MTTKRP rank 16, orghs 1400 to
// 142 ms and WordNet 4215 to 491, outputs identical byte for byte.

// liftLanes is the most lanes a run of the inner loops carries: a
// longer range runs the inner loops once per run of lanes.
const liftLanes = 256

// liftMin is the shortest range lifted: with fewer lanes the vector
// operations cost more than the entries of the loops per j.
const liftMin = 4

type lop uint8

const (
	lScalar lop = iota // a value that does not read j: a closure per entry
	lLane              // j itself, as a real
	lRead              // a real array at base + stride*j
	lLet               // a let's lanes
	lLetIn             // let x = v in a, inside a value
	lGuard             // if c then a, c reading j: it must hold in every lane
	lSum               // an inner sum: its accumulator's lanes
	lNeg
	lAdd
	lSub
	lMul
)

// lnode is a value over the lanes.
type lnode struct {
	op           lop
	id           int
	f            realFn   // lScalar
	cl           *cell    // lRead
	base, stride linearAt // lRead: the index
	a, b         *lnode
	let          int        // lLet
	sum          *lsum      // lSum
	step         *lstep     // lLetIn: the let, whose body is a
	tests        []laneTest // lGuard
	fs           [3]*lnode  // lMul: the factors as (a*b)*c; c nil for a*b
	expr         *ir.Expr
}

// laneTest is a comparison of two ints affine in j.
type laneTest struct {
	op     ir.Op
	a, b   linearAt // bases
	sa, sb linearAt // strides
}

// holds reports whether the test holds in every lane j0..j0+n-1. Each
// side is exact where its base and stride are small (it then equals the
// wrapped value the loop per j compares), and their difference is
// linear in j: its ends decide.
func (t *laneTest) holds(fr *frame, j0 int64, n int) bool {
	a, b, sa, sb := t.a.at(fr), t.b.at(fr), t.sa.at(fr), t.sb.at(fr)
	return fr.err == nil && affineHolds(t.op, a, sa, b, sb, j0, j0+int64(n))
}

// lsum is an inner loop of the lifted body.
type lsum struct {
	open   func(fr *frame) (int64, int64, bool)
	seg    *segBounds // open's bounds read in place (a CSF fiber), or nil
	arr    *cell      // itSegment, itArray: the array iterated; nil for a range
	ks, vs int
	vreal  bool
	body   *lstep
	// prod: the body is one product added into the accumulator, its
	// factors (lnode.fs) viewed once before the loop where vary is false
	// (they read neither the loop's variables nor anything bound in it).
	prod *lnode
	vary [3]bool
	at   bool      // every varying factor read as ats says
	ats  [3]lindex // t < 0: not such a read
	// fixed: every part of the ats' indices but the loop's own atom reads
	// only global scalars and slots bound outside the lifted loop, so a
	// run works them out once for all its calls of the loop (id: its
	// liftState.setups).
	fixed bool
	// global: fixed, reading no slot either: one set-up for the run.
	global bool
	id     int
	fib    *lfib
}

// lfib: an lsum whose body is an inner loop (in) whose body is a
// product of t (factor fi), a read at an index linear in the loop, its
// other parts globals, and factors all walked (in.at, in.global): t is
// the product's factor itself, or a let around the inner loop (let t =
// read in in). Each iteration's t is then a view, not lanes computed,
// and the inner loop's positions are walked with no call per iteration
// (runFibers).
type lfib struct {
	let  *lstep // the let of t, or nil
	read *lnode // t's read
	ix   lindex
	in   *lsum
	fi   int
	id   int // its fibWalk in the liftState
}

// fibWalk is a liftState's walk of an lfib's read of t, for lanes j0, n.
type fibWalk struct {
	walked, ok bool
	j0         int64
	n          int
	w          atWalk
	rd         segReader // the inner loop's bounds (lsum.seg), read inline
	// The views and the product's shape of the inner loop's walks as of
	// their set-up's ver (ver 0: none yet): a row's fibers call runFibers
	// once per row (WordNet's MTTKRP: 1.9 fibers, 3 entries a row), and
	// these stay as they are until the walks change.
	ver      uint64
	q        lprod
	xo, bo   int
	one      bool
	counting bool // a factor still counts toward its lane-major copy
	// atPos: the inner loop's bounds are read at the iteration's own
	// position (a CSF fiber's pos(p):pos(p+1)), so an iteration that the
	// walks take whole sets no variable: the walks read none.
	atPos bool
}

// lindex is the index of a read in an inner loop: base + stride*j where
// base is rest + term t, x (the loop's position, its key, or another
// int array read at its position: arr) its atom atom, and neither rest
// nor stride read x.
type lindex struct {
	key     bool
	arr     *cell
	t, atom int
	rest    linearAt
}

// keys returns the array whose entry at the position is x, or nil
// where x is the position.
func (ix *lindex) keys(l *lsum) []int64 {
	switch {
	case ix.key:
		return l.arr.ints
	case ix.arr != nil:
		return ix.arr.ints
	}
	return nil
}

// lstep is a statement of an inner loop's body, run once per iteration.
type lstep struct {
	cond  boolFn       // a guard that does not read j
	set   func(*frame) // a let that does not read j
	isLet bool         // a let of lanes: let, with val its value
	let   int
	sum   *lsum  // an inner loop adding into the same accumulator
	val   *lnode // the lanes added into the accumulator (or the let's)
	next  *lstep
}

// liftLoop is the lifted form of a range loop.
type liftLoop struct {
	// leaf: no inner loop; a run of lanes is added into the row in place
	// (nothing is added where it fails)
	leaf  bool
	tests []laneTest // guards reading j before the singleton
	steps []*lstep   // guards and lets before the singleton
	val   *lnode
	nodes int
	lets  int
	sums  int
	fibs  int
}

// liftState is a frame's memory for a lifted loop.
type liftState struct {
	out    []float64 // the lanes of the whole call
	buf    [][]float64
	lets   [][]float64
	lsc    []float64 // a let's value when it is one scalar for every lane
	lone   []bool
	prods  []lprod     // a product node's operands
	majors []laneMajor // a read's lane-major copy
	copies *runCopies  // the copies the run's workers share
	setups []prodSetup // an lsum's index parts, by its id
	fibs   []fibWalk   // an lfib's walk, by its id
	batch  mulBatch    // walkOne's positions
	rows   rowBatch    // liftRows.rows' rows of one position
	block  blockRun    // liftRows.rows' set-up for the run
	outer  outerRows   // rowsAcross' outer iterations
	gen    uint64      // the run: a setup of another is stale
	j0     int64
	n      int
	live   bool // made or renewed for the run under way (frameMem)
	// walked: the inner loop of the rows walked one by one (walkRow), or nil
	walked *lsum
}

// retire readies s for another run: it keeps the lanes' buffers and the
// count of calls (gen: a setup of an earlier one is stale), and drops
// the views, copies and walks of the run that ended.
func (s *liftState) retire() {
	clear(s.lets)
	clear(s.lsc)
	clear(s.lone)
	clear(s.prods)
	clear(s.majors)
	clear(s.setups)
	clear(s.fibs)
	*s = liftState{out: kept(s.out), buf: keptEach(s.buf), lets: s.lets, lsc: s.lsc, lone: s.lone, prods: s.prods,
		majors: s.majors, setups: s.setups, fibs: s.fibs, gen: s.gen}
}

type noLift struct{}

// liftOff, set by tests, keeps every range on the loops per j, the path
// a failed run of lanes takes.
var liftOff bool

// liftCtx is the state of lifting one loop.
type liftCtx struct {
	c     *compiler
	l     *liftLoop
	lanes map[string]bool // variables holding lanes: j, and lets that read it
	lets  map[string]int
	atoms map[string]linAtom // the atoms of index forms: slots, global scalars, closures
	// sparse: an inner loop walks positions of an array (a compressed
	// level), whose entries are what the loops per j would re-enter.
	sparse bool
	outer  int // the int slots bound before the loop: those below it
}

// liftRange builds the lifted form of range loop nl with body {j -> v},
// or returns nil (scope unchanged) when the body is not of that form or
// reads j other than in values and array indices affine in it.
func (c *compiler) liftRange(nl *nloop, body *ir.Expr, lb loopBody) (l *liftLoop) {
	if liftOff || nl.kind != itRange || lb.spec == nil || lb.spec.depth != 1 || !lb.spec.real {
		return nil
	}
	x := &liftCtx{c: c, l: &liftLoop{}, lanes: map[string]bool{nl.e.Vars[0]: true, nl.e.Vars[1]: true}, lets: map[string]int{}, atoms: map[string]linAtom{}, outer: c.ni}
	depth := len(c.scope)
	if c.try(func(r any) bool { _, ok := r.(noLift); return ok }, func() {
		e := body
		for e.Op == ir.OpIf && len(e.Args) == 2 || e.Op == ir.OpLet {
			if e.Op == ir.OpIf {
				if x.reads(e.Args[0]) {
					if len(x.l.steps) > 0 {
						panic(noLift{}) // tested after a closure: its errors first
					}
					x.l.tests = x.tests(e.Args[0], x.l.tests)
					e = e.Args[1]
					continue
				}
				x.l.steps = append(x.l.steps, &lstep{cond: c.boolExpr(e.Args[0])})
				e = e.Args[1]
				continue
			}
			if sg := e.Args[1]; sg.Op == ir.OpSingleton && !ir.FreeVars(sg.Args[0])[e.Vars[0]] && (x.reads(e.Args[0]) || containsLoop(e.Args[0])) {
				// let v = a in {j -> w}, a a let of lanes: w's value
				// is let v = a in w, the let computed for the lanes
				// with the value, as a let inside a value is; no
				// guard follows it whose errors it could come before.
				// (Not where the key is the let's variable.)
				e = &ir.Expr{Op: ir.OpSingleton, Args: []*ir.Expr{sg.Args[0], {Op: ir.OpLet, Vars: e.Vars, Args: []*ir.Expr{e.Args[0], sg.Args[1]}, Type: sg.Args[1].Type, Pos: e.Pos}}, Ann: sg.Ann, Type: sg.Type, Pos: sg.Pos}
				break
			}
			st := x.letStep(e)
			if st.isLet {
				// Evaluated per j before the guards after it: the
				// errors of a run per j would not be the same.
				panic(noLift{})
			}
			x.l.steps = append(x.l.steps, st)
			e = e.Args[1]
		}
		if e.Op != ir.OpSingleton || !isVarSlot(e.Args[0], nl.e.Vars[0]) && !isVarSlot(e.Args[0], nl.e.Vars[1]) ||
			c.typeOf(e.Args[1]).Depth != 0 {
			panic(noLift{})
		}
		x.l.leaf = !containsLoop(e.Args[1])
		x.l.val = x.expr(e.Args[1])
	}) != nil || !x.sparse && !x.l.leaf {
		// Over dense levels alone the loops per j read rows as slices;
		// lanes would read them across.
		return nil
	}
	c.unbind(len(c.scope) - depth)
	return x.l
}

// reads reports whether e reads j (or a let of lanes).
func (x *liftCtx) reads(e *ir.Expr) bool {
	for v := range ir.FreeVars(e) {
		if x.lanes[v] {
			return true
		}
	}
	return false
}

func (x *liftCtx) node(n *lnode) *lnode {
	if n.op == lMul {
		switch {
		case n.a.op == lMul:
			n.fs = [3]*lnode{n.a.a, n.a.b, n.b}
		case n.b.op == lMul:
			// a*(b*c) is (b*c)*a: a product of two floats commutes exactly.
			n.fs = [3]*lnode{n.b.a, n.b.b, n.a}
		default:
			n.fs = [3]*lnode{n.a, n.b, nil}
		}
	}
	n.id = x.l.nodes
	x.l.nodes++
	return n
}

// letStep lowers let v = a: a closure into a slot when a does not read
// j, else a let of lanes. The variable stays bound for the let's body.
func (x *liftCtx) letStep(e *ir.Expr) *lstep {
	c := x.c
	v := e.Args[0]
	t := c.typeOf(v)
	if t.Depth != 0 {
		panic(noLift{})
	}
	name := e.Vars[0]
	if !x.reads(v) && !containsLoop(v) {
		cv := c.expr(v)
		slot := c.bind(name, cv.t)
		delete(x.lanes, name)
		delete(x.lets, name)
		return &lstep{set: setter(cv, slot)}
	}
	n := x.expr(v)
	c.declare(name, ir.RealType)
	x.lanes[name] = true
	x.lets[name] = x.l.lets
	x.l.lets++
	return &lstep{isLet: true, let: x.lets[name], val: n}
}

// expr lowers real value e over the lanes.
func (x *liftCtx) expr(e *ir.Expr) *lnode {
	n := x.lower(e)
	n.expr = e
	return n
}

// lower is expr without the node's expression recorded.
func (x *liftCtx) lower(e *ir.Expr) *lnode {
	c := x.c
	t := c.typeOf(e)
	if t.Depth != 0 || (t.Base != ir.Real && t.Base != ir.Int) {
		panic(noLift{})
	}
	if !x.reads(e) && !containsLoop(e) {
		if n := x.read(e); n != nil {
			return n // read in place, not through a closure
		}
		return x.node(&lnode{op: lScalar, f: asReal(c.expr(e))})
	}
	switch e.Op {
	case ir.OpVar:
		if i, ok := x.lets[e.Name]; ok && x.lanes[e.Name] {
			return x.node(&lnode{op: lLet, let: i})
		}
		if x.lanes[e.Name] {
			return x.node(&lnode{op: lLane})
		}
	case ir.OpNeg:
		return x.node(&lnode{op: lNeg, a: x.expr(e.Args[0])})
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		if t.Base != ir.Real {
			break
		}
		op := map[ir.Op]lop{ir.OpAdd: lAdd, ir.OpSub: lSub, ir.OpMul: lMul}[e.Op]
		return x.node(&lnode{op: op, a: x.expr(e.Args[0]), b: x.expr(e.Args[1])})
	case ir.OpLookup:
		if n := x.read(e); n != nil {
			return n
		}
	case ir.OpSum:
		if t.Base != ir.Real {
			break
		}
		return x.node(&lnode{op: lSum, sum: x.loop(e)})
	case ir.OpIf:
		if len(e.Args) != 2 || !x.reads(e.Args[0]) {
			break
		}
		ts := x.tests(e.Args[0], nil)
		return x.node(&lnode{op: lGuard, tests: ts, a: x.expr(e.Args[1])})
	case ir.OpLet:
		// A let inside a value: the let, then its body's lanes.
		var n *lnode
		x.scoped(func() {
			st := x.letStep(e)
			n = x.node(&lnode{op: lLetIn, step: st, a: x.expr(e.Args[1])})
		})
		return n
	}
	panic(noLift{})
}

// read lowers e when it reads a real array at an index affine in j
// (stride 0 where it does not read j); nil otherwise.
func (x *liftCtx) read(e *ir.Expr) *lnode {
	if e.Op != ir.OpLookup || len(e.Args) != 2 || e.Args[0].Op != ir.OpGlobal || containsLoop(e.Args[1]) {
		return nil
	}
	cl := x.c.cell(e.Args[0])
	if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Real {
		return nil
	}
	base, stride := x.affine(e.Args[1])
	return x.node(&lnode{op: lRead, cl: cl, base: x.at(base), stride: x.at(stride)})
}

// tests adds the conjuncts of cond, comparisons of ints affine in j.
func (x *liftCtx) tests(cond *ir.Expr, ts []laneTest) []laneTest {
	switch cond.Op {
	case ir.OpAnd:
		return x.tests(cond.Args[1], x.tests(cond.Args[0], ts))
	case ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpEq, ir.OpNe:
		if containsLoop(cond) {
			break
		}
		a, sa := x.affine(cond.Args[0])
		b, sb := x.affine(cond.Args[1])
		return append(ts, laneTest{op: cond.Op, a: x.at(a), b: x.at(b), sa: x.at(sa), sb: x.at(sb)})
	}
	panic(noLift{})
}

// scoped runs f and then forgets the lets it bound.
func (x *liftCtx) scoped(f func()) {
	lanes, lets, depth := maps.Clone(x.lanes), maps.Clone(x.lets), len(x.c.scope)
	f()
	x.lanes, x.lets = lanes, lets
	x.c.unbind(len(x.c.scope) - depth)
}

// affine splits int e as base + stride*j, base and stride not reading j.
func (x *liftCtx) affine(e *ir.Expr) (base, stride linear) {
	if !x.reads(e) {
		return x.linear(e), nil
	}
	switch e.Op {
	case ir.OpVar:
		if _, isLet := x.lets[e.Name]; !isLet {
			return nil, constLinear(1)
		}
	case ir.OpAdd, ir.OpSub:
		b1, s1 := x.affine(e.Args[0])
		b2, s2 := x.affine(e.Args[1])
		sign := int64(1)
		if e.Op == ir.OpSub {
			sign = -1
		}
		return b1.add(b2, sign), s1.add(s2, sign)
	case ir.OpMul:
		a, b := e.Args[0], e.Args[1]
		if x.reads(a) {
			a, b = b, a
		}
		if x.reads(a) {
			break
		}
		k := x.linear(a)
		b1, s1 := x.affine(b)
		b2, ok1 := b1.times(k)
		s2, ok2 := s1.times(k)
		if ok1 && ok2 {
			return b2, s2
		}
	}
	panic(noLift{})
}

// linear is int e, which does not read j, in normal form: its atoms are
// int slots ("s:N"), global int scalars ("g:name") and closures ("f:N").
func (x *liftCtx) linear(e *ir.Expr) linear {
	c := x.c
	switch e.Op {
	case ir.OpConst:
		if e.Type.Base == ir.Int || e.Type.Base == ir.Unknown {
			return constLinear(e.I)
		}
	case ir.OpVar:
		if b, ok := c.lookupVar(e.Name); ok && b.slot >= 0 && b.t == ir.IntType {
			return x.atom(fmt.Sprintf("s:%d", b.slot), linAtom{slot: b.slot})
		}
	case ir.OpGlobal:
		if cl := c.cell(e); cl.info.Kind == ir.ObjScalar && cl.info.Elem == ir.Int {
			return x.atom("g:"+e.Name, linAtom{slot: -1, cl: cl})
		}
	case ir.OpAdd, ir.OpSub:
		sign := int64(1)
		if e.Op == ir.OpSub {
			sign = -1
		}
		return x.linear(e.Args[0]).add(x.linear(e.Args[1]), sign)
	case ir.OpMul:
		if f, ok := x.linear(e.Args[0]).times(x.linear(e.Args[1])); ok {
			return f
		}
	}
	cv := c.expr(e)
	if cv.t.Depth != 0 || cv.t.Base != ir.Int {
		panic(noLift{})
	}
	if cv.isConst {
		return constLinear(cv.ci)
	}
	at := linAtom{slot: -1, f: cv.i}
	if e.Op == ir.OpLookup && e.Args[0].Op == ir.OpGlobal && e.Args[1].Op == ir.OpVar {
		cl := c.cell(e.Args[0])
		if b, ok := c.lookupVar(e.Args[1].Name); ok && b.slot >= 0 && b.t == ir.IntType && cl.info.Kind == ir.ObjArray && cl.info.Elem == ir.Int {
			at.arr, at.at = cl, b.slot
		}
	}
	return x.atom(fmt.Sprintf("f:%d", len(x.atoms)), at)
}

// atom is the form of one atom, at where its value is.
func (x *liftCtx) atom(key string, at linAtom) linear {
	x.atoms[key] = at
	return atomLinear(key)
}

// at compiles form f for evaluation per run of lanes.
func (x *liftCtx) at(f linear) linearAt {
	return f.at(func(key string) linAtom { return x.atoms[key] })
}

// loop lowers inner sum e, whose window must not read j.
func (x *liftCtx) loop(e *ir.Expr) *lsum {
	c := x.c
	src, body := e.Args[0], e.Args[1]
	if x.reads(src) || c.typeOf(src).Depth != 1 {
		panic(noLift{})
	}
	s := &lsum{}
	switch src.Op {
	case ir.OpRange:
		lo, hi := c.intExpr(src.Args[0], "range bound"), c.intExpr(src.Args[1], "range bound")
		s.open = func(fr *frame) (int64, int64, bool) { return lo(fr), hi(fr), fr.err == nil }
	case ir.OpSubArray:
		if src.Args[0].Op != ir.OpGlobal {
			panic(noLift{})
		}
		s.arr = c.cell(src.Args[0])
		if s.arr.info.Kind != ir.ObjArray {
			panic(noLift{})
		}
		s.open, s.seg = c.segment(src, s.arr)
		x.sparse = true
	case ir.OpGlobal:
		cl := c.cell(src)
		if cl.info.Kind != ir.ObjArray {
			panic(noLift{})
		}
		s.arr = cl
		s.open = func(fr *frame) (int64, int64, bool) { return 0, int64(cl.n), true }
	default:
		panic(noLift{})
	}
	vt := c.typeOf(src).Elem()
	s.vreal = vt.Base == ir.Real
	saved := map[string]bool{}
	for _, v := range e.Vars[:2] {
		saved[v] = x.lanes[v]
		delete(x.lanes, v)
	}
	s.ks, s.vs = c.varSlots(e, body, vt)
	s.body = x.steps(body)
	if b := s.body; b.next == nil && !b.isLet && b.val != nil && b.val.op == lMul {
		s.prod = b.val
		for i, f := range b.val.fs {
			if f != nil {
				fv := ir.FreeVars(f.expr)
				s.vary[i] = fv[e.Vars[0]] || fv[e.Vars[1]]
			}
		}
		s.at, s.fixed, s.global = true, true, true
		for i, f := range b.val.fs {
			s.ats[i].t = -1
			if s.vary[i] {
				ix := s.indexAt(f)
				s.ats[i] = ix
				s.at = s.at && ix.t >= 0
				if ix.t >= 0 {
					own := f.base.terms[ix.t]
					own.atoms = slices.Delete(slices.Clone(own.atoms), ix.atom, ix.atom+1)
					terms := append(slices.Concat(f.stride.terms, ix.rest.terms), own)
					s.fixed = s.fixed && x.fixed(terms, x.outer)
					s.global = s.global && x.fixed(terms, 0)
				}
			}
		}
		s.global = s.global && s.fixed
		s.id = x.l.sums
		x.l.sums++
	}
	s.fib = x.fib(s)
	c.unbind(2)
	for v, was := range saved {
		if was {
			x.lanes[v] = true
		}
	}
	return s
}

// fib returns the lfib of lsum l, or nil.
func (x *liftCtx) fib(l *lsum) *lfib {
	b := l.body
	if l.prod != nil || l.arr == nil {
		return nil
	}
	var let *lstep
	if b.isLet && b.val.op == lRead {
		let, b = b, b.next
	}
	if b == nil || b.sum == nil || b.next != nil {
		return nil
	}
	in := b.sum
	if in.prod == nil || !in.at || !in.global {
		return nil
	}
	for i := range in.ats {
		if in.ats[i].arr != nil {
			return nil // (runFibers walks positions unchecked: covers is runSum's)
		}
	}
	fi := -1
	var read *lnode
	for i, f := range in.prod.fs {
		switch {
		case f == nil || in.vary[i]:
		case fi >= 0:
			return nil
		case let != nil && f.op == lLet && f.let == let.let:
			fi, read = i, let.val
		case let == nil && f.op == lRead:
			fi, read = i, f
		default:
			return nil
		}
	}
	if fi < 0 {
		return nil
	}
	ix := l.indexAt(read)
	if ix.t < 0 || ix.arr != nil {
		return nil
	}
	own := read.base.terms[ix.t]
	own.atoms = slices.Delete(slices.Clone(own.atoms), ix.atom, ix.atom+1)
	if !x.fixed(append(slices.Concat(read.stride.terms, ix.rest.terms), own), 0) {
		return nil
	}
	f := &lfib{let: let, read: read, ix: ix, in: in, fi: fi, id: x.l.fibs}
	x.l.fibs++
	return f
}

// fixed reports whether terms read only global scalars and slots below
// outer (slots are numbered in the order bound: x.outer, those bound
// outside the lifted loop).
func (x *liftCtx) fixed(terms []linTerm, outer int) bool {
	for _, t := range terms {
		for _, a := range t.atoms {
			if a.f != nil || a.slot >= outer {
				return false
			}
		}
	}
	return true
}

// steps lowers the body of an inner loop.
func (x *liftCtx) steps(e *ir.Expr) *lstep {
	c := x.c
	switch {
	case e.Op == ir.OpIf && len(e.Args) == 2 && !x.reads(e.Args[0]) && !containsLoop(e.Args[0]):
		st := &lstep{cond: c.boolExpr(e.Args[0])}
		st.next = x.steps(e.Args[1])
		return st
	case e.Op == ir.OpLet:
		var st *lstep
		x.scoped(func() {
			st = x.letStep(e)
			st.next = x.steps(e.Args[1])
		})
		return st
	case e.Op == ir.OpSum:
		return &lstep{sum: x.loop(e)}
	}
	return &lstep{val: x.expr(e)}
}

func (fr *frame) liftState(nl *nloop) *liftState {
	for len(fr.lst) <= nl.liftID {
		fr.lst = append(fr.lst, nil)
	}
	s := fr.lst[nl.liftID]
	l := nl.lift
	if s == nil {
		s = &liftState{buf: make([][]float64, l.nodes), prods: make([]lprod, l.nodes), majors: make([]laneMajor, l.nodes), lets: make([][]float64, l.lets), lsc: make([]float64, l.lets), lone: make([]bool, l.lets), setups: make([]prodSetup, l.sums), fibs: make([]fibWalk, l.fibs)}
		fr.lst[nl.liftID] = s
	}
	if !s.live {
		s.live, s.copies = true, fr.copies
	}
	return s
}

// run adds the loop's iterations lo..hi-1 into b, or reports false,
// having added nothing, when a run of lanes fails.
func (l *liftLoop) run(fr *frame, nl *nloop, lo, hi int64, b *builder) bool {
	if fr.err != nil || hi-lo < liftMin || !small(lo) || !small(hi) || (l.leaf && hi-lo > liftLanes) {
		return false // (an error already recorded is not the run's to drop)
	}
	n := int(hi - lo)
	if ok, none := l.enter(fr, lo, n); !ok || none {
		return ok
	}
	s := fr.liftState(nl)
	s.gen++
	inPlace := l.leaf && b.spec.dense && b.ws == nil && lo >= 0
	if inPlace {
		b.reserve(hi)
		inPlace = int64(len(b.reals)) >= hi
	}
	if inPlace {
		// The lanes go into the row in place: add writes them only once
		// every read of the run has succeeded.
		s.j0, s.n = lo, n
		if !s.add(fr, l.val, b.reals[lo:hi]) {
			fr.err = nil
			return false
		}
		nestSaw("lifted")
		return true
	}
	if n <= liftLanes {
		if run := b.appendRun(lo, n); run != nil {
			// One run into a sequential row: its lanes are written
			// where the row keeps them, and kept once the whole run
			// succeeded.
			s.j0, s.n = lo, n
			v, ok := s.values(fr, l.val, run)
			if !ok {
				fr.err = nil
				return false
			}
			b.keepRun(lo, v, run)
			if &v[0] != &run[0] {
				nestSaw("lifted row kept where it is read")
			}
			nestSaw("lifted into the appended row")
			nestSaw("lifted")
			return true
		}
	}
	out := grow(&s.out, n)
	for j0 := lo; j0 < hi; j0 += liftLanes {
		s.j0, s.n = j0, int(min(hi-j0, liftLanes))
		v, sc, ok := s.eval(fr, l.val)
		if !ok {
			fr.err = nil
			return false
		}
		if v != nil && s.n == n {
			out = v[:n] // one run: its lanes go to the row as they are
			break
		}
		lanes := out[j0-lo:][:s.n]
		if v == nil {
			for q := range lanes {
				lanes[q] = sc
			}
		} else {
			copy(lanes, v)
		}
	}
	b.addRow(lo, out)
	nestSaw("lifted")
	return true
}

// enter runs the guards and lets before the singleton for lanes
// lo..lo+n-1: ok false where the run cannot be taken (nothing added, no
// error kept), none where a guard that does not read j fails (the
// iterations add nothing).
func (l *liftLoop) enter(fr *frame, lo int64, n int) (ok, none bool) {
	for i := range l.tests {
		if !l.tests[i].holds(fr, lo, n) {
			fr.err = nil
			return false, false
		}
	}
	for _, st := range l.steps {
		switch {
		case st.cond != nil:
			if !st.cond(fr) && fr.err == nil {
				return true, true
			}
		case st.set != nil:
			st.set(fr)
		}
		if fr.err != nil {
			fr.err = nil
			return false, false
		}
	}
	return true, false
}

// lanes returns node n's buffer of s.n lanes.
func (s *liftState) lanes(n *lnode) []float64 {
	b := s.buf[n.id]
	if cap(b) < s.n {
		b = make([]float64, liftLanes)
		s.buf[n.id] = b
	}
	return b[:s.n]
}

// setLet computes a let of lanes.
func (s *liftState) setLet(fr *frame, st *lstep) bool {
	v, sc, ok := s.eval(fr, st.val)
	s.lets[st.let], s.lsc[st.let], s.lone[st.let] = v, sc, v == nil
	return ok
}

// eval computes node n over the lanes: a slice of s.n values, or nil
// and one value for every lane; false when a read or a closure fails.
func (s *liftState) eval(fr *frame, n *lnode) ([]float64, float64, bool) {
	switch n.op {
	case lScalar:
		v := n.f(fr)
		return nil, v, fr.err == nil
	case lLane:
		out := s.lanes(n)
		for q := range out {
			out[q] = float64(s.j0 + int64(q))
		}
		return out, 0, true
	case lLetIn:
		if !s.runSteps(fr, n.step, nil) {
			return nil, 0, false
		}
		return s.eval(fr, n.a)
	case lGuard:
		for i := range n.tests {
			if !n.tests[i].holds(fr, s.j0, s.n) {
				return nil, 0, false
			}
		}
		return s.eval(fr, n.a)
	case lLet:
		if s.lone[n.let] {
			return nil, s.lsc[n.let], true
		}
		return s.lets[n.let], 0, true
	case lRead:
		return s.read(fr, n)
	case lSum:
		out := s.lanes(n)
		clear(out)
		return out, 0, s.runSum(fr, n.sum, out)
	case lNeg:
		a, sa, ok := s.eval(fr, n.a)
		if !ok || a == nil {
			return nil, -sa, ok
		}
		out := s.lanes(n)
		for q, x := range a[:len(out)] {
			out[q] = -x
		}
		return out, 0, true
	}
	if n.op == lMul {
		p := &s.prods[n.id]
		if !s.prod(fr, n, p) {
			return nil, 0, false
		}
		out := s.lanes(n)
		p.setTo(out)
		return out, 0, true
	}
	a, sa, ok1 := s.eval(fr, n.a)
	b, sb, ok2 := s.eval(fr, n.b)
	if !ok1 || !ok2 {
		return nil, 0, false
	}
	if a == nil && b == nil {
		return nil, arithOp(n.op.vop(), sa, sb), true
	}
	out := s.lanes(n)
	realOp(n.op.vop(), out, a, sa, b, sb)
	return out, 0, true
}

// vop is the batches' operator for an arithmetic lop (lAdd, lSub, lMul).
func (op lop) vop() vop {
	switch op {
	case lAdd:
		return vAdd
	case lSub:
		return vSub
	}
	return vMul
}

// read gathers a real array at base + stride*j for the lanes: a slice of
// the array itself when the stride is 1; false when a lane's index is
// outside the array.
func (s *liftState) read(fr *frame, n *lnode) ([]float64, float64, bool) {
	src, first, stride, ok := s.strided(fr, n)
	if !ok {
		return nil, 0, false
	}
	switch stride {
	case 0:
		return nil, src[first], true
	case 1:
		return src[first : first+int64(s.n)], 0, true
	}
	out := s.lanes(n)
	k := first
	for q := range out {
		out[q] = src[k]
		k += stride
	}
	return out, 0, true
}

// strided returns the array read n and the lanes' first index and
// stride in it, all inside it; false when a lane's index is not. A read
// across (stride above 1) that has read as many lanes as the array holds
// reads a lane-major copy: the same values, a run's lanes adjacent.
func (s *liftState) strided(fr *frame, n *lnode) (src []float64, first, stride int64, ok bool) {
	base, stride := n.base.c, n.stride.c // a constant without a call
	if len(n.base.terms) > 0 {
		base = n.base.at(fr)
	}
	if len(n.stride.terms) > 0 {
		stride = n.stride.at(fr)
	}
	if fr.err != nil {
		return nil, 0, 0, false
	}
	var m *laneMajor
	if copiesAcross(n.cl.reals, stride) { // (inlined: most reads are not across)
		m = s.major(n, stride, int64(s.n))
	}
	return s.window(n, base, stride, m)
}

// window is strided for read n at index base + stride*j, m its
// lane-major copy or nil.
func (s *liftState) window(n *lnode, base, stride int64, m *laneMajor) ([]float64, int64, int64, bool) {
	if !small(base) || !small(stride) {
		return nil, 0, 0, false
	}
	src := n.cl.reals
	first, last := base+stride*s.j0, base+stride*(s.j0+int64(s.n)-1)
	if min(first, last) < 0 || max(first, last) >= int64(len(src)) {
		return nil, 0, 0, false
	}
	if m != nil {
		r, b := s.j0, base // the lanes' row and column in src
		if b < 0 || b >= stride {
			r, b = first/stride, first%stride
		}
		return m.c.vals, b*m.c.rows + r, 1, true
	}
	return src, first, stride, true
}

// laneMajor is a read's lane-major copy (c, the run's), made once the
// run's workers have read as many lanes across its array src as src
// holds (the copy's pass over src then at most doubles the cost of the
// reads). Counted per worker, each of w workers would read w times its
// share across first; read is this worker's count not yet added to c's.
type laneMajor struct {
	c      *sharedCopy
	read   int64
	copied bool
}

// major counts reads more lanes of read n at stride and returns its
// lane-major copy, or nil: for a stride that does not read across, and
// until the copy is made.
func (s *liftState) major(n *lnode, stride, reads int64) *laneMajor {
	src := n.cl.reals
	if !copiesAcross(src, stride) {
		return nil
	}
	m := &s.majors[n.id]
	if m.c == nil || m.c.stride != stride || len(m.c.src) != len(src) || &m.c.src[0] != &src[0] {
		*m = laneMajor{c: s.copies.entry(src, stride)}
	}
	if !m.copied {
		if !m.c.eager {
			// Added to the shared count in steps of len(src)/64 lanes:
			// an atomic add per inner loop would cost as much as its
			// reads.
			if m.read += reads; m.read < int64(len(src))/64 {
				return nil
			}
			if m.c.read.Add(m.read) < int64(len(src)) {
				m.read = 0
				return nil
			}
		}
		m.c.lanes()
		m.copied = true
	}
	return m
}

// copiesAcross reports whether reads of src at stride may take a
// lane-major copy.
func copiesAcross(src []float64, stride int64) bool {
	return stride > 1 && stride < int64(len(src)) && len(src) <= maxReserve
}

// runCopies holds the lane-major copies of one run, made once for all
// its workers (each would otherwise copy the array again: MTTKRP's D on
// WordNet is 15 MB), in buffers from bufs (the kernel's, or nil).
type runCopies struct {
	mu     sync.Mutex
	copies map[copyKey]*sharedCopy
	bufs   *copyBufs
	// helpers: how many goroutines help the worker that starts a copy
	// (the run's threads but one).
	helpers int
}

// release gives the run's copies' buffers back to bufs, and tells it
// which arrays the run copied; the run is over.
func (rc *runCopies) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.bufs == nil {
		return
	}
	made := map[copyShape]bool{}
	for _, c := range rc.copies {
		if c.vals != nil {
			made[copyShape{len(c.src), c.stride}] = true
			rc.bufs.put(c.vals)
		}
	}
	rc.bufs.mu.Lock()
	rc.bufs.made = made
	rc.bufs.mu.Unlock()
	rc.copies = nil
}

// copyShape is an array's length and the stride of its copy.
type copyShape struct {
	n      int
	stride int64
}

// copyBufs keeps the buffers of a kernel's lane-major copies from one
// run to the next, written again by each run: a fresh buffer costs a
// page fault per 4 KiB and the collector's work every run (15 MB a run
// for MTTKRP's D on WordNet, about a tenth of the run).
//
// made: the shapes of the arrays the last run copied. A run reads as
// its inputs say, and runs of a kernel mostly read alike (the steps of a
// CP decomposition, a repeated measurement): such an array is copied at
// this run's first read across, not after as many lanes read across as
// it holds (a third of MTTKRP's reads of D on WordNet). Where this run
// reads less, the copy is lost work, at most one copy a run.
type copyBufs struct {
	mu   sync.Mutex
	free [][]float64
	made map[copyShape]bool
}

// copied reports whether the last run copied an array of n values at
// stride.
func (p *copyBufs) copied(n int, stride int64) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made[copyShape{n, stride}]
}

// maxCopyBufs is the most buffers a kernel keeps.
const maxCopyBufs = 8

// get returns a buffer of n values (not zeroed where reused): the
// smallest kept that holds them, or a new one.
func (p *copyBufs) get(n int64) []float64 {
	if p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		best := -1
		for i, b := range p.free {
			if int64(cap(b)) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
				best = i
			}
		}
		if best >= 0 {
			b := p.free[best]
			p.free = slices.Delete(p.free, best, best+1)
			return b[:n]
		}
	}
	return make([]float64, n)
}

// put keeps buffer b for a later run (the oldest kept goes past
// maxCopyBufs).
func (p *copyBufs) put(b []float64) {
	if p == nil || cap(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == maxCopyBufs {
		p.free = slices.Delete(p.free, 0, 1)
	}
	p.free = append(p.free, b)
}

type copyKey struct {
	data   *float64
	n      int
	stride int64
}

// sharedCopy is the lane-major copy of src at stride (element b*rows+r
// of vals is src's r*stride+b) and the lanes read across src before it,
// made in tiles of 64 x 64 (neither side touches a cache line an
// element) claimed in turn by every worker that needs it: one worker
// alone would hold the others up for the whole copy.
type sharedCopy struct {
	src, vals           []float64
	stride, rows, tiles int64
	read, next          atomic.Int64 // next: the next tile to claim
	setup               sync.Once
	left                sync.WaitGroup
	bufs                *copyBufs // where vals comes from
	eager               bool      // copied at the first read across (copyBufs.made)
	helpers             int       // runCopies.helpers
}

// laneMajorTile, set by tests, runs after each tile a worker copies.
var laneMajorTile func()

// entry returns the run's copy of src at stride (not made yet).
func (rc *runCopies) entry(src []float64, stride int64) *sharedCopy {
	rows := (int64(len(src)) + stride - 1) / stride
	if rc == nil {
		return &sharedCopy{src: src, stride: stride, rows: rows} // a frame made outside a run: its own
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.copies == nil {
		rc.copies = map[copyKey]*sharedCopy{}
	}
	k := copyKey{&src[0], len(src), stride}
	c := rc.copies[k]
	if c == nil {
		c = &sharedCopy{src: src, stride: stride, rows: rows, bufs: rc.bufs, eager: rc.bufs.copied(len(src), stride), helpers: rc.helpers}
		rc.copies[k] = c
	}
	return c
}

// lanes makes the copy with the other workers that ask for it and the
// helpers the first starts: a split run's first worker reaches it alone
// when the copy is made from the first read, the others not started.
func (c *sharedCopy) lanes() {
	c.setup.Do(func() {
		nb := (c.stride + 63) / 64
		c.vals = c.bufs.get(c.rows * c.stride)
		// The last row's values past src's end are not copied: zero (a
		// reused buffer holds an earlier run's there).
		last := c.rows - 1
		for b := int64(len(c.src)) - last*c.stride; b < c.stride; b++ {
			c.vals[b*c.rows+last] = 0
		}
		c.tiles = (c.rows + 63) / 64 * nb
		c.left.Add(int(c.tiles))
		nestSaw("lane-major")
		if c.eager {
			nestSaw("lane-major from the first read")
		}
		for range min(int64(c.helpers), c.tiles-1) {
			go c.copyTiles()
		}
	})
	c.copyTiles()
	c.left.Wait()
}

// copyTiles copies the tiles of c no one has claimed.
func (c *sharedCopy) copyTiles() {
	nb := (c.stride + 63) / 64
	end := int64(len(c.src))
	for t := c.next.Add(1) - 1; t < c.tiles; t = c.next.Add(1) - 1 {
		r0, b0 := t/nb*64, t%nb*64
		b1 := min(b0+64, c.stride)
		r1 := min(r0+64, c.rows)
		// Four rows at a time where all four hold the tile's columns
		// whole: blocks of four columns in assembly where it runs, then
		// (or everywhere else) each column's four values go out as one
		// contiguous store of four, a check per four.
		groups := int64(0)
		for r0+4*groups+4 <= r1 && (r0+4*groups+3)*c.stride+b1 <= end {
			groups++
		}
		bq := c.copyBlocks(r0, groups, b0, b1)
		r := r0
		for ; r < r0+4*groups; r += 4 {
			s0 := c.src[r*c.stride+bq : r*c.stride+b1]
			s1 := c.src[(r+1)*c.stride+bq : (r+1)*c.stride+b1][:len(s0)]
			s2 := c.src[(r+2)*c.stride+bq : (r+2)*c.stride+b1][:len(s0)]
			s3 := c.src[(r+3)*c.stride+bq : (r+3)*c.stride+b1][:len(s0)]
			k := bq*c.rows + r
			for i, v := range s0 {
				o := c.vals[k : k+4 : k+4]
				o[0], o[1], o[2], o[3] = v, s1[i], s2[i], s3[i]
				k += c.rows
			}
		}
		for ; r < r1 && r*c.stride+b0 < end; r++ {
			out := c.vals[b0*c.rows+r:]
			for i, v := range c.src[r*c.stride+b0 : min(r*c.stride+b1, end)] {
				out[int64(i)*c.rows] = v
			}
		}
		c.left.Done()
		if laneMajorTile != nil {
			laneMajorTile()
		}
	}
}

// runSum runs inner loop l, adding into acc.
func (s *liftState) runSum(fr *frame, l *lsum, acc []float64) bool {
	if l.open == nil {
		return s.runSteps(fr, l.body, acc)
	}
	lo, hi, ok := l.open(fr)
	if !ok || fr.err != nil {
		return false
	}
	return s.runSumIn(fr, l, lo, hi, acc)
}

// runSumIn runs positions lo..hi-1 of inner loop l, its bounds as open
// reads them, adding into acc.
func (s *liftState) runSumIn(fr *frame, l *lsum, lo, hi int64, acc []float64) bool {
	var ok bool
	if l.prod != nil && lo < hi && l.covers(lo, hi) {
		return s.runProd(fr, l, lo, hi, acc)
	}
	if l.fib != nil && lo < hi {
		if lo, ok = s.runFibers(fr, l, lo, hi, acc); !ok {
			return false
		}
	}
	for p := lo; p < hi; p++ {
		setIterVars(fr, l.ks, l.vs, l.arr, l.vreal, p)
		if !s.runSteps(fr, l.body, acc) {
			return false
		}
	}
	return true
}

// indexAt returns read f's index as linear in the loop's position or
// key: one atom of one term of its base is x, no other atom is x, and
// no atom is a closure (which could read x); t < 0 if it is not.
func (l *lsum) indexAt(f *lnode) lindex {
	ix, no := lindex{t: -1}, lindex{t: -1}
	if f == nil || f.op != lRead {
		return no
	}
	nb := len(f.base.terms) // then the stride's terms
	for ti, t := range append(slices.Clone(f.base.terms), f.stride.terms...) {
		for ai, a := range t.atoms {
			switch {
			case a.arr != nil && a.at == l.ks && l.arr != nil:
				// Another array read at the position (a COO's later
				// coordinate): walked as the loop's own keys are.
				if ix.t >= 0 || ti >= nb {
					return no
				}
				ix.t, ix.atom, ix.arr = ti, ai, a.arr
			case a.f != nil:
				return no
			case a.slot < 0 || a.slot != l.ks && a.slot != l.vs:
			case ix.t >= 0 || ti >= nb || a.slot == l.vs && l.arr != nil && l.vreal:
				return no
			default:
				ix.t, ix.atom, ix.key = ti, ai, a.slot == l.vs && l.arr != nil
			}
		}
	}
	if ix.t >= 0 {
		ix.rest = linearAt{c: f.base.c, terms: slices.Delete(slices.Clone(f.base.terms), ix.t, ix.t+1)}
	}
	return ix
}

// covers reports whether every other array a factor's index reads at
// the position (lindex.arr) has positions lo..hi-1: runProd reads them
// unchecked; the general loop checks each read.
func (l *lsum) covers(lo, hi int64) bool {
	for i := range l.ats {
		if a := l.ats[i].arr; a != nil && (lo < 0 || hi > int64(len(a.ints))) {
			return false
		}
	}
	return true
}

// runProd runs positions lo..hi-1 of inner loop l, whose body is one
// product, adding into acc. A factor read at an index linear in the
// loop (l.ats) has its stride and the index's other parts worked out
// once: the same int64 as its form's (sums and products wrap alike in
// any order); where all varying factors are, an entry sets no variable.
func (s *liftState) runProd(fr *frame, l *lsum, lo, hi int64, acc []float64) bool {
	var pr lprod
	fs := &l.prod.fs
	at := [3]*lview{&pr.a, &pr.b, &pr.c}
	ps := &s.setups[l.id] // (kept only where l.fixed)
	strides, rest, coef, majors := &ps.strides, &ps.rest, &ps.coef, &ps.majors
	// (A liftState is one run's: the globals stay as they are.)
	kept := l.fixed && (ps.gen == s.gen || l.global && ps.gen != 0)
	if kept {
		nestSaw("lifted set-up kept")
	}
	for i, f := range fs {
		ix := &l.ats[i]
		switch {
		case f == nil:
		case !l.vary[i]:
			if !s.view(fr, f, at[i]) {
				return false
			}
		case ix.t >= 0 && kept:
			if majors[i] == nil && copiesAcross(f.cl.reals, strides[i]) { // still counting toward its copy
				if majors[i] = s.major(f, strides[i], int64(s.n)*(hi-lo)); majors[i] != nil {
					ps.walked = false
				}
			}
		case ix.t >= 0:
			strides[i], rest[i], coef[i] = indexParts(fr, f, ix)
			majors[i] = s.major(f, strides[i], int64(s.n)*(hi-lo))
			ps.walked = false
		}
	}
	ps.gen = s.gen
	nestSaw("lifted product")
	if l.at {
		nestSaw("lifted at")
	}
	if l.at {
		lo = s.runAt(l, lo, hi, &pr, acc, ps)
	}
	for p := lo; p < hi; p++ {
		if !l.at {
			setIterVars(fr, l.ks, l.vs, l.arr, l.vreal, p)
		}
		for i, f := range fs {
			var ok bool
			switch ix := &l.ats[i]; {
			case !l.vary[i]:
				continue
			case ix.t < 0:
				ok = s.view(fr, f, at[i])
			default:
				x, v := p, at[i]
				if keys := ix.keys(l); keys != nil {
					x = keys[p]
				}
				v.src, v.k, v.stride, ok = s.window(f, rest[i]+coef[i]*x, strides[i], majors[i])
			}
			if !ok {
				return false
			}
		}
		pr.addTo(acc)
	}
	return true
}

// atWalk is a varying factor of runProd's loop over positions: at
// position p (key x = p, or the array's key at p) its view's lanes start
// at u = rest + coef*x + sh, the window's first index (in its lane-major
// copy, u*mul + add), inside the array where 0 <= u < lim; the view
// reads src at stride.
type atWalk struct {
	f                             int // the factor
	keys                          []int64
	src                           []float64
	stride                        int64
	rest, coef, sh, lim, mul, add int64
}

// walks sets ps's walks for lanes j0..j0+n-1; false where a factor's
// lanes are not one set of bounds away from its index (a stride below 0
// or large).
func (s *liftState) walks(l *lsum, ps *prodSetup) bool {
	ps.walked, ps.wj0, ps.wn, ps.nw = true, s.j0, s.n, -1
	ps.ver++
	nw := 0
	for i, f := range l.prod.fs {
		if f == nil || !l.vary[i] {
			continue
		}
		w, ok := s.walk(l, f, i, l.ats[i].keys(l), ps.strides[i], ps.rest[i], ps.coef[i], ps.majors[i])
		if !ok {
			return false
		}
		ps.ws[nw] = w
		nw++
	}
	ps.nw = nw
	return true
}

// walk is the walk of factor i, read f at index rest + coef*x + st*j in
// loop l (m: its lane-major copy, or nil), for lanes s.j0..; false
// where the stride is below 0 or large.
func (s *liftState) walk(l *lsum, f *lnode, i int, keys []int64, st, rest, coef int64, m *laneMajor) (atWalk, bool) {
	n := int64(s.n)
	if st < 0 || !small(st) || !small(st*s.j0) {
		return atWalk{}, false
	}
	w := atWalk{f: i, keys: keys, rest: rest, coef: coef, mul: 1, src: f.cl.reals, stride: st}
	if m != nil {
		// Lanes j0.. of row base (0 <= base < st): base*rows + j0.
		w.src, w.stride, w.mul, w.add = m.c.vals, 1, m.c.rows, s.j0
		w.lim = min(st, int64(len(f.cl.reals))-st*(s.j0+n-1))
	} else {
		// base + st*j0 >= 0, base + st*(j0+n-1) < len, small(base).
		w.sh = st * s.j0
		w.lim = min(int64(len(w.src))-st*(n-1), 1<<30+w.sh)
	}
	w.lim = max(w.lim, 0)
	return w, true
}

// runAt runs runProd's positions lo.. with each varying factor's view
// set by a multiply and a compare, no call per position, and returns
// the first position it did not run: one whose window falls outside
// the bounds it checks, which the general loop takes (and fails or reads
// as window does). The bounds are window's: the lanes' first and last
// index inside the array, the base small.
func (s *liftState) runAt(l *lsum, lo, hi int64, pr *lprod, acc []float64, ps *prodSetup) int64 {
	if !ps.walked || ps.wj0 != s.j0 || ps.wn != s.n {
		s.walks(l, ps)
	}
	if ps.nw < 0 {
		return lo
	}
	nestSaw("lifted at walk")
	q := *pr // local: the views' offsets change per position
	ws := ps.ws[:ps.nw]
	q.walked(ws)
	return walkAt(&s.batch, ws, &q, [3]int64{q.a.k, q.b.k, q.c.k}, lo, hi, acc)
}

// walked sets the arrays and strides of q's views that walks ws set.
func (q *lprod) walked(ws []atWalk) {
	for i := range ws {
		// By field, not through a pointer to the view: a store into
		// a local q (this inlined) needs no write barrier.
		switch w := &ws[i]; w.f {
		case 0:
			q.a.src, q.a.stride = w.src, w.stride
		case 1:
			q.b.src, q.b.stride = w.src, w.stride
		default:
			q.c.src, q.c.stride = w.src, w.stride
		}
	}
}

// runFibers runs iterations lo.. of l, an lfib, and returns the first
// it did not run (the general loop takes it: a window outside the
// walk's bounds, the product's set-up not made yet), or false when a run
// fails. Iteration p's t is the read's view at p, the inner loop's
// positions walk as runAt's; positions the walks cannot take, or all of
// an iteration's once a lane-major copy changes the walks, go to
// runProd, after t's let, if any, is set as the general loop sets it.
func (s *liftState) runFibers(fr *frame, l *lsum, lo, hi int64, acc []float64) (int64, bool) {
	fb, in := l.fib, l.fib.in
	ps := &s.setups[in.id]
	if ps.gen == 0 || !ps.walked || ps.wj0 != s.j0 || ps.wn != s.n || ps.nw < 0 {
		return lo, true // runProd makes the set-up and the walks
	}
	fw := &s.fibs[fb.id]
	if !fw.walked || fw.j0 != s.j0 || fw.n != s.n {
		r := fb.read
		st, rest, coef := indexParts(fr, r, &fb.ix)
		fw.walked, fw.j0, fw.n, fw.ver = true, s.j0, s.n, 0
		fw.w, fw.ok = s.walk(l, r, fb.fi, fb.ix.keys(l), st, rest, coef, nil)
		fw.ok = fw.ok && st <= 1 // no lane-major copy of t's array
		fw.atPos = false
		if in.seg != nil {
			fw.rd = in.seg.reader()
			fw.atPos = l.ks >= 0 && fw.rd.loSlot == l.ks && fw.rd.hiSlot == l.ks
		}
	}
	if !fw.ok {
		return lo, true
	}
	nestSaw("lifted fibers")
	ws := ps.ws[:ps.nw]
	t := &fw.w
	if fw.ver != ps.ver {
		fw.prologue(in, ps, fb.fi)
	} else {
		nestSaw("lifted fibers kept")
	}
	// (q's offsets are set per position where walkAt uses it: a view
	// of fw's, not a copy per call.)
	q, xo, bo, one, counting := &fw.q, fw.xo, fw.bo, fw.one, fw.counting
	// One value times slices: every iteration's positions go into one
	// batch, flushed before anything else adds into acc.
	mb := &s.batch
	if one {
		mb.begin(q, xo, bo, acc)
	}
	// The inner loop's bounds, read inline where they are a fiber's;
	// any irregularity goes through open, which reports it.
	// Where they are read at the iteration's own position (atPos), the
	// iteration's variables are set only before what reads fr (nothing
	// past the loop reads them: they are its own).
	rd, atPos := &fw.rd, fw.atPos
	if atPos {
		nestSaw("lifted fibers at their positions")
	}
	vars := func(p int64) {
		if atPos {
			setIterVars(fr, l.ks, l.vs, l.arr, l.vreal, p)
		}
	}
	var k, kp [3]int64
	for p := lo; p < hi; p++ {
		x := p
		if t.keys != nil {
			x = t.keys[p]
		}
		u := t.rest + t.coef*x + t.sh
		if uint64(u) >= uint64(t.lim) {
			mb.flush(acc)
			return p, true
		}
		var lo3, hi3 int64
		var ok bool
		if atPos {
			lo3, hi3, ok = rd.at(p, p)
		} else {
			setIterVars(fr, l.ks, l.vs, l.arr, l.vreal, p)
			lo3, hi3, ok = rd.at(fr.i[rd.loSlot], fr.i[rd.hiSlot])
		}
		if !ok {
			vars(p)
			if lo3, hi3, ok = in.open(fr); !ok || fr.err != nil {
				mb.flush(acc)
				return p, false
			}
		}
		if lo3 >= hi3 {
			continue
		}
		if counting {
			for i, f := range in.prod.fs {
				if f != nil && in.vary[i] && ps.majors[i] == nil && copiesAcross(f.cl.reals, ps.strides[i]) {
					if ps.majors[i] = s.major(f, ps.strides[i], int64(s.n)*(hi3-lo3)); ps.majors[i] != nil {
						ps.walked = false // the walks change: runProd's, from here
						mb.flush(acc)
						vars(p)
						if !s.setFibLet(fr, fb) || !s.runProd(fr, in, lo3, hi3, acc) {
							return p, false
						}
						return p + 1, true
					}
				}
			}
		}
		k[fb.fi] = u*t.mul + t.add
		var p3 int64
		if one {
			kp[fb.fi] = t.ahead(k[fb.fi], p+aheadPositions) // t's row aheadPositions iterations on
			// walkOne's loop, here: a call per iteration of 1.6
			// positions (MTTKRP on WordNet) costs more than they do.
			p3 = hi3
		walk:
			for r := lo3; r < hi3; r++ {
				for i := range ws {
					w := &ws[i]
					ku, ok := w.at(r)
					if !ok {
						p3 = r
						break walk
					}
					k[w.f], kp[w.f] = ku, w.ahead(ku, r+aheadPositions)
				}
				if mb.push(k[xo], k[bo], k[2], kp[bo], kp[2]) {
					mb.flush(acc)
				}
			}
		} else {
			p3 = walkAt(mb, ws, q, k, lo3, hi3, acc)
		}
		if p3 < hi3 {
			mb.flush(acc)
			vars(p)
			if !s.setFibLet(fr, fb) || !s.runProd(fr, in, p3, hi3, acc) {
				return p, false
			}
			if one {
				mb.begin(q, xo, bo, acc) // (runProd's walks use it too)
			}
		}
	}
	mb.flush(acc)
	return hi, true
}

// prologue sets fw's views of in's walks ps and of t (factor fi), and
// whether any factor still counts toward its lane-major copy (checked
// per iteration then; once every one has its copy, or needs none, none
// is), as of ps.ver.
func (fw *fibWalk) prologue(in *lsum, ps *prodSetup, fi int) {
	fw.ver, fw.q = ps.ver, lprod{}
	at := [3]*lview{&fw.q.a, &fw.q.b, &fw.q.c}
	for _, w := range ps.ws[:ps.nw] {
		at[w.f].src, at[w.f].stride = w.src, w.stride
	}
	at[fi].src, at[fi].stride = fw.w.src, fw.w.stride
	fw.counting = false
	for i, f := range in.prod.fs {
		fw.counting = fw.counting || f != nil && in.vary[i] && ps.majors[i] == nil && copiesAcross(f.cl.reals, ps.strides[i])
	}
	fw.xo, fw.bo, fw.one = fw.q.oneValue()
}

// fibRows returns s's rowBatch readied for rows of n lanes, each the
// sum l of an lfib over the row's fibers, where runFibers' walks for
// them are made and their product is one value times lanes at every
// position (the one-value case of runFibers: MTTKRP's B_val * D row * C
// row); nil where not (yet). The rows then stage the positions of all
// their fibers, t's lanes per fiber (stageFibers), and are written a
// batch at a time, each lane's positions added in runFibers' order.
func (s *liftState) fibRows(l *lsum, n int) *rowBatch {
	fb := l.fib
	if fb == nil {
		return nil
	}
	ps, fw := &s.setups[fb.in.id], &s.fibs[fb.id]
	if ps.gen == 0 || !ps.walked || ps.wj0 != 0 || ps.wn != n || ps.nw < 0 ||
		!fw.walked || !fw.ok || fw.j0 != 0 || fw.n != n || fw.ver != ps.ver || !fw.one || fw.counting || !fw.atPos {
		return nil
	}
	rb := &s.rows
	rb.l, rb.ws, rb.n, rb.xi, rb.bi, rb.fib, rb.fi = fb.in, ps.ws[:ps.nw], n, fw.xo, fw.bo, fw, fb.fi
	rb.xs, rb.bs, rb.cs = fw.q.view(fw.xo).src, fw.q.view(fw.bo).src, fw.q.c.src
	return rb
}

// fibSpan returns the positions of the inner loop in fibers f0..f1-1
// (f0 < f1) where they follow one another and each fiber's t is inside
// its walk's bounds, else g1 < g0 (runFibers takes the row).
func (rb *rowBatch) fibSpan(f0, f1 int64) (g0, g1 int64) {
	fw := rb.fib
	for p := f0; p < f1; p++ {
		lo, hi, ok := fw.rd.at(p, p)
		if _, in := fw.w.at(p); !in || !ok || p > f0 && lo != g1 {
			return 1, 0
		}
		if p == f0 {
			g0 = lo
		}
		g1 = hi
	}
	return g0, g1
}

// stageFibers sets the offset of t's lanes at each position of fibers
// f0..f1-1, which fibSpan took, in the batch from rb.f0.
func (rb *rowBatch) stageFibers(f0, f1 int64) {
	fw := rb.fib
	dst := &rb.kc
	switch rb.fi {
	case rb.xi:
		dst = &rb.kx
	case rb.bi:
		dst = &rb.kb
	}
	for p := f0; p < f1; p++ {
		k, _ := fw.w.at(p)
		lo, hi, _ := fw.rd.at(p, p)
		for g := lo; g < hi; g++ {
			dst[g-rb.f0] = k
		}
	}
	nestSaw("lifted fibers staged")
}

// setFibLet sets fb's let of t, if it has one, as the general loop
// would before the inner loop.
func (s *liftState) setFibLet(fr *frame, fb *lfib) bool {
	return fb.let == nil || s.setLet(fr, fb.let)
}

// walkAt adds positions lo.. of walks ws into acc through q, the other
// views' offsets k, and returns the first position a walk's bounds do
// not hold at.
func walkAt(mb *mulBatch, ws []atWalk, q *lprod, k [3]int64, lo, hi int64, acc []float64) int64 {
	// A walk of a few positions (a TTM fiber's, each its own row) goes
	// position by position: a batch's set-up costs more than it saves
	// there, and addTo adds in the batch's order, to the same bits.
	if x, b, ok := q.oneValue(); ok && hi-lo > shortRun {
		mb.begin(q, x, b, acc)
		kp := k
		p := walkOne(mb, ws, &k, &kp, x, b, lo, hi, acc)
		mb.flush(acc)
		return p
	}
	for p := lo; p < hi; p++ {
		if !walkTo(ws, &k, p) {
			return p
		}
		q.a.k, q.b.k, q.c.k = k[0], k[1], k[2]
		q.addTo(acc)
	}
	return hi
}

// walkTo sets the offsets k of walks ws at position p, or reports false
// where a walk's bounds do not hold.
func walkTo(ws []atWalk, k *[3]int64, p int64) bool {
	for i := range ws {
		ku, ok := ws[i].at(p)
		if !ok {
			return false
		}
		k[ws[i].f] = ku
	}
	return true
}

// at returns walk w's offset at position p, and whether p is inside its
// bounds.
func (w *atWalk) at(p int64) (int64, bool) {
	x := p
	if w.keys != nil {
		x = w.keys[p]
	}
	u := w.rest + w.coef*x + w.sh
	return u*w.mul + w.add, uint64(u) < uint64(w.lim)
}

// run returns src's values at walk w's offsets for positions p..p+e-1
// where they are e values in a row inside its bounds (keys nil and an
// offset that steps by one: a CSF level's values, A_val(p)), else nil.
func (w *atWalk) run(src []float64, p int64, e int) []float64 {
	if w.keys != nil || w.coef != 1 || w.mul != 1 || e <= 0 {
		return nil
	}
	k0, ok0 := w.at(p)
	_, ok1 := w.at(p + int64(e) - 1)
	if !ok0 || !ok1 || k0 < 0 || k0 > int64(len(src)-e) {
		return nil
	}
	return src[k0:][:e]
}

// oneValue reports whether q's lanes are (x*b)*c as addTo computes them,
// x one value (view x of q: stride 0) and b and c (or no c) slices of
// the lanes (stride 1), and which of a and b are x and b.
func (q *lprod) oneValue() (x, b int, ok bool) {
	if q.c.src != nil && q.c.stride != 1 {
		return 0, 0, false
	}
	switch {
	case q.a.stride == 0 && q.b.stride == 1:
		return 0, 1, true
	case q.b.stride == 0 && q.a.stride == 1:
		return 1, 0, true
	}
	return 0, 0, false
}

// walkOne is walkAt for a product of one value and slices (oneValue
// says x, b): the strides known once, each position pushed into mb (set
// to q's views by the caller, who flushes it) with the offsets of
// position p+aheadPositions to fetch ahead (kp: those of the views no
// walk sets). The walks set their offsets in k and kp.
func walkOne(mb *mulBatch, ws []atWalk, k, kp *[3]int64, x, b int, lo, hi int64, acc []float64) int64 {
	for p := lo; p < hi; p++ {
		// walkTo and ahead in one pass over the walks (an offset fetched
		// ahead for a position that then fails is never pushed).
		for i := range ws {
			w := &ws[i]
			ku, ok := w.at(p)
			if !ok {
				return p
			}
			k[w.f], kp[w.f] = ku, w.ahead(ku, p+aheadPositions)
		}
		if mb.push(k[x], k[b], k[2], kp[b], kp[2]) {
			mb.flush(acc)
		}
	}
	return hi
}

// aheadPositions is how far along a walk rows are fetched ahead: about
// the misses a core keeps in flight.
const aheadPositions = 8

// ahead is the offset of walk w at position p to fetch ahead where the
// walk reads through keys (a row anywhere, which the hardware does not
// fetch ahead) and p is inside its bounds; k (the offset at hand)
// elsewhere. Another iteration's p may not be walked with these walks'
// parts: a row fetched for nothing, never a wrong read.
func (w *atWalk) ahead(k, p int64) int64 {
	if w.keys == nil || p >= int64(len(w.keys)) {
		return k
	}
	if ku, ok := w.at(p); ok {
		return ku
	}
	return k
}

// mulBatchLen is the most positions a mulBatch holds.
const mulBatchLen = 128

// mulBatch holds the positions of a walk whose product is one value
// times slices, (x*b)*c (walkOne), for one pass of the vector loop over
// them: the lanes' sums stay in registers across the positions, and the
// rows of a later position are fetched while one is added, where a call
// per position waits for each row it misses (MTTKRP's rows of its factor
// D, one random row a position). Each lane adds the positions in their
// order: the bits of a call per position.
type mulBatch struct {
	x [mulBatchLen]float64 // x's value at each position
	// kb, kc: per position, b's (c's) first lane in bs (cs), then the
	// first lane of the row to fetch ahead
	kb, kc     [mulBatchLen][2]int64
	m, n       int       // positions held; lanes
	xs, bs, cs []float64 // cs nil: no third factor
}

// begin readies an empty mb for q's views (x, b: oneValue's) and acc.
func (mb *mulBatch) begin(q *lprod, x, b int, acc []float64) {
	mb.m, mb.n = 0, len(acc)
	// A walk per fiber (TTM's) or per row (MTTKRP's fibers) begins a
	// batch over the same arrays: setSlice writes no pointer then (a
	// write barrier while the collector marks). The views are read in
	// place, not gathered into an array of slices first.
	setSlice(&mb.xs, q.view(x).src)
	setSlice(&mb.bs, q.view(b).src)
	setSlice(&mb.cs, q.c.src)
}

// view returns q's view i: a, b or c.
func (q *lprod) view(i int) *lview {
	switch i {
	case 0:
		return &q.a
	case 1:
		return &q.b
	}
	return &q.c
}

// push adds a position whose x is xs[kx], whose lanes of b and c start
// at kb and kc (pb and pc: rows to fetch ahead), and reports whether the
// batch is full: the caller flushes it (a push small enough to inline).
func (mb *mulBatch) push(kx, kb, kc, pb, pc int64) bool {
	m := mb.m & (mulBatchLen - 1) // (always mb.m: a full batch is flushed)
	mb.x[m] = mb.xs[kx]
	_ = mb.bs[kb:][:mb.n] // (the vector loop reads unchecked)
	if mb.cs != nil {
		_ = mb.cs[kc:][:mb.n]
	}
	// Two statements: a tuple assignment builds its values on the stack
	// first, and the 16-byte load of two 8-byte stores waits for them
	// (a failed store forward per position).
	mb.kb[m] = [2]int64{kb, pb}
	mb.kc[m] = [2]int64{kc, pc}
	mb.m = m + 1
	return mb.m == mulBatchLen
}

// flush adds the batch's positions into acc and empties it.
func (mb *mulBatch) flush(acc []float64) {
	if m := mb.m; m > 0 {
		nestSaw("lifted batch")
		mb.m = 0
		mb.add(acc, m)
	}
}

// addGo adds lanes w.. of the batch's first m positions into acc.
func (mb *mulBatch) addGo(acc []float64, w, m int) {
	n := len(acc)
	if w == n {
		return
	}
	for i := range m {
		var cs []float64
		if mb.cs != nil {
			cs = mb.cs[mb.kc[i][0]+int64(w):][:n-w]
		}
		mulAddScalarGo(acc[w:], mb.x[i], mb.bs[mb.kb[i][0]+int64(w):][:n-w], cs)
	}
}

// indexParts returns the stride, the rest and the coefficient of the
// loop's atom in read f's index ix.
func indexParts(fr *frame, f *lnode, ix *lindex) (stride, rest, coef int64) {
	stride, rest, coef = f.stride.c, ix.rest.c, f.base.terms[ix.t].k
	if len(f.stride.terms) > 0 {
		stride = f.stride.at(fr)
	}
	if len(ix.rest.terms) > 0 {
		rest = ix.rest.terms1(fr)
	}
	if atoms := f.base.terms[ix.t].atoms; len(atoms) > 1 {
		for ai := range atoms {
			if ai != ix.atom {
				coef *= atoms[ai].value(fr)
			}
		}
	}
	return stride, rest, coef
}

// prodSetup is runProd's work on the ats of an lsum whose indices are
// fixed, kept for the rest of run gen.
type prodSetup struct {
	gen                 uint64
	strides, rest, coef [3]int64
	majors              [3]*laneMajor
	// walked: ws[:nw] (nw < 0: none) are the walks of lanes wj0.., wn,
	// made as the set-up's ver-th (a view of them kept elsewhere is of
	// the walks at its ver).
	walked bool
	ver    uint64
	wj0    int64
	wn, nw int
	ws     [3]atWalk
}

// runSteps runs one iteration's statements into acc.
func (s *liftState) runSteps(fr *frame, st *lstep, acc []float64) bool {
	for ; st != nil; st = st.next {
		switch {
		case st.cond != nil:
			if !st.cond(fr) {
				return fr.err == nil
			}
		case st.set != nil:
			if st.set(fr); fr.err != nil {
				return false
			}
		case st.isLet:
			if !s.setLet(fr, st) {
				return false
			}
		case st.sum != nil:
			return s.runSum(fr, st.sum, acc)
		default:
			return s.add(fr, st.val, acc)
		}
	}
	return true
}

// add adds node n's lanes into acc; a product is computed into acc
// directly.
func (s *liftState) add(fr *frame, n *lnode, acc []float64) bool {
	for n.op == lGuard {
		for i := range n.tests {
			if !n.tests[i].holds(fr, s.j0, s.n) {
				return false
			}
		}
		n = n.a
	}
	if n.op == lMul {
		p := &s.prods[n.id]
		ok := s.prod(fr, n, p)
		if ok {
			p.addTo(acc)
		}
		return ok
	}
	v, sc, ok := s.eval(fr, n)
	if !ok {
		return false
	}
	if v == nil {
		for q := range acc {
			acc[q] += sc
		}
		return true
	}
	v = v[:len(acc)]
	for q := range acc {
		acc[q] += v[q]
	}
	return true
}

// values returns node n's len(dst) lanes: where they already are (an
// array's row read in place, a buffer of the state's), else written into
// dst, whatever it held, as add would write them into zeros (but for the
// sign of a zero): an inner sum accumulates in dst itself, with no
// buffer of its own to clear and copy. Only dst is written.
func (s *liftState) values(fr *frame, n *lnode, dst []float64) ([]float64, bool) {
	if n.op == lSum {
		clear(dst)
		return dst, s.runSum(fr, n.sum, dst)
	}
	v, sc, ok := s.eval(fr, n)
	switch {
	case !ok:
		return nil, false
	case v == nil:
		for q := range dst {
			dst[q] = sc
		}
		return dst, true
	}
	return v[:len(dst)], true
}

// lview is a node's lanes where they are: lane q is src[k+stride*q]. A
// stride of 0 is one value for every lane, 1 a slice, any other a read
// across an array, left in place rather than gathered.
type lview struct {
	src       []float64
	k, stride int64
}

// view evaluates n into v.
func (s *liftState) view(fr *frame, n *lnode, v *lview) bool {
	switch n.op {
	case lRead:
		var ok bool
		v.src, v.k, v.stride, ok = s.strided(fr, n)
		return ok
	}
	x, sc, ok := s.eval(fr, n)
	if x == nil {
		one := s.lanes(n)[:1]
		one[0] = sc
		v.src, v.k, v.stride = one, 0, 0
		return ok
	}
	v.src, v.k, v.stride = x, 0, 1
	return ok
}

// lprod is a product of two or three views, each lane (a*b)*c (c.src
// nil: a*b). A product whose other operand is itself a product of two
// becomes three views: its lanes are then computed in one pass, with
// the same roundings as the products made one at a time.
type lprod struct{ a, b, c lview }

// prod evaluates the factors of product n into p (n's own).
func (s *liftState) prod(fr *frame, n *lnode, p *lprod) bool {
	ok := s.view(fr, n.fs[0], &p.a) && s.view(fr, n.fs[1], &p.b)
	if n.fs[2] == nil {
		p.c.src = nil
	} else {
		ok = ok && s.view(fr, n.fs[2], &p.c)
	}
	return ok
}

// dot returns acc plus the product's first n lanes, added in lane order.
func (p *lprod) dot(acc float64, n int) float64 {
	a, b, c := &p.a, &p.b, &p.c
	if a.stride == 1 && b.stride == 1 && c.src == nil {
		as, bs := a.src[a.k:][:n], b.src[b.k:][:n]
		for q := range as {
			acc += float64(as[q] * bs[q])
		}
		return acc
	}
	as, ak, astep := a.src, a.k, a.stride
	bs, bk, bstep := b.src, b.k, b.stride
	if c.src == nil {
		for range n {
			acc += float64(as[ak] * bs[bk])
			ak += astep
			bk += bstep
		}
		return acc
	}
	cs, ck, cstep := c.src, c.k, c.stride
	for range n {
		acc += float64(float64(as[ak]*bs[bk]) * cs[ck])
		ak += astep
		bk += bstep
		ck += cstep
	}
	return acc
}

// setTo writes the product's lanes into out and reports whether none is
// zero (or -0): checked as each lane is written, not read back (a row's
// lanes are fresh output, still on their way to memory).
func (p *lprod) setTo(out []float64) bool {
	a, b, c := &p.a, &p.b, &p.c
	zero := false
	if a.stride == 1 && b.stride == 1 && c.src == nil {
		as, bs := a.src[a.k:][:len(out)], b.src[b.k:][:len(out)]
		for q := range out {
			v := as[q] * bs[q]
			out[q] = v
			zero = zero || v == 0
		}
		return !zero
	}
	as, ak, astep := a.src, a.k, a.stride
	bs, bk, bstep := b.src, b.k, b.stride
	if c.src == nil {
		for q := range out {
			v := as[ak] * bs[bk]
			out[q] = v
			zero = zero || v == 0
			ak += astep
			bk += bstep
		}
		return !zero
	}
	cs, ck, cstep := c.src, c.k, c.stride
	for q := range out {
		v := float64(as[ak]*bs[bk]) * cs[ck]
		out[q] = v
		zero = zero || v == 0
		ak += astep
		bk += bstep
		ck += cstep
	}
	return !zero
}

// addTo adds the product's lanes into acc: where each view is one value
// or a slice (a read across is one once copied lane-major), a loop over
// slices, bounds checked once.
func (p *lprod) addTo(acc []float64) {
	a, b, c := &p.a, &p.b, &p.c
	if b.stride == 0 {
		a, b = b, a // the one value first (a*b == b*a)
	}
	n := len(acc)
	if (a.stride == 0 || a.stride == 1) && b.stride == 1 && (c.src == nil || c.stride == 1) {
		bs := b.src[b.k:][:n]
		switch {
		case a.stride == 0 && c.src == nil:
			mulAddScalar(acc, a.src[a.k], bs, nil)
		case a.stride == 0:
			mulAddScalar(acc, a.src[a.k], bs, c.src[c.k:][:n])
		case c.src == nil:
			as := a.src[a.k:][:n]
			for q := range acc {
				acc[q] += float64(as[q] * bs[q])
			}
		default:
			as, cs := a.src[a.k:][:n], c.src[c.k:][:n]
			for q := range acc {
				acc[q] += float64(float64(as[q]*bs[q]) * cs[q])
			}
		}
		return
	}
	as, ak, astep := a.src, a.k, a.stride
	bs, bk, bstep := b.src, b.k, b.stride
	if c.src == nil {
		for q := range acc {
			acc[q] += float64(as[ak] * bs[bk])
			ak += astep
			bk += bstep
		}
		return
	}
	cs, ck, cstep := c.src, c.k, c.stride
	for q := range acc {
		acc[q] += float64(float64(as[ak]*bs[bk]) * cs[ck])
		ak += astep
		bk += bstep
		ck += cstep
	}
}

// mulAddScalarGo adds (x*bs[q])*cs[q] (cs nil: x*bs[q]) into acc, the
// slices as long as acc.
func mulAddScalarGo(acc []float64, x float64, bs, cs []float64) {
	bs = bs[:len(acc)]
	if cs == nil {
		for q := range acc {
			acc[q] += float64(x * bs[q])
		}
		return
	}
	cs = cs[:len(acc)]
	for q := range acc {
		acc[q] += float64(float64(x*bs[q]) * cs[q])
	}
}
