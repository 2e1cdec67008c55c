package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeekFindsTheFirstNotBelow checks seek against a linear scan on
// random sorted slices with repeated keys, from every start position.
func TestSeekFindsTheFirstNotBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		s := make([]int64, r.IntN(40))
		for i := range s {
			s[i] = int64(r.IntN(60))
		}
		slices.Sort(s)
		for from := 0; from <= len(s); from++ {
			for x := int64(-1); x <= 61; x++ {
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
