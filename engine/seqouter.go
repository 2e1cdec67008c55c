package engine

import "slices"

// Rows of rows that arrive in order. TTM's result {i -> {j -> {k -> v}}}
// is a dense level of dense levels of rows, and the plan walks i in
// increasing order, each once (a CSF tensor's first level), and j in
// increasing order within each i (its second): the rows (i, j) arrive in
// lexicographic order. The general builder gives each i a builder of
// rows (a workspace of children, its list of kids when closed) and each
// row a builder of its own; with many rows of about one entry that
// machinery is most of the kernel's time.
//
// So a dense dictionary of depth 3 over dense rows starts in sequential
// mode too: one seqRows holds every row (i, j) in order, as for a
// dictionary of depth 2, and the outer level records, per i with rows,
// its key and where its rows end. One builder of depth 2 (mid), reused,
// stands for the open i: its rows are added through the shared seqRows,
// whose order check starts again at each i. Whatever ends the mode for
// the rows of one i (a j out of order, any other access) ends it for the
// whole dictionary: every closed i becomes a closed builder of rows (a
// list of closed row builders over the same storage), the open one mid
// itself, opened in its level's workspace, and the dictionary goes on the
// general way.

// seqOuter is the outer level of a dictionary of depth 3 in sequential
// mode.
type seqOuter struct {
	root *builder // the dictionary
	mid  *builder // the open value, its rows in mid.x.seq
	key  int64    // the greatest key given a value so far (-1: none)
	live bool     // mid holds the value at key, not yet recorded
	keys []int64  // keys of the closed values with rows, increasing
	ends []int    // value r's rows end at row ends[r] of the seqRows
}

// seqMid returns the open value at key k of b, a dictionary of depth 3
// in sequential mode, starting the mode on b's first value, or nil when
// k is out of order or the mode cannot go on (b then has left it).
func (b *builder) seqMid(k int64) *builder {
	x := b.x
	s := x.seq
	if s == nil {
		x.sequential = false
		if k < 0 {
			return nil
		}
		t := x.tree
		s = newSeqRows(t, b.spec.kid.kid)
		mid := t.alloc()
		mid.spec, mid.x = b.spec.kid, &builderAux{tree: t, seq: s}
		s.outer = &seqOuter{root: b, mid: mid, key: -1}
		x.seq = s
	}
	o := s.outer
	switch {
	case o.live && k == o.key:
	case k > o.key && o.closeMid():
		o.key, o.live = k, true
	default:
		o.leave()
		return nil
	}
	return o.mid
}

// outerPooled is the fewest values of a level of rows of rows whose
// records grow to longRow entries, out of the pools.
const outerPooled = 1 << 10

// from is the index of the open value's first row.
func (o *seqOuter) from() int {
	if n := len(o.ends); n > 0 {
		return o.ends[n-1]
	}
	return 0
}

// closeMid records the open value, if any, and empties mid. It reports
// false, leaving the value open, when its last row cannot be kept.
func (o *seqOuter) closeMid() bool {
	if !o.live {
		return true
	}
	s := o.mid.x.seq
	if !s.closeRow() {
		return false
	}
	if n := len(s.keys); n > o.from() {
		o.record(n)
	}
	s.key, o.live = -1, false
	return true
}

// record records the value at o.key, its rows ending at row n of the
// seqRows.
func (o *seqOuter) record(n int) {
	if len(o.keys) == cap(o.keys) {
		// Doubled, and past outerPooled values grown at once to
		// what the pools give (pooledGrow, as the rows' records
		// are): append grows a long slice by a quarter, and a
		// level of many values (TTM's 2e4 rows of fibers) was
		// copied, zeroed and faulted in anew many times a run.
		var out *runBlocks
		if t := o.root.x.tree; t != nil {
			out = t.out
		}
		m := max(len(o.keys), 16)
		if len(o.keys) >= outerPooled {
			m = max(m, longRow-len(o.keys))
		}
		o.keys, o.ends = pooledGrow(o.keys, m, out), pooledGrow(o.ends, m, out)
	}
	o.keys = append(o.keys, o.key)
	o.ends = append(o.ends, n)
}

// leave ends sequential mode for the dictionary and its open value: see
// the comment at the top.
func (o *seqOuter) leave() {
	root, mid := o.root, o.mid
	s := mid.x.seq
	root.x.seq, root.x.sequential, mid.x.seq = nil, false, nil
	t := root.x.tree
	r, ci := 0, 0
	for v, k := range o.keys {
		// A closed value: newKid's empty builder, given its list.
		nb := root.newKid()
		n := o.ends[v] - r
		nb.lkeys, nb.x.kids = make([]int64, 0, n), make([]kid, 0, n)
		for ; r < o.ends[v]; r++ {
			nb.lkeys = append(nb.lkeys, s.keys[r])
			nb.x.kids = append(nb.x.kids, kid{b: s.closedRow(t, r, &ci)})
		}
		root.slot(k).b = nb
	}
	if !o.live {
		return
	}
	// mid becomes the open value's builder, as newKid and acquire
	// would have made it.
	mid.ws, mid.listed = t.workspace(2), true
	mid.acquire()
	for ; r < len(s.keys); r++ {
		mid.slot(s.keys[r]).b = s.closedRow(t, r, &ci)
	}
	if s.live {
		s.cur.settle()
		mid.slot(s.key).b = s.cur
	}
	root.slot(o.key).b = mid
}

// append moves the values of p, with every key greater than o's, after
// o's and reports whether it could; both are closed (see
// appendSequential).
func (o *seqOuter) append(p *seqOuter) bool {
	if len(p.keys) > 0 && p.keys[0] <= o.key {
		return false
	}
	off := o.mid.x.seq.appendRows(p.mid.x.seq)
	o.keys = append(o.keys, p.keys...)
	for _, e := range p.ends {
		o.ends = append(o.ends, off+e)
	}
	o.key = max(o.key, p.key)
	return true
}

// seqOuterNode is a dictionary of depth 3 built in sequential mode,
// frozen: value p is the rows ends[p-1] to ends[p]-1 of rows.
type seqOuterNode struct {
	noScalars
	spec *bspec // the rows' spec
	rows *seqRows
	keys []int64
	ends []int
}

func (d *seqOuterNode) size() int         { return len(d.keys) }
func (d *seqOuterNode) keyAt(p int) int64 { return d.keys[p] }

func (d *seqOuterNode) dictAt(p int) dict {
	lo := 0
	if p > 0 {
		lo = d.ends[p-1]
	}
	return &seqNode{spec: d.spec, rows: d.rows, lo: lo, hi: d.ends[p]}
}

func (d *seqOuterNode) getDict(k int64) dict {
	if p, ok := slices.BinarySearch(d.keys, k); ok {
		return d.dictAt(p)
	}
	return empty
}
