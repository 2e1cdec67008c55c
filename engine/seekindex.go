package engine

import (
	"math"
	"math/bits"
)

// seekIndex is a bucket table over the rows of a segmented int array
// (I(P(j + c1):P(j + c2)), CSR rows), built before every run, that tells
// a merge where in row j to start looking for a key: MTTKRP's merge
// seeks a fiber's one or two keys in long rows of D many times a run,
// and interpolating seeks would dominate the kernel's time. A
// bucket covers 2^shift keys of the row's range, about one key each,
// and holds the first position whose key falls in it or after: the seek
// then starts there, usually at the answer.
//
// The table only decides where a search starts (every position before
// it holds a smaller key), so a seek through it returns what seek
// returns and every merge adds the same pairs in the same order.
type seekIndex struct {
	arr, lo, hi  *cell
	loOff, hiOff int64
	// rows[j - first]: row j's table; at < 0 when the row is not
	// indexed (short, unsorted, or its bounds irregular).
	first int64
	rows  []rowIndex
	tab   []int32
}

// rowIndex is the table of one row: tab[at + ((key - k0) >> shift)] for
// k0 <= key <= k1, its keys' range.
type rowIndex struct {
	at     int64
	k0, k1 int64
	shift  uint
}

// Set by tests: seekIndexOff compiles kernels without seek tables, and
// seekIndexBuilt learns how many rows every build gave one.
var (
	seekIndexOff   bool
	seekIndexBuilt func(rows int)
)

// seekIndexFrom is the shortest row given a table. Chosen, not tuned:
// in a shorter row galloping from the start takes a few probes, about
// what the table's extra cache line costs.
const seekIndexFrom = 64

// seekIndexOf returns the kernel's index over the rows of seg, one per
// segmented array and bounds.
func (c *compiler) seekIndexOf(seg *segBounds) *seekIndex {
	for _, ix := range c.indexes {
		if ix.arr == seg.arr && ix.lo == seg.lo && ix.hi == seg.hi && ix.loOff == seg.loOff && ix.hiOff == seg.hiOff {
			return ix
		}
	}
	ix := &seekIndex{arr: seg.arr, lo: seg.lo, hi: seg.hi, loOff: seg.loOff, hiOff: seg.hiOff}
	c.indexes = append(c.indexes, ix)
	return ix
}

// build makes the tables of the rows of the bound arrays; a run calls it
// after binding its cells and before running, on one goroutine.
func (ix *seekIndex) build() {
	pa, pb, a, n := ix.lo.ints, ix.hi.ints, ix.arr.ints, ix.arr.n
	// Rows j with both bounds in their arrays.
	first := max(-ix.loOff, -ix.hiOff, 0)
	last := min(int64(len(pa))-ix.loOff, int64(len(pb))-ix.hiOff)
	ix.first, ix.rows = first, ix.rows[:0]
	// Two passes: the rows' ranges and the tables' total size, then the
	// tables in one array of that size (appending would leave copies of
	// it behind for the collector).
	total := int64(0)
	for j := first; j < last; j++ {
		r := rowIndex{at: -1}
		l, h := pa[j+ix.loOff], pb[j+ix.hiOff]
		if 0 <= l && l <= h && h <= n && h-l >= seekIndexFrom && h-l <= math.MaxInt32 && ix.arr.needSorted && ix.arr.sortedSegment(l, h) {
			var size int64
			r, size = rowIndexOf(a, l, h, total)
			total += size
		}
		ix.rows = append(ix.rows, r)
	}
	if int64(cap(ix.tab)) < total {
		ix.tab = make([]int32, total)
	}
	ix.tab = ix.tab[:total]
	for k, r := range ix.rows {
		if r.at < 0 {
			continue
		}
		// tab[b] = the first position whose key's bucket is b or more.
		j := first + int64(k)
		r.fill(ix.tab[r.at:], a, pa[j+ix.loOff], pb[j+ix.hiOff])
	}
	if seekIndexBuilt != nil {
		n := 0
		for _, r := range ix.rows {
			if r.at >= 0 {
				n++
			}
		}
		seekIndexBuilt(n)
	}
}

// rowIndexOf lays out the table of the sorted nonempty segment a[l:h]
// at offset at of the tables' array; it returns it and its size.
func rowIndexOf(a []int64, l, h, at int64) (rowIndex, int64) {
	r := rowIndex{at: at, k0: a[l], k1: a[h-1]}
	// About one key per bucket: 2^shift is the range over the row's
	// length, rounded down.
	span := uint64(r.k1) - uint64(r.k0) // keys sorted: no wrap
	if w, m := bits.Len64(span), bits.Len64(uint64(h-l)); w > m {
		r.shift = uint(w - m)
	}
	return r, int64(span>>r.shift) + 1
}

// fill writes the table of segment a[l:h] into t: t[b] is the first
// position (from l) whose key's bucket is b or more. Three passes with
// no branch that depends on the keys (a fill in one pass, each key
// filling the buckets up to its own, mispredicted its inner loop's exit
// about once a key): the buckets marked empty, each key's position into
// its bucket from the last key back (so the first key of a bucket is
// left), and the empty buckets filled from the next one back.
func (r *rowIndex) fill(t []int32, a []int64, l, h int64) {
	last := (uint64(r.k1) - uint64(r.k0)) >> r.shift
	t = t[:last+1]
	for b := range t {
		t[b] = -1
	}
	for p := h - 1; p >= l; p-- {
		t[(uint64(a[p])-uint64(r.k0))>>r.shift] = int32(p - l)
	}
	next := t[last]
	for b := len(t) - 1; b >= 0; b-- {
		v := t[b]
		if v < 0 {
			v = next
		}
		t[b], next = v, v
	}
}

// row returns row j's table and the tables' array, or nil when ix is nil
// or the row has none.
func (ix *seekIndex) row(j int64) (*rowIndex, []int32) {
	if ix == nil {
		return nil, nil
	}
	if k := j - ix.first; uint64(k) < uint64(len(ix.rows)) && ix.rows[k].at >= 0 {
		return &ix.rows[k], ix.tab
	}
	return nil, nil
}

// release drops the arrays' references after a run, keeping the tables'
// memory for the next one unless it is large.
func (ix *seekIndex) release() {
	if cap(ix.tab) > 1<<20 {
		ix.tab = nil
	}
	ix.rows = ix.rows[:0]
}

// seek is seek(s, from, x) on the row the table was built for (s).
func (r *rowIndex) seek(tab []int32, s []int64, from int, x int64) int {
	if from >= len(s) || s[from] >= x {
		return from
	}
	switch {
	case x > r.k1:
		return len(s)
	case x > r.k0:
		if t := int(tab[r.at+int64((uint64(x)-uint64(r.k0))>>r.shift)]); t > from {
			from = t
		}
	}
	// The answer is usually here or a key or two on (a bucket holds
	// about one); seek gallops if keys crowd into the bucket.
	for range 4 {
		if from >= len(s) || s[from] >= x {
			return from
		}
		from++
	}
	return seek(s, from, x)
}
