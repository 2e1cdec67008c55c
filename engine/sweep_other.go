//go:build !amd64 || purego

package engine

// No vector sweep here: rows are compacted through their marked keys.
var useSweep = false

func sweepReals(ws []float64, keys []int32, vals []float64) int {
	return sweepGo(ws, 0, keys, vals)
}

func compactReals(src []float64, base int32, keys []int32, vals []float64) int {
	return keepGo(src, base, keys, vals)
}
