//go:build !amd64 || purego

package engine

// No vector loops here: a one-value product's lanes run in Go.
var useLaneMul = false

func mulAddScalar(acc []float64, x float64, bs, cs []float64) {
	mulAddScalarGo(acc, x, bs, cs)
}
