package engine

import "github.com/storel/storel/ir"

// Rows of a built dictionary scattered into a dense row of the result:
// a loop o whose leaf walks row w of a let-bound temporary t (a copy of
// a matrix compacted or transposed once, t(k) for each entry (i, k) of
// A in MMM) and adds its entries times a factor of o's lanes,
//
//	sum(<j, b> in t(w)) { j -> b * f }
//
// runs as the segment form does (rowsScatter): o's windows w and factors
// f a batch of positions at a time, then each row's keys and values
// handed to one scatter, with no frame set per entry. In position space
// (rows laid out one after another, nestflat.go) every entry pays a copy
// and the batch machinery, which is most of the work for rows of a few
// entries.

// dictRowsScatterOf returns o's rowsScatter over the built rows walked by
// leaf, or nil when o's body or the leaf does not have that form.
func (c *compiler) dictRowsScatterOf(o *nloop, body *ir.Expr, lb loopBody, leaf *nloop) *rowsScatter {
	if leaf.vec == nil || leaf.vdict || !leaf.vreal || len(leaf.vec.guards) > 0 || len(leaf.vec.lets) > 0 {
		return nil
	}
	src := leaf.e.Args[0]
	if src.Op != ir.OpLookup || len(src.Args) != 2 || src.Args[0].Op != ir.OpVar {
		return nil
	}
	root := src.Args[0]
	if t := c.typeOf(root); t.Depth != 2 || bindsInChain(o, body, root.Name) {
		return nil
	}
	if b, ok := c.lookupVar(root.Name); !ok || b.slot < 0 {
		return nil
	}
	// The leaf's value is its entry's value times a factor that reads
	// neither of its variables, at the entry's own key.
	lbody := leaf.e.Args[1]
	if lbody.Op != ir.OpSingleton || lbody.Args[0].Op != ir.OpVar || lbody.Args[0].Name != leaf.e.Vars[0] {
		return nil
	}
	t := scatterFactor(leaf)
	if t == nil {
		return nil
	}
	m := lbody.Args[1]
	other := m.Args[0]
	if other == t {
		other = m.Args[1]
	}
	if other.Op != ir.OpVar || other.Name != leaf.e.Vars[1] {
		return nil
	}
	row := &ir.Expr{Op: ir.OpSingleton, Args: []*ir.Expr{src.Args[1], t}, Type: leaf.e.Type, Pos: leaf.e.Pos}
	synth := replaceLeaf(body, leaf.e, row)
	if synth == nil {
		return nil
	}
	lets, guards := len(o.info.lets), len(o.info.guards)
	v := c.vectorize(o, synth, lb)
	o.info.lets, o.info.guards = o.info.lets[:lets], o.info.guards[:guards]
	if v == nil || v.key == nil || v.key2 != nil {
		return nil
	}
	rows, _ := c.dictExpr(root)
	return &rowsScatter{v: v, leaf: leaf, rows: rows}
}

// bindsInChain reports whether o or a let of its body's chain of lets
// and guards binds name: the rows are then not one dictionary for the
// whole loop.
func bindsInChain(o *nloop, body *ir.Expr, name string) bool {
	if o.e.Vars[0] == name || o.e.Vars[1] == name {
		return true
	}
	for body.Op == ir.OpLet || body.Op == ir.OpIf {
		if body.Op == ir.OpLet && len(body.Vars) > 0 && body.Vars[0] == name {
			return true
		}
		body = body.Args[len(body.Args)-1]
	}
	return false
}

// runRows runs positions lo..hi-1 of o, a batch at a time: each lane's
// row of the built dictionary is scattered times the lane's factor; a
// batch whose guards fail or whose reads leave their arrays runs through
// o's statements.
func (r *rowsScatter) runRows(fr *frame, s *vstate, o *nloop, lo, hi int64, b *builder) {
	t := r.rows(fr)
	if fr.err != nil {
		return
	}
	for p0 := lo; p0 < hi; p0 += vbatch {
		n := int(min(hi-p0, vbatch))
		if !r.rowsBatch(fr, s, o, t, p0, n, b) {
			o.iterate(fr, p0, p0+int64(n), b)
		}
		if fr.err != nil {
			return
		}
	}
	nestSaw("dict rows scatter")
}

// rowsBatch scatters the rows of positions p0..p0+n-1, or reports false
// (nothing added) when a guard fails in a lane or a read leaves its
// array.
func (r *rowsScatter) rowsBatch(fr *frame, s *vstate, o *nloop, t dict, p0 int64, n int, b *builder) bool {
	v := r.v
	if !v.check(fr, s, p0, n) {
		return false
	}
	kv, ok := s.eval(fr, v.key, p0, n)
	if !ok {
		return false
	}
	ws := s.ints(v.key, kv, n)
	tv, ok := s.eval(fr, v.val, p0, n)
	if !ok {
		return false
	}
	ts := s.reals(v.val, tv, n)
	if c := rowsCSR(t); c != nil {
		scatterRows(fr, o, c.pos, c.idx, int64(len(c.idx)), b, p0, ws, ts, c.vals)
		return true
	}
	for q, w := range ws {
		keys, vals := rowSlices(t.getDict(w), s)
		scatterAdd(b, keys, vals, ts[q], 1, 1, true)
	}
	return true
}

// rowSlices returns the keys and real values of row m in increasing key
// order, zeros left out as every walk of a built dictionary leaves them:
// the row's own slices where it has them (entryKeys), else s's buffers.
func rowSlices(m dict, s *vstate) ([]int64, []float64) {
	n := m.size()
	if cap(s.rowKeys) < n {
		s.rowKeys, s.rowVals = make([]int64, n), make([]float64, n)
	}
	return entryKeys(m, 0, n, s.rowKeys[:n]), entryReals(m, 0, n, s.rowVals[:n])
}

// dictRowsFirst returns nl's rowsScatter when its leaf walks rows of a
// built dictionary, tried before position space, which lays those rows
// out entry by entry.
func (c *compiler) dictRowsFirst(nl *nloop, body *ir.Expr, lb loopBody) *rowsScatter {
	if nl.kind == itDict || lb.spec == nil || lb.spec.depth != 1 || !lb.spec.dense || !lb.spec.real {
		return nil
	}
	var leaf *nloop
	for s := nl.stmt; s != nil; s = s.next {
		switch {
		case s.kind == stGuard, s.kind == stLet && s.loop == nil && !s.hasPost():
		case s.kind == stLoop && s.next == nil:
			leaf = s.loop
		default:
			return nil
		}
	}
	if leaf == nil || leaf.kind != itDict {
		return nil
	}
	return c.dictRowsScatterOf(nl, body, lb, leaf)
}

// builtCSR is a built dictionary of real rows laid out as compressed rows:
// row k's keys idx[pos[k]:pos[k+1]], its values vals alongside, zeros
// left out. Made once, on the first scatter of its rows, it is read
// through the segment form's scatter (scatterRows) at the cost of an
// index array's segment, not a row's per-entry methods.
type builtCSR struct {
	pos, idx []int64
	vals     []float64
}

// rowsCSR returns t's compressed rows, or nil when t is not a dense
// level of real rows (its keys outside the slice, in the spill map, are
// left to the per-lane path: their windows are outside pos).
func rowsCSR(t dict) *builtCSR {
	d, ok := t.(*denseNode)
	if !ok {
		return nil
	}
	d.init()
	d.csrOnce.Do(func() {
		n := 0
		for _, c := range d.kids {
			if c != nil {
				n += c.size()
			}
		}
		r := &builtCSR{pos: make([]int64, len(d.kids)+1), idx: make([]int64, 0, n), vals: make([]float64, 0, n)}
		var ks []int64
		var vs []float64
		for k, c := range d.kids {
			if c != nil {
				m := c.size()
				if cap(ks) < m {
					ks, vs = make([]int64, m), make([]float64, m)
				}
				r.idx = append(r.idx, entryKeys(c, 0, m, ks[:m])...)
				r.vals = append(r.vals, entryReals(c, 0, m, vs[:m])...)
			}
			r.pos[k+1] = int64(len(r.idx))
		}
		d.csr = r
	})
	return d.csr
}
