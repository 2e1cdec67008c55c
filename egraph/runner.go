package egraph

import (
	"fmt"
	"time"
)

// StopReason says why a Runner stopped.
type StopReason int

const (
	// NotStopped: the runner has not run yet.
	NotStopped StopReason = iota
	// Saturated: an iteration changed nothing and no rule was banned, so
	// the graph holds every term the rules can derive.
	Saturated
	// IterationLimit: Runner.IterationLimit iterations ran.
	IterationLimit
	// NodeLimit: the graph grew past Runner.NodeLimit nodes.
	NodeLimit
	// TimeLimit: Runner.TimeLimit elapsed.
	TimeLimit
	// Other: a hook asked to stop (see Runner.StopErr).
	Other
)

func (r StopReason) String() string {
	switch r {
	case NotStopped:
		return "not stopped"
	case Saturated:
		return "saturated"
	case IterationLimit:
		return "iteration limit"
	case NodeLimit:
		return "node limit"
	case TimeLimit:
		return "time limit"
	case Other:
		return "other"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Iteration reports one round of search, apply and rebuild.
type Iteration struct {
	Index int
	// Applied counts, per rule name, the unions that changed the graph.
	// Rules that were searched but changed nothing are absent.
	Applied map[string]int
	// Matches counts, per rule name, the substitutions found.
	Matches map[string]int
	// Banned lists the rules the scheduler skipped in this iteration.
	Banned []string
	// Nodes and Classes are the sizes after the rebuild.
	Nodes, Classes int
	// RebuildUnions counts the congruences found by the rebuild.
	RebuildUnions                                 int
	SearchTime, ApplyTime, RebuildTime, TotalTime time.Duration
	// StopReason is set on the last iteration if the run stopped during
	// or right after it.
	StopReason StopReason
}

// Runner drives equality saturation: iterations of search (all rules
// against the same clean graph), apply (union every right-hand side), and
// rebuild, until saturation or a limit. Whatever the reason it stops for,
// the graph is left rebuilt, so extraction can use what was found so far.
//
// Set the fields before calling Run; limits <= 0 mean none. The limits
// apply to each call of Run; Iterations accumulates over calls, and
// iteration indices keep counting so that scheduler bans stay meaningful.
type Runner[D any] struct {
	Graph *EGraph[D]
	// Roots are the classes of interest (AddExpr appends); kept canonical
	// by Run.
	Roots          []ClassID
	IterationLimit int
	NodeLimit      int
	TimeLimit      time.Duration
	Scheduler      Scheduler[D]
	// Hooks run after every iteration (which is already recorded in
	// Iterations); a non-nil error stops the run with reason Other. A hook
	// may change the graph: it is rebuilt afterwards.
	Hooks []func(*Runner[D]) error

	Iterations []Iteration
	StopReason StopReason
	StopErr    error // the hook's error when StopReason is Other
	start      time.Time
	firstIter  int // index of the first iteration of the current Run
}

// Default limits of NewRunner, as in egg.
const (
	DefaultIterationLimit = 30
	DefaultNodeLimit      = 10_000
	DefaultTimeLimit      = 5 * time.Second
)

// NewRunner returns a runner over g with default limits and a
// BackoffScheduler.
func NewRunner[D any](g *EGraph[D]) *Runner[D] {
	return &Runner[D]{
		Graph:          g,
		IterationLimit: DefaultIterationLimit,
		NodeLimit:      DefaultNodeLimit,
		TimeLimit:      DefaultTimeLimit,
		Scheduler:      NewBackoffScheduler[D](),
	}
}

// AddExpr adds e to the graph and records its class as a root.
func (r *Runner[D]) AddExpr(e *RecExpr) ClassID {
	id := r.Graph.AddExpr(e)
	r.Roots = append(r.Roots, id)
	return id
}

// Run applies rules until saturation or a limit and returns the reason.
// It may be called again (with new limits or rules) to continue.
func (r *Runner[D]) Run(rules []*Rewrite[D]) StopReason {
	if r.Scheduler == nil {
		r.Scheduler = SimpleScheduler[D]{}
	}
	r.start = time.Now()
	r.firstIter = len(r.Iterations)
	r.StopReason, r.StopErr = NotStopped, nil
	r.Graph.Rebuild()
	for r.StopReason == NotStopped {
		if reason := r.checkLimits(); reason != NotStopped {
			r.StopReason = reason
			if n := len(r.Iterations); n > 0 && r.Iterations[n-1].StopReason == NotStopped {
				r.Iterations[n-1].StopReason = reason
			}
			break
		}
		r.iterate(rules)
	}
	for i, id := range r.Roots {
		r.Roots[i] = r.Graph.Find(id)
	}
	return r.StopReason
}

// checkLimits reports a limit reached before starting an iteration.
func (r *Runner[D]) checkLimits() StopReason {
	switch {
	case r.IterationLimit > 0 && len(r.Iterations)-r.firstIter >= r.IterationLimit:
		return IterationLimit
	case r.NodeLimit > 0 && r.Graph.NumNodes() > r.NodeLimit:
		return NodeLimit
	case r.TimeLimit > 0 && time.Since(r.start) > r.TimeLimit:
		return TimeLimit
	}
	return NotStopped
}

// midIterationLimit checks the limits that can be hit while applying.
func (r *Runner[D]) midIterationLimit() StopReason {
	switch {
	case r.NodeLimit > 0 && r.Graph.NumNodes() > r.NodeLimit:
		return NodeLimit
	case r.TimeLimit > 0 && time.Since(r.start) > r.TimeLimit:
		return TimeLimit
	}
	return NotStopped
}

func (r *Runner[D]) iterate(rules []*Rewrite[D]) {
	g := r.Graph
	it := Iteration{Index: len(r.Iterations), Applied: map[string]int{}, Matches: map[string]int{}}
	t0 := time.Now()
	version := g.version
	stop := NotStopped

	// Search every rule against the same graph, so that rule order does
	// not matter within an iteration.
	all := make([][]Match, len(rules))
	for i, rw := range rules {
		matches, searched := r.Scheduler.Search(it.Index, g, rw)
		if !searched {
			it.Banned = append(it.Banned, rw.Name)
		}
		all[i] = matches
		if n := CountSubsts(matches); n > 0 {
			it.Matches[rw.Name] += n
		}
		if r.TimeLimit > 0 && time.Since(r.start) > r.TimeLimit {
			stop = TimeLimit
			break
		}
	}
	t1 := time.Now()
	it.SearchTime = t1.Sub(t0)

	if stop == NotStopped {
		check := func() bool {
			stop = r.midIterationLimit()
			return stop != NotStopped
		}
		for i, rw := range rules {
			n, stopped := rw.apply(g, all[i], check)
			if n > 0 {
				it.Applied[rw.Name] += n
			}
			if stopped || check() {
				break
			}
		}
	}
	t2 := time.Now()
	it.ApplyTime = t2.Sub(t1)

	// Always rebuild, even when stopping, so the graph stays usable.
	it.RebuildUnions = g.Rebuild()
	t3 := time.Now()
	it.RebuildTime = t3.Sub(t2)
	it.Nodes, it.Classes = g.NumNodes(), g.NumClasses()
	it.TotalTime = t3.Sub(t0)

	if stop == NotStopped {
		r.Iterations = append(r.Iterations, it)
		for _, hook := range r.Hooks {
			if err := hook(r); err != nil {
				stop, r.StopErr = Other, err
				break
			}
		}
		g.ensureClean() // a hook may have changed the graph
		if stop == NotStopped && g.version == version && r.Scheduler.CanStop(it.Index) {
			stop = Saturated
		}
		r.Iterations[len(r.Iterations)-1].StopReason = stop
	} else {
		it.StopReason = stop
		r.Iterations = append(r.Iterations, it)
	}
	r.StopReason = stop
}

// Report summarizes the run: stop reason, iterations, final size, time.
func (r *Runner[D]) Report() string {
	var total time.Duration
	for _, it := range r.Iterations {
		total += it.TotalTime
	}
	return fmt.Sprintf("stop reason: %s; iterations: %d; nodes: %d; classes: %d; time: %s",
		r.StopReason, len(r.Iterations), r.Graph.NumNodes(), r.Graph.NumClasses(), total)
}
