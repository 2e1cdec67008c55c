package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitLoops checks the loops that skip the per-entry index check
// against their checked twins, bit for bit, on random rows: real and
// int arrays, empty rows, and row bounds out of order or past the
// arrays (where both must stop at the same row).
func TestFitLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 300 {
		rows := 1 + rng.IntN(40)
		ny := 1 + rng.IntN(50)
		nnz := rng.IntN(200)
		if trial%30 == 0 { // more rows than one assembly call takes
			rows, nnz = 4000+rng.IntN(9000), rng.IntN(60000)
		}
		idx := make([]int64, nnz)
		for p := range idx {
			idx[p] = rng.Int64N(int64(ny))
		}
		// Row pointers: sorted cut points, sometimes broken.
		pos := make([]int64, rows+1)
		for q := 1; q <= rows; q++ {
			pos[q] = min(int64(nnz), pos[q-1]+rng.Int64N(12))
		}
		if trial%5 == 0 {
			pos[rng.IntN(rows+1)] = rng.Int64N(int64(nnz)+20) - 10
		}
		xf, xi := randReals(rng, nnz), randInts(rng, nnz)
		yf, yi := randReals(rng, ny), randInts(rng, ny)
		a, b, c := rng.Float64()*2, rng.Float64()+0.5, rng.Float64()+0.5
		lo := int64(rng.IntN(rows))
		// Separate lower and upper bound arrays with offsets, as a plan
		// reads them (pos[q], pos[q+1]).
		check := func(name string, got, want []float64, qg, qw int64) {
			t.Helper()
			if qg != qw {
				t.Fatalf("trial %d %s: stopped at row %d, checked loop at %d", trial, name, qg, qw)
			}
			for k := range want {
				if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
					t.Fatalf("trial %d %s: row %d = %v, checked loop %v", trial, name, k, got[k], want[k])
				}
			}
		}
		n := int64(nnz)
		run := func(f func(out []float64) int64) ([]float64, int64) {
			out := make([]float64, rows)
			return out, f(out)
		}
		// csrDot, the loop the assembly replaces on amd64 (and that runs
		// elsewhere), directly.
		if lo < int64(rows) {
			gg, qg := run(func(o []float64) int64 {
				return lo + int64(csrDot(o[lo:], pos[lo+1:rows+1], pos[lo], idx, xf, yf, n, a, b, c))
			})
			wg, rg := run(func(o []float64) int64 { return rowsDot(o, pos, pos, 0, 1, idx, xf, yf, n, lo, int64(rows), a, b, c) })
			check("csrDot real*real", gg, wg, qg, rg)
		}
		// Each with the indices read as 8 bytes, and as their 32-bit copy
		// (Array.Narrow), which the assembly reads when it is given one.
		for _, nidx := range [][]int32{nil, narrow(idx)} {
			w := ""
			if nidx != nil {
				w = ", narrow"
			}
			// The same rows through separate bound arrays (not CSR-shaped).
			pl, ph := pos[:rows], pos[1:]
			gp, qp := run(func(o []float64) int64 {
				return rowsGatherFit(o, pl, ph, 0, 0, idx, nidx, yf, n, lo, int64(rows), a, b, c)
			})
			wp, rp := run(func(o []float64) int64 { return rowsGather(o, pl, ph, 0, 0, idx, yf, n, lo, int64(rows), a, b, c) })
			check(w+"gather real, two bound arrays", gp, wp, qp, rp)
			if lo < int64(rows) {
				// csrDot's assembly (where there is any), reading nidx.
				for _, tc := range []struct {
					name string
					f    func(o []float64) (int, bool)
					ref  func(o []float64) int64
				}{
					{"dot real*real", func(o []float64) (int, bool) {
						return csrDotAsm(o[lo:], pos[lo+1:rows+1], pos[lo], idx, nidx, xf, yf, n, a, b, c, false)
					}, func(o []float64) int64 { return rowsDot(o, pos, pos, 0, 1, idx, xf, yf, n, lo, int64(rows), a, b, c) }},
					{"dot int*real", func(o []float64) (int, bool) {
						return csrDotAsm(o[lo:], pos[lo+1:rows+1], pos[lo], idx, nidx, xi, yf, n, a, b, c, false)
					}, func(o []float64) int64 { return rowsDot(o, pos, pos, 0, 1, idx, xi, yf, n, lo, int64(rows), a, b, c) }},
				} {
					var ran bool
					g, q := run(func(o []float64) int64 {
						k, ok := tc.f(o)
						ran = ok
						return lo + int64(k)
					})
					if ran {
						wr, r := run(tc.ref)
						check(w+tc.name+", assembly", g, wr, q, r)
					}
				}
				// Rows set rather than added to (out holding anything
				// before), unscaled, with products of either zero: the
				// bits of adding into zeros.
				xz := append([]float64(nil), xf...)
				for p := range xz {
					if p%5 == 0 {
						xz[p] = math.Copysign(0, float64(p%2)-0.5)
					}
				}
				got := make([]float64, rows)
				for k := range got {
					got[k] = math.NaN()
				}
				if k, ok := csrDotAsm(got[lo:], pos[lo+1:rows+1], pos[lo], idx, nidx, xz, yf, n, 1, 1, 1, true); ok {
					want, r := run(func(o []float64) int64 { return rowsDot(o, pos, pos, 0, 1, idx, xz, yf, n, lo, int64(rows), 1, 1, 1) })
					if lo+int64(k) != r {
						t.Fatalf("trial %d%s set: stopped at row %d, checked loop at %d", trial, w, lo+int64(k), r)
					}
					for q := lo; q < r; q++ {
						if math.Float64bits(got[q]) != math.Float64bits(want[q]) {
							t.Fatalf("trial %d%s set: row %d = %v, checked loop %v", trial, w, q, got[q], want[q])
						}
					}
				}
			}
			g4, q4 := run(func(o []float64) int64 {
				return rowsGatherFit(o, pos, pos, 0, 1, idx, nidx, yf, n, lo, int64(rows), a, b, c)
			})
			w4, r4 := run(func(o []float64) int64 { return rowsGather(o, pos, pos, 0, 1, idx, yf, n, lo, int64(rows), a, b, c) })
			check(w+"gather real", g4, w4, q4, r4)
			g5, q5 := run(func(o []float64) int64 {
				return rowsGatherFit(o, pos, pos, 0, 1, idx, nidx, yi, n, lo, int64(rows), a, b, c)
			})
			w5, r5 := run(func(o []float64) int64 { return rowsGather(o, pos, pos, 0, 1, idx, yi, n, lo, int64(rows), a, b, c) })
			check(w+"gather int", g5, w5, q5, r5)
		}
		// BATAX's rows: a dot over one row, a scatter over another (here
		// the same bounds, other indices and values), against sumDot and
		// scatterAdd row by row; in Go and, where there is any, in
		// assembly.
		if lo < int64(rows) {
			nout := 1 + rng.IntN(30)
			n2 := max(0, n-rng.Int64N(3)) // the scatter's arrays may be shorter
			idx2 := make([]int64, nnz)
			for p := range idx2 {
				idx2[p] = rng.Int64N(int64(nout))
			}
			// The first row whose bounds are bad, where every loop stops.
			stop := int64(rows)
			for q := lo; q < int64(rows); q++ {
				if l, h := pos[q], pos[q+1]; l < 0 || l > h || h > n || h > n2 {
					stop = q
					break
				}
			}
			hs := pos[lo+1 : rows+1]
			for _, ints := range []bool{false, true} {
				want := &builder{reals: make([]float64, nout)}
				for q := lo; q < stop; q++ {
					l, h := pos[q], pos[q+1]
					var s float64
					if ints {
						s, _ = sumDot(idx[l:h], xi[l:h], yf)
						scatterAdd(want, idx2[l:h], xi[l:h], ((a*s)*b)*c)
					} else {
						s, _ = sumDot(idx[l:h], xf[l:h], yf)
						scatterAdd(want, idx2[l:h], xf[l:h], ((a*s)*b)*c)
					}
				}
				// The assembly also with both index arrays as their
				// 32-bit copies, and with only one (which it reads as
				// 8 bytes).
				n1idx, n2idx := narrow(idx), narrow(idx2)
				for _, impl := range []string{"go", "asm", "asm, narrow", "asm, one narrow"} {
					got := make([]float64, nout)
					var k int
					ok := true
					var nx1, nx2 []int32
					switch impl {
					case "asm, narrow":
						nx1, nx2 = n1idx, n2idx
					case "asm, one narrow":
						nx1 = n1idx
					}
					switch {
					case impl == "go" && ints:
						k = csrDotScatter(got, hs, pos[lo], idx, xi, yf, n, hs, pos[lo], idx2, xi, n2, a, b, c)
					case impl == "go":
						k = csrDotScatter(got, hs, pos[lo], idx, xf, yf, n, hs, pos[lo], idx2, xf, n2, a, b, c)
					case ints:
						k, ok = csrDotScatterAsm(got, hs, pos[lo], idx, nx1, xi, yf, n, hs, pos[lo], idx2, nx2, xi, n2, a, b, c)
					default:
						k, ok = csrDotScatterAsm(got, hs, pos[lo], idx, nx1, xf, yf, n, hs, pos[lo], idx2, nx2, xf, n2, a, b, c)
					}
					if ok {
						check(fmt.Sprintf("dot-scatter rows (%s, int values %v)", impl, ints), got, want.reals, lo+int64(k), stop)
					}
				}
			}
			// A CSC matrix's columns times a vector: each row scatters
			// v[p]*ts[q] with a factor of its own, against scatterAdd row
			// by row; in Go and, where there is any, in assembly.
			ts := randReals(rng, rows)
			stop2 := int64(rows)
			for q := lo; q < int64(rows); q++ {
				if l, h := pos[q], pos[q+1]; l < 0 || l > h || h > n2 {
					stop2 = q
					break
				}
			}
			for _, ints := range []bool{false, true} {
				want := &builder{reals: make([]float64, nout)}
				for q := lo; q < stop2; q++ {
					l, h := pos[q], pos[q+1]
					if ints {
						scatterAdd(want, idx2[l:h], xi[l:h], ts[q])
					} else {
						scatterAdd(want, idx2[l:h], xf[l:h], ts[q])
					}
				}
				for _, nidx := range [][]int32{nil, narrow(idx2)} {
					for _, impl := range []string{"go", "asm"} {
						if impl == "go" && nidx != nil {
							continue
						}
						got := make([]float64, nout)
						k, ok := 0, true
						switch {
						case impl == "go" && ints:
							k = csrScaleScatter(got, hs, pos[lo], idx2, xi, n2, ts[lo:])
						case impl == "go":
							k = csrScaleScatter(got, hs, pos[lo], idx2, xf, n2, ts[lo:])
						case ints:
							k, ok = csrScaleScatterAsm(got, hs, pos[lo], idx2, nidx, xi, n2, ts[lo:])
						default:
							k, ok = csrScaleScatterAsm(got, hs, pos[lo], idx2, nidx, xf, n2, ts[lo:])
						}
						if ok {
							check(fmt.Sprintf("scale-scatter rows (%s, narrow %v, int values %v)", impl, nidx != nil, ints), got, want.reals, lo+int64(k), stop2)
						}
					}
				}
			}
			// A pattern matrix's rows: a gather, then t at every key,
			// against sumGather and addReal row by row.
			want := &builder{spec: &bspec{dense: true, real: true}, reals: make([]float64, nout)}
			for q := lo; q < stop; q++ {
				l, h := pos[q], pos[q+1]
				s, _ := sumGather(idx[l:h], yf)
				for _, j := range idx2[l:h] {
					want.addReal(j, ((a*s)*b)*c)
				}
			}
			got := make([]float64, nout)
			k := csrGatherScatter(got, hs, pos[lo], idx, yf, n, hs, pos[lo], idx2, n2, a, b, c)
			check("gather-scatter rows", got, want.reals, lo+int64(k), stop)
		}

		// dotFit and scatterFit against sumDot and scatterAdd's dense loop.
		l := int64(rng.IntN(nnz + 1))
		h := l + int64(rng.IntN(nnz-int(l)+1))
		s, bad := sumDot(idx[l:h], xi[l:h], yf)
		if got := dotFit(idx, xi, yf, l, h); bad >= 0 || math.Float64bits(got) != math.Float64bits(s) {
			t.Fatalf("trial %d: dotFit = %v, sumDot %v (stop %d)", trial, got, s, bad)
		}
		bd := &builder{reals: make([]float64, ny)}
		scatterAdd(bd, idx[l:h], xf[l:h], s)
		out := make([]float64, ny)
		scatterFit(out, idx, xf, l, h, s)
		check("scatter", out, bd.reals, 0, 0)
	}
}

func randReals(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for k := range v {
		v[k] = rng.NormFloat64() * 1e3
	}
	return v
}

func randInts(rng *rand.Rand, n int) []int64 {
	v := make([]int64, n)
	for k := range v {
		v[k] = rng.Int64N(2001) - 1000
	}
	return v
}

// rowsDot is the checked row loop the fit loops are held to: for rows q
// = lo, lo+1, ... of out it adds ((a*s)*b)*c where s sums x[p]*y[idx[p]]
// over the segment pl[q+ol]:ph[q+oh], stopping at the first row whose
// bounds are out of order or past n or whose index is outside y (that
// row not added), which it returns (hi when done).
func rowsDot[X, Y number](out []float64, pl, ph []int64, ol, oh int64, idx []int64, x []X, y []Y, n, lo, hi int64, a, b, c float64) int64 {
	n = min(n, int64(len(idx)), int64(len(x)))
	for q := lo; q < hi; q++ {
		if q+ol < 0 || q+ol >= int64(len(pl)) || q+oh < 0 || q+oh >= int64(len(ph)) {
			return q
		}
		l, h := pl[q+ol], ph[q+oh]
		if l < 0 || l > h || h > n {
			return q
		}
		s, bad := sumDot(idx[l:h], x[l:h], y)
		if bad >= 0 {
			return q
		}
		out[q] += ((a * s) * b) * c
	}
	return hi
}

// sumDot returns the sum of x[q]*y[idx[q]] over every q, as the row
// dots add it (dotFit): term q into partial sum q mod dotLanes, each in
// order from 0.0, then (s0+s1)+(s2+s3); it stops at the first index
// outside y, whose position it returns (else -1).
func sumDot[X, Y number](idx []int64, x []X, y []Y) (float64, int) {
	x = x[:len(idx)]
	var part [dotLanes]float64
	for q, j := range idx {
		if uint64(j) >= uint64(len(y)) {
			return 0, q
		}
		part[q%dotLanes] += float64(x[q]) * float64(y[j])
	}
	return (part[0] + part[1]) + (part[2] + part[3]), -1
}

// sumGather returns the sum of y[j] over every j of idx, as the row
// gathers add it (gatherFit): term q into partial sum q mod dotLanes,
// then (s0+s1)+(s2+s3); it stops at the first index outside y, whose
// position it returns (else -1).
func sumGather[Y number](idx []int64, y []Y) (float64, int) {
	var part [dotLanes]float64
	for q, j := range idx {
		if uint64(j) >= uint64(len(y)) {
			return 0, q
		}
		part[q%dotLanes] += float64(y[j])
	}
	return (part[0] + part[1]) + (part[2] + part[3]), -1
}

// TestDotPartialSums pins the order a row's dot or gather adds its terms
// in, every row loop alike: four partial sums, (s0+s1)+(s2+s3). The terms 1e16, 1,
// -1e16, 1 give 0 so, and 1 added one after another.
func TestDotPartialSums(t *testing.T) {
	idx := []int64{0, 1, 2, 3}
	x := []float64{1e16, 1, -1e16, 1}
	y := []float64{1, 1, 1, 1}
	pos := []int64{0, 4}
	nidx := narrow(idx)
	rows := map[string]func(out []float64){
		"csrDot": func(out []float64) { csrDot(out, pos[1:], 0, idx, x, y, 4, 1, 1, 1) },
		"csrDotScatter": func(out []float64) {
			// Scatter t*v at column 0 with v = 1: out[0] = t, the dot.
			csrDotScatter(out, pos[1:], 0, idx, x, y, 4, []int64{1}, 0, []int64{0}, []float64{1}, 1, 1, 1, 1)
		},
	}
	for _, ni := range [][]int32{nil, nidx} {
		w := ""
		if ni != nil {
			w = ", narrow"
		}
		rows["csrDotAsm"+w] = func(out []float64) {
			if _, ok := csrDotAsm(out, pos[1:], 0, idx, ni, x, y, 4, 1, 1, 1, false); !ok && narrowRows {
				out[0] = math.NaN()
			}
		}
		rows["csrDotScatterAsm"+w] = func(out []float64) {
			if _, ok := csrDotScatterAsm(out, pos[1:], 0, idx, ni, x, y, 4, []int64{1}, 0, []int64{0}, []int32{0}, []float64{1}, 1, 1, 1, 1); !ok && narrowRows {
				out[0] = math.NaN() // the assembly must run here
			}
		}
	}
	// A pattern matrix's rows gather the same terms from y.
	gy := x
	rows["rowsGather"] = func(out []float64) { rowsGather(out, pos, pos, 0, 1, idx, gy, 4, 0, 1, 1, 1, 1) }
	rows["csrGatherScatter"] = func(out []float64) {
		csrGatherScatter(out, pos[1:], 0, idx, gy, 4, []int64{1}, 0, []int64{0}, 1, 1, 1, 1)
	}
	for _, ni := range [][]int32{nil, nidx} {
		w := ""
		if ni != nil {
			w = ", narrow"
		}
		rows["rowsGatherFit"+w] = func(out []float64) { rowsGatherFit(out, pos, pos, 0, 1, idx, ni, gy, 4, 0, 1, 1, 1, 1) }
		rows["csrGatherAsm"+w] = func(out []float64) {
			if _, ok := csrGatherAsm(out, pos[1:], 0, idx, ni, gy, 4, 1, 1, 1); !ok && narrowRows {
				out[0] = math.NaN() // the assembly must run here
			}
		}
	}
	for name, f := range rows {
		out := []float64{0}
		f(out)
		if out[0] != 0 {
			t.Errorf("%s: row sum = %v, want 0 (partial sums)", name, out[0])
		}
	}
}
