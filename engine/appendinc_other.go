//go:build !amd64 || purego

package engine

// No vector pass here: appendIncreasing runs in Go.
var useCopyIncreasing = false

func copyIncreasingReals(ak []int32, av []float64, keys []int64, vals []float64, last int64) (down, zero, ok bool) {
	return false, false, false
}
