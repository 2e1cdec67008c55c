package engine

// Rows appended in key order. A sequential row (seqrows.go) whose
// entries arrive in increasing key order, as they do when the loop that
// fills it walks a sorted segment (the j of TTV's (i, j) fibers, the
// pattern of SDDMM's S, the columns of a CSR row), needs none of the
// workspace: writing each value at its key, listing the key, then at
// close finding the keys' range, gathering the values back and zeroing
// the slice costs several passes over a row that could be written once
// where it is to stay. So a new sequential row starts appending: its
// entries go, in order, to the level's append list (workspace.akeys with
// areals or aints), and at close they are copied, zeros dropped, to the
// level's blocks as the list (or, at least half full, the dense slice)
// compaction would have made: the same bytes and the same entries. A
// repeated key adds into the last entry.
//
// The row's slice is empty while it appends, so every write into it
// goes through addRealSlow or addIntSlow (dense levels check the key
// against the slice's length first), which append while keys increase.
// The first key out of order, one that a 4-byte list key cannot hold, or
// any access other than adding at a key (settle: the scatter loops that
// write the slice directly, growing it, absorbing or merging a
// dictionary, reopening it through acquire) moves the row into the
// workspace, where it goes on the general way.

// startAppend makes b, the empty open row of a sequential dictionary
// (workspace mode, not acquired), an appending row.
func (b *builder) startAppend() {
	w := b.ws
	b.app, b.open = true, false
	b.reals, b.ints, b.lkeys, b.nkeys, b.listed = nil, nil, nil, nil, false
	w.akeys, w.areals, w.aints = w.akeys[:0], w.areals[:0], w.aints[:0]
}

// settle moves an appending row b into its workspace, open there with
// its entries; it does nothing to any other builder.
func (b *builder) settle() {
	if !b.app {
		return
	}
	b.app = false
	w := b.ws
	b.acquire()
	if b.spec.real {
		addList(b, w.akeys, w.areals)
	} else {
		addList(b, w.akeys, w.aints)
	}
	w.akeys, w.areals, w.aints = w.akeys[:0], w.areals[:0], w.aints[:0]
}

// appendEntry adds v at key k of the appending row b, its values in
// *vals, and reports whether it could; if not, b has settled and v is
// still to be added.
func appendEntry[V int64 | float64](b *builder, vals *[]V, k int64, v V) bool {
	w := b.ws
	n := len(w.akeys)
	switch {
	case n > 0 && k == w.akeys[n-1]:
		(*vals)[n-1] += v
		return true
	case (n == 0 || k > w.akeys[n-1]) && k >= 0 && k <= narrowKeyLimit:
		if v != 0 { // a zero at a new key is no entry
			w.akeys = append(w.akeys, k)
			*vals = append(*vals, v)
		}
		return true
	}
	b.settle()
	return false
}

// appendReals adds vals at keys (aligned) to the appending row b, in
// order, and returns how many it added: fewer than len(keys) when a key
// is out of order (b has then settled).
func appendReals(b *builder, keys []int64, vals []float64) int {
	w := b.ws
	ak, av := w.akeys, w.areals
	last := int64(-1)
	if n := len(ak); n > 0 {
		last = ak[n-1]
	}
	q := 0
	for ; q < len(keys); q++ {
		k, v := keys[q], vals[q]
		if k > last && k <= narrowKeyLimit {
			if v != 0 {
				ak, av = append(ak, k), append(av, v)
				last = k
			}
			continue
		}
		if n := len(ak); n > 0 && k == ak[n-1] {
			av[n-1] += v
			continue
		}
		break
	}
	w.akeys, w.areals = ak, av
	if q < len(keys) {
		b.settle()
	}
	return q
}

// closeAppended records the appending row of s (its cur) as a closed
// row at s.key, carved from the level's blocks; a row with no non-zero
// entry records nothing.
func (s *seqRows) closeAppended() {
	c, w := s.cur, s.w
	c.app = false
	if c.spec.real {
		closeAppendedRow(s, w.akeys, w.areals, chunkReals, &w.realBlock)
	} else {
		closeAppendedRow(s, w.akeys, w.aints, chunkInts, &w.intBlock)
	}
	w.akeys, w.areals, w.aints = w.akeys[:0], w.areals[:0], w.aints[:0]
}

// closeAppendedRow is closeAppended for values of type V: keys and vals
// the row's entries, block the level's block of values.
func closeAppendedRow[V int64 | float64](s *seqRows, keys []int64, vals []V, chunk func(*seqChunk) *[]V, block *[]V) {
	n := 0
	for q, v := range vals {
		if v != 0 { // entries that added up to zero
			keys[n], vals[n] = keys[q], v
			n++
		}
	}
	if n == 0 {
		return
	}
	w := s.w
	if hi := keys[n-1]; hi+1 <= denseLeafFactor*int64(n) {
		// As compaction would: a dense slice from key 0.
		m := int(hi + 1)
		if m > maxBlock/4 {
			row := make([]V, m)
			spreadRow(row, keys[:n], vals[:n])
			store(s, chunk, row, nil)
			return
		}
		_, room := carve(&w.keyBlock, block, m, w.carved)
		clear(room)
		spreadRow(room, keys[:n], vals[:n])
		*block = (*block)[:len(*block)+m]
		w.carved += m
		store(s, chunk, carved(*block, room), nil)
		return
	}
	ks, vs := carve(&w.keyBlock, block, n, w.carved)
	for q, k := range keys[:n] {
		ks[q] = int32(k)
	}
	copy(vs, vals[:n])
	commit(&w.keyBlock, block, n, n)
	w.carved += n
	store(s, chunk, carved(*block, vs), carved(w.keyBlock, ks))
}

// spreadRow writes vals at their keys into the zero dense row.
func spreadRow[V int64 | float64](row []V, keys []int64, vals []V) {
	for q, k := range keys {
		row[k] = vals[q]
	}
}
