//go:build !purego

package engine

// mulAddRows is acc[q] += (x[p]*b[kb[2p]+q])*c[kc[2p]+q] (c nil:
// x[p]*b[kb[2p]+q]) for positions p < m in order and q < n, n a multiple
// of 4 (AVX2, lanemul_amd64.s): the lanes kept in registers across
// positions, the rows at kb[2p+1] and kc[2p+1] fetched ahead.
//
//go:noescape
func mulAddRows(acc *float64, n int64, x, b *float64, kb *int64, c *float64, kc *int64, m int64)

// useLaneMul selects the AVX2 loop of a one-value product's lanes;
// tests turn it off to compare.
var useLaneMul = cpuAVX2

// mulAddScalar adds (x*bs[q])*cs[q] (cs nil: x*bs[q]) into acc, the
// slices as long as acc: the multiples of 4 in assembly (a batch of one
// position, its rows at offset 0), the rest in Go.
func mulAddScalar(acc []float64, x float64, bs, cs []float64) {
	m := 0
	if useLaneMul && len(acc) >= 4 {
		m = len(acc) &^ 3
		_, _ = bs[m-1], acc[m-1]
		var c *float64
		if cs != nil {
			_ = cs[m-1]
			c, cs = &cs[0], cs[m:]
		}
		var k [2]int64
		mulAddRows(&acc[0], int64(m), &x, &bs[0], &k[0], c, &k[0], 1)
	}
	mulAddScalarGo(acc[m:], x, bs[m:], cs)
}

// mulSetRows writes rows r < m at out + r*n, each the sum over its
// positions p (ends[r-1]..ends[r]-1, ends[-1] = 0) of
// (x[p]*b[kb[p]+q])*c[kc[p]+q] (c nil: x[p]*b[kb[p]+q]) for q < n,
// added to zero in order, n a multiple of 4 (AVX2, lanemul_amd64.s), the rows in order up to the first with
// a zero lane (or -0), and returns that row (m: none).
//
//go:noescape
func mulSetRows(out *float64, n int64, x, b *float64, kb *int64, c *float64, kc *int64, ends *int32, m int64) (first int64)

// set writes the batch's first m rows of n lanes at out, as setGo does.
func (rb *rowBatch) set(out []float64, n, m int, bs, cs []float64) int {
	if !useLaneMul || n%4 != 0 || m == 0 {
		return rb.setGo(out, n, m, bs, cs)
	}
	_ = out[m*n-1]
	var c *float64
	if cs != nil {
		c = &cs[0]
	}
	return int(mulSetRows(&out[0], int64(n), &rb.xv[0], &bs[0], &rb.kb[0], c, &rb.kc[0], &rb.ends[0], int64(m)))
}

// add adds the batch's first m positions into acc: the multiples of 4
// lanes in assembly, the rest in Go.
func (mb *mulBatch) add(acc []float64, m int) {
	w := 0
	if useLaneMul && len(acc) >= 4 {
		w = len(acc) &^ 3
		var c *float64
		if mb.cs != nil {
			c = &mb.cs[0]
		}
		mulAddRows(&acc[0], int64(w), &mb.x[0], &mb.bs[0], &mb.kb[0][0], c, &mb.kc[0][0], int64(m))
	}
	mb.addGo(acc, w, m)
}
