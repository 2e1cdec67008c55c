package opt

import "testing"

// A refused rewrite leaves its nodes in the graph: here F1r's
// let k12 = k5 in b, k5 wider than the range k12's body was judged with.
// LT2 then matched the leftover let (its variable unused in b) and united
// it with b, which made b's class, and every class above it, unsafe; from
// there on the safety check let in F1's let k12 = k5 of the same body
// (its bounds test dropped by I9), and the plan read A_val past its end.
func TestRefusedRewriteLeavesSafeClassesSafe(t *testing.T) {
	if err := checkPipeline(98, 142649); err != nil {
		t.Fatal(err)
	}
}

// Every binder of a safe class gives its variable values within the range
// the variable's class was judged with. A rule that invents a binder names
// it once per matched class; a second match there (M1 over keys(k) of
// another range) must not bind the name over a wider source.
func TestBindersStayWithinJudgedRanges(t *testing.T) {
	bad := 0
	afterStage = func(s *session) {
		g := s.g
		for c := range g.Classes() {
			if !g.Data(c).Safe {
				continue
			}
			for _, nid := range g.Nodes(c) {
				n := g.Node(nid)
				got := s.bindingRanges(g, n)
				for i := 0; i < binderCount(n.Op); i++ {
					want := g.Data(n.Children[i]).Range
					if want.ok && !got[i].within(want.lo, want.hi) && bad < 5 {
						sym, _ := bindSym(g, n.Children[i])
						t.Errorf("%s binds %s over [%d, %d] (ok %v), judged as [%d, %d]", s.lang.Format(n.Op, n.Payload), s.symName(sym), got[i].lo, got[i].hi, got[i].ok, want.lo, want.hi)
						bad++
					}
				}
			}
		}
	}
	defer func() { afterStage = nil }()
	for seed := uint64(1); seed <= 150 && bad == 0; seed++ {
		if _, err := checkRandomProgram(seed); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
		if bad > 0 {
			t.Logf("seed %d", seed)
		}
	}
}
