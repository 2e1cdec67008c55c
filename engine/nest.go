package engine

import (
	"fmt"

	"github.com/storel/storel/ir"
)

// The loop-nest IR. A sum of the plan lowers to an nloop: a level
// iterator (iterKind) whose variables live in frame slots, the guards and
// lets of its body placed on it, and either a vectorized body (a leaf
// loop: a typed expression of factor accessors evaluated over batches of
// positions, vloop) or statements run once per iteration (nstmt): guards
// discharged or tested, lets, singletons into a sink, inner loops. Inner
// sums are lowered in turn by compileLoop, so every level of a nest is an
// nloop; a plan any level of which the IR cannot express keeps the older
// compilation for that level.
//
// Execution was chosen by measurement (BenchmarkNestShapes, go test
// ./engine -run XXX -bench NestShapes -count 3, 2-core Xeon shared with
// other jobs, ms per run, median of 3; the "loop" is a Go loop written
// for the plan, what a template generated per IR combination would run):
//
//	shape                        batches  older paths  loop
//	SpMV, x a tensor (1M nnz)      13.4      40.7      16.5
//	BATAX, x a tensor              90.7      93.4      23.1
//	dense matrix x vector 2000^2   19.4     647.8       8.4
//	MTTKRP, dense rank 16         859.8    1532.1      18.9
//
// Batches match a written loop where rows or batches are long, and cost
// tens of times its time where inner loops hold a few entries each
// (MTTKRP's fibers), where the per-batch overhead dominates. Templates
// generated for every iterator x accessor x sink combination would close
// that gap at the price of a generator and its combinatorial output;
// position space across more than two levels would too, within this
// design. Run-time code generation was left out: it needs a compiler at
// run time or a pure-Go backend this module does not have.
//
// Short inner loops (BenchmarkShortLoops, go test ./engine -run XXX
// -bench ShortLoops -count 3, same machine, min / median of 3, ms; "one
// batch a call" is the engine before a product of factors and a sum
// lowered into the nest, "now" with it, the factors and keys over a
// block's rows in batches, and calls of up to 3 positions lane by lane):
//
//	shape (optimizer's plan)          one batch a call   now         loop
//	MTTKRP, 1 entry a fiber, rank 16     503 / 552     127 / 208   15 / 30
//	  the same, guards kept              577 / 1548    362 / 576      -
//	SDDMM, rank 8                        298 / 397      38 / 101   2.4 / 5
//
// Lane by lane (lane.go) wins only on calls of 1-3 positions: at 8 a
// batch is 1.3-1.9x faster, at 32 3-6x; lanes inside a block of position
// space lost 1.5-2x at the ~17 positions of MTTKRP's blocks and were
// left out.

// iterKind is the level iterator of a loop.
type iterKind uint8

const (
	itRange   iterKind = iota // lo:hi, key = value
	itArray                   // a whole physical array: key a position, value the entry
	itSegment                 // A(lo:hi): positions lo..hi-1 of A
	itDict                    // a dictionary the plan built (nesttemp.go)
	itRuns                    // runs(A(lo:hi)): the first position of each run of equal values (runs.go)
	itMerge                   // the intersection of two sorted segments (nestmerge.go)
)

func (k iterKind) String() string {
	return [...]string{"range", "dense array", "segment", "built dictionary", "merge"}[k]
}

// nloop is one lowered sum.
type nloop struct {
	e      *ir.Expr
	kind   iterKind
	arr    *cell    // itArray, itSegment, itRuns: the array iterated
	runs   runSlots // itRuns: where the current run's end is kept
	open   func(fr *frame) (int64, int64, bool)
	seg    *segBounds // itSegment: bounds P(x+c):P(x+c+1) read in place, or nil
	ks, vs int        // frame slots of the key and value, -1 when unused
	vreal  bool
	dslot  int  // itDict: the frame's dictionary slot holding the source
	vdict  bool // itDict: the values are dictionaries
	hash   bool // itDict: the source is a row of a physical hash map (hashlevels.go)
	sink   loopBody
	stmt   *nstmt // per-iteration body, or nil when vec is set
	vec    *vloop
	// rows: the body is a singleton keyed by the loop's own range key
	// (or a hash map's first-level key), so iterations write disjoint
	// entries of a dense result and a parallel split needs no private
	// copies: scalars of a depth-1 result, or rows scattered into (in
	// the row's workspace) of a nested one (see sharedRows).
	rows bool
	// rowsIfIncreasing: rows holds only for a run whose keys, read from
	// the index array the loop walks, increase (checked per run).
	rowsIfIncreasing bool
	// rowRange: a range loop in position space whose bounds read the
	// enclosing loop's variables, laid out row by row (nestflat.go).
	rowRange bool
	// laid: a loop over a built dictionary in position space, each
	// row's entries laid out in the block one after another (laidRows).
	laid   bool
	split  bool      // the outermost sum of a parallel run: its iterations are split across workers
	workBy string    // split: the work its chunks share equally (split.go), or "" for equal counts
	flat   *flatPlan // the body runs in position space (nestflat.go)
	flatID int
	lift   *liftLoop // a range whose lanes run the inner loops once (nestlift.go)
	// inOrder: split, its rows arrive in order (seqrows.go), a private
	// result per chunk appended in chunk order; inOrderIfIncreasing: where
	// the keys read from the array walked increase (checked per run).
	inOrder, inOrderIfIncreasing bool
	// orig: the loops as written of a range swapped outward (nestswap.go),
	// run where the range is empty
	orig *nloop
	// wsRow: a leaf segment loop scattering into a dense real row, one
	// call per segment (nestrows.go).
	wsRow    *segScatter
	rowsc    *rowsScatter // a loop over such leaves, run in batches of its positions
	merge    *nmerge      // itMerge: the intersection and its body
	mrow     *rowMerge    // the body is one merge into a row (nestmerge.go)
	liftID   int
	liftRows *liftRows     // the body opens a row that a lifted range fills (nestliftrows.go)
	rowsOf   *nloop        // the body opens a row of rows that such a loop fills (nestliftrows.go)
	up       *nloop        // the loop whose rows, of all iterations at once, run in position space (parentFlat)
	upSingle *nstmt        // with up: the singleton whose row each iteration's rows go to, or nil
	proofs   []*guardProof // the statement guards facts may discharge, decided per entry
	scope0   int           // the compiler's scope depth inside the loop's variables
	info     nestInfo
}

// nestInfo is what explain shows of a loop.
type nestInfo struct {
	iter   string
	guards []string
	lets   []string
	sink   string
	exec   string
}

// stmtKind is the kind of a per-iteration statement.
type stmtKind uint8

const (
	stGuard  stmtKind = iota // if cond then next
	stLet                    // let slot = value in next
	stLoop                   // an inner loop adding into the same sink
	stSingle                 // {key -> value} into the sink's builder
	stScalar                 // a scalar value added into the sink's accumulator
)

// nstmt is a statement of a loop body run once per iteration.
type nstmt struct {
	kind stmtKind
	next *nstmt
	// stGuard: the condition and, when it is a bounds test of the loop's
	// key against invariants, the facts that may discharge it.
	cond  boolFn
	proof *guardProof
	// stLet: set computes the value into lslot; or loop sums it into
	// accF or accI
	set     func(fr *frame)
	post    realFn // a let of factors times a sum: the let's value from the sum's
	posti   intFn  // the same for an int sum and int factors
	postVec *vloop // post over a block of rows in position space, or nil
	keyVec  *vloop // stSingle: its rows' keys and sums into the sink in batches, or nil
	postOf  *ir.Expr
	postE   *ir.Expr // post's expression, the sum a variable sum·accF
	// pre: the factors the interpreter evaluates before the sum, for
	// their errors when the sum fails (preErr), or nil
	pre     []cx
	letOf   *ir.Expr // a let of a scalar computed without a loop: its value
	sumOf   *ir.Expr
	name    string
	lslot   int
	realLet bool
	// stLoop, stSingle with a summed scalar value
	loop *nloop
	// stSingle
	key   intFn
	keyE  *ir.Expr
	child *bspec // the value is a dictionary added into the child at key
	// scattered: the child is a row the loops below scatter into
	// (nestrows.go), which sequential mode does not serve.
	scattered bool
	accF      int // scalar value summed by loop into this real slot
	accI      int
	val       cx // scalar value computed directly
	valE      *ir.Expr
	// rowDot: the rows' values, at their own keys, are this step's
	// segmented dot times factors invariant in the rows (planFlat).
	rowDot *rowScale
	// valVec: a real val over a block's rows as lanes (it may read the
	// body's lets per row), or nil.
	valVec *vloop
	// letVec: stLet, loop-free: its value over a block's rows as lanes,
	// or nil.
	letVec *vloop
	// into: the value is a merge whose terms add into the entry at key
	// (lowerMergeInto); into itself adds them by the closure path.
	into func(*frame, *builder)
	// stScalar
	add cx
}

// closuresOnly, set by tests, keeps every sum on the older compilation
// (the closure paths and the shape-specific loops that remain), so that
// their own tests still reach them.
var closuresOnly bool

// nestEvent, when set (by tests), hears what the lowered loops did:
// "discharged" (a guard proven for an entry), "flat" (a block of rows run
// in position space), "up" (the rows of several iterations handed to the
// inner loop at once), "dot" and "scatter" (a block run by a primitive;
// "dot-scatter" by the fused row primitive of BATAX's shape; "vector
// rows" when its rows ran four entries a step, fit_amd64.s),
// "lanes" (a short call run lane by lane), "post" (the factors of a
// product with a sum applied to a block's rows in batches), "fallback"
// (a batch or lane run through the closures), "indexed" (a built sorted
// list read through its values laid out by key), "appended" (a block's
// rows of every iteration added to the rows at their keys in sequential
// mode, no variables set per row), "laid out" (a block's rows of a built
// dictionary laid out one after another), "one by one" (a block's entries
// of a built dictionary read through its per-entry methods: no slice of
// its own to hand over).
var nestEvent func(string)

func nestSaw(ev string) {
	if nestEvent != nil {
		nestEvent(ev)
	}
}

// noNest aborts the lowering of a loop the IR cannot express.
type noNest struct{ why string }

func (c *compiler) noNest(why string) { panic(noNest{why}) }

// nestLoop lowers sum e with sink lb, or returns nil (and leaves the
// compiler's scope as it found it) when the IR cannot express it.
func (c *compiler) nestLoop(e *ir.Expr, lb loopBody) (l *loop) {
	if !c.asWritten && !c.noNests {
		if l := c.swappedLoop(e, lb); l != nil {
			return l
		}
	}
	split := c.splitNext
	c.splitNext = false
	if c.noNests {
		return nil
	}
	if lb.neg != plus {
		c.lastWhy = "it is subtracted"
		return nil
	}
	var nl *nloop
	c.nestDepth++
	n0 := len(c.nests)
	r := c.try(func(r any) bool { _, ok := r.(noNest); return ok }, func() { nl = c.lowerSum(e, lb) })
	c.nestDepth--
	if r != nil {
		c.nests = c.nests[:n0] // the inner loops lowered before it gave up
		c.lastWhy = r.(noNest).why
		if c.nestDepth == 0 {
			c.declined = append(c.declined, declined{e, c.lastWhy})
		}
		return nil
	}
	nl.split = split
	c.nests = append(c.nests, nl)
	lp := &loop{
		open: func(fr *frame) (srcState, bool) {
			lo, hi, ok := nl.open(fr)
			return srcState{lo: lo, hi: hi}, ok
		},
		count: windowCount,
		run: func(fr *frame, st srcState, from, to int64, b *builder) {
			if nl.kind == itRuns {
				// A chunk of a split run starts and ends at runs' starts.
				a := nl.arr.ints
				nl.run(fr, runStart(a, st.lo, st.lo+from, st.hi), runStart(a, st.lo, st.lo+to, st.hi), b)
				return
			}
			nl.run(fr, st.lo+from, st.lo+to, b)
		},
		nest: nl,
	}
	return lp
}

// lowerSum builds the nloop of sum e.
func (c *compiler) lowerSum(e *ir.Expr, lb loopBody) *nloop {
	if e.Op == ir.OpMerge || e.Op == ir.OpIf {
		return c.lowerMerge(e, lb)
	}
	src, body := e.Args[0], e.Args[1]
	st := c.typeOf(src)
	if st.Depth != 1 && src.Op != ir.OpVar && src.Op != ir.OpLookup && !c.isHashGlobal(src) {
		c.noNest("its source is a nested dictionary")
	}
	nl := &nloop{e: e, sink: lb}
	switch src.Op {
	case ir.OpRange:
		lo, hi := c.intExpr(src.Args[0], "range bound"), c.intExpr(src.Args[1], "range bound")
		nl.kind = itRange
		nl.open = func(fr *frame) (int64, int64, bool) { return lo(fr), hi(fr), fr.err == nil }
		nl.info.iter = "range " + ir.Format(src)
	case ir.OpGlobal:
		cl := c.cell(src)
		if cl.info.Kind != ir.ObjArray {
			c.dictIter(nl, src)
			break
		}
		nl.kind, nl.arr = itArray, cl
		nl.open = func(fr *frame) (int64, int64, bool) {
			if cl.info.Elem == ir.Real {
				return 0, int64(len(cl.reals)), true
			}
			return 0, int64(len(cl.ints)), true
		}
		nl.info.iter = "dense array " + cl.name + levelNote(cl.name)
	case ir.OpSubArray:
		g := src.Args[0]
		if g.Op != ir.OpGlobal {
			c.noNest("a window of a computed dictionary")
		}
		cl := c.cell(g)
		if cl.info.Kind != ir.ObjArray {
			c.noNest("a window of a hash map or trie")
		}
		nl.kind, nl.arr = itSegment, cl
		if nl.open, nl.seg = c.segment(src, cl); nl.seg != nil {
			nl.open = nl.seg.bounds // in place, without the bounds' closures
		}
		nl.info.iter = "segment " + ir.Format(src) + levelNote(cl.name)
	case ir.OpCall:
		cl, win := c.runsArray(src)
		if cl == nil {
			c.noNest("a call's dictionary")
		}
		nl.kind, nl.arr, nl.open = itRuns, cl, win
		nl.info.iter = "runs of equal values of " + ir.Format(src.Args[0]) + levelNote(cl.name)
	default:
		c.dictIter(nl, src)
	}
	vt := st.Elem()
	nl.vdict = vt.Depth != 0
	if nl.vdict && nl.kind != itDict {
		c.noNest("its values are dictionaries")
	}
	nl.vreal = vt.Base == ir.Real
	merges, merged := countOp(body, ir.OpMerge), c.nmerge
	nl.ks, nl.vs = c.varSlots(e, body, vt)
	if nl.hash && nl.vdict {
		c.scope[len(c.scope)-1].hash = true
	}
	nl.scope0 = len(c.scope)
	defer c.unbind(2)
	if nl.kind == itRuns {
		// Its positions are not contiguous: none of the block,
		// batch or lane forms below apply.
		nl.runs = c.runSlotsOf(nl.arr, nl.ks)
		nl.stmt = c.lowerStmt(nl, body, lb)
		if c.nmerge-merged != merges {
			c.noNest("a merge (two-way intersection) other than a real sum of two segments' pairs in a product")
		}
		nl.info.exec = "per run, the next run found by reading on to a different value"
		nl.info.sink = sinkName(lb)
		return nl
	}
	if v := c.vectorize(nl, body, lb); v != nil {
		nl.vec = v
		nl.info.exec = "vectorized batches of positions"
		if containsLoop(body) {
			nl.info.exec += "; each inner sum over a range a straight loop per lane (range dot)"
		}
		if c.inRow > 0 && nl.kind == itSegment && lb.spec != nil && lb.spec.depth == 1 && lb.spec.dense && lb.spec.real {
			if nl.wsRow = scatterOf(nl, false); nl.wsRow != nil {
				nl.info.exec = "a scatter of the segment into the row by its keys, one call per segment (the row's dense workspace); otherwise " + nl.info.exec
			}
		}
	} else {
		if !containsLoop(body) {
			// A leaf the batches cannot evaluate would run a closure per
			// element: the older paths do at least as well.
			c.noNest("its body has an operation the batches cannot evaluate")
		}
		nl.stmt = c.lowerStmt(nl, body, lb)
		nl.info.exec = "per iteration"
		if nl.rowsc = c.dictRowsFirst(nl, body, lb); nl.rowsc != nil {
			nl.info.exec = "the rows and factors of a batch of positions at once, each row of the built dictionary scattered into the row by its keys (the row's dense workspace); per iteration where a batch fails"
		} else if nl.flat = c.planFlat(nl); nl.flat != nil {
			nl.flatID = c.nflat
			c.nflat++
			nl.info.exec = "blocks of iterations, inner loops in position space"
			if nl.flat.keyed != nil {
				nl.info.exec += "; each iteration's row at its key " + ir.Format(nl.flat.keyed.keyE) + " takes its lanes (in sequential mode whole rows appended where they stay)"
			}
			for _, s := range nl.flat.steps {
				if s.loop != nil && s.loop.kind == itRange && !s.loop.rowRange && s.loop.vec.dot == nil {
					nl.info.exec += fmt.Sprintf(" (per iteration when a range is longer than %d)", flatRange)
					break
				}
			}
			switch {
			case nl.flat.inter != nil && nl.flat.inter.scatter:
				nl.info.exec += "; rows whose reads interleave eight to a chunk walked from their chunk's base, each row's dot and then its scatter"
			case nl.flat.inter != nil:
				nl.info.exec += "; chunks of 8 rows whose reads interleave run as SIMD lanes"
			}
		} else {
			for s := nl.stmt; s != nil; s = s.next {
				if s.loop != nil {
					s.loop.laid = false // follows took it, another step not
				}
			}
			if nl.rowsc = c.rowsScatterOf(nl, body, lb); nl.rowsc != nil {
				nl.info.exec = fmt.Sprintf("the windows and factors of a batch of positions at once (a call of at most %d positions lane by lane), each window's segment scattered into the row by its keys (the row's dense workspace); per iteration where a batch fails", shortRun)
			} else if nl.up = c.parentFlat(nl); nl.up != nil {
				nl.info.exec = "per entry, the inner loop's rows of every iteration as one run in position space"
				if nl.upSingle != nil {
					nl.info.exec += ", each iteration's entries into its key's row (in sequential mode appended where they stay, storage sized from the walked level)"
				}
			} else if nl.liftRows = liftRowsOf(nl); nl.liftRows != nil {
				nl.info.exec = "per iteration, the lifted range's lanes written where its row stays and the row recorded closed (in sequential mode; otherwise through the builder)"
				if nl.liftRows.block {
					nl.info.exec += "; a block of rows in one loop, each row's key and inner loop's bounds read in place"
				}
			} else if nl.rowsOf = rowsOfLifted(nl); nl.rowsOf != nil {
				nl.info.exec = "per iteration, the row of rows opened and the inner loop's lifted rows run into it directly (in sequential mode)"
				if r := nl.rowsOf.liftRows; r.block && r.walked != nil {
					nl.info.exec += fmt.Sprintf("; the rows of up to %d iterations whose keys increase and whose inner iterations follow one another as one block", outerRowsLen)
				}
			}
		}
	}
	if merges > 0 {
		if nl.mrow = c.rowMergeOf(nl, lb); nl.mrow != nil {
			nl.mrow.m.row = nl.seg
			nl.info.exec = "per iteration, the merge's sum added into the row in place"
			if r := nl.mrow; r.fixed >= 0 {
				nl.info.exec += "; " + ir.Format(r.s.loop.e.Args[r.fixed]) + ", which does not move with the loop, opened once per run"
				switch {
				case r.dotKeyed:
					nl.info.exec += "; the merge-dot and its factors read at the loop's position and key, not through the frame"
				case r.idle:
					nl.info.exec += "; rows whose merges meet nothing passed over before the frame is set"
				}
				if r.index != nil {
					nl.info.exec += "; seeks in " + ir.Format(r.s.loop.e.Args[r.mv]) + " start from its rows' tables"
				}
			}
		}
		if s := nl.stmt; s != nil && nl.mrow == nil && nl.kind != itDict && nl.info.exec == "per iteration" {
			for ; s != nil && s.kind == stGuard; s = s.next {
			}
			if s != nil && s.kind == stLoop && s.loop.mrow != nil && s.loop.mrow.m.row != nil {
				nl.info.exec = "per iteration; where its guards are discharged, the rows of merges below opened in place from the loop's key"
			}
		}
		if c.nmerge-merged != merges {
			// A merge the IR did not lower would run on the closures
			// inside the nest; the older paths run the whole nest.
			c.noNest("a merge (two-way intersection) other than a real sum of two segments' pairs in a product")
		}
	} else if nl.lift = c.liftRange(nl, body, lb); nl.lift != nil {
		nl.liftID = c.nlift
		c.nlift++
		if nl.lift.leaf {
			nl.info.exec = fmt.Sprintf("lanes: a call's keys (up to %d) as one vector; otherwise %s", liftLanes, nl.info.exec)
		} else {
			nl.info.exec = fmt.Sprintf("lanes: the inner loops run once for a run of up to %d keys, every value of the key a vector of them; where a run fails, %s, the loops below as shown", liftLanes, nl.info.exec)
		}
	}
	nl.info.sink = sinkName(lb)
	// Keyed by a range's own key, or by the keys of a hash map's first
	// level (distinct, increasing): disjoint entries.
	ownKey := nl.stmt != nil && nl.stmt.kind == stSingle &&
		(nl.kind == itRange && isVarSlot(nl.stmt.keyExpr(), e.Vars[0]) ||
			nl.kind == itArray && isFirstLevelKeys(nl.arr.name) && isVarSlot(nl.stmt.keyExpr(), e.Vars[1]))
	if lb.spec != nil && lb.spec.dense {
		switch lb.spec.depth {
		case 1:
			nl.rows = ownKey && nl.stmt.child == nil ||
				nl.kind == itRange && nl.vec != nil && nl.vec.key2 == nil && nl.vec.key != nil && nl.vec.key.op == vLane
		default:
			// Rows scattered into leave sequential mode (see
			// leaveRowsInOrder), so private results would keep
			// nothing that one shared result loses.
			scattered := nl.stmt != nil && nl.stmt.kind == stSingle && nl.stmt.child != nil && nl.stmt.scattered
			nl.rows = ownKey && scattered
			if !nl.rows && scattered && (nl.kind == itArray || nl.kind == itSegment) && nl.arr.info.Elem == ir.Int &&
				isVarSlot(nl.stmt.keyExpr(), e.Vars[1]) {
				// The keys of a compressed level (dcsr's rows).
				nl.rows, nl.rowsIfIncreasing = true, true
			}
		}
	}
	return nl
}

func isVarSlot(k *ir.Expr, name string) bool { return k != nil && k.Op == ir.OpVar && k.Name == name }

// keyExpr is the key of a singleton statement.
func (s *nstmt) keyExpr() *ir.Expr { return s.keyE }

func sinkName(lb loopBody) string {
	switch {
	case lb.spec != nil:
		return "dictionary " + specName(lb.spec)
	case lb.accF >= 0:
		return "real scalar accumulator"
	}
	return "int scalar accumulator"
}

func specName(s *bspec) string {
	n := "list"
	switch {
	case s.dense:
		n = "dense"
	case !s.list:
		n = "hash"
	}
	if s.kid != nil {
		return n + " of " + specName(s.kid)
	}
	return n + " row"
}

// lowerStmt lowers the body of loop nl run once per iteration.
func (c *compiler) lowerStmt(nl *nloop, e *ir.Expr, lb loopBody) *nstmt {
	switch e.Op {
	case ir.OpIf:
		if len(e.Args) != 2 {
			break
		}
		if lb.spec == nil && c.typeOf(e.Args[1]).Depth != 0 {
			break
		}
		s := &nstmt{kind: stGuard, cond: c.boolExpr(e.Args[0])}
		s.proof = c.proveGuard(nl, e.Args[0])
		if s.proof != nil {
			nl.proofs = append(nl.proofs, s.proof)
		}
		nl.info.guards = append(nl.info.guards, guardText(e.Args[0], s.proof))
		s.next = c.lowerStmt(nl, e.Args[1], lb)
		return s
	case ir.OpLet:
		if x := c.sumLets(e.Args[0], func(v *ir.Expr) *ir.Expr {
			return &ir.Expr{Op: ir.OpLet, Vars: e.Vars, Args: []*ir.Expr{v, e.Args[1]}, Type: e.Type, Pos: e.Pos}
		}); x != nil {
			return c.lowerStmt(nl, x, lb)
		}
		if s := c.lowerLetSum(nl, e, lb); s != nil {
			return s
		}
		v := c.expr(e.Args[0])
		if v.t.Depth != 0 {
			break
		}
		var letVec *vloop
		if v.t.Base == ir.Real || v.t.Base == ir.Int {
			// In position space the rows' values are computed a batch at
			// a time, not by a call per row (flatLet).
			letVec = c.postRows(nl, e.Args[0], "")
		}
		slot := c.bind(e.Vars[0], v.t)
		s := &nstmt{kind: stLet, set: setter(v, slot), name: e.Vars[0], lslot: slot, realLet: v.t.Base == ir.Real, accF: -1, accI: -1, letOf: e.Args[0], letVec: letVec}
		nl.info.lets = append(nl.info.lets, e.Vars[0]+" = "+ir.Format(e.Args[0]))
		s.next = c.lowerStmt(nl, e.Args[1], lb)
		c.unbind(1)
		return s
	case ir.OpSum:
		if c.typeOf(e).Depth > 0 && lb.spec == nil {
			break
		}
		if f, _ := c.invariantFactors(e); f != nil && lb.spec == nil && (lb.accF >= 0) == (c.typeOf(e).Base == ir.Real) {
			// Its factors that do not depend on it apply to its total.
			if s := (&nstmt{kind: stScalar, accF: -1, accI: -1}); c.lowerProductSum(nl, s, e) {
				return s
			}
		}
		inner := c.nestLoop(e, lb)
		if inner == nil {
			c.noNest("inner loop: " + c.lastWhy)
		}
		return &nstmt{kind: stLoop, loop: inner.nest}
	case ir.OpMerge:
		if c.typeOf(e).Depth > 0 {
			if s := c.lowerMergeInto(e, lb); s != nil {
				return s
			}
			if lb.spec == nil {
				break
			}
		}
		inner := c.nestLoop(e, lb)
		if inner == nil {
			c.noNest("inner loop: " + c.lastWhy)
		}
		return &nstmt{kind: stLoop, loop: inner.nest}
	case ir.OpSingleton:
		if lb.spec == nil {
			break
		}
		vt := c.typeOf(e.Args[1])
		if v := e.Args[1]; vt.Depth == 0 && v.Op == ir.OpIf && len(v.Args) == 2 && e.Args[0].Op == ir.OpVar {
			// {k -> if c then v} adds what if c then {k -> v} adds (a
			// zero entry is no entry), and the key, a variable, cannot
			// fail first: the test becomes a guard of the loop's body.
			x := &ir.Expr{Op: ir.OpIf, Args: []*ir.Expr{v.Args[0],
				{Op: ir.OpSingleton, Args: []*ir.Expr{e.Args[0], v.Args[1]}, Type: e.Type, Pos: e.Pos}}, Type: e.Type, Pos: v.Pos}
			return c.lowerStmt(nl, x, lb)
		}
		if vt.Depth == 0 {
			if x := c.sumLets(e.Args[1], func(v *ir.Expr) *ir.Expr {
				return &ir.Expr{Op: ir.OpSingleton, Args: []*ir.Expr{e.Args[0], v}, Type: e.Type, Pos: e.Pos}
			}); x != nil {
				return c.lowerStmt(nl, x, lb)
			}
		}
		k := c.keyFn(e.Args[0])
		s := &nstmt{kind: stSingle, key: k.i, keyE: e.Args[0], accF: -1, accI: -1}
		switch {
		case lb.spec.depth > 1 && vt.Depth == lb.spec.depth-1:
			s.child = lb.spec.kid
			c.inRow++
			s.next = c.lowerChild(nl, e.Args[1], lb.spec.kid)
			c.inRow--
			s.scattered = s.child.depth == 1 && scatters(s.next)
			return s
		case lb.spec.depth == 1 && vt.Depth == 0 && productSum(e.Args[1]) != nil && c.lowerProductSum(nl, s, e.Args[1]):
			if s.accF >= 0 && lb.spec.real && !nl.keyIsRow(e.Args[0]) {
				// (Keyed by the row itself, the rows' sums go in place.)
				s.keyVec = c.rowKeys(nl, e.Args[0])
			}
			return s
		case lb.spec.depth == 1 && vt.Depth == 0 && e.Args[1].Op == ir.OpSum:
			c.noNest("inner loop: " + c.lastWhy)
		case lb.spec.depth == 1 && vt.Depth == 0:
			x := c.expr(e.Args[1])
			if lb.spec.real {
				x = toType(x, ir.Real)
			}
			s.val, s.valE = x, e.Args[1]
			if lb.spec.real && vt.Base == ir.Real {
				// In position space the rows' values are computed a batch
				// at a time, not by a call per row.
				if s.valVec = c.postRows(nl, e.Args[1], ""); s.valVec != nil && !nl.keyIsRow(e.Args[0]) {
					s.keyVec = c.rowKeys(nl, e.Args[0])
				}
			}
			return s
		}
	}
	if lb.spec == nil && c.typeOf(e).Depth == 0 {
		if x := c.sumLets(e, func(v *ir.Expr) *ir.Expr { return v }); x != nil {
			return c.lowerStmt(nl, x, lb)
		}
		// factors * sum: the sum runs as a loop of the nest into its own
		// accumulator, not through the closures of the product.
		if s := (&nstmt{kind: stScalar, accF: -1, accI: -1}); productSum(e) != nil && (lb.accF >= 0) == (c.typeOf(e).Base == ir.Real) &&
			c.lowerProductSum(nl, s, e) {
			return s
		}
		x := c.expr(e)
		if lb.accF >= 0 {
			x = toType(x, ir.Real)
		}
		return &nstmt{kind: stScalar, add: x}
	}
	c.noNest("its body is not guards, lets, singletons and loops into one sink")
	return nil
}

// lowerChild lowers the dictionary value of a singleton into a child
// builder of spec s.
func (c *compiler) lowerChild(nl *nloop, e *ir.Expr, s *bspec) *nstmt {
	return c.lowerStmt(nl, e, accumBody(s, plus))
}

// run executes iterations lo..hi-1 of the loop into b (or the sink's
// accumulator slot).
func (nl *nloop) run(fr *frame, lo, hi int64, b *builder) {
	if hi <= lo {
		// A range swapped outward runs its loops as written where the
		// range is empty, not where a worker's share of it is.
		if o := nl.orig; o != nil {
			if rlo, rhi, ok := nl.open(fr); ok && rhi <= rlo {
				if lo, hi, ok := o.open(fr); ok {
					o.run(fr, lo, hi, b)
				}
			}
		}
		return
	}
	if nl.merge != nil {
		nl.merge.run(fr, b)
		return
	}
	if nl.lift != nil && nl.lift.run(fr, nl, lo, hi, b) {
		if nl.orig != nil {
			nestSaw("range swapped outward")
		}
		return
	}
	if nl.vec != nil {
		if nl.wsRow != nil && nl.wsRow.rowScatter(fr, nl, lo, hi, b) {
			return
		}
		nl.vec.run(fr, nl, lo, hi, b)
		return
	}
	for _, pr := range nl.proofs {
		pr.decide(fr, lo, hi)
	}
	if nl.flat != nil && nl.runFlat(fr, lo, hi, b) {
		return
	}
	if nl.up != nil && nl.runUp(fr, lo, hi, b) {
		return
	}
	if nl.rowsc != nil && nl.rowsc.run(fr, nl, lo, hi, b) {
		return
	}
	if nl.mrow != nil {
		if nl.mrow.run(fr, nl, lo, hi, b, nl.mrow.m.readersOf(fr), nil) {
			return
		}
	}
	if in := nl.rowsLoop(fr); in != nil {
		nl.runRows(fr, in, lo, hi, b)
		return
	}
	if nl.liftRows != nil {
		nl.runLiftRows(fr, lo, hi, b)
		return
	}
	if nl.rowsOf != nil {
		nl.runRowsOf(fr, lo, hi, b)
		return
	}
	if nl.kind == itRuns {
		for p := lo; p < hi; {
			e := runEnd(nl.arr.ints, p, hi)
			nl.runs.set(fr, e, hi)
			nl.setVars(fr, p)
			nl.exec(fr, nl.stmt, b)
			if fr.err != nil {
				return
			}
			p = e
		}
		return
	}
	nl.runPerIteration(fr, lo, hi, b)
}

// runPerIteration runs iterations lo..hi-1 of nl's body one by one.
func (nl *nloop) runPerIteration(fr *frame, lo, hi int64, b *builder) {
	for p := lo; p < hi; p++ {
		nl.setVars(fr, p)
		nl.exec(fr, nl.stmt, b)
		if fr.err != nil {
			return
		}
	}
}

func (nl *nloop) setVars(fr *frame, p int64) {
	if nl.kind == itDict {
		nl.setDictVars(fr, p)
		return
	}
	arr := nl.arr
	if nl.kind == itRange {
		arr = nil
	}
	setIterVars(fr, nl.ks, nl.vs, arr, nl.vreal, p)
}

// setIterVars sets the key (slot ks) and value (slot vs) of position p
// of a loop over arr, or of a range (arr nil); a slot -1 is unused.
func setIterVars(fr *frame, ks, vs int, arr *cell, vreal bool, p int64) {
	if ks >= 0 {
		fr.i[ks] = p
	}
	switch {
	case vs < 0:
	case arr == nil:
		fr.i[vs] = p
	case vreal:
		fr.f[vs] = arr.reals[p]
	default:
		fr.i[vs] = arr.ints[p]
	}
}

// exec runs statement s for one iteration.
func (nl *nloop) exec(fr *frame, s *nstmt, b *builder) {
	for s != nil {
		switch s.kind {
		case stGuard:
			if (s.proof == nil || fr.i[s.proof.slot] == 0) && !s.cond(fr) {
				return
			}
		case stLet:
			if s.loop != nil {
				s.runLet(fr)
			} else {
				s.set(fr)
			}
			if fr.err != nil {
				return
			}
		case stLoop:
			lo, hi, ok := s.loop.open(fr)
			if ok {
				s.loop.run(fr, lo, hi, b)
			}
			return
		case stSingle:
			k := s.key(fr)
			if fr.err != nil {
				return
			}
			switch {
			case s.child != nil:
				if s.scattered {
					b.leaveRowsInOrder()
				}
				ch := b.child(k)
				nl.exec(fr, s.next, ch)
			case s.into != nil:
				s.mergeInto(fr, b, k)
			case s.loop != nil && s.accF >= 0:
				fr.f[s.accF] = 0
				if m := s.loop.merge; m != nil {
					// A merge without pairs adds a zero (no entry)
					// unless factors apply to it (0 times an infinity
					// is NaN).
					if !m.run(fr, nil) && s.post == nil {
						return
					}
				} else if lo, hi, ok := s.loop.open(fr); ok {
					s.loop.run(fr, lo, hi, nil)
				} else {
					return
				}
				if fr.err != nil {
					s.preErr(fr)
					return
				}
				v := fr.f[s.accF]
				if s.post != nil {
					if v = s.post(fr); fr.err != nil {
						return
					}
				}
				b.addReal(k, v)
			case s.loop != nil:
				lo, hi, ok := s.loop.open(fr)
				if !ok {
					return
				}
				fr.i[s.accI] = 0
				s.loop.run(fr, lo, hi, nil)
				v := fr.i[s.accI]
				if s.posti != nil && fr.err == nil {
					v = s.posti(fr)
				}
				switch {
				case fr.err != nil:
				case b.spec.real:
					b.addReal(k, float64(v))
				default:
					b.addInt(k, v)
				}
			default:
				s.addVal(fr, b, k)
			}
			return
		case stScalar:
			if s.loop != nil {
				s.runLet(fr)
				if fr.err != nil {
					return
				}
				if nl.sink.accF >= 0 {
					fr.f[nl.sink.accF] += fr.f[s.slot()]
				} else {
					fr.i[nl.sink.accI] += fr.i[s.slot()]
				}
				return
			}
			if nl.sink.accF >= 0 {
				v := s.add.f(fr)
				fr.f[nl.sink.accF] += v
			} else {
				v := s.add.i(fr)
				fr.i[nl.sink.accI] += v
			}
			return
		}
		s = s.next
	}
}

// preErr replaces the error of a statement's sum with that of a factor
// the interpreter evaluates before the sum, if one fails.
func (s *nstmt) preErr(fr *frame) {
	if len(s.pre) == 0 {
		return
	}
	err := fr.err
	fr.err = nil
	for _, x := range s.pre {
		if x.i != nil {
			x.i(fr)
		} else if x.f != nil {
			x.f(fr)
		}
		if fr.err != nil {
			return
		}
	}
	fr.err = err
}

// slot is the frame slot a let statement sets.
func (s *nstmt) slot() int {
	switch {
	case s.loop == nil || s.hasPost():
		return s.lslot
	case s.accF >= 0:
		return s.accF
	}
	return s.accI
}

// runLet computes a let whose value is a lowered sum into its slot.
func (s *nstmt) runLet(fr *frame) {
	if s.accF >= 0 {
		fr.f[s.accF] = 0
	} else {
		fr.i[s.accI] = 0
	}
	if lo, hi, ok := s.loop.open(fr); ok {
		s.loop.run(fr, lo, hi, nil)
	}
	switch {
	case fr.err != nil:
	case s.post != nil:
		fr.f[s.lslot] = s.post(fr)
	case s.posti != nil:
		fr.i[s.lslot] = s.posti(fr)
	}
}

// hasPost reports whether factors are applied to the statement's sum.
func (s *nstmt) hasPost() bool { return s.post != nil || s.posti != nil }

// countOp is the number of nodes of e with operator op.
func countOp(e *ir.Expr, op ir.Op) int {
	n := 0
	ir.Walk(e, func(x *ir.Expr) bool {
		if x.Op == op {
			n++
		}
		return true
	})
	return n
}

// addVal adds a singleton statement's directly computed value at key k.
func (s *nstmt) addVal(fr *frame, b *builder, k int64) {
	if s.val.f != nil {
		if v := s.val.f(fr); fr.err == nil {
			b.addReal(k, v)
		}
		return
	}
	if v := s.val.i(fr); fr.err == nil {
		b.addInt(k, v)
	}
}

// try runs f. A panic that stop accepts (a lowering giving up) is
// recovered and returned, with the compiler's scope and slot counts
// restored; any other panic goes on.
func (c *compiler) try(stop func(any) bool, f func()) (stopped any) {
	depth, ni, nf, nd := len(c.scope), c.ni, c.nf, c.nd
	defer func() {
		if r := recover(); r != nil {
			if !stop(r) {
				panic(r)
			}
			c.scope = c.scope[:depth]
			c.ni, c.nf, c.nd = ni, nf, nd
			stopped = r
		}
	}()
	f()
	return nil
}

func isNoVec(r any) bool { _, ok := r.(noVec); return ok }

// lowerLetSum lowers let x = v in body where v is a sum, or a product of
// factors and one sum (beta * (sum ...)), the sum lowered into an
// accumulator and the factors applied to it; nil for another v.
func (c *compiler) lowerLetSum(nl *nloop, e *ir.Expr, lb loopBody) *nstmt {
	v := e.Args[0]
	vt := c.typeOf(v)
	s := &nstmt{kind: stLet, accF: -1, accI: -1, name: e.Vars[0], realLet: vt.Base == ir.Real}
	if !c.lowerProductSum(nl, s, v) {
		return nil
	}
	what := "the sum below, lowered"
	if s.hasPost() {
		what = ir.Format(replaceNode(v, s.sumOf, &ir.Expr{Op: ir.OpVar, Name: "(the sum below, lowered)", Type: s.sumOf.Type}))
	}
	c.scope = append(c.scope, binding{name: e.Vars[0], t: vt, slot: s.slot()})
	nl.info.lets = append(nl.info.lets, e.Vars[0]+" = "+what)
	s.next = c.lowerStmt(nl, e.Args[1], lb)
	c.unbind(1)
	return s
}

// lowerProductSum sets statement s to compute v, a sum or a product of
// factors and one sum: the sum lowered as a loop into an accumulator
// (s.loop, s.accF or s.accI), and the factors, when there are any,
// applied to its value (s.post into s.lslot). False when v is not of
// that form or the sum cannot be lowered.
func (c *compiler) lowerProductSum(nl *nloop, s *nstmt, v *ir.Expr) bool {
	vt := c.typeOf(v)
	if vt.Depth != 0 || (vt.Base != ir.Real && vt.Base != ir.Int) {
		return false
	}
	sum := productSum(v)
	if sum == nil {
		return false
	}
	v0, sum0 := v, sum // (the invariant factors below come from inside the sum)
	if f, inner := c.invariantFactors(sum); f != nil {
		v, sum = replaceNode(v, sum, &ir.Expr{Op: ir.OpMul, Args: []*ir.Expr{f, inner}, Type: sum.Type, Pos: sum.Pos}), inner
	}
	if sum != v && vt.Base != c.typeOf(sum).Base {
		return false
	}
	st := c.typeOf(sum)
	acc := c.newSlot(st)
	inner := c.nestLoop(sum, scalarBody(st, acc))
	if inner == nil {
		return false
	}
	s.loop = inner.nest
	if st.Base == ir.Real {
		s.accF = acc
	} else {
		s.accI = acc
	}
	if sum != v {
		// The factors, computed per iteration from the sum's value.
		name := fmt.Sprintf("sum·%d", acc)
		c.scope = append(c.scope, binding{name: name, t: st, slot: acc})
		pe := replaceNode(v, sum, &ir.Expr{Op: ir.OpVar, Name: name, Type: sum.Type, Pos: sum.Pos})
		post := c.expr(pe)
		s.postVec = c.postRows(nl, pe, name)
		s.postE = pe
		for e := v0; e != sum0 && e.Op == ir.OpMul; {
			// ((a * b) * sum): a * b comes first; a * (sum * b): a.
			if x := e.Args[0]; !holds(x, sum0) {
				s.pre = append(s.pre, c.expr(x))
				e = e.Args[1]
			} else {
				e = x
			}
		}
		c.unbind(1)
		if st.Base == ir.Real {
			s.post = asReal(post)
		} else {
			s.posti = post.i
		}
		s.postOf, s.sumOf = v, sum
		s.lslot = c.newSlot(vt)
	}
	return true
}

// invariantFactors splits the factors of a scalar sum's body that do not
// depend on the sum's variables (safe, loop-free) from the others:
// sum(x * t) is t * sum(x), so t is applied once per sum instead of once
// per term, and the terms left (x) may run as a plain segmented sum. It
// returns the product of those factors and the sum of the rest, or nil
// when the body has no such factor or none depends on the sum.
func (c *compiler) invariantFactors(sum *ir.Expr) (factor, inner *ir.Expr) {
	if sum.Op != ir.OpSum || len(sum.Args) != 2 || len(sum.Vars) != 2 {
		return nil, nil
	}
	st := c.typeOf(sum)
	body := sum.Args[1]
	if st.Depth != 0 || body.Op != ir.OpMul {
		return nil, nil
	}
	it := c.typeOf(sum.Args[0])
	if it.Depth == 0 {
		return nil, nil
	}
	var inv, rest []*ir.Expr
	c.declare(sum.Vars[0], ir.IntType)
	c.declare(sum.Vars[1], it.Elem())
	for _, t := range operands(ir.OpMul, body, nil) {
		if tt := c.typeOf(t); tt.Depth != 0 || tt.Base != st.Base || t.Type.Base != st.Base {
			inv = nil // a mixed product keeps its conversions in place
			break
		}
		fv := ir.FreeVars(t)
		if !fv[sum.Vars[0]] && !fv[sum.Vars[1]] && !containsLoop(t) && safe(t) {
			inv = append(inv, t)
		} else {
			rest = append(rest, t)
		}
	}
	c.unbind(2)
	if len(inv) == 0 || len(rest) == 0 {
		return nil, nil
	}
	prod := func(ts []*ir.Expr) *ir.Expr {
		p := ts[0]
		for _, t := range ts[1:] {
			p = &ir.Expr{Op: ir.OpMul, Args: []*ir.Expr{p, t}, Type: st, Pos: t.Pos}
		}
		return p
	}
	in := *sum
	in.Args = []*ir.Expr{sum.Args[0], prod(rest)}
	return prod(inv), &in
}

// sumLets rewrites a product of scalar sums and loop-free factors,
// (sum ...) * (sum ...) * f, into lets of all the sums but the last,
// let s1 = (sum ...) in wrap(s1 * (sum ...) * f): each sum then runs as a
// loop of the nest into its own accumulator (a let of the body, per row
// in position space), and the last takes the rest as its factors, where
// otherwise the product would run its sums through closures. Nil for
// another v.
func (c *compiler) sumLets(v *ir.Expr, wrap func(*ir.Expr) *ir.Expr) *ir.Expr {
	if v.Op != ir.OpMul || productSum(v) != nil {
		return nil
	}
	var sums []*ir.Expr
	for _, t := range operands(ir.OpMul, v, nil) {
		switch {
		case t.Op == ir.OpSum && c.typeOf(t).Depth == 0:
			sums = append(sums, t)
		case containsLoop(t):
			return nil
		}
	}
	if len(sums) < 2 {
		return nil
	}
	type bound struct {
		name string
		sum  *ir.Expr
	}
	var lets []bound
	for _, sm := range sums[:len(sums)-1] {
		c.fresh++
		name := fmt.Sprintf("factor·%d", c.fresh)
		lets = append(lets, bound{name, sm})
		v = replaceNode(v, sm, &ir.Expr{Op: ir.OpVar, Name: name, Type: sm.Type, Pos: sm.Pos})
	}
	x := wrap(v)
	for i := len(lets) - 1; i >= 0; i-- {
		x = &ir.Expr{Op: ir.OpLet, Vars: []string{lets[i].name}, Args: []*ir.Expr{lets[i].sum, x}, Type: x.Type, Pos: x.Pos}
	}
	return x
}

// productSum returns the one sum of v reached through products only, or
// nil.
func productSum(v *ir.Expr) *ir.Expr {
	switch v.Op {
	case ir.OpSum, ir.OpMerge:
		return v
	case ir.OpIf:
		if len(v.Args) == 2 && v.Args[1].Op == ir.OpMerge && !containsLoop(v.Args[0]) {
			return v // a guarded merge (lowerMerge)
		}
	case ir.OpMul:
		a, b := productSum(v.Args[0]), productSum(v.Args[1])
		switch {
		case a != nil && b == nil && !containsLoop(v.Args[1]):
			return a
		case b != nil && a == nil && !containsLoop(v.Args[0]):
			return b
		}
	}
	return nil
}

// holds reports whether node n is e or inside it.
func holds(e, n *ir.Expr) bool {
	if e == n {
		return true
	}
	for _, a := range e.Args {
		if holds(a, n) {
			return true
		}
	}
	return false
}

// replaceNode copies e with node old replaced by with.
func replaceNode(e, old, with *ir.Expr) *ir.Expr {
	if e == old {
		return with
	}
	c := *e
	c.Args = make([]*ir.Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = replaceNode(a, old, with)
	}
	return &c
}
