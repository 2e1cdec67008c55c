package opt

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLayouts measures what the cost coefficients of cost.go stand
// for: iterating, reading and accumulating into a dense []float64 versus a
// map[int64]float64 of 65,536 entries (go test ./opt -run ^$ -bench
// Layouts). The coefficients keep the ratios, rounded.
func BenchmarkLayouts(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 1))
	arr := make([]float64, n)
	m := make(map[int64]float64, n)
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = r.Int64N(n)
		m[int64(i)] = 1
	}
	var sink float64
	b.Run("array-iterate", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, v := range arr {
				s += v
			}
			sink += s
		}
	})
	b.Run("map-iterate", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, v := range m {
				s += v
			}
			sink += s
		}
	})
	b.Run("array-read", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, k := range idx {
				s += arr[k]
			}
			sink += s
		}
	})
	b.Run("map-read", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, k := range idx {
				s += m[k]
			}
			sink += s
		}
	})
	b.Run("array-accumulate", func(b *testing.B) {
		for b.Loop() {
			for _, k := range idx {
				arr[k]++
			}
		}
	})
	b.Run("map-accumulate", func(b *testing.B) {
		for b.Loop() {
			mm := map[int64]float64{}
			for _, k := range idx {
				mm[k]++
			}
		}
	})
	_ = sink
}
