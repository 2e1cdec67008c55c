package engine

import (
	"github.com/storel/storel/ir"
)

// Fused merge bodies. The general merge calls a closure per pair for the
// body, and the body calls closures for its operands. For a scalar merge
// of two segments of int arrays that the loop-nest IR declines, the body
// is instead evaluated inside the sorted intersection (mergeSum):
//
//	merge(<q1, q2, _> in <I(lo1:hi1), J(lo2:hi2)>) c * A(q1) * B(q2)
//
// The body is a
// product of at most two factors that depend on the loop (reads of real
// arrays at the loop's key or value, or any other expression, evaluated
// by its closure) and factors that do not (evaluated once per loop run,
// when it has an iteration). To add exactly what the interpreter adds,
// the product keeps the order of the left-nested chain a*b*c*...:
// ((A * V1) * B) * V2) * C, where A is the product of the leading
// invariant factors and a missing factor is 1 (x*1 == 1*x == x in IEEE
// arithmetic).

// Where a variant factor comes from.
const (
	atNone  = iota // absent: the factor is 1
	at1            // a real array read at the first loop index (key p; merge: k1)
	at2            // a real array read at the second (value j; merge: k2)
	atFn           // any expression, through its closure (loop slots written)
	atMerge        // a scalar merge of two segments, its body fused, run in place
)

// variant is a factor of the product that depends on the loop.
type variant struct {
	at    int
	arr   *cell
	ints  bool // at1, at2: arr holds ints
	fn    realFn
	e     *ir.Expr
	steps []step      // atMerge: a guard in front of the merge (else 0)
	merge *mergeParts // atMerge
}

// prod is a fused product ((A * V1) * B) * V2) * C.
type prod struct {
	a, b, c *inv // invariant factors; nil means 1
	v1, v2  variant
}

// Kinds of invariant factor: the common ones are read in place.
const (
	invFn     = iota // any expression, through its closure
	invConst         // k
	invSlotF         // a real variable
	invSlotI         // an int variable
	invGlobal        // a physical scalar
	invArr           // a physical real array at an int variable plus a constant
)

// inv is an invariant factor of a fused product.
type inv struct {
	kind   int
	k      float64
	fn     realFn
	slot   int
	off    int64
	cl     *cell
	e      *ir.Expr
	negate bool
}

func (v *inv) eval(fr *frame) float64 {
	var x float64
	switch v.kind {
	case invConst:
		x = v.k
	case invSlotF:
		x = fr.f[v.slot]
	case invSlotI:
		x = float64(fr.i[v.slot])
	case invGlobal:
		if v.cl.info.Elem == ir.Real {
			x = v.cl.scalarF
		} else {
			x = float64(v.cl.scalarI)
		}
	case invArr:
		k := fr.i[v.slot] + v.off
		if v.cl.info.Elem == ir.Int {
			a := v.cl.ints
			if uint64(k) >= uint64(len(a)) {
				fr.fail(boundsError(v.e, v.cl.name, k, int64(len(a))))
				return 0
			}
			x = float64(a[k])
			break
		}
		a := v.cl.reals
		if uint64(k) >= uint64(len(a)) {
			fr.fail(boundsError(v.e, v.cl.name, k, int64(len(a))))
			return 0
		}
		x = a[k]
	default:
		x = v.fn(fr)
	}
	if v.negate {
		x = -x
	}
	return x
}

// invariant compiles an invariant factor.
func (c *compiler) invariant(e *ir.Expr) *inv {
	t := c.typeOf(e)
	switch e.Op {
	case ir.OpConst:
		if t == ir.RealType {
			return &inv{kind: invConst, k: e.F}
		}
		if t == ir.IntType {
			return &inv{kind: invConst, k: float64(e.I)}
		}
	case ir.OpVar:
		if b, ok := c.lookupVar(e.Name); ok && b.slot >= 0 {
			switch t {
			case ir.RealType:
				return &inv{kind: invSlotF, slot: b.slot}
			case ir.IntType:
				return &inv{kind: invSlotI, slot: b.slot}
			}
		}
	case ir.OpGlobal:
		if cl := c.cell(e); cl.info.Kind == ir.ObjScalar {
			return &inv{kind: invGlobal, cl: cl}
		}
	case ir.OpLookup:
		if e.Args[0].Op == ir.OpGlobal {
			cl := c.cell(e.Args[0])
			if cl.info.Kind == ir.ObjArray {
				if k := c.keyFn(e.Args[1]); k.aff {
					return &inv{kind: invArr, cl: cl, slot: k.affSlot, off: k.affOff, e: e}
				}
			}
		}
	}
	return &inv{kind: invFn, fn: asReal(c.expr(e))}
}

// fusedBody is the analysed body of a loop.
type fusedBody struct {
	p prod
	// writeSlots: a closure reads the loop variables, so they are stored
	// in their slots every iteration.
	writeSlots bool
	// steps is the prelude of the body (guards and lets), run every
	// iteration before the core.
	steps []step
	// pure (set by analyse): no invariant factors, so the product needs
	// no multiplication by them.
	pure bool
}

// loopVars names the loop's variables for the analysis: idx1 is the
// key (merge: k1), idx2 the value (merge: k2).
type loopVars struct {
	idx1, idx2 string
	other      string   // merge: the shared value
	lets       []string // variables bound in the body's prelude
}

// index returns at1 or at2 if e is one of the loop's index variables.
func (lv loopVars) index(e *ir.Expr) int {
	if e.Op != ir.OpVar || (lv.other != "" && e.Name == lv.other) {
		return atNone
	}
	// The value is bound after the key, so it wins if both have the name.
	if e.Name == lv.idx2 {
		return at2
	}
	if e.Name == lv.idx1 {
		return at1
	}
	return atNone
}

func (lv loopVars) dependsOn(e *ir.Expr) bool {
	fv := ir.FreeVars(e)
	if fv[lv.idx1] || fv[lv.idx2] || (lv.other != "" && fv[lv.other]) {
		return true
	}
	for _, x := range lv.lets {
		if fv[x] {
			return true
		}
	}
	return false
}

// product analyses a real-typed body as a fused product; nil if it does
// not fit the shape.
func (c *compiler) product(body *ir.Expr, lv loopVars, before func()) (*prod, bool) {
	// Flatten the left spine of real multiplications.
	var spine []*ir.Expr // spine[k] multiplies the factors 0..k
	var factors []*ir.Expr
	var walk func(e *ir.Expr)
	walk = func(e *ir.Expr) {
		if e.Op == ir.OpMul && c.typeOf(e) == ir.RealType && c.typeOf(e.Args[0]).Depth == 0 && c.typeOf(e.Args[1]).Depth == 0 {
			walk(e.Args[0])
			factors = append(factors, e.Args[1])
			spine = append(spine, e)
			return
		}
		factors = append(factors, e)
		spine = append(spine, e)
	}
	walk(body)
	n := len(factors)
	// Check the shape before compiling anything: a body that does not fit
	// is compiled by the general loop instead, and compiling it twice
	// would double the work at every level of nesting.
	dep := make([]bool, n)
	for k, f := range factors {
		dep[k] = lv.dependsOn(f)
	}
	i := 0
	for i < n && !dep[i] {
		i++
	}
	if i < n {
		j := i + 1
		if j < n && !dep[j] {
			j++
		}
		if j < n && dep[j] {
			j++
		}
		if j < n && !dep[j] {
			j++
		}
		if j != n {
			return nil, false
		}
	}
	if before != nil {
		before()
	}
	p := &prod{}
	if i > 0 {
		p.a = c.invariant(spine[i-1])
	}
	if i == n {
		return p, true
	}
	variantOf := func(f *ir.Expr) variant {
		if f.Op == ir.OpLookup && f.Args[0].Op == ir.OpGlobal {
			cl := c.cell(f.Args[0])
			if at := lv.index(f.Args[1]); at != atNone && cl.info.Kind == ir.ObjArray {
				return variant{at: at, arr: cl, e: f, ints: cl.info.Elem == ir.Int}
			}
		}
		if f.Op == ir.OpMerge && c.typeOf(f) == ir.RealType {
			m, fn := c.realMerge(f)
			if m.inPlace() {
				return variant{at: atMerge, merge: m, e: f}
			}
			return variant{at: atFn, fn: fn, e: f}
		}
		if f.Op == ir.OpIf && len(f.Args) == 2 && f.Args[1].Op == ir.OpMerge && c.typeOf(f.Args[1]) == ir.RealType {
			// if c then merge(...): a guarded merge, zero when c fails
			// (MTTKRP: C_val(q) * (if 0 <= j && j < D_len1 then merge
			// of B's fiber with D's row j)).
			steps := []step{c.guardStep(f.Args[0])}
			m, fn := c.realMerge(f.Args[1])
			if m.inPlace() {
				return variant{at: atMerge, merge: m, steps: steps, e: f}
			}
			return variant{at: atFn, e: f, fn: func(fr *frame) float64 {
				if !runSteps(fr, steps) {
					return 0
				}
				return fn(fr)
			}}
		}
		return variant{at: atFn, fn: asReal(c.expr(f)), e: f}
	}
	invariant := c.invariant
	p.v1 = variantOf(factors[i])
	i++
	if i < n && !lv.dependsOn(factors[i]) {
		p.b = invariant(factors[i])
		i++
	}
	if i < n && lv.dependsOn(factors[i]) {
		p.v2 = variantOf(factors[i])
		i++
	}
	if i < n && !lv.dependsOn(factors[i]) {
		p.c = invariant(factors[i])
		i++
	}
	return p, i == n
}

// analyse decides whether the scalar body of a merge with variables lv,
// adding into the slot lb names, can be fused; it compiles the pieces (in the loop's scope).
func (c *compiler) analyse(body *ir.Expr, lb loopBody, lv loopVars) *fusedBody {
	fb := &fusedBody{}
	pre, core := stripPrelude(body)
	decl := c.declarePrelude(pre)
	lv.lets = letNames(pre)
	if lb.accF < 0 || c.typeOf(core) != ir.RealType {
		c.unbind(decl)
		return nil
	}
	lets := 0
	p, ok := c.product(core, lv, func() { fb.steps, lets = c.compileSteps(pre) })
	c.unbind(lets + decl)
	if !ok {
		return nil
	}
	if lb.neg.isNeg() {
		if p.a == nil {
			p.a = &inv{kind: invConst, k: -1}
		} else {
			p.a.negate = !p.a.negate
		}
	}
	fb.p = *p
	fb.pure = p.a == nil && p.b == nil && p.c == nil
	needSlots := func(v *variant) bool {
		return v.at == atFn || v.at == atMerge
	}
	fb.writeSlots = fb.writeSlots || len(fb.steps) > 0 || needSlots(&p.v1) || needSlots(&p.v2)
	return fb
}

// invariants evaluates A, B, C (1 when absent).
func (p *prod) invariants(fr *frame) (a, b, c float64) {
	a, b, c = 1, 1, 1
	if p.a != nil {
		a = p.a.eval(fr)
	}
	if p.b != nil {
		b = p.b.eval(fr)
	}
	if p.c != nil {
		c = p.c.eval(fr)
	}
	return
}

// sumOfLoop returns the closure of a scalar sum compiled as loop l adding
// into slot acc.
func sumOfLoop(l *loop, acc int) realFn {
	return func(fr *frame) float64 {
		fr.f[acc] = 0
		l.all(fr, nil)
		return fr.f[acc]
	}
}

// readFail records a read of a physical array outside its positions.
func readFail(fr *frame, v *variant, k int64, n int) {
	fr.fail(boundsError(v.e, v.arr.name, k, int64(n)))
}

// read evaluates a variant factor at indices (q, j); false after a
// failed read (recorded in fr).
func (v *variant) read(fr *frame, q, j int64) (float64, bool) {
	switch v.at {
	case atNone:
		return 1, true
	case at1, at2:
		k := q
		if v.at == at2 {
			k = j
		}
		if n := v.length(); uint64(k) >= uint64(n) {
			readFail(fr, v, k, int(n))
			return 0, false
		}
		return v.get(k), true
	case atMerge:
		if v.steps != nil && !runSteps(fr, v.steps) {
			return 0, fr.err == nil
		}
		x := v.merge.value(fr)
		return x, fr.err == nil
	}
	return v.fn(fr), true
}

// coveredWindow returns w when its steps hold for positions lo..hi-1 of
// the index array cl without being run: guards on the key that every key
// of cl passes (its range, Array.IntRange), lets of array reads that fall
// inside their arrays; nil otherwise.
func coveredWindow(w *windowPrelude, cl *cell, lo, hi int64) *windowPrelude {
	if w == nil || cl == nil {
		return nil
	}
	covered := w.covers(cl.imin, cl.imax, lo, hi)
	if nestedWindow != nil && !nestedWindow(covered) {
		covered = false // a test forces the steps
	}
	if !covered {
		return nil
	}
	return w
}

// segBounds are the bounds of a segment A(P(x + c1):Q(y + c2)) of a
// physical array A, read in place from the physical int arrays P and Q;
// any irregularity goes through the general window closure, which reports
// the exact error.
type segBounds struct {
	arr            *cell
	lo, hi         *cell
	loSlot, hiSlot int
	loOff, hiOff   int64
	win            func(fr *frame) (int64, int64, bool)
}

// inPlace reads the bounds in place; false, with no effect, when they
// are out of order or past the segmented array.
func (s *segBounds) inPlace(fr *frame) (int64, int64, bool) {
	kl, kh := fr.i[s.loSlot]+s.loOff, fr.i[s.hiSlot]+s.hiOff
	if pa, pb := s.lo.ints, s.hi.ints; uint64(kl) < uint64(len(pa)) && uint64(kh) < uint64(len(pb)) {
		if l, h := pa[kl], pb[kh]; 0 <= l && l <= h && h <= s.arr.n {
			return l, h, true
		}
	}
	return 0, 0, false
}

func (s *segBounds) bounds(fr *frame) (int64, int64, bool) {
	if l, h, ok := s.inPlace(fr); ok {
		return l, h, true
	}
	return s.win(fr)
}

// segment compiles the bounds of sub = A(lo:hi) as window does, and
// returns segBounds too when they have the form P(x + c) (CSR segments).
func (c *compiler) segment(sub *ir.Expr, cl *cell) (func(fr *frame) (int64, int64, bool), *segBounds) {
	win := c.window(sub, cl)
	bound := func(e *ir.Expr) (*cell, int, int64, bool) {
		if e.Op != ir.OpLookup || e.Args[0].Op != ir.OpGlobal {
			return nil, 0, 0, false
		}
		pc := c.cell(e.Args[0])
		if pc.info.Kind != ir.ObjArray || pc.info.Elem != ir.Int {
			return nil, 0, 0, false
		}
		k := c.keyFn(e.Args[1])
		if !k.aff {
			return nil, 0, 0, false
		}
		return pc, k.affSlot, k.affOff, true
	}
	pl, sl, ol, ok1 := bound(sub.Args[1])
	ph, sh, oh, ok2 := bound(sub.Args[2])
	if !ok1 || !ok2 {
		return win, nil
	}
	sb := &segBounds{arr: cl, lo: pl, hi: ph, loSlot: sl, hiSlot: sh, loOff: ol, hiOff: oh, win: win}
	return sb.bounds, sb
}

// dotMerge returns s plus va[i] * vb[j] for every pair of positions of
// the sorted a and b with a[i] == b[j], in the nested loops' order: the
// merge of MTTKRP (B(i,k,:) against D(j,:)). With r, b's seeks start
// where b's table (seekIndex) says: the same positions, found sooner.
func dotMerge(a, b []int64, va, vb []float64, s float64, r *rowIndex, tab []int32) float64 {
	va, vb = va[:len(a)], vb[:len(b)]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		u, w := a[i], b[j]
		switch {
		case u < w:
			i = seek(a, i+1, w)
		case w < u && r != nil:
			j = r.seek(tab, b, j+1, u)
		case w < u:
			j = seek(b, j+1, u)
		default:
			j2 := j + 1
			for j2 < len(b) && b[j2] == u {
				j2++
			}
			for ; i < len(a) && a[i] == u; i++ {
				for jj := j; jj < j2; jj++ {
					s += va[i] * vb[jj]
				}
			}
			j = j2
		}
	}
	return s
}

// mergeDirect, when set (by tests), is called for every merge mergeSum
// runs as the product of two real arrays with no invariant factor.
var mergeDirect func()

// mergeSum intersects the sorted segments a (positions lo1...) and b
// (positions lo2...) of two int arrays, adding the fused product for every
// pair of positions with equal values, in the nested loops' order.
func (fb *fusedBody) mergeSum(fr *frame, a, b []int64, lo1, lo2 int64, s float64) float64 {
	p := &fb.p
	// Invariant factors are evaluated at the first pair: a merge may
	// have none even over non-empty operands, and then the interpreter
	// evaluates nothing.
	x, y, z := 1.0, 1.0, 1.0
	ready := fb.pure
	i, j := 0, 0
	if fb.pure && p.v1.at == at1 && p.v2.at == at2 && !p.v1.ints && !p.v2.ints {
		// B(k1) * D(k2): the merge of MTTKRP.
		x1, x2 := p.v1.arr.reals, p.v2.arr.reals
		if lo1 >= 0 && lo2 >= 0 && lo1+int64(len(a)) <= int64(len(x1)) && lo2+int64(len(b)) <= int64(len(x2)) {
			if mergeDirect != nil {
				mergeDirect()
			}
			return dotMerge(a, b, x1[lo1:lo1+int64(len(a))], x2[lo2:lo2+int64(len(b))], s, nil, nil)
		}
	}
	for i < len(a) && j < len(b) {
		u, w := a[i], b[j]
		switch {
		case u < w:
			i = seek(a, i+1, w)
		case w < u:
			j = seek(b, j+1, u)
		default:
			j2 := j + 1
			for j2 < len(b) && b[j2] == u {
				j2++
			}
			for ; i < len(a) && a[i] == u; i++ {
				for jj := j; jj < j2; jj++ {
					if !ready {
						if x, y, z = p.invariants(fr); fr.err != nil {
							return s
						}
						ready = true
					}
					q1, q2 := lo1+int64(i), lo2+int64(jj)
					v1, ok := p.v1.read(fr, q1, q2)
					if !ok {
						return s
					}
					v2, ok := p.v2.read(fr, q1, q2)
					if !ok {
						return s
					}
					s += (((x * v1) * y) * v2) * z
				}
			}
			j = j2
		}
	}
	return s
}

// nestedWindow, when set (by tests), learns for every window that
// preludeRun runs behind a windowPrelude
// whether the prelude can be skipped (coveredWindow), and answers whether
// it will.
var nestedWindow func(covered bool) bool

// term evaluates the fused product at indices (q1, q2); false after an
// error (recorded in fr).
func (fb *fusedBody) term(fr *frame, q1, q2 int64) (float64, bool) {
	p := &fb.p
	a, b, c := 1.0, 1.0, 1.0
	if !fb.pure {
		if a, b, c = p.invariants(fr); fr.err != nil {
			return 0, false
		}
	}
	x1, ok := p.v1.read(fr, q1, q2)
	if !ok {
		return 0, false
	}
	x2, ok := p.v2.read(fr, q1, q2)
	if !ok {
		return 0, false
	}
	return (((a * x1) * b) * x2) * c, fr.err == nil
}
