package opt

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
)

// Cost coefficients of Fig. 6, in units of one scalar operation (~1 ns).
// They are variables only so that the calibration can price a plan's
// terms one coefficient at a time; nothing else changes them.
//
// TestCalibrate (calibrate_test.go) runs the optimizer's plans of the
// paper kernels over csr, dcsr, csc, coo, hash and sell, and MTTKRP over
// the real 3-tensors with D in each layout, in the engine and fits these
// coefficients to their median CPU time per run, or fastest with
// -opt.calibrate.fastest (non-negative least squares on log(model/time),
// a level per group of plans that compute the same thing, or one level
// with -opt.calibrate.levels one); -opt.calibrate.only fits the
// coefficients named, the others held:
//
//	go test ./opt -run 'TestCalibrate$' -opt.calibrate -v -opt.calibrate.data DIR -opt.calibrate.only loopRerun
//
// bench/results/calibrate.txt holds its report: each coefficient fitted,
// its standard error and spread when each round is fitted alone, and
// each plan's and group's residual. The levels differ by 20x from
// kernel to kernel (the engine's row kernels run an array step in a
// fraction of a unit), which is why one level determines no
// coefficient. loopRerun is fitted so. iterRange keeps 0, fitted on an idle machine
// (0 in every round); iterHash and loopCall come from the variants
// experiment (their comments). The other fitted values are not adopted: taken together they turn MTTKRP's
// merge into a filtered scan and change which TTV plan wins, plans the
// clock has not confirmed, and several move by 2x or more from round to
// round on the shared 2-core machine; taken one at a time they are not a
// fit. mergeStep fits 3.8-4.4 in every run, but at 4 MTTKRP with csr
// factors leaves its merge for a plan that builds a column of D per entry
// of B on the engine's closure path, ten times slower by the clock. The
// ratios of the hash map to the dense array come from BenchmarkLayouts
// (coef_test.go: iterating a map 4-5 times a slice, a random read
// 10-50 times, accumulating 20-120 times), tempDict from
// engine.TestRealMTTKRPRatio.
var (
	costScalarOp = 1.0 // +, *, comparisons, ... on scalars
	costCall     = 5.0 // exp, log, sqrt, ... (a few scalar operations)

	// iterRange (fitted) is γ_iter of a range: the key is the position
	// and nothing is read, and the engine runs a nest over a range of
	// rows (csr) as one row kernel where the same nest over an index
	// array (dcsr) adds each row through the builder.
	iterRange = 0.0
	iterArray = 1.0 // γ_iter of a physical array or subarray
	// iterHash is γ_iter of a dictionary the plan builds (dense or
	// hashed): the engine's loop nests iterate ranges, physical arrays
	// and stored maps' levels (iterStored) only, and walk any other
	// source through its generic dictionary values. MMM written as
	// nested sums over A and B(k)
	// (bench/programs/variants/mmm_nested.sdql, bcsstk16) builds A and B
	// and walks them in 85 ms where the fused plan takes 10 ms: 2.6M
	// more steps, about 30 ns each.
	iterHash = 30.0
	// iterStored (fitted) is γ_iter of a level of a physical hash map or
	// trie (LayoutStored): the engine walks it as a segment of its level
	// layout's arrays (engine/hashwalk.go), as a compressed level. At
	// iterHash's 30 the model priced TTV over a hash map 5x above the
	// same walk over csf, which runs as fast. TestCalibrate fits 3.2 (2.9
	// to 3.3 a round) on the SpMV, BATAX, MMM and MTTKRP plans over hash
	// maps, and 3.6-4.2 alone (-opt.calibrate.only iterStored); at 3 the
	// model ranks BATAX over a hash map above csr and coo, which run
	// 1.07-1.49x faster (bench/results/calibrate.txt).
	iterStored = 4.0

	// loopRun is the fixed cost of one run of a sum or merge (its
	// bounds, its state), paid once per run however few its steps.
	loopRun = 0.0
	// mergeRun (fitted) is loopRun for a merge: 40-52 a run fitted with
	// loopRerun and mergeStep (MTTKRP's merges of a fiber with a row of
	// D, and with D csr the walk of D's row seeking each key in the
	// fiber, bench/results/calibrate.txt). A scan for the entry at a key
	// (sum(<x, v> in row) if x == j), the loop the seek F1v makes of it
	// replaces, is charged loopRerun per run where it runs and mergeRun
	// where it stands for its seek (keyTestFV), so that the extraction
	// weighs it and the merges alike in every stage; a merge under a let
	// pays a run more (opLet).
	mergeRun = 45.0

	// loopRerun (fitted) is what a loop costs per run where it runs
	// again for each step of a loop around it whose key its source does
	// not read, and no range lifts it: MTTKRP's sum over a fiber of B
	// per entry j of a CSR row of C, in a let before {j -> c * t} (D
	// dense or hashed, or a walk of D's column with D csc). The engine
	// sets up the walk's frame and batch per run, where a row walked
	// once per row (SpMV, BATAX) runs in a row kernel and a merge that
	// meets nothing is passed over. On wordnet and orghs (rank 25,
	// density 1/32) these plans take 1.1-3x the CPU time of the merge
	// with D csr that the model without it prices above them. Fitted
	// alone, 189-215 a run over two runs (bench/results/calibrate.txt).
	loopRerun = 200.0

	lookupArray = 1.0  // γ_lookup of a dense level
	lookupHash  = 20.0 // γ_lookup of a hashed level

	insertDense = 1.0  // γ_arr-insert: accumulate into a dense array
	insertHash  = 20.0 // γ_hash-insert: accumulate into a hash map

	// insertScatter is what a dense insert adds when its key is the
	// value a loop reads from an index array (a scatter): a
	// read-modify-write at a random position per entry, which the engine
	// cannot vectorize, against a dot's read and multiply, which it runs
	// four lanes at a time. SpMV over bcsstk16 as csc (a scatter of A's
	// entries) takes 1.17-1.39x the time of csr (a dot per row), which
	// the model without it prices alike: 0.7-1.6 a scatter. SumMMM over
	// bcsstk16 csr and a factor csc takes 1.65x as long scattering A's
	// 290K entries as scattering B's 38K and dotting A with them: 4.7.
	// The fit of all plans puts it at 0 as it puts insertDense
	// (bench/results/calibrate.txt).
	insertScatter = 2.0

	// insertRow (fitted) is what a singleton whose value is a dictionary
	// adds to its insert: the row's own builder, opened, filled and
	// closed. MTTKRP over orghs with the calibration's factors (csr,
	// rank 25, density 1/32) inserting {i -> {j -> v}} per match of the
	// merges takes 25.4 ms, adding the matches into A's row i built once
	// per i 12.5 ms: about 43 ns for each of the 300K inserts
	// (TestCalibrate: 44-255 fitted a level per group, insertRow free);
	// at 0 the search took the first with mergeRun at 45.
	insertRow = 45.0

	mergeStep = 1.0 // one step of merge's two-pointer walk

	// loopCall is what a sum costs per run when its value is an operand
	// of a scalar operation ({i -> alpha * sum(...)}) rather than a
	// singleton's value, a let's value or a loop's body: the engine
	// compiles it as a kernel of its own, called once per run, outside
	// the loop nest around it. (A let's value that is a product of
	// factors and a sum runs in the nest too; it is charged all the
	// same.) SpMV as
	// {i -> alpha * sum(...)} over bcsstk16 runs in 0.92 ms, as
	// {i -> sum(...)} in 0.23 ms: 140 ns more per row.
	loopCall = 140.0

	// tempDict is the fixed cost of a dictionary built as a temporary
	// (an operand of +, - or * on dictionaries, and their result): the
	// engine allocates a builder, fills it, freezes it and then makes the
	// combined dictionary, whatever the few entries: a plan that scales a
	// merge's {j -> B*D} by C's value instead of multiplying inside the
	// singleton pays about 400 ns more per product than one that does not
	// (engine.TestRealMTTKRPRatio runs such plans), so 400 scalar
	// operations.
	tempDict = 400.0

	// liftRun is the fixed cost of one run of a lifted range (the
	// engine's nestlift.go): a range j whose body {j -> v} adds into a
	// dense real row and v walks sparse loops runs those loops once for
	// a run of j's lanes, with vectors of the lanes as accumulators; each
	// run opens them and adds the lanes into the row. MTTKRP over orghs
	// (rank 16, dense factors, 1 thread, fastest of 7) with the rank
	// inside each (i, k) fiber (300,448 runs, the engine swapping it
	// above l) takes 71 ms, with the rank above B's row (20,728 runs)
	// 35 ms, for the same products: ~130 ns a run. TestCalibrate's
	// "mttkrp dense" plans cannot tell it from iterRange (16 steps a
	// run) and fit 6.4 a step there, ~100 a run
	// (bench/results/calibrate.txt).
	liftRun = 120.0
)

// liftLanes is the most lanes one run of a lifted range carries (the
// engine's liftLanes): a longer range runs its loops once per run.
const liftLanes = 256

// costEpsilon makes every node cost strictly more than each of its
// children, so that the cheapest choices never form a cycle.
const costEpsilon = 1e-6

// stepCoef is the cost of one step of a sum over class src, whose
// cardinality is c: a range's step reads nothing, an array's reads its
// entry.
func stepCoef(g *graph, src egraph.ClassID, c Card) float64 {
	if c.Layout() == LayoutArray {
		for _, nid := range g.Nodes(src) {
			if g.Node(nid).Op == opRange {
				return iterRange
			}
		}
	}
	return iterCoef(c.Layout())
}

func iterCoef(l Layout) float64 {
	switch l {
	case LayoutArray:
		return iterArray
	case LayoutStored:
		return iterStored
	}
	return iterHash
}

// insertCoef is the cost of writing one leaf of a dictionary with card c.
func insertCoef(c Card) float64 {
	if len(c) > 0 && (c[len(c)-1].Layout == LayoutDense || c[len(c)-1].Layout == LayoutArray) {
		return insertDense
	}
	return insertHash
}

func lookupCoef(l Layout) float64 {
	if l == LayoutHash || l == LayoutLogical || l == LayoutStored {
		return lookupHash
	}
	return lookupArray
}

// Cost is the estimated cost of a plan, with its estimated cardinality.
type Cost struct {
	Value float64 // +Inf for a plan that still builds a logical dictionary
	Card  Card
}

func (c Cost) String() string {
	if math.IsInf(c.Value, 1) {
		return "∞"
	}
	return formatCount(c.Value)
}

// planCost is the cost of the cheapest term of a class: Fig. 6's number,
// and whether the term is a temporary dictionary. A sum whose body is a
// chain of singletons accumulates in place (the engine writes out[i][j] +=
// v); a body that is any other dictionary (a variable, a lookup, a scaled
// or added dictionary) is a temporary that must be added into the result
// entry by entry, which costs its entries times an insert.
//
// once is the part of v's total that closed builds contribute: a
// dictionary built by a loop that reads no variable (a transposed copy of
// a tensor, a vector of row sums) has the same value wherever it runs, and
// hoistClosed binds it by a let at the top of the plan. Its cost is then
// paid once, not per run of the loops around it, so a parent adds its
// children's once parts without scaling them; v holds the rest.
//
// Extraction picks a class's term by its cost over the runs of the class,
// runs*v + once: a build paid once against work paid per run of the loops
// around the class, which a comparison of v + once would miss (a copy of
// B dearer than one scan of B, compared in a class that runs per entry
// of A). runs is the class's (classRuns).
//
// parts and pure price what the engine hoists out of a loop: its
// vectorized loops compute a subterm of the body that reads none of the
// loop's variables and cannot fail (arithmetic and comparisons on
// variables, scalar data and constants; / and % by a non-zero constant)
// once per run of the loop, not per step. parts holds the costs of the
// operations of such subterms (the plan's pure nodes, wherever they sit
// below lookups, singletons and branches), grouped by the variables each
// reads; a sum or merge charges the parts that read none of its binders
// once per run (hoisted). pure: the whole plan is such a subterm. A read
// of a physical array at such an index joins them too: the engine reads
// an array at an index invariant in its loop once per batch of steps.
//
// lin is the set of variables a pure int plan reads only through +, -
// and multiplication by a factor that reads no variable: an index affine
// in them. The engine carries such an index across its loop's steps as a
// base and a stride (nestvec.go's affine values), so a read at an index
// that steps by a constant in the loop costs the read per step and its
// index arithmetic once per run: a part is hoisted by a loop over a
// range or an array whose lane (the key) it reads only linearly.
type planCost struct {
	v     float64
	temp  bool
	once  float64
	runs  float64
	pure  bool
	lin   varSet
	parts []costPart
	// built: the plan is a loop that builds a dictionary where it runs
	// (not a closed build, which runs once at the top).
	built bool
	// own splits v by what each operation reads (a loop's steps by its
	// source's variables, any other operation by its class's), for a
	// lifted range: the part of its body that reads not its key runs
	// once per run of lanes (see liftShare).
	own []costPart
	// loops: the plan has a sum or merge; sparse: a loop over something
	// other than a range; winFV: what the sources of its loops read;
	// topWin: what its outermost loops read, their sources and the keys
	// they are filtered on before the physical stage (keyTestFV).
	loops, sparse bool
	winFV, topWin varSet
	// lift: the plan is a singleton {liftKey -> v} with v a real scalar,
	// liftLeaf whether v has no loop: a range over the key with this
	// body is lifted by the engine (with sparse loops in v) or swapped
	// outward above a sum whose body it is (a leaf).
	lift     bool
	liftKey  uint32
	liftLeaf bool
	// swapRange: the plan is a range whose leaf body the engine moves
	// above a sum whose whole body it is (nestswap.go); rangeFV is what
	// its bounds read.
	swapRange bool
	rangeFV   varSet
	// denseKey: the plan is a dense singleton (or a branch of one) whose
	// key is the variable scatterKey; a sum that reads its key from an
	// index array scatters it (insertScatter).
	denseKey   bool
	scatterKey uint32
	// merge: the plan is a merge.
	merge bool
}

// costPart is the cost of pure operations that read exactly fv, of
// which lin only linearly (see planCost.lin).
type costPart struct {
	fv  varSet
	lin varSet
	c   float64
}

// addParts appends w times the parts of src to dst, merging parts that
// read the same variables. dst is not shared with any other plan's.
func addParts(dst, src []costPart, w float64) []costPart {
	if w == 0 {
		return dst
	}
next:
	for _, p := range src {
		for i := range dst {
			if dst[i].fv.equal(p.fv) && dst[i].lin.equal(p.lin) {
				dst[i].c += w * p.c
				continue next
			}
		}
		dst = append(dst, costPart{fv: p.fv, lin: p.lin, c: w * p.c})
	}
	return dst
}

// hoisted is the cost of the parts of p that read none of binders, or
// only lane among them and it linearly: what a loop binding them
// computes once per run. lane is the loop's key where the loop steps
// over a range or an array's positions (the engine's vectorized loops
// carry an index affine in it), else noLane.
func (s *session) hoisted(p planCost, binders []uint32, lane uint32) float64 {
	if s.noHoist {
		return 0
	}
	h := 0.0
	for _, x := range p.parts {
		reads := x.fv.intersect(binders)
		if len(reads) == 0 || len(reads) == 1 && reads[0] == lane && x.lin.has(lane) {
			h += x.c
		}
	}
	return min(h, p.v)
}

// noLane: a loop with no lane (see hoisted).
const noLane = ^uint32(0)

// lane is the key of sum n when n steps over a range or a physical
// array, whose position the engine carries as the loop's lane.
func (s *session) lane(g *graph, n egraph.Node) uint32 {
	if g.Data(n.Children[2]).Card.Layout() != LayoutArray {
		return noLane
	}
	if sym, ok := bindSym(g, n.Children[0]); ok {
		return uint32(sym)
	}
	return noLane
}

// linOf is the lin of a pure int node n of a class reading fv (see
// planCost.lin): + and - keep the variables linear in each side that
// reads them, a product those of the side that reads some variable when
// the other reads none.
func linOf(g *graph, n egraph.Node, kids []planCost, fv varSet) varSet {
	lin := func(i int) varSet {
		// The variables of fv linear in kid i: those it reads linearly
		// and those it does not read.
		out := varSet(nil)
		kfv := g.Data(n.Children[i]).FV
		for _, v := range fv {
			if !kfv.has(v) || kids[i].lin.has(v) {
				out = append(out, v)
			}
		}
		return out
	}
	switch n.Op {
	case opAdd, opSub:
		return lin(0).intersect(lin(1))
	case opNeg:
		return kids[0].lin
	case opMul:
		switch {
		case len(g.Data(n.Children[0]).FV) == 0:
			return kids[1].lin
		case len(g.Data(n.Children[1]).FV) == 0:
			return kids[0].lin
		}
	}
	return nil
}

// total is what the plan costs: its loop-scaled part and its closed
// builds, each built once.
func (p planCost) total() float64 { return p.v + p.once }

// overRuns is the plan's cost over the runs of its class.
func (p planCost) overRuns() float64 { return p.v*max(p.runs, 1) + p.once }

// nodeCost is cost(e) of Fig. 6 for one node whose children cost kids. It
// refuses (infinite cost) a logical singleton, and a node that mentions a
// variable its class need not mention: such a node would be out of scope
// where the class was moved (see Data.FV).
func (s *session) nodeCost(g *graph, class egraph.ClassID, n egraph.Node, kids []planCost) (planCost, bool) {
	if !s.nodeInScope(g, class, n) || s.unguarded && s.guardedOnly(g, n) {
		return planCost{}, false
	}
	return s.costFormula(g, class, n, kids)
}

// costFormula is nodeCost without the scope test.
func (s *session) costFormula(g *graph, class egraph.ClassID, n egraph.Node, kids []planCost) (planCost, bool) {
	d := func(i int) *Data { x := g.Data(n.Children[i]); return &x }
	k := func(i int) float64 { return kids[i].v }
	// accumulate is the cost of adding child i's value into a result,
	// when it is a temporary dictionary.
	accumulate := func(i int) float64 {
		if !kids[i].temp || d(i).Type.Depth == 0 {
			return 0
		}
		c := d(i).Card
		return c.Total() * insertCoef(c)
	}
	sum := 0.0
	maxKid := 0.0
	once := 0.0
	for _, x := range kids {
		sum += x.v
		maxKid = max(maxKid, x.v)
		once += x.once
	}
	dict := g.Data(class).Type.Depth > 0
	var c float64
	temp := dict
	// parts: the kids' hoistable parts, weighted as the formula weights
	// the kids; pure: this node may join them (see planCost).
	var parts []costPart
	kidParts := func(w float64, is ...int) {
		for _, i := range is {
			parts = addParts(parts, kids[i].parts, w)
		}
	}
	// own: the kids' own parts weighted as parts are, and this node's.
	var own []costPart
	ownKids := func(w float64, is ...int) {
		for _, i := range is {
			own = addParts(own, kids[i].own, w)
		}
	}
	self := func(fv varSet, c float64) {
		own = addParts(own, []costPart{{fv: fv, c: c}}, 1)
	}
	classFV := g.Data(class).FV
	denseRow := g.Data(class).Type.Depth == 1 && g.Data(class).Type.Base == ir.Real
	lift, liftKey, liftLeaf, swapRange, rangeFV := false, uint32(0), false, false, varSet(nil)
	denseKey, scatterKey := false, uint32(0)
	merge := false
	loops, sparse, winFV, topWin := false, false, varSet(nil), varSet(nil)
	for _, x := range kids {
		loops = loops || x.loops
		sparse = sparse || x.sparse
		winFV = winFV.union(x.winFV)
		topWin = topWin.union(x.topWin)
	}
	allKids := make([]int, len(kids))
	for i := range allKids {
		allKids[i] = i
	}
	pure := false
	switch n.Op {
	case opVar:
		pc := planCost{v: 0, temp: dict, pure: !dict}
		if !dict {
			pc.lin = singletonSet(uint32(n.Payload))
		}
		return pc, true
	case opGlobal, opInt, opReal, opBool:
		return planCost{v: 0, temp: dict, pure: !dict}, true
	case opEmpty:
		return planCost{v: 0, temp: dict}, true
	case opCall:
		kidParts(1, allKids...)
		c = costCall + sum + s.loopCalls(g, n)
		switch s.symName(n.Payload) {
		case "runs":
			// A walk of runs is priced as a segment's: the reads that
			// find each run's start are its entries' (runEnd).
			c = sum
		case "runend":
			// A run's end, read on from its start, priced as a
			// compressed level's P(x+1): the walk of its entries reads
			// the same positions.
			c = sum + lookupArray
		}
		ownKids(1, allKids...)
		self(classFV, c-sum)
	case opSingle:
		switch ir.Ann(n.Payload) {
		case ir.AnnDense:
			c = sum + insertDense
			if key, ok := bindSym(g, n.Children[0]); ok {
				denseKey, scatterKey = true, uint32(key)
			}
		case ir.AnnHash:
			c = sum + insertHash
		default:
			if !s.logicalAsHash {
				return planCost{}, false
			}
			c = sum + insertHash
		}
		c += accumulate(1)
		if d(1).Type.Depth > 0 {
			c += insertRow
		}
		temp = false
		kidParts(1, allKids...)
		ownKids(1, allKids...)
		self(classFV, c-sum)
		if key, ok := bindSym(g, n.Children[0]); ok && d(1).Type.Depth == 0 && d(1).Type.Base == ir.Real {
			lift, liftKey, liftLeaf = true, uint32(key), !kids[1].loops
		}
	case opLookup:
		c = sum + lookupCoef(d(0).Card.Layout())
		kidParts(1, allKids...)
		ownKids(1, allKids...)
		self(classFV, c-sum)
		if !dict && kids[1].pure && d(0).Type.Depth == 1 && d(0).Card.Layout() == LayoutArray && s.hasOp(n.Children[0], opGlobal) {
			pure = true
			parts = addParts(parts, []costPart{{fv: g.Data(class).FV, c: lookupArray}}, 1)
		}
	case opRange, opSubArray:
		c = sum
		kidParts(1, allKids...)
		ownKids(1, allKids...)
	case opIf:
		sel := d(0).Sel
		c = k(0) + sel*k(1)
		temp = kids[1].temp
		denseKey, scatterKey = kids[1].denseKey, kids[1].scatterKey
		kidParts(1, 0)
		kidParts(sel, 1)
		ownKids(1, 0)
		ownKids(sel, 1)
		pure = !dict && kids[0].pure && kids[1].pure
	case opIfElse:
		sel := d(0).Sel
		c = k(0) + sel*k(1) + (1-sel)*k(2)
		temp = kids[1].temp || kids[2].temp
		kidParts(1, 0)
		kidParts(sel, 1)
		kidParts(1-sel, 2)
		ownKids(1, 0)
		ownKids(sel, 1)
		ownKids(1-sel, 2)
		pure = !dict && kids[0].pure && kids[1].pure && kids[2].pure
	case opLet:
		c = k(1) + k(2)
		if kids[1].built {
			// A dictionary the loop builds and binds: a builder opened,
			// filled and frozen per run, as a temporary operand is.
			c += tempDict
		}
		if kids[2].merge {
			// The engine runs a merge in place, passing over the rows
			// that meet nothing before it sets a frame, only as the
			// direct body of the loop around (engine rowMergeOf); under
			// a let each run sets its frame: about a merge's run again.
			// MTTKRP over orghs with the e2e factors (csr, rank 25,
			// density 1/32), the same merges with C's value let-bound
			// outside them: 20.8 ms against 10.4 ms, 234K runs.
			c += mergeRun
		}
		temp = kids[2].temp
		ownKids(1, 1, 2)
		self(classFV, c-k(1)-k(2))
		if b := kids[2]; b.lift && kids[1].loops && !kids[1].built {
			// let t = sum(...) in {j -> v}: the engine lifts the range
			// over j all the same, the let's loops run per run of lanes.
			lift, liftKey = true, b.liftKey
		}
	case opSum:
		src := d(2).Card
		// The layout's coefficient prices a step of the iteration, not
		// the body: a body under a hash map's loop costs what it costs
		// under an array's. The body's invariants run once per run.
		binders := s.binderSyms(g, n)
		h := s.hoisted(kids[3], binders, s.lane(g, n))
		size, step := src.Size(), stepCoef(g, n.Children[2], src)
		c = k(2) + loopRun + h + size*(step+k(3)-h+accumulate(3))
		temp = kids[3].temp
		loops = true
		winFV = winFV.union(d(2).FV)
		keyFV := s.keyTestFV(g, n)
		topWin = d(2).FV.union(keyFV)
		if len(keyFV) > 0 {
			// A scan for the entry at a key runs again per value of the
			// key: charged here, where the extraction can weigh it
			// against the seek F1v makes of it, not to the loop around.
			// Where it stands for that seek, it pays the seek's run.
			run := loopRerun
			if s.scansAsSeeks {
				run = mergeRun
			}
			c += run
			self(keyFV, run)
		}
		isRange := src.Layout() == LayoutArray && s.hasOp(n.Children[2], opRange)
		sparse = sparse || !isRange
		key, keyed := bindSym(g, n.Children[0])
		body := kids[3]
		// extra: what lifting and swapping change, charged per run.
		extra := 0.0
		switch {
		case isRange && keyed && denseRow && body.lift && body.liftKey == uint32(key) && !body.liftLeaf && body.sparse && !body.winFV.hasAny(binders...):
			// Lifted: the body's loops run once per run of lanes, so
			// what of the body reads not the key is paid per run.
			runs := max(1, math.Ceil(size/liftLanes))
			shared := liftShare(body, binders, h)
			extra = runs*liftRun - (size-runs)*shared
		case isRange && keyed && denseRow && body.lift && body.liftKey == uint32(key) && body.liftLeaf:
			swapRange, rangeFV = true, d(2).FV
		case n.Op == opSum && denseRow && body.swapRange && !body.rangeFV.hasAny(binders...):
			// The range below moves above this loop and lifts: one run
			// per run of this loop, not per step.
			extra = liftRun
		case !isRange && body.loops && len(body.winFV) > 0 && !body.winFV.hasAny(binders...) && !body.topWin.hasAny(binders...):
			// The body's loops walk sources that do not move with this
			// loop, and nothing lifts them: they run again per step. An
			// outer one filtered on this loop's key is a seek at it.
			extra = size * loopRerun
		}
		c += extra
		if val, ok := bindSym(g, n.Children[1]); ok && !isRange && src.Layout() == LayoutArray && body.denseKey && body.scatterKey == uint32(val) {
			c += size * insertScatter
			self(d(2).FV, size*insertScatter)
		}
		ownKids(1, 2)
		ownKids(size, 3)
		self(d(2).FV, loopRun+size*step)
		self(d(2).FV, h-size*h+extra)
		self(classFV, size*accumulate(3))
	case opMerge:
		n1, n2 := d(3).Card.Size(), d(4).Card.Size()
		h := s.hoisted(kids[5], s.binderSyms(g, n), noLane)
		c = k(3) + k(4) + mergeRun + h + mergeStep*mergeSteps(n1, n2, s.hasOp(n.Children[3], opSubArray), s.hasOp(n.Children[4], opSubArray)) + mergeMatches(n1, n2)*(costScalarOp+k(5)-h+accumulate(5))
		temp = kids[5].temp
		loops, sparse = true, true
		winFV = winFV.union(d(3).FV).union(d(4).FV)
		topWin = d(3).FV.union(d(4).FV)
		ownKids(1, 3, 4)
		ownKids(mergeMatches(n1, n2), 5)
		self(classFV, c-k(3)-k(4)-mergeMatches(n1, n2)*k(5))
		merge = true
	default:
		if isBinaryOp(n.Op) || n.Op == opNeg || n.Op == opNot {
			c = sum + costScalarOp
			if dict {
				c = sum + tempDict + s.dictOpCost(n, d)
			} else {
				c += s.loopCalls(g, n)
			}
			kidParts(1, allKids...)
			ownKids(1, allKids...)
			self(classFV, c-sum)
			if !dict && s.cannotFail(g, n) {
				pure = true
				for _, x := range kids {
					pure = pure && x.pure
				}
				if pure {
					lin := linOf(g, n, kids, g.Data(class).FV)
					parts = addParts(parts, []costPart{{fv: g.Data(class).FV, lin: lin, c: costScalarOp}}, 1)
				}
			}
		} else {
			return planCost{}, false
		}
	}
	pc := planCost{v: max(c, maxKid) + costEpsilon, temp: temp && dict, once: once, runs: s.classRuns(g, class), pure: pure, parts: parts,
		own: own, loops: loops, sparse: sparse, winFV: winFV, topWin: topWin, lift: lift, liftKey: liftKey, liftLeaf: liftLeaf, swapRange: swapRange, rangeFV: rangeFV,
		denseKey: denseKey, scatterKey: scatterKey, merge: merge}
	if pure && g.Data(class).Type.Base == ir.Int {
		pc.lin = linOf(g, n, kids, g.Data(class).FV)
	}
	// A let's value is built where its body is (let t10 = t1 in sum(...)).
	pc.built = dict && (n.Op == opSum || n.Op == opMerge || n.Op == opLet && kids[2].built)
	if s.closedBuild(g, class, n) {
		// Read where it is used, built once at the top.
		pc.v, pc.once, pc.built, pc.own = costEpsilon, pc.total(), false, nil
	}
	return pc, true
}

// liftShare is what of a lifted range's body (cost body, its invariants
// h hoisted already) reads none of the range's binders: the loops the
// engine runs once for a run of lanes, their steps and the reads and
// products at their positions.
func liftShare(body planCost, binders []uint32, h float64) float64 {
	inv := 0.0
	for _, x := range body.own {
		if !x.fv.hasAny(binders...) {
			inv += x.c
		}
	}
	return max(0, min(inv-h, body.v-h))
}

// keyTestFV is what the test of sum n's body compares a binder with
// (sum(<x, v> in row) if x == j then ...): such a scan finds the entry at
// j, so its window moves with j as a lookup's would, and it runs once per
// value of j. Before the physical stage it stands for the seek F1v makes
// of it there (a merge with j:j+1, session.scansAsSeeks) and is charged
// the seek's mergeRun per run; after, it is charged loopRerun per run,
// where the seek is charged mergeRun.
func (s *session) keyTestFV(g *graph, n egraph.Node) varSet {
	binders := s.binderSyms(g, n)
	var fv varSet
	for _, bid := range g.Nodes(n.Children[3]) {
		b := g.Node(bid)
		if b.Op != opIf && b.Op != opIfElse {
			continue
		}
		for _, tid := range g.Nodes(b.Children[0]) {
			t := g.Node(tid)
			if t.Op != opEq {
				continue
			}
			for i, side := range t.Children {
				if k, ok := bindSym(g, side); ok && slices.Contains(binders, uint32(k)) {
					fv = fv.union(g.Data(t.Children[1-i]).FV)
				}
			}
		}
	}
	return fv
}

// binderSyms are the variables a sum or merge node binds.
func (s *session) binderSyms(g *graph, n egraph.Node) []uint32 {
	var out []uint32
	for i := range binderCount(n.Op) {
		if sym, ok := bindSym(g, n.Children[i]); ok {
			out = append(out, uint32(sym))
		}
	}
	return out
}

// cannotFail reports whether scalar operation n cannot fail, as the
// engine decides it for an invariant: / and % of ints only by a non-zero
// constant.
func (s *session) cannotFail(g *graph, n egraph.Node) bool {
	if n.Op != opDiv && n.Op != opMod {
		return true
	}
	if g.Data(n.Children[0]).Type.Base == ir.Real || g.Data(n.Children[1]).Type.Base == ir.Real {
		return n.Op == opDiv
	}
	d := g.Data(n.Children[1])
	return d.Known && d.Value != 0 && s.hasOp(n.Children[1], opInt)
}

// closedBuild reports whether node n of class builds a dictionary by a
// loop that reads no variable and cannot fail: hoistClosed moves such a
// term out of every loop, so its cost is charged once (planCost.once).
// The class's FV is what every term of it needs; extraction builds it from
// nodes whose free variables lie within FV, so an empty FV makes the
// extracted term closed.
func (s *session) closedBuild(g *graph, class egraph.ClassID, n egraph.Node) bool {
	if s.inPlace || n.Op != opSum && n.Op != opMerge {
		return false
	}
	d := g.Data(class)
	return d.Type.Depth > 0 && len(d.FV) == 0 && d.Safe
}

// loopCalls is loopCall for each operand of the scalar operation n that
// is a sum, run by the engine as a kernel of its own. It asks whether
// the operand's class holds a scalar sum, not whether the cheapest term
// of the class is one: a node's cost must depend on its children's costs
// alone, or the extraction's fixed point keeps costs its choices no
// longer have.
func (s *session) loopCalls(g *graph, n egraph.Node) float64 {
	c := 0.0
	for _, k := range n.Children {
		if g.Data(k).Type.Depth == 0 && s.hasOp(k, opSum) {
			c += loopCall
		}
	}
	return c
}

// mergeSteps estimates the steps of merge's walk over sorted vectors of n1
// and n2 entries: the engine gallops over the longer side (an exponential
// then binary search per key of the shorter one), so a short fiber against
// a long row costs the short side times a logarithm, and two vectors of
// similar length cost their two lengths. rows1 and rows2: the side is a
// row of a segmented array (I(P(x):P(x+1))), which the engine gives a
// bucket table when its rows are long (engine/seekindex.go, from 64
// entries): a seek in it starts at its key's bucket, about one step.
func mergeSteps(n1, n2 float64, rows1, rows2 bool) float64 {
	short, long := min(n1, n2), max(n1, n2)
	if short <= 0 {
		return 1
	}
	if longRows := n1 >= n2 && rows1 || n2 > n1 && rows2; longRows && long >= seekTableFrom {
		return min(n1+n2, 2*short)
	}
	return min(n1+n2, short*(1+2*math.Log2(1+long/short)))
}

// seekTableFrom is the engine's seekIndexFrom: the shortest row given a
// bucket table.
const seekTableFrom = 64

// dictOpCost is the cost of +, - or * on dictionaries: a pass over the
// entries (a scalar factor scales every leaf; + and - insert every entry
// of both sides).
func (s *session) dictOpCost(n egraph.Node, d func(int) *Data) float64 {
	switch n.Op {
	case opNeg:
		return d(0).Card.Total() * costScalarOp
	case opMul:
		// A scaled dictionary is a new dictionary: every leaf is read
		// (the engine walks the dictionary it scales through its generic
		// values, as any source its loop nests do not iterate),
		// multiplied and written out (a temporary the enclosing sum then
		// adds up), where a product inside the singleton accumulates in
		// place.
		a, b := d(0).Card, d(1).Card
		switch {
		case len(a) == 0:
			return b.Total() * (iterHash + costScalarOp + insertCoef(b))
		case len(b) == 0:
			return a.Total() * (iterHash + costScalarOp + insertCoef(a))
		}
		return a.Total()*iterCoef(a.Layout()) + a.Total()*lookupCoef(b.Layout())
	}
	a, b := d(0).Card, d(1).Card
	return (a.Total() + b.Total()) * insertHash
}

// nodeInScope reports whether every free variable of node n (computed from
// its children's classes) is one its class needs anyway.
func (s *session) nodeInScope(g *graph, class egraph.ClassID, n egraph.Node) bool {
	fv := g.Data(class).FV
	nb := binderCount(n.Op)
	var binders [3]uint32
	for i := 0; i < nb; i++ {
		sym, _ := bindSym(g, n.Children[i])
		binders[i] = uint32(sym)
	}
	if n.Op == opVar {
		return fv.has(uint32(n.Payload))
	}
	for i := nb; i < len(n.Children); i++ {
		scoped := inScope(n.Op, i)
	vars:
		for _, v := range g.Data(n.Children[i]).FV {
			if scoped {
				for _, b := range binders[:nb] {
					if v == b {
						continue vars
					}
				}
			}
			if !fv.has(v) {
				return false
			}
		}
	}
	return true
}

// lessCost orders two costs of one class (the extractor compares no
// others).
func lessCost(a, b planCost) bool { return a.overRuns() < b.overRuns() }

// classRuns estimates how many times a term of class runs: at least once
// per value of each loop variable it reads, so the widest range of values
// of its free variables (an entry position runs over every entry of its
// tensor). A class that reads no int variable counts once.
func (s *session) classRuns(g *graph, class egraph.ClassID) float64 {
	runs := 1.0
	for _, v := range g.Data(class).FV {
		if r := s.vars[uint64(v)].rng; r.ok && r.hi >= r.lo {
			runs = max(runs, float64(r.hi)-float64(r.lo)+1)
		}
	}
	return runs
}

// extractPlan builds the cheapest term of class root as a typed ir.Expr.
func (s *session) extractPlan(root egraph.ClassID) (*ir.Expr, float64, error) {
	x := egraph.NewExtractor[Data, planCost](s.g, s.nodeCost, lessCost)
	pc, ok := x.Cost(root)
	if !ok {
		return nil, math.Inf(1), fmt.Errorf("no plan without logical dictionaries was found")
	}
	cost := pc.total()
	onPath := map[egraph.ClassID]bool{}
	var build func(c egraph.ClassID) (*ir.Expr, error)
	build = func(c egraph.ClassID) (*ir.Expr, error) {
		c = s.g.Find(c)
		if onPath[c] {
			return nil, fmt.Errorf("opt: the cheapest terms form a cycle through class %d", c)
		}
		nid, ok := x.BestNode(c)
		if !ok {
			return nil, fmt.Errorf("opt: class %d has no plan", c)
		}
		onPath[c] = true
		defer delete(onPath, c)
		n := s.g.Node(nid)
		kids := append([]egraph.ClassID(nil), n.Children...)
		var args []*ir.Expr
		for i, k := range kids {
			if i < binderCount(n.Op) {
				continue
			}
			a, err := build(k)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		n.Children = kids
		d := s.g.Data(c)
		e := s.nodeToIR(s.g, n, args, d.Type)
		e.Pos = s.positions[d.Pos]
		return e, nil
	}
	e, err := build(root)
	return e, cost, err
}

// termCost computes the cost of a given term (not the cheapest of its
// class) by loading it into the e-graph. Logical singletons are costed as
// hash-map inserts when asHash is set (to give the naive plan a number),
// else they make the cost infinite.
func (s *session) termCost(e *ir.Expr, asHash bool) (Cost, error) {
	id, err := s.addExpr(e)
	if err != nil {
		return Cost{}, err
	}
	s.g.Rebuild()
	inf := planCost{v: math.Inf(1)}
	// laned: the reads the engine makes for eight interleaved rows at
	// once (lanePriced), and their halves' extraction: an eighth each per
	// entry. A whole loop nest decides it, so the extraction's node costs
	// do not see it; the plans compared across storage mappings and forms
	// are each costed here.
	laned := map[*ir.Expr]bool{}
	var walk func(e *ir.Expr, c egraph.ClassID) planCost
	walk = func(e *ir.Expr, c egraph.ClassID) planCost {
		c = s.g.Find(c)
		n, ok := s.nodeOfTerm(e, c)
		if !ok {
			return inf
		}
		if e.Op == ir.OpSum {
			maps.Copy(laned, s.lanePriced(e))
		}
		kids := make([]planCost, len(n.Children))
		ai := 0
		for i, k := range n.Children {
			if i < binderCount(n.Op) {
				continue
			}
			kids[i] = walk(e.Args[ai], k)
			ai++
		}
		if asHash && n.Op == opSingle && (ir.Ann(n.Payload) == ir.AnnNone || ir.Ann(n.Payload) == ir.AnnUnique) {
			n.Payload = uint64(ir.AnnHash)
		}
		v, ok := s.costFormula(s.g, c, n, kids)
		if !ok {
			return inf
		}
		if laned[e] {
			own := costScalarOp
			if e.Op == ir.OpLookup {
				own = lookupArray
			}
			v.v -= own * (1 - 1.0/interH)
		}
		return v
	}
	return Cost{Value: walk(e, id).total(), Card: s.g.Data(id).Card}, nil
}

// nodeOfTerm finds the node of class c that is the top of term e.
func (s *session) nodeOfTerm(e *ir.Expr, c egraph.ClassID) (egraph.Node, bool) {
	for _, nid := range s.g.Nodes(c) {
		n := s.g.Node(nid)
		if s.nodeMatches(e, n) {
			return egraph.Node{Op: n.Op, Payload: n.Payload, Children: append([]egraph.ClassID(nil), n.Children...)}, true
		}
	}
	return egraph.Node{}, false
}

// nodeMatches reports whether node n has e's operator and payload.
func (s *session) nodeMatches(e *ir.Expr, n egraph.Node) bool {
	switch e.Op {
	case ir.OpConst:
		c := constNode(e)
		return c.Op == n.Op && c.Payload == n.Payload
	case ir.OpVar:
		return n.Op == opVar && s.symName(n.Payload) == e.Name
	case ir.OpGlobal:
		return n.Op == opGlobal && s.symName(n.Payload) == e.Name
	case ir.OpIf:
		return (n.Op == opIf && len(e.Args) == 2) || (n.Op == opIfElse && len(e.Args) == 3)
	case ir.OpCall:
		return n.Op == opCall && s.symName(n.Payload) == e.Name
	case ir.OpSingleton:
		return n.Op == opSingle && ir.Ann(n.Payload) == e.Ann
	}
	return irToOp[e.Op] == n.Op && n.Op != 0
}
