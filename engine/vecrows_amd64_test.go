//go:build !purego

package engine

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/storage"
)

// TestVectorRowLoops checks dotRows' vector loops (four entries a step)
// against its scalar loops bit for bit, and where they stop: rows of 0 to
// 21 entries (a step, a step and a tail, a tail alone), with and without
// values, over windows that pass every index, some, none (rows all
// padding) or cut through a step; padding whose value is an infinity or
// a NaN (a masked lane must add nothing, not NaN), indices at y's ends,
// and a row of bad bounds.
func TestVectorRowLoops(t *testing.T) {
	if !cpuAVX2 {
		t.Skip("no AVX2")
	}
	defer func(v bool) { vecRows = v }(vecRows)
	rng := rand.New(rand.NewPCG(13, 7))
	for trial := range 200 {
		rows, ny := 1+rng.IntN(60), 1+rng.IntN(40)
		p := make([]int64, rows+1)
		for r := range rows {
			p[r+1] = p[r] + int64(rng.IntN(22))
		}
		nnz := int(p[rows])
		idx, x := make([]int64, nnz), randReals(rng, nnz)
		for k := range idx {
			switch rng.IntN(6) {
			case 0:
				idx[k] = -1 - rng.Int64N(3) // padding
				x[k] = []float64{0, math.Inf(1), math.NaN(), math.Copysign(0, -1)}[rng.IntN(4)]
			case 1:
				idx[k] = int64(ny - 1)
			default:
				idx[k] = rng.Int64N(int64(ny))
			}
		}
		if trial%4 == 0 { // rows all padding
			for k := p[rows/2]; k < p[rows]; k++ {
				idx[k], x[k] = -1, math.Inf(-1)
			}
		}
		nidx := narrow(idx)
		y := randReals(rng, ny)
		sc := [3]float64{rng.Float64() + 0.5, 1, rng.Float64() + 0.5}
		if trial%10 == 0 { // a row of bad bounds
			bad := 1 + rng.IntN(rows)
			p[bad] = p[bad-1] - 1
		}
		both := func(name string, f func(out []float64) int) {
			t.Helper()
			want, got := make([]float64, rows), make([]float64, rows)
			vecRows = false
			dw := f(want)
			vecRows = true
			seen := events(func() { f(got) })
			dg := f(make([]float64, rows))
			if seen["vector rows"] == 0 {
				t.Fatalf("trial %d %s: the vector loops did not run", trial, name)
			}
			if dg != dw {
				t.Fatalf("trial %d %s: stopped at row %d, the scalar loops at %d", trial, name, dg, dw)
			}
			for k := range want {
				if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
					t.Fatalf("trial %d %s: row %d = %v, scalar loops %v", trial, name, k, got[k], want[k])
				}
			}
		}
		lo := rng.Int64N(int64(ny))
		hi := lo + 1 + rng.Int64N(int64(ny)-lo)
		for _, win := range [][2]int64{{0, int64(ny)}, {lo, hi}, {int64(ny - 1), int64(ny)}} {
			both("window dot", func(out []float64) int { return csrDotInAsm(out, p, nidx, x, false, y, win[0], win[1], sc) })
			both("window gather", func(out []float64) int { return csrDotInAsm(out, p, nidx, nil, true, y, win[0], win[1], sc) })
		}
		// The plain loops read every index: no padding.
		for k := range idx {
			if idx[k] < 0 {
				idx[k], nidx[k] = 0, 0
			}
		}
		n := int64(nnz)
		both("dot", func(out []float64) int {
			k, _ := csrDotAsm(out, p[1:], p[0], idx, nidx, x, y, n, sc[0], sc[1], sc[2], false)
			return k
		})
		both("gather", func(out []float64) int {
			k, _ := csrGatherAsm(out, p[1:], p[0], idx, nidx, y, n, sc[0], sc[1], sc[2])
			return k
		})
	}
}

// TestVectorRowsELL: SpMV over a user's ELL layout (row i's slots at W*i
// + s) runs its rows' sums in dotRows' vector loops, with the
// interpreter's result at 1 and 3 threads: random widths, rows partly
// or all padding, padding read as column 0 and value 0 or marked -1 and
// skipped by an if, with values or without (a pattern's sum of x).
func TestVectorRowsELL(t *testing.T) {
	if !cpuAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(31, 4))
	const cols = 70
	plans := map[string]string{
		"dot": `sum(<i, _> in 0:R) { @dense i -> sum(<s, _> in 0:W)
			E_val(W * i + s) * x_val(E_col(W * i + s)) }`,
		"dot, if": ellSpMV,
		"gather": `sum(<i, _> in 0:R) { @dense i -> sum(<s, _> in 0:W)
			x_val(E_col(W * i + s)) }`,
		"gather, if": `sum(<i, _> in 0:R) { @dense i -> sum(<s, _> in 0:W)
			if 0 <= E_col(W * i + s) then x_val(E_col(W * i + s)) }`,
		"window": `sum(<i, _> in 0:R) { @dense i -> sum(<s, _> in 0:W)
			if 10 <= E_col(W * i + s) && E_col(W * i + s) < 50 then E_val(W * i + s) * x_val(E_col(W * i + s)) }`,
	}
	for trial := range 12 {
		rows, width := 100+rng.IntN(400), 1+rng.IntN(24)
		marked := storage.Store{}
		ellStore(marked, rows, width, cols, rng)
		col, val := marked["E_col"].(*storage.Array).I, marked["E_val"].(*storage.Array).F
		if trial%3 == 0 { // the last rows all padding
			for k := len(col) / 2; k < len(col); k++ {
				col[k], val[k] = -1, 0
			}
		}
		vecStore(marked, "x", cols, rng)
		// The same rows with their padding read as column 0, value 0.
		zeros := maps.Clone(marked)
		zcol := slices.Clone(col)
		for k := range zcol {
			zcol[k] = max(zcol[k], 0)
		}
		zeros["E_col"] = storage.IntArray(zcol)
		for _, name := range []string{"dot", "dot, if", "gather", "gather, if", "window"} {
			st := marked
			if name == "dot" || name == "gather" {
				st = zeros
			}
			e := parse(t, plans[name], st)
			seen := events(func() { agree(t, e, st) })
			if seen["vector rows"] == 0 {
				t.Fatalf("trial %d (%d rows of %d) %s: no vector rows; saw %v", trial, rows, width, name, seen)
			}
		}
	}
}

// TestELLShiftedRows: an ELL's rows read from W*i + c, their bases
// affine in the row: rows laid out from the batch's first base and
// stride, where a shift that leaves the arrays (c = -1 at row 0, c = 1
// at the last row) is the interpreter's error, and rows that overlap (a
// window wider than the stride) or leave gaps run as the batches do.
// Rows laid out one after another run in the vector loops.
func TestELLShiftedRows(t *testing.T) {
	if !cpuAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(5, 17))
	st := storage.Store{}
	ellStore(st, 300, 7, 40, rng)
	vecStore(st, "x", 40, rng)
	for _, tc := range []struct {
		base, width string
		laidOut     bool
	}{
		{"W * i - 1", "W", false}, {"W * i + 1", "W", false}, {"W * i + 0", "W", true},
		{"W * i", "W - 1", false}, {"W * i", "W + 1", false}, {"(W - 1) * i", "W", false},
	} {
		e := parse(t, `sum(<i, _> in 0:R) { @dense i -> sum(<s, _> in 0:`+tc.width+`)
			if 0 <= E_col(`+tc.base+` + s) then E_val(`+tc.base+` + s) * x_val(E_col(`+tc.base+` + s)) }`, st)
		if seen := events(func() { agree(t, e, st) }); tc.laidOut && seen["vector rows"] == 0 {
			t.Errorf("%s over 0:%s: no vector rows; saw %v", tc.base, tc.width, seen)
		}
	}
}
