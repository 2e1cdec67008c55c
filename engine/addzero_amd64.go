//go:build !purego

package engine

// addZeroChunks is mergeRealsGo for the first 4*chunks values of src
// (AVX2, addzero_amd64.s); dst has room for them.
//
//go:noescape
func addZeroChunks(dst, src *float64, chunks int64)

// mergeReals is mergeRealsGo, the whole chunks of four in assembly where it
// runs.
func mergeReals(dst, src []float64) {
	m := len(src) &^ 3
	if m > 0 && cpuAVX2 {
		_ = dst[m-1]
		addZeroChunks(&dst[0], &src[0], int64(m/4))
		dst, src = dst[m:], src[m:]
	}
	mergeRealsGo(dst, src)
}
