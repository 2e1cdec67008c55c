package storel_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/storel/storel"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
)

// TestMMMOverCopies: MMM with B stored dense and mostly zero, or stored
// by columns, runs a plan that builds a copy of B's rows once (the
// compressed copy of M6, the transposed copy of M4) and walks it per
// entry of A; every plan, engine and thread count agrees with the
// interpreter and with a Go loop, on two draws of the data.
func TestMMMOverCopies(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		r := rand.New(rand.NewSource(seed))
		a, b := randCOO(r, 0.2, 40, 60), randCOO(r, 1.0/32, 60, 200)
		exp := want{}
		for p, av := range a.Vals {
			for q, bv := range b.Vals {
				if b.Coords[0][q] == a.Coords[1][p] {
					exp.add(av*bv, a.Coords[0][p], b.Coords[1][q])
				}
			}
		}
		for _, f := range []string{"dense", "csc"} {
			w := storel.NewWorkspace()
			if err := w.AddTensor("A", a, "csr"); err != nil {
				t.Fatal(err)
			}
			if err := w.AddTensor("B", b, f); err != nil {
				t.Fatal(err)
			}
			const src = `sum(<(i,k),a> in A, <(k,j),b> in B) {(i,j) -> a*b}`
			check(t, "mmm/B "+f, runProgram(t, w, src), exp)
			p, err := w.Compile("mmm.sdql", []byte(src), "")
			if err != nil {
				t.Fatal(err)
			}
			// The node and round limits, not the machine's load, bound
			// the search whose plan this test judges.
			res, err := p.Run(storel.RunOptions{Optimize: opt.Options{TimeLimit: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			copied := false
			ir.Walk(res.Plan, func(e *ir.Expr) bool {
				copied = copied || (e.Op == ir.OpSum && e.Args[0].Op == ir.OpLookup && e.Args[0].Args[0].Op == ir.OpVar)
				return !copied
			})
			if !copied {
				t.Errorf("seed %d, B %s: the plan walks no copy of B:\n%s", seed, f, ir.Format(res.Plan))
			}
		}
	}
}
