package storage

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// Physical object names of a tensor T (docs/design.md §3). Levels and
// dimensions are numbered from 1.
func DimName(t string, k int) string { return t + "_dim" + strconv.Itoa(k) }
func LenName(t string, l int) string { return t + "_len" + strconv.Itoa(l) }
func PosName(t string, l int) string { return t + "_pos" + strconv.Itoa(l) }
func IdxName(t string, l int) string { return t + "_idx" + strconv.Itoa(l) }
func ValName(t string) string        { return t + "_val" }
func HashName(t string) string       { return t + "_hash" }
func TrieName(t string) string       { return t + "_trie" }

// MaxDenseElements bounds the positions a dense level may create, so that
// asking for a dense layout of a huge sparse tensor fails with an error
// instead of exhausting memory.
var MaxDenseElements int64 = 1 << 28

// Build stores the tensor c, named name, in format f and returns its
// physical objects: name_dimK for every logical dimension; for level
// formats name_lenK (dense level K), name_posK and name_idxK (sparse level
// K; a singleton level has only name_idxK) and name_val; for hash
// name_hash; for trie name_trie. Values are ints when c.Field is integer or
// pattern, reals otherwise. Repeated coordinates are summed.
func Build(name string, c *COO, f Format) (Store, error) {
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("tensor %s: %v", name, err)
	}
	f, err := f.ForOrder(c.Order())
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %v", name, err)
	}
	if len(c.Vals) > math.MaxInt32 {
		return nil, fmt.Errorf("tensor %s: %d entries are more than storel can store", name, len(c.Vals))
	}
	st := Store{}
	for k, d := range c.Dims {
		st[DimName(name, k+1)] = IntScalar(d)
	}
	elem := c.Elem()
	switch f.Kind {
	case FormatHash:
		h := NewHashMap(elem, append([]int64(nil), c.Dims...))
		key := make([]int64, c.Order())
		// Entries go in in key order: a reader that needs them sorted
		// (the optimizer's statistics, the engine's grouped view) then
		// finds them so and does not sort them again.
		modes := make([]int, c.Order())
		for m := range modes {
			modes[m] = m
		}
		for _, p := range sortEntries(c, modes) {
			v := c.Vals[p]
			for m := range key {
				key[m] = c.Coords[m][p]
			}
			if err := h.Put(key, int64(v), v); err != nil {
				return nil, fmt.Errorf("tensor %s: %v", name, err)
			}
		}
		st[HashName(name)] = h
		return st, nil
	case FormatTrie:
		t := NewTrie(elem, append([]int64(nil), c.Dims...))
		key := make([]int64, c.Order())
		for p, v := range c.Vals {
			for m := range key {
				key[m] = c.Coords[m][p]
			}
			if err := t.Put(key, int64(v), v); err != nil {
				return nil, fmt.Errorf("tensor %s: %v", name, err)
			}
		}
		t.Finish()
		st[TrieName(name)] = t
		return st, nil
	}
	build := buildLevels
	if f.Kind == FormatSell {
		build = buildSell
	}
	if err := build(st, name, c, f); err != nil {
		return nil, fmt.Errorf("tensor %s in format %s: %v", name, f.Name, err)
	}
	// Scan the int arrays' ranges here, in the build phase, rather than
	// in a kernel's first run (see Array.IntRange).
	for _, o := range st {
		if a, ok := o.(*Array); ok && a.Elem == ir.Int {
			a.IntRange()
		}
	}
	return st, nil
}

// buildLevels fills st with the level arrays of c in level format f.
func buildLevels(st Store, name string, c *COO, f Format) error {
	perm := sortEntries(c, f.ModeOrder)
	// Merge repeated coordinates, summing their values.
	uniq := perm[:0:0]
	var vals []float64
	for i, p := range perm {
		if i > 0 && sameCoords(c, p, uniq[len(uniq)-1]) {
			vals[len(vals)-1] += c.Vals[p]
			continue
		}
		uniq = append(uniq, p)
		vals = append(vals, c.Vals[p])
	}
	// pos[e] is the position of unique entry e in the level built last;
	// count is how many positions that level has.
	pos := make([]int64, len(uniq))
	count := int64(1)
	for l, kind := range f.Levels {
		level := l + 1
		coords := c.Coords[f.ModeOrder[l]]
		switch kind {
		case LevelDense:
			n := c.Dims[f.ModeOrder[l]]
			if n != 0 && count > MaxDenseElements/n {
				return fmt.Errorf("dense level %d would hold %d x %d positions, more than the limit of %d", level, count, n, MaxDenseElements)
			}
			for e, p := range uniq {
				pos[e] = pos[e]*n + coords[p]
			}
			count *= n
			st[LenName(name, level)] = IntScalar(n)
		case LevelCompressed, LevelCompressedNonUnique:
			segs := make([]int64, count+1)
			idx := make([]int64, 0, len(uniq))
			prevParent := int64(-1)
			for e, p := range uniq {
				parent, x := pos[e], coords[p]
				if kind == LevelCompressedNonUnique || parent != prevParent || x != idx[len(idx)-1] {
					idx = append(idx, x)
					segs[parent+1]++
				}
				prevParent = parent
				pos[e] = int64(len(idx) - 1)
			}
			for i := 1; i < len(segs); i++ {
				segs[i] += segs[i-1]
			}
			count = int64(len(idx))
			st[PosName(name, level)] = IntArray(segs)
			st[IdxName(name, level)] = IntArray(idx)
		case LevelSingleton:
			idx := make([]int64, count)
			for e, p := range uniq {
				idx[pos[e]] = coords[p]
			}
			st[IdxName(name, level)] = IntArray(idx)
		default:
			return fmt.Errorf("unknown level kind %v", kind)
		}
	}
	if f.Pattern {
		for e, v := range vals {
			if v != 1 {
				p := uniq[e]
				coords := make([]string, c.Order())
				for m := range coords {
					coords[m] = strconv.FormatInt(c.Coords[m][p]+1, 10)
				}
				return fmt.Errorf("the entry at (%s) is %v: a +pattern format stores only entries equal to 1", strings.Join(coords, ","), v)
			}
		}
		return nil
	}
	if c.Elem() == ir.Int {
		out := make([]int64, count)
		for e, v := range vals {
			out[pos[e]] = int64(v)
		}
		st[ValName(name)] = IntArray(out)
	} else {
		out := make([]float64, count)
		for e, v := range vals {
			out[pos[e]] = v
		}
		st[ValName(name)] = RealArray(out)
	}
	return nil
}

func sameCoords(c *COO, a, b int32) bool {
	for _, col := range c.Coords {
		if col[a] != col[b] {
			return false
		}
	}
	return true
}
