//go:build !amd64 || purego

package engine

// No vector loop here: dotOne's lanes run in Go.
var useDotColumns = false

func dotColumnsAsm(x, bs []float64, bb []int64, scale, lo int64, by, out []float64) int {
	return 0
}
