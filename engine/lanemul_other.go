//go:build !amd64 || purego

package engine

// No vector loops here: a one-value product's lanes run in Go.
var useLaneMul = false

func mulAddScalar(acc []float64, x float64, bs, cs []float64) {
	mulAddScalarGo(acc, x, bs, cs)
}

func mulSetScalar(out []float64, x float64, bs, cs []float64) bool {
	return mulSetScalarGo(out, x, bs, cs)
}

// add adds the batch's first m positions into acc.
func (mb *mulBatch) add(acc []float64, m int) {
	mb.addGo(acc, 0, m)
}
