package engine

import "slices"

// Rows that arrive in order. The result of MTTKRP, TTM or MMM is a dense
// level of rows of scalars, and the plan usually walks the outer keys in
// increasing order, each once (the first level of a CSF tensor, the rows
// of a CSR matrix): row i is complete before row i+1 starts. The general
// builder gives every row a builder of its own (128 bytes out of the
// tree's slab, 7 pointers for the collector to scan, a kid in the level's
// slice, a dictionary when frozen) so that any row can be reopened later.
// When rows are small that is most of what a row costs: MTTKRP on WordNet
// builds 117k rows of 1.5 entries each.
//
// So the builder of a whole dictionary of depth 2 whose rows are dense
// leaves starts in sequential mode (seqRows): one builder, reused, takes
// each row in turn through the level's workspace as usual, and a closed
// row is copied to the end of flat arrays, as the workspace compacted it
// (a sorted list, or a dense slice from key 0 when at least half full):
// row keys, where each row ends, list keys and values, no pointers per
// row. The first key out of order, keys that do not fit a list of 4-byte
// keys, a streak of dense rows long enough that skipping the workspace
// pays (see workspace.streak), or any access other than adding into the
// row at a key (addDict, merge) ends the mode for good: the rows so far
// become closed builders (pointing into the arrays) and the dictionary
// goes on the general way. So the mode changes what a row costs, never
// the entries, their order or the bytes they take.

// seqRows holds the closed rows of a dictionary in sequential mode, and
// the builder of the open one.
type seqRows struct {
	w    *workspace // the rows' level
	cur  *builder   // the row being built, reused from row to row
	key  int64      // the greatest key given a row so far (-1: none)
	live bool       // cur holds row key, not yet copied out
	keys []int64    // keys of the closed non-empty rows, increasing
	// Row r's values end at vEnds[r] in reals or ints, its list keys at
	// cEnds[r] in cols; a row with values but no list keys is dense
	// (its values are at keys 0, 1, ...).
	vEnds []int
	cEnds []int
	cols  []int32
	reals []float64
	ints  []int64
}

// seqShortRow: a streak of dense rows shorter than this does not end
// sequential mode: what skipping the workspace saves on so few keys is
// less than what a builder per row costs.
const seqShortRow = 32

// startsSequential reports whether a new builder of spec s starts in
// sequential mode: a dense level of dense rows of scalars.
func startsSequential(s *bspec) bool {
	return s.depth == 2 && s.dense && s.kid.dense
}

// seqRow returns the open row at key k of b in sequential mode, starting
// the mode on b's first row, or nil when k is out of order or the mode
// cannot go on (b then has left it).
func (b *builder) seqRow(k int64) *builder {
	x := b.x
	s := x.seq
	if s == nil {
		x.sequential = false
		if k < 0 {
			return nil
		}
		t := x.tree
		s = &seqRows{w: t.workspace(1), key: -1}
		s.cur = t.alloc()
		s.cur.spec, s.cur.ws, s.cur.listed = b.spec.kid, s.w, true
		x.seq = s
	}
	switch {
	case s.live && k == s.key:
	case k > s.key && s.closeRow():
		s.key, s.live = k, true
	default:
		b.leaveSequential()
		return nil
	}
	s.cur.acquire()
	return s.cur
}

// closeRow copies the open row, if any, to the end of the arrays and
// empties cur. It reports false, leaving the row in cur, when the row
// cannot be kept there.
func (s *seqRows) closeRow() bool {
	if !s.live {
		return true
	}
	c := s.cur
	if c.open {
		c.release()
	}
	var ok bool
	if c.spec.real {
		ok = closeSeqRow(s, c, &s.reals, &c.reals, &s.w.realBlock, &s.w.denseReals, c.x != nil && len(c.x.mreal) > 0)
	} else {
		ok = closeSeqRow(s, c, &s.ints, &c.ints, &s.w.intBlock, &s.w.denseInts, c.x != nil && len(c.x.mint) > 0)
	}
	if ok {
		s.live = false
	}
	return ok
}

// closeSeqRow is closeRow for the values in vals (the arrays') and own
// (the row's), carved from block if a list, from dense if a dense row;
// spilled says whether the row has keys outside its dense slice.
func closeSeqRow[V int64 | float64](s *seqRows, c *builder, vals, own, block, dense *[]V, spilled bool) bool {
	if c.ws == nil {
		// Dense: a slice of its own from key 0.
		if spilled || (s.w.streak && len(*own) >= seqShortRow) {
			return false
		}
		s.w.streak = false
		if nonZeroCount(*own) > 0 {
			*vals = append(*vals, *own...)
			s.keys = append(s.keys, s.key)
			s.vEnds = append(s.vEnds, len(*vals))
			s.cEnds = append(s.cEnds, len(s.cols))
		}
		uncarveDense(dense, &s.w.carvedDense, *own)
		c.ws, c.listed = s.w, true
	} else {
		if c.lkeys != nil {
			return false
		}
		if n := len(c.nkeys); n > 0 {
			s.cols = append(s.cols, c.nkeys...)
			*vals = append(*vals, *own...)
			s.keys = append(s.keys, s.key)
			s.vEnds = append(s.vEnds, len(*vals))
			s.cEnds = append(s.cEnds, len(s.cols))
			uncarve(s.w, block, c.nkeys)
		}
	}
	c.nkeys, *own = nil, nil
	return true
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

// uncarve gives back to the level's blocks the list of a row just
// released (keys, the last carved from them: see carve) once it has been
// copied elsewhere.
func uncarve[V any](w *workspace, block *[]V, keys []int32) {
	n, kb := len(keys), w.keyBlock
	if n == 0 || len(kb) < n || &kb[len(kb)-n] != &keys[0] {
		return
	}
	w.keyBlock = kb[:len(kb)-n]
	*block = (*block)[:len(*block)-n]
	w.carved -= n
}

// uncarveDense gives back to block the dense slice own, the last carved
// from it (see carveDense), once it has been copied elsewhere.
func uncarveDense[V any](block *[]V, carved *int, own []V) {
	n, b := len(own), *block
	if n == 0 || len(b) < n || &b[len(b)-n] != &own[0] {
		return
	}
	clear(own) // carveDense gives zeroed slices
	*block = b[:len(b)-n]
	*carved -= n
}

// rowOf returns row r of the arrays as a builder of spec s, closed: a
// list of the level (ws set) or a plain dense leaf.
func (s *seqRows) rowOf(r int, spec *bspec, ws *workspace) *builder {
	nb := &builder{spec: spec}
	s.fill(nb, r, ws)
	return nb
}

// fill makes nb, an empty builder of the rows' spec, row r.
func (s *seqRows) fill(nb *builder, r int, ws *workspace) {
	v0, c0 := 0, 0
	if r > 0 {
		v0, c0 = s.vEnds[r-1], s.cEnds[r-1]
	}
	v1, c1 := s.vEnds[r], s.cEnds[r]
	if nb.spec.real {
		nb.reals = s.reals[v0:v1:v1]
	} else {
		nb.ints = s.ints[v0:v1:v1]
	}
	if c1 > c0 {
		nb.nkeys, nb.ws, nb.listed = s.cols[c0:c1:c1], ws, true
	}
}

// leaveSequential ends b's sequential mode: every closed row becomes a
// closed builder of the level (sharing the arrays, which are not
// written again), the open row keeps its builder, and b is an ordinary
// dense builder from then on.
func (b *builder) leaveSequential() {
	x := b.x
	s := x.seq
	x.seq, x.sequential = nil, false
	if s == nil {
		return
	}
	t := x.tree
	for r, k := range s.keys {
		nb := t.alloc()
		nb.spec = b.spec.kid
		s.fill(nb, r, s.w)
		b.slot(k).b = nb
	}
	if s.live {
		b.slot(s.key).b = s.cur
	}
}

// finishSequential closes the last row of b in sequential mode, and
// reports whether b is still in it.
func (b *builder) finishSequential() bool {
	s := b.x.seq
	if s == nil {
		return false
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
	if len(os.keys) > 0 && os.keys[0] <= s.key {
		return false
	}
	voff, coff := len(s.reals)+len(s.ints), len(s.cols)
	s.keys = append(s.keys, os.keys...)
	for r := range os.keys {
		s.vEnds = append(s.vEnds, voff+os.vEnds[r])
		s.cEnds = append(s.cEnds, coff+os.cEnds[r])
	}
	s.cols = append(s.cols, os.cols...)
	s.reals = append(s.reals, os.reals...)
	s.ints = append(s.ints, os.ints...)
	s.key = max(s.key, os.key)
	return true
}

// seqNode is a dictionary built in sequential mode, frozen: its rows in
// flat arrays.
type seqNode struct {
	spec *bspec // the rows' spec
	rows *seqRows
}

func (s *seqRows) freeze(spec *bspec) *seqNode {
	return &seqNode{spec: spec, rows: s}
}

// row returns row p: a closed list row of a workspace level (whose
// values are all non-zero) or a dense leaf.
func (d *seqNode) row(p int) dict {
	r := d.rows.rowOf(p, d.spec, nil)
	if r.nkeys != nil {
		return (*rowLeaf)(r)
	}
	return &denseLeaf{reals: r.reals, ints: r.ints, real: d.spec.real}
}

func (d *seqNode) size() int                     { return len(d.rows.keys) }
func (d *seqNode) keyAt(p int) int64             { return d.rows.keys[p] }
func (d *seqNode) intAt(int) int64               { return 0 }
func (d *seqNode) realAt(int) float64            { return 0 }
func (d *seqNode) dictAt(p int) dict             { return d.row(p) }
func (d *seqNode) has(k int64) bool              { _, ok := slices.BinarySearch(d.rows.keys, k); return ok }
func (d *seqNode) getInt(int64) (int64, bool)    { return 0, true }
func (d *seqNode) getReal(int64) (float64, bool) { return 0, true }
func (d *seqNode) getDict(k int64) dict {
	if p, ok := slices.BinarySearch(d.rows.keys, k); ok {
		return d.row(p)
	}
	return empty
}

// entries calls visit for every non-zero entry of d, row by row, with
// the row's key in coords[level] and the entry's in coords[level+1] (see
// Result.Entries).
func (d *seqNode) entries(coords []int64, level int, visit func(coords []int64, i int64, f float64)) {
	s := d.rows
	v0, c0 := 0, 0
	for r, k := range s.keys {
		coords[level] = k
		v1, c1 := s.vEnds[r], s.cEnds[r]
		for q := v0; q < v1; q++ {
			key := int64(q - v0)
			if c1 > c0 {
				key = int64(s.cols[c0+q-v0])
			}
			coords[level+1] = key
			if d.spec.real {
				if v := s.reals[q]; v != 0 {
					visit(coords, int64(v), v)
				}
			} else if v := s.ints[q]; v != 0 {
				visit(coords, v, float64(v))
			}
		}
		v0, c0 = v1, c1
	}
}
