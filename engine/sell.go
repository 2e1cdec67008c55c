package engine

import (
	"maps"
	"slices"
	"unsafe"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// SpMV over a sliced ELLPACK matrix (storage's sell format) runs eight
// rows at a time. The optimizer fuses y = A x over sell into
//
//	sum(<q, _> in lo:hi) { @dense P(q) -> sum(<k, _> in 0:R(q)) T }
//	T   = x(col)  or  V(2 * Cp(q / 8) + 8 * k + q % 8) * x(col)
//	col = if (q % 2 == 0) then C(w) % 2^32 else C(w) / 2^32
//	w   = Cp(q / 8) + 4 * k + q % 8 / 2
//
// Lanes q = 8c..8c+7 of chunk c read their step k from the four words
// C(Cp(c) + 4k ..): 32 bytes holding eight 32-bit columns in lane order,
// which one SIMD load and two gathers of x read at once (sell_amd64.s),
// a lane adding nothing past its row's end. Each lane adds its terms in
// the order the plan does, from 0.0, and then y(P(q)) += its sum, lanes
// in order: the bits are those of the general path. A chunk failing a
// check (its words, values or keys out of range) and the partial chunks
// at the ends of the range run on the general path, which reports what
// is wrong.

// sellPlan is a matched sell SpMV: its arrays and the general loop.
type sellPlan struct {
	perm, rlen, cpos, cols, x *cell
	vals                      *cell // nil: a pattern matrix; int or real
	general                   *loop
}

// sellChunkCalls bounds the chunks of one kernel call: the runtime cannot
// preempt assembly.
const sellChunkCalls = 512

// sellLoop returns l, or a loop running the chunks of l's range with the
// eight-lane kernel when e is a sell SpMV (above) adding into a dense
// vector of reals; l is the general loop compiled for e.
func (c *compiler) sellLoop(e *ir.Expr, lb loopBody, l *loop) *loop {
	if !c.sellShape(e, lb) {
		return l
	}
	b := sellBinds(e)
	sp := &sellPlan{general: l}
	for _, a := range []struct {
		dst  **cell
		name string
		elem ir.Base
	}{{&sp.perm, "?P", ir.Int}, {&sp.rlen, "?R", ir.Int}, {&sp.cpos, "?Cp", ir.Int}, {&sp.cols, "?C", ir.Int}, {&sp.x, "?x", ir.Real}, {&sp.vals, "?V", ir.Unknown}} {
		name, ok := b[a.name]
		if !ok {
			continue // ?V: a pattern matrix
		}
		info, ok := c.schema[name]
		if !ok || info.Kind != ir.ObjArray || a.elem != ir.Unknown && info.Elem != a.elem {
			return l
		}
		*a.dst = c.cell(&ir.Expr{Op: ir.OpGlobal, Name: name})
	}
	if sellCompiled != nil {
		sellCompiled(sp)
	}
	return &loop{open: l.open, count: l.count, run: sp.run}
}

// sellShape reports whether e is a sell SpMV that sellLoop runs. The
// loop-nest IR evaluates it too, but 10-50x slower: its inner range
// 0:R(q) changes length from row to row, which position space does not
// take, so each row is a batch of a few lanes.
func (c *compiler) sellShape(e *ir.Expr, lb loopBody) bool {
	return lb.spec != nil && lb.spec.dense && lb.spec.depth == 1 && lb.spec.real && lb.neg == plus && sellBinds(e) != nil
}

// sellCompiled, when set (by tests), sees every sellPlan compiled.
var sellCompiled func(*sellPlan)

// run runs positions from..to-1 of the range: whole chunks with the
// kernel, the rest on the general path.
func (sp *sellPlan) run(fr *frame, st srcState, from, to int64, bd *builder) {
	lo, hi := st.lo+from, st.lo+to
	h := int64(storage.SellHeight)
	perm, rlen, cpos, cols, x := sp.perm, sp.rlen, sp.cpos, sp.cols, sp.x
	// Chunks c0..c1-1 lie inside the range and the arrays; the halves of
	// every word index x, and fit a gather's signed 32-bit lanes.
	c0 := (max(lo, 0) + h - 1) / h
	c1 := min(hi/h, int64(len(perm.ints))/h, int64(len(rlen.ints))/h, int64(len(cpos.ints)))
	if c0 >= c1 || bd.ws != nil || cols.halfMax < 0 || cols.halfMax >= min(int64(len(x.reals)), 1<<31) {
		sp.general.run(fr, st, from, to, bd)
		return
	}
	general := func(a, b int64) bool {
		sp.general.run(fr, st, a-st.lo, b-st.lo, bd)
		return fr.err == nil
	}
	if !general(lo, c0*h) {
		return
	}
	bd.holdKeysOf(perm)
	// Int values convert exactly in SIMD when |v| < 2^51 (sell_amd64.s).
	exact := sp.vals != nil && sp.vals.imin >= -1<<51 && sp.vals.imax < 1<<51
	for c := c0; c < c1; {
		end := min(c1, c+sellChunkCalls)
		var done int64
		switch {
		case sp.vals == nil:
			done = sellChunks[float64](bd.reals, perm.ints, rlen.ints, cpos.ints, cols.ints, nil, x.reals, c, end, false)
		case sp.vals.info.Elem == ir.Real:
			done = sellChunks(bd.reals, perm.ints, rlen.ints, cpos.ints, cols.ints, sp.vals.reals, x.reals, c, end, false)
		default: // int values, converted as they are read
			done = sellChunks(bd.reals, perm.ints, rlen.ints, cpos.ints, cols.ints, sp.vals.ints, x.reals, c, end, exact)
		}
		if c = done; c < end {
			// The chunk failed a check: the general path runs it.
			if !general(c*h, c*h+h) {
				return
			}
			c++
		}
	}
	general(c1*h, hi)
}

// sellChunksGo is the kernel of sellChunks in Go: it runs chunks c0..c1-1
// into out and returns the first chunk it did not run, stopping before a
// chunk with a key outside out or words or values outside their arrays.
// The caller has checked that the halves of every word of cols index x
// (so x is read without a check, as in fit.go) and that the chunks'
// lanes lie inside perm, rlen and cpos. Each lane adds its terms in
// order from 0.0, as the general path does.
func sellChunksGo[V number](out []float64, perm, rlen, cpos, cols []int64, vals []V, x []float64, c0, c1 int64) int64 {
	const h = int64(storage.SellHeight)
	xp := unsafe.Pointer(unsafe.SliceData(x))
	for c := c0; c < c1; c++ {
		p, r := (*[h]int64)(perm[c*h:]), (*[h]int64)(rlen[c*h:])
		n, w := int64(0), cpos[c]
		for l := range h {
			n = max(n, r[l])
			if uint64(p[l]) >= uint64(len(out)) {
				return c
			}
		}
		if !sellFits(w, n, int64(len(cols)), int64(len(vals)), vals != nil) {
			return c
		}
		// The lanes one by one, unrolled: Go keeps neither an array of
		// sums nor a loop over lanes in registers.
		r0, r1, r2, r3, r4, r5, r6, r7 := r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
		var s0, s1, s2, s3, s4, s5, s6, s7 float64
		words := cols[w : w+4*n]
		const low = storage.PackedHalf - 1
		if vals == nil {
			for k := range n {
				ws := (*[4]int64)(words[4*k:])
				if k < r0 {
					s0 += at[float64](xp, ws[0]&low)
				}
				if k < r1 {
					s1 += at[float64](xp, ws[0]>>32)
				}
				if k < r2 {
					s2 += at[float64](xp, ws[1]&low)
				}
				if k < r3 {
					s3 += at[float64](xp, ws[1]>>32)
				}
				if k < r4 {
					s4 += at[float64](xp, ws[2]&low)
				}
				if k < r5 {
					s5 += at[float64](xp, ws[2]>>32)
				}
				if k < r6 {
					s6 += at[float64](xp, ws[3]&low)
				}
				if k < r7 {
					s7 += at[float64](xp, ws[3]>>32)
				}
			}
		} else {
			vs := vals[2*w : 2*w+8*n]
			for k := range n {
				ws, v := (*[4]int64)(words[4*k:]), (*[h]V)(vs[8*k:])
				if k < r0 {
					s0 += float64(v[0]) * at[float64](xp, ws[0]&low)
				}
				if k < r1 {
					s1 += float64(v[1]) * at[float64](xp, ws[0]>>32)
				}
				if k < r2 {
					s2 += float64(v[2]) * at[float64](xp, ws[1]&low)
				}
				if k < r3 {
					s3 += float64(v[3]) * at[float64](xp, ws[1]>>32)
				}
				if k < r4 {
					s4 += float64(v[4]) * at[float64](xp, ws[2]&low)
				}
				if k < r5 {
					s5 += float64(v[5]) * at[float64](xp, ws[2]>>32)
				}
				if k < r6 {
					s6 += float64(v[6]) * at[float64](xp, ws[3]&low)
				}
				if k < r7 {
					s7 += float64(v[7]) * at[float64](xp, ws[3]>>32)
				}
			}
		}
		out[p[0]] += s0
		out[p[1]] += s1
		out[p[2]] += s2
		out[p[3]] += s3
		out[p[4]] += s4
		out[p[5]] += s5
		out[p[6]] += s6
		out[p[7]] += s7
	}
	return c1
}

// sellFits reports whether a chunk whose words start at w and whose
// longest lane has n steps reads inside cols (and vals): words w..w+4n-1,
// values 2w..2w+8n-1.
func sellFits(w, n, ncols, nvals int64, valued bool) bool {
	if w < 0 || w > ncols || n > ncols || w+4*n > ncols {
		return false
	}
	return !valued || 2*w+8*n <= nvals
}

// sellBinds matches e against the sell SpMV plan (see the top of this
// file) and returns the globals standing for P, R, Cp, C, x and, with
// values, V; nil when e has another shape.
func sellBinds(e *ir.Expr) binds {
	if e.Op != ir.OpSum || e.Args[0].Op != ir.OpRange || e.Args[1].Op != ir.OpSingleton || e.Args[1].Args[1].Op != ir.OpSum {
		return nil
	}
	inner := e.Args[1].Args[1]
	q, k := variable(e.Vars[0]), variable(inner.Vars[0])
	g := func(name string) *ir.Expr { return &ir.Expr{Op: ir.OpGlobal, Name: name} }
	n := func(v int64) *ir.Expr { return ir.IntConst(v) }
	op := func(o ir.Op, args ...*ir.Expr) *ir.Expr { return &ir.Expr{Op: o, Args: args} }
	at := func(a string, i *ir.Expr) *ir.Expr { return op(ir.OpLookup, g(a), i) }

	chunk := at("?Cp", op(ir.OpDiv, q, n(storage.SellHeight)))
	word := op(ir.OpAdd, chunk, op(ir.OpMul, n(4), k), op(ir.OpDiv, op(ir.OpMod, q, n(storage.SellHeight)), n(2)))
	col := op(ir.OpIf, op(ir.OpEq, op(ir.OpMod, q, n(2)), n(0)),
		op(ir.OpMod, at("?C", word), n(storage.PackedHalf)),
		op(ir.OpDiv, at("?C", word), n(storage.PackedHalf)))
	xcol := at("?x", col)
	val := at("?V", op(ir.OpAdd, op(ir.OpMul, n(2), chunk), op(ir.OpMul, n(8), k), op(ir.OpMod, q, n(storage.SellHeight))))
	for _, term := range []*ir.Expr{xcol, op(ir.OpMul, val, xcol)} {
		body := &ir.Expr{Op: ir.OpSingleton, Ann: ir.AnnDense, Args: []*ir.Expr{at("?P", q),
			&ir.Expr{Op: ir.OpSum, Vars: inner.Vars, Args: []*ir.Expr{op(ir.OpRange, n(0), at("?R", q)), term}}}}
		if b, ok := matchAC(body, e.Args[1], binds{}); ok {
			return b
		}
	}
	return nil
}

func variable(name string) *ir.Expr { return &ir.Expr{Op: ir.OpVar, Name: name} }

// binds maps the wildcard globals of a pattern ("?X") to the globals
// they matched.
type binds map[string]string

// matchAC reports whether e matches the pattern p: the same tree up to
// the order and grouping of + and * and the sides of ==, a global of p
// matching any global, the same one at every occurrence (b holds those
// bound so far; the answer extends it). Binders, variables and constants
// must be the same.
func matchAC(p, e *ir.Expr, b binds) (binds, bool) {
	switch p.Op {
	case ir.OpGlobal:
		if e.Op != ir.OpGlobal {
			return nil, false
		}
		if name, ok := b[p.Name]; ok {
			return b, name == e.Name
		}
		b = maps.Clone(b)
		b[p.Name] = e.Name
		return b, true
	case ir.OpConst:
		return b, e.Op == ir.OpConst && e.Type.Depth == 0 && e.Type.Base == p.Type.Base && e.I == p.I && e.F == p.F
	case ir.OpVar:
		return b, e.Op == ir.OpVar && e.Name == p.Name
	case ir.OpAdd, ir.OpMul:
		ps, es := operands(p.Op, p, nil), operands(p.Op, e, nil)
		if len(ps) != len(es) {
			return nil, false
		}
		return matchBag(ps, es, b)
	case ir.OpEq:
		if e.Op != ir.OpEq {
			return nil, false
		}
		if b2, ok := matchArgs(p.Args, e.Args, b); ok {
			return b2, true
		}
		return matchArgs(p.Args, []*ir.Expr{e.Args[1], e.Args[0]}, b)
	}
	if e.Op != p.Op || e.Ann != p.Ann || !slices.Equal(e.Vars, p.Vars) {
		return nil, false
	}
	return matchArgs(p.Args, e.Args, b)
}

func matchArgs(ps, es []*ir.Expr, b binds) (binds, bool) {
	if len(ps) != len(es) {
		return nil, false
	}
	for i := range ps {
		var ok bool
		if b, ok = matchAC(ps[i], es[i], b); !ok {
			return nil, false
		}
	}
	return b, true
}

// matchBag matches the operands ps against es in any order.
func matchBag(ps, es []*ir.Expr, b binds) (binds, bool) {
	if len(ps) == 0 {
		return b, true
	}
	for i, e := range es {
		if b2, ok := matchAC(ps[0], e, b); ok {
			rest := append(append([]*ir.Expr(nil), es[:i]...), es[i+1:]...)
			if b3, ok := matchBag(ps[1:], rest, b2); ok {
				return b3, true
			}
		}
	}
	return nil, false
}

// operands flattens a chain of op (+ or *) into its operands.
func operands(op ir.Op, e *ir.Expr, out []*ir.Expr) []*ir.Expr {
	if e.Op != op {
		return append(out, e)
	}
	for _, a := range e.Args {
		out = operands(op, a, out)
	}
	return out
}

// The kernels, Go and assembly, are written for eight lanes.
var (
	_ [storage.SellHeight - 8]struct{}
	_ [8 - storage.SellHeight]struct{}
)
