package opt

import (
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/value"
)

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

// The values of a dictionary of ints the plan builds are bounded where no
// two of its entries add: a sum keyed by its own variable, or by the
// values of a sorted vector. Where entries may add (a key that repeats),
// the analysis keeps no bound. Each case is checked against the
// interpreter's values of the dictionary.
func TestBuiltDictionaryRanges(t *testing.T) {
	st, env := ruleStore(t)
	for _, c := range []struct {
		src    string
		lo, hi int64
		ok     bool
	}{
		// positions plus one of K's entries, keyed by coordinate and row
		{"sum(<j, u> in 0:2) sum(<p, c> in K(P(j):P(j + 1))) { c -> { j -> p + 1 } }", 1, 4, true},
		{"(sum(<j, u> in 0:2) sum(<p, c> in K(P(j):P(j + 1))) { c -> { j -> p + 1 } })(3)", 1, 4, true},
		// a missing key reads as 0
		{"(sum(<k, u> in 0:3) { k -> k + 1 })(5)", 0, 3, true},
		{"sum(<k, u> in 0:3) { k -> 2 * k }", 0, 4, true},
		{"let t = sum(<k, u> in 0:3) { k -> 2 * k } in t(1)", 0, 4, true},
		// the key c repeats across rows (K holds 1 twice): values add
		{"sum(<j, u> in 0:2) sum(<p, c> in K(P(j):P(j + 1))) { c -> p + 1 }", 0, 0, false},
		// a constant key: every iteration adds at 0
		{"sum(<k, u> in 0:3) { 0 -> k }", 0, 0, false},
		// K is not sorted as a whole: its values may repeat
		{"sum(<p, c> in K) { c -> p }", 0, 0, false},
	} {
		e, err := sdql.CompileExpr("input", []byte(c.src), env)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		s := newSession(st, GatherStats(st))
		s.reserveNames(e)
		root, err := s.addExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		s.g.Rebuild()
		got := s.g.Data(root).Range
		if got.ok != c.ok || c.ok && (got.lo != c.lo || got.hi != c.hi) {
			t.Errorf("%s: range [%d, %d] (ok %v), want [%d, %d] (ok %v)", c.src, got.lo, got.hi, got.ok, c.lo, c.hi, c.ok)
		}
		v, err := eval.Eval(e, st)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got.ok {
			for _, x := range leafInts(v) {
				if x < got.lo || x > got.hi {
					t.Errorf("%s: value %d outside [%d, %d]", c.src, x, got.lo, got.hi)
				}
			}
		}
	}
}

// leafInts lists the int values of v (a scalar or nested dictionary).
func leafInts(v value.Value) []int64 {
	switch x := v.(type) {
	case int64:
		return []int64{x}
	case *value.Dict:
		var out []int64
		for _, y := range x.Vals {
			out = append(out, leafInts(y)...)
		}
		return out
	}
	return nil
}

// TestRunEndSafety: runend(A, p, e) is judged safe only where p is one of
// A's positions or never below e, as the interpreter fails otherwise; the
// walks of runs RN1 writes stay safe.
func TestRunEndSafety(t *testing.T) {
	st, env := ruleStore(t)
	stats := GatherStats(st)
	for _, c := range []struct {
		src  string
		safe bool
	}{
		{"sum(<p, i> in runs(G(0:n))) { @unique i -> sum(<q, u> in p:runend(G, p, n)) V(q) }", true},
		{"sum(<q, u> in 0:runend(G, 0, n)) { M(q) -> V(q) }", true},
		{"runend(G, n + 3, n)", true},
		{"runend(G, n + 3, n + 11)", false},
		{"runend(G, n - 5, n)", false},
	} {
		e, err := sdql.CompileExpr("input", []byte(c.src), env)
		if err != nil {
			t.Fatal(err)
		}
		if got := planSafe(e, st, stats); got != c.safe {
			t.Errorf("%s: judged safe %v, want %v", c.src, got, c.safe)
		}
	}
}
