//go:build !purego

package engine

// mulAddXBC is acc[q] += (x*b[q])*c[q] for q < n, n a multiple of 4
// (AVX2, lanemul_amd64.s).
//
//go:noescape
func mulAddXBC(acc, b, c *float64, x float64, n int64)

// mulAddXB is acc[q] += x*b[q] for q < n, n a multiple of 4 (AVX2).
//
//go:noescape
func mulAddXB(acc, b *float64, x float64, n int64)

// useLaneMul selects the AVX2 loop of a one-value product's lanes;
// tests turn it off to compare.
var useLaneMul = cpuAVX2

// mulAddScalar adds (x*bs[q])*cs[q] (cs nil: x*bs[q]) into acc, the
// slices as long as acc: the multiples of 4 in assembly, the rest in Go.
func mulAddScalar(acc []float64, x float64, bs, cs []float64) {
	m := 0
	if useLaneMul && len(acc) >= 4 {
		m = len(acc) &^ 3
		if cs != nil {
			_, _, _ = bs[m-1], cs[m-1], acc[m-1]
			mulAddXBC(&acc[0], &bs[0], &cs[0], x, int64(m))
			cs = cs[m:]
		} else {
			_, _ = bs[m-1], acc[m-1]
			mulAddXB(&acc[0], &bs[0], x, int64(m))
		}
	}
	mulAddScalarGo(acc[m:], x, bs[m:], cs)
}
