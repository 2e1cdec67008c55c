//go:build !amd64 || purego

package engine

// No vector loops here: a one-value product's lanes run in Go.
var useLaneMul = false

func mulAddScalar(acc []float64, x float64, bs, cs []float64) {
	mulAddScalarGo(acc, x, bs, cs)
}

// set writes the batch's first m rows of n lanes at out, as setGo does.
func (rb *rowBatch) set(out []float64, n, m int, bs, cs []float64) int {
	return rb.setGo(out, n, m, bs, cs)
}

// add adds the batch's first m positions into acc.
func (mb *mulBatch) add(acc []float64, m int) {
	mb.addGo(acc, 0, m)
}
