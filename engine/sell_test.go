package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSellKernels runs SpMV and BATAX over matrices stored as sell (with
// values and as +pattern) with the optimizer's plans, and compares the
// engine with the reference interpreter on the same plan; SpMV must also
// give exactly what it gives over CSR, since each row adds its entries
// in the same order.
func TestSellKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 6 {
		rows, cols := 1+rng.Int64N(300), 1+rng.Int64N(50)
		c := &storage.COO{Dims: []int64{rows, cols}, Coords: [][]int64{nil, nil}, Field: storage.FieldPattern}
		seen := map[[2]int64]bool{}
		for range rng.IntN(int(rows * cols / 3)) {
			k := [2]int64{rng.Int64N(rows), rng.Int64N(cols)}
			if k[0]%7 == 3 {
				k[0] = 3 // a few long rows
			}
			if !seen[k] {
				seen[k] = true
				c.Coords[0] = append(c.Coords[0], k[0])
				c.Coords[1] = append(c.Coords[1], k[1])
				c.Vals = append(c.Vals, 1)
			}
		}
		x := make([]float64, cols)
		for i := range x {
			x[i] = rng.Float64() - 0.5
		}
		for _, format := range []string{"sell", "sell+pattern"} {
			f, _ := storage.ParseFormat(format)
			st, err := storage.Build("A", c, f)
			if err != nil {
				t.Fatal(err)
			}
			st["x"] = storage.RealArray(x)
			csrF, _ := storage.ParseFormat("csr")
			csr, _ := storage.Build("A", c, csrF)
			csr["x"] = storage.RealArray(x)
			for _, program := range []string{"spmv", "batax"} {
				if program == "batax" {
					st["beta"], csr["beta"] = storage.RealScalar(0.5), storage.RealScalar(0.5)
				}
				plan := optimizedPlan(t, program, map[string]string{"A": format}, st)
				k, err := Compile(plan, SchemaOf(st), Options{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := k.Run(st)
				if err != nil {
					t.Fatalf("trial %d %s %s: %v", trial, format, program, err)
				}
				want, err := eval.Eval(plan, st)
				if err != nil {
					t.Fatal(err)
				}
				if !value.Equal(got, want, 1e-12) {
					t.Fatalf("trial %d %s %s: engine %s, interpreter %s", trial, format, program, value.Format(got), value.Format(want))
				}
				if program != "spmv" {
					continue
				}
				kc, err := Compile(optimizedPlan(t, program, map[string]string{"A": "csr"}, csr), SchemaOf(csr), Options{})
				if err != nil {
					t.Fatal(err)
				}
				overCSR, err := kc.Run(csr)
				if err != nil {
					t.Fatal(err)
				}
				if !value.Equal(got, overCSR, 0) {
					t.Fatalf("trial %d %s: SpMV differs from CSR's: %s against %s", trial, format, value.Format(got), value.Format(overCSR))
				}
			}
		}
	}
}
