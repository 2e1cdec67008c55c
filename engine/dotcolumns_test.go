package engine

import (
	"fmt"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// TestDotColumns checks dotOne's lanes in assembly against its Go loop
// bit for bit: rows of every length to 19 (columns of four and the last
// one to three; 4 and 8 with x held in registers), lane counts that leave one to three lanes to Go, rows
// at any base, scale and offset, with and without a factor per lane,
// and values with infinities, NaNs, zeros of both signs and products
// that round.
func TestDotColumns(t *testing.T) {
	if !useDotColumns {
		t.Skip("no AVX2 loop on this machine")
	}
	rng := rand.New(rand.NewSource(11))
	val, fill := laneValues(rng)
	_ = val
	defer func() { useDotColumns = true }()
	for m := 0; m <= 19; m++ {
		for n := 0; n <= 13; n++ {
			for _, withBy := range []bool{false, true} {
				scale, lo := int64(1+rng.Intn(3))*int64(m+1), int64(rng.Intn(3))
				rows := 1 + rng.Intn(9)
				bs := fill(rows*int(scale) + int(lo) + m + 1)[1:]
				x := fill(m + 1)[1:]
				bb := make([]int64, n)
				for l := range bb {
					bb[l] = int64(rng.Intn(rows))
				}
				var by []float64
				if withBy {
					by = fill(n)
				}
				want, got := make([]float64, n), make([]float64, n)
				useDotColumns = false
				dotOneAdjacent(x, bs, bb, scale, lo, by, want)
				useDotColumns = true
				dotOneAdjacent(x, bs, bb, scale, lo, by, got)
				for l := range want {
					if math.Float64bits(want[l]) != math.Float64bits(got[l]) && !(math.IsNaN(want[l]) && math.IsNaN(got[l])) {
						t.Fatalf("m %d n %d by %v lane %d: %v, want %v", m, n, withBy, l, got[l], want[l])
					}
				}
			}
		}
	}
}

// TestDotColumnsBounds checks that the assembly stops before the first
// four lanes with a row out of bs (before it, past it, or a negative
// base), leaving them to the Go loop and its bounds checks.
func TestDotColumnsBounds(t *testing.T) {
	if !useDotColumns {
		t.Skip("no AVX2 loop on this machine")
	}
	x, bs := []float64{1, 2, 3}, make([]float64, 30)
	for i := range bs {
		bs[i] = float64(i)
	}
	for _, c := range []struct {
		bb       []int64
		lo, want int64
	}{
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8}, 0, 8},
		{[]int64{0, 1, 2, 3, 4, 5, 6, 10, 8}, 0, 4},
		{[]int64{0, 1, 2, 3, 9, 5, 6, 7, 8}, 0, 8}, // 9*3+3 = 30: the last row that fits
		{[]int64{0, 1, 2, 3, 9, 5, 6, 7, 8}, 1, 4},
		{[]int64{1, 1, 2, 3, 4, 5, 6, 7}, -4, 0},
		{[]int64{1, 1, 2, 3, 4, 5, 6, 7}, -3, 8},
	} {
		out := make([]float64, len(c.bb))
		if got := dotColumnsAsm(x, bs, c.bb, 3, c.lo, nil, out); int64(got) != c.want {
			t.Errorf("bb %v lo %d: %d lanes done, want %d", c.bb, c.lo, got, c.want)
		}
	}
}

// TestDotColumnsRuns runs SDDMM at ranks that leave 0-3 values past the
// columns of four, and TTV, against the interpreter at 1 and 3 threads,
// as batches and lane by lane: the batches' dots take the column loop
// (SDDMM; at ranks 4 and 8 the one that holds U's row in registers),
// the rows of a block copy their keys in vectors (both), and at 1
// thread their bits are the interpreter's.
func TestDotColumnsRuns(t *testing.T) {
	if !useDotColumns || !useCopyIncreasing {
		t.Skip("no AVX2 loops on this machine")
	}
	rng := randv2.New(randv2.NewPCG(28, 17))
	for _, rank := range []int{1, 3, 4, 8, 13} {
		t.Run(fmt.Sprintf("SDDMM rank %d", rank), func(t *testing.T) {
			st := storage.Store{}
			randCSR(60, 50, 900, rng).store(st, "S")
			denseStore(st, "U", 60, rank, rng)
			denseStore(st, "V", 50, rank, rng)
			dotRuns(t, parse(t, shortSDDMM, st), st, func(short int64, seen map[string]int) {
				if short == 0 && (seen["dot lanes as columns"] == 0 || seen["row keys copied in vectors"] == 0) {
					t.Errorf("no column dot or vector key copy; saw %v", seen)
				}
				if held := seen["dot lanes as columns, x held in registers"] > 0; short == 0 && held != (rank == 4 || rank == 8) {
					t.Errorf("x held in registers %v at rank %d; saw %v", held, rank, seen)
				}
			})
		})
	}
	t.Run("TTV", func(t *testing.T) {
		st := storage.Store{}
		randCSF(40, 30, 20, 900, rng).store(st, "B")
		vecStore(st, "D", 20, rng)
		dotRuns(t, parse(t, shortTTV, st), st, func(short int64, seen map[string]int) {
			if short == 0 && seen["row keys copied in vectors"] == 0 {
				t.Errorf("no vector key copy; saw %v", seen)
			}
		})
	})
}
