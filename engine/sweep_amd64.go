//go:build !purego

package engine

// compactChunks is compactReals for the first 8*chunks values of src
// (AVX-512, sweep_amd64.s). keys and vals have room for 8*chunks
// entries; vals may be src.
//
//go:noescape
func compactChunks(src *float64, chunks int64, base int32, keys *int32, vals *float64, zero bool) int64

// useSweep selects the sweep of whole narrow rows (see workspace.sweep);
// tests turn it off to compare.
var useSweep = cpuAVX512

// sweepReals is sweepRow for reals: the whole chunks of eight in
// assembly, the rest in Go.
func sweepReals(ws []float64, keys []int32, vals []float64) int {
	m, n := compactHead(ws, 0, keys, vals, true)
	return n + sweepGo(ws[m:], int32(m), keys[n:], vals[n:])
}

// compactReals is keepGo in assembly where it can: the whole chunks of
// eight there, the rest in Go.
func compactReals(src []float64, base int32, keys []int32, vals []float64) int {
	m, n := compactHead(src, base, keys, vals, false)
	return n + keepGo(src[m:], base+int32(m), keys[n:], vals[n:])
}

// compactHead runs compactChunks over the whole chunks of src (zeroing
// them if zero is set) and returns the values it read and the entries
// it wrote; none without AVX-512.
func compactHead(src []float64, base int32, keys []int32, vals []float64, zero bool) (int, int) {
	m := len(src) &^ 7
	if m == 0 || !cpuAVX512 {
		return 0, 0
	}
	_, _ = keys[m-1], vals[m-1]
	return m, int(compactChunks(&src[0], int64(m/8), base, &keys[0], &vals[0], zero))
}
