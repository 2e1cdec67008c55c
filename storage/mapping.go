package storage

import (
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// Mappings holds the hand-written storage mappings of the named formats
// (mappings/*.sdql), for users to read; each is the text Mapping generates
// for a matrix A (a 3-tensor for csf3), after a comment that explains it.
//
//go:embed mappings/*.sdql
var Mappings embed.FS

// Mapping returns the SDQLite storage mapping of tensor name stored in
// format f with the given order and element type: a CREATE statement for
// every physical object Build makes (sizes expressed over the objects
// declared before) and CREATE TENSOR name AS the expression that rebuilds
// the logical tensor. Levels are iterated in storage order and the result
// is nested in logical mode order, with @unique on the singletons whose
// keys are distinct among everything their enclosing sums add up. f must
// accept the order (Format.ForOrder); if not, Mapping returns "".
func Mapping(name string, f Format, order int, elem ir.Base) string {
	return mapping(name, f, order, elem, "")
}

// OffsetMapping is Mapping for a slice of a tensor whose dense level of
// logical mode 0 holds only coordinates base..base+len-1, stored from 0:
// the int SCALAR base (declared by the mapping) is added to that level's
// key, so the tensor keeps its original coordinates. It is "" where
// Mapping is, and for formats whose mode 0 is not held by a dense level
// (their coordinates are stored, not implied: they need no offset).
func OffsetMapping(name string, f Format, order int, elem ir.Base, base string) string {
	f, err := f.ForOrder(order)
	if err != nil || f.Kind != FormatLevels || !f.DenseMode0() {
		return ""
	}
	return mapping(name, f, order, elem, base)
}

// DenseMode0 reports whether a dense level holds logical mode 0, so that
// mode 0's coordinates are positions rather than stored keys.
func (f Format) DenseMode0() bool {
	for l, m := range f.ModeOrder {
		if m == 0 && l < len(f.Levels) {
			return f.Levels[l] == LevelDense
		}
	}
	return false
}

func mapping(name string, f Format, order int, elem ir.Base, base string) string {
	f, err := f.ForOrder(order)
	if err != nil {
		return ""
	}
	if f.Kind == FormatSell {
		return sellMapping(name, elem, f.Pattern)
	}
	g := &mappingGen{name: name, f: f, order: order, elem: elem, base: base}
	g.pickNames()
	var sb strings.Builder
	decl := func(format string, args ...any) {
		fmt.Fprintf(&sb, "CREATE "+format+";\n", args...)
	}
	for k := 1; k <= order; k++ {
		decl("int SCALAR %s", DimName(name, k))
	}
	if base != "" {
		decl("int SCALAR %s", base)
	}
	var def *ir.Expr
	switch f.Kind {
	case FormatHash:
		dims := make([]string, order)
		for k := range dims {
			dims[k] = DimName(name, k+1)
		}
		decl("%s HASHMAP %s(%s)", elem, HashName(name), strings.Join(dims, ", "))
		def = g.hashed(ir.Global(HashName(name)), 0)
	case FormatTrie:
		var dims strings.Builder
		for k := 1; k <= order; k++ {
			dims.WriteString("(" + DimName(name, k) + ")")
		}
		decl("%s TRIE %s%s", elem, TrieName(name), dims.String())
		def = g.hashed(ir.Global(TrieName(name)), 0)
	default:
		// count is the number of positions of the level before, as an
		// expression over the objects declared so far.
		count := ir.IntConst(1)
		for l, kind := range f.Levels {
			level := l + 1
			switch kind {
			case LevelDense:
				lenName := LenName(name, level)
				decl("int SCALAR %s", lenName)
				count = times(count, ir.Global(lenName))
			case LevelCompressed, LevelCompressedNonUnique:
				posName, idxName := PosName(name, level), IdxName(name, level)
				decl("int ARRAY %s(%s)", posName, plusOne(count))
				count = ir.Lookup(ir.Global(posName), count)
				decl("int ARRAY %s(%s)", idxName, count)
			case LevelSingleton:
				decl("int ARRAY %s(%s)", IdxName(name, level), count)
			}
		}
		if !f.Pattern {
			decl("%s ARRAY %s(%s)", elem, ValName(name), count)
		}
		g.placeSingletons()
		def = g.level(0, nil)
	}
	sb.WriteString("CREATE TENSOR " + name + " AS\n")
	for i, line := range strings.Split(ir.Format(def), "\n") {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("  " + line)
	}
	sb.WriteString(";\n")
	return sb.String()
}

// times and plusOne build index arithmetic, folding the constant 1 away.
func times(a, b *ir.Expr) *ir.Expr {
	if a.Op == ir.OpConst && a.I == 1 {
		return b
	}
	return ir.Binary(ir.OpMul, a, b)
}

func plusOne(a *ir.Expr) *ir.Expr {
	if a.Op == ir.OpConst {
		return ir.IntConst(a.I + 1)
	}
	return ir.Binary(ir.OpAdd, a, ir.IntConst(1))
}

type mappingGen struct {
	name  string
	f     Format
	order int
	elem  ir.Base
	// Variable name stems: coordinate of logical mode m is coord+(m+1),
	// position of level l is pos+l, value of hashed level l is val+l.
	coord, pos, val string
	base            string     // OffsetMapping's scalar added to mode 0's dense key, or ""
	keys            []*ir.Expr // key expression of each logical mode once bound
	placedAfter     []int      // levels after which each mode's singleton is emitted
	unique          []bool     // whether mode m's singleton is @unique
}

// pickNames chooses variable stems that cannot be confused with the tensor
// name. Physical objects always contain an underscore, variables never do.
func (g *mappingGen) pickNames() {
	for _, stems := range [][3]string{{"i", "p", "v"}, {"k", "q", "w"}, {"x", "y", "z"}} {
		clash := false
		for _, s := range stems {
			rest := strings.TrimPrefix(g.name, s)
			if rest != g.name && rest != "" && strings.Trim(rest, "0123456789") == "" {
				clash = true
			}
		}
		if !clash {
			g.coord, g.pos, g.val = stems[0], stems[1], stems[2]
			return
		}
	}
}

func (g *mappingGen) coordVar(m int) string { return g.coord + strconv.Itoa(m+1) }
func (g *mappingGen) posVar(l int) string   { return g.pos + strconv.Itoa(l) }
func (g *mappingGen) valVar(l int) string   { return g.val + strconv.Itoa(l) }

// placeSingletons decides where each logical mode's singleton goes: right
// after the first level at which it and all modes before it are bound. A
// key is unique when the levels up to that point hold exactly the modes
// 0..m (so distinct iterations have distinct keys) and no level so far
// repeats coordinates (COO's first level does until the full tuple).
func (g *mappingGen) placeSingletons() {
	d := g.order
	g.keys = make([]*ir.Expr, d)
	g.placedAfter = make([]int, d)
	g.unique = make([]bool, d)
	bound := make([]bool, d)
	next := 0
	nonUnique := false
	for l, m := range g.f.ModeOrder {
		bound[m] = true
		// Walked as runs, a COO's levels bind distinct coordinates within
		// their parent's, and the level after them one per entry.
		if r := g.f.RunLevels(); r > 0 {
			nonUnique = nonUnique || l == r
		} else {
			nonUnique = nonUnique || g.f.Levels[l] == LevelCompressedNonUnique
		}
		for next < d && bound[next] {
			g.placedAfter[next] = l + 1
			g.unique[next] = l == next && (!nonUnique || l+1 == d)
			next++
		}
	}
}

// level returns the expression for storage levels l+1.. given the position
// expression of level l (nil before the first level).
func (g *mappingGen) level(l int, parent *ir.Expr) *ir.Expr {
	if l == len(g.f.Levels) {
		if g.f.Pattern {
			if g.elem == ir.Real {
				return ir.RealConst(1)
			}
			return ir.IntConst(1)
		}
		return ir.Lookup(ir.Global(ValName(g.name)), parent)
	}
	level := l + 1
	m := g.f.ModeOrder[l]
	switch g.f.Levels[l] {
	case LevelDense:
		i := g.coordVar(m)
		g.keys[m] = ir.Var(i)
		if m == 0 && g.base != "" {
			g.keys[m] = ir.Binary(ir.OpAdd, ir.Var(i), ir.Global(g.base))
		}
		lenG := ir.Global(LenName(g.name, level))
		pos := ir.Var(i)
		if parent != nil {
			pos = ir.Binary(ir.OpAdd, ir.Binary(ir.OpMul, parent, lenG), ir.Var(i))
		}
		return ir.Sum(i, "_", ir.Range(ir.IntConst(0), lenG), g.emit(l, pos))
	case LevelSingleton:
		g.keys[m] = ir.Lookup(ir.Global(IdxName(g.name, level)), parent)
		return g.emit(l, parent)
	}
	if l == 0 && g.f.CoordRuns() {
		return g.runs()
	}
	// Compressed levels: the segment of the parent position.
	i, p := g.coordVar(m), g.posVar(level)
	g.keys[m] = ir.Var(i)
	posG := ir.Global(PosName(g.name, level))
	lo, hi := ir.Lookup(posG, ir.IntConst(0)), ir.Lookup(posG, ir.IntConst(1))
	if parent != nil {
		lo, hi = ir.Lookup(posG, parent), ir.Lookup(posG, plusOne(parent))
	}
	seg := ir.SubArray(ir.Global(IdxName(g.name, level)), lo, hi)
	return ir.Sum(p, i, seg, g.emit(l, ir.Var(p)))
}

// runs returns the expression for a COO's levels walked as runs
// (Format.RunLevels), found while walking: runs(D) gives the first
// position of each run of equal values of D and runend(D, p, hi) its end
// (the engine's loop over the runs has found it). For a 3-tensor, with
// n = T_pos1(1) and e = runend(T_idx1, p0, n):
//
//	sum(<p0, i1> in runs(T_idx1(T_pos1(0):n)))
//	  { @unique i1 -> sum(<p1, i2> in runs(T_idx2(p0:e)))
//	    { @unique i2 -> sum(<p2, i3> in T_idx3(p1:runend(T_idx2, p1, e)))
//	      { @unique i3 -> T_val(p2) } } }
func (g *mappingGen) runs() *ir.Expr {
	pos1 := ir.Global(PosName(g.name, 1))
	return g.runLevel(0, g.f.RunLevels(), ir.Lookup(pos1, ir.IntConst(0)), ir.Lookup(pos1, ir.IntConst(1)))
}

// runLevel walks level l as runs within positions lo:hi, and the levels
// after it; levels l >= n are walked per entry.
func (g *mappingGen) runLevel(l, n int, lo, hi *ir.Expr) *ir.Expr {
	m := g.f.ModeOrder[l]
	p, i := g.posVar(l), g.coordVar(m)
	g.keys[m] = ir.Var(i)
	idx := ir.Global(IdxName(g.name, l+1))
	if l == n {
		return ir.Sum(p, i, ir.SubArray(idx, lo, hi), g.emit(l, ir.Var(p)))
	}
	end := ir.Call("runend", idx, ir.Var(p), hi)
	body := g.wrap(l, g.runLevel(l+1, n, ir.Var(p), end))
	return ir.Sum(p, i, ir.Call("runs", ir.SubArray(idx, lo, hi)), body)
}

// emit wraps the levels after l in the singletons placed after level l.
func (g *mappingGen) emit(l int, pos *ir.Expr) *ir.Expr {
	return g.wrap(l, g.level(l+1, pos))
}

// wrap wraps body in the singletons placed after level l.
func (g *mappingGen) wrap(l int, body *ir.Expr) *ir.Expr {
	for m := g.order - 1; m >= 0; m-- {
		if g.placedAfter[m] == l+1 {
			ann := ir.AnnNone
			if g.unique[m] {
				ann = ir.AnnUnique
			}
			body = ir.Singleton(ann, g.keys[m], body)
		}
	}
	return body
}

// hashed returns the expression that walks a hash map or trie d levels
// deep from level l, whose dictionary is src: every key is unique.
func (g *mappingGen) hashed(src *ir.Expr, l int) *ir.Expr {
	k, v := g.coordVar(l), g.valVar(l+1)
	body := ir.Var(v)
	if l+1 < g.order {
		body = g.hashed(ir.Var(v), l+1)
	}
	return ir.Sum(k, v, src, ir.Singleton(ir.AnnUnique, ir.Var(k), body))
}
