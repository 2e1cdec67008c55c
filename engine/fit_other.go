//go:build !amd64 || purego

package engine

// No assembly here: csrDot and csrDotScatter run, and pattern rows take
// rowsGather. They read 8-byte indices, so no narrow copy is made.

// narrowRows says the row loops here read int32 column indices when
// they are given them.
const narrowRows = false

func csrDotAsm[X, Y number](out []float64, h []int64, l int64, idx []int64, nidx []int32, x []X, y []Y, n int64, a, b, c float64, set bool) (int, bool) {
	return 0, false
}

func csrDotScatterAsm[X, Y number](out []float64, h1 []int64, l1 int64, idx1 []int64, nidx1 []int32, x []X, y []Y, n1 int64, h2 []int64, l2 int64, idx2 []int64, nidx2 []int32, v []X, n2 int64, a, b, c float64) (int, bool) {
	return 0, false
}

func csrGatherAsm[Y number](out []float64, h []int64, l int64, idx []int64, nidx []int32, y []Y, n int64, a, b, c float64) (int, bool) {
	return 0, false
}

func csrDotInAsm(out []float64, p []int64, idx []int32, x []float64, gather bool, y []float64, lo, hi int64, sc [3]float64) int {
	return 0
}

func csrScaleScatterAsm[X number](out []float64, h []int64, l int64, idx []int64, nidx []int32, v []X, n int64, ts []float64) (int, bool) {
	return 0, false
}
