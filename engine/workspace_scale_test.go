package engine

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkCompactRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := make([]float64, 250)
	touched := make([]int64, 0, 100)
	keys, vals := make([]int64, 101), make([]float64, 101)
	var bits []uint64
	fill := func() {
		touched = touched[:0]
		for range 78 {
			k := rng.Int64N(250)
			if ws[k] == 0 {
				touched = append(touched, k)
			}
			ws[k] += 1
		}
	}
	b.Run("fill", func(b *testing.B) {
		for range b.N {
			fill()
			clear(ws)
		}
	})
	b.Run("compact", func(b *testing.B) {
		for range b.N {
			fill()
			lo, hi, sorted := keyRange(touched)
			compactInto(ws, touched, lo, hi, sorted, keys, vals, &bits)
		}
	})
}
