package egraph

import (
	"fmt"
	"testing"
)

// BenchmarkSaturateAC saturates a sum of n symbols under commutativity and
// associativity (both directions): the classic explosion, 3^n - 2^(n+1) +
// 1 + n nodes at the end. Reported: final nodes, nodes built per second, and
// substitutions found (then applied) per second, the real unit of work.
func BenchmarkSaturateAC(b *testing.B) {
	l := newArith()
	rules := []*Rewrite[NoData]{mustRewrite[NoData](l, "comm", "(+ ?a ?b)", "(+ ?b ?a)")}
	assoc, err := ParseBidirectional[NoData](l, "assoc", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)")
	if err != nil {
		b.Fatal(err)
	}
	rules = append(rules, assoc...)
	for _, n := range []int{7, 8, 9} {
		src := "s0"
		for i := 1; i < n; i++ {
			src = fmt.Sprintf("(+ %s s%d)", src, i)
		}
		expr := mustExpr(l, src)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			nodes, substs := 0, 0
			for b.Loop() {
				g := New[NoData](l, NoAnalysis{})
				r := NewRunner(g)
				r.IterationLimit, r.NodeLimit, r.TimeLimit = 0, 0, 0
				r.Scheduler = SimpleScheduler[NoData]{}
				r.AddExpr(expr)
				if r.Run(rules) != Saturated {
					b.Fatal(r.Report())
				}
				nodes = g.NumNodes()
				for _, it := range r.Iterations {
					for _, m := range it.Matches {
						substs += m
					}
				}
			}
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(nodes)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
			b.ReportMetric(float64(substs)/b.Elapsed().Seconds(), "substs/s")
		})
	}
}

// BenchmarkAdd measures hash-consed insertion of fresh nodes.
func BenchmarkAdd(b *testing.B) {
	l := newArith()
	b.ReportAllocs()
	const perGraph = 100_000
	for b.Loop() {
		g := New[NoData](l, NoAnalysis{})
		ids := []ClassID{g.Add(l.Sym("x")), g.Add(l.Sym("y"))}
		for i := range perGraph {
			ids = append(ids, g.Add(l.Op(l.add, ids[i], ids[i+1])))
		}
	}
	b.ReportMetric(float64(perGraph)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
}
