//go:build !purego

package engine

// sweepChunks is sweepRow for the first 8*chunks keys of ws (AVX-512,
// sweep_amd64.s). keys and vals have room for 8*chunks entries.
//
//go:noescape
func sweepChunks(ws *float64, chunks int64, keys *int32, vals *float64) int64

// useSweep selects the sweep of whole narrow rows (see workspace.sweep);
// tests turn it off to compare.
var useSweep = cpuAVX512

// sweepReals is sweepRow for reals: the whole chunks of eight in
// assembly, the rest in Go.
func sweepReals(ws []float64, keys []int32, vals []float64) int {
	m := len(ws) &^ 7
	n := 0
	if m > 0 && cpuAVX512 {
		_, _ = keys[m-1], vals[m-1]
		n = int(sweepChunks(&ws[0], int64(m/8), &keys[0], &vals[0]))
	} else {
		m = 0
	}
	return n + sweepGo(ws[m:], int32(m), keys[n:], vals[n:])
}
