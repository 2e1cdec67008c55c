package opt

import (
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// Layout is how one level of a dictionary is (or will be) stored; the
// cost model reads it to pick the coefficients of Fig. 6 (iterating or
// probing a dense array is cheaper than a hash map).
type Layout uint8

const (
	LayoutNone    Layout = iota // a scalar, or not known
	LayoutArray                 // a physical array, a range or a subarray: positional, every position visited
	LayoutDense                 // built by @dense singletons into a dense array
	LayoutHash                  // built by @hash singletons
	LayoutLogical               // built by logical singletons: no representation chosen yet (cost ∞)
	// LayoutStored is a level of a physical hash map or trie. The engine
	// lays the map out by levels once (keys, children's bounds and
	// values as arrays) and walks a level as a segment of them, as it
	// walks a compressed level, not through a built dictionary's values.
	LayoutStored
)

func (l Layout) String() string {
	return [...]string{"", "array", "dense", "hash", "logical", "stored"}[l]
}

// rank orders layouts from the cheapest to read to the dearest; a class
// whose nodes build different layouts reports the cheapest.
func (l Layout) rank() int {
	return [...]int{5, 0, 1, 3, 4, 2}[l]
}

func annLayout(a ir.Ann) Layout {
	switch a {
	case ir.AnnDense:
		return LayoutDense
	case ir.AnnHash:
		return LayoutHash
	}
	return LayoutLogical
}

// Level is one level of a structured cardinality.
type Level struct {
	Size   float64 // estimated number of entries (per parent entry)
	Layout Layout
	// Keys bounds the level's keys when known: it caps Size (a sum of
	// singletons groups by key and cannot outgrow the key domain) and
	// proves reads indexed by the keys in bounds (safety.go).
	Keys interval
}

// capped returns n bounded by the level's key domain.
func (l Level) capped(n float64) float64 {
	if l.Keys.ok {
		if m := float64(l.Keys.hi-l.Keys.lo) + 1; n > m {
			return max(m, 0)
		}
	}
	return n
}

// Card is the structured cardinality of paper §5.5, n1[n2[...[s]]]: one
// Level per dictionary level, outermost first; a scalar has none. The
// static size #m of the paper is carried separately (Data.Known), since it
// describes a scalar's value rather than a dictionary.
type Card []Level

// Size is size(e) of Fig. 5: the number of entries of the outer level (1
// for a scalar).
func (c Card) Size() float64 {
	if len(c) == 0 {
		return 1
	}
	return c[0].Size
}

// Elem is elem(e) of Fig. 5.
func (c Card) Elem() Card {
	if len(c) == 0 {
		return nil
	}
	return c[1:]
}

// Layout is the layout of the outer level.
func (c Card) Layout() Layout {
	if len(c) == 0 {
		return LayoutNone
	}
	return c[0].Layout
}

// Total is the estimated number of scalar leaves.
func (c Card) Total() float64 {
	t := 1.0
	for _, l := range c {
		t *= l.Size
	}
	return t
}

// scaled returns c with its outer size multiplied by f.
func (c Card) scaled(f float64) Card { return c.scaledAt(0, f) }

// scaledAt returns c with the size of level l multiplied by f: a loop
// whose body's outer l keys do not depend on it adds entries below them.
// A body that is a singleton chain down to its scalar is a scalar
// accumulated f times: the estimate is unchanged.
//
// A level capped by its key domain passes the rest on: entries beyond the
// domain share keys, so their children gather under fewer parents (a loop
// over 10^7 non-zeros building {i -> {j -> v}} for 10^5 rows i makes 10^5
// rows of 100, not 10^5 rows of 1). The leaves' count is kept down to the
// last level, where values with one key add up.
func (c Card) scaledAt(l int, f float64) Card {
	if l >= len(c) || f == 1 {
		return c
	}
	out := append(Card(nil), c...)
	want := out[l].Size * f
	out[l].Size = out[l].capped(want)
	for m := l + 1; m < len(out) && out[m-1].Size > 0 && out[m-1].Size < want; m++ {
		want = out[m].Size * want / out[m-1].Size
		out[m].Size = out[m].capped(want)
	}
	return out
}

func (c Card) equal(d Card) bool {
	if len(c) != len(d) {
		return false
	}
	for i := range c {
		if c[i] != d[i] {
			return false
		}
	}
	return true
}

// minTotal is the estimate below which meet stops taking a smaller one.
// A class that holds a test of itself (if c then e in e's class, once I9
// finds c true) scales its own estimate by c's selectivity at each pass
// of the analysis; without a floor it would shrink towards zero for
// hundreds of passes, each re-estimating every class above it.
const minTotal = 1e-6

// meet joins the estimates of two equivalent expressions: the sizes of
// the one with fewer leaves (taken whole: a level-by-level minimum of
// 1[n[s]] and n[1[s]], two shapes of one n-leaf estimate, would claim a
// single leaf), the cheaper layout and the tighter key bounds per level.
func (c Card) meet(d Card) Card {
	if len(c) != len(d) {
		if len(c) == 0 {
			return d
		}
		return c
	}
	smaller := d.Total() < c.Total() && c.Total() > minTotal
	var out Card
	for i := range c {
		l := c[i]
		if smaller {
			l.Size = d[i].Size
		}
		if d[i].Layout.rank() < l.Layout.rank() {
			l.Layout = d[i].Layout
		}
		if k := l.Keys.meet(d[i].Keys); k != l.Keys {
			l.Keys = k
			l.Size = l.capped(l.Size)
		}
		if l != c[i] && out == nil {
			out = append(Card(nil), c...)
		}
		if out != nil {
			out[i] = l
		}
	}
	if out == nil {
		return c
	}
	return out
}

// String prints c as in the paper: 100[10[s]], with layouts: 100a[10h[s]].
func (c Card) String() string {
	var sb strings.Builder
	for _, l := range c {
		sb.WriteString(formatCount(l.Size))
		if l.Layout != LayoutNone {
			sb.WriteString(" ")
			sb.WriteString(l.Layout.String())
		}
		sb.WriteString("[")
	}
	sb.WriteString("s")
	sb.WriteString(strings.Repeat("]", len(c)))
	return sb.String()
}

// formatCount prints an estimate with 3 significant digits.
func formatCount(x float64) string {
	switch {
	case x >= 1e6 || (x > 0 && x < 0.01):
		return strconv.FormatFloat(x, 'e', 2, 64)
	case x == float64(int64(x)):
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// Selectivities of conditions (the paper uses constants, "e.g. 0.1 for
// selectivity estimates", §5.5). An equality between two indices keeps one
// candidate in ten; an order comparison (<, <=, ...) half; their
// combinations follow independence.
const (
	selEq   = 0.1
	selNe   = 1 - selEq
	selCmp  = 0.5
	selElse = 0.5 // any other bool expression
)

// Sizes used when the data say nothing.
const (
	// defaultRangeSize is the size of a range or subarray whose bounds
	// are neither known numbers nor the segment bounds T_posK(p):T_posK(p+1).
	defaultRangeSize = 100
)
