package engine

import (
	"math"
	mathbits "math/bits"
	"slices"
	"unsafe"
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
// builder of the level opens, the owner is compacted (release) and the
// workspace entries it used are zeroed. A closed builder that is added to
// again scatters its entries back; one reopened so often that the copies
// would exceed its key range gets a dense slice of its own.
//
// The representation of a compacted leaf row (scalars over keys 0..hi)
// is about whichever takes fewer bytes: a dense slice of hi+1 values (8
// bytes a key) when the row has at least (hi+1)/2 entries, else a sorted
// list (12 bytes an entry: keys of 4 bytes, which any key of a slice
// shorter than 2^31 fits, and values of 8; a row from half to two thirds
// full takes up to a third more as a slice, which is compacted by a copy
// rather than a sweep of its keys). Memory is what decides at
// scale: a result that does not fit in the caches is written once into
// memory the process never touched, and the page faults and cache misses
// of that first write cost more than the compaction: a lower threshold
// (dense from an eighth up) makes a large MMM result more than twice the
// size and slower. Where memory is recycled (a benchmark running MMM
// over and over in one process) dense rows are cheap to make too, and
// the threshold matters little.
//
// The compaction is cheap so that lists stay competitive: the touched
// keys go into a bitmap of their range (a word per 64 keys) that is read
// back in order (no sort unless the keys are spread over more than 64
// times their number; when the whole slice is that narrow, as MMM's 250
// columns, the bitmap covers all of it and marking it finds the greatest
// key, with no pass of its own over the keys), the loops store every
// candidate and step past non-zeros only (rows whose zeros fall at
// random mispredict no branch), and lists and dense rows are carved out
// of blocks shared by the level (one allocation per block, not two per
// row; see blockSize). On such a narrow slice the scatter loop of sparse
// products marks the bitmap itself as it writes (scatterMark), so that
// its keys are never listed at all (see workspace.marking).
//
// Rows that keep coming out dense skip the workspace: after two
// consecutive dense rows of the workspace (empty rows do not count, nor
// interrupt), new rows start with a dense slice of their own (a streak),
// until one of them turns out to be less than half full (its non-zeros
// are counted when the next row starts). A streak thus wastes at most one
// row, and rows interleaving dense and sparse ones (a web graph's hubs)
// stay mostly in the workspace. Rows made dense at once avoid the
// workspace's key tracking, which the scatter loops of TTM (64-key rows,
// all full) would otherwise pay for. Each row of a streak asks for the
// lines of the next one (prefetchNext): its zeroing then finds them in
// the cache instead of waiting on memory.
//
// What a row costs apart from its entries matters as much when rows are
// small (MTTKRP: a hundred thousand rows of one or two entries): a row is a builder
// of 128 bytes carved from a slab of the tree (builder.go), its closed
// list is frozen as it is (rowLeaf: no allocation, and so no zeros in
// it: compaction drops them, spilled zeros are deleted), and compaction
// stores back pointers (the workspace's slice, its touched list) only
// when they changed, since each pointer store pays for the collector's
// write barrier while it marks.

// tree holds the workspaces of one dictionary under construction, by the
// depth of the level they serve.
type tree struct {
	root   *builder
	levels []*workspace
	// adopted: the trees of worker dictionaries merged into this one,
	// whose children kept their workspaces.
	adopted []*tree
	done    bool
	// slab: builders for the tree's children, allocated in blocks that
	// grow from a few to 64: a tree in sequential mode takes one builder,
	// and a split run makes a tree per chunk.
	slab  []builder
	slabN int
	// out: the full blocks of the run that builds the tree, for its
	// result (released.go); nil outside a kernel's run.
	out *runBlocks
}

// alloc returns a zero builder of the tree.
func (t *tree) alloc() *builder {
	if len(t.slab) == 0 {
		t.slabN = min(64, max(2, 2*t.slabN))
		t.slab = make([]builder, t.slabN)
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
	// workspace and start with a slice of their own of about length
	// hint, until last, the latest of them, is judged and turns out
	// sparse; unjudged counts the rows since the last judged.
	// denseRows counts the consecutive dense rows of the workspace.
	streak    bool
	denseRows int
	hint      int
	last      *builder
	unjudged  int
	// touched lists the keys the owner wrote (unsorted, possibly
	// repeated); its storage is reused by compaction.
	touched []int64
	// The sorted lists of the level's closed leaves are carved out of
	// shared blocks (one for keys, one for values), carved entries so
	// far.
	keyBlock  []int32
	realBlock []float64
	intBlock  []int64
	carved    int
	// bits: compactInto's bitmap, zero between rows except while
	// marking: the open row's scatter loops (scatterAdd) then mark
	// the keys they write here, a bitmap of the whole slice, instead
	// of listing them in touched (which other writes still use).
	bits    []uint64
	marking bool
	// sweep: the open row's scatter loops track none of the keys they
	// write, and release sweeps the whole slice (sweep.go).
	sweep bool
	// Likewise the slices of its dense leaves (zero until carved).
	denseReals  []float64
	denseInts   []int64
	carvedDense int
	// appended: the entries of the level's appending row (builder.app),
	// which lie past the ends of keyBlock and realBlock or intBlock;
	// summed: a repeated key added into one of them (which may then be
	// zero: closing the row drops such entries).
	appended int
	summed   bool
	out      *runBlocks // the tree's
}

// Representation thresholds (see release).
const (
	// denseLeafFactor: a leaf row over keys 0..hi with at least
	// (hi+1)/denseLeafFactor entries gets a dense slice, 8 bytes per
	// key, rather than a list, 12 bytes per entry.
	denseLeafFactor = 2
	// streakAfter: a streak of dense rows starts after this many
	// consecutive rows of the workspace came out dense.
	streakAfter = 2
	// streakCheck: a streak's rows are judged on every streakCheck-th
	// row (see streakRow).
	streakCheck = 8
	// bitmapFactor: unsorted keys spread over at most bitmapFactor
	// times their number are put in order through a bitmap of their
	// range (a word per 64 keys), not sorted.
	bitmapFactor = 64
	// Block sizes, in entries, for the lists of a level.
	minBlock = 32
	maxBlock = 1 << 16
	// poolBlock: the fewest entries of a block that goes through the
	// pools of released storage (newBlock); smaller ones cost little
	// to make.
	poolBlock = 1 << 12
)

// narrowKeyLimit is the greatest key a list row keeps in 4 bytes
// (math.MaxInt32; tests lower it to take the other path).
var narrowKeyLimit int64 = math.MaxInt32

// carve returns room for need entries (keys and values) at the end of
// the level's blocks, starting new blocks when they are full; commit
// then keeps the entries used. A row bigger than a block gets storage
// of its own.
func carve[K int32, V int64 | float64](keyBlock *[]K, valBlock *[]V, need, carved int, out *runBlocks) ([]K, []V) {
	if need > maxBlock/4 {
		return make([]K, need), make([]V, need)
	}
	kb, vb := *keyBlock, *valBlock
	if cap(kb)-len(kb) < need || cap(vb)-len(vb) < need {
		size := blockSize(need, carved)
		kb, vb = newBlock[K](size, out), newBlock[V](size, out)
		*keyBlock, *valBlock = kb, vb
	}
	return kb[len(kb) : len(kb)+need], vb[len(vb) : len(vb)+need]
}

// blockSize is the length of a new block for a row of need entries after
// carved entries: blocks grow with the level (twice what was carved
// before, at least eight rows), so that a small dictionary does not pay
// for a large block nor a large one for many allocations; the unused end
// of a block is at most about the size of the storage carved before it,
// and at most maxBlock.
func blockSize(need, carved int) int {
	return max(need, min(max(2*carved, 8*need, minBlock), maxBlock))
}

// carveDense returns a zero slice of length and capacity n for a dense
// leaf, out of *block (see carve). The block is not zeroed, the slice is
// as it is carved: the row is in the cache when it is written.
func carveDense[V int64 | float64](block *[]V, n int, carved *int, out *runBlocks) []V {
	if n > maxBlock/4 {
		return make([]V, n)
	}
	b := *block
	if cap(b)-len(b) < n {
		b = newBlock[V](blockSize(n, *carved), out)
	}
	*carved += n
	*block = b[:len(b)+n]
	row := b[len(b) : len(b)+n : len(b)+n]
	clear(row)
	return row
}

// commit keeps the first n entries of the room carve gave for need.
func commit[K, V any](keyBlock *[]K, valBlock *[]V, need, n int) {
	if need <= maxBlock/4 {
		*keyBlock = (*keyBlock)[:len(*keyBlock)+n]
		*valBlock = (*valBlock)[:len(*valBlock)+n]
	}
}

func (t *tree) workspace(depth int) *workspace {
	if depth >= len(t.levels) {
		t.levels = append(t.levels, make([]*workspace, depth+1-len(t.levels))...)
	}
	w := t.levels[depth]
	if w == nil {
		w = &workspace{out: t.out}
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

// reopened, when set (by tests), hears how many entries a closed row
// reopened in the workspace moves back into it.
var reopened func(entries int)

// acquire opens b for adding: in workspace mode, b takes the workspace
// over from its current owner (compacting it) and scatters its own
// entries back into it. Outside workspace mode it does nothing.
func (b *builder) acquire() {
	if b.app {
		b.settle()
		return
	}
	if b.ws == nil || b.open {
		return
	}
	w := b.ws
	if w.owner != nil {
		w.owner.release()
	}
	if n := b.listLen(); n > 0 {
		if reopened != nil {
			reopened(n)
		}
		b.moved = int32(min(int64(b.moved)+int64(n), 1<<30))
		if int(b.moved) > max(w.size(b.spec), 256) {
			b.ownDense()
			return
		}
	}
	b.open, w.owner, b.grown = true, b, false
	w.touched = w.touched[:0]
	b.replay(w.kids, w.reals, w.ints)
}

// replay moves the entries of a closed workspace-mode builder (its list)
// into the dense slices given, which become its own: the workspace's on
// reopening, fresh ones for ownDense.
func (b *builder) replay(kids []kid, reals []float64, ints []int64) {
	lkeys, nkeys := b.lkeys, b.nkeys
	b.listed, b.lkeys, b.nkeys = false, nil, nil
	// Nothing to move for a new row (most rows, when rows are small).
	moving := len(lkeys)+len(nkeys) > 0
	switch s := b.spec; {
	case s.depth > 1:
		listed := b.x.kids
		b.x.kids = kids
		for i, k := range lkeys {
			*b.slot(k) = listed[i]
		}
	case s.real:
		vals := b.reals
		b.reals = reals
		if moving {
			addList(b, nkeys, vals)
			addList(b, lkeys, vals)
		}
	default:
		vals := b.ints
		b.ints = ints
		if moving {
			addList(b, nkeys, vals)
			addList(b, lkeys, vals)
		}
	}
}

// ownDense turns a closed workspace-mode builder into a plain dense one
// with its own slice, sized like the workspace.
func (b *builder) ownDense() {
	w := b.ws
	b.ws, b.grown = nil, false
	switch s := b.spec; {
	case s.depth > 1:
		b.replay(make([]kid, len(w.kids)), nil, nil)
	case s.real:
		b.replay(nil, make([]float64, len(w.reals)), nil)
	default:
		b.replay(nil, nil, make([]int64, len(w.ints)))
	}
}

// release compacts the open builder b: its entries leave the workspace
// (zeroed behind them) and b is closed. Leaves whose entries fill at
// least half of the keys from 0 (children: a quarter) go to a dense slice
// of b's own (b is then a plain dense builder, its keys listed only if
// the dictionary is read), sparser ones to sorted lists (list mode); see
// the comment at the top. Either way b costs O(its entries).
func (b *builder) release() {
	w := b.ws
	b.open, w.owner = false, nil
	touched := w.touched
	// hi+1 keys as a slice against len(touched) (at least the number
	// of entries) as a list: 8 (24 for children) bytes per key against
	// 12 (32) per entry. Children keep a denser rule: no measurement
	// has called for a change.
	switch s := b.spec; {
	case s.depth > 1:
		_, hi, _ := keyRange(touched)
		w.kids, b.x.kids = b.x.kids, nil // the slice may have grown
		if hi+1 <= 4*int64(len(touched)) {
			b.x.kids, w.kids = handOver(w.kids, hi+1)
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
		if len(b.x.mkids) > 0 {
			spill = make(map[int64]kid, len(b.x.mkids))
			for k, c := range b.x.mkids {
				spill[k] = *c
			}
		}
		b.lkeys, b.x.kids = withSpill(slices.Clone(keys), vals, spill)
		b.x.mkids = nil
		w.touched = keys[:0]
	case s.real:
		var spill *map[int64]float64
		if b.x != nil {
			spill = &b.x.mreal
		}
		if releaseLeaf(b, w, &b.reals, &w.reals, &w.denseReals, &w.realBlock, spill) {
			return
		}
	default:
		var spill *map[int64]int64
		if b.x != nil {
			spill = &b.x.mint
		}
		if releaseLeaf(b, w, &b.ints, &w.ints, &w.denseInts, &w.intBlock, spill) {
			return
		}
	}
	b.listed = true
}

// releaseLeaf is release for a row of scalars: own is b's values (the
// workspace's slice while open, shared the workspace's own field), dense
// and block the level's blocks for dense rows and lists, spill b's
// entries outside the slice (nil: none), which a list takes in. It reports whether the row went to a dense
// slice; otherwise b is a sorted list.
func releaseLeaf[V int64 | float64](b *builder, w *workspace, own, shared, dense, block *[]V, spill *map[int64]V) bool {
	touched := w.touched
	// *own is the workspace's slice, grown or not: store it back only if
	// it changed (pointer stores into the heap pay for the collector's
	// write barrier while it marks, which during a result of 100k rows
	// is often); *own is overwritten below.
	if len(*own) != len(*shared) || cap(*own) != cap(*shared) {
		*shared = *own
	}
	if len(touched) == 0 && !w.sweep && !w.marking && (spill == nil || len(*spill) == 0) {
		// Nothing was written: an empty list, at no cost. Most rows of
		// a sparse product can be empty.
		*own = nil
		return false
	}
	if w.sweep {
		if int64(len(*shared))-1 <= narrowKeyLimit {
			return sweepLeaf(b, w, own, shared, dense, block, spill)
		}
		// Keys past int32: the general path, from the keys listed.
		w.touched = appendNonZeroKeys(w.touched[:0], *shared)
		touched, w.sweep = w.touched, false
	}
	// The keys' range, and their order: when a bitmap of the whole slice
	// may put them in order (a narrow workspace: MMM's 250 columns),
	// marking it finds the greatest key too, saving keyRange's pass.
	var marked []uint64
	var lo, hi int64
	sorted := false
	// entries: the row's entries, or more (touched may repeat keys).
	entries := len(touched)
	if w.marking || len(*shared) <= bitmapFactor*len(touched) {
		marked, hi, entries = markedRange(touched, len(*shared), &w.bits)
		w.marking = false
	} else {
		lo, hi, sorted = keyRange(touched)
	}
	if entries > 0 && hi+1 <= denseLeafFactor*int64(entries) {
		clear(marked)
		*own = handOverLeaf(*shared, hi+1, dense, &w.carvedDense, w.out)
		w.startStreak(hi + 1)
		b.ws = nil
		w.touched = w.touched[:0] // the length only: no barrier
		return true
	}
	need := entries + 1
	m := takeSpill(spill)
	var n int
	if hi <= narrowKeyLimit {
		// Keys of 4 bytes, not 8: a list entry of 12 bytes, not 16.
		keys, vals := carve(&w.keyBlock, block, need, w.carved, w.out)
		n = compactRow(*shared, touched, marked, lo, hi, sorted, keys, vals, &w.bits)
		keepList(b, w, own, block, keys, vals, need, n, m)
	} else {
		// Keys past int32 (a slice of over 2^31 entries): 8-byte
		// keys, of the row's own.
		keys, vals := make([]int64, need), make([]V, need)
		n = compactRow(*shared, touched, marked, lo, hi, sorted, keys, vals, &w.bits)
		b.lkeys, *own = withSpill(keys[:n:n], vals[:n:n], m)
	}
	w.touched = w.touched[:0]
	if n > 0 { // an empty row leaves a run of dense ones as it is
		w.denseRows = 0
	}
	return false
}

// takeSpill takes a row's spilled entries (keys outside the slice; spill
// nil: none) for its list, without zeros: the frozen row is the list
// itself (rowLeaf).
func takeSpill[V int64 | float64](spill *map[int64]V) map[int64]V {
	if spill == nil {
		return nil
	}
	m := *spill
	*spill = nil
	deleteZeros(m)
	return m
}

// keepList makes the first n entries of keys and vals, carved for need,
// b's frozen list (*own its values), the spilled entries m merged in.
func keepList[V int64 | float64](b *builder, w *workspace, own, block *[]V, keys []int32, vals []V, need, n int, m map[int64]V) {
	commit(&w.keyBlock, block, need, n)
	w.carved += n
	if len(m) == 0 {
		b.nkeys, *own = keys[:n:n], vals[:n:n]
	} else {
		b.lkeys, *own = withSpill(widen(keys[:n]), vals[:n:n], m)
	}
}

// compactRow writes the entries of an open row (its keys marked in the
// bitmap marked, or else listed in touched) into keys and vals, as
// sweepMarked or compactInto says, and returns their number.
func compactRow[K int32 | int64, V int64 | float64](ws []V, touched []int64, marked []uint64, lo, hi int64, sorted bool, keys []K, vals []V, bits *[]uint64) int {
	if marked != nil {
		return sweepMarked(ws, marked, 0, keys, vals)
	}
	return compactInto(ws, touched, lo, hi, sorted, keys, vals, bits)
}

// widen returns keys as int64s.
func widen(keys []int32) []int64 {
	w := make([]int64, len(keys))
	for i, k := range keys {
		w[i] = int64(k)
	}
	return w
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

// keyRange returns the least and greatest of keys (0 and -1 if there are
// none) and whether they increase strictly.
func keyRange(keys []int64) (lo, hi int64, sorted bool) {
	if len(keys) == 0 {
		return 0, -1, true
	}
	lo, hi = keys[0], keys[0]
	descents := 0
	for i, k := range keys[1:] {
		lo, hi = min(lo, k), max(hi, k)
		if k <= keys[i] {
			descents++
		}
	}
	return lo, hi, descents == 0
}

// compactInto writes the non-zero entries of ws at the keys in touched
// (unsorted, possibly repeated; lo and hi are their least and greatest,
// sorted says whether they increase strictly) into keys and vals in
// increasing key order, zeroing ws there, and returns their number. keys
// and vals have room for len(touched)+1 entries. Unsorted keys are put in
// order through a bitmap of their range (*bits, all zero between calls,
// grown as needed) unless the range is too wide for their number; the
// loops store every candidate and step past the non-zero ones only, so
// that rows whose zeros fall at random cost no mispredicted branches.
func compactInto[K int32 | int64, V int64 | float64](ws []V, touched []int64, lo, hi int64, sorted bool, keys []K, vals []V, bits *[]uint64) int {
	if !sorted && hi-lo+1 <= bitmapFactor*int64(len(touched)) {
		return sweepMarked(ws, markKeys(touched, lo, hi, bits), lo, keys, vals)
	}
	if !sorted {
		slices.Sort(touched)
	}
	n := 0
	for _, k := range touched {
		// Repeated keys were zeroed at their first occurrence.
		v := ws[k]
		keys[n], vals[n] = K(k), v
		n += isNonZero(v)
		ws[k] = 0
	}
	return n
}

// markKeys sets the bits k-lo of the keys in touched (all in lo..hi) in
// *bits (grown as needed, keeping the bits already set) and returns its
// words up to hi.
func markKeys(touched []int64, lo, hi int64, bits *[]uint64) []uint64 {
	words := int((hi-lo)>>6) + 1
	growBits(bits, words)
	bm := (*bits)[:words]
	for _, k := range touched {
		d := k - lo
		bm[d>>6] |= 1 << (d & 63)
	}
	return bm
}

// sweepMarked writes the non-zero entries of ws at the keys marked in bm
// (bit d for key lo+d) into keys and vals in increasing key order,
// zeroing ws there and bm, and returns their number.
func sweepMarked[K int32 | int64, V int64 | float64](ws []V, bm []uint64, lo int64, keys []K, vals []V) int {
	n := 0
	for i, word := range bm {
		bm[i] = 0
		base := lo + int64(i)<<6
		for word != 0 {
			k := base + int64(mathbits.TrailingZeros64(word))
			word &= word - 1
			v := ws[k]
			keys[n], vals[n] = K(k), v
			n += isNonZero(v)
			ws[k] = 0
		}
	}
	return n
}

// growBits makes *bits at least words long, keeping its bits.
func growBits(bits *[]uint64, words int) {
	if len(*bits) < words {
		*bits = append(*bits, make([]uint64, words-len(*bits))...)
	}
}

// markedRange marks the keys of touched, all in 0..n-1, in a bitmap of
// that whole range (*bits, which may hold marks already: see
// workspace.marking) and returns its words up to the greatest marked
// key, that key (-1 if there are none) and the number of marked keys:
// the range of a narrow workspace, found without a pass of keyRange.
func markedRange(touched []int64, n int, bits *[]uint64) (bm []uint64, hi int64, count int) {
	bm = markKeys(touched, 0, int64(n-1), bits)
	top := len(bm) - 1
	for top >= 0 && bm[top] == 0 {
		top--
	}
	if top < 0 {
		return nil, -1, 0
	}
	for _, word := range bm[:top+1] {
		count += mathbits.OnesCount64(word)
	}
	return bm[:top+1], int64(top)<<6 + 63 - int64(mathbits.LeadingZeros64(bm[top])), count
}

// isNonZero is 1 if v is not zero, else 0 (-0 is zero), without a branch.
func isNonZero[V int64 | float64](v V) int {
	n := 0
	if v != 0 {
		n = 1
	}
	return n
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

// deleteZeros deletes the zero entries of a spill map.
func deleteZeros[V int64 | float64](m map[int64]V) {
	for k, v := range m {
		if v == 0 {
			delete(m, k)
		}
	}
}

// handOver gives the n first children of the workspace slice ws to a
// builder of its own and returns the workspace's new slice: when ws is
// not much longer, the builder takes ws itself and the workspace a fresh
// zeroed slice; otherwise the builder gets a copy. The builder's capacity
// never grows past cap(ws), below which no key is spilled.
func handOver(ws []kid, n int64) (own, rest []kid) {
	if int64(cap(ws)) <= 2*n {
		return ws[:n], make([]kid, len(ws))
	}
	own = make([]kid, n)
	copy(own, ws)
	clear(ws[:n])
	return own, ws
}

// handOverLeaf gives the n first keys of a leaf's workspace slice ws to
// a builder: a copy carved out of block (see carveDense); ws is zeroed
// behind it.
func handOverLeaf[V int64 | float64](ws []V, n int64, block *[]V, carved *int, out *runBlocks) []V {
	own := carveDense(block, int(n), carved, out)
	copy(own, ws)
	clear(ws[:n])
	return own
}

// startStreak counts a dense row of the workspace over keys 0..n-1, and
// starts (or continues) a streak after streakAfter of them in a row.
func (w *workspace) startStreak(n int64) {
	w.denseRows++
	w.streak, w.hint, w.last, w.unjudged = w.denseRows >= streakAfter, int(n), nil, 0
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
		// Every streakCheck-th row is judged, not every row: counting
		// reads about half a row, and a sparse row left dense is the
		// same dictionary in more storage (at most streakCheck rows
		// of it once the rows turn sparse).
		if w.unjudged++; w.unjudged == streakCheck {
			w.unjudged = 0
			if !hasNonZeros(l.reals, l.ints, (n+denseLeafFactor-1)/denseLeafFactor) {
				w.streak, w.last, w.denseRows = false, nil, 0
				return nil
			}
		}
		w.hint = max(n, w.hint-w.hint/8)
	}
	nb := t.alloc()
	nb.spec = s
	// Keys up to the workspace's length are to be expected: a row
	// that long needs no growth, unless it is much longer than the
	// rows of the streak.
	n := len(w.reals) + len(w.ints)
	if n > 2*w.hint || n < w.hint {
		n = w.hint
	}
	if s.real {
		nb.reals = carveDense(&w.denseReals, n, &w.carvedDense, w.out)
		prefetchNext(w.denseReals, n)
	} else {
		nb.ints = carveDense(&w.denseInts, n, &w.carvedDense, w.out)
		prefetchNext(w.denseInts, n)
	}
	w.last = nb
	return nb
}

// prefetchNext fetches for writing the n values that the next carve of
// block would give (carveDense), where the block has room for them: the
// streak's next row, whose zeroing would otherwise wait on the memory of
// each of its lines in turn while nothing else runs. They arrive while
// this row is filled.
func prefetchNext[V int64 | float64](block []V, n int) {
	if n > 0 && cap(block)-len(block) >= n {
		prefetchWrite(unsafe.Pointer(unsafe.SliceData(block[len(block):len(block)+n])), int64(n))
	}
}

// hasNonZeros reports whether the row, reals or ints, has at least need
// non-zero elements. It counts a block at a time, without branches in
// the block (a vector compare per eight elements where the assembly
// runs), and stops at the first block that reaches need: a full row is
// read about halfway.
func hasNonZeros(reals []float64, ints []int64, need int) bool {
	const block = 64
	n := 0
	for len(reals) > 0 && n < need {
		m := min(len(reals), block)
		n += nonZeros(reals[:m])
		reals = reals[m:]
	}
	for len(ints) > 0 && n < need {
		m := min(len(ints), block)
		n += nonZeroInts(ints[:m])
		ints = ints[m:]
	}
	return n >= need
}

// nonZerosGo and nonZeroIntsGo count the non-zero elements of s,
// without branches (nonZeros and nonZeroInts where no assembly runs).
func nonZerosGo(s []float64) int {
	n := uint64(0)
	for _, v := range s {
		b := math.Float64bits(v) &^ (1 << 63) // -0 is zero
		n += (b | -b) >> 63
	}
	return int(n)
}

func nonZeroIntsGo(s []int64) int {
	n := uint64(0)
	for _, v := range s {
		b := uint64(v)
		n += (b | -b) >> 63
	}
	return int(n)
}
