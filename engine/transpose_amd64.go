//go:build !purego

package engine

// transpose4 copies groups x quads blocks of four by four values of src
// (row r, column b at r*stride+b) to dst transposed (at b*rows+r), in
// AVX2 (transpose_amd64.s).
//
//go:noescape
func transpose4(dst *float64, rows int64, src *float64, stride int64, groups int64, quads int64)

// useTranspose4 selects transpose4 for the lane-major copy's whole
// blocks; tests turn it off to compare.
var useTranspose4 = cpuAVX2

// copyBlocks copies the whole blocks of four rows by four columns of the
// rows r0.. (groups of four) and columns b0..b1 of c's tile in
// assembly, and returns the columns it did not: b0 where it runs none.
func (c *sharedCopy) copyBlocks(r0, groups, b0, b1 int64) int64 {
	quads := (b1 - b0) / 4
	if !useTranspose4 || groups == 0 || quads == 0 {
		return b0
	}
	// In bounds: src's last read is row r0+4*groups-1 at column
	// b0+4*quads-1, dst's last write row b0+4*quads-1 at column
	// r0+4*groups-1.
	_ = c.src[(r0+4*groups-1)*c.stride+b0+4*quads-1]
	_ = c.vals[(b0+4*quads-1)*c.rows+r0+4*groups-1]
	transpose4(&c.vals[b0*c.rows+r0], c.rows, &c.src[r0*c.stride+b0], c.stride, groups, quads)
	return b0 + 4*quads
}
