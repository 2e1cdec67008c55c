//go:build !purego

package engine

// dotColumns is dotOneAdjacent's lanes in AVX2 (dotcolumns_amd64.s), four at
// a time from lane 0 while four are left, up to the first four with a
// row out of bs; it returns the lanes done.
//
//go:noescape
func dotColumns(out *float64, n int64, x *float64, m int64, bs *float64, nbs int64, bb *int64, scale int64, lo int64, by *float64) int64

// useDotColumns selects the AVX2 loop of dotOne's lanes; tests turn it off
// to compare.
var useDotColumns = cpuAVX2

// dotColumnsAsm runs dotOneAdjacent's lanes in assembly where it can and
// returns how many it did (a multiple of 4; 0 without AVX2).
func dotColumnsAsm(x, bs []float64, bb []int64, scale, lo int64, by, out []float64) int {
	if !useDotColumns || len(out) < 4 || len(x) == 0 || len(bs) == 0 {
		return 0
	}
	bb = bb[:len(out)]
	var byp *float64
	if by != nil {
		by = by[:len(out)]
		byp = &by[0]
	}
	if len(x) == 4 || len(x) == 8 {
		// The assembly holds x's values in registers (dotcolumns_amd64.s).
		nestSaw("dot lanes as columns, x held in registers")
	}
	done := int(dotColumns(&out[0], int64(len(out)), &x[0], int64(len(x)), &bs[0], int64(len(bs)), &bb[0], scale, lo, byp))
	if done > 0 {
		nestSaw("dot lanes as columns")
	}
	return done
}
