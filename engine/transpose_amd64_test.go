//go:build !purego

package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLaneMajorCopyBlocks: the lane-major copy with its blocks of four
// by four in assembly (transpose4) holds what the Go loops make, value
// for value, on random shapes: rows and columns not multiples of four
// or of a tile, a last row cut short by src's end, strides below four.
func TestLaneMajorCopyBlocks(t *testing.T) {
	if !cpuAVX2 {
		t.Skip("no AVX2 here")
	}
	defer func(u bool) { useTranspose4 = u }(useTranspose4)
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 300 {
		stride := int64(2 + rng.IntN(200))
		rows := int64(1 + rng.IntN(150))
		n := rows*stride - int64(rng.IntN(int(stride)))
		if trial%3 == 0 {
			n = rows * stride
		}
		src := make([]float64, n)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		copyOf := func(asm bool) []float64 {
			useTranspose4 = asm
			c := (*runCopies)(nil).entry(src, stride)
			c.lanes()
			return c.vals
		}
		want, got := copyOf(false), copyOf(true)
		if !slices.Equal(got, want) {
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%d values at stride %d: value %d (row %d, column %d of the copy) is %v, want %v",
						n, stride, i, int64(i)/((n+stride-1)/stride), int64(i)%((n+stride-1)/stride), got[i], want[i])
				}
			}
		}
	}
}
