package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeekFindsTheFirstNotBelow checks seek against a linear scan on
// random sorted slices with repeated keys, negative and positive, from
// every start position, and with keys at the ends of int64 (less compares
// them as uint64s, sign bits flipped).
func TestSeekFindsTheFirstNotBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		s := make([]int64, r.IntN(40))
		for i := range s {
			s[i] = int64(r.IntN(60)) - 30
		}
		xs := []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64 - 1, math.MaxInt64}
		for x := int64(-31); x <= 31; x++ {
			xs = append(xs, x)
		}
		for k := 0; trial%3 == 0 && k < len(s)/4; k++ { // keys at the ends of int64
			s[r.IntN(len(s))] = xs[r.IntN(4)]
		}
		slices.Sort(s)
		for from := 0; from <= len(s); from++ {
			for _, x := range xs {
				want := from
				for want < len(s) && s[want] < x {
					want++
				}
				if got := seek(s, from, x); got != want {
					t.Fatalf("seek(%v, %d, %d) = %d, want %d", s, from, x, got, want)
				}
			}
		}
	}
}
