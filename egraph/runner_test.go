package egraph

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// growRule never saturates: every (f x) gains (f (g x)).
func growRule(l *arithLang) *Rewrite[NoData] {
	return mustRewrite[NoData](l, "grow", "(f ?x)", "(f (g ?x))")
}

func unlimited(g *EGraph[NoData]) *Runner[NoData] {
	r := NewRunner(g)
	r.IterationLimit, r.NodeLimit, r.TimeLimit = 0, 0, 0
	r.Scheduler = SimpleScheduler[NoData]{}
	return r
}

func TestRunnerSaturates(t *testing.T) {
	l, g := newPlainGraph()
	r := unlimited(g)
	r.AddExpr(mustExpr(l, "(+ a b)"))
	comm := mustRewrite[NoData](l, "comm", "(+ ?x ?y)", "(+ ?y ?x)")
	if got := r.Run([]*Rewrite[NoData]{comm}); got != Saturated {
		t.Fatalf("stop reason %s", got)
	}
	if len(r.Iterations) != 2 {
		t.Fatalf("%d iterations, want 2", len(r.Iterations))
	}
	if n := r.Iterations[0].Applied["comm"]; n != 1 {
		t.Errorf("iteration 0 applied comm %d times, want 1", n)
	}
	if n := r.Iterations[1].Matches["comm"]; n != 2 {
		t.Errorf("iteration 1 found %d matches, want 2", n)
	}
	last := r.Iterations[1]
	if last.StopReason != Saturated || last.Nodes != 4 || last.Classes != 3 {
		t.Errorf("last iteration %+v", last)
	}
	checkInvariants(t, g)
}

// TestSaturationAC saturates sums of n distinct symbols under commutativity
// and associativity. Each non-empty subset S of the symbols is one class
// holding one node per ordered split of S into two non-empty parts:
// 2^n-1 classes and n + sum_k C(n,k)(2^k-2) = 3^n - 2^(n+1) + 1 + n nodes.
func TestSaturationAC(t *testing.T) {
	l := newArith()
	rules := []*Rewrite[NoData]{mustRewrite[NoData](l, "comm", "(+ ?a ?b)", "(+ ?b ?a)")}
	assoc, err := ParseBidirectional[NoData](l, "assoc", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)")
	if err != nil {
		t.Fatal(err)
	}
	rules = append(rules, assoc...)
	for n := 2; n <= 6; n++ {
		g := New[NoData](l, NoAnalysis{})
		r := unlimited(g)
		src := "s0"
		for i := 1; i < n; i++ {
			src = "(+ " + src + " s" + string(rune('0'+i)) + ")"
		}
		r.AddExpr(mustExpr(l, src))
		if got := r.Run(rules); got != Saturated {
			t.Fatalf("n=%d: %s", n, r.Report())
		}
		pow := func(b, e int) int {
			p := 1
			for range e {
				p *= b
			}
			return p
		}
		wantClasses := pow(2, n) - 1
		wantNodes := pow(3, n) - pow(2, n+1) + 1 + n
		if g.NumClasses() != wantClasses || g.NumNodes() != wantNodes {
			t.Errorf("n=%d: %d classes %d nodes, want %d and %d", n, g.NumClasses(), g.NumNodes(), wantClasses, wantNodes)
		}
		checkInvariants(t, g)
	}
}

func TestRunnerIterationLimit(t *testing.T) {
	l, g := newPlainGraph()
	r := unlimited(g)
	r.IterationLimit = 5
	r.AddExpr(mustExpr(l, "(f x)"))
	if got := r.Run([]*Rewrite[NoData]{growRule(l)}); got != IterationLimit {
		t.Fatalf("stop reason %s", got)
	}
	if len(r.Iterations) != 5 || r.Iterations[4].StopReason != IterationLimit {
		t.Errorf("%d iterations, last stop %s", len(r.Iterations), r.Iterations[len(r.Iterations)-1].StopReason)
	}
	checkInvariants(t, g)
	// The limit applies per Run; iteration indices keep counting.
	if got := r.Run([]*Rewrite[NoData]{growRule(l)}); got != IterationLimit || len(r.Iterations) != 10 || r.Iterations[9].Index != 9 {
		t.Errorf("second run: %s, %d iterations", got, len(r.Iterations))
	}
}

func TestBidirectionalNeedsSameVars(t *testing.T) {
	l := newArith()
	if _, err := ParseBidirectional[NoData](l, "bad", "(+ ?a ?b)", "(f ?a)"); err == nil || !strings.Contains(err.Error(), "?b") {
		t.Errorf("error %v, want one naming ?b", err)
	}
	rws, err := ParseBidirectional[NoData](l, "comm", "(+ ?a ?b)", "(+ ?b ?a)")
	if err != nil || len(rws) != 2 || rws[1].Name != "comm-rev" {
		t.Errorf("%v %v", rws, err)
	}
	if _, err := ParseRewrite[NoData](l, "bad", "(+ ?a", "?a"); err == nil || !strings.Contains(err.Error(), "left-hand side: 1:1") {
		t.Errorf("syntax error reported as %v", err)
	}
}

func TestRunnerNodeLimit(t *testing.T) {
	l, g := newPlainGraph()
	r := unlimited(g)
	r.NodeLimit = 30
	r.AddExpr(mustExpr(l, "(f x)"))
	if got := r.Run([]*Rewrite[NoData]{growRule(l)}); got != NodeLimit {
		t.Fatalf("stop reason %s", got)
	}
	if n := g.NumNodes(); n <= 30 || n > 40 {
		t.Errorf("stopped at %d nodes for a limit of 30", n)
	}
	checkInvariants(t, g)
}

// TestRunnerNodeLimitMidIteration hits the node limit inside one apply
// phase: the runner must stop early and still leave a rebuilt graph from
// which extraction works.
func TestRunnerNodeLimitMidIteration(t *testing.T) {
	l, g := newPlainGraph()
	var leaves []ClassID
	for i := range 2000 {
		leaves = append(leaves, g.Add(l.Sym("v"+strconv.Itoa(i))))
	}
	r := unlimited(g)
	r.NodeLimit = 2500
	wrap := mustRewrite[NoData](l, "wrap", "?x", "(neg ?x)")
	if got := r.Run([]*Rewrite[NoData]{wrap}); got != NodeLimit {
		t.Fatalf("stop reason %s", got)
	}
	if len(r.Iterations) != 1 || r.Iterations[0].StopReason != NodeLimit {
		t.Fatalf("iterations: %d", len(r.Iterations))
	}
	if n := g.NumNodes(); n >= 4000 || n <= 2500 {
		t.Errorf("%d nodes: the apply phase did not stop near the limit", n)
	}
	checkInvariants(t, g)
	x := NewExtractor(g, AstSize[NoData], lessInt)
	e, cost, err := x.Extract(leaves[0])
	if err != nil || cost != 1 || e.Format(l) != "v0" {
		t.Errorf("extract after limit: %v %d %v", e, cost, err)
	}
}

func TestRunnerTimeLimit(t *testing.T) {
	l, g := newPlainGraph()
	r := unlimited(g)
	r.TimeLimit = 20 * time.Millisecond
	r.AddExpr(mustExpr(l, "(f x)"))
	slow := growRule(l)
	inner := slow.Searcher
	slow.Searcher = SearcherFunc[NoData]{VarList: inner.Vars(), Fn: func(g *EGraph[NoData], limit int) []Match {
		time.Sleep(2 * time.Millisecond)
		return inner.Search(g, limit)
	}}
	if got := r.Run([]*Rewrite[NoData]{slow}); got != TimeLimit {
		t.Fatalf("stop reason %s", got)
	}
	if last := r.Iterations[len(r.Iterations)-1]; last.StopReason != TimeLimit {
		t.Errorf("last iteration stop reason %s", last.StopReason)
	}
	checkInvariants(t, g)
}

func TestRunnerHookStops(t *testing.T) {
	l, g := newPlainGraph()
	r := unlimited(g)
	r.AddExpr(mustExpr(l, "(f x)"))
	errEnough := errors.New("enough")
	r.Hooks = append(r.Hooks, func(r *Runner[NoData]) error {
		if len(r.Iterations) == 3 {
			return errEnough
		}
		return nil
	})
	if got := r.Run([]*Rewrite[NoData]{growRule(l)}); got != Other || !errors.Is(r.StopErr, errEnough) {
		t.Fatalf("stop reason %s, err %v", got, r.StopErr)
	}
	if len(r.Iterations) != 3 {
		t.Errorf("%d iterations, want 3", len(r.Iterations))
	}
	if !strings.Contains(r.Report(), "other") {
		t.Errorf("report %q", r.Report())
	}
}

// sumsGraph holds n (+ vi vi) nodes, so the rule "id" below matches n
// times in every iteration without ever changing anything.
func sumsGraph(n int) (*arithLang, *EGraph[NoData]) {
	l, g := newPlainGraph()
	for i := range n {
		v := g.Add(l.Sym("v" + strconv.Itoa(i)))
		g.Add(l.Op(l.add, v, v))
	}
	return l, g
}

func bannedIn(r *Runner[NoData], rule string) []int {
	var its []int
	for _, it := range r.Iterations {
		if slices.Contains(it.Banned, rule) {
			its = append(its, it.Index)
		}
	}
	return its
}

func TestBackoffBansAndForgives(t *testing.T) {
	l, g := sumsGraph(25)
	r := unlimited(g)
	s := NewBackoffScheduler[NoData]()
	s.MatchLimit, s.BanLength = 10, 2
	r.Scheduler = s
	id := mustRewrite[NoData](l, "id", "(+ ?a ?b)", "(+ ?a ?b)")
	if got := r.Run([]*Rewrite[NoData]{id}); got != Saturated {
		t.Fatalf("stop reason %s", got)
	}
	// 25 > 10: banned at 0; bans are cut short when nothing else happens;
	// 25 > 20: banned at 1; then 25 <= 40 and the run saturates.
	if got := bannedIn(r, "id"); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("banned in iterations %v, want [0 1]", got)
	}
	if len(r.Iterations) != 3 || s.TimesBanned("id") != 2 {
		t.Errorf("%d iterations, banned %d times", len(r.Iterations), s.TimesBanned("id"))
	}
}

func TestBackoffBanLengthGrows(t *testing.T) {
	l, g := sumsGraph(25)
	g.AddExpr(mustExpr(l, "(f x)"))
	r := unlimited(g)
	r.IterationLimit = 10
	s := NewBackoffScheduler[NoData]()
	s.MatchLimit, s.BanLength = 10, 2
	r.Scheduler = s
	id := mustRewrite[NoData](l, "id", "(+ ?a ?b)", "(+ ?a ?b)")
	// grow keeps the graph changing, so bans run their full length:
	// banned at 0 for 2 iterations (0-1), at 2 for 4 (2-5), searched at 6.
	r.Run([]*Rewrite[NoData]{id, growRule(l)})
	if got := bannedIn(r, "id"); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("banned in iterations %v, want 0..5", got)
	}
	if got := bannedIn(r, "grow"); len(got) != 0 {
		t.Errorf("grow banned in %v", got)
	}
	if m := r.Iterations[6].Matches["id"]; m != 25 {
		t.Errorf("iteration 6 found %d matches of id, want 25", m)
	}

	// An exempt rule is never banned.
	l2, g2 := sumsGraph(25)
	r2 := unlimited(g2)
	s2 := NewBackoffScheduler[NoData]().DoNotBan("id")
	s2.MatchLimit = 10
	r2.Scheduler = s2
	r2.Run([]*Rewrite[NoData]{mustRewrite[NoData](l2, "id", "(+ ?a ?b)", "(+ ?a ?b)")})
	if got := bannedIn(r2, "id"); len(got) != 0 || r2.StopReason != Saturated || len(r2.Iterations) != 1 {
		t.Errorf("exempt rule banned in %v; %s", got, r2.Report())
	}
	// A per-rule limit overrides the default.
	l3, g3 := sumsGraph(25)
	r3 := unlimited(g3)
	s3 := NewBackoffScheduler[NoData]().SetRuleLimits("id", 30, 0)
	s3.MatchLimit = 10
	r3.Scheduler = s3
	r3.Run([]*Rewrite[NoData]{mustRewrite[NoData](l3, "id", "(+ ?a ?b)", "(+ ?a ?b)")})
	if got := bannedIn(r3, "id"); len(got) != 0 {
		t.Errorf("rule with limit 30 banned in %v", got)
	}
}

func lessInt(a, b int) bool { return a < b }
