package engine

import (
	"math"
	"slices"
	"sync"
)

// Rows that arrive out of order. A loop nest that adds into a dense level
// of rows keyed by an inner coordinate of its walk (the optimizer's M4:
// a matrix stored by columns copied by rows, { c -> { j -> v } } over the
// columns j) gives each row a few entries at a time, row after row in no
// order: through the builder every entry finds its row, and every row
// grows on its own (a builder, a kid, storage of its own per row).
//
// So the root of a dictionary of depth 2 in sequential mode (seqrows.go),
// on the first row out of order, collects instead: its entries so far
// and every entry after, (row, key, value) in the order they arrive,
// laid out when the dictionary is frozen as rows one after another
// (laidCSR) by counting, the rows' sizes first, then each entry at its
// row's next position. Within a row the entries keep their order (a
// stable sort by key where they came out of order), so the entries at
// one key add up in the order the builder adds them, and zeros are
// dropped as the builder drops them: the same dictionary. Any access
// other than adding entries (a merge into a builder not collecting, a
// child read, a row key that is negative or spread too far) replays
// the entries into the rows the general way (leaveCollect).

// collected holds a collecting builder's entries in the order they
// arrived, in blocks (an array grown by copying would move every entry
// several times) of as many entries as came before, from collectBlockMin
// (a small dictionary takes little) to collectBlockLen, and the greatest
// row key.
type collected struct {
	blocks []collectBlock
	n      int64
	maxRow int64
}

// collectBlock: entry q is vals[q] (reals or ints) at key keys[q] of row
// rows[q].
type collectBlock struct {
	rows, keys []int64
	reals      []float64
	ints       []int64
}

const collectBlockMin, collectBlockLen = 64, 1 << 12

// add appends vals at keys in rows (aligned) to c.
func addCollected[T int64 | float64](c *collected, rows, keys []int64, vals []T) {
	for len(rows) > 0 {
		if n := len(c.blocks); n == 0 || len(c.blocks[n-1].rows) == cap(c.blocks[n-1].rows) {
			size := int(min(max(c.n, collectBlockMin), collectBlockLen))
			bl := collectBlock{rows: collectRoom[int64](size), keys: collectRoom[int64](size)}
			*blockVals[T](&bl) = collectRoom[T](size)
			c.blocks = append(c.blocks, bl)
		}
		bl := &c.blocks[len(c.blocks)-1]
		m := min(len(rows), cap(bl.rows)-len(bl.rows))
		bl.rows = append(bl.rows, rows[:m]...)
		bl.keys = append(bl.keys, keys[:m]...)
		v := blockVals[T](bl)
		*v = append(*v, vals[:m]...)
		rows, keys, vals = rows[m:], keys[m:], vals[m:]
		c.n += int64(m)
	}
}

// Full blocks are kept for later runs: a copy's blocks are dead once it
// is laid out, and blocks made afresh in each run are memory the process
// faults in again and the collector scans for (MMM over bcsstk16 with B
// stored by columns: 38,000 entries, 900 KB a run).
var intBlocks, realBlocks sync.Pool // of *[]int64, *[]float64, collectBlockLen long

func blockPool[V int64 | float64]() *sync.Pool {
	if _, ok := any(V(0)).(float64); ok {
		return &realBlocks
	}
	return &intBlocks
}

// collectRoom returns an empty block of room size: a kept one if size is
// the full size and one is kept, else a new one, not zeroed (appended
// to, never read past its length).
func collectRoom[V int64 | float64](size int) []V {
	if size == collectBlockLen {
		if p, ok := blockPool[V]().Get().(*[]V); ok {
			return (*p)[:0]
		}
	}
	return unzeroedRow[V](size)[:0]
}

// keepBlock keeps s for a later collectRoom if it is of the full size.
func keepBlock[V int64 | float64](s []V) {
	if cap(s) == collectBlockLen {
		blockPool[V]().Put(&s)
	}
}

// release keeps c's full blocks for later copies; c's entries are gone.
func (c *collected) release() {
	for _, bl := range c.blocks {
		keepBlock(bl.rows)
		keepBlock(bl.keys)
		if bl.reals != nil {
			keepBlock(bl.reals)
		} else {
			keepBlock(bl.ints)
		}
	}
	c.blocks, c.n = nil, 0
}

// blockVals returns bl's values of type V.
func blockVals[V int64 | float64](bl *collectBlock) *[]V {
	if v, ok := any(&bl.reals).(*[]V); ok {
		return v
	}
	return any(&bl.ints).(*[]V)
}

// startCollect adds vals at keys (aligned) into the row at key k of b,
// in sequential mode, by collecting when k is out of order there, and
// reports whether it did.
func startCollect[T int64 | float64](b *builder, k int64, keys []int64, vals []T) bool {
	x := b.x
	if x == nil || x.seq == nil || k >= x.seq.key || k < 0 || !b.collecting() {
		return false
	}
	rows := make([]int64, len(keys))
	for q := range rows {
		rows[q] = k
	}
	return collect(b, rows, keys, vals)
}

// collectLane adds x at key k2 of the row at key k of b as startCollect
// and collect do, and reports whether it did.
func collectLane[T int64 | float64](b *builder, k, k2 int64, x T) bool {
	ks, k2s, xs := [1]int64{k}, [1]int64{k2}, [1]T{x}
	if b.collects() {
		return collect(b, ks[:], k2s[:], xs[:])
	}
	return startCollect(b, k, k2s[:], xs[:])
}

// collect adds vals at keys2 in the rows at keys (aligned) to b's
// collected entries, or, when a key is negative, leaves collecting and
// reports false (nothing added).
func collect[T int64 | float64](b *builder, keys, keys2 []int64, vals []T) bool {
	c := b.x.coll
	m := c.maxRow
	for q, k := range keys {
		if k < 0 || keys2[q] < 0 {
			b.leaveCollect()
			return false
		}
		m = max(m, k)
	}
	c.maxRow = m
	addCollected(c, keys, keys2[:len(keys)], vals[:len(keys)])
	return true
}

// startCollecting turns b, in sequential mode, into a collecting builder,
// its closed rows the first entries, and reports whether it could.
func (b *builder) startCollecting() bool {
	x := b.x
	s := x.seq
	if !s.closeRow() {
		return false
	}
	c := &collected{maxRow: -1}
	ci := 0
	for r, k := range s.keys {
		ci = s.chunkFrom(r, ci)
		v0, v1, c0, c1 := s.span(r, ci)
		ch := &s.chunks[ci]
		for q := v0; q < v1; q++ {
			key := int64(q - v0) // a dense row: its values from key 0
			if c1 > c0 {
				key = int64(ch.cols[c0+q-v0])
			}
			// A zero is no entry: a dense row's hole.
			switch {
			case b.spec.kid.real && ch.reals[q] != 0:
				addCollected(c, []int64{k}, []int64{key}, ch.reals[q:q+1])
			case !b.spec.kid.real && ch.ints[q] != 0:
				addCollected(c, []int64{k}, []int64{key}, ch.ints[q:q+1])
			}
			c.maxRow = max(c.maxRow, k)
		}
	}
	x.seq, x.sequential, x.coll = nil, false, c
	return true
}

// leaveCollect ends b's collecting: its entries are added into its rows
// as the general builder adds them.
func (b *builder) leaveCollect() {
	if !b.collects() {
		return
	}
	x := b.x
	c := x.coll
	x.coll = nil
	for _, bl := range c.blocks {
		if b.spec.kid.real {
			addByRows(b, bl.rows, bl.keys, bl.reals, addReals)
		} else {
			addByRows(b, bl.rows, bl.keys, bl.ints, addInts)
		}
	}
	nestSaw("collected rows replayed")
}

// mergeCollected adds o's entries after b's when either collects (o's
// are the later entries, as a sequential run would add them), making the
// other collect, and reports whether it did; where that cannot be, both
// leave collecting and it reports false.
func (b *builder) mergeCollected(o *builder) bool {
	if !b.collects() && !o.collects() {
		return false
	}
	if !b.collecting() || !o.collecting() {
		b.leaveCollect()
		o.leaveCollect()
		return false
	}
	c, oc := b.x.coll, o.x.coll
	c.blocks = append(c.blocks, oc.blocks...)
	c.n += oc.n
	c.maxRow = max(c.maxRow, oc.maxRow)
	o.x.coll = nil
	return true
}

// collects reports whether b collects.
func (b *builder) collects() bool { return b.x != nil && b.x.coll != nil }

// collecting reports whether b collects, making it collect if it is the
// root of a dictionary of rows in sequential mode.
func (b *builder) collecting() bool {
	x := b.x
	switch {
	case x == nil || x.tree == nil || x.tree.root != b:
		return false
	case x.coll != nil:
		return true
	case x.sequential && x.seq == nil && b.spec.depth == 2:
		// No row yet.
		x.sequential, x.coll = false, &collected{maxRow: -1}
		return true
	}
	s := x.seq
	return s != nil && s.outer == nil && b.startCollecting()
}

// freezeCollected lays out b's collected entries as rows, or, where the
// row keys spread too far for their number, replays them and returns
// nil.
func (b *builder) freezeCollected() dict {
	c := b.x.coll
	n := c.n
	width := c.maxRow + 1
	if width > max(maxDenseJump, denseKeysFactor*n) {
		b.leaveCollect()
		return nil
	}
	pos := make([]int64, width+1)
	for _, bl := range c.blocks {
		for _, k := range bl.rows {
			pos[k+1]++
		}
	}
	for k := int64(1); k <= width; k++ {
		pos[k] += pos[k-1]
	}
	b.x.coll = nil
	nestSaw("collected rows")
	// The blocks are copied out: kept for later copies.
	defer c.release()
	if b.spec.kid.real {
		keys, reals, clean := layCollected[float64](c, pos)
		return compactRows(pos, keys, nil, reals, true, clean)
	}
	keys, ints, clean := layCollected[int64](c, pos)
	return compactRows(pos, keys, ints, nil, false, clean)
}

// layCollected lays out c's entries as rows by counting (row k at
// pos[k]:pos[k+1], the rows' sizes counted into pos already), each row
// sorted by key, and reports whether the rows are clean: no row repeats
// a key and no value is zero, so that compaction has nothing to change.
// Every entry is written, so the arrays are not zeroed first.
func layCollected[V int64 | float64](c *collected, pos []int64) (keys []int64, vals []V, clean bool) {
	width := len(pos) - 1
	next := unzeroedRow[int64](width)
	copy(next, pos[:width])
	keys, vals = unzeroedRow[int64](int(c.n)), unzeroedRow[V](int(c.n))
	nonZero := 0
	for i := range c.blocks {
		bl := &c.blocks[i]
		bv := *blockVals[V](bl)
		bk := bl.keys[:len(bl.rows)]
		bv = bv[:len(bl.rows)]
		for q, k := range bl.rows {
			w := next[k]
			next[k]++
			keys[w], vals[w] = bk[q], bv[q]
		}
		nonZero += countNonZeros(bv)
	}
	clean = nonZero == len(vals)
	for k := range width {
		if !increasing(keys, pos[k], pos[k+1]) {
			sortRow(keys[pos[k]:pos[k+1]], vals[pos[k]:pos[k+1]])
			clean = false
		}
	}
	return keys, vals, clean
}

// countNonZeros is the number of non-zero values of v (-0 is zero).
func countNonZeros[V int64 | float64](v []V) int {
	if r, ok := any(v).([]float64); ok {
		return nonZeros(r)
	}
	return nonZeroInts(any(v).([]int64))
}

// sortRow sorts a row's entries by key, stably: entries at one key keep
// the order they were added in.
func sortRow[V int64 | float64](keys []int64, vals []V) {
	if slices.IsSorted(keys) {
		return
	}
	type entry struct {
		k int64
		v V
	}
	es := make([]entry, len(keys))
	for q, k := range keys {
		es[q] = entry{k, vals[q]}
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	for q, e := range es {
		keys[q], vals[q] = e.k, e.v
	}
}

// laidCSR is a built dictionary of rows laid out one after another:
// row k's keys are idx[pos[k]:pos[k+1]] (empty: no row k), its values
// alongside; leaves are the rows, one listLeaf each, made on the first
// read of one (rowAt: the leaf of key k, -1 for none).
type laidCSR struct {
	noScalars
	pos, idx []int64
	ints     []int64
	reals    []float64
	real     bool
	keys     []int64
	rowAt    []int32
	once     sync.Once
	leaves   []listLeaf
}

// compactRows adds the neighbours at one key of each row and drops the
// zeros, in place; clean says there are none of either (layCollected),
// and the rows stay where they are.
func compactRows(pos, keys, ints []int64, reals []float64, real, clean bool) *laidCSR {
	width := len(pos) - 1
	d := &laidCSR{real: real, rowAt: make([]int32, width)}
	if clean {
		nestSaw("collected rows in place")
		for k := range width {
			d.rowAt[k] = -1
			if pos[k+1] > pos[k] {
				d.rowAt[k] = int32(len(d.keys))
				d.keys = append(d.keys, int64(k))
			}
		}
		d.pos, d.idx, d.ints, d.reals = pos, keys, ints, reals
		return d
	}
	w := 0
	for k := 0; k < width; k++ {
		start := w
		for at := pos[k]; at < pos[k+1]; at++ {
			if w > start && keys[w-1] == keys[at] {
				if real {
					reals[w-1] += reals[at]
				} else {
					ints[w-1] += ints[at]
				}
				continue
			}
			// The entry before is complete: drop it if it is zero.
			if w > start && isZeroAt(ints, reals, w-1, real) {
				w--
			}
			keys[w] = keys[at]
			if real {
				reals[w] = reals[at]
			} else {
				ints[w] = ints[at]
			}
			w++
		}
		if w > start && isZeroAt(ints, reals, w-1, real) {
			w--
		}
		pos[k] = int64(start)
		d.rowAt[k] = -1
		if w > start {
			d.rowAt[k] = int32(len(d.keys))
			d.keys = append(d.keys, int64(k))
		}
	}
	pos[width] = int64(w)
	d.pos, d.idx = pos, keys[:w]
	if real {
		d.reals = reals[:w]
	} else {
		d.ints = ints[:w]
	}
	return d
}

// rows makes the leaves of d's rows on the first read of one (the rows
// scatter reads the arrays and never makes them).
func (d *laidCSR) rows() []listLeaf {
	d.once.Do(d.makeLeaves)
	return d.leaves
}

func (d *laidCSR) makeLeaves() {
	d.leaves = make([]listLeaf, len(d.keys))
	for r, k := range d.keys {
		s, t := d.pos[k], d.pos[k+1]
		l := &d.leaves[r]
		l.keys, l.real = d.idx[s:t], d.real
		if d.real {
			l.reals = d.reals[s:t]
		} else {
			l.ints = d.ints[s:t]
		}
		// Its values are non-zero already: no compaction on first use,
		// which would write into the shared arrays.
		l.once.Do(func() {})
	}
}

// isZeroAt reports whether entry w is zero (-0 included), as the builder
// drops it.
func isZeroAt(ints []int64, reals []float64, w int, real bool) bool {
	if real {
		return math.Abs(reals[w]) == 0
	}
	return ints[w] == 0
}

func (d *laidCSR) size() int         { return len(d.keys) }
func (d *laidCSR) keyAt(p int) int64 { return d.keys[p] }
func (d *laidCSR) dictAt(p int) dict { return &d.rows()[p] }
func (d *laidCSR) getDict(k int64) dict {
	if uint64(k) < uint64(len(d.rowAt)) {
		if r := d.rowAt[k]; r >= 0 {
			return &d.rows()[r]
		}
	}
	return empty
}

// csr returns the rows as the rows scatter reads them, without a copy.
func (d *laidCSR) csr(real bool) *builtCSR {
	if d.real != real {
		return nil
	}
	return &builtCSR{pos: d.pos, idx: d.idx, vals: d.reals, ints: d.ints}
}
