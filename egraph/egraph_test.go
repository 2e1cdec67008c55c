package egraph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHashConsing(t *testing.T) {
	l, g := newPlainGraph()
	a := g.AddExpr(mustExpr(l, "(+ (* x 2) (* x 2))"))
	nodes, classes := g.NumNodes(), g.NumClasses()
	if nodes != 4 || classes != 4 { // x, 2, (* x 2), (+ ...)
		t.Fatalf("got %d nodes %d classes, want 4 and 4", nodes, classes)
	}
	b := g.AddExpr(mustExpr(l, "(+ (* x 2) (* x 2))"))
	if a != b || g.NumNodes() != nodes {
		t.Errorf("re-adding gave class %d (want %d), %d nodes (want %d)", b, a, g.NumNodes(), nodes)
	}
	// Payloads distinguish nodes of the same operator.
	if g.AddExpr(mustExpr(l, "(* x 3)")) == g.AddExpr(mustExpr(l, "(* x 2)")) {
		t.Errorf("(* x 3) and (* x 2) share a class")
	}
	if _, ok := g.LookupExpr(mustExpr(l, "(* y 2)")); ok {
		t.Errorf("lookup found a term never added")
	}
	if id, ok := g.LookupExpr(mustExpr(l, "(* x 2)")); !ok || g.NumNodes() != nodes+2 {
		t.Errorf("lookup of present term: %d %v, nodes %d", id, ok, g.NumNodes())
	}
	// Wide nodes use the fallback key.
	w1 := g.AddExpr(mustExpr(l, "(h x 2 3 4 5 6)"))
	w2 := g.AddExpr(mustExpr(l, "(h x 2 3 4 5 6)"))
	w3 := g.AddExpr(mustExpr(l, "(h x 2 3 4 5 7)"))
	if w1 != w2 || w1 == w3 {
		t.Errorf("wide nodes: %d %d %d", w1, w2, w3)
	}
	g.Rebuild()
	checkInvariants(t, g)
}

func TestCongruenceClosure(t *testing.T) {
	l, g := newPlainGraph()
	fa := g.AddExpr(mustExpr(l, "(g (f a))"))
	fb := g.AddExpr(mustExpr(l, "(g (f b))"))
	a, _ := g.LookupExpr(mustExpr(l, "a"))
	b, _ := g.LookupExpr(mustExpr(l, "b"))
	before := g.NumNodes()
	if !g.Union(a, b) {
		t.Fatal("union of distinct classes reported no change")
	}
	if g.Union(b, a) {
		t.Error("second union reported a change")
	}
	if g.Find(fa) == g.Find(fb) {
		t.Error("congruence found before rebuild")
	}
	if n := g.Rebuild(); n != 2 {
		t.Errorf("rebuild performed %d unions, want 2 (f and g levels)", n)
	}
	if g.Find(fa) != g.Find(fb) {
		t.Error("g(f(a)) and g(f(b)) not merged after a=b")
	}
	if g.NumNodes() != before-2 {
		t.Errorf("nodes %d, want %d (two duplicates dropped)", g.NumNodes(), before-2)
	}
	checkInvariants(t, g)
}

// TestRandomCongruence compares the e-graph's equivalence with a naive
// congruence closure over random terms and unions.
func TestRandomCongruence(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		l, g := newPlainGraph()
		type added struct {
			n  Node
			id ClassID
		}
		var log []added
		var ids []ClassID
		var unions [][2]ClassID
		add := func(n Node) {
			id := g.Add(n)
			log = append(log, added{Node{n.Op, n.Payload, slices.Clone(n.Children)}, id})
			ids = append(ids, id)
		}
		pick := func() ClassID { return ids[rng.IntN(len(ids))] }
		for i := range 4 {
			add(l.Sym(string(rune('a' + i))))
		}
		for range 150 {
			switch r := rng.IntN(10); {
			case r < 3:
				add(l.Op(l.f, pick()))
			case r < 5:
				add(l.Op(l.add, pick(), pick()))
			case r < 6:
				add(l.Op(l.h, pick(), pick(), pick(), pick(), pick()))
			case r < 8:
				x, y := pick(), pick()
				g.Union(x, y)
				unions = append(unions, [2]ClassID{x, y})
			default:
				g.Rebuild()
			}
		}
		g.Rebuild()
		checkInvariants(t, g)

		// Naive closure: union-find over IDs, congruence to a fixed point.
		parent := make([]ClassID, g.uf.size())
		for i := range parent {
			parent[i] = ClassID(i)
		}
		find := func(x ClassID) ClassID {
			for parent[x] != x {
				x = parent[x]
			}
			return x
		}
		union := func(x, y ClassID) bool {
			x, y = find(x), find(y)
			if x == y {
				return false
			}
			parent[x] = y
			return true
		}
		for _, u := range unions {
			union(u[0], u[1])
		}
		for changed := true; changed; {
			changed = false
			for i := range log {
				for j := range i {
					x, y := log[i], log[j]
					if x.n.Op != y.n.Op || x.n.Payload != y.n.Payload || len(x.n.Children) != len(y.n.Children) {
						continue
					}
					same := true
					for k := range x.n.Children {
						if find(x.n.Children[k]) != find(y.n.Children[k]) {
							same = false
							break
						}
					}
					if same && union(x.id, y.id) {
						changed = true
					}
				}
			}
		}
		for i := range log {
			for j := range i {
				x, y := log[i].id, log[j].id
				if (find(x) == find(y)) != (g.Find(x) == g.Find(y)) {
					t.Fatalf("seed %d: classes %d and %d: naive says %v, e-graph %v",
						seed, x, y, find(x) == find(y), g.Find(x) == g.Find(y))
				}
			}
		}
	}
}

func TestConstantFoldingAnalysis(t *testing.T) {
	l, a, g := newConstGraph()
	three := g.AddExpr(mustExpr(l, "(+ 1 2)"))
	if d := g.Data(three); !d.known || d.val != 3 {
		t.Fatalf("(+ 1 2) folds to %+v", d)
	}
	// Modify added the constant 3 to the class.
	if id, ok := g.LookupExpr(mustExpr(l, "3")); !ok || g.Find(id) != g.Find(three) {
		t.Errorf("constant 3 not in the class of (+ 1 2)")
	}

	// Learning x = 4 must reach the parents of x through rebuild.
	e := g.AddExpr(mustExpr(l, "(* (+ x 1) 2)"))
	if g.Data(e).known {
		t.Fatalf("(* (+ x 1) 2) known before x is")
	}
	x, _ := g.LookupExpr(mustExpr(l, "x"))
	four := g.AddExpr(mustExpr(l, "4"))
	g.Union(x, four)
	g.Rebuild()
	if d := g.Data(e); !d.known || d.val != 10 {
		t.Errorf("after x=4, (* (+ x 1) 2) folds to %+v, want 10", d)
	}
	if id, ok := g.LookupExpr(mustExpr(l, "10")); !ok || g.Find(id) != g.Find(e) {
		t.Errorf("constant 10 not unioned into (* (+ x 1) 2)")
	}
	if len(a.conflicts) != 0 {
		t.Errorf("unexpected conflicts %v", a.conflicts)
	}
	checkInvariants(t, g)

	// Merging classes with different constants is detected.
	g.Union(three, four)
	g.Rebuild()
	if len(a.conflicts) == 0 {
		t.Errorf("merging 3 and 4 was not reported as a conflict")
	}
}

func TestAnalysisPropagatesThroughCongruence(t *testing.T) {
	l, a, g := newConstGraph()
	a.noModify = true
	// (f y) and (f z) merge by congruence once y=z; the data of
	// (+ (f z) 0)... stays unknown, but (- y z) becomes known as soon as
	// y and z are both known through a union with 5.
	d := g.AddExpr(mustExpr(l, "(- y 5)"))
	y, _ := g.LookupExpr(mustExpr(l, "y"))
	z := g.AddExpr(mustExpr(l, "z"))
	g.Union(y, z)
	g.Rebuild()
	if g.Data(d).known {
		t.Fatalf("(- y 5) known too early")
	}
	g.Union(z, g.AddExpr(mustExpr(l, "5")))
	g.Rebuild()
	if got := g.Data(d); !got.known || got.val != 0 {
		t.Errorf("(- y 5) with y=z=5 folds to %+v, want 0", got)
	}
	checkInvariants(t, g)
}

func TestParseErrors(t *testing.T) {
	l := newArith()
	for _, tc := range []struct{ src, want string }{
		{"", "1:1: empty expression"},
		{"(+ 1 2", "1:1: unclosed '('"},
		{"()", "1:1: empty list has no operator"},
		{"(+ 1 2))", "1:8: unexpected ')' after the expression"},
		{"(+ 1\n  (* 2))", "2:4: operator * takes 2 arguments, got 1"},
		{"(?x 1 2)", "1:2: a variable cannot be an operator"},
		{"(+ ? 1)", "1:4: variable without a name"},
		{"((+ 1 2) 3)", "1:2: a list must start with an operator, not a list"},
	} {
		_, err := ParsePattern(l, tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParsePattern(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
	if _, err := ParseExpr(l, "(+ ?a 1)"); err == nil {
		t.Errorf("ParseExpr accepted a variable")
	}
	if _, err := ParseExpr(l, "(+ 1 2 ; comment\n)"); err != nil {
		t.Errorf("comment rejected: %v", err)
	}
}

func TestRecExprRoundTrip(t *testing.T) {
	l := newArith()
	for _, src := range []string{"x", "(+ x 1)", "(* (neg -3) (h a b c d e k))"} {
		if got := mustExpr(l, src).Format(l); got != src {
			t.Errorf("round trip of %s gave %s", src, got)
		}
		p := MustParsePattern(l, src)
		if got := p.String(); got != src {
			t.Errorf("pattern round trip of %s gave %s", src, got)
		}
	}
	if got := MustParsePattern(l, "(+ ?a (* ?b ?a))").String(); got != "(+ ?a (* ?b ?a))" {
		t.Errorf("pattern printed as %s", got)
	}
}

// TestRandomAnalysisFixpoint builds random arithmetic over symbols and
// constants, unions symbols with constants and with each other, and checks
// that every class's datum is a fixed point: joining the Make of any of its
// nodes changes nothing. Modify adds folded constants during rebuild, so
// this also exercises graph changes made from inside Rebuild.
func TestRandomAnalysisFixpoint(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		l, a, g := newConstGraph()
		var ids, syms []ClassID
		for _, s := range []string{"p", "q", "r", "s"} {
			id := g.Add(l.Sym(s))
			ids = append(ids, id)
			syms = append(syms, id)
		}
		pick := func() ClassID { return ids[rng.IntN(len(ids))] }
		ops := []Op{l.add, l.sub, l.mul}
		for range 120 {
			switch r := rng.IntN(12); {
			case r < 2:
				ids = append(ids, g.Add(l.Num(int64(rng.IntN(5)))))
			case r < 8:
				ids = append(ids, g.Add(l.Op(ops[rng.IntN(len(ops))], pick(), pick())))
			case r < 10:
				// Binding a symbol may conflict with an earlier binding;
				// conflicts are recorded, not fatal.
				g.Union(syms[rng.IntN(len(syms))], g.Add(l.Num(int64(rng.IntN(5)))))
			case r < 11:
				g.Union(pick(), pick())
			default:
				g.Rebuild()
			}
		}
		g.Rebuild()
		checkInvariants(t, g)
		for c := range g.Classes() {
			for _, nid := range g.Nodes(c) {
				d := g.Data(c)
				before := len(a.conflicts)
				res := a.Merge(&d, a.Make(g, g.Node(nid)))
				if res.IntoChanged {
					t.Fatalf("seed %d: class %d datum %+v is not a fixed point for node %d", seed, c, g.Data(c), nid)
				}
				a.conflicts = a.conflicts[:before]
			}
			// Modify's promise: a known class holds its constant.
			if d := g.Data(c); d.known {
				if k, ok := g.Lookup(l.Num(d.val)); !ok || g.Find(k) != c {
					t.Fatalf("seed %d: class %d folds to %d but lacks the constant", seed, c, d.val)
				}
			}
		}
	}
}
