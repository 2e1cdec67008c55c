package engine

// Lane-by-lane execution of a vectorized body. A call into a leaf loop
// over a few positions (the fibers of a sparse tensor, 1-2 entries each)
// spends more on a batch's set-up, one pass over every node
// with buffers and copies, than on the work: such a call evaluates the
// same nodes one position at a time, each a value in a register, and
// adds into the sink in the same order, so the bits are the batches'.
// A lane whose guard fails or whose read leaves its array runs through
// the closure body, which gives the interpreter's result and error.

// shortRun is the longest call run lane by lane (a variable so that
// tests can compare with the batches): from about 4 positions on a
// batch is faster (engine/nest.go, bench/results/loop-nest.md).
var shortRun int64 = 3

// runLanes executes positions lo..hi-1 of nl one at a time.
func (v *vloop) runLanes(fr *frame, s *vstate, nl *nloop, lo, hi int64, b *builder) {
	for _, nd := range v.invs {
		if nd.row && s.rows != nil {
			panic("engine: a row invariant outside position space")
		}
		if !nd.konst {
			s.setInv(fr, nd)
		}
	}
	s.fetchDicts(fr, v)
	nestSaw("lanes")
	for p := lo; p < hi; p++ {
		if !v.lane(fr, s, nl, p, b) {
			nestSaw("fallback")
			nl.setVars(fr, p)
			v.fallback(fr, b)
			if fr.err != nil {
				return
			}
		}
	}
}

// setInv computes invariant nd into its lane value.
func (s *vstate) setInv(fr *frame, nd *vnode) {
	if nd.real {
		s.lf[nd.id] = nd.ff(fr)
	} else {
		s.li[nd.id] = nd.fi(fr)
	}
}

// laneLets sets v's lets at position p and tests its guards there;
// false when a guard fails or a read leaves its array.
func (v *vloop) laneLets(s *vstate, p int64) bool {
	for _, l := range v.lets {
		if l.real {
			x, ok := s.laneF(l, p)
			if !ok {
				return false
			}
			s.lf[l.id] = x
		} else {
			x, ok := s.laneI(l, p)
			if !ok {
				return false
			}
			s.li[l.id] = x
		}
	}
	for i, g := range v.guards {
		if s.skip[i] {
			continue
		}
		a, ok1 := s.laneI(g.a, p)
		c, ok2 := s.laneI(g.b, p)
		if !ok1 || !ok2 || !cmpInt(g.op, a, c) {
			return false
		}
	}
	return true
}

// lane evaluates and sinks position p, or reports false (nothing added)
// when a guard fails or a read leaves its array.
func (v *vloop) lane(fr *frame, s *vstate, nl *nloop, p int64, b *builder) bool {
	if !v.laneLets(s, p) {
		return false
	}
	if v.key == nil {
		if nl.sink.accF >= 0 {
			x, ok := s.laneF(v.val, p)
			if ok {
				fr.f[nl.sink.accF] += x
			}
			return ok
		}
		x, ok := s.laneI(v.val, p)
		if ok {
			fr.i[nl.sink.accI] += x
		}
		return ok
	}
	k, ok := s.laneI(v.key, p)
	if !ok {
		return false
	}
	k2 := int64(0)
	if v.key2 != nil {
		if k2, ok = s.laneI(v.key2, p); !ok {
			return false
		}
	}
	// into returns the scalar level the lane adds into, once its value
	// is known: a two-level result's row is made only for a value.
	into := func() (*builder, int64) {
		if v.key2 != nil {
			return b.child(k), k2
		}
		return b, k
	}
	if b.spec.real {
		x, ok := s.laneF(v.val, p)
		if !ok {
			return false
		}
		if v.key2 != nil && collectLane(b, k, k2, x) {
			return true
		}
		b, k := into()
		if b.spec.dense && b.ws == nil && uint64(k) < uint64(len(b.reals)) {
			b.reals[k] += x
		} else {
			b.addReal(k, x)
		}
		return true
	}
	x, ok := s.laneI(v.val, p)
	if ok && (v.key2 == nil || !collectLane(b, k, k2, x)) {
		b, k := into()
		b.addInt(k, x)
	}
	return ok
}

// laneI is int node nd's value at position p.
func (s *vstate) laneI(nd *vnode, p int64) (int64, bool) {
	switch nd.op {
	case vInv:
		return s.li[nd.id], true
	case vLane:
		return p, true
	case vVal:
		return nd.cl.ints[p], true
	case vLetRef:
		return s.li[nd.a.id], true
	case vRead:
		ix, ok := s.laneI(nd.a, p)
		if !ok || uint64(ix) >= uint64(nd.cl.n) {
			return 0, false
		}
		return nd.cl.ints[ix], true
	case vNeg:
		a, ok := s.laneI(nd.a, p)
		return -a, ok
	case vDictRead, vDictKey, vDictVal:
		return s.laneDictI(nd, p)
	}
	if nd.op > vIn {
		return s.laneOpI(nd, p)
	}
	a, ok1 := s.laneI(nd.a, p)
	b, ok2 := s.laneI(nd.b, p)
	return arithOp(nd.op, a, b), ok1 && ok2
}

// laneF is real node nd's value at position p.
func (s *vstate) laneF(nd *vnode, p int64) (float64, bool) {
	switch nd.op {
	case vInv:
		return s.lf[nd.id], true
	case vVal:
		return nd.cl.reals[p], true
	case vLetRef:
		return s.lf[nd.a.id], true
	case vRead:
		ix, ok := s.laneI(nd.a, p)
		if !ok || uint64(ix) >= uint64(nd.cl.n) {
			return 0, false
		}
		return nd.cl.reals[ix], true
	case vToReal:
		a, ok := s.laneI(nd.a, p)
		return float64(a), ok
	case vNeg:
		a, ok := s.laneF(nd.a, p)
		return -a, ok
	case vDictRead, vDictVal:
		return s.laneDictF(nd, p)
	}
	if nd.op > vIn {
		return s.laneOpF(nd, p)
	}
	a, ok1 := s.laneF(nd.a, p)
	b, ok2 := s.laneF(nd.b, p)
	return arithOp(nd.op, a, b), ok1 && ok2
}
