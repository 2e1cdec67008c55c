package engine

import (
	"math"
	"slices"
)

// Dense levels below the outermost. A plan like
//
//	sum(<p, i> in A_idx1(...)) { @dense i -> sum(...) { @dense j -> ... } }
//
// builds one level-j dictionary per i. Giving each its own slice indexed
// by j would cost the whole range of j per i, however few entries it gets
// (TTM on real data: 20k rows of a 19k range for 15 entries each). So the
// builders of such a level share one dense workspace (per dictionary
// under construction): the builder being added to is open and owns it,
// writing into it by key and listing the keys it writes; when another
// builder of the level opens, the owner is compacted into a sorted list
// (list mode) and the workspace entries it used are zeroed. A closed
// builder that is added to again scatters its list back; one reopened so
// often that the copies would exceed its key range gets a dense slice of
// its own, as before.

// tree holds the workspaces of one dictionary under construction, by the
// depth of the level they serve.
type tree struct {
	root   *builder
	levels []*workspace
	// adopted: the trees of worker dictionaries merged into this one,
	// whose children kept their workspaces.
	adopted []*tree
	done    bool
	// slab: builders for the tree's children, allocated in blocks.
	slab []builder
}

// alloc returns a zero builder of the tree.
func (t *tree) alloc() *builder {
	if len(t.slab) == 0 {
		t.slab = make([]builder, 64)
	}
	b := &t.slab[0]
	t.slab = t.slab[1:]
	return b
}

// workspace is the shared dense storage of one level.
type workspace struct {
	reals []float64
	ints  []int64
	kids  []kid
	owner *builder // the open builder, if any
	// streak: the last rows (leaves) were dense, so new ones skip the
	// workspace and start with a slice of their own of length hint.
	// Every row of the streak earns 8 per entry and costs its length
	// (counted when the next one starts, from last, on every fourth key);
	// the streak ends when credit, started by the row that was dense in
	// the workspace, falls below -4*hint. A streak thus costs at most 32
	// times its entries (8 if they fall at random) plus four times the
	// length of its first row, itself at most 8 times that row's entries.
	streak bool
	hint   int
	credit int
	last   *builder
	// touched lists the keys the owner wrote (unsorted, possibly
	// repeated); its storage and the value buffers are reused by
	// compaction.
	touched []int64
	fvals   []float64
	ivals   []int64
}

func (t *tree) workspace(depth int) *workspace {
	if depth >= len(t.levels) {
		t.levels = append(t.levels, make([]*workspace, depth+1-len(t.levels))...)
	}
	w := t.levels[depth]
	if w == nil {
		w = &workspace{}
		t.levels[depth] = w
	}
	return w
}

// closeAll compacts the open builder of every workspace of the tree.
func (t *tree) closeAll() {
	for _, w := range t.levels {
		if w != nil && w.owner != nil {
			w.owner.release()
		}
	}
	for _, a := range t.adopted {
		a.closeAll()
	}
}

// finish closes every builder and drops the workspaces' storage: the
// dictionary is complete.
func (t *tree) finish() {
	if t.done {
		return
	}
	t.done = true
	t.closeAll()
	for _, w := range t.levels {
		if w != nil {
			*w = workspace{}
		}
	}
	for _, a := range t.adopted {
		a.finish()
	}
}

// size is the length of the workspace's slice for a builder of spec s.
func (w *workspace) size(s *bspec) int {
	switch {
	case s.depth > 1:
		return len(w.kids)
	case s.real:
		return len(w.reals)
	}
	return len(w.ints)
}

// acquire opens b for adding: in workspace mode, b takes the workspace
// over from its current owner (compacting it) and scatters its own
// entries back into it. Outside workspace mode it does nothing.
func (b *builder) acquire() {
	if b.ws == nil || b.open {
		return
	}
	w := b.ws
	if w.owner != nil {
		w.owner.release()
	}
	if n := len(b.lkeys); n > 0 {
		b.moved = int32(min(int64(b.moved)+int64(n), 1<<30))
		if int(b.moved) > max(w.size(b.spec), 256) {
			b.ownDense()
			return
		}
	}
	keys := b.lkeys
	b.listed, b.lkeys = false, nil
	b.open, w.owner = true, b
	w.touched = w.touched[:0]
	switch s := b.spec; {
	case s.depth > 1:
		kids := b.kids
		b.kids = w.kids
		for i, k := range keys {
			*b.slot(k) = kids[i]
		}
	case s.real:
		vals := b.reals
		b.reals = w.reals
		for i, k := range keys {
			b.addReal(k, vals[i])
		}
	default:
		vals := b.ints
		b.ints = w.ints
		for i, k := range keys {
			b.addInt(k, vals[i])
		}
	}
}

// ownDense turns a closed workspace-mode builder into a plain dense one
// with its own slice, sized like the workspace.
func (b *builder) ownDense() {
	w := b.ws
	keys := b.lkeys
	b.ws, b.listed, b.lkeys = nil, false, nil
	switch s := b.spec; {
	case s.depth > 1:
		kids := b.kids
		b.kids = make([]kid, len(w.kids))
		for i, k := range keys {
			*b.slot(k) = kids[i]
		}
	case s.real:
		vals := b.reals
		b.reals = make([]float64, len(w.reals))
		for i, k := range keys {
			b.addReal(k, vals[i])
		}
	default:
		vals := b.ints
		b.ints = make([]int64, len(w.ints))
		for i, k := range keys {
			b.addInt(k, vals[i])
		}
	}
}

// release compacts the open builder b: its entries leave the workspace
// (zeroed behind them) and b is closed. Entries that fill a good part of
// the keys from 0 (an eighth; a quarter for children) go to a dense slice
// of b's own (b is then a plain dense builder, made with one allocation
// and its keys listed only if the dictionary is read), sparser ones to
// sorted lists (list mode). Either way b costs O(its entries).
func (b *builder) release() {
	w := b.ws
	b.open, w.owner = false, nil
	touched := w.touched
	// hi+1 keys as a slice against len(touched) (at least the number
	// of entries) as a list: 8 (24 for children) bytes per key against
	// 16 (32) per entry, but a list takes a sort or a sweep to make.
	hi := int64(-1)
	for _, k := range touched {
		hi = max(hi, k)
	}
	switch s := b.spec; {
	case s.depth > 1:
		w.kids, b.kids = b.kids, nil // the slice may have grown
		if hi+1 <= 4*int64(len(touched)) {
			b.kids, w.kids = handOver(w.kids, hi+1)
			b.ws, w.touched = nil, touched[:0]
			return
		}
		keys := sortKeys(touched, len(w.kids))
		vals := make([]kid, 0, len(keys))
		for _, k := range keys {
			if c := w.kids[k]; c.b != nil || c.view != nil {
				vals = append(vals, c)
				keys[len(vals)-1] = k
			}
			w.kids[k] = kid{}
		}
		keys = keys[:len(vals)]
		var spill map[int64]kid
		if len(b.mkids) > 0 {
			spill = make(map[int64]kid, len(b.mkids))
			for k, c := range b.mkids {
				spill[k] = *c
			}
		}
		b.lkeys, b.kids = withSpill(slices.Clone(keys), vals, spill)
		b.mkids = nil
		w.touched = keys[:0]
	case s.real:
		w.reals, b.reals = b.reals, nil
		if hi+1 <= 8*int64(len(touched)) {
			b.reals, w.reals = handOver(w.reals, hi+1)
			w.startStreak(hi+1, len(touched))
			b.ws, w.touched = nil, touched[:0]
			return
		}
		keys, vals := compact(w.reals, touched, w.fvals[:0])
		b.lkeys, b.reals = withSpill(slices.Clone(keys), slices.Clone(vals), b.mreal)
		b.mreal = nil
		w.touched, w.fvals = keys[:0], vals[:0]
	default:
		w.ints, b.ints = b.ints, nil
		if hi+1 <= 8*int64(len(touched)) {
			b.ints, w.ints = handOver(w.ints, hi+1)
			w.startStreak(hi+1, len(touched))
			b.ws, w.touched = nil, touched[:0]
			return
		}
		keys, vals := compact(w.ints, touched, w.ivals[:0])
		b.lkeys, b.ints = withSpill(slices.Clone(keys), slices.Clone(vals), b.mint)
		b.mint = nil
		w.touched, w.ivals = keys[:0], vals[:0]
	}
	b.listed = true
}

// sortKeys returns the distinct keys of touched (keys of a slice of length
// n) in increasing order, in touched's storage.
func sortKeys(touched []int64, n int) []int64 {
	if len(touched) < 2 {
		return touched
	}
	lo, hi := touched[0], touched[0]
	sorted := true
	for i, k := range touched[1:] {
		lo, hi = min(lo, k), max(hi, k)
		if k <= touched[i] {
			sorted = false
		}
	}
	if sorted {
		return touched
	}
	if hi-lo+1 <= int64(8*len(touched)) && n > 0 {
		// Dense enough: mark and sweep the key range instead of sorting.
		seen := make([]bool, hi-lo+1)
		for _, k := range touched {
			seen[k-lo] = true
		}
		out := touched[:0]
		for i, s := range seen {
			if s {
				out = append(out, lo+int64(i))
			}
		}
		return out
	}
	slices.Sort(touched)
	return slices.Compact(touched)
}

// compact collects the non-zero entries of ws at the keys in touched
// (unsorted, possibly repeated) in increasing key order, zeroing ws there.
// keys reuses touched's storage, vals buf's.
func compact[V int64 | float64](ws []V, touched []int64, buf []V) (keys []int64, vals []V) {
	if len(touched) == 0 {
		return touched, buf
	}
	lo, hi := touched[0], touched[0]
	sorted := true
	for i, k := range touched[1:] {
		lo, hi = min(lo, k), max(hi, k)
		if k <= touched[i] {
			sorted = false
		}
	}
	keys, vals = touched[:0], buf
	if !sorted && hi-lo+1 <= int64(8*len(touched)) {
		// Dense enough: sweep the key range instead of sorting.
		for k, v := range ws[lo : hi+1] {
			if v != 0 {
				keys = append(keys, lo+int64(k))
				vals = append(vals, v)
			}
		}
		clear(ws[lo : hi+1])
		return keys, vals
	}
	if !sorted {
		slices.Sort(touched)
	}
	for _, k := range touched {
		// Repeated keys were zeroed at their first occurrence.
		if v := ws[k]; v != 0 {
			keys = append(keys, k)
			vals = append(vals, v)
		}
		ws[k] = 0
	}
	return keys, vals
}

// withSpill merges the entries of a spill map (keys never in the sorted
// list: they are negative or beyond the dense slice) into keys and vals.
func withSpill[V any](keys []int64, vals []V, spill map[int64]V) ([]int64, []V) {
	if len(spill) == 0 {
		return keys, vals
	}
	sk := sortedKeys(spill)
	outK := make([]int64, 0, len(keys)+len(sk))
	outV := make([]V, 0, len(keys)+len(sk))
	i := 0
	for _, k := range sk {
		for i < len(keys) && keys[i] < k {
			outK, outV = append(outK, keys[i]), append(outV, vals[i])
			i++
		}
		outK, outV = append(outK, k), append(outV, spill[k])
	}
	return append(outK, keys[i:]...), append(outV, vals[i:]...)
}

// handOver gives the n first keys of the workspace slice ws to a builder
// of its own and returns the workspace's new slice. When ws is not much
// longer, the builder takes ws itself and the workspace a fresh zeroed
// slice (the allocation a dense row always had); otherwise the builder
// gets a copy and ws is zeroed. The builder's capacity never grows past
// cap(ws), below which no key is spilled.
func handOver[V any](ws []V, n int64) (own, rest []V) {
	if int64(cap(ws)) <= 2*n {
		return ws[:n], make([]V, len(ws))
	}
	own = make([]V, n)
	copy(own, ws)
	clear(ws[:n])
	return own, ws
}

// startStreak starts (or continues) a streak of dense rows after a row
// of the workspace with at most entries entries over keys 0..n-1.
func (w *workspace) startStreak(n int64, entries int) {
	w.streak, w.hint, w.last = true, int(n), nil
	w.credit = max(w.credit, 0) + 8*entries - int(n)
}

// streakRow returns a new dense leaf with a slice of its own when the
// level is in a streak of dense rows (see workspace.streak), nil
// otherwise.
func (w *workspace) streakRow(t *tree, s *bspec) *builder {
	if !w.streak {
		return nil
	}
	if l := w.last; l != nil {
		n := len(l.reals) + len(l.ints)
		w.credit += 8*(nonZeros(l.reals)+nonZeroInts(l.ints)) - n
		if w.credit < -4*w.hint {
			w.streak, w.last, w.credit = false, nil, 0
			return nil
		}
		w.hint = max(n, w.hint-w.hint/8)
	}
	nb := t.alloc()
	nb.spec = s
	if s.real {
		nb.reals = make([]float64, w.hint)
	} else {
		nb.ints = make([]int64, w.hint)
	}
	w.last = nb
	return nb
}

// nonZeros and nonZeroInts estimate the number of non-zero elements of
// s from every fourth one, without branches (the zeros of a row fall at
// random). The estimate is at most four times the true count.
func nonZeros(s []float64) int {
	n := uint64(0)
	for i := 0; i < len(s); i += 4 {
		b := math.Float64bits(s[i]) &^ (1 << 63) // -0 is zero
		n += (b | -b) >> 63
	}
	return 4 * int(n)
}

func nonZeroInts(s []int64) int {
	n := uint64(0)
	for i := 0; i < len(s); i += 4 {
		b := uint64(s[i])
		n += (b | -b) >> 63
	}
	return 4 * int(n)
}
