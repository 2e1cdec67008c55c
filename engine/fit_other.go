//go:build !amd64 || purego

package engine

// csrDotAsm: no assembly here; csrDot runs.
func csrDotAsm[X, Y number](out []float64, h []int64, l int64, idx []int64, x []X, y []Y, n int64, a, b, c float64) (int, bool) {
	return 0, false
}
