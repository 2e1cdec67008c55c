package engine

import "testing"

// TestGrowStaysKept: a block buffer grown past half of maxKeptBuffer by a
// length that fits stays within maxKeptBuffer, so that the run after
// keeps it (kept) instead of making it again (TTV on orghs: blocks of
// 56,000-60,000 rows reallocated their per-row sums every run).
func TestGrowStaysKept(t *testing.T) {
	var s []float64
	grow(&s, maxKeptBuffer*3/5)
	grow(&s, maxKeptBuffer*4/5)
	if len(s) != maxKeptBuffer*4/5 || kept(s) == nil {
		t.Errorf("grow to %d, then %d: len %d, cap %d; want it kept (cap at most %d)",
			maxKeptBuffer*3/5, maxKeptBuffer*4/5, len(s), cap(s), maxKeptBuffer)
	}
	grow(&s, maxKeptBuffer+1)
	if len(s) != maxKeptBuffer+1 {
		t.Errorf("grow past maxKeptBuffer: len %d, want %d", len(s), maxKeptBuffer+1)
	}
}
