//go:build !purego

package engine

// nonZeroChunks and nonZeroIntChunks count the non-zero values among the
// first 8*chunks elements of s (AVX-512, nonzeros_amd64.s).
//
//go:noescape
func nonZeroChunks(s *float64, chunks int64) int64

//go:noescape
func nonZeroIntChunks(s *int64, chunks int64) int64

// nonZeros and nonZeroInts count the non-zero values of s: the whole
// chunks of eight in assembly where it runs, the rest in Go.
func nonZeros(s []float64) int {
	m := len(s) &^ 7
	if m == 0 || !cpuAVX512 {
		return nonZerosGo(s)
	}
	return int(nonZeroChunks(&s[0], int64(m/8))) + nonZerosGo(s[m:])
}

func nonZeroInts(s []int64) int {
	m := len(s) &^ 7
	if m == 0 || !cpuAVX512 {
		return nonZeroIntsGo(s)
	}
	return int(nonZeroIntChunks(&s[0], int64(m/8))) + nonZeroIntsGo(s[m:])
}
