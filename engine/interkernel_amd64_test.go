//go:build !purego

package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// TestSellChunksAgree runs the AVX2 kernel and the Go kernel over random
// chunks, consistent and not (keys outside out, negative lengths, word
// offsets past cols or before it, words or values past the arrays' ends), and requires the
// same chunks done and the same bits in out, for pattern matrices, real
// values and int values (converted exactly in SIMD up to 2^51). Padding
// values are NaN, or the ends of that range: a lane past its row's end
// must not add them into its sum.
func TestSellChunksAgree(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	const h = storage.SellHeight
	rng := rand.New(rand.NewPCG(3, 4))
	ran, stopped := int64(0), 0
	for trial := range 400 {
		nout, nx := 1+rng.Int64N(40), 1+rng.Int64N(30)
		chunks := rng.Int64N(12)
		perm := make([]int64, chunks*h)
		for i := range perm {
			perm[i] = rng.Int64N(nout)
		}
		rlen, cpos, cols := randomChunks(rng, chunks, 0, 7, nx)
		// Real values, NaN in the padding; int values anywhere in the
		// range converted exactly, its ends in the padding.
		vals, ivals := make([]float64, 2*len(cols)), make([]int64, 2*len(cols))
		for c := range chunks {
			for k := range (cpos[c+1] - cpos[c]) / 4 {
				for l := range int64(h) {
					v, iv := rng.NormFloat64(), rng.Int64N(1<<52)-1<<51
					if rng.IntN(4) == 0 {
						iv = rng.Int64N(19) - 9
					}
					if k >= rlen[c*h+l] {
						v, iv = math.NaN(), []int64{-1 << 51, 1<<51 - 1}[rng.IntN(2)]
					}
					vals[2*cpos[c]+8*k+l], ivals[2*cpos[c]+8*k+l] = v, iv
				}
			}
		}
		// Break something in a third of the trials.
		if chunks > 0 && trial%3 == 0 {
			c := rng.Int64N(chunks)
			switch rng.IntN(7) {
			case 0:
				perm[c*h+rng.Int64N(h)] = nout + rng.Int64N(3)
			case 1:
				perm[c*h+rng.Int64N(h)] = -1 - rng.Int64N(3)
			case 2:
				rlen[c*h+rng.Int64N(h)] = -1 - rng.Int64N(5)
			case 3:
				cpos[c] = -4
			case 4:
				cpos[c] += 4 + int64(len(cols))
			case 5:
				cut := max(0, len(vals)-1-rng.IntN(8))
				vals, ivals = vals[:cut], ivals[:cut]
			case 6:
				cols = cols[:max(0, len(cols)-1-rng.IntN(4))]
			}
		}
		x := make([]float64, nx)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		c0 := rng.Int64N(chunks + 1)
		for kind := range 3 {
			base := make([]float64, nout)
			for i := range base {
				base[i] = rng.NormFloat64()
			}
			want, got := append([]float64(nil), base...), append([]float64(nil), base...)
			var wantDone, gotDone int64
			switch kind {
			case 0:
				wantDone = sellChunksGo[float64](want, perm, rlen, cpos, cols, nil, x, c0, chunks)
				gotDone = sellChunks[float64](got, perm, rlen, cpos, cols, nil, x, c0, chunks, false)
			case 1:
				wantDone = sellChunksGo(want, perm, rlen, cpos, cols, vals, x, c0, chunks)
				gotDone = sellChunks(got, perm, rlen, cpos, cols, vals, x, c0, chunks, false)
			case 2:
				wantDone = sellChunksGo(want, perm, rlen, cpos, cols, ivals, x, c0, chunks)
				gotDone = sellChunks(got, perm, rlen, cpos, cols, ivals, x, c0, chunks, true)
			}
			what := []string{"pattern", "real values", "int values"}[kind]
			if gotDone != wantDone {
				t.Fatalf("trial %d (%s): AVX2 kernel did %d chunks, Go kernel %d", trial, what, gotDone, wantDone)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("trial %d (%s): out[%d] = %v, Go kernel %v", trial, what, i, got[i], want[i])
				}
			}
			ran += gotDone - c0
			if gotDone < chunks {
				stopped++
			}
		}
	}
	// Both kinds of chunk are common enough to mean something.
	if ran < 1000 || stopped < 50 {
		t.Errorf("%d chunks ran and %d calls stopped early: too few", ran, stopped)
	}
}

// randomChunks makes chunks of sell lanes: lengths in lo..hi-1, each
// chunk's words as many as its longest lane needs, their halves below nx.
func randomChunks(rng *rand.Rand, chunks, lo, hi, nx int64) (rlen, cpos, cols []int64) {
	const h = storage.SellHeight
	rlen, cpos = make([]int64, chunks*h), make([]int64, chunks+1)
	for c := range chunks {
		longest := int64(0)
		for l := range int64(h) {
			rlen[c*h+l] = lo + rng.Int64N(hi-lo)
			longest = max(longest, rlen[c*h+l])
		}
		cpos[c+1] = cpos[c] + 4*longest
	}
	cols = make([]int64, cpos[chunks])
	for i := range cols {
		cols[i] = rng.Int64N(nx) + rng.Int64N(nx)*storage.PackedHalf
	}
	return rlen, cpos, cols
}

// TestSellScatterAgree runs the assembly scatter and the Go one over
// random chunks (lengths up to 6, some zero or negative, columns in both
// halves of the words) and requires the same bits in out, for pattern
// matrices, real values and int values of any size, where rows of a
// chunk hit the same columns, so their order shows.
func TestSellScatterAgree(t *testing.T) {
	const h = storage.SellHeight
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		nout, rows := 1+rng.Int64N(20), rng.Int64N(40)
		chunks := (rows + h - 1) / h
		rlen, cpos, cols := randomChunks(rng, chunks, -2, 7, nout)
		vals, ivals := make([]float64, 2*len(cols)), make([]int64, 2*len(cols))
		for i := range vals {
			vals[i], ivals[i] = rng.NormFloat64()*1e3, int64(rng.Uint64())>>rng.IntN(64)
		}
		sums := make([]float64, rows)
		for i := range sums {
			sums[i] = rng.NormFloat64()
		}
		scale, fac := rng.NormFloat64(), []float64{1, rng.NormFloat64()}[rng.IntN(2)]
		for kind := range 3 {
			want := make([]float64, nout)
			for i := range want {
				want[i] = rng.NormFloat64()
			}
			got := append([]float64(nil), want...)
			switch kind {
			case 0:
				sellScatterGo[float64](want, sums, rlen, cpos, cols, nil, scale, fac)
				sellScatterRows[float64](got, sums, rlen, cpos, cols, nil, scale, fac)
			case 1:
				sellScatterGo(want, sums, rlen, cpos, cols, vals, scale, fac)
				sellScatterRows(got, sums, rlen, cpos, cols, vals, scale, fac)
			case 2:
				sellScatterGo(want, sums, rlen, cpos, cols, ivals, scale, fac)
				sellScatterRows(got, sums, rlen, cpos, cols, ivals, scale, fac)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("trial %d (kind %d): out[%d] = %v, Go scatter %v", trial, kind, i, got[i], want[i])
				}
			}
		}
	}
}
