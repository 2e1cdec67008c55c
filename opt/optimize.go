package opt

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Options control Optimize. Zero fields take the defaults.
type Options struct {
	// NodeLimit, IterLimit and TimeLimit bound each stage's equality
	// saturation. When one is hit the best plan found so far is returned
	// and the stop reason says which (defaults: 20,000 nodes, 40
	// iterations, 1 s).
	NodeLimit int
	IterLimit int
	TimeLimit time.Duration
	// Stats overrides entries of the statistics gathered from the data.
	Stats *Stats
	// Rules, if set, selects the rules (by name, as in rules.txt) to use.
	Rules func(name string) bool
	// StorageIndependent optimizes the program alone, as the paper's
	// first stage (§6.5): each tensor stays bound to its storage mapping,
	// built once into a dictionary, and the rules that would inline the
	// mapping into the program (LT1, LT3) are off, so no loop of the
	// program fuses with a mapping.
	StorageIndependent bool
}

// storageRules are the rules that bring a tensor's storage mapping into
// the program; StorageIndependent turns them off.
var storageRules = map[string]bool{"LT1": true, "LT3": true}

// afterStage, when set (by tests), sees each stage's e-graph once its
// rules have run.
var afterStage func(s *session)

// Default limits.
const (
	DefaultNodeLimit = 20000
	DefaultIterLimit = 40
	DefaultTimeLimit = time.Second
)

// StageReport describes one stage of the optimization: the figures of the
// paper's Table 4.
type StageReport struct {
	Name       string
	Rounds     int // e-graphs built (the explore stage runs several)
	Time       time.Duration
	Iterations int
	Nodes      int
	Classes    int
	Memo       int    // entries of the e-graph's hash-cons memo (the paper's Table 4 "Memos")
	StopReason string // "saturated", "node limit", "time limit", "iteration limit"
	Saturated  bool
	Applied    map[string]int // unions that changed the graph, per rule
	Cost       Cost           // of the best plan at the end of the stage
}

// Result is the outcome of Optimize.
type Result struct {
	Naive     *ir.Expr // the naive plan as given
	Plan      *ir.Expr // the optimized physical plan, fully typed
	NaiveCost Cost     // the naive plan with every dictionary built as a hash map
	Cost      Cost     // the chosen plan
	// Candidates are the plans the search's result was compared with,
	// physical and costed alike, the chosen one marked: the search's own
	// plan ("optimized"), the naive plan ("naive": each tensor built once)
	// and the program as written over its storage mappings ("as
	// written"). The cheapest is kept, so the plan is never estimated
	// dearer than the naive one.
	Candidates []Candidate
	Chosen     string // the label of the chosen candidate
	Stages     []StageReport
	Saturated  bool   // every stage saturated
	StopReason string // of the last stage that did not saturate, else "saturated"
	Time       time.Duration
	Stats      *Stats // the statistics used
}

// Optimize finds the cheapest physical plan equivalent to the naive plan
// (ir.Program.Compose) over the data in st.
func Optimize(naive *ir.Expr, st storage.Store, opt Options) (*Result, error) {
	return optimizeWith(defaultRules, naive, st, opt)
}

// Per-stage search parameters: the fuse and physical stages run to
// saturation (or the limits); the explore stage runs rounds of
// exploreIters iterations, each on a fresh e-graph seeded with the best
// plan of the round before, while the cost improves by at least roundGain.
const (
	exploreIters  = 8
	exploreRounds = 4
	roundGain     = 1e-6 // the least relative gain for which another round runs
)

func optimizeWith(rs *ruleSet, naive *ir.Expr, st storage.Store, opt Options) (*Result, error) {
	start := time.Now()
	if opt.NodeLimit <= 0 {
		opt.NodeLimit = DefaultNodeLimit
	}
	if opt.IterLimit <= 0 {
		opt.IterLimit = DefaultIterLimit
	}
	if opt.TimeLimit <= 0 {
		opt.TimeLimit = DefaultTimeLimit
	}
	if err := checkTyped(naive); err != nil {
		return nil, err
	}
	stats := GatherStats(st).Override(opt.Stats)
	res := &Result{Naive: naive, Stats: stats}
	// The first stage, "lookups", sees the program with its tensors still
	// bound to their names (let A = mapping in ...): a lookup A(i)(j) in
	// a walk of A is then a lookup of the very class walked (LK7). The
	// tensors are inlined after it, each copy with binders of its own.
	plan := uniquify(naive)
	inline := func(p *ir.Expr) *ir.Expr { return uniquify(inlineTensors(p)) }
	if opt.StorageIndependent {
		inline = func(p *ir.Expr) *ir.Expr { return p }
		keep := opt.Rules
		opt.Rules = func(name string) bool {
			return !storageRules[name] && (keep == nil || keep(name))
		}
	}
	{
		// The naive plan builds each tensor once (as a hash map, for a
		// number) and runs the program over the built tensors.
		s := newSession(st, stats)
		mat := uniquify(naive)
		s.reserveNames(mat)
		nc, err := s.termCost(mat, true)
		if err != nil {
			return nil, err
		}
		res.NaiveCost = nc
	}
	deadline := start.Add(opt.TimeLimit)
	for i, sd := range rs.stages {
		if i == 0 && sd.Name != "lookups" || i == 1 && rs.stages[0].Name == "lookups" {
			plan = inline(plan)
		}
		rep := StageReport{Name: sd.Name, Applied: map[string]int{}}
		rounds, iters := 1, opt.IterLimit
		if sd.Name == "explore" {
			rounds, iters = exploreRounds, min(opt.IterLimit, exploreIters)
		}
		physical := sd.Name == rs.stages[len(rs.stages)-1].Name
		best := math.Inf(1)
		for r := 0; r < rounds; r++ {
			left := time.Until(deadline)
			if left <= 0 {
				rep.StopReason = egraph.TimeLimit.String()
				break
			}
			o := opt
			o.IterLimit, o.TimeLimit = iters, left
			next, cost, round, err := runStage(rs, sd, plan, st, stats, o, !physical)
			if err != nil {
				return nil, err
			}
			rep.add(round)
			if next == nil || cost >= best {
				break
			}
			// A round that gains less than a millionth has only moved
			// costEpsilon terms around: keep its plan, run no more.
			last := cost > best*(1-roundGain)
			plan, best = next, cost
			rep.Cost = round.Cost
			if last {
				break
			}
		}
		res.Stages = append(res.Stages, rep)
	}
	plan, cut, err := res.choose(rs, []Candidate{
		{Label: "optimized", Plan: physicalize(plan)},
		{Label: "naive", Plan: uniquify(naive)},
		{Label: "as written", Plan: uniquify(inlineTensors(naive))},
	}, st, stats, opt, deadline)
	if err != nil {
		return nil, err
	}
	plan = unusedAsUnderscore(plan)
	if err := checkTyped(plan); err != nil {
		return nil, fmt.Errorf("opt: the optimized plan is malformed: %v", err)
	}
	res.Plan = plan
	res.Saturated, res.StopReason = true, egraph.Saturated.String()
	for _, st := range res.Stages {
		if !st.Saturated {
			res.Saturated, res.StopReason = false, st.StopReason
		}
	}
	if cut {
		res.Saturated, res.StopReason = false, egraph.TimeLimit.String()
	}
	res.Time = time.Since(start)
	return res, nil
}

// Candidate is one plan Optimize compared (Result.Candidates).
type Candidate struct {
	Label string
	Plan  *ir.Expr // physical
	Cost  Cost
}

// choose costs the candidates alike and keeps the cheapest (the search's
// plan, the first, on a tie). A candidate that still builds
// logical dictionaries is made physical first by the physical stage's
// own rules alone (P1, P2: each dictionary dense where its keys allow),
// without the fusion rules that would make it another plan. That stage
// runs within the caller's deadline, like the search's: past it, a
// candidate's dictionaries are all hash maps, and cut reports that the
// time limit stopped a candidate's stage.
func (r *Result) choose(rs *ruleSet, cands []Candidate, st storage.Store, stats *Stats, opt Options, deadline time.Time) (plan *ir.Expr, cut bool, err error) {
	best := -1
	for i := range cands {
		c := &cands[i]
		if i > 0 {
			var p *ir.Expr
			if left := time.Until(deadline); left > 0 {
				o := opt
				o.TimeLimit = left
				var rep StageReport
				p, _, rep, err = runStage(rs, &stageDef{Name: "physical", Rules: []string{"P1", "P2"}}, c.Plan, st, stats, o, false)
				if err != nil {
					return nil, false, err
				}
				cut = cut || rep.StopReason == egraph.TimeLimit.String()
			} else {
				cut = true
			}
			if p == nil {
				p = c.Plan
			}
			c.Plan = physicalize(p)
		}
		c.Plan = hoistClosed(c.Plan, func(e *ir.Expr) bool { return planSafe(e, st, stats) })
		s := newSession(st, stats)
		s.reserveNames(c.Plan)
		cost, err := s.termCost(c.Plan, false)
		if err != nil {
			return nil, false, err
		}
		c.Cost = cost
		if best < 0 || cost.Value < cands[best].Cost.Value {
			best = i
		}
	}
	r.Candidates, r.Chosen, r.Cost = cands, cands[best].Label, cands[best].Cost
	return cands[best].Plan, cut, nil
}

// add accumulates one round into the stage's report.
func (r *StageReport) add(round StageReport) {
	r.Rounds++
	r.Time += round.Time
	r.Iterations += round.Iterations
	r.Nodes = max(r.Nodes, round.Nodes)
	r.Classes = max(r.Classes, round.Classes)
	r.Memo = max(r.Memo, round.Memo)
	r.StopReason, r.Saturated = round.StopReason, round.Saturated
	for k, v := range round.Applied {
		r.Applied[k] += v
	}
}

// runStage runs one round of a stage from plan and returns the best plan
// found (nil if none could be extracted) and its cost. Before the physical
// stage, logical singletons are costed as hash maps.
func runStage(rs *ruleSet, sd *stageDef, plan *ir.Expr, st storage.Store, stats *Stats, opt Options, logicalAsHash bool) (*ir.Expr, float64, StageReport, error) {
	s := newSession(st, stats)
	// Before the mappings are fused into the program, a mapping is a
	// closed build too: hoisted whole, it would be walked as a built
	// dictionary instead of fusing with the loops that read it.
	s.inPlace = sd.Name == "lookups" || sd.Name == "fuse"
	// The analysis keeps a variable's type and range per name: a plan
	// extracted by the stage before may bind one name twice (rules that
	// rebind a variable, copies made by substitution), and the second
	// binder's range must not stand for the first's.
	plan = uniquify(plan)
	s.reserveNames(plan)
	root, err := s.addExpr(plan)
	if err != nil {
		return nil, 0, StageReport{}, err
	}
	safeIn := s.g.Data(root).Safe
	on := map[string]bool{}
	for _, r := range sd.Rules {
		on[r] = true
	}
	rws, err := s.rewrites(rs, func(name string) bool {
		return on[name] && (opt.Rules == nil || opt.Rules(strings.TrimSuffix(name, "<")))
	})
	if err != nil {
		return nil, 0, StageReport{}, err
	}
	rep := s.run(sd.Name, root, rws, opt)
	if afterStage != nil {
		afterStage(s)
	}
	s.logicalAsHash = logicalAsHash
	s.scansAsSeeks = logicalAsHash
	best, cost, ok := s.extractSafe(root, sd.Name, safeIn, st, stats)
	if !ok {
		return nil, 0, rep, nil
	}
	rep.Cost = Cost{Value: cost, Card: s.g.Data(root).Card}
	return best, cost, rep, nil
}

// extractSafe extracts the cheapest plan of root and tidies it for the
// next stage. A branch judged safe under its test (guardedOnly) is safe
// because some term of its unsafe class is, but extraction may pick
// another term of that class, one that reads out of bounds even where the
// test holds; the next stage would then start from an unsafe plan, whose
// rewrites go unchecked. So when the stage began safe, the plan must be
// judged safe on its own (each class one term: the terms it runs); if it
// is not, the cheapest plan without such branches is taken, and failing
// that none (the stage's input stays). A stage that began unsafe (a read
// the analysis cannot bound, elsewhere in the program) cannot be judged
// that way: it takes no such branch at all, since every other term of a
// safe class is safe without help from a test.
func (s *session) extractSafe(root egraph.ClassID, stage string, safeIn bool, st storage.Store, stats *Stats) (*ir.Expr, float64, bool) {
	modes := []bool{false, true}
	if !safeIn {
		modes = modes[1:]
	}
	for _, unguarded := range modes {
		s.unguarded = unguarded
		best, cost, err := s.extractPlan(root)
		if err != nil {
			continue
		}
		best = cleanup(best, stage != "fuse")
		if !s.inPlace {
			best = hoistClosed(best, func(e *ir.Expr) bool { return planSafe(e, st, stats) })
		}
		if stage == "fuse" {
			// The fusion rules leave a let per fused loop; inlining the
			// cheap ones leaves the exploration no lets to move around
			// loops.
			best = inlineCheap(best)
		}
		if unguarded && !safeIn || planSafe(best, st, stats) {
			s.unguarded = false
			return best, cost, true
		}
	}
	s.unguarded = false
	return nil, 0, false
}

// planSafe reports whether the analysis judges plan unable to fail, the
// plan alone in a fresh e-graph.
func planSafe(plan *ir.Expr, st storage.Store, stats *Stats) bool {
	s := newSession(st, stats)
	plan = uniquify(plan)
	s.reserveNames(plan)
	root, err := s.addExpr(plan)
	return err == nil && s.g.Data(root).Safe
}

// physicalize builds every dictionary that is still logical into a hash
// map (rule P2 applied everywhere): the fallback when a limit stopped the
// search before the physical stage chose.
func physicalize(e *ir.Expr) *ir.Expr {
	if e == nil || len(e.Args) == 0 {
		return e
	}
	c := e.Shallow()
	for i, a := range e.Args {
		c.Args[i] = physicalize(a)
	}
	if c.Op == ir.OpSingleton && (c.Ann == ir.AnnNone || c.Ann == ir.AnnUnique) {
		c.Ann = ir.AnnHash
	}
	return c
}

// run saturates the e-graph with the rules, within the limits.
func (s *session) run(name string, root egraph.ClassID, rws []*egraph.Rewrite[Data], opt Options) StageReport {
	r := egraph.NewRunner(s.g)
	r.Roots = []egraph.ClassID{root}
	r.NodeLimit, r.IterationLimit, r.TimeLimit = opt.NodeLimit, opt.IterLimit, opt.TimeLimit
	r.Hooks = append(r.Hooks, func(*egraph.Runner[Data]) error {
		s.conds.reset()
		return nil
	})
	t0 := time.Now()
	reason := r.Run(rws)
	rep := StageReport{
		Name:       name,
		Time:       time.Since(t0),
		Iterations: len(r.Iterations),
		Nodes:      s.g.NumNodes(),
		Classes:    s.g.NumClasses(),
		Memo:       s.g.MemoSize(),
		StopReason: reason.String(),
		Saturated:  reason == egraph.Saturated,
		Applied:    map[string]int{},
	}
	for _, it := range r.Iterations {
		for k, v := range it.Applied {
			rep.Applied[k] += v
		}
	}
	return rep
}

// inlineTensors replaces the tensor definitions the naive plan binds at
// its top (let A = mapping in ...) by the mappings themselves, so that the
// optimizer can fuse each use of a tensor with its storage mapping. Scalar
// definitions stay bound: inlining them could repeat their work in a loop.
func inlineTensors(e *ir.Expr) *ir.Expr {
	if e.Op != ir.OpLet {
		return e
	}
	body := inlineTensors(e.Args[1])
	if e.Args[0].Type.Depth == 0 {
		c := e.Shallow()
		c.Args[1] = body
		return c
	}
	return ir.Subst(body, map[string]*ir.Expr{e.Vars[0]: e.Args[0]})
}

// checkTyped verifies that every node of e has a known type and that e is
// closed (no free variables).
func checkTyped(e *ir.Expr) error {
	var bad *ir.Expr
	ir.Walk(e, func(n *ir.Expr) bool {
		if bad == nil && n.Type.Base == ir.Unknown {
			bad = n
		}
		return bad == nil
	})
	if bad != nil {
		return fmt.Errorf("opt: the plan is not typed: %s has no type", bad)
	}
	if fv := ir.FreeVars(e); len(fv) > 0 {
		return fmt.Errorf("opt: the plan has free variables %v", slices.Sorted(maps.Keys(fv)))
	}
	return nil
}

// totalApplied sums the per-rule counts of the stages.
func (r *Result) totalApplied() map[string]int {
	m := map[string]int{}
	for _, st := range r.Stages {
		for k, v := range st.Applied {
			m[k] += v
		}
	}
	return m
}

func isInf(c Cost) bool { return math.IsInf(c.Value, 1) }
