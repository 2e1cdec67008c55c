package opt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// A rewritten node keeps the source position of the class it replaces:
// j - j folds to 0, and the division rebuilt over it still points at the
// division written.
func TestRewritesKeepPositions(t *testing.T) {
	line := "CREATE TENSOR r AS sum(<i,_> in 0:n) sum(<j,_> in 0:n) { i -> 1 / (j - j) };"
	p, err := sdql.Compile(sdql.Source{Name: "p.sdql", Text: []byte("CREATE int SCALAR n;\n" + line + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Optimize(p.Compose(""), storage.Store{"n": storage.IntScalar(3)}, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	var div *ir.Expr
	ir.Walk(res.Plan, func(e *ir.Expr) bool {
		if e.Op == ir.OpDiv {
			div = e
		}
		return true
	})
	if div == nil {
		t.Fatalf("no division in the plan:\n%s", ir.Format(res.Plan))
	}
	want := fmt.Sprintf("p.sdql:2:%d", strings.Index(line, "/ (j")+1)
	if div.Pos.String() != want {
		t.Errorf("the plan's division %s is at %s, want %s", div, div.Pos, want)
	}
}

// Every node of an optimized plan that can fail at run time (a read, a
// segment, a division) has a source position, on the paper's kernels and
// on random programs, so that its error names the user's text.
func TestOptimizedPlansHavePositions(t *testing.T) {
	check := func(name string, plan *ir.Expr) {
		ir.Walk(plan, func(e *ir.Expr) bool {
			switch e.Op {
			case ir.OpLookup, ir.OpSubArray, ir.OpDiv, ir.OpMod:
				if !e.Pos.IsValid() {
					t.Errorf("%s: %s has no position in\n%s", name, e, ir.Format(plan))
					return false
				}
			}
			return true
		})
	}
	for _, k := range paperKernels {
		naive, st := setupKernel(t, k.name, 1, k.tensors)
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		check(k.name, res.Plan)
	}
	for seed := uint64(1); seed <= 40; seed++ {
		naive, st, _, err := randomPlan(seed, seed)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("random program %d", seed), res.Plan)
	}
}
