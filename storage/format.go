package storage

import (
	"fmt"
	"strconv"
	"strings"
)

// LevelKind says how one storage level holds its coordinates (TACO's level
// formats).
type LevelKind uint8

const (
	// LevelDense stores every coordinate 0..T_lenL-1 of each parent
	// position: position = parent*T_lenL + coordinate.
	LevelDense LevelKind = iota
	// LevelCompressed stores, for each parent position p, the sorted,
	// distinct coordinates T_idxL(T_posL(p)), ..., T_idxL(T_posL(p+1)-1).
	LevelCompressed
	// LevelCompressedNonUnique is COO's first level: like LevelCompressed
	// but one position per stored entry, so a coordinate may repeat.
	LevelCompressedNonUnique
	// LevelSingleton is COO's later levels: exactly one coordinate
	// T_idxL(p) per parent position p, at the same position.
	LevelSingleton
)

func (k LevelKind) String() string {
	switch k {
	case LevelDense:
		return "dense"
	case LevelCompressed:
		return "compressed"
	case LevelCompressedNonUnique:
		return "compressed-nonunique"
	case LevelSingleton:
		return "singleton"
	}
	return "LevelKind(" + strconv.Itoa(int(k)) + ")"
}

// CoordRuns reports whether f is a COO of order 2 or more whose levels
// the mapping walks as runs of equal coordinates (RunLevels).
func (f Format) CoordRuns() bool { return f.RunLevels() > 0 }

// RunLevels is the number of a COO's levels its mapping walks as runs of
// equal coordinates, found while walking (runs, runend): its entries are
// sorted, so each coordinate's entries are one segment of positions, and
// a plan walks them as it walks a compressed level's (one row per
// coordinate, its entries a segment of the next level) instead of
// revisiting the row at every entry. Every level but the last is walked
// so: a 3-tensor's second level groups the entries of a row into fibers.
func (f Format) RunLevels() int {
	if f.Kind != FormatLevels || len(f.Levels) < 2 || f.Levels[0] != LevelCompressedNonUnique {
		return 0
	}
	n := 0
	for n+1 < len(f.Levels) && f.Levels[n+1] == LevelSingleton {
		n++
	}
	return n
}

// FormatKind separates level formats from the two hashed layouts.
type FormatKind uint8

const (
	FormatLevels FormatKind = iota // arrays per level (dense, CSR, COO, CSF, ...)
	FormatHash                     // one HASHMAP T_hash keyed by all coordinates
	FormatTrie                     // one TRIE T_trie, one level per mode
	FormatSell                     // sliced ELLPACK of a matrix, rows in chunks of 8 (sell.go)
)

// Format is a tensor storage format: a named format or a TACO-style level
// string. A format of any order (dense, coo, csf, hash, trie) has no levels
// until ForOrder fixes its order.
type Format struct {
	Name      string // as written by the user, e.g. "csr" or "ss:1,0"
	Kind      FormatKind
	Levels    []LevelKind // in storage order; nil while the order is open
	ModeOrder []int       // ModeOrder[l] = logical mode (0-based) held by level l+1
	// Pattern stores no values: every stored entry is 1 (a "+pattern"
	// suffix, e.g. csr+pattern). The mapping's values are the constant 1,
	// so a kernel reads no value array: what a pattern matrix needs.
	Pattern bool
	family  byte // for an open order: 'd' dense, 's' csf, 'c' coo; 0 otherwise
}

// FormatNames lists the named formats.
var FormatNames = []string{"dense", "coo", "csr", "csc", "dcsr", "dcsc", "csf", "hash", "trie", "sell"}

// ParseFormat parses a format name (dense, coo, csr, csc, dcsr, dcsc, csf,
// hash, trie, sell) or a level string: one letter per level, d dense or s
// sparse, optionally followed by a colon and the mode order, the logical
// mode (0-based) each level holds: "ds", "ss:1,0", "sss:0,2,1".
//
// A level format followed by "+pattern" (csr+pattern, csf+pattern,
// ds+pattern) stores no values: every entry of the tensor must be 1.
func ParseFormat(s string) (Format, error) {
	name := strings.TrimSpace(s)
	if base, ok := strings.CutSuffix(strings.ToLower(name), "+pattern"); ok {
		f, err := ParseFormat(base)
		if err != nil {
			return Format{}, err
		}
		if f.Kind != FormatLevels && f.Kind != FormatSell {
			return Format{}, fmt.Errorf("format %q: +pattern needs a level format (csr, csc, dcsr, dcsc, csf, coo or a level string) or sell, not %s", s, f.Name)
		}
		if n := len(f.Levels); n > 0 && f.Levels[n-1] == LevelDense || f.family == 'd' {
			return Format{}, fmt.Errorf("format %q: +pattern needs a sparse last level (a dense one holds every position, stored or not)", s)
		}
		f.Name, f.Pattern = name, true
		return f, nil
	}
	switch strings.ToLower(name) {
	case "dense":
		return Format{Name: "dense", family: 'd'}, nil
	case "csf":
		return Format{Name: "csf", family: 's'}, nil
	case "coo":
		return Format{Name: "coo", family: 'c'}, nil
	case "hash":
		return Format{Name: "hash", Kind: FormatHash}, nil
	case "trie":
		return Format{Name: "trie", Kind: FormatTrie}, nil
	case "sell":
		return Format{Name: "sell", Kind: FormatSell, ModeOrder: []int{0, 1}}, nil
	case "csr":
		return levelFormat("csr", "ds", []int{0, 1}), nil
	case "csc":
		return levelFormat("csc", "ds", []int{1, 0}), nil
	case "dcsr":
		return levelFormat("dcsr", "ss", []int{0, 1}), nil
	case "dcsc":
		return levelFormat("dcsc", "ss", []int{1, 0}), nil
	}
	if name == "" {
		return Format{}, fmt.Errorf("empty format: want one of %s, or a level string such as ds or ss:1,0", strings.Join(FormatNames, ", "))
	}
	letters, order, hasOrder := strings.Cut(name, ":")
	for i := 0; i < len(letters); i++ {
		if c := letters[i]; c != 'd' && c != 's' {
			return Format{}, fmt.Errorf("unknown format %q: not one of %s, and level %d of a level string must be d (dense) or s (sparse), not %q",
				s, strings.Join(FormatNames, ", "), i+1, string(c))
		}
	}
	if letters == "" {
		return Format{}, fmt.Errorf("format %q has no levels before the colon", s)
	}
	modes := make([]int, len(letters))
	for i := range modes {
		modes[i] = i
	}
	if hasOrder {
		parts := strings.Split(order, ",")
		if len(parts) != len(letters) {
			return Format{}, fmt.Errorf("format %q: mode order lists %d modes for %d levels", s, len(parts), len(letters))
		}
		seen := make([]bool, len(letters))
		for i, p := range parts {
			m, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || m < 0 || m >= len(letters) {
				return Format{}, fmt.Errorf("format %q: mode order entry %q must be a mode number 0..%d", s, p, len(letters)-1)
			}
			if seen[m] {
				return Format{}, fmt.Errorf("format %q: mode %d appears twice in the mode order", s, m)
			}
			seen[m] = true
			modes[i] = m
		}
	}
	return levelFormat(name, letters, modes), nil
}

func levelFormat(name, letters string, modes []int) Format {
	f := Format{Name: name, ModeOrder: modes}
	for i := 0; i < len(letters); i++ {
		if letters[i] == 'd' {
			f.Levels = append(f.Levels, LevelDense)
		} else {
			f.Levels = append(f.Levels, LevelCompressed)
		}
	}
	return f
}

// String returns the name the format was parsed from.
func (f Format) String() string { return f.Name }

// Order returns the number of modes the format stores, or 0 if it takes
// any order.
func (f Format) Order() int { return len(f.ModeOrder) }

// LevelString renders the levels TACO-style, e.g. "ds:1,0" for CSC; COO
// levels print as q (non-unique) and u (singleton).
func (f Format) LevelString() string {
	var sb strings.Builder
	for _, k := range f.Levels {
		sb.WriteByte("dsqu"[k])
	}
	identity := true
	for i, m := range f.ModeOrder {
		identity = identity && i == m
	}
	if !identity {
		sb.WriteByte(':')
		for i, m := range f.ModeOrder {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(m))
		}
	}
	return sb.String()
}

// ForOrder returns f fixed to a tensor of the given order, or an error if
// f stores a different number of modes.
func (f Format) ForOrder(order int) (Format, error) {
	if order < 1 {
		return Format{}, fmt.Errorf("format %s: a tensor needs at least one mode, not %d", f.Name, order)
	}
	if f.Order() > 0 {
		if f.Order() != order {
			return Format{}, fmt.Errorf("format %s stores tensors of order %d, not %d", f.Name, f.Order(), order)
		}
		return f, nil
	}
	g := f
	g.ModeOrder = make([]int, order)
	for i := range g.ModeOrder {
		g.ModeOrder[i] = i
	}
	if f.Kind != FormatLevels {
		return g, nil
	}
	g.Levels = make([]LevelKind, order)
	for i := range g.Levels {
		switch f.family {
		case 'd':
			g.Levels[i] = LevelDense
		case 's':
			g.Levels[i] = LevelCompressed
		default:
			g.Levels[i] = LevelSingleton
		}
	}
	if f.family == 'c' {
		g.Levels[0] = LevelCompressedNonUnique
	}
	return g, nil
}
