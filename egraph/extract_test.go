package egraph

import (
	"strconv"
	"strings"
	"testing"
)

// mathRules are the rules of egg's classic example that simplifies
// (/ (* a 2) 2) to a.
func mathRules(l *arithLang) []*Rewrite[NoData] {
	zero := func(g *EGraph[NoData], c ClassID) bool {
		z, ok := g.Lookup(l.Num(0))
		return ok && g.Find(z) == g.Find(c)
	}
	rules := []*Rewrite[NoData]{
		mustRewrite[NoData](l, "comm-mul", "(* ?a ?b)", "(* ?b ?a)"),
		mustRewrite[NoData](l, "mul-two", "(* ?a 2)", "(<< ?a 1)"),
		mustRewrite[NoData](l, "div-assoc", "(/ (* ?a ?b) ?c)", "(* ?a (/ ?b ?c))"),
		mustRewrite[NoData](l, "div-same", "(/ ?a ?a)", "1").If(func(g *EGraph[NoData], _ ClassID, s Subst) bool {
			a, _ := s.Get("?a")
			return !zero(g, a)
		}),
		mustRewrite[NoData](l, "mul-one", "(* ?a 1)", "?a"),
	}
	return rules
}

func TestExtractSimplifies(t *testing.T) {
	l, g := newPlainGraph()
	r := NewRunner(g)
	r.IterationLimit = 10
	root := r.AddExpr(mustExpr(l, "(/ (* a 2) 2)"))
	r.Run(mathRules(l))
	x := NewExtractor(g, AstSize[NoData], lessInt)
	e, cost, err := x.Extract(root)
	if err != nil || e.Format(l) != "a" || cost != 1 {
		t.Errorf("extracted %v cost %d err %v, want a at 1", e, cost, err)
	}
	// The zero guard: (/ 0 0) must not become 1.
	z := g.AddExpr(mustExpr(l, "(/ 0 0)"))
	r2 := NewRunner(g)
	r2.IterationLimit = 10
	r2.Run(mathRules(l))
	one, _ := g.LookupExpr(mustExpr(l, "1"))
	if g.Find(z) == g.Find(one) {
		t.Errorf("(/ 0 0) rewritten to 1 despite the condition")
	}
	checkInvariants(t, g)
}

func TestExtractPrefersCheapest(t *testing.T) {
	l, g := newPlainGraph()
	big := g.AddExpr(mustExpr(l, "(+ (* x 1) (* y 1))"))
	small := g.AddExpr(mustExpr(l, "(+ x y)"))
	g.Union(big, small)
	x := NewExtractor(g, AstSize[NoData], lessInt)
	e, cost, err := x.Extract(big)
	if err != nil || e.Format(l) != "(+ x y)" || cost != 3 {
		t.Errorf("got %v %d %v", e, cost, err)
	}
	// Depth cost picks the same here, and the RecExpr shares x.
	d := NewExtractor(g, AstDepth[NoData], lessInt)
	if c, _ := d.Cost(big); c != 2 {
		t.Errorf("depth %d, want 2", c)
	}
	shared := g.AddExpr(mustExpr(l, "(+ (f x) (f x))"))
	e, _, _ = NewExtractor(g, AstSize[NoData], lessInt).Extract(shared)
	if len(e.Nodes) != 3 {
		t.Errorf("shared subterm not shared: %d nodes", len(e.Nodes))
	}
}

// A class whose every node depends on the class itself has no cost, and a
// parent with an alternative avoids it.
func TestExtractCycles(t *testing.T) {
	l, g := newPlainGraph()
	q := g.AddExpr(mustExpr(l, "q"))
	p := g.Add(l.Op(l.f, q))  // P = {f(Q)}
	hp := g.Add(l.Op(l.g, p)) // g(P) joins Q below
	g.Union(q, hp)            // Q = {q, g(P)}: a cycle through P
	rootA := g.Add(l.Op(l.neg, p))
	rootB := g.AddExpr(mustExpr(l, "r"))
	g.Union(rootA, rootB)
	g.Rebuild()

	banQ := func(g *EGraph[NoData], c ClassID, n Node, kids []int) (int, bool) {
		if n.Op == l.sym && l.syms.Name(n.Payload) == "q" {
			return 0, false
		}
		return AstSize(g, c, n, kids)
	}
	x := NewExtractor(g, banQ, lessInt)
	if _, ok := x.Cost(p); ok {
		t.Errorf("cyclic class P has a cost")
	}
	if _, _, err := x.Extract(q); err == nil {
		t.Errorf("extracting Q succeeded")
	}
	e, cost, err := x.Extract(rootA)
	if err != nil || e.Format(l) != "r" || cost != 1 {
		t.Errorf("root: %v %d %v", e, cost, err)
	}
	// With q allowed, P is (f q).
	e, _, err = NewExtractor(g, AstSize[NoData], lessInt).Extract(p)
	if err != nil || e.Format(l) != "(f q)" {
		t.Errorf("P: %v %v", e, err)
	}
}

// Costs need not be numbers: a structured (cardinality, work) pair with a
// lexicographic order, as storel's optimizer uses.
type pairCost struct{ card, work float64 }

func TestExtractStructuredCost(t *testing.T) {
	l, a, g := newConstGraph()
	a.noModify = true
	e1 := g.AddExpr(mustExpr(l, "(* (+ a b) c)"))
	e2 := g.AddExpr(mustExpr(l, "(+ (* a c) (* b c))"))
	g.Union(e1, e2)
	cost := func(g *EGraph[constant], _ ClassID, n Node, kids []pairCost) (pairCost, bool) {
		c := pairCost{card: 1, work: 1}
		if n.Op == l.mul {
			c.work = 10
		}
		for _, k := range kids {
			c.card += k.card
			c.work += k.work
		}
		return c, true
	}
	less := func(x, y pairCost) bool {
		if x.card != y.card {
			return x.card < y.card
		}
		return x.work < y.work
	}
	x := NewExtractor(g, cost, less)
	e, c, err := x.Extract(e1)
	if err != nil || e.Format(l) != "(* (+ a b) c)" || c != (pairCost{5, 14}) {
		t.Errorf("got %v %+v %v", e, c, err)
	}
}

// A cost that depends on more than its children's numbers: g of a child
// that f built costs 100 more. The class of x switches from x to the
// cheaper (f y) after g(x) was costed; g's class must then price the g
// it has, g(f y), and so prefer z, not keep the number g(x) had.
type builtCost struct {
	work  float64
	built bool
}

func TestExtractCostRisesWithChild(t *testing.T) {
	l, g := newPlainGraph()
	x := g.AddExpr(mustExpr(l, "x"))
	root := g.Add(l.Op(l.g, x))
	fy := g.AddExpr(mustExpr(l, "(f y)"))
	g.Union(x, fy)
	g.Union(root, g.AddExpr(mustExpr(l, "z")))
	g.Rebuild()
	leaf := map[string]float64{"x": 5, "y": 1, "z": 50}
	cost := func(_ *EGraph[NoData], _ ClassID, n Node, kids []builtCost) (builtCost, bool) {
		switch n.Op {
		case l.sym:
			return builtCost{work: leaf[l.syms.Name(n.Payload)]}, true
		case l.f:
			return builtCost{work: kids[0].work + 1, built: true}, true
		case l.g:
			c := builtCost{work: kids[0].work + 1}
			if kids[0].built {
				c.work += 100
			}
			return c, true
		}
		return builtCost{}, false
	}
	x2 := NewExtractor(g, cost, func(a, b builtCost) bool { return a.work < b.work })
	e, c, err := x2.Extract(root)
	if err != nil || e.Format(l) != "z" || c.work != 50 {
		t.Errorf("extracted %v at %v (%v), want z at 50", e, c.work, err)
	}
}

func TestDot(t *testing.T) {
	l, g := newPlainGraph()
	a := g.AddExpr(mustExpr(l, "(+ x 1)"))
	b := g.AddExpr(mustExpr(l, "(+ 1 x)"))
	g.Union(a, b)
	dot := g.Dot()
	for _, want := range []string{
		"digraph egraph {", "compound=true", "subgraph cluster_", `[label="+"]`, `[label="x"]`, "lhead=cluster_",
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("dot output lacks %q:\n%s", want, dot)
		}
	}
	if n := strings.Count(dot, "subgraph cluster_"); n != g.NumClasses() {
		t.Errorf("%d clusters for %d classes", n, g.NumClasses())
	}
	if n := strings.Count(dot, " -> "); n != 4 {
		t.Errorf("%d edges, want 4", n)
	}
}

func TestDump(t *testing.T) {
	l, g := newPlainGraph()
	a := g.AddExpr(mustExpr(l, "(+ x 1)"))
	b := g.AddExpr(mustExpr(l, "(+ 1 x)"))
	g.Union(a, b)
	x, _ := g.LookupExpr(mustExpr(l, "x"))
	one, _ := g.LookupExpr(mustExpr(l, "1"))
	want := "0: x\n1: 1\n" + itoaClass(g.Find(a)) + ": (+ " + itoaClass(x) + " " + itoaClass(one) + ") (+ " + itoaClass(one) + " " + itoaClass(x) + ")\n"
	if got := g.Dump(); got != want {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
}

func itoaClass(c ClassID) string { return strconv.Itoa(int(c)) }

// Costs that rise each time they are evaluated, on a cycle of classes
// (x = f(y), y = g(x)): each rise makes the class pick again and requeue
// its parents, round the cycle. The extractor must stop after a few rises
// per class, not spend its whole evaluation budget.
func TestExtractRisingCostsOnCycleStop(t *testing.T) {
	l, g := newPlainGraph()
	x, y := g.AddExpr(mustExpr(l, "x")), g.AddExpr(mustExpr(l, "y"))
	g.Union(x, g.Add(l.Op(l.f, y)))
	g.Union(y, g.Add(l.Op(l.g, x)))
	g.Rebuild()
	calls := 0
	cost := func(_ *EGraph[NoData], _ ClassID, n Node, kids []float64) (float64, bool) {
		calls++
		if n.Op == l.sym {
			return 1000, true
		}
		return float64(calls), true
	}
	NewExtractor(g, cost, func(a, b float64) bool { return a < b })
	if calls > 8*maxRisesPerClass+8 {
		t.Errorf("%d cost evaluations on a cycle of two classes", calls)
	}
}
