package engine

import (
	"slices"
	"strings"
	"sync"

	"github.com/storel/storel/ir"
)

// Marks of the keys a split run's private dense rows were written at.
// Each worker of a split reduction into one dense row adds into a row of
// its own, merged at the end (mergeDense): read and zeroed whole, the W
// rows cost W times the row's length whatever the workers wrote. Where
// the keys a chunk writes are the values of an int array over segments
// of the chunk's positions (BATAX's columns j of its rows i), the worker
// marks their blocks after each chunk, and the merge reads only the
// marked blocks: on cnr-2000 at 16 workers a fifth of the blocks of 64
// keys, cut by web pages' links to their neighbours (7/10 at 2 workers,
// 1/3 at 8).
//
// Marking reads every key the run writes (about 2 ns a key, more than
// the loop's work on an entry), so a run marks only where the merge is
// predicted to cost half a worker's loop or more (marksPay), and the
// marks are kept for the next run over the same arrays cut into the same
// chunks, as the keys a chunk writes depend on nothing else.

// markShift: a mark covers 1<<markShift keys (512 bytes of a real row).
const markShift = 6

// keyMarker marks, for a split sum, the blocks of keys its chunks
// write (splitKeyMarker), and keeps a run's marks for the next.
type keyMarker struct {
	keys []keyed
	mu   sync.Mutex
	last keptMarks
}

// keyed is the keys of singletons: the values of int array arr at the
// positions of level lv.
type keyed struct {
	lv  *keyLevel
	arr *cell
}

// keptMarks is a run's marks and what they were made from: the arrays
// read (the same memory), the split loop's first position and the
// chunks.
type keptMarks struct {
	arrs  [][]int64
	lo    int64
	parts [][2]int64
	marks [][]byte
}

// keyLevel is the positions a sum walks: the split loop's (parent nil),
// or the segments pos(y+off):pos(y+off+1) of the positions y of parent.
type keyLevel struct {
	pos    *cell
	off    int64
	parent *keyLevel
}

// each calls f with intervals of positions that cover the level's
// positions for the split run's iterations from..to-1 (adjacent
// segments joined); false when a segment is malformed or f returns
// false.
func (lv *keyLevel) each(st srcState, from, to int64, f func(a, b int64) bool) bool {
	if lv.parent == nil {
		return f(st.lo+from, st.lo+to)
	}
	p := lv.pos.ints
	ca, cb := int64(0), int64(0)
	ok := lv.parent.each(st, from, to, func(a, b int64) bool {
		for y := a + lv.off; y < b+lv.off; y++ {
			if y < 0 || y+1 >= int64(len(p)) || p[y] > p[y+1] {
				return false
			}
			s, t := p[y], p[y+1]
			if s == t {
				continue
			}
			if s != cb {
				if cb > ca && !f(ca, cb) {
					return false
				}
				ca = s
			}
			cb = t
		}
		return true
	})
	return ok && (cb <= ca || f(ca, cb))
}

// splitKeyMarker returns, for split sum e whose result is one dense row,
// the marker of the keys its chunks write, or nil: every singleton e
// adds (through sums, lets, conditionals, additions and scalings) must
// be keyed by the value of a sum over an int array walked in segments
// of e's positions, or of the positions of such segments (a CSF's
// levels below e's).
func (c *compiler) splitKeyMarker(e *ir.Expr) *keyMarker {
	levels := map[string]*keyLevel{e.Vars[0]: {}}
	vals := map[string]*keyed{}
	var keys []*keyed
	// bind binds name to lv and k (nil: unknown) and returns the undo.
	bind := func(name string, lv *keyLevel, k *keyed) func() {
		l0, hadL := levels[name]
		v0, hadV := vals[name]
		levels[name], vals[name] = lv, k
		return func() {
			if hadL {
				levels[name] = l0
			} else {
				delete(levels, name)
			}
			if hadV {
				vals[name] = v0
			} else {
				delete(vals, name)
			}
		}
	}
	var walk func(x *ir.Expr) bool
	walk = func(x *ir.Expr) bool {
		switch x.Op {
		case ir.OpConst:
			return true // the empty dictionary
		case ir.OpSingleton:
			if x.Args[0].Op != ir.OpVar || vals[x.Args[0].Name] == nil {
				return false
			}
			keys = append(keys, vals[x.Args[0].Name])
			return true
		case ir.OpSum:
			var lv *keyLevel
			var k *keyed
			if v := segmentVar(x.Args[0]); v != "" && levels[v] != nil {
				if pos, off, ok := c.segmentOf(x.Args[0], v); ok {
					lv = &keyLevel{pos: pos, off: off, parent: levels[v]}
					if arr := c.cell(x.Args[0].Args[0]); arr.info.Kind == ir.ObjArray && arr.info.Elem == ir.Int {
						k = &keyed{lv, arr}
					}
				}
			}
			undo0 := bind(x.Vars[0], lv, nil)
			undo1 := bind(x.Vars[1], nil, k)
			ok := walk(x.Args[1])
			undo1()
			undo0()
			return ok
		case ir.OpLet:
			defer bind(x.Vars[0], nil, nil)()
			return walk(x.Args[1])
		case ir.OpIf:
			return walk(x.Args[1]) && (len(x.Args) < 3 || walk(x.Args[2]))
		case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpNeg:
			n := 0
			for _, a := range x.Args {
				if a.Type.Depth > 0 {
					if n++; !walk(a) {
						return false
					}
				}
			}
			return n > 0 && (x.Op != ir.OpMul || n == 1)
		}
		return false
	}
	if !walk(e.Args[1]) || len(keys) == 0 {
		return nil
	}
	km := &keyMarker{}
	for _, k := range keys {
		if !slices.Contains(km.keys, *k) {
			km.keys = append(km.keys, *k)
		}
	}
	return km
}

// mark marks in mark (a byte per block of keys) the blocks of the keys
// iterations from..to-1 of a split run write; false when a key falls
// outside mark or a segment is malformed (the caller then counts every
// block).
func (km *keyMarker) mark(st srcState, from, to int64, mark []byte) bool {
	for _, k := range km.keys {
		ints := k.arr.ints
		if !k.lv.each(st, from, to, func(a, b int64) bool {
			if a < 0 || b > int64(len(ints)) {
				return false
			}
			return markBlocks(ints[a:b], mark)
		}) {
			return false
		}
	}
	return true
}

// names returns the names of the arrays whose values are the keys.
func (km *keyMarker) names() string {
	var out []string
	for _, k := range km.keys {
		if !slices.Contains(out, k.arr.name) {
			out = append(out, k.arr.name)
		}
	}
	return strings.Join(out, ", ")
}

// arrays returns the arrays a run's marks are made from.
func (km *keyMarker) arrays() [][]int64 {
	var out [][]int64
	for _, k := range km.keys {
		out = append(out, k.arr.ints)
		for lv := k.lv; lv.parent != nil; lv = lv.parent {
			out = append(out, lv.pos.ints)
		}
	}
	return out
}

// kept returns the marks of an earlier run over the same arrays cut into
// the same chunks, or nil.
func (km *keyMarker) kept(st srcState, parts [][2]int64) [][]byte {
	km.mu.Lock()
	defer km.mu.Unlock()
	k := &km.last
	if k.marks == nil || k.lo != st.lo || !slices.Equal(k.parts, parts) ||
		!slices.EqualFunc(k.arrs, km.arrays(), sameInts) {
		return nil
	}
	return k.marks
}

// keep keeps a run's marks for the next.
func (km *keyMarker) keep(st srcState, parts [][2]int64, marks [][]byte) {
	km.mu.Lock()
	defer km.mu.Unlock()
	km.last = keptMarks{arrs: km.arrays(), lo: st.lo, parts: slices.Clone(parts), marks: marks}
}

// marksPay reports whether a split run of work units of work over
// workers private rows of row entries marks the keys its chunks write:
// where the merge (as privateWorkers counts it) is predicted to cost at
// least markMinShare of a worker's share of the loop, about what marking
// every key costs.
func marksPay(work, row int64, workers int) bool {
	w := int64(workers)
	merge := float64(mergeEntryWork * row * w / int64(min(workers, mergeLanes)))
	return merge >= markMinShare*float64(work/w)
}

// markMinShare is a var so that the engine's tests can mark keys in every
// split run.
var markMinShare = 0.5

// markBlocks marks the blocks of keys in mark; false when one falls
// outside it.
func markBlocks(keys []int64, mark []byte) bool {
	lim := uint64(len(mark)) << markShift
	for _, k := range keys {
		if uint64(k) >= lim {
			return false
		}
		mark[k>>markShift] = 1
	}
	return true
}

// segmentVar returns the variable v of a segment A(P(v+c):P(v+c+1)),
// or "".
func segmentVar(src *ir.Expr) string {
	if src.Op != ir.OpSubArray || src.Args[1].Op != ir.OpLookup {
		return ""
	}
	switch b := src.Args[1].Args[1]; {
	case b.Op == ir.OpVar:
		return b.Name
	case b.Op == ir.OpAdd && b.Args[0].Op == ir.OpVar:
		return b.Args[0].Name
	case b.Op == ir.OpAdd && b.Args[1].Op == ir.OpVar:
		return b.Args[1].Name
	}
	return ""
}

// eachMarked calls f with the maximal runs of keys in lo..hi-1 whose
// blocks mark marks (all of lo..hi-1 for a nil mark).
func eachMarked(mark []byte, lo, hi int64, f func(a, b int64)) {
	if mark == nil {
		f(lo, hi)
		return
	}
	a := int64(-1)
	for blk := lo >> markShift; blk<<markShift < hi; blk++ {
		on := blk < int64(len(mark)) && mark[blk] != 0
		switch {
		case on && a < 0:
			a = max(lo, blk<<markShift)
		case !on && a >= 0:
			f(a, blk<<markShift)
			a = -1
		}
	}
	if a >= 0 {
		f(a, hi)
	}
}
