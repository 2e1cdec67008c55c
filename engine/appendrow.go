package engine

import (
	"slices"
	"sort"
)

// Rows appended in key order. A sequential row (seqrows.go) whose
// entries arrive in increasing key order, as they do when the loop that
// fills it walks a sorted segment (the j of TTV's (i, j) fibers, the
// pattern of SDDMM's S, the columns of a CSR row), needs none of the
// workspace: writing each value at its key, listing the key, then at
// close finding the keys' range, gathering the values back and zeroing
// the slice costs several passes over a row that could be written once
// where it is to stay. So a new sequential row starts appending: its
// entries go, in order, to the free end of the level's blocks (keys of 4
// bytes and values, where compaction would have carved the row's list),
// and closing the row keeps them there, zeros dropped: the list (or, at
// least half full, the dense slice spread in place) that compaction
// would have made, the same bytes and the same entries. A repeated key
// adds into the last entry (only then can an entry be zero at close). A
// row that outgrows the blocks' room moves to new blocks, unless it has
// more than maxBlock/4 entries (then it settles: compaction gives such a
// row storage of its own). A loop that hands over its rows a block at a
// time (appendRows: TTV's fibers in position space, of many iterations
// i) skips the builder's per-key dispatch, and writes each row whole in
// the block where it stays and records it closed, no row opened and
// closed in turn.
//
// The row's slice is empty while it appends, so every write into it
// goes through addRealSlow or addIntSlow (dense levels check the key
// against the slice's length first), which append while keys increase.
// The first key out of order, one that a 4-byte list key cannot hold, a
// row longer than maxBlock/4 entries, or any access other than adding at a key (settle: the scatter loops that
// write the slice directly, growing it, absorbing or merging a
// dictionary, reopening it through acquire) moves the row into the
// workspace, where it goes on the general way.

// startAppend makes b, the empty open row of a sequential dictionary
// (workspace mode, not acquired), an appending row.
func (b *builder) startAppend() {
	b.app, b.open, b.listed = true, false, false
	// Most rows start with these nil already: a pointer written, even
	// nil, costs a write barrier per row while the collector marks.
	if b.reals != nil || b.ints != nil || b.lkeys != nil || b.nkeys != nil {
		b.reals, b.ints, b.lkeys, b.nkeys = nil, nil, nil, nil
	}
	b.ws.appended, b.ws.summed = 0, false
}

// appendedRow returns the entries of w's appending row: keys and values
// past the ends of the level's blocks.
func appendedRow[V int64 | float64](w *workspace, block []V) ([]int32, []V) {
	n := w.appended
	kb := w.keyBlock[len(w.keyBlock):cap(w.keyBlock)]
	return kb[:n], block[len(block):cap(block)][:n]
}

// settle moves an appending row b into its workspace, open there with
// its entries; it does nothing to any other builder.
func (b *builder) settle() {
	if !b.app {
		return
	}
	b.app = false
	w := b.ws
	if b.spec.real {
		settleRow(b, w, w.realBlock)
	} else {
		settleRow(b, w, w.intBlock)
	}
}

// settleRow is settle for values of type V in block.
func settleRow[V int64 | float64](b *builder, w *workspace, block []V) {
	keys, vals := appendedRow(w, block)
	w.appended, w.summed = 0, false
	if w.owner != nil {
		// Compacting the owner carves where the entries are.
		keys, vals = slices.Clone(keys), slices.Clone(vals)
	}
	b.acquire()
	addList(b, keys, vals)
}

// room is how many more entries the appending row of w has room for at
// the end of its blocks.
func room[V int64 | float64](w *workspace, block []V) int {
	return min(cap(w.keyBlock)-len(w.keyBlock), cap(block)-len(block)) - w.appended
}

// growAppend moves the appending row of w to a new value block (and key
// block, where the key block's room is short) with room for need
// entries in all (those it has included), and reports whether it
// could: a row of more than maxBlock/4 entries gets none (it settles, as
// compaction would give it storage of its own).
func growAppend[V int64 | float64](w *workspace, block *[]V, need int) bool {
	n := w.appended
	if n+1 > maxBlock/4 {
		return false
	}
	keys, vals := appendedRow(w, *block)
	size := blockSize(need, w.carved)
	if cap(w.keyBlock)-len(w.keyBlock) < need {
		// Else it stays: rows closed dense take no key from it (MTTKRP's
		// rows of rank R would make and zero half as many bytes of keys
		// again as of values).
		kb := newBlock[int32](size, w.out)
		copy(kb[:n], keys)
		w.keyBlock = kb
	}
	vb := newBlock[V](size, w.out)
	copy(vb[:n], vals)
	*block = vb
	return true
}

// appendRows adds rows into b, a dictionary of rows in sequential mode:
// row c, at key key(c), takes the values vals[r0-lo : r1-lo] at the
// aligned keys, where r0..r1 is ends[c]..ends[c+1] within lo..hi; the
// rows are those from c0 on that start before hi. A row whole within
// lo..hi is written where it stays, after the row before, in one pass of
// its entries, and recorded as closed at once: no row is opened,
// appended to and closed in turn through the builder. A row's part (the
// first row begun before lo, the last going on past hi), a row that
// cannot be kept so (keys out of order: it settles in the workspace),
// and the first row of all (at ends[0]) go into the open row, appended
// to there; the rows' records are sized once for all the rows, and the
// room for their entries is made before the first is written (freeRoom),
// not grown row after row. It returns the row it stopped at: before a
// row whose key does not follow the rows so far (that row is left for
// the general way), or at once when b is not appending rows of reals.
//
// nkeys, where not nil, are keys as int32s, aligned with them, that
// storage knows to increase within every row and to lie in 0..
// narrowKeyLimit (keptKeys): whole rows are then kept a run of rows at
// a time, their keys copied as they are and not read.
func (b *builder) appendRows(ends []int64, c0 int, lo, hi int64, keys []int64, nkeys []int32, vals []float64, ukeys []int64, key func(c int) int64) int {
	x := b.x
	if x == nil || !x.sequential && x.seq == nil || x.seq != nil && x.seq.outer != nil || b.spec.depth != 2 || !b.spec.kid.real {
		return c0
	}
	block := false
	defer func() {
		if block {
			nestSaw("rows appended as a block")
		}
	}()
	c := c0
	for ; c+1 < len(ends) && ends[c] < hi; c++ {
		r0, r1 := max(ends[c], lo), min(ends[c+1], hi)
		if r0 >= r1 {
			continue // no entries: no row
		}
		if s := x.seq; s != nil && r0 == ends[c] && r0 != ends[0] {
			if n := s.keepRows(ends, c, lo, hi, keys, nkeys, vals, ukeys, key); n > c {
				block, c = true, n-1
				continue
			}
		}
		k := rowKey(ukeys, key, c)
		rk, rv := keys[r0-lo:r1-lo], vals[r0-lo:r1-lo]
		if s := x.seq; s != nil && k < s.key {
			return c
		}
		cur := b.seqRow(k)
		if cur == nil {
			return c
		}
		if s, last := x.seq, len(ends)-1; r0 == ends[0] && s != nil && s.outer == nil && s.cur.app {
			// The first row's room is made before it is written (a new
			// block sized for all the rows where it does not fit): made
			// after, for the rest, it replaced the block that row had
			// just been given.
			s.keys, s.vEnds, s.cEnds = slices.Grow(s.keys, last-1-c), slices.Grow(s.vEnds, last-1-c), slices.Grow(s.cEnds, last-1-c)
			n := s.w.appended
			s.freeRoom(n+int(ends[last]-r0), n+int(r1-r0))
		}
		addReals(cur, rk, rv)
	}
	return c
}

// rowKey is the key of row c: ukeys[c] where the keys are at hand, else
// key(c).
func rowKey(ukeys []int64, key func(c int) int64, c int) int64 {
	if ukeys != nil {
		return ukeys[c]
	}
	return key(c)
}

// keepRows records the whole rows c, c+1, ... of appendRows' block (row
// c' at key key(c'), its entries keys and vals from ends[c']-lo to
// ends[c'+1]-lo), each closed where it is written in the level's blocks,
// and returns the row it stopped at: the first that is not whole within
// lo..hi, or whose key does not follow or keys do not increase or fit a
// 4-byte list key (the builder then takes it). A row half full or more
// is closed the way an appended row is (a dense slice from key 0); a
// list is kept where it was written. The rows fill the room the blocks
// have (freeRoom), and a list after a list extends the chunk its
// predecessor is in: a row costs its entries' copy and its record (TTV's
// rows are 14 entries on average, of 1 or 2 per fiber). With nkeys
// (appendRows), the rows' entries are copied ahead a run of rows at a
// time (copyAhead), not row by row, and no key is read but each row's
// last.
func (s *seqRows) keepRows(ends []int64, c int, lo, hi int64, keys []int64, nkeys []int32, vals []float64, ukeys []int64, key func(c int) int64) int {
	w := s.w
	if cur := s.cur; cur.ws != w || cur.spec.depth != 1 || s.live && !cur.app || !s.closeRow() {
		return c
	}
	last := c
	for last+1 < len(ends) && ends[last+1] <= hi {
		last++
	}
	if last == c || ends[c] < lo {
		return c
	}
	// The rows' records are sized once; the blocks' and the chunk's
	// lengths are brought up to date where the next step reads them
	// (sync), not row by row.
	s.keys, s.vEnds, s.cEnds = slices.Grow(s.keys, last-c), slices.Grow(s.vEnds, last-c), slices.Grow(s.cEnds, last-c)
	kb, vb := s.freeRoom(int(ends[last]-ends[c]), int(ends[c+1]-ends[c]))
	var ch *seqChunk  // the chunk the lists since kb's start extend
	n, pend := 0, 0   // entries written from kb's start; of those, not yet in the blocks' lengths
	ahead := int64(0) // rows ending by here (from lo) are at kb[n:] and vb[n:] already, none with a zero
	for ; c < last; c++ {
		r0, r1 := ends[c]-lo, ends[c+1]-lo
		if r0 == r1 {
			continue // no entries: no row
		}
		rk, rv := keys[r0:r1], vals[r0:r1]
		k := rowKey(ukeys, key, c)
		if k <= s.key || nkeys == nil && rk[len(rk)-1] > narrowKeyLimit {
			break
		}
		if len(rk) > min(len(kb), len(vb))-n {
			s.sync(ch, pend)
			kb, vb = s.freeRoom(int(ends[last]-ends[c]), len(rk))
			ch, n, pend, ahead = nil, 0, 0, 0
		}
		if nkeys != nil && r1 > ahead {
			ahead = copyAhead(kb[n:], vb[n:], nkeys, vals, ends[c:last+1], lo)
		}
		m, ok := int(r1-r0), true
		if r1 > ahead {
			m, ok = appendIncreasingReals(kb[n:], vb[n:], rk, rv, -1)
		}
		if !ok {
			break
		}
		s.key = k
		if m == 0 {
			continue // zeros only: no entry
		}
		if int(kb[n+m-1])+1 <= denseLeafFactor*m {
			// Half full or more: the row, at the blocks' free end, is
			// closed as an appended row (spread in place).
			s.sync(ch, pend)
			s.live = true
			s.cur.startAppend()
			w.appended = m
			s.closeAppended()
			s.live = false
			kb, vb = s.freeRoom(int(ends[last]-ends[c+1]), 0)
			ch, n, pend, ahead = nil, 0, 0, 0
			continue
		}
		n += m
		if ch == nil {
			w.keyBlock, w.realBlock = w.keyBlock[:len(w.keyBlock)+m], w.realBlock[:len(w.realBlock)+m]
			w.carved += m
			store(s, chunkReals, carved(w.realBlock, vb[n-m:n]), carved(w.keyBlock, kb[n-m:n]))
			ch = &s.chunks[len(s.chunks)-1]
			continue
		}
		pend += m
		push(&s.keys, k)
		push(&s.vEnds, int32(len(ch.reals)+pend))
		push(&s.cEnds, int32(len(ch.cols)+pend))
	}
	s.sync(ch, pend)
	return c
}

// copyAhead copies the entries of the rows that ends bounds (positions
// from lo; nkeys and vals indexed from lo), from the first row on, to kb
// and vb: as many whole rows as they have room for, up to the first row
// half full or more (closed dense, in place, by keepRows) or with a zero
// value (a zero at a new key is no entry: that row goes the way of
// appendIncreasing). Each entry is so copied once at most. It returns
// where the rows it copied end, from lo; ends[0]-lo when none.
func copyAhead(kb []int32, vb []float64, nkeys []int32, vals []float64, ends []int64, lo int64) int64 {
	r0 := ends[0] - lo
	room := int64(min(len(kb), len(vb)))
	e := 0
	for ; e+1 < len(ends); e++ {
		a, b := ends[e]-lo, ends[e+1]-lo
		if b-r0 > room || b > a && int64(nkeys[b-1])+1 <= denseLeafFactor*(b-a) {
			break
		}
	}
	// The last row end before the first zero.
	if z := r0 + int64(copyNonzero(vb[:ends[e]-lo-r0], vals[r0:ends[e]-lo])); z < ends[e]-lo {
		e = sort.Search(e, func(j int) bool { return ends[j]-lo > z }) - 1
	}
	end := ends[e] - lo
	if end > r0 {
		copy(kb[:end-r0], nkeys[r0:end])
		nestSaw("rows copied ahead")
	}
	return end
}

// copyNonzero copies src to dst up to its first zero and returns how
// many it copied.
func copyNonzero(dst, src []float64) int {
	dst = dst[:len(src)]
	for i, v := range src {
		if v == 0 {
			return i
		}
		dst[i] = v
	}
	return len(src)
}

// freeRoom makes room for next entries, the first row of need entries in
// all, at the free end of the level's blocks and returns the free ends.
// The rows fill what room the blocks have, the first that does not fit
// moving to a new block sized for it and the rest (keepRows): a new
// block whenever the room is short of all the rows would leave the end
// of the last one unused.
func (s *seqRows) freeRoom(need, next int) ([]int32, []float64) {
	w := s.w
	if room(w, w.realBlock) < next {
		growAppend(w, &w.realBlock, need)
	}
	return w.keyBlock[len(w.keyBlock):cap(w.keyBlock)], w.realBlock[len(w.realBlock):cap(w.realBlock)]
}

// sync adds the pend entries that keepRows wrote after those of the rows
// its chunk ch holds to the level's blocks and to ch.
func (s *seqRows) sync(ch *seqChunk, pend int) {
	if pend == 0 {
		return
	}
	w := s.w
	w.keyBlock, w.realBlock = w.keyBlock[:len(w.keyBlock)+pend], w.realBlock[:len(w.realBlock)+pend]
	w.carved += pend
	ch.reals, ch.cols = ch.reals[:len(ch.reals)+pend], ch.cols[:len(ch.cols)+pend]
	nestSaw("rows kept in one loop")
}

// appendVals adds vals at keys (aligned; nil: the run of keys lo,
// lo+1, ...) to the appending row b, whose values are in *block, in
// order, and returns how many it added: fewer than len(vals) when a key
// is out of order (b has then settled, the rest still to be added).
func appendVals[V int64 | float64](b *builder, block *[]V, lo int64, keys []int64, vals []V) int {
	w, limit := b.ws, narrowKeyLimit
	q := 0
	for q < len(vals) {
		ak, av := appendedRow(w, *block)
		last := int64(-1)
		if n := len(ak); n > 0 {
			last = int64(ak[n-1])
		}
		free := room(w, *block)
		ak, av = ak[:len(ak)+free], av[:len(av)+free]
		n := w.appended
		if k0 := lo + int64(q); keys == nil && k0 > last && lo+int64(len(vals))-1 <= limit && len(vals)-q <= len(ak)-n {
			// A run of keys that all follow and fit: no test per key.
			for _, v := range vals[q:] {
				if v != 0 { // a zero at a new key is no entry
					ak[n], av[n] = int32(k0), v
					n++
				}
				k0++
			}
			w.appended = n
			return len(vals)
		}
		if keys != nil && len(vals)-q <= len(ak)-n && keys[q] > last && keys[len(keys)-1] <= limit {
			// Keys that follow and fit: written in one pass that also
			// tests that they increase, with no branch per key; a zero
			// (no entry at a new key) is dropped after, rarely.
			if m, ok := appendIncreasing(ak[n:], av[n:], keys[q:], vals[q:], last); ok {
				nestSaw("keys appended in one pass")
				w.appended = n + m
				return len(vals)
			}
		}
		// A row whose keys so far are one run first..last (no key
		// skipped) adds a key inside the run where its entry is: a row
		// built from runs over the same keys (TTM's row of a fiber, one
		// run per entry of the fiber) stays where it is.
		first, run, inRun := int64(0), false, false
		if n > 0 {
			first = int64(ak[0])
			run = last-first == int64(n-1)
		}
		for ; q < len(vals); q++ {
			k, v := lo+int64(q), vals[q]
			if keys != nil {
				k = keys[q]
			}
			if k > last && k <= limit {
				if v != 0 { // a zero at a new key is no entry
					if n == len(ak) {
						break // out of room
					}
					ak[n], av[n] = int32(k), v
					if n == 0 {
						first, run = k, true
					} else {
						run = run && k == last+1
					}
					n++
					last = k
				}
				continue
			}
			if run && k >= first && k <= last {
				av[k-first] += v
				w.summed, inRun = true, true
				continue
			}
			if n > 0 && k == last {
				av[n-1] += v
				w.summed = true
				continue
			}
			break
		}
		w.appended = n
		if inRun {
			nestSaw("added inside an appended run")
		}
		if q == len(vals) {
			return q
		}
		if n < len(ak) || !growAppend(w, block, 2*(n+1)) {
			b.settle()
			return q
		}
	}
	return q
}

// appendRun returns where the values of keys lo..lo+n-1 go in b, an
// appending row of reals, for a loop that writes a run of lanes into it:
// the free end of the level's blocks past the row's entries, so the lanes
// are computed where they stay rather than into a buffer then added key
// by key. Nil (b left as it was) where the keys do not all follow the
// row's last, a list key cannot hold them, or the row cannot grow: addRow
// takes the run. What is written there is the row's only once keepRun
// keeps it.
func (b *builder) appendRun(lo int64, n int) []float64 {
	if !b.app || !b.spec.real || lo < 0 || n <= 0 || lo+int64(n)-1 > narrowKeyLimit {
		return nil
	}
	w := b.ws
	if ak, _ := appendedRow(w, w.realBlock); len(ak) > 0 && int64(ak[len(ak)-1]) >= lo {
		return nil
	}
	if room(w, w.realBlock) < n && !growAppend(w, &w.realBlock, w.appended+n) {
		return nil
	}
	vb := w.realBlock
	return vb[len(vb):cap(vb)][w.appended:][:n]
}

// keepRun makes the values of src, for keys lo, lo+1, ..., the row's
// entries, its zeros dropped (a zero at a new key is no entry), into
// run, where appendRun said: src is run itself where the lanes were
// computed there, or where they are read (an array's row), which saves
// copying them in first.
func (b *builder) keepRun(lo int64, src, run []float64) {
	w := b.ws
	keys := w.keyBlock[len(w.keyBlock):cap(w.keyBlock)][w.appended:][:len(run)]
	w.appended += compactReals(src[:len(run)], int32(lo), keys, run)
}

// appendIncreasing writes keys (as int32s) and vals (aligned) to the
// start of ak and av, which have room, and reports whether the keys
// increase from past last on; if so it returns how many entries it kept,
// the zeros dropped. If not, what it wrote is past the row's end and
// counts for nothing.
func appendIncreasing[V int64 | float64](ak []int32, av []V, keys []int64, vals []V, last int64) (int, bool) {
	vals = vals[:len(keys)]
	ak, av = ak[:len(keys)], av[:len(keys)]
	// Flags, not branches: one pass of loads and stores.
	var down, zero uint8
	for l, k := range keys {
		v := vals[l]
		ak[l], av[l] = int32(k), v
		down |= bit(k <= last)
		zero |= bit(v == 0)
		last = k
	}
	return keptIncreasing(ak, av, down != 0, zero != 0)
}

// appendIncreasingReals is appendIncreasing for reals: in one vector
// pass where there is assembly.
func appendIncreasingReals(ak []int32, av []float64, keys []int64, vals []float64, last int64) (int, bool) {
	vals = vals[:len(keys)]
	ak, av = ak[:len(keys)], av[:len(keys)]
	if down, zero, ok := copyIncreasingReals(ak, av, keys, vals, last); ok {
		return keptIncreasing(ak, av, down, zero)
	}
	return appendIncreasing(ak, av, keys, vals, last)
}

// keptIncreasing is appendIncreasing's answer for the keys and values it
// wrote to ak and av: not kept if the keys do not increase (down), else
// how many entries are left once the zeros are dropped.
func keptIncreasing[V int64 | float64](ak []int32, av []V, down, zero bool) (int, bool) {
	if down {
		return 0, false
	}
	if !zero {
		return len(av), true
	}
	m := 0
	for l, v := range av {
		if v != 0 {
			ak[m], av[m] = ak[l], v
			m++
		}
	}
	return m, true
}

// bit is b as 0 or 1.
func bit(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// closeAppended records the appending row of s (its cur) as a closed
// row at s.key, where it is in the level's blocks; a row with no
// non-zero entry records nothing.
func (s *seqRows) closeAppended() {
	c, w := s.cur, s.w
	c.app = false
	if c.spec.real {
		closeAppendedRow(s, chunkReals, &w.realBlock)
	} else {
		closeAppendedRow(s, chunkInts, &w.intBlock)
	}
	w.appended, w.summed = 0, false
}

// closeAppendedRow is closeAppended for values of type V in *block.
func closeAppendedRow[V int64 | float64](s *seqRows, chunk func(*seqChunk) *[]V, block *[]V) {
	w := s.w
	keys, vals := appendedRow(w, *block)
	n := len(vals)
	if w.summed {
		n = 0
		for q, v := range vals {
			if v != 0 { // entries that added up to zero
				keys[n], vals[n] = keys[q], v
				n++
			}
		}
	}
	if n == 0 {
		return
	}
	keys, vals = keys[:n], vals[:n]
	if m := int(keys[n-1]) + 1; m <= denseLeafFactor*n {
		// As compaction would: a dense slice from key 0.
		vb := *block
		if m <= cap(vb)-len(vb) {
			row := vb[len(vb) : len(vb)+m]
			if m > n { // else keys[q] == q: in place already
				clear(row[n:])
				for q := n - 1; q >= 0; q-- { // keys[q] >= q: in place
					v := vals[q]
					row[q] = 0
					row[keys[q]] = v
				}
			}
			*block = vb[:len(vb)+m]
			w.carved += m
			store(s, chunk, row, nil)
			return
		}
		row := make([]V, m)
		for q, k := range keys {
			row[k] = vals[q]
		}
		if m <= maxBlock/4 {
			_, room := carve(&w.keyBlock, block, m, w.carved, w.out)
			copy(room, row)
			*block = (*block)[:len(*block)+m]
			w.carved += m
			row = carved(*block, room)
		}
		store(s, chunk, row, nil)
		return
	}
	// Kept where they are (commit would not extend the blocks for a
	// row longer than a carve takes from them).
	w.keyBlock = w.keyBlock[:len(w.keyBlock)+n]
	*block = (*block)[:len(*block)+n]
	w.carved += n
	store(s, chunk, carved(*block, vals), carved(w.keyBlock, keys))
}

// Closed rows appended to. A row of a workspace level that was closed
// (compacted to a sorted list when another row took the workspace) and
// is added to again at keys past its last is appended to where it is,
// not reopened: reopening moves its whole list back into the workspace,
// so a row built a few keys at a time in key order (the transposed copy
// of a CSC matrix, row c taking key j from column j, column after
// column) would cost the square of its length. The first append copies
// the list, carved from the level's shared blocks, to storage of the
// row's own with room to grow (builder.grown); later ones append in
// place.

// appendMin is the least room, in entries, of a row's own storage.
const appendMin = 16

// appendKid adds vals at keys (aligned) to the child at key k of b, a
// dense level of rows, when that child is a closed list row of a
// workspace level, not spilled, and keys increase past its last key, and
// reports whether it did (if not, nothing is added).
func appendKid[V int64 | float64](b *builder, k int64, keys []int64, vals []V) bool {
	x := b.x
	if !b.spec.dense || x == nil || x.sequential || x.seq != nil || uint64(k) >= uint64(len(x.kids)) || len(keys) == 0 {
		return false
	}
	c := x.kids[k].b
	if c == nil || c.open || c.app || !c.listed || c.ws == nil || c.x != nil || c.lkeys != nil {
		return false
	}
	last := int64(-1)
	if n := len(c.nkeys); n > 0 {
		last = int64(c.nkeys[n-1])
	}
	for _, key := range keys {
		if key <= last || key > narrowKeyLimit {
			return false
		}
		last = key
	}
	var own *[]V
	switch o := any(&c.reals).(type) {
	case *[]V:
		own = o
	default:
		own = any(&c.ints).(*[]V)
	}
	if !c.grown {
		// Room for twice the entries, and at least appendMin: most rows
		// of a sparse matrix's copy are short, and each growth is an
		// allocation.
		n := max(2*(len(c.nkeys)+len(keys)), appendMin)
		c.nkeys = append(make([]int32, 0, n), c.nkeys...)
		*own = append(make([]V, 0, n), *own...)
		c.grown = true
	}
	vals = vals[:len(keys)]
	for q, key := range keys {
		if v := vals[q]; v != 0 { // a zero at a new key is no entry
			c.nkeys = append(c.nkeys, int32(key))
			*own = append(*own, v)
		}
	}
	return true
}
