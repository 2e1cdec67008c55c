package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSellKernels runs SpMV and BATAX over matrices stored as sell (with
// values and as +pattern) with the optimizer's plans, on 1 to 3 threads,
// and compares the engine with the reference interpreter on the same
// plan; SpMV must also give exactly what it gives over CSR, since each
// row adds its entries in the same order, and must run on the eight-lane
// kernel (sell.go).
func TestSellKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 9 {
		rows, cols := 1+rng.Int64N(300), 1+rng.Int64N(50)
		// Pattern, real and integer values: sell holds the latter as ints.
		field := []string{storage.FieldPattern, storage.FieldReal, storage.FieldInteger}[trial%3]
		c := &storage.COO{Dims: []int64{rows, cols}, Coords: [][]int64{nil, nil}, Field: field}
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
				v := 1.0
				switch field {
				case storage.FieldReal:
					v = rng.NormFloat64()
				case storage.FieldInteger:
					v = float64(rng.IntN(9) - 4)
				}
				c.Vals = append(c.Vals, v)
			}
		}
		x := make([]float64, cols)
		for i := range x {
			x[i] = rng.Float64() - 0.5
		}
		for _, format := range []string{"sell", "sell+pattern"} {
			if format == "sell+pattern" && field != storage.FieldPattern {
				continue
			}
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
				kernels := 0
				sellCompiled = func(*sellPlan) { kernels++ }
				k, err := Compile(plan, SchemaOf(st), Options{Threads: 1 + trial%3})
				sellCompiled = nil
				if err != nil {
					t.Fatal(err)
				}
				if want := program == "spmv"; (kernels > 0) != want {
					t.Fatalf("trial %d %s %s: %d sell kernels compiled", trial, format, program, kernels)
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
