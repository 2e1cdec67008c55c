package egraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// substSet renders matches as sorted "class:{bindings}" strings.
func substSet(matches []Match) []string {
	var out []string
	for _, m := range matches {
		for s := range m.Substs() {
			out = append(out, fmt.Sprintf("%d:%s", m.Class, s))
		}
	}
	sort.Strings(out)
	return out
}

func TestEMatching(t *testing.T) {
	l, g := newPlainGraph()
	g.AddExpr(mustExpr(l, "(+ (* a 2) (* b 2))"))
	g.AddExpr(mustExpr(l, "(+ a a)"))
	ab := g.AddExpr(mustExpr(l, "(+ a b)"))
	g.Rebuild()
	a, _ := g.LookupExpr(mustExpr(l, "a"))
	b, _ := g.LookupExpr(mustExpr(l, "b"))

	count := func(pat string) int {
		return CountSubsts(SearchPattern(g, MustParsePattern(l, pat), 0))
	}
	if n := count("(* ?x 2)"); n != 2 {
		t.Errorf("(* ?x 2): %d matches, want 2", n)
	}
	if n := count("(* ?x 3)"); n != 0 {
		t.Errorf("(* ?x 3) (absent constant): %d matches", n)
	}
	// Payload of a symbol leaf must match exactly.
	if n := count("(+ a ?y)"); n != 2 {
		t.Errorf("(+ a ?y): %d matches, want 2 ((+ a a), (+ a b))", n)
	}
	// Non-linear: ?x twice.
	if n := count("(+ ?x ?x)"); n != 1 {
		t.Errorf("(+ ?x ?x): %d matches, want 1", n)
	}
	if n := count("(+ (* ?x 2) (* ?x 2))"); n != 0 {
		t.Errorf("(+ (* ?x 2) (* ?x 2)) matched before a=b: %d", n)
	}
	ms := SearchPattern(g, MustParsePattern(l, "(+ ?x ?y)"), 0)
	if n := CountSubsts(ms); n != 3 {
		t.Errorf("(+ ?x ?y): %d matches, want 3", n)
	}
	for _, m := range ms {
		for s := range m.Substs() {
			x, _ := s.Get("?x")
			y, _ := s.Get("?y")
			if m.Class == g.Find(ab) && (x != a || y != b) {
				t.Errorf("(+ a b) matched with %s", s)
			}
		}
	}

	g.Union(a, b)
	g.Rebuild()
	if n := count("(+ ?x ?x)"); n != 2 {
		t.Errorf("(+ ?x ?x) after a=b: %d matches, want 2", n)
	}
	if n := count("(+ (* ?x 2) (* ?x 2))"); n != 1 {
		t.Errorf("(+ (* ?x 2) (* ?x 2)) after a=b: %d matches, want 1", n)
	}
	// A variable at the root matches every class once.
	if n := count("?z"); n != g.NumClasses() {
		t.Errorf("?z: %d matches for %d classes", n, g.NumClasses())
	}
	// Limits stop the search early.
	if n := CountSubsts(SearchPattern(g, MustParsePattern(l, "?z"), 3)); n != 3 {
		t.Errorf("limit 3 gave %d", n)
	}
}

// naiveMatch enumerates substitutions (as slot-indexed slices) matching
// pattern node pi against class c, by brute force over all nodes.
func naiveMatch[D any](g *EGraph[D], p *Pattern, pi int, c ClassID, s []ClassID) [][]ClassID {
	n := &p.nodes[pi]
	if n.isVar {
		if s[n.slot] != deadID {
			if s[n.slot] == c {
				return [][]ClassID{s}
			}
			return nil
		}
		s2 := slices.Clone(s)
		s2[n.slot] = c
		return [][]ClassID{s2}
	}
	var out [][]ClassID
	for _, nid := range g.Nodes(c) {
		node := g.Node(nid)
		if node.Op != n.op || node.Payload != n.payload || len(node.Children) != len(n.kids) {
			continue
		}
		partial := [][]ClassID{s}
		for i, k := range n.kids {
			var next [][]ClassID
			for _, ps := range partial {
				next = append(next, naiveMatch(g, p, k, node.Children[i], ps)...)
			}
			partial = next
		}
		out = append(out, partial...)
	}
	return out
}

const deadID = ^ClassID(0)

func TestEMatchingAgainstNaive(t *testing.T) {
	l := newArith()
	patterns := []string{
		"(+ ?a ?b)", "(+ ?a ?a)", "(f (f ?x))", "(+ (f ?x) ?x)", "(h ?a ?b ?a ?c ?d)",
		"(+ a ?b)", "(f a)", "?x", "(+ (+ ?a ?b) ?c)", "(+ ?a (+ ?a ?b))", "(f (+ a b))",
		"(+ (f ?x) (f ?y))",
	}
	for seed := range uint64(25) {
		rng := rand.New(rand.NewPCG(seed, 11))
		g := New[NoData](l, NoAnalysis{})
		var ids []ClassID
		pick := func() ClassID { return ids[rng.IntN(len(ids))] }
		for _, s := range []string{"a", "b", "c"} {
			ids = append(ids, g.Add(l.Sym(s)))
		}
		for range 80 {
			switch r := rng.IntN(10); {
			case r < 4:
				ids = append(ids, g.Add(l.Op(l.f, pick())))
			case r < 8:
				ids = append(ids, g.Add(l.Op(l.add, pick(), pick())))
			case r < 9:
				ids = append(ids, g.Add(l.Op(l.h, pick(), pick(), pick(), pick(), pick())))
			default:
				g.Union(pick(), pick())
			}
		}
		g.Rebuild()
		for _, src := range patterns {
			p := MustParsePattern(l, src)
			got := substSet(SearchPattern(g, p, 0))
			var want []string
			for c := range g.Classes() {
				empty := make([]ClassID, len(p.vars))
				for i := range empty {
					empty[i] = deadID
				}
				for _, s := range naiveMatch(g, p, p.root(), c, empty) {
					want = append(want, fmt.Sprintf("%d:%s", c, NewSubst(p.vars, s)))
				}
			}
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, pattern %s:\n got %v\nwant %v", seed, src, got, want)
			}
		}
	}
}

func TestCustomSearcherAndApplier(t *testing.T) {
	l, g := newPlainGraph()
	root := g.AddExpr(mustExpr(l, "(neg (neg (neg x)))"))
	// Custom searcher: classes with a neg node whose child has a neg node,
	// binding ?inner to the grandchild.
	vars := []Var{"?inner"}
	s := SearcherFunc[NoData]{VarList: vars, Fn: func(g *EGraph[NoData], limit int) []Match {
		var ms []Match
		for _, c := range g.ClassesWithOp(l.neg) {
			for _, nid := range g.Nodes(c) {
				n := g.Node(nid)
				if n.Op != l.neg {
					continue
				}
				for _, kid := range g.Nodes(n.Children[0]) {
					if k := g.Node(kid); k.Op == l.neg {
						m := NewMatch(c, vars)
						m.Add(k.Children[0])
						ms = append(ms, m)
					}
				}
			}
		}
		return ms
	}}
	rw, err := NewRewrite("double-neg", Searcher[NoData](s), PatternApplier[NoData](MustParsePattern(l, "?inner")))
	if err != nil {
		t.Fatal(err)
	}
	if NewRewriteErr := func() error {
		_, err := NewRewrite("bad", Searcher[NoData](s), PatternApplier[NoData](MustParsePattern(l, "?other")))
		return err
	}(); NewRewriteErr == nil {
		t.Error("applier with an unbound variable was accepted")
	}
	r := NewRunner(g)
	r.Run([]*Rewrite[NoData]{rw})
	x, _ := g.LookupExpr(mustExpr(l, "(neg x)"))
	if g.Find(root) != g.Find(x) {
		t.Errorf("(neg (neg (neg x))) not equal to (neg x): %s", r.Report())
	}

	// A custom applier returning several classes.
	g2 := New[NoData](l, NoAnalysis{})
	z := g2.AddExpr(mustExpr(l, "(f z)"))
	one, two := g2.AddExpr(mustExpr(l, "1")), g2.AddExpr(mustExpr(l, "2"))
	multi := &Rewrite[NoData]{
		Name:     "multi",
		Searcher: PatternSearcher[NoData](MustParsePattern(l, "(f ?a)")),
		Applier:  ApplierFunc[NoData](func(*EGraph[NoData], ClassID, Subst) []ClassID { return []ClassID{one, two} }),
	}
	if n := multi.Apply(g2, multi.Search(g2, 0)); n != 2 {
		t.Errorf("multi applier made %d unions, want 2", n)
	}
	g2.Rebuild()
	if g2.Find(z) != g2.Find(one) || g2.Find(one) != g2.Find(two) {
		t.Errorf("multi applier did not union all classes")
	}
}
