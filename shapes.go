package storel

import (
	"fmt"
	"slices"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// extent is what is known of one mode of a dictionary: the exclusive
// bound of its keys (0 when unknown) and where that bound comes from, for
// messages. fromData marks a bound that is the size of the user's data
// (a --tensor's dimension, a loaded array's length) rather than one
// computed by a mapping, which indexes positions and may legitimately
// differ from the ranges that index it.
type extent struct {
	size     int64
	origin   string
	fromData bool
}

// shapes infers the size of every mode of a plan's result from the
// sizes of its inputs: a key variable bound by iterating a dictionary
// (sum(<k, v> in d)) ranges over d's first mode, a singleton {k -> v}
// keyed by such a variable has k's mode as its first, a lookup d(k)
// strips d's first mode, and so on. On the way it checks every lookup of
// the user's data by a key that ranges over a differently sized mode of
// other data: x(j) with j over A's 3 columns and x of length 5 reads only
// part of x (or misses keys), which is almost always a mistake.
type shapes struct {
	store    storage.Store
	given    map[string][]extent // tensors of known size (--tensor)
	origins  map[string]string   // where declared objects' data came from
	keys     map[string]extent   // key variables in scope
	dicts    map[string][]extent // dictionary variables in scope
	warnings []string
}

// infer returns the extents of e's result, one per level of its type; a
// nil result means e has no keys at all (an empty dictionary constant),
// which sizes nothing.
func (s *shapes) infer(e *ir.Expr) []extent {
	depth := e.Type.Depth
	switch e.Op {
	case ir.OpConst:
		return nil
	case ir.OpVar:
		if d, ok := s.dicts[e.Name]; ok {
			return fit(d, depth)
		}
	case ir.OpGlobal:
		return fit(s.global(e.Name), depth)
	case ir.OpRange:
		s.infer(e.Args[0])
		s.infer(e.Args[1])
		if hi, ok := s.constInt(e.Args[1]); ok && hi > 0 {
			return []extent{{size: hi, origin: fmt.Sprintf("the range %s (size %d)", ir.Format(e), hi)}}
		}
	case ir.OpSingleton:
		s.infer(e.Args[0])
		k := extent{}
		if e.Args[0].Op == ir.OpVar {
			k = s.keys[e.Args[0].Name]
		}
		return fit(append([]extent{k}, fit(s.infer(e.Args[1]), depth-1)...), depth)
	case ir.OpLookup:
		d := s.infer(e.Args[0])
		s.infer(e.Args[1])
		s.checkKey(e, d)
		if len(d) > 0 {
			return fit(d[1:], depth)
		}
	case ir.OpSum:
		src := s.infer(e.Args[0])
		var k extent
		var v []extent
		if len(src) > 0 {
			k, v = src[0], src[1:]
		}
		if e.Args[0].Type.Depth <= 1 {
			v = nil
		}
		restore := s.bind(e.Vars[0], &k, nil)
		restoreV := s.bind(e.Vars[1], nil, fit(v, max(e.Args[0].Type.Depth-1, 0)))
		body := s.infer(e.Args[1])
		restoreV()
		restore()
		return body
	case ir.OpMerge:
		s.infer(e.Args[0])
		s.infer(e.Args[1])
		var restores []func()
		for _, x := range e.Vars {
			restores = append(restores, s.bind(x, nil, nil))
		}
		body := s.infer(e.Args[2])
		for i := len(restores) - 1; i >= 0; i-- {
			restores[i]()
		}
		return body
	case ir.OpLet:
		var val []extent
		if g, ok := s.given[e.Vars[0]]; ok {
			// A --tensor's mapping is the storage's own; its sizes are
			// the tensor's.
			val = g
		} else {
			val = s.infer(e.Args[0])
		}
		restore := s.bind(e.Vars[0], nil, val)
		body := s.infer(e.Args[1])
		restore()
		return body
	case ir.OpEq:
		s.infer(e.Args[0])
		s.infer(e.Args[1])
		s.checkJoin(e)
		return nil
	case ir.OpAdd, ir.OpSub, ir.OpIf, ir.OpMul:
		args := e.Args
		if e.Op == ir.OpIf {
			s.infer(args[0])
			args = args[1:]
		}
		var out []extent
		first := true
		for _, a := range args {
			sh := s.infer(a)
			if depth == 0 || a.Type.Depth != depth {
				continue
			}
			if first {
				out, first = sh, false
			} else if e.Op == ir.OpMul {
				out = meet(out, sh)
			} else {
				out = join(out, sh)
			}
		}
		if e.Op == ir.OpIf && len(e.Args) == 2 {
			// if without else: the other branch is empty.
			return out
		}
		return fit(out, depth)
	}
	for _, a := range e.Args {
		s.infer(a)
	}
	return fit(nil, depth)
}

// bind makes x a key variable of extent k (when k is not nil) or a
// dictionary variable of extents d, shadowing any outer x, and returns
// the function that restores the outer binding.
func (s *shapes) bind(x string, k *extent, d []extent) func() {
	oldK, hadK := s.keys[x]
	oldD, hadD := s.dicts[x]
	delete(s.keys, x)
	delete(s.dicts, x)
	if k != nil {
		s.keys[x] = *k
	} else if d != nil {
		s.dicts[x] = d
	}
	return func() {
		delete(s.keys, x)
		delete(s.dicts, x)
		if hadK {
			s.keys[x] = oldK
		}
		if hadD {
			s.dicts[x] = oldD
		}
	}
}

// global returns the extents of a declared object from its data.
func (s *shapes) global(name string) []extent {
	from := s.origins[name]
	at := func(m int, n int64) extent {
		if from == "" {
			return extent{size: n, origin: fmt.Sprintf("%s's dimension %d (size %d)", name, m+1, n)}
		}
		return extent{size: n, origin: fmt.Sprintf("%s's dimension %d (size %d, from %s)", name, m+1, n, from), fromData: true}
	}
	switch o := s.store[name].(type) {
	case *storage.Array:
		if from == "" {
			return []extent{{size: int64(o.Len()), origin: fmt.Sprintf("%s's length (%d)", name, o.Len())}}
		}
		return []extent{{size: int64(o.Len()), origin: fmt.Sprintf("%s's length (%d, from %s)", name, o.Len(), from), fromData: true}}
	case *storage.HashMap:
		return dimExtents(o.Dims, at)
	case *storage.Trie:
		return dimExtents(o.Dims, at)
	}
	return nil
}

func dimExtents(dims []int64, at func(int, int64) extent) []extent {
	out := make([]extent, len(dims))
	for m, n := range dims {
		out[m] = at(m, n)
	}
	return out
}

// checkKey warns when lookup e = d(k) indexes data by a key variable that
// ranges over a mode of other data of a different size.
func (s *shapes) checkKey(e *ir.Expr, d []extent) {
	k := e.Args[1]
	if len(d) == 0 || k.Op != ir.OpVar {
		return
	}
	ke, ok := s.keys[k.Name]
	if !ok || !ke.fromData || !d[0].fromData || ke.size == d[0].size {
		return
	}
	s.warn(e.Pos, fmt.Sprintf("in %s, %s ranges over %s but is a key of %s: the sizes differ", ir.Format(e), k.Name, ke.origin, d[0].origin))
}

// checkJoin warns when e = (k1 == k2) joins two key variables that
// range over modes of the user's data of different sizes: the join of
// TTM's A(i,j,l) with B(k,l) when A's third mode and B's second differ.
func (s *shapes) checkJoin(e *ir.Expr) {
	a, b := e.Args[0], e.Args[1]
	if a.Op != ir.OpVar || b.Op != ir.OpVar {
		return
	}
	ka, okA := s.keys[a.Name]
	kb, okB := s.keys[b.Name]
	if !okA || !okB || !ka.fromData || !kb.fromData || ka.size == kb.size {
		return
	}
	// The desugarer renames a key shared by two sources, so the message
	// names the data, not the variables.
	s.warn(e.Pos, fmt.Sprintf("a join matches keys of %s with keys of %s: the sizes differ", ka.origin, kb.origin))
}

func (s *shapes) warn(pos ir.Pos, msg string) {
	if pos.IsValid() {
		msg = pos.String() + ": " + msg
	}
	if !slices.Contains(s.warnings, msg) {
		s.warnings = append(s.warnings, msg)
	}
}

// constInt evaluates an int expression over constants and scalar
// objects (a range's bound such as 0:A_len1).
func (s *shapes) constInt(e *ir.Expr) (int64, bool) {
	switch e.Op {
	case ir.OpConst:
		return e.I, e.Type.Base == ir.Int && e.Type.Depth == 0
	case ir.OpGlobal:
		if sc, ok := s.store[e.Name].(*storage.Scalar); ok && sc.Elem == ir.Int {
			return sc.I, true
		}
	case ir.OpAdd, ir.OpSub, ir.OpMul:
		a, ok1 := s.constInt(e.Args[0])
		b, ok2 := s.constInt(e.Args[1])
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case ir.OpAdd:
			return a + b, true
		case ir.OpSub:
			return a - b, true
		}
		return a * b, true
	}
	return 0, false
}

// fit pads or cuts sh to depth levels (unknown ones unknown).
func fit(sh []extent, depth int) []extent {
	out := make([]extent, depth)
	copy(out, sh)
	return out
}

// join is the extent of a union of keys (d1 + d2): the larger bound,
// known only when both are.
func join(a, b []extent) []extent {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := make([]extent, min(len(a), len(b)))
	for i := range out {
		if a[i].size != 0 && b[i].size != 0 {
			out[i] = a[i]
			if b[i].size > a[i].size {
				out[i] = b[i]
			}
		}
	}
	return out
}

// meet is the extent of an intersection of keys (d1 * d2): either known
// bound holds, the smaller one best.
func meet(a, b []extent) []extent {
	if a == nil || b == nil {
		return nil
	}
	out := make([]extent, min(len(a), len(b)))
	for i := range out {
		switch {
		case a[i].size == 0:
			out[i] = b[i]
		case b[i].size == 0 || a[i].size <= b[i].size:
			out[i] = a[i]
		default:
			out[i] = b[i]
		}
	}
	return out
}

// sizes returns the bounds of sh (0 where unknown).
func sizes(sh []extent) []int64 {
	out := make([]int64, len(sh))
	for i, x := range sh {
		out[i] = x.size
	}
	return out
}
