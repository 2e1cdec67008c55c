package engine

import (
	"flag"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSellKernels runs SpMV and BATAX over matrices stored as sell (with
// values and as +pattern) with the optimizer's plans, on 1 to 3 threads,
// and compares the engine with the reference interpreter on the same
// plan; SpMV must also give what it gives over CSR up to rounding (a
// sell lane adds its row's entries in order, a CSR row in four partial
// sums), and both must run as interleaved rows (nestinter.go).
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
				k, err := Compile(plan, SchemaOf(st), Options{Threads: 1 + trial%3})
				if err != nil {
					t.Fatal(err)
				}
				// Below one entry per row on average the optimizer may add
				// each entry into its row (a key per entry) rather than
				// each row's sum (a key per row, most of them empty), or
				// scatter each entry by the row's dot, plans without
				// interleaved rows.
				if int64(len(c.Vals)) >= rows && !interleavedRows(k) {
					t.Fatalf("trial %d %s %s: not interleaved rows", trial, format, program)
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
				if !value.Equal(got, overCSR, 1e-12) {
					t.Fatalf("trial %d %s: SpMV differs from CSR's: %s against %s", trial, format, value.Format(got), value.Format(overCSR))
				}
			}
		}
	}
}

// TestSellInconsistentData runs the sell SpMV and BATAX plans over stores whose
// arrays contradict each other (a column past x, a chunk's words past the
// end of the columns, keys out of range, negative lengths, values cut
// short): the engine, whose interleaved rows hand such chunks to the
// general path, must agree with the interpreter on 1 and 3 threads, and
// where it fails, name the array read out of bounds.
func TestSellInconsistentData(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const rows, cols = 100, 30
	c := &storage.COO{Dims: []int64{rows, cols}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := range int64(rows) {
		for _, j := range rng.Perm(cols)[:1+rng.IntN(6)] {
			c.Coords[0] = append(c.Coords[0], i)
			c.Coords[1] = append(c.Coords[1], int64(j))
			c.Vals = append(c.Vals, rng.NormFloat64())
		}
	}
	pattern := &storage.COO{Dims: c.Dims, Coords: c.Coords, Field: storage.FieldPattern, Vals: make([]float64, len(c.Vals))}
	for i := range pattern.Vals {
		pattern.Vals[i] = 1
	}
	x := storage.RealArray(randVec(cols, rng))
	for _, format := range []string{"sell", "sell+pattern"} {
		m := c
		// The plan reads A_val(…) before x(A_cols(…)), as the
		// interpreter does: with values, a broken chunk fails there.
		broken := "A_val"
		if format == "sell+pattern" {
			m, broken = pattern, "A_cols"
		}
		f, _ := storage.ParseFormat(format)
		good, err := storage.Build("A", m, f)
		if err != nil {
			t.Fatal(err)
		}
		good["x"], good["beta"] = x, storage.RealScalar(0.5)
		ints := func(name string) []int64 { return good[name].(*storage.Array).I }
		cpos := ints("A_cpos")
		for _, program := range []string{"spmv", "batax"} {
			plan := optimizedPlan(t, program, map[string]string{"A": format}, good)
			for _, tc := range []struct {
				name  string
				array string // the array whose copy is broken
				edit  func(a []int64) []int64
				fails string // the array an error must name, "" if none is expected
			}{
				{"column past x", "A_cols", func(a []int64) []int64 { a[cpos[3]] += cols; return a }, "x"},
				{"words past the end", "A_cpos", func(a []int64) []int64 { a[5] = int64(len(ints("A_cols"))) - 2; return a }, broken},
				{"negative word offset", "A_cpos", func(a []int64) []int64 { a[2] = -4; return a }, broken},
				{"key past the rows", "A_perm", func(a []int64) []int64 { a[17] = 5000; return a }, ""},
				{"negative key", "A_perm", func(a []int64) []int64 { a[9] = -2; return a }, ""},
				{"negative length", "A_rlen", func(a []int64) []int64 { a[33] = -3; return a }, ""},
				{"longer row", "A_rlen", func(a []int64) []int64 { a[40] += 50; return a }, broken},
			} {
				t.Run(program+"/"+format+"/"+tc.name, func(t *testing.T) {
					st := maps.Clone(good)
					st[tc.array] = storage.IntArray(tc.edit(slices.Clone(ints(tc.array))))
					checkSellRun(t, plan, st, tc.fails)
				})
			}
			if format == "sell" {
				t.Run(program+"/sell/values cut short", func(t *testing.T) {
					st := maps.Clone(good)
					v := good["A_val"].(*storage.Array).F
					st["A_val"] = storage.RealArray(slices.Clone(v[:len(v)/2]))
					checkSellRun(t, plan, st, "A_val")
				})
			}
		}
	}
}

// checkSellRun runs plan on st with the engine (1 and 3 threads) and the
// interpreter: both fail, the engine naming array, or both agree.
func checkSellRun(t *testing.T, plan *ir.Expr, st storage.Store, array string) {
	t.Helper()
	want, werr := eval.Eval(plan, st)
	if (werr != nil) != (array != "") {
		t.Fatalf("interpreter: %v, want an error naming %q", werr, array)
	}
	for _, threads := range []int{1, 3} {
		k, err := Compile(plan, SchemaOf(st), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if !interleavedRows(k) {
			t.Fatal("the rows do not run interleaved")
		}
		got, err := k.Run(st)
		switch {
		case werr != nil:
			if _, ok := err.(*Error); !ok || !strings.Contains(err.Error(), array+"(") {
				t.Fatalf("threads=%d: engine error %v (%T), want one naming %s (interpreter: %v)", threads, err, err, array, werr)
			}
		case err != nil:
			t.Fatalf("threads=%d: engine failed: %v", threads, err)
		case !value.Equal(got, want, 1e-12):
			t.Fatalf("threads=%d: engine %s, interpreter %s", threads, value.Format(got), value.Format(want))
		}
	}
}

// interleavedRows reports whether k runs chunks of rows as interleaved
// lanes (nestinter.go).
func interleavedRows(k *Kernel) bool {
	var sb strings.Builder
	k.Explain(&sb)
	return strings.Contains(sb.String(), "interleave")
}

// TestInterleavedForms: interleaved rows are proven from the indices, not
// matched by shape: SpMV over sell's arrays written another way (factors
// swapped, the halves chosen by an odd lane, the index's terms in
// another order, rows offset into the arrays) runs interleaved, as does
// BATAX's row, a dot bound by a let and then a scatter of the same row
// (scaled in a let or in the scatter), and layouts whose reads do not
// interleave (lanes reversed in the values, a stride of 4, a scatter
// over other entries than the dot's) do not; every one agrees with the interpreter at 1 and
// 3 threads.
func TestInterleavedForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 15))
	const rows, cols = 203, 70
	c := &storage.COO{Dims: []int64{rows, cols}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := range int64(rows) {
		for j := range rng.Int64N(30) {
			c.Coords[0] = append(c.Coords[0], i)
			c.Coords[1] = append(c.Coords[1], (j*7+i)%cols)
			c.Vals = append(c.Vals, rng.NormFloat64())
		}
	}
	f, _ := storage.ParseFormat("sell")
	st, err := storage.Build("A", c, f)
	if err != nil {
		t.Fatal(err)
	}
	st["x"] = storage.RealArray(randVec(cols, rng))
	// Rows q+8 of the offset form read the arrays' rows q.
	perm, rlen := st["A_perm"].(*storage.Array).I, st["A_rlen"].(*storage.Array).I
	st["P8"] = storage.IntArray(append(make([]int64, 8), perm...))
	st["R8"] = storage.IntArray(append(make([]int64, 8), rlen...))
	col := func(w string) string {
		return `(if q % 2 == 1 then A_cols(` + w + `) / 4294967296 else A_cols(` + w + `) % 4294967296)`
	}
	for _, tc := range []struct {
		name, plan string
		inter      bool
	}{
		{"swapped and reordered", `sum(<q, _> in 0:A_dim1) { @dense A_perm(q) -> sum(<k, _> in 0:A_rlen(q))
			x(` + col(`q % 8 / 2 + 4 * k + A_cpos(q / 8)`) + `) * A_val(q % 8 + 8 * k + 2 * A_cpos(q / 8)) }`, true},
		{"offset rows", `sum(<q, _> in 8:A_dim1 + 8) { @dense P8(q) -> sum(<k, _> in 0:R8(q))
			A_val(2 * A_cpos(q / 8 - 1) + 8 * k + q % 8) * x(` + col(`A_cpos(q / 8 - 1) + 4 * k + q % 8 / 2`) + `) }`, true},
		{"lanes reversed in the values", `sum(<q, _> in 0:A_dim1) { @dense A_perm(q) -> sum(<k, _> in 0:A_rlen(q))
			A_val(2 * A_cpos(q / 8) + 8 * k + 7 - q % 8) * x(` + col(`A_cpos(q / 8) + 4 * k + q % 8 / 2`) + `) }`, false},
		{"a stride of 4", `sum(<q, _> in 0:A_dim1) { @dense A_perm(q) -> sum(<k, _> in 0:A_rlen(q) / 2)
			A_val(2 * A_cpos(q / 8) + 8 * k + q % 8) * x(` + col(`A_cpos(q / 8) + 2 * k + q % 8 / 2`) + `) }`, false},
		{"dot and scatter, offset rows", `sum(<q, _> in 8:A_dim1 + 8)
			let t = sum(<k, _> in 0:R8(q)) x(` + col(`A_cpos(q / 8 - 1) + 4 * k + q % 8 / 2`) + `) * A_val(2 * A_cpos(q / 8 - 1) + 8 * k + q % 8) in
			let u = 0.5 * t in
			sum(<j, _> in 0:R8(q)) { @dense ` + col(`q % 8 / 2 + 4 * j + A_cpos(q / 8 - 1)`) + ` -> u * A_val(q % 8 + 8 * j + 2 * A_cpos(q / 8 - 1)) }`, true},
		{"dot and scatter, scaled in the scatter", `sum(<q, _> in 0:A_dim1)
			let t = sum(<k, _> in 0:A_rlen(q)) x(` + col(`A_cpos(q / 8) + 4 * k + q % 8 / 2`) + `) in
			sum(<j, _> in 0:A_rlen(q)) { @dense ` + col(`A_cpos(q / 8) + 4 * j + q % 8 / 2`) + ` -> t * 0.5 }`, true},
		{"the scatter's values from other lanes", `sum(<q, _> in 0:A_dim1)
			let t = sum(<k, _> in 0:A_rlen(q)) x(` + col(`A_cpos(q / 8) + 4 * k + q % 8 / 2`) + `) * A_val(2 * A_cpos(q / 8) + 8 * k + q % 8) in
			sum(<j, _> in 0:A_rlen(q)) { @dense ` + col(`A_cpos(q / 8) + 4 * j + q % 8 / 2`) + ` -> A_val(2 * A_cpos(q / 8) + 8 * j + 7 - q % 8) * t }`, false},
		{"the scatter over the next row", `sum(<q, _> in 0:A_dim1 - 1)
			let t = sum(<k, _> in 0:A_rlen(q)) x(` + col(`A_cpos(q / 8) + 4 * k + q % 8 / 2`) + `) * A_val(2 * A_cpos(q / 8) + 8 * k + q % 8) in
			sum(<j, _> in 0:A_rlen(q + 1)) { @dense ` + col(`A_cpos(q / 8) + 4 * j + q % 8 / 2`) + ` -> A_val(2 * A_cpos(q / 8) + 8 * j + q % 8) * t }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parse(t, tc.plan, st)
			k, err := Compile(e, SchemaOf(st), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if interleavedRows(k) != tc.inter {
				t.Errorf("interleaved rows %v, want %v", !tc.inter, tc.inter)
			}
			agree(t, e, st)
		})
	}
}

var sellFormat = flag.String("engine.sell", "sell", "BenchmarkSellSpMV: the format, sell or sell+pattern")

// BenchmarkSellSpMV times SpMV over the -engine.matrix matrix stored as
// -engine.sell, the optimizer's plan on one thread (the e2e experiment's
// storel (sell) line); cpu-ms/op is the process's CPU time per run:
//
//	GOMAXPROCS=1 go test ./engine -run XXX -bench SellSpMV -engine.matrix /work/shared/data/landmark.mtx.gz
func BenchmarkSellSpMV(b *testing.B) {
	coo, err := storage.ReadTensorFile(*bandwidthMatrix, storage.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	f, err := storage.ParseFormat(*sellFormat)
	if err != nil {
		b.Fatal(err)
	}
	st, err := storage.Build("A", coo, f)
	if err != nil {
		b.Fatal(err)
	}
	st["x"] = storage.RealArray(randVec(int(coo.Dims[1]), rand.New(rand.NewPCG(5, 6))))
	k, err := Compile(optimizedPlan(b, "spmv", map[string]string{"A": *sellFormat}, st), SchemaOf(st), Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	k.Prepare(st)
	b.ResetTimer()
	c0 := cpuTime()
	for range b.N {
		if _, err := k.Exec(st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
}
