package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMergeReals: the branch-free merge of a private row, in assembly and
// in Go, writes the bits the per-value skip writes (dst kept where src
// is ±0, so a -0 in dst stays; NaN and infinities added) and zeroes src,
// at every length and alignment of a chunk of four.
func TestMergeReals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func() float64 {
		switch rng.IntN(9) {
		case 0, 1, 2:
			return 0
		case 3:
			return math.Copysign(0, -1)
		case 4:
			return math.NaN()
		case 5:
			return math.Inf(1 - 2*rng.IntN(2))
		}
		return rng.NormFloat64()
	}
	skip := func(dst, src []float64) {
		for k, v := range src {
			if v != 0 {
				dst[k] += v
			}
		}
	}
	for n := range 41 {
		for off := range 4 {
			for try := range 20 {
				d, s := make([]float64, off+n), make([]float64, off+n)
				for k := range d {
					d[k], s[k] = pick(), pick()
				}
				want := append([]float64(nil), d...)
				skip(want[off:], s[off:])
				for _, f := range []struct {
					name string
					run  func(dst, src []float64)
				}{{"mergeReals", mergeReals}, {"mergeRealsGo", mergeRealsGo}} {
					got, src := append([]float64(nil), d...), append([]float64(nil), s...)
					f.run(got[off:], src[off:])
					for k := range got {
						if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
							t.Fatalf("%s n=%d off=%d try %d: dst[%d] = %v (%#x), want %v (%#x)", f.name, n, off, try, k, got[k], math.Float64bits(got[k]), want[k], math.Float64bits(want[k]))
						}
						if k >= off && math.Float64bits(src[k]) != 0 {
							t.Fatalf("%s n=%d off=%d: src[%d] = %v, want +0", f.name, n, off, k, src[k])
						}
					}
				}
			}
		}
	}
}
