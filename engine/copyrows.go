package engine

import (
	"fmt"
	"math"
	"sync"

	"github.com/storel/storel/ir"
)

// A copy of a two-level walk grouped by the inner level's coordinate (the
// optimizer's M4: MMM's B stored by columns read by rows),
//
//	sum(<j, _> in lo:hi) sum(<p, c> in idx(a(j):b(j))) { @dense c -> { @dense j -> v } }
//
// adds its entries to the rows c in the order of the walk, which is not
// the rows' order: through the builder every entry finds its row, and
// every row grows on its own (MMM over bcsstk16 with B in CSC, 250
// columns, 38k entries: 3-5 ms, a third of the run). Its entries are the walk's, so
// the copy is built as a transposition by counting: the rows' sizes
// first, then each entry written at its row's next position, in the
// walk's order. Entries at one (c, j) are then neighbours, added in that
// order as the builder adds them, and zeros are dropped: the same
// dictionary, bit for bit. The rows stay laid out one after another,
// which is the form the rows scatter reads (rowsCSR).

// transposedCopy compiles e as such a copy, or returns nil when e is not
// one. The copy falls back to general, e's general compilation, for a
// run whose keys are negative or spread too far for their number, or
// whose segments leave the array (general reports the error).
func (c *compiler) transposedCopy(e *ir.Expr, t ir.Type, general func() dictFn) dictFn {
	if e.Op != ir.OpSum || t.Depth != 2 || e.Args[0].Op != ir.OpRange {
		return nil
	}
	in := e.Args[1]
	if in.Op != ir.OpSum || in.Args[0].Op != ir.OpSubArray {
		return nil
	}
	sub := in.Args[0]
	if sub.Args[0].Op != ir.OpGlobal {
		return nil
	}
	j, u, p, cv := e.Vars[0], e.Vars[1], in.Vars[0], in.Vars[1]
	if j == p || j == cv || p == cv || u == p || u == cv || u == j {
		return nil
	}
	outer := in.Args[1]
	if outer.Op != ir.OpSingleton || outer.Ann != ir.AnnDense || !isVarSlot(outer.Args[0], cv) {
		return nil
	}
	row := outer.Args[1]
	if row.Op != ir.OpSingleton || row.Ann != ir.AnnDense || !isVarSlot(row.Args[0], j) {
		return nil
	}
	val := row.Args[1]
	loops := false
	ir.Walk(val, func(n *ir.Expr) bool {
		loops = loops || n.Op == ir.OpSum || n.Op == ir.OpMerge || n.Op == ir.OpLet
		return !loops
	})
	if loops {
		return nil
	}
	if ir.FreeVars(in)[u] {
		return nil
	}
	cl := c.cell(sub.Args[0])
	if cl.info.Kind != ir.ObjArray || cl.info.Elem != ir.Int {
		return nil
	}
	real := t.Base == ir.Real

	lo, hi := c.intExpr(e.Args[0].Args[0], "range bound"), c.intExpr(e.Args[0].Args[1], "range bound")
	js := c.bind(j, ir.IntType)
	a, b := c.intExpr(sub.Args[1], "subarray bound"), c.intExpr(sub.Args[2], "subarray bound")
	ps, cs := c.bind(p, ir.IntType), c.bind(cv, ir.IntType)
	vt := c.typeOf(val)
	if vt.Depth != 0 || vt.Base == ir.Bool {
		c.unbind(3)
		return nil
	}
	v := toType(c.expr(val), t.Base)
	c.unbind(3)
	fallback := general()
	c.copies = append(c.copies, e)

	return func(fr *frame) dict {
		l, h := lo(fr), hi(fr)
		if h <= l {
			return empty
		}
		idx := cl.ints
		// The segments of the walk, and the rows' sizes.
		segs := make([]int64, 0, 2*(h-l))
		n, width := int64(0), int64(0)
		for k := l; k < h; k++ {
			fr.i[js] = k
			s, t := a(fr), b(fr)
			if fr.err != nil || s < 0 || s > t || t > int64(len(idx)) {
				// The general walk reports the first error in its
				// order, where a value may fail before this bound.
				fr.err = nil
				return fallback(fr)
			}
			segs = append(segs, s, t)
			n += t - s
			for _, x := range idx[s:t] {
				if x < 0 {
					return fallback(fr)
				}
				width = max(width, x+1)
			}
		}
		if width > max(maxDenseJump, denseKeysFactor*n) {
			return fallback(fr)
		}
		pos := make([]int64, width+1)
		for q := 0; q < len(segs); q += 2 {
			for _, x := range idx[segs[q]:segs[q+1]] {
				pos[x+1]++
			}
		}
		for x := int64(1); x <= width; x++ {
			pos[x] += pos[x-1]
		}
		next := make([]int64, width)
		copy(next, pos[:width])
		keys := make([]int64, n)
		var ints []int64
		var reals []float64
		if real {
			reals = make([]float64, n)
		} else {
			ints = make([]int64, n)
		}
		for q := 0; q < len(segs); q += 2 {
			k := l + int64(q/2)
			fr.i[js] = k
			for at := segs[q]; at < segs[q+1]; at++ {
				x := idx[at]
				fr.i[ps], fr.i[cs] = at, x
				w := next[x]
				next[x]++
				keys[w] = k
				if real {
					reals[w] = v.f(fr)
				} else {
					ints[w] = v.i(fr)
				}
				if fr.err != nil {
					return empty
				}
			}
		}
		nestSaw("transposed copy")
		return compactRows(pos, keys, ints, reals, real)
	}
}

// rowsCopiesOff builds every copy through the builder (benchmarks of
// the general path).
var rowsCopiesOff bool

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
// zeros, in place.
func compactRows(pos, keys, ints []int64, reals []float64, real bool) *laidCSR {
	width := len(pos) - 1
	d := &laidCSR{real: real, rowAt: make([]int32, width)}
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
func (d *laidCSR) has(k int64) bool  { return d.getDict(k) != empty }
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

// explainCopy is explain's line for a copy built as compressed rows.
func explainCopy(e *ir.Expr) string {
	return fmt.Sprintf("transposed copy: %s: its rows counted, then filled in the walk's order, laid out one after another (the loop nest above where a key is negative or the keys spread too far)", loopHead(e))
}

// rowsCopy compiles e as a copy built as compressed rows (a transposed
// copy), or returns nil.
func (c *compiler) rowsCopy(e *ir.Expr, t ir.Type, general func() dictFn) dictFn {
	if rowsCopiesOff {
		return nil
	}
	return c.transposedCopy(e, t, general)
}
