//go:build !purego

package engine

// copyIncreasing is appendIncreasing's pass over n reals in AVX2
// (appendinc_amd64.s): it writes the keys as int32s and the values, and
// returns bit 0 set if a key does not increase from last on, bit 1 if a
// value is zero.
//
//go:noescape
func copyIncreasing(ak *int32, av *float64, keys *int64, vals *float64, n int64, last int64) (flags int64)

// useCopyIncreasing selects the AVX2 pass of appendIncreasing; tests
// turn it off to compare.
var useCopyIncreasing = cpuAVX2

// copyIncreasingReals is appendIncreasing's pass over reals in assembly
// where there is AVX2 (false otherwise): ak, av and vals as long as keys.
func copyIncreasingReals(ak []int32, av []float64, keys []int64, vals []float64, last int64) (down, zero, ok bool) {
	n := len(keys)
	if !useCopyIncreasing || n == 0 {
		return false, false, false
	}
	_, _, _ = ak[n-1], av[n-1], vals[n-1]
	f := copyIncreasing(&ak[0], &av[0], &keys[0], &vals[0], int64(n), last)
	nestSaw("row keys copied in vectors")
	return f&1 != 0, f&2 != 0, true
}
