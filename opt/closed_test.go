package opt

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// closedInLoop returns the first closed build of e (closedBuildTerm) that
// runs inside a loop's body, or nil.
func closedInLoop(e *ir.Expr) *ir.Expr {
	var find func(e *ir.Expr, inLoop bool) *ir.Expr
	find = func(e *ir.Expr, inLoop bool) *ir.Expr {
		if e == nil {
			return nil
		}
		if inLoop && closedBuildTerm(e) {
			return e
		}
		for i, a := range e.Args {
			if f := find(a, inLoop || loopBody(e, i)); f != nil {
				return f
			}
		}
		return nil
	}
	return find(e, false)
}

// globalsEnv is the types of the globals e reads.
func globalsEnv(e *ir.Expr) map[string]ir.Type {
	env := map[string]ir.Type{}
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Op == ir.OpGlobal {
			env[n.Name] = n.Type
		}
		return true
	})
	return env
}

// A plan with closed builds in several places: two equal ones in the
// loop over i (one let for both), one in the body of another closed
// build's loop (hoisted before it), one whose loop reads i (stays) and
// one outside every loop (stays).
const closedBuildsPlan = `
let top = sum(<a, _> in 0:N) { @dense a -> X(a) } in
sum(<i, _> in 0:N)
  { @dense i ->
    (sum(<j, _> in 0:N) { @dense j -> X(j) * 2.0 })(i)
    + (sum(<j, _> in 0:N) { @dense j -> X(j) * 2.0 })(i)
    + (sum(<m, _> in 0:N) { @dense m -> (sum(<q, _> in 0:N) { @dense q -> X(q) + 1.0 })(m) * X(m) })(i)
    + (sum(<n, _> in 0:i + 1) { @dense n -> X(n) })(i)
    + top(i) }`

func TestHoistClosedBuilds(t *testing.T) {
	env := map[string]ir.Type{"N": ir.IntType, "X": ir.RealType.Dict()}
	plan, err := sdql.CompileExpr("closed", []byte(closedBuildsPlan), env)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.Store{"N": storage.IntScalar(6), "X": storage.RealArray([]float64{1, 2, 3, 4, 5, 6})}
	got := hoistClosed(plan, func(*ir.Expr) bool { return true })
	if b := closedInLoop(got); b != nil {
		t.Errorf("a closed build stays in a loop: %s\nin\n%s", ir.Format(b), ir.Format(got))
	}
	var lets []*ir.Expr
	body := got
	for body.Op == ir.OpLet {
		lets = append(lets, body.Args[0])
		body = body.Args[1]
	}
	// The equal builds share a let; the build read in the other's loop
	// comes first; the one outside every loop keeps its own let.
	if len(lets) != 4 {
		t.Fatalf("want 4 lets at the top, got %d:\n%s", len(lets), ir.Format(got))
	}
	if s := ir.Format(lets[1]); !strings.Contains(s, "X(q) + 1.0") {
		t.Errorf("the inner build should be bound before the build that reads it, got %s", s)
	}
	if !strings.Contains(ir.Format(body), "0:i + 1") {
		t.Errorf("the build whose loop reads i must stay in place:\n%s", ir.Format(got))
	}
	checkSameValue(t, plan, got, st)
	// A build the predicate rejects stays where it is.
	kept := hoistClosed(plan, func(*ir.Expr) bool { return false })
	if ir.Format(kept) != ir.Format(plan) {
		t.Errorf("no build may move when none is safe:\n%s", ir.Format(kept))
	}
}

// The cost model charges a closed build once, where it runs: a plan with
// the build in a loop costs what the plan hoistClosed makes of it costs,
// and a build whose loop reads the loop's variable is charged per run.
func TestClosedBuildChargedOnce(t *testing.T) {
	env := map[string]ir.Type{"N": ir.IntType, "X": ir.RealType.Dict()}
	st := storage.Store{"N": storage.IntScalar(1000), "X": storage.RealArray(make([]float64, 1000))}
	cost := func(e *ir.Expr) float64 {
		s := newSession(st, GatherStats(st))
		e = uniquify(e)
		s.reserveNames(e)
		c, err := s.termCost(e, false)
		if err != nil {
			t.Fatal(err)
		}
		return c.Value
	}
	compile := func(text string) *ir.Expr {
		e, err := sdql.CompileExpr("closed", []byte(text), env)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	inLoop := compile(`sum(<i, _> in 0:N) { @dense i -> (sum(<j, _> in 0:N) { @dense j -> X(j) * 2.0 })(i) }`)
	hoisted := hoistClosed(inLoop, func(*ir.Expr) bool { return true })
	if closedInLoop(hoisted) != nil {
		t.Fatalf("not hoisted:\n%s", ir.Format(hoisted))
	}
	a, b := cost(inLoop), cost(hoisted)
	if math.Abs(a-b) > 1e-6*b {
		t.Errorf("the build in the loop costs %g, hoisted %g: want equal", a, b)
	}
	open := compile(`sum(<i, _> in 0:N) { @dense i -> (sum(<j, _> in 0:N) { @dense j -> X(j) * 2.0 + i })(i) }`)
	if c := cost(open); c < 100*b {
		t.Errorf("a build that reads the loop's variable costs %g, the closed one %g: want it charged per run", c, b)
	}
}

// TTM with A in CSF and B in CSR walks B against its storage order: the
// plan walks a copy of B grouped by column (M4s) in the loop over A's
// entries, and that copy, which reads no loop variable, is built once
// before every loop, not once per row or fiber of A. The plan computes
// what the naive plan computes.
func TestTransposedCopyBuiltOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	naive, st := composeOver(t, "ttm", []tensorInput{
		{"A", "csf", randomSparseCOO(r, []int64{2000, 1800, 20}, 30000)},
		{"B", "csr", randomSparseCOO(r, []int64{25, 20}, 25*20/32)},
	})
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !walksCopyOfValues(res.Plan, "B_val") {
		t.Errorf("the plan does not walk a copy of B:\n%s", ir.Format(res.Plan))
	}
	if b := closedInLoop(res.Plan); b != nil {
		t.Errorf("the plan builds %s inside a loop:\n%s", ir.Format(b), ir.Format(res.Plan))
	}
	checkSameValue(t, naive, res.Plan, st)
}
