package opt

import (
	"fmt"
	"maps"
	"math"
	"slices"
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
}

var debugIterations = false

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
	Time       time.Duration
	Iterations int
	Nodes      int
	Classes    int
	StopReason string // "saturated", "node limit", "time limit", "iteration limit"
	Saturated  bool
	Applied    map[string]int // unions that changed the graph, per rule
	Cost       Cost           // of the best plan at the end of the stage
}

// Result is the outcome of Optimize.
type Result struct {
	Naive      *ir.Expr // the naive plan as given
	Plan       *ir.Expr // the optimized physical plan, fully typed
	NaiveCost  Cost     // the naive plan with every dictionary built as a hash map
	Cost       Cost     // the optimized plan
	Stages     []StageReport
	Saturated  bool   // every stage saturated
	StopReason string // of the last stage that did not saturate, else "saturated"
	Time       time.Duration
	Stats      *Stats // the statistics used
}

// Optimize finds the cheapest physical plan equivalent to the naive plan
// (ir.Program.Compose) over the data in st.
func Optimize(naive *ir.Expr, st storage.Store, opt Options) (*Result, error) {
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

	plan := uniquify(inlineTensors(naive))
	s := newSession(st, stats)
	s.reserveNames(plan)
	if nc, err := s.termCost(plan, true); err == nil {
		res.NaiveCost = nc
	}
	root, err := s.addExpr(plan)
	if err != nil {
		return nil, err
	}
	rws, err := s.rewrites(defaultRules, opt.Rules)
	if err != nil {
		return nil, err
	}
	rep := s.run("storage", root, rws, opt)
	res.Stages = append(res.Stages, rep)

	best, cost, err := s.extractPlan(root)
	if err != nil {
		return nil, err
	}
	best = cleanup(best)
	if err := checkTyped(best); err != nil {
		return nil, fmt.Errorf("opt: the optimized plan is malformed: %v", err)
	}
	res.Plan = best
	res.Cost = Cost{Value: cost, Card: s.g.Data(root).Card}
	res.Stages[len(res.Stages)-1].Cost = res.Cost
	res.Saturated, res.StopReason = true, "saturated"
	for _, st := range res.Stages {
		if !st.Saturated {
			res.Saturated, res.StopReason = false, st.StopReason
		}
	}
	res.Time = time.Since(start)
	return res, nil
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
		StopReason: reason.String(),
		Saturated:  reason == egraph.Saturated,
		Applied:    map[string]int{},
	}
	for _, it := range r.Iterations {
		for k, v := range it.Applied {
			rep.Applied[k] += v
		}
		if debugIterations {
			fmt.Printf("  iter %d: nodes %d classes %d search %v apply %v rebuild %v\n", it.Index, it.Nodes, it.Classes, it.SearchTime, it.ApplyTime, it.RebuildTime)
		}
	}
	if debugIterations {
		for k, v := range ruleTime {
			if v > 200*time.Microsecond {
				fmt.Println("  apply", k, v)
			}
		}
		for k, v := range condTime {
			if v > 200*time.Microsecond {
				fmt.Println("  cond", k, v)
			}
		}
		clear(ruleTime)
		clear(condTime)
	}
	return rep
}

// inlineTensors replaces the tensor definitions the naive plan binds at
// its top (let T = mapping in ...) by the mappings themselves, so that the
// optimizer can fuse each use of a tensor with its storage mapping.
func inlineTensors(e *ir.Expr) *ir.Expr {
	if e.Op != ir.OpLet || e.Args[0].Type.Depth == 0 {
		return e
	}
	body := inlineTensors(e.Args[1])
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
