package opt

import (
	"testing"

	"github.com/storel/storel/engine"
	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// summmmPlacements are SumMMM's plans over A csr and B csc: A's entries
// scattered into its column sums and dotted with B, or B's entries
// scattered into its row sums and dotted with A.
var summmmPlacements = [2]string{`let t =
  sum(<i, _> in 0:A_len1)
    sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
      { @dense k -> A_val(p2) }
in
sum(<j, _> in 0:B_len1)
  sum(<p1, k1> in B_idx2(B_pos2(j):B_pos2(j + 1)))
    B_val(p1) * t(k1)`, `let t =
  sum(<j, _> in 0:B_len1)
    sum(<p1, k> in B_idx2(B_pos2(j):B_pos2(j + 1)))
      { @dense k -> B_val(p1) }
in
sum(<i, _> in 0:A_len1)
  sum(<p2, k1> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    A_val(p2) * t(k1)`}

// planCosts checks that each plan text computes what naive computes over
// st and returns the model's cost of each.
func planCosts(t *testing.T, naive *ir.Expr, st storage.Store, texts ...string) []float64 {
	t.Helper()
	want, err := eval.Eval(naive, st)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]ir.Type{}
	for name, info := range engine.SchemaOf(st) {
		env[name] = info.Type()
	}
	stats := GatherStats(st)
	costs := make([]float64, len(texts))
	for i, text := range texts {
		plan, err := sdql.CompileExpr("plan.sdql", []byte(text), env)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := eval.Eval(plan, st); err != nil || !value.Equal(want, got, 1e-9) {
			t.Fatalf("plan %d computes %v (%v), the naive plan %v", i, got, err, want)
		}
		s := newSession(st, stats)
		s.reserveNames(plan)
		c, err := s.termCost(plan, false)
		if err != nil {
			t.Fatal(err)
		}
		costs[i] = c.Value
	}
	return costs
}

// TestScatterRanks: with A csr holding many more entries than B csc, the
// model ranks scattering B's few entries and dotting A with them below
// scattering A's many entries, as the engine runs them (bcsstk16 with B
// of 250 columns at density 1/32: 0.24-0.27 against 0.35-0.56 ms).
func TestScatterRanks(t *testing.T) {
	src, _ := examples.Source("summmm")
	naive, st := setupProgram(t, "summmm", src, 5, []tensorSpec{{"A", "csr", []int64{1000, 1000}, 0.012}, {"B", "csc", []int64{1000, 50}, 1.0 / 32}})
	costs := planCosts(t, naive, st, summmmPlacements[0], summmmPlacements[1])
	if costs[1] >= costs[0] {
		t.Errorf("scattering B costs %.3g, scattering A %.3g", costs[1], costs[0])
	}
}
