package engine

import (
	"math"
	"math/rand"
	"testing"
)

// ellRows returns rows of w entries each over y of ny, a quarter of them
// padding (-1) when pad is set, with their int32 copy and values.
func ellRows(rows, w, ny int, pad bool, seed int64) (p []int64, idx []int64, nidx []int32, x []float64) {
	rng := rand.New(rand.NewSource(seed))
	p = make([]int64, rows+1)
	idx = make([]int64, rows*w)
	nidx = make([]int32, rows*w)
	x = make([]float64, rows*w)
	for r := range rows {
		p[r+1] = p[r] + int64(w)
	}
	for k := range idx {
		idx[k] = rng.Int63n(int64(ny))
		if pad && rng.Intn(4) == 0 {
			idx[k] = -1
		}
		nidx[k] = int32(idx[k])
		x[k] = rng.NormFloat64()
	}
	return
}

// TestFilteredDotAsm checks the assembly filtered dot against the Go one
// bit for bit, over windows that cut rows and a row of bad bounds.
func TestFilteredDotAsm(t *testing.T) {
	const rows, w, ny = 300, 13, 97
	p, idx, nidx, x := ellRows(rows, w, ny, true, 3)
	y := make([]float64, ny)
	for k := range y {
		y[k] = math.Sin(float64(k))
	}
	for _, win := range [][2]int64{{0, ny}, {5, 60}, {0, 0}, {96, 97}} {
		for _, gather := range []bool{false, true} {
			var xs []float64
			if !gather {
				xs = x
			}
			want, got := make([]float64, rows), make([]float64, rows)
			for k := range want {
				want[k], got[k] = float64(k), float64(k)
			}
			csrDotIn(want, p, idx, xs, y, win[0], win[1], [3]float64{1, 1, 1})
			done := csrDotInAsm(got, p, nidx, xs, gather, y, win[0], win[1], [3]float64{1, 1, 1})
			if done != rows && narrowRows {
				t.Fatalf("window %v gather %v: %d rows done of %d", win, gather, done, rows)
			}
			csrDotIn(got[done:], p[done:], idx, xs, y, win[0], win[1], [3]float64{1, 1, 1})
			for k := range want {
				if math.Float64bits(want[k]) != math.Float64bits(got[k]) {
					t.Fatalf("window %v gather %v: row %d: %v, want %v", win, gather, k, got[k], want[k])
				}
			}
		}
	}
	bad := append([]int64(nil), p...)
	bad[7] = bad[8] + 1
	if done := csrDotInAsm(make([]float64, rows), bad, nidx, x, false, y, 0, ny, [3]float64{1, 1, 1}); narrowRows && done != 7 {
		t.Fatalf("bad bounds at row 7: %d rows done", done)
	}
}

// BenchmarkFilteredDot compares the filtered segmented dot (every lane
// passing) with the plain one over the same rows: go test ./engine -run
// X -bench FilteredDot -cpu 1.
func BenchmarkFilteredDot(b *testing.B) {
	const rows, w, ny = 4884, 60, 4884
	p, idx, nidx, x := ellRows(rows, w, ny, false, 1)
	y := make([]float64, ny)
	for k := range y {
		y[k] = float64(k%7) + 0.5
	}
	out := make([]float64, rows)
	b.Run("dot", func(b *testing.B) {
		for range b.N {
			if _, ok := csrDotAsm(out, p[1:], p[0], idx, nidx, x, y, int64(len(idx)), 1, 1, 1, false); !ok {
				csrDot(out, p[1:], p[0], idx, x, y, int64(len(idx)), 1, 1, 1)
			}
		}
	})
	b.Run("filtered-go", func(b *testing.B) {
		for range b.N {
			csrDotIn(out, p, idx, x, y, 0, ny, [3]float64{1, 1, 1})
		}
	})
	b.Run("filtered", func(b *testing.B) {
		for range b.N {
			if k := csrDotInAsm(out, p, nidx, x, false, y, 0, ny, [3]float64{1, 1, 1}); k < rows {
				csrDotIn(out[k:], p[k:], idx, x, y, 0, ny, [3]float64{1, 1, 1})
			}
		}
	})
}

// TestFilteredDotLanes checks that a row whose every index passes the
// window sums as the plain segmented dot does, bit for bit: the filtered
// dot keeps the dot's partial sums (independent chains of additions),
// in Go and in assembly.
func TestFilteredDotLanes(t *testing.T) {
	const rows, w, ny = 50, 23, 61
	p, idx, nidx, x := ellRows(rows, w, ny, false, 5)
	y := make([]float64, ny)
	for k := range y {
		y[k] = math.Exp(math.Sin(float64(k)) * 20)
	}
	want := make([]float64, rows)
	csrDot(want, p[1:], p[0], idx, x, y, int64(len(idx)), 1, 1, 1)
	goOut, asmOut := make([]float64, rows), make([]float64, rows)
	csrDotIn(goOut, p, idx, x, y, 0, ny, [3]float64{1, 1, 1})
	done := csrDotInAsm(asmOut, p, nidx, x, false, y, 0, ny, [3]float64{1, 1, 1})
	csrDotIn(asmOut[done:], p[done:], idx, x, y, 0, ny, [3]float64{1, 1, 1})
	for k := range want {
		if math.Float64bits(goOut[k]) != math.Float64bits(want[k]) || math.Float64bits(asmOut[k]) != math.Float64bits(want[k]) {
			t.Fatalf("row %d: filtered %v (Go), %v (assembly), dot %v", k, goOut[k], asmOut[k], want[k])
		}
	}
}
