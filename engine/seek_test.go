package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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

// TestSeekLongSlices: seek into slices long enough to interpolate
// (interpolateFrom keys or more ahead), keys spread evenly, clustered
// (where a guess from the ends lands far off) or at the ends of int64
// (whose differences overflow an int64), checked against a binary
// search, from random start positions and every key in play.
func TestSeekLongSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	interpolated := 0
	for trial := 0; trial < 200; trial++ {
		s := make([]int64, interpolateFrom+r.IntN(3*interpolateFrom))
		for i := range s {
			switch trial % 4 {
			case 0: // evenly spread
				s[i] = int64(r.IntN(100 * len(s)))
			case 1: // clustered: most keys in a narrow band
				s[i] = int64(r.IntN(50))
				if r.IntN(20) == 0 {
					s[i] = int64(r.IntN(1 << 40))
				}
			case 2: // repeated keys
				s[i] = int64(r.IntN(len(s) / 8))
			case 3: // the ends of int64 among small keys
				s[i] = int64(r.IntN(1000)) - 500
				switch r.IntN(50) {
				case 0:
					s[i] = math.MinInt64 + int64(r.IntN(3))
				case 1:
					s[i] = math.MaxInt64 - int64(r.IntN(3))
				}
			}
		}
		slices.Sort(s)
		for range 60 {
			from := r.IntN(len(s) + 1)
			xs := []int64{math.MinInt64, math.MaxInt64}
			for range 20 {
				p := r.IntN(len(s))
				xs = append(xs, s[p], s[p]-1, s[p]+1)
			}
			for _, x := range xs {
				want := from + sort.Search(len(s)-from, func(i int) bool { return s[from+i] >= x })
				if got := seek(s, from, x); got != want {
					t.Fatalf("trial %d: seek(len %d, %d, %d) = %d, want %d", trial, len(s), from, x, got, want)
				}
				if len(s)-from >= interpolateFrom && from < len(s) && s[from] < x {
					interpolated++
				}
			}
		}
	}
	if interpolated < 10000 {
		t.Fatalf("only %d seeks interpolated", interpolated)
	}
}
