package opt

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

var measure = flag.Bool("opt.measure", false, "print the measurements behind the binder and staging design (doc.go)")

// TestMeasureDesign prints, per kernel, the e-graph sizes and times of the
// design and of its alternatives; doc.go quotes them. Run with
//
//	go test ./opt -run MeasureDesign -opt.measure -v
func TestMeasureDesign(t *testing.T) {
	if !*measure {
		t.Skip("run with -opt.measure")
	}
	fmt.Printf("%-8s %-34s %8s %8s %6s %10s %12s  %s\n", "kernel", "variant", "nodes", "classes", "iters", "time", "cost", "stop")
	for _, k := range paperKernels {
		naive, st := setupKernel(t, k.name, 1, k.tensors)
		row := func(variant string, nodes, classes, iters int, d time.Duration, cost float64, stop string) {
			fmt.Printf("%-8s %-34s %8d %8d %6d %10s %12s  %s\n", k.name, variant, nodes, classes, iters, formatDuration(d), formatCount(cost), stop)
		}
		// The design: staged, named binders, substitution of whole classes.
		res, err := Optimize(naive, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		nodes, classes, iters := 0, 0, 0
		for _, s := range res.Stages {
			nodes, classes, iters = max(nodes, s.Nodes), max(classes, s.Classes), iters+s.Iterations
		}
		row("staged (the design)", nodes, classes, iters, res.Time, res.Cost.Value, res.StopReason)
		// One stage holding every rule, as an unstaged e-graph would.
		for _, limit := range []int{20000, 200000} {
			r := singleStage(t, naive, st, limit, false)
			row(fmt.Sprintf("one stage, all rules, %dk nodes", limit/1000), r.Nodes, r.Classes, r.Iterations, r.Time, r.Cost.Value, r.StopReason)
		}
		r := singleStage(t, naive, st, 200000, true)
		row("one stage, substitute one term", r.Nodes, r.Classes, r.Iterations, r.Time, r.Cost.Value, r.StopReason)
	}
}

// singleStage runs every rule of every stage in one e-graph.
func singleStage(t *testing.T, naive *ir.Expr, st storage.Store, nodeLimit int, firstOnly bool) StageReport {
	stats := GatherStats(st)
	plan := uniquify(inlineTensors(naive))
	s := newSession(st, stats)
	s.subst.firstOnly = firstOnly
	s.reserveNames(plan)
	root, err := s.addExpr(plan)
	if err != nil {
		t.Fatal(err)
	}
	on := map[string]bool{}
	for _, sd := range defaultRules.stages {
		for _, r := range sd.Rules {
			on[r] = true
		}
	}
	rws, err := s.rewrites(defaultRules, func(n string) bool { return on[n] })
	if err != nil {
		t.Fatal(err)
	}
	rep := s.run("all", root, rws, Options{NodeLimit: nodeLimit, IterLimit: 100, TimeLimit: 20 * time.Second})
	_, cost, err := s.extractPlan(root)
	if err != nil {
		cost = -1
	}
	rep.Cost.Value = cost
	return rep
}
