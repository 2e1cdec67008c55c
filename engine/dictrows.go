package engine

import (
	"sync"

	"github.com/storel/storel/ir"
)

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
	if leaf.vec == nil || leaf.vdict || len(leaf.vec.guards) > 0 || len(leaf.vec.lets) > 0 {
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
	var g *rowGather
	switch {
	case other.Op == ir.OpVar && other.Name == leaf.e.Vars[1] && leaf.vreal:
	case !leaf.vreal:
		if g = c.gatherOf(other, leaf.e.Vars[1]); g == nil {
			return nil
		}
	default:
		return nil
	}
	v := c.windowsOf(o, body, lb, leaf, src.Args[1], t)
	if v == nil {
		return nil
	}
	rows, _ := c.dictExpr(root)
	return &rowsScatter{v: v, leaf: leaf, rows: rows, gather: g}
}

// rowGather reads the values a scatter adds from a real array x at the
// rows' int values plus off: a copy that stores each entry's position
// (M4's transposed copy, c -> j -> p + 1) read at B_val(r - 1).
type rowGather struct {
	x   *cell
	off int64
	// The values of the last compressed rows gathered (one copy per
	// run): from names them, ok is false when a value falls outside x.
	mu   sync.Mutex
	from *builtCSR
	vals []float64
	ok   bool
}

// gatherOf returns the gather of e, a read x(v), x(v + c) or x(v - c) of
// a real array x at the leaf's int value v, or nil.
func (c *compiler) gatherOf(e *ir.Expr, v string) *rowGather {
	if e.Op != ir.OpLookup || len(e.Args) != 2 || e.Args[0].Op != ir.OpGlobal {
		return nil
	}
	x := c.cell(e.Args[0])
	if x.info.Kind != ir.ObjArray || x.info.Elem != ir.Real {
		return nil
	}
	ix, off := e.Args[1], int64(0)
	if (ix.Op == ir.OpAdd || ix.Op == ir.OpSub) && len(ix.Args) == 2 && ix.Args[1].Op == ir.OpConst && ix.Args[1].Type == ir.IntType {
		off = ix.Args[1].I
		if ix.Op == ir.OpSub {
			off = -off
		}
		ix = ix.Args[0]
	}
	if ix.Op != ir.OpVar || ix.Name != v {
		return nil
	}
	return &rowGather{x: x, off: off}
}

// of returns the values of the compressed rows r read through x, or
// false when one is outside x (the per-entry path then reports it).
func (g *rowGather) of(r *builtCSR) ([]float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.from != r {
		g.from, g.vals, g.ok = r, growTo(g.vals[:0], len(r.ints)), true
		xs := g.x.reals[:min(int64(len(g.x.reals)), g.x.n)]
		for i, p := range r.ints {
			q := p + g.off
			if uint64(q) >= uint64(len(xs)) {
				g.ok = false
				break
			}
			g.vals[i] = xs[q]
		}
	}
	return g.vals, g.ok
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

// scatterBuilt adds each lane's row of the built dictionary t (key
// ws[q]) times its factor ts[q] into the row b, or reports false
// (nothing added) when a value read at the rows' positions leaves its
// array: compressed rows made once where t is a dense level, else the
// rows one lane at a time.
func (r *rowsScatter) scatterBuilt(fr *frame, s *vstate, o *nloop, t dict, p0 int64, ws []int64, ts []float64, b *builder) bool {
	if c := r.rowsCSR(t, r.gather == nil); c != nil {
		vals, ok := c.vals, true
		if r.gather != nil {
			if vals, ok = r.gather.of(c); !ok {
				return false
			}
		}
		scatterRows(fr, o, c.pos, c.idx, int64(len(c.idx)), b, p0, ws, ts, vals)
		return true
	}
	for q, w := range ws {
		keys, vals, ok := r.rowSlices(t.getDict(w), s)
		if !ok {
			o.runPerIteration(fr, p0+int64(q), p0+int64(q)+1, b)
			if fr.err != nil {
				return true
			}
			continue
		}
		scatterAdd(b, keys, vals, ts[q])
	}
	return true
}

// rowSlices returns the keys of row m in increasing key order and the
// values the scatter adds, zeros left out as every walk of a built
// dictionary leaves them: the row's own slices where it has them
// (entryKeys), else s's buffers; false when a gathered value falls
// outside its array.
func (r *rowsScatter) rowSlices(m dict, s *vstate) ([]int64, []float64, bool) {
	n := m.size()
	if cap(s.rowKeys) < n {
		s.rowKeys, s.rowVals, s.rowInts = make([]int64, n), make([]float64, n), make([]int64, n)
	}
	keys := entryKeys(m, 0, n, s.rowKeys[:n])
	g := r.gather
	if g == nil {
		return keys, entryVals(m, 0, n, s.rowVals[:n]), true
	}
	vals, xs := s.rowVals[:n], g.x.reals[:min(int64(len(g.x.reals)), g.x.n)]
	for i, p := range entryVals(m, 0, n, s.rowInts[:n]) {
		q := p + g.off
		if uint64(q) >= uint64(len(xs)) {
			return nil, nil, false
		}
		vals[i] = xs[q]
	}
	return keys, vals, true
}

// dictRowsFirst returns nl's rowsScatter when its leaf walks rows of a
// built dictionary, tried before position space, which lays those rows
// out entry by entry.
func (c *compiler) dictRowsFirst(nl *nloop, body *ir.Expr, lb loopBody) *rowsScatter {
	leaf, ok := scatterLeaf(nl, lb)
	if !ok || leaf == nil || leaf.kind != itDict {
		return nil
	}
	return c.dictRowsScatterOf(nl, body, lb, leaf)
}

// builtCSR is a built dictionary of rows laid out as compressed rows:
// row k's keys idx[pos[k]:pos[k+1]], its values alongside (vals, or ints
// for rows of ints), zeros left out. Made once per run, on the first
// scatter of its rows, it is read through the segment form's scatter
// (scatterRows) at the cost of an index array's segment, not a row's
// per-entry methods (a row of a dictionary built in sequential mode is
// a builder made per read).
type builtCSR struct {
	pos, idx []int64
	vals     []float64
	ints     []int64
}

// rowsCSR returns t's rows compressed, of reals (real) or of ints, as t's
// leaves are, made on the first call for t (one per run), or nil when
// t's keys are negative or spread too far for their number (holdKeysOf's
// bound): the rows are then read one lane at a time.
func (r *rowsScatter) rowsCSR(t dict, real bool) *builtCSR {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.csrOf != t {
		if tr, ok := t.(*laidCSR); ok {
			r.csrOf, r.csr = t, tr.csr(real)
			if r.csr != nil {
				return r.csr
			}
		}
		r.csrOf, r.csr = t, &builtCSR{}
		var ok bool
		if real {
			r.csr.pos, r.csr.idx, r.csr.vals, ok = compressRows(t, entryVals[float64], chunkReals)
		} else {
			r.csr.pos, r.csr.idx, r.csr.ints, ok = compressRows(t, entryVals[int64], chunkInts)
		}
		if !ok {
			r.csr = nil
		}
	}
	return r.csr
}

// compressRows lays the rows of t out one after another by key: row k's
// keys are idx[pos[k]:pos[k+1]], its values (read by entries, or in the
// chunks by chunk where t was built in sequential mode) alongside; false
// when t's keys do not index a slice of a size near their number.
func compressRows[V int64 | float64](t dict, entries func(dict, int, int, []V) []V, chunk func(*seqChunk) *[]V) (pos, idx []int64, vals []V, ok bool) {
	n := t.size()
	if n > 0 && (t.keyAt(0) < 0 || t.keyAt(n-1) >= max(maxDenseJump, denseKeysFactor*int64(n))) {
		return nil, nil, nil, false
	}
	width := int64(0)
	if n > 0 {
		width = t.keyAt(n-1) + 1
	}
	pos = make([]int64, width+1)
	if d, ok := t.(*seqNode); ok {
		idx, vals = compressSeq(d, chunk, pos)
	} else {
		rows, total := make([]dict, n), 0
		for p := range rows {
			rows[p] = t.dictAt(p)
			total += rows[p].size()
		}
		idx, vals = make([]int64, 0, total), make([]V, 0, total)
		var ks []int64
		var vs []V
		for p, row := range rows {
			m := row.size()
			if cap(ks) < m {
				ks, vs = make([]int64, m), make([]V, m)
			}
			idx = append(idx, entryKeys(row, 0, m, ks[:m])...)
			vals = append(vals, entries(row, 0, m, vs[:m])...)
			pos[t.keyAt(p)+1] = int64(len(idx))
		}
	}
	for k := 1; k < len(pos); k++ {
		pos[k] = max(pos[k], pos[k-1]) // an absent row is empty
	}
	return pos, idx, vals, true
}

// compressSeq is compressRows' loop for a dictionary built in sequential
// mode: its rows are read where they lie in the chunks, with no
// dictionary made per row (seqNode.row), as the rows' dictionaries list
// them: a list row whole (its values are non-zero), a dense row's
// non-zero values at their offsets. It sets the row ends in pos.
func compressSeq[V int64 | float64](d *seqNode, chunk func(*seqChunk) *[]V, pos []int64) (idx []int64, vals []V) {
	s := d.rows
	if d.hi <= d.lo {
		return nil, nil
	}
	first := s.chunkOf(d.lo)
	total, ci := 0, first
	for r := d.lo; r < d.hi; r++ {
		ci = s.chunkFrom(r, ci)
		v0, v1, _, _ := s.span(r, ci)
		total += v1 - v0
	}
	idx, vals = make([]int64, 0, total), make([]V, 0, total)
	nestSaw("built rows compressed where they lie")
	ci = first
	for r := d.lo; r < d.hi; r++ {
		ci = s.chunkFrom(r, ci)
		ch := &s.chunks[ci]
		v0, v1, c0, c1 := s.span(r, ci)
		vs := (*chunk(ch))[v0:v1]
		if c1 > c0 {
			for _, k := range ch.cols[c0:c1] {
				idx = append(idx, int64(k))
			}
			vals = append(vals, vs...)
		} else {
			for q, v := range vs {
				if v != 0 {
					idx, vals = append(idx, int64(q)), append(vals, v)
				}
			}
		}
		pos[s.keys[r]+1] = int64(len(idx))
	}
	return idx, vals
}
