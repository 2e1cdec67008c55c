//go:build !purego

package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSweepChunksAgree: the AVX-512 sweep lists exactly the entries the
// Go loop lists (bit for bit, keys in order) and zeroes the row, on rows of every length up
// to a few chunks past sweepMax's scale, with zeros, -0 (not listed),
// NaN and infinities (listed) at random, and rows empty or full. The
// room past the entries is filled with garbage first: nothing there may
// be read back. The AVX-512 counts of non-zeros (nonZeros, and
// nonZeroInts over the values' bits, where -0's is not zero) agree
// with the Go loops' from every offset up to a chunk (unaligned loads).
func TestSweepChunksAgree(t *testing.T) {
	if !cpuAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 600 {
		n := rng.IntN(300)
		if trial%50 == 0 {
			n = 8 * rng.IntN(600)
		}
		ws := randSpecialRow(rng, n)
		keys, vals := make([]int32, n), make([]float64, n)
		gk, gv := make([]int32, n), make([]float64, n)
		for i := range keys {
			keys[i], vals[i] = -7, 3.5
		}
		want := sweepGo(slices.Clone(ws), 0, gk, gv)
		bits := make([]int64, n)
		for i, v := range ws {
			bits[i] = int64(math.Float64bits(v))
		}
		off := rng.IntN(min(n, 8) + 1)
		if c := nonZeros(ws); c != want {
			t.Fatalf("trial %d (%d keys): %d non-zeros counted, %d listed", trial, n, c, want)
		}
		if c, w := nonZeros(ws[off:]), nonZerosGo(ws[off:]); c != w {
			t.Fatalf("trial %d (%d keys from %d): %d non-zeros, want %d", trial, n, off, c, w)
		}
		if c, w := nonZeroInts(bits[off:]), nonZeroIntsGo(bits[off:]); c != w {
			t.Fatalf("trial %d (%d ints from %d): %d non-zeros, want %d", trial, n, off, c, w)
		}
		got := sweepReals(ws, keys, vals)
		for k, v := range ws {
			if v != 0 || math.Signbit(v) {
				t.Fatalf("trial %d (%d keys): key %d left %v", trial, n, k, v)
			}
		}
		if got != want {
			t.Fatalf("trial %d (%d keys): %d entries, want %d", trial, n, got, want)
		}
		for p := range want {
			if keys[p] != gk[p] || math.Float64bits(vals[p]) != math.Float64bits(gv[p]) {
				t.Fatalf("trial %d entry %d: %d -> %v, want %d -> %v", trial, p, keys[p], vals[p], gk[p], gv[p])
			}
		}
	}
}

// TestCompactRealsAgree: compactReals, the AVX-512 compaction that
// leaves its source as it is, lists exactly the entries keepGo lists
// (bit for bit, keys from the base given, in order), into separate
// slices or over the source itself, on runs of every length up to a few
// chunks, zeros, -0 (not listed), NaN and infinities (listed) at random.
// A separate source is left as it was.
func TestCompactRealsAgree(t *testing.T) {
	if !cpuAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(21, 23))
	for trial := range 600 {
		n := rng.IntN(100)
		src := randSpecialRow(rng, n)
		base := int32(rng.IntN(1000))
		gk, gv := make([]int32, n), make([]float64, n)
		want := keepGo(src, base, gk, gv)
		inPlace := trial%2 == 1
		keys, vals := make([]int32, n), make([]float64, n)
		for i := range keys {
			keys[i], vals[i] = -7, 3.5
		}
		orig := slices.Clone(src)
		if inPlace {
			vals = src
		}
		got := compactReals(src, base, keys, vals)
		if got != want {
			t.Fatalf("trial %d (%d values from key %d, in place %v): %d entries, want %d", trial, n, base, inPlace, got, want)
		}
		for p := range want {
			if keys[p] != gk[p] || math.Float64bits(vals[p]) != math.Float64bits(gv[p]) {
				t.Fatalf("trial %d entry %d (in place %v): %d -> %v, want %d -> %v", trial, p, inPlace, keys[p], vals[p], gk[p], gv[p])
			}
		}
		if !inPlace {
			for i, v := range src {
				if math.Float64bits(v) != math.Float64bits(orig[i]) {
					t.Fatalf("trial %d: the source's value %d changed from %v to %v", trial, i, orig[i], v)
				}
			}
		}
	}
}

// randSpecialRow returns n values, a random share of them non-zero and
// about a tenth of them zeros, -0, NaN, infinities and other specials.
func randSpecialRow(rng *rand.Rand, n int) []float64 {
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, -1}
	row := make([]float64, n)
	fill := rng.Float64()
	for i := range row {
		switch r := rng.Float64(); {
		case r < 0.1:
			row[i] = specials[rng.IntN(len(specials))]
		case r < fill:
			row[i] = rng.NormFloat64()
		}
	}
	return row
}
