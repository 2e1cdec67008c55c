package engine

import (
	"math/bits"

	"github.com/storel/storel/ir"
)

// vecSrc is an evaluated operand of merge: a window of a physical int
// array (the fast case) or any dictionary.
type vecSrc struct {
	lo, hi int64
	ints   []int64 // window case: the whole array
	cl     *cell   // window case: the array's cell
	d      dict
}

// vecOperand compiles an operand of merge.
func (c *compiler) vecOperand(e *ir.Expr) func(fr *frame) (vecSrc, bool) {
	g := e
	if e.Op == ir.OpSubArray {
		g = e.Args[0]
	}
	if g.Op == ir.OpGlobal {
		cl := c.cell(g)
		if cl.info.Kind == ir.ObjArray && cl.info.Elem == ir.Int {
			cl.needSorted = true
			if e.Op == ir.OpSubArray {
				win := c.window(e, cl)
				return func(fr *frame) (vecSrc, bool) {
					l, h, ok := win(fr)
					return vecSrc{lo: l, hi: h, ints: cl.ints, cl: cl}, ok
				}
			}
			return func(*frame) (vecSrc, bool) {
				return vecSrc{lo: 0, hi: int64(len(cl.ints)), ints: cl.ints, cl: cl}, true
			}
		}
	}
	t := c.typeOf(e)
	if t.Depth != 1 {
		c.bail(e, "merge iterates vectors, but %s is %s", describe(e), t)
	}
	d, _ := c.dictExpr(e)
	return func(fr *frame) (vecSrc, bool) {
		m := d(fr)
		return vecSrc{d: m}, fr.err == nil
	}
}

func (v *vecSrc) asDict() dict {
	if v.d != nil {
		return v.d
	}
	return &arrView{ints: v.ints, lo: v.lo, hi: v.hi}
}

// compileMerge compiles merge(<k1, k2, v> in <e1, e2>) body: for every
// entry (k1, v) of e1 in key order and every entry (k2, u) of e2 in key
// order with u == v, the body. Sorted int operands (the physical plans'
// index segments) are intersected with two pointers, which visits the
// same pairs in the same order as the nested loops; anything else runs the
// nested loops. This is the closure path's merge: the loop-nest IR's
// merges (nestmerge.go) fall back to it for what they do not take.
func (c *compiler) compileMerge(e *ir.Expr, lb loopBody) accFn {
	op1 := c.vecOperand(e.Args[0])
	op2 := c.vecOperand(e.Args[1])
	// A range as the second operand (lo:hi, the optimizer's e:e+1 for a
	// lookup into a sorted row) is met by a seek into the first.
	var rlo, rhi intFn
	if r := e.Args[1]; r.Op == ir.OpRange {
		rlo, rhi = c.intExpr(r.Args[0], "range bound"), c.intExpr(r.Args[1], "range bound")
	}
	t1, t2 := c.typeOf(e.Args[0]), c.typeOf(e.Args[1])
	if t1.Depth != 1 || t2.Depth != 1 {
		c.bail(e, "merge iterates vectors, but the operands are %s and %s", t1, t2)
	}
	vt := t1.Elem()
	fv := ir.FreeVars(e.Args[2])
	k1 := c.bind(e.Vars[0], ir.IntType)
	k2 := c.bind(e.Vars[1], ir.IntType)
	vs := c.bind(e.Vars[2], vt)
	if !fv[e.Vars[0]] || e.Vars[0] == e.Vars[1] || e.Vars[0] == e.Vars[2] {
		k1 = -1
	}
	if !fv[e.Vars[1]] || e.Vars[1] == e.Vars[2] {
		k2 = -1
	}
	if !fv[e.Vars[2]] {
		vs = -1
	}
	body := c.bodyOf(e.Args[2], lb)
	c.unbind(3)
	ints := t1.Base == ir.Int && t2.Base == ir.Int
	realV := vt.Base == ir.Real
	emit := func(fr *frame, b *builder, key1, key2 int64, vi int64, vf float64) {
		if k1 >= 0 {
			fr.i[k1] = key1
		}
		if k2 >= 0 {
			fr.i[k2] = key2
		}
		if vs >= 0 {
			if realV {
				fr.f[vs] = vf
			} else {
				fr.i[vs] = vi
			}
		}
		body(fr, b)
	}
	general := func(fr *frame, b *builder) {
		s1, ok := op1(fr)
		if !ok {
			return
		}
		if rlo != nil && s1.d == nil && s1.cl.sortedSegment(s1.lo, s1.hi) {
			lo, hi := rlo(fr), rhi(fr)
			a := s1.ints[s1.lo:s1.hi]
			for q := seek(a, 0, lo); q < len(a) && a[q] < hi; q++ {
				emit(fr, b, s1.lo+int64(q), a[q], a[q], 0)
				if fr.err != nil {
					return
				}
			}
			return
		}
		s2, ok := op2(fr)
		if !ok {
			return
		}
		if s1.d == nil && s2.d == nil {
			a, bb := s1.ints[s1.lo:s1.hi], s2.ints[s2.lo:s2.hi]
			if s1.cl.sortedSegment(s1.lo, s1.hi) && s2.cl.sortedSegment(s2.lo, s2.hi) {
				mergeSorted(fr, b, a, bb, s1.lo, s2.lo, k1, k2, vs, body)
				return
			}
		}
		d1, d2 := s1.asDict(), s2.asDict()
		n1, n2 := d1.size(), d2.size()
		if ints && sortedDict(d1) && sortedDict(d2) {
			i, j := 0, 0
			for i < n1 && j < n2 {
				x, y := d1.intAt(i), d2.intAt(j)
				switch {
				case x < y:
					i++
				case y < x:
					j++
				default:
					j2 := j
					for j2 < n2 && d2.intAt(j2) == x {
						j2++
					}
					for ; i < n1 && d1.intAt(i) == x; i++ {
						for jj := j; jj < j2; jj++ {
							emit(fr, b, d1.keyAt(i), d2.keyAt(jj), x, 0)
							if fr.err != nil {
								return
							}
						}
					}
					j = j2
				}
			}
			return
		}
		for i := 0; i < n1; i++ {
			if ints {
				x := d1.intAt(i)
				for j := 0; j < n2; j++ {
					if d2.intAt(j) == x {
						emit(fr, b, d1.keyAt(i), d2.keyAt(j), x, 0)
						if fr.err != nil {
							return
						}
					}
				}
				continue
			}
			x := d1.realAt(i)
			for j := 0; j < n2; j++ {
				if d2.realAt(j) == x {
					emit(fr, b, d1.keyAt(i), d2.keyAt(j), d1.intAt(i), x)
					if fr.err != nil {
						return
					}
				}
			}
		}
	}
	return general
}

func sortedDict(d dict) bool {
	n := d.size()
	for i := 1; i < n; i++ {
		if d.intAt(i) < d.intAt(i-1) {
			return false
		}
	}
	return true
}

// seek returns the first position q >= from of the sorted s with
// s[q] >= x (len(s) if none): one step when x is near, else an
// exponential then a binary search. A merge of a short fiber with a long
// row (MTTKRP's B(i,k,:) against D(j,:)) then costs the short side times
// a logarithm of the long one, not the long side's length. The pairs the
// merge visits, and their order, do not change.
//
// The binary search has no branch on the keys: each step's comparison
// comes out as a borrow (less, below) that masks the step, where a branch
// would be mispredicted half the time.
//
// Into a long slice (interpolateFrom keys or more ahead) the search
// starts from a guess instead (seekInterpolating).
func seek(s []int64, from int, x int64) int {
	if from >= len(s) || s[from] >= x {
		return from
	}
	if len(s)-from >= interpolateFrom {
		return seekInterpolating(s, from, x)
	}
	lo, step := from, 1 // s[lo] < x
	hi := lo + 1
	for hi < len(s) && s[hi] < x {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	hi = min(hi, len(s)) // s[lo] < x, and s[hi] >= x or hi == len(s)
	// The answer is in (lo, hi]: halve the n = hi-lo candidates, keeping
	// s[lo] < x.
	for n := hi - lo; n > 1; {
		half := n >> 1
		lo += half & -less(s[lo+half], x)
		n -= half
	}
	return lo + 1
}

// interpolateFrom is the length of what is left of a slice from which
// seek interpolates. Galloping from the start of a row of a few hundred
// keys costs about as much as a guess and its correction; the guess pays
// off only on longer rows.
const interpolateFrom = 512

// seekInterpolating is seek for s[from] < x: the first probe is where x
// would be if the keys from s[from] to the last were evenly spread, then
// an exponential search outwards from it brackets x and a binary search
// finishes. However uneven the keys, the answer is right: the guess only
// decides where the search starts.
func seekInterpolating(s []int64, from int, x int64) int {
	n := len(s)
	last := s[n-1]
	if last < x {
		return n
	}
	// s[from] < x <= last. Floats: the keys' differences may not fit
	// an int64.
	first := float64(s[from])
	g := from + 1 + int(float64(n-1-from)*((float64(x)-first)/(float64(last)-first+1)))
	g = min(max(g, from+1), n-1)
	lo, hi := g-1, g // s[lo] < x <= s[hi], once bracketed
	if s[g] >= x {
		for step := 1; lo > from && s[lo] >= x; step <<= 1 {
			hi = lo
			lo = max(hi-2*step, from)
		}
	} else {
		lo = g
		hi = g + 1
		for step := 1; s[hi] < x; step <<= 1 { // s[n-1] >= x stops it
			lo = hi
			hi = min(lo+2*step, n-1)
		}
	}
	for m := hi - lo; m > 1; {
		half := m >> 1
		lo += half & -less(s[lo+half], x)
		m -= half
	}
	return lo + 1
}

// less is 1 if a < b, else 0, without a branch: the borrow of subtracting
// b from a with both sign bits flipped (which orders int64s as uint64s).
func less(a, b int64) int {
	_, borrow := bits.Sub64(uint64(a)^(1<<63), uint64(b)^(1<<63), 0)
	return int(borrow)
}

// mergeSorted intersects two sorted segments a (positions lo1...) and b
// (positions lo2...) of int arrays.
func mergeSorted(fr *frame, bd *builder, a, b []int64, lo1, lo2 int64, k1, k2, vs int, body bodyFn) {
	var ps pairs
	for {
		i, jj, ok := ps.next(a, b)
		if !ok {
			return
		}
		if k1 >= 0 {
			fr.i[k1] = lo1 + int64(i)
		}
		if k2 >= 0 {
			fr.i[k2] = lo2 + int64(jj)
		}
		if vs >= 0 {
			fr.i[vs] = a[i]
		}
		body(fr, bd)
		if fr.err != nil {
			return
		}
	}
}

// pairs walks the intersection of two sorted int slices a and b: the
// pairs of positions with equal keys in the nested loops' order (equal
// keys pair every position of a's run with every position of b's, a's
// positions outermost), a galloping seek (seek) on the side behind.
type pairs struct {
	i, j   int // a's position, and the start of b's run or b's position
	jj, j2 int // in a run of keys equal to a[i]: b's next position and the run's end
	any    bool
	// ix: a's table, where a seek in a starts (seekIndex), or nil
	ix  *rowIndex
	tab []int32
}

// next returns the next pair's positions in a and b, or false at the
// end.
func (s *pairs) next(a, b []int64) (int, int, bool) {
	for {
		if s.jj < s.j2 {
			i, jj := s.i, s.jj
			if s.jj++; s.jj == s.j2 {
				if s.i++; s.i < len(a) && a[s.i] == b[s.j] {
					s.jj = s.j
				} else {
					s.j, s.jj, s.j2 = s.j2, 0, 0
				}
			}
			s.any = true
			return i, jj, true
		}
		if s.i >= len(a) || s.j >= len(b) {
			return 0, 0, false
		}
		switch x, y := a[s.i], b[s.j]; {
		case x < y && s.ix != nil:
			s.i = s.ix.seek(s.tab, a, s.i+1, y)
		case x < y:
			s.i = seek(a, s.i+1, y)
		case y < x:
			s.j = seek(b, s.j+1, x)
		default:
			for s.j2 = s.j + 1; s.j2 < len(b) && b[s.j2] == x; s.j2++ {
			}
			s.jj = s.j
		}
	}
}

// fill writes the next pairs (up to len(p1)): the positions, offset by
// l1 and l2, and the key; it returns how many (0: no more).
func (s *pairs) fill(a, b []int64, l1, l2 int64, p1, p2, keys []int64) int {
	n := s.unique(a, b, l1, l2, p1, p2, keys)
	for ; n < len(p1); n++ {
		i, jj, ok := s.next(a, b)
		if !ok {
			break
		}
		p1[n], p2[n], keys[n] = l1+int64(i), l2+int64(jj), a[i]
	}
	return n
}

func (c *compiler) mergeAccum(e *ir.Expr, spec *bspec, neg sgn) accFn {
	return c.compileMerge(e, accumBody(spec, neg))
}

// unique is fill while the keys met are unique on both sides, in one
// loop with no call per pair (next's state is for runs of equal keys): a
// row of A against B's row keys pairs nearly every key of the row, and a
// call to next per pair cost as much as the seeks. It stops before a key
// repeated on either side, where next takes over.
func (s *pairs) unique(a, b []int64, l1, l2 int64, p1, p2, keys []int64) int {
	if s.jj < s.j2 {
		return 0 // inside a run
	}
	i, j, n := s.i, s.j, 0
	for n < len(p1) && i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch {
		case x < y && s.ix != nil:
			i = s.ix.seek(s.tab, a, i+1, y)
		case x < y:
			i = seek(a, i+1, y)
		case y < x:
			j = seek(b, j+1, x)
		case i+1 < len(a) && a[i+1] == x || j+1 < len(b) && b[j+1] == x:
			s.i, s.j = i, j
			s.any = s.any || n > 0
			return n
		default:
			p1[n], p2[n], keys[n] = l1+int64(i), l2+int64(j), x
			n, i, j = n+1, i+1, j+1
		}
	}
	s.i, s.j = i, j
	s.any = s.any || n > 0
	return n
}
