//go:build !amd64 || purego

package engine

// No assembly here: sell chunks run in Go.

func sellChunks[V number](out []float64, perm, rlen, cpos, cols []int64, vals []V, x []float64, c0, c1 int64, exact bool) int64 {
	return sellChunksGo(out, perm, rlen, cpos, cols, vals, x, c0, c1)
}

func sellScatterRows[V number](out, sums []float64, rlen, cpos, cols []int64, vals []V, scale, fac float64) {
	sellScatterGo(out, sums, rlen, cpos, cols, vals, scale, fac)
}
