package engine

import (
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// boundsError reports a read of a whole physical array outside its
// positions.
func boundsError(e *ir.Expr, name string, k, n int64) *Error {
	if k < 0 {
		return errAt(e, "%s(%d) is before the start of %s: positions start at 0", name, k, name)
	}
	return errAt(e, "%s(%d) is past the end of %s, which has %s", name, k, name, elements(n))
}

// keyFn compiles an int key. If the key is a variable plus a constant it
// also returns the slot and offset, so hot lookups can skip a call.
func (c *compiler) keyFn(e *ir.Expr) cx {
	x := c.expr(e)
	if x.t.Depth != 0 || x.t.Base != ir.Int {
		c.bail(e, "dictionary key or index %s is %s, not int", describe(e), x.t)
	}
	return x
}

// lookupChain splits root(k1)(k2)...(kn) into root and keys.
func lookupChain(e *ir.Expr) (*ir.Expr, []*ir.Expr) {
	var keys []*ir.Expr
	for e.Op == ir.OpLookup {
		keys = append([]*ir.Expr{e.Args[1]}, keys...)
		e = e.Args[0]
	}
	return e, keys
}

func (c *compiler) lookupScalar(e *ir.Expr) cx {
	t := c.typeOf(e)
	if t.Depth != 0 {
		c.bail(e, "internal: scalar lookup of type %s", t)
	}
	root, keys := lookupChain(e)
	if root.Op == ir.OpGlobal {
		cl := c.cell(root)
		switch {
		case cl.info.Kind == ir.ObjArray && len(keys) == 1:
			return c.arrayRead(e, cl, c.keyFn(keys[0]))
		case cl.info.Kind == ir.ObjHashMap && len(keys) == cl.info.Arity:
			return c.hashRead(cl, keys)
		case cl.info.Kind == ir.ObjTrie && len(keys) == cl.info.Arity:
			return c.trieRead(cl, keys)
		}
	}
	base, key := e.Args[0], e.Args[1]
	switch base.Op {
	case ir.OpRange:
		lo, hi := c.intExpr(base.Args[0], "range bound"), c.intExpr(base.Args[1], "range bound")
		k := c.keyFn(key).i
		x := intCx(func(fr *frame) int64 {
			l, h := lo(fr), hi(fr)
			v := k(fr)
			if v >= l && v < h {
				return v
			}
			return 0
		})
		return toType(x, t.Base)
	case ir.OpSubArray:
		if base.Args[0].Op == ir.OpGlobal && c.cell(base.Args[0]).info.Kind == ir.ObjArray {
			return c.windowRead(e, base, c.cell(base.Args[0]), t)
		}
	}
	d, _ := c.dictExpr(base)
	k := c.keyFn(key).i
	if t.Base == ir.Real {
		return realCx(func(fr *frame) float64 {
			m := d(fr)
			kv := k(fr)
			v, ok := m.getReal(kv)
			if !ok {
				fr.fail(viewBoundsError(e, m, kv))
			}
			return v
		})
	}
	return intCx(func(fr *frame) int64 {
		m := d(fr)
		kv := k(fr)
		v, ok := m.getInt(kv)
		if !ok {
			fr.fail(viewBoundsError(e, m, kv))
		}
		return v
	})
}

func viewBoundsError(e *ir.Expr, d dict, k int64) *Error {
	if a, ok := d.(*arrView); ok {
		return boundsError(e, a.name, k, a.hi)
	}
	return errAt(e, "internal: bad read of %s at %d", describe(e.Args[0]), k)
}

// arrayRead compiles A(k) for a physical array A.
func (c *compiler) arrayRead(e *ir.Expr, cl *cell, k cx) cx {
	name := cl.name
	fail := func(fr *frame, kv int64, n int) {
		fr.fail(boundsError(e, name, kv, int64(n)))
	}
	if cl.info.Elem == ir.Real {
		return realCx(readAt(k, &cl.reals, fail))
	}
	return intCx(readAt(k, &cl.ints, fail))
}

// readAt returns the closure of (*arr)[k], bounds checked; the slice is
// read at each call, as Exec binds the cell's arrays after compiling.
func readAt[T int64 | float64](k cx, arr *[]T, fail func(*frame, int64, int)) func(*frame) T {
	if k.aff {
		s, off := k.affSlot, k.affOff
		return func(fr *frame) T {
			kv := fr.i[s] + off
			a := *arr
			if uint64(kv) >= uint64(len(a)) {
				fail(fr, kv, len(a))
				return 0
			}
			return a[kv]
		}
	}
	kf := k.i
	return func(fr *frame) T {
		kv := kf(fr)
		a := *arr
		if uint64(kv) >= uint64(len(a)) {
			fail(fr, kv, len(a))
			return 0
		}
		return a[kv]
	}
}

// window compiles the bounds of A(lo:hi) for a physical array A, checking
// them as the interpreter does: it returns lo, hi and false (after
// recording the error) when they are bad.
func (c *compiler) window(sub *ir.Expr, cl *cell) func(fr *frame) (int64, int64, bool) {
	lo, hi := c.intExpr(sub.Args[1], "subarray bound"), c.intExpr(sub.Args[2], "subarray bound")
	name := cl.name
	real := cl.info.Elem == ir.Real
	return func(fr *frame) (int64, int64, bool) {
		l, h := lo(fr), hi(fr)
		n := int64(len(cl.ints))
		if real {
			n = int64(len(cl.reals))
		}
		switch {
		case l > h:
			fr.fail(errAt(sub, "%s(%d:%d): the segment starts after it ends", name, l, h))
		case l < 0:
			fr.fail(errAt(sub, "%s(%d:%d) starts before the start of %s: positions start at 0", name, l, h, name))
		case h > n:
			fr.fail(errAt(sub, "%s(%d:%d) runs past the end of %s, which has %s", name, l, h, name, elements(n)))
		default:
			return l, h, true
		}
		return 0, 0, false
	}
}

// windowRead compiles A(lo:hi)(k): A(k) when lo <= k < hi, else zero.
func (c *compiler) windowRead(e, sub *ir.Expr, cl *cell, t ir.Type) cx {
	win := c.window(sub, cl)
	k := c.keyFn(e.Args[1]).i
	if cl.info.Elem == ir.Real {
		return realCx(windowAt(win, k, &cl.reals))
	}
	return toType(intCx(windowAt(win, k, &cl.ints)), t.Base)
}

// windowAt returns the closure of (*arr)(lo:hi)(k), win giving lo and hi.
func windowAt[T int64 | float64](win func(*frame) (int64, int64, bool), k intFn, arr *[]T) func(*frame) T {
	return func(fr *frame) T {
		l, h, ok := win(fr)
		kv := k(fr)
		if !ok || kv < l || kv >= h {
			return 0
		}
		return (*arr)[kv]
	}
}

// hashRead compiles H(k1)...(kd) for a hash map of arity d: one probe.
func (c *compiler) hashRead(cl *cell, keys []*ir.Expr) cx {
	fs := make([]intFn, len(keys))
	for i, k := range keys {
		fs[i] = c.keyFn(k).i
	}
	if ref, ok := c.levels[cl.name]; ok && ref.part == hashSlotPart {
		return c.slotRead(cl, fs)
	}
	probe := func(fr *frame) (int, bool) {
		var key storage.HKey
		for i, f := range fs {
			key[i] = f(fr)
		}
		p, ok := cl.hash.Index[key]
		return p, ok
	}
	if cl.info.Elem == ir.Real {
		return realCx(func(fr *frame) float64 {
			if p, ok := probe(fr); ok {
				return cl.hash.F[p]
			}
			return 0
		})
	}
	return intCx(func(fr *frame) int64 {
		if p, ok := probe(fr); ok {
			return cl.hash.I[p]
		}
		return 0
	})
}

// slotRead compiles a probe of the slot map of a hash map's layout
// (hashwalk.go) through the layout itself: a position table or a binary
// search per level rather than a hash of the whole key.
func (c *compiler) slotRead(cl *cell, fs []intFn) cx {
	if len(fs) == 1 {
		f := fs[0]
		return intCx(func(fr *frame) int64 { return cl.level.hash.groups.slot1(f(fr)) })
	}
	return intCx(func(fr *frame) int64 {
		var key [storage.MaxHashArity]int64
		for i, f := range fs {
			key[i] = f(fr)
		}
		return cl.level.hash.groups.slotOf(key[:len(fs)])
	})
}

// trieRead compiles T(k1)...(kd) for a trie of depth d: one probe per
// level.
func (c *compiler) trieRead(cl *cell, keys []*ir.Expr) cx {
	fs := make([]intFn, len(keys))
	for i, k := range keys {
		fs[i] = c.keyFn(k).i
	}
	last := len(fs) - 1
	probe := func(fr *frame) (*storage.TrieNode, int, bool) {
		n := cl.trie.Root
		found := true
		p := 0
		// Every key is evaluated, found or not, as the interpreter does.
		for i, f := range fs {
			k := f(fr)
			if !found {
				continue
			}
			q, ok := n.Index[k]
			if !ok {
				found = false
				continue
			}
			p = q
			if i < last {
				n = n.Children[q]
			}
		}
		return n, p, found
	}
	if cl.info.Elem == ir.Real {
		return realCx(func(fr *frame) float64 {
			if n, p, ok := probe(fr); ok {
				return n.F[p]
			}
			return 0
		})
	}
	return intCx(func(fr *frame) int64 {
		if n, p, ok := probe(fr); ok {
			return n.I[p]
		}
		return 0
	})
}
