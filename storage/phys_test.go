package storage

import (
	"math"
	"slices"
	"sync"
	"testing"
)

func TestIntRange(t *testing.T) {
	for _, c := range []struct {
		in     []int64
		lo, hi int64
	}{
		{nil, 0, -1},
		{[]int64{7}, 7, 7},
		{[]int64{3, -2, 9, 0}, -2, 9},
		{[]int64{5, 5, 5}, 5, 5},
	} {
		a := IntArray(c.in)
		for range 2 { // the remembered answer is the scanned one
			if lo, hi := a.IntRange(); lo != c.lo || hi != c.hi {
				t.Errorf("IntRange(%v) = %d, %d; want %d, %d", c.in, lo, hi, c.lo, c.hi)
			}
		}
	}
	// A new slice is scanned again, even one of the same length.
	a := IntArray([]int64{1, 2})
	a.IntRange()
	a.I = []int64{1, 20}
	if lo, hi := a.IntRange(); lo != 1 || hi != 20 {
		t.Errorf("after a new slice: %d, %d; want 1, 20", lo, hi)
	}
	a.I = a.I[:1]
	if lo, hi := a.IntRange(); lo != 1 || hi != 1 {
		t.Errorf("after a shorter slice: %d, %d; want 1, 1", lo, hi)
	}
	// Concurrent first calls agree (run with -race).
	b := IntArray([]int64{4, -1, 8})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lo, hi := b.IntRange(); lo != -1 || hi != 8 {
				t.Errorf("concurrent IntRange = %d, %d", lo, hi)
			}
		}()
	}
	wg.Wait()
}

func TestNonDecreasing(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want bool
	}{
		{nil, true},
		{[]int64{4}, true},
		{[]int64{0, 0, 3, 3, 9}, true},
		{[]int64{0, 2, 1}, false},
		{[]int64{5, -1}, false},
	} {
		if got := IntArray(c.in).NonDecreasing(); got != c.want {
			t.Errorf("NonDecreasing(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	// A new slice is scanned again.
	a := IntArray([]int64{0, 1})
	a.NonDecreasing()
	a.I = []int64{2, 1}
	if a.NonDecreasing() {
		t.Error("after a new slice out of order: true")
	}
}

func TestNarrow(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want []int32 // nil: no copy
	}{
		{nil, nil},
		{[]int64{7, -3, 0}, []int32{7, -3, 0}},
		{[]int64{math.MaxInt32, math.MinInt32}, []int32{math.MaxInt32, math.MinInt32}},
		{[]int64{1, math.MaxInt32 + 1}, nil},
		{[]int64{math.MinInt32 - 1, 1}, nil},
	} {
		a := IntArray(c.in)
		for range 2 { // the remembered copy is the one made
			if got := a.Narrow(); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
				t.Errorf("Narrow(%v) = %v; want %v", c.in, got, c.want)
			}
		}
		if got, want := (Store{"a": a}).Bytes(), int64(8*len(c.in)+4*len(c.want)); got != want {
			t.Errorf("Bytes with Narrow(%v) made = %d; want %d", c.in, got, want)
		}
	}
	// A new slice is copied again, even one of the same length; a
	// store counts no copy made for an earlier slice.
	a := IntArray([]int64{1, 2})
	a.Narrow()
	a.I = []int64{1, 20}
	if got := (Store{"a": a}).Bytes(); got != 16 {
		t.Errorf("Bytes after a new slice = %d; want 16", got)
	}
	if got := a.Narrow(); !slices.Equal(got, []int32{1, 20}) {
		t.Errorf("after a new slice: %v; want [1 20]", got)
	}
	// Concurrent first calls agree (run with -race).
	b := IntArray([]int64{4, -1, 8})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := b.Narrow(); !slices.Equal(got, []int32{4, -1, 8}) {
				t.Errorf("concurrent Narrow = %v", got)
			}
		}()
	}
	wg.Wait()
}

// TestDescents checks the counts against their definition, that the
// answer is remembered for the slice it counted (and counted in Bytes)
// and counted again for a new slice of the same length.
func TestDescents(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want []int32
	}{
		{nil, []int32{}},
		{[]int64{5}, []int32{0}},
		{[]int64{1, 1, 3, 2, 2, 0, 9}, []int32{0, 0, 0, 1, 1, 2, 2}},
		{[]int64{3, 2, 1}, []int32{0, 1, 2}},
	} {
		a := IntArray(c.in)
		first := a.Descents()
		if !slices.Equal(first, c.want) {
			t.Errorf("Descents(%v) = %v; want %v", c.in, first, c.want)
		}
		if len(first) > 0 && &a.Descents()[0] != &first[0] {
			t.Errorf("Descents(%v) counted again for the same slice", c.in)
		}
		if got, want := (Store{"a": a}).Bytes(), int64(12*len(c.in)); got != want {
			t.Errorf("Bytes with Descents(%v) made = %d; want %d", c.in, got, want)
		}
	}
	a := IntArray([]int64{1, 2})
	a.Descents()
	a.I = []int64{2, 1}
	if got := (Store{"a": a}).Bytes(); got != 16 {
		t.Errorf("Bytes after a new slice = %d; want 16", got)
	}
	if got := a.Descents(); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("after a new slice: %v; want [0 1]", got)
	}
}

func TestBuildScansIntRanges(t *testing.T) {
	c := &COO{Dims: []int64{3, 5}, Coords: [][]int64{{0, 2, 2}, {4, 1, 3}}, Vals: []float64{1, 2, 3}}
	f, err := ParseFormat("csr")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Build("A", c, f)
	if err != nil {
		t.Fatal(err)
	}
	idx := st[IdxName("A", 2)].(*Array)
	if idx.ints.Load() == nil {
		t.Fatal("Build left the index array's range unscanned")
	}
	if lo, hi := idx.IntRange(); lo != 1 || hi != 4 {
		t.Errorf("A_idx2 range %d, %d; want 1, 4", lo, hi)
	}
}

func TestHalves(t *testing.T) {
	const w = PackedHalf
	for _, c := range []struct {
		in        []int64
		low, high [2]int64
		ok        bool
	}{
		{nil, [2]int64{0, -1}, [2]int64{0, 0}, false},
		{[]int64{3, -2}, [2]int64{-2, 3}, [2]int64{0, 0}, false},
		{[]int64{7, 2, 9}, [2]int64{2, 9}, [2]int64{0, 0}, true},
		{[]int64{5 + 3*w, 1 + 8*w, 6}, [2]int64{1, 6}, [2]int64{0, 8}, true},
		{[]int64{w - 1, w}, [2]int64{0, w - 1}, [2]int64{0, 1}, true},
	} {
		a := IntArray(c.in)
		for range 2 { // computed by the first call, remembered after
			low, high, ok := a.Halves()
			if ok != c.ok || ok && (low != c.low || high != c.high) {
				t.Errorf("Halves(%v) = %v, %v, %v; want %v, %v, %v", c.in, low, high, ok, c.low, c.high, c.ok)
			}
		}
	}
	// A new slice is scanned again.
	a := IntArray([]int64{1 + 2*w})
	a.Halves()
	a.I = []int64{4 + 9*w}
	if low, high, _ := a.Halves(); low != [2]int64{4, 4} || high != [2]int64{9, 9} {
		t.Errorf("after a new slice: %v, %v; want [4 4], [9 9]", low, high)
	}
}

// TestIncreasesWithin: the answer for sorted and unsorted segments and
// bad bounds, remembered for the slices scanned and found again when I
// or the segments' array is a new slice.
func TestIncreasesWithin(t *testing.T) {
	x := IntArray([]int64{1, 3, 7, 0, 2, 2})
	for _, c := range []struct {
		p    []int64
		want bool
	}{
		{[]int64{0, 3, 5}, true},
		{[]int64{0, 3, 6}, false}, // 2, 2 repeats
		{[]int64{0, 4}, false},    // 7 then 0
		{[]int64{0, 7}, false},    // past I's end
		{[]int64{3, 1}, false},    // out of order
		{[]int64{0}, true},
	} {
		p := IntArray(c.p)
		for range 2 {
			if got := x.IncreasesWithin(p); got != c.want {
				t.Errorf("IncreasesWithin(%v) = %v, want %v", c.p, got, c.want)
			}
		}
	}
	p := IntArray([]int64{0, 3, 6})
	if x.IncreasesWithin(p) {
		t.Fatal("2, 2 increases")
	}
	x.I = []int64{1, 3, 7, 0, 2, 4} // a new slice: scanned again
	if !x.IncreasesWithin(p) {
		t.Error("the answer for the old slice was kept")
	}
}
