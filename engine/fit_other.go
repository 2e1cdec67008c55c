//go:build !amd64 || purego

package engine

// No assembly here: csrDot and csrDotScatter run, and pattern rows take
// rowsGather.

func csrDotAsm[X, Y number](out []float64, h []int64, l int64, idx []int64, x []X, y []Y, n int64, a, b, c float64) (int, bool) {
	return 0, false
}

func csrDotScatterAsm[X, Y number](out []float64, h1 []int64, l1 int64, idx1 []int64, x []X, y []Y, n1 int64, h2 []int64, l2 int64, idx2 []int64, v []X, n2 int64, a, b, c float64) (int, bool) {
	return 0, false
}

func csrGatherAsm[Y number](out []float64, h []int64, l int64, idx []int64, y []Y, n int64, a, b, c float64) (int, bool) {
	return 0, false
}
