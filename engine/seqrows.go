package engine

import (
	"math"
	"slices"
	"sort"
)

// Rows that arrive in order. The result of MTTKRP, TTM or MMM is a dense
// level of rows of scalars, and the plan usually walks the outer keys in
// increasing order, each once (the first level of a CSF tensor, the rows
// of a CSR matrix): row i is complete before row i+1 starts. The general
// builder gives every row a builder of its own (128 bytes out of the
// tree's slab, 7 pointers for the collector to scan, a kid in the level's
// slice, a dictionary when frozen) so that any row can be reopened later.
// When rows are small (MTTKRP's result can have a hundred thousand rows
// of one or two entries) that is most of what a row costs.
//
// So the builder of a whole dictionary of depth 2 whose rows are dense
// leaves starts in sequential mode (seqRows): one builder, reused, takes
// each row in turn through the level's workspace as usual, and a closed
// row stays where the workspace compacted it, a sorted list carved from
// the level's blocks (a row at least half full, compacted to a dense
// slice from key 0, is moved next to the lists). Consecutive rows of a
// block make a chunk; a row is recorded by its key and where it ends in
// its chunk: no builder and no pointer per row, and an empty row costs
// nothing. A chunk of dense rows all of one width (TTM's fibers, each a
// row of B's k) records its width once, and its rows their keys alone.
// The first key out of order, keys that do not fit a list of
// 4-byte keys, a streak of long dense rows (see workspace.streak: the
// rows skip the workspace then), or any access other than adding into
// the row at a key (addDict, merge) ends the mode for good: the rows so
// far become closed builders over the same storage and the dictionary
// goes on the general way. So the mode changes what a row costs, never
// the entries, their order or the bytes they take.

// seqRows holds the closed rows of a dictionary in sequential mode, and
// the builder of the open one.
type seqRows struct {
	w    *workspace // the rows' level
	cur  *builder   // the row being built, reused from row to row
	key  int64      // the greatest key given a row so far (-1: none)
	live bool       // cur holds row key, not yet recorded
	keys []int64    // keys of the closed non-empty rows, increasing
	// The records of the rows of chunks of no width: row r, of chunk c,
	// has values ending at vEnds[i] in its chunk's reals or ints and
	// list keys at cEnds[i] in the chunk's cols, i = c.rec + r -
	// c.first; a row with values but no list keys is dense (its values
	// are at keys 0, 1, ...). A row starts where the one before ends,
	// or at 0 if it is its chunk's first.
	vEnds  []int32
	cEnds  []int32
	chunks []seqChunk
	// outer: the rows are the rows of rows of a dictionary of depth 3
	// (see seqOuter), nil for one of depth 2.
	outer *seqOuter
}

// seqChunk is a block of rows in sequential mode.
type seqChunk struct {
	first int // the index of its first row
	// width: each row is dense, width values from key 0, and has no
	// record; 0: the rows are recorded from vEnds[rec], cEnds[rec] on.
	width int
	rec   int
	cols  []int32
	reals []float64
	ints  []int64
}

// seqShortRow: a streak of dense rows shorter than this does not end
// sequential mode: what skipping the workspace saves on so few keys is
// less than what a builder per row costs.
const seqShortRow = 32

// startsSequential reports whether a new builder of spec s starts in
// sequential mode: a dense level of dense rows of scalars, or a dense
// level of those (seqOuter).
func startsSequential(s *bspec) bool {
	switch s.depth {
	case 2:
		return s.dense && s.kid.dense
	case 3:
		return s.dense && s.kid.dense && s.kid.kid.dense
	}
	return false
}

// newSeqRows returns empty sequential rows of spec row, built in the
// level's workspace of tree t.
func newSeqRows(t *tree, row *bspec) *seqRows {
	s := &seqRows{w: t.workspace(1), key: -1}
	s.cur = t.alloc()
	s.cur.spec, s.cur.ws, s.cur.listed = row, s.w, true
	return s
}

// seqRow returns the open row at key k of b in sequential mode, starting
// the mode on b's first row, or nil when k is out of order or the mode
// cannot go on (b then has left it). For a dictionary of depth 3, the
// row is the open dictionary of rows (seqOuter.mid).
func (b *builder) seqRow(k int64) *builder {
	if b.spec.depth == 3 {
		return b.seqMid(k)
	}
	x := b.x
	s := x.seq
	if s == nil {
		x.sequential = false
		if k < 0 {
			return nil
		}
		s = newSeqRows(x.tree, b.spec.kid)
		x.seq = s
	}
	switch {
	case s.live && k == s.key:
		if s.cur.app {
			return s.cur
		}
	case k > s.key && s.live && s.cur.untouched():
		// The open row is empty (most rows of a sparse MTTKRP result):
		// closing it records nothing, so it stays open as row k.
		s.key = k
		return s.cur
	case k > s.key && s.closeRow():
		s.key, s.live = k, true
		if s.cur.ws == s.w && s.cur.spec.depth == 1 {
			s.cur.startAppend() // appendrow.go
			return s.cur
		}
	default:
		b.leaveSequential()
		return nil
	}
	s.cur.acquire()
	return s.cur
}

// untouched reports whether b is a leaf open in its workspace with no
// entry yet: no key listed as written, no scatter loop's keys marked or
// left for a sweep, none in a spill map (an open builder's list has
// been moved into the workspace).
func (b *builder) untouched() bool {
	if b.app {
		return b.ws.appended == 0
	}
	w := b.ws
	return b.open && w != nil && w.owner == b && b.spec.depth == 1 && len(w.touched) == 0 && !w.marking && !w.sweep &&
		(b.x == nil || len(b.x.mreal)+len(b.x.mint) == 0)
}

// closeRow records the open row, if any, at the end of the chunks and
// empties cur. It reports false, leaving the row in cur, when the row
// cannot be kept there.
func (s *seqRows) closeRow() bool {
	if !s.live {
		return true
	}
	c := s.cur
	if c.app {
		s.closeAppended()
		s.live = false
		return true
	}
	if c.open {
		c.release()
	}
	var ok bool
	if c.spec.real {
		ok = closeSeqRow(s, c, chunkReals, &c.reals, &s.w.realBlock, &s.w.denseReals, c.x != nil && len(c.x.mreal) > 0)
	} else {
		ok = closeSeqRow(s, c, chunkInts, &c.ints, &s.w.intBlock, &s.w.denseInts, c.x != nil && len(c.x.mint) > 0)
	}
	if ok {
		s.live = false
	}
	return ok
}

func chunkReals(c *seqChunk) *[]float64 { return &c.reals }
func chunkInts(c *seqChunk) *[]int64    { return &c.ints }

// closeSeqRow is closeRow for values of type V, a chunk's values given
// by vals; own is the row's values, carved from block if a list, from
// dense if a dense row; spilled says whether the row has keys outside
// its dense slice.
func closeSeqRow[V int64 | float64](s *seqRows, c *builder, vals func(*seqChunk) *[]V, own, block, dense *[]V, spilled bool) bool {
	n := len(*own)
	if n > math.MaxInt32 {
		return false
	}
	w := s.w
	switch {
	case c.ws != nil && c.lkeys != nil:
		return false
	case c.ws != nil:
		// A list, carved from the level's blocks as it should stay.
		if n > 0 {
			store(s, vals, carved(*block, *own), carved(w.keyBlock, c.nkeys))
		}
	case spilled || (w.streak && n >= seqShortRow):
		return false
	default:
		// Dense (a slice of its own from key 0), rows shorter than a
		// streak needs: moved next to the lists, where a chunk is.
		w.streak = false
		if nonZeroCount(*own) > 0 {
			if n > maxBlock/4 {
				store(s, vals, *own, nil)
			} else {
				_, room := carve(&w.keyBlock, block, n, w.carved, w.out)
				copy(room, *own)
				uncarveDense(dense, &w.carvedDense, *own)
				*block = (*block)[:len(*block)+n]
				w.carved += n
				store(s, vals, carved(*block, room), nil)
			}
		}
		c.ws, c.listed = w, true
	}
	c.nkeys, *own = nil, nil
	return true
}

// carved returns row, just carved at the end of block, with block's
// capacity behind it, or row itself if it is not there (a row too long
// for the blocks has storage of its own).
func carved[T any](block, row []T) []T {
	if !atEnd(block, row) {
		return row
	}
	return block[len(block)-len(row):]
}

// atEnd reports whether row, not empty, is the end of block.
func atEnd[T any](block, row []T) bool {
	n := len(row)
	return n > 0 && len(block) >= n && &block[len(block)-n] == &row[0]
}

// follows reports whether next starts where s ends, in the same array.
func follows[T any](s, next []T) bool {
	rest := s[len(s):cap(s)]
	return len(next) > 0 && len(rest) >= len(next) && &rest[0] == &next[0]
}

// store records a row at s.key: its values own and, for a list, its keys
// cols (nil: dense). Both are where the row is to stay; when they follow
// the last chunk's in its arrays, they extend the chunk, else they start
// a new one, of the row's width if the row is dense.
func store[V int64 | float64](s *seqRows, vals func(*seqChunk) *[]V, own []V, cols []int32) {
	n := len(own)
	var ch *seqChunk
	if k := len(s.chunks); k > 0 {
		ch = &s.chunks[k-1]
		if !follows(*vals(ch), own) || (cols != nil && ch.cols != nil && !follows(ch.cols, cols)) {
			ch = nil
		}
	}
	if ch == nil {
		c := seqChunk{first: len(s.keys), rec: len(s.vEnds)}
		if cols == nil {
			c.width = n
		}
		s.chunks = append(s.chunks, c)
		ch = &s.chunks[len(s.chunks)-1]
		*vals(ch) = own[:0]
	}
	v := vals(ch)
	*v = (*v)[:len(*v)+n]
	if cols != nil {
		if ch.cols == nil {
			ch.cols = cols[:0]
		}
		ch.cols = ch.cols[:len(ch.cols)+n]
	}
	s.recordRows(ch, len(*v)-n, n, 1)
	push(&s.keys, s.key)
}

// recordRows records the m rows of n values just added to ch, the last
// chunk, after its first from values (their keys are the caller's to
// push): nothing but the rows' count in a chunk of their width. Rows of
// another shape end the chunk's width: its rows so far are recorded one
// by one, once.
func (s *seqRows) recordRows(ch *seqChunk, from, n, m int) {
	if ch.width > 0 {
		if n == ch.width && len(ch.cols) == 0 {
			return
		}
		ch.rec = len(s.vEnds)
		rows := from / ch.width
		vEnds, cEnds := extend(&s.vEnds, rows), extend(&s.cEnds, rows)
		for i := range vEnds {
			vEnds[i] = int32((i + 1) * ch.width)
		}
		clear(cEnds)
		ch.width = 0
	}
	c := int32(len(ch.cols))
	if m == 1 {
		push(&s.vEnds, int32(from+n))
		push(&s.cEnds, c)
		return
	}
	// One record at a time, loop by loop: three slices indexed
	// together in one loop kept their bounds checks and cost a tenth of
	// the rows' time.
	vEnds, cEnds := extend(&s.vEnds, m), extend(&s.cEnds, m)
	for i := range vEnds {
		vEnds[i] = int32(from + (i+1)*n)
	}
	for i := range cEnds {
		cEnds[i] = c
	}
}

// push appends v to *s, doubling *s when full: append grows a long slice
// by a quarter, which copies a level of many short rows (TTM's fibers)
// its records about five times over; doubling, about twice. With room,
// only the length changes: no pointer is written (a write barrier per
// row while the collector marks).
func push[T any](s *[]T, v T) {
	if len(*s) == cap(*s) {
		*s = slices.Grow(*s, max(len(*s), 16))
	}
	n := len(*s)
	*s = (*s)[:n+1]
	(*s)[n] = v
}

// extend lengthens *s by m entries, growing it as push does, and
// returns them.
func extend[T any](s *[]T, m int) []T {
	n := len(*s)
	if cap(*s)-n < m {
		*s = slices.Grow(*s, max(n, 16, m))
	}
	*s = (*s)[:n+m]
	return (*s)[n:]
}

// nonZeroCount counts the non-zero values of s.
func nonZeroCount[V int64 | float64](s []V) int {
	switch x := any(s).(type) {
	case []float64:
		return nonZeros(x)
	case []int64:
		return nonZeroInts(x)
	}
	return 0
}

// uncarveDense gives back to block the dense slice own, the last carved
// from it (see carveDense), once it has been copied elsewhere.
func uncarveDense[V any](block *[]V, carved *int, own []V) {
	if !atEnd(*block, own) {
		return
	}
	clear(own) // carveDense gives zeroed slices
	*block = (*block)[:len(*block)-len(own)]
	*carved -= len(own)
}

// chunkOf returns the index of row r's chunk.
func (s *seqRows) chunkOf(r int) int {
	return sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].first > r }) - 1
}

// chunkFrom returns the index of row r's chunk, ci or a later one: rows
// visited in order find theirs without a search.
func (s *seqRows) chunkFrom(r, ci int) int {
	for ci+1 < len(s.chunks) && s.chunks[ci+1].first <= r {
		ci++
	}
	return ci
}

// span returns where row r, of chunk ci, starts and ends in the chunk's
// values (v0, v1) and list keys (c0, c1).
func (s *seqRows) span(r, ci int) (v0, v1, c0, c1 int) {
	ch := &s.chunks[ci]
	if w := ch.width; w > 0 {
		v0 = (r - ch.first) * w
		return v0, v0 + w, 0, 0
	}
	i := ch.rec + r - ch.first
	if r > ch.first {
		v0, c0 = int(s.vEnds[i-1]), int(s.cEnds[i-1])
	}
	return v0, int(s.vEnds[i]), c0, int(s.cEnds[i])
}

// fill makes nb, an empty builder of the rows' spec, row r of chunk ci:
// a closed list of the workspace ws, or a plain dense leaf.
func (s *seqRows) fill(nb *builder, r, ci int, ws *workspace) {
	v0, v1, c0, c1 := s.span(r, ci)
	ch := &s.chunks[ci]
	if nb.spec.real {
		nb.reals = ch.reals[v0:v1:v1]
	} else {
		nb.ints = ch.ints[v0:v1:v1]
	}
	if c1 > c0 {
		nb.nkeys, nb.ws, nb.listed = ch.cols[c0:c1:c1], ws, true
	}
}

// leaveSequential ends b's sequential mode: every closed row becomes a
// closed builder of the level (sharing the chunks, which are not
// written again), the open row keeps its builder, and b is an ordinary
// dense builder from then on.
func (b *builder) leaveSequential() {
	x := b.x
	if x.coll != nil {
		b.leaveCollect()
		return
	}
	s := x.seq
	if s != nil && s.outer != nil {
		s.outer.leave()
		return
	}
	x.seq, x.sequential = nil, false
	if s == nil {
		return
	}
	ci := 0
	for r, k := range s.keys {
		b.slot(k).b = s.closedRow(x.tree, r, &ci)
	}
	if s.live {
		s.cur.settle()
		b.slot(s.key).b = s.cur
	}
}

// closedRow returns a closed builder, of tree t, of row r (of chunk *ci
// or a later one, which *ci becomes: see chunkFrom), sharing its storage.
func (s *seqRows) closedRow(t *tree, r int, ci *int) *builder {
	*ci = s.chunkFrom(r, *ci)
	nb := t.alloc()
	nb.spec = s.cur.spec
	s.fill(nb, r, *ci, s.w)
	return nb
}

// finishSequential closes the last row of b in sequential mode, and
// reports whether b is still in it.
func (b *builder) finishSequential() bool {
	s := b.x.seq
	if s == nil {
		return false
	}
	if o := s.outer; o != nil {
		if !o.closeMid() {
			o.leave()
			return false
		}
		return true
	}
	if !s.closeRow() {
		b.leaveSequential()
		return false
	}
	return true
}

// appendSequential moves the rows of o, in sequential mode like b and with
// every key greater than b's, after b's, and reports whether it could.
func (b *builder) appendSequential(o *builder) bool {
	if o.x == nil || b.x == nil || !b.finishSequential() || !o.finishSequential() {
		return false
	}
	s, os := b.x.seq, o.x.seq
	if s.outer != nil {
		return s.outer.append(os.outer)
	}
	if len(os.keys) > 0 && os.keys[0] <= s.key {
		return false
	}
	s.appendRows(os)
	s.key = max(s.key, os.key)
	return true
}

// appendRows moves the closed rows of o after s's and returns the index
// of o's first row in s.
func (s *seqRows) appendRows(o *seqRows) int {
	off, rec := len(s.keys), len(s.vEnds)
	s.keys = append(s.keys, o.keys...)
	s.vEnds = append(s.vEnds, o.vEnds...)
	s.cEnds = append(s.cEnds, o.cEnds...)
	for _, c := range o.chunks {
		c.first += off
		c.rec += rec
		s.chunks = append(s.chunks, c)
	}
	return off
}

// seqNode is a dictionary built in sequential mode, frozen: its rows in
// chunks, rows lo to hi-1 of rows (all of them for a dictionary of depth
// 2; those of one key for one of depth 3).
type seqNode struct {
	spec   *bspec // the rows' spec
	rows   *seqRows
	lo, hi int
}

// freeze returns the frozen dictionary of spec, built in sequential mode.
func (s *seqRows) freeze(spec *bspec) dict {
	if o := s.outer; o != nil {
		return &seqOuterNode{spec: spec.kid.kid, rows: s, keys: o.keys, ends: o.ends}
	}
	return &seqNode{spec: spec.kid, rows: s, hi: len(s.keys)}
}

// row returns row p: a closed list row of a workspace level (whose
// values are all non-zero) or a dense leaf.
func (d *seqNode) row(p int) dict {
	r := &builder{spec: d.spec}
	p += d.lo
	d.rows.fill(r, p, d.rows.chunkOf(p), nil)
	if r.nkeys != nil {
		return (*rowLeaf)(r)
	}
	return &denseLeaf{reals: r.reals, ints: r.ints, real: d.spec.real}
}

func (d *seqNode) keys() []int64                 { return d.rows.keys[d.lo:d.hi] }
func (d *seqNode) size() int                     { return d.hi - d.lo }
func (d *seqNode) keyAt(p int) int64             { return d.rows.keys[d.lo+p] }
func (d *seqNode) intAt(int) int64               { return 0 }
func (d *seqNode) realAt(int) float64            { return 0 }
func (d *seqNode) dictAt(p int) dict             { return d.row(p) }
func (d *seqNode) getInt(int64) (int64, bool)    { return 0, true }
func (d *seqNode) getReal(int64) (float64, bool) { return 0, true }
func (d *seqNode) getDict(k int64) dict {
	if p, ok := slices.BinarySearch(d.keys(), k); ok {
		return d.row(p)
	}
	return empty
}

// entries calls visit for every non-zero entry of d, row by row, with
// the row's key in coords[level] and the entry's in coords[level+1] (see
// Result.Entries).
func (d *seqNode) entries(coords []int64, level int, visit func(coords []int64, i int64, f float64)) {
	s := d.rows
	ci := s.chunkOf(d.lo)
	for r := d.lo; r < d.hi; r++ {
		k := s.keys[r]
		ci = s.chunkFrom(r, ci)
		ch := &s.chunks[ci]
		v0, v1, c0, c1 := s.span(r, ci)
		coords[level] = k
		for q := v0; q < v1; q++ {
			key := int64(q - v0)
			if c1 > c0 {
				key = int64(ch.cols[c0+q-v0])
			}
			coords[level+1] = key
			if d.spec.real {
				if v := ch.reals[q]; v != 0 {
					visit(coords, int64(v), v)
				}
			} else if v := ch.ints[q]; v != 0 {
				visit(coords, v, float64(v))
			}
		}
	}
}
