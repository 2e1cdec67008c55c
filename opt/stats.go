package opt

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Stats are the data statistics the cardinality estimator reads (paper
// §5.5, where they came from the user; here they are gathered from the
// loaded data by GatherStats, and a user may override any entry).
type Stats struct {
	// Ints holds the value of int scalars (T_dimK, T_lenK, ...): the
	// static sizes #m of §5.5, which make the size of 0:T_len1 known.
	Ints map[string]int64
	// Arrays holds the length of every physical array and, for int arrays
	// that never decrease (segment bounds such as T_posK), the average
	// segment length: the estimated size of T_idxK(T_posK(p):T_posK(p+1)).
	Arrays map[string]ArrayStats
	// Maps holds, for every hash map and trie, the average number of keys
	// at each level: for a matrix, [non-empty rows, non-zeros per
	// non-empty row].
	Maps map[string][]float64
	// MapKeys holds, for every hash map and trie, a bound on the keys at
	// each level (keys are never negative): the declared dimension less
	// one, or the largest key when one exceeds it.
	MapKeys map[string][]int64
}

// ArrayStats describes one physical array.
type ArrayStats struct {
	Len int64
	// AvgSegment is (a[n-1]-a[0])/(n-1) for a non-decreasing int array of
	// n >= 2 elements, 0 otherwise.
	AvgSegment float64
	// Min and Max bound the values of a non-empty int array (HasRange):
	// the optimizer proves reads indexed by them in bounds.
	Min, Max int64
	HasRange bool
	// Mean is the average value of a non-empty int array: the expected
	// length of a range 0:A(e) whose e runs over A's indices (sell's row
	// lengths, where Max, a power-law graph's longest row, is tens of
	// times the mean).
	Mean float64
	// Zeros is the fraction of the array's values that are zero (a dense
	// factor stored in full): a dictionary built from its values stores
	// the others only. 0 when none are, or not known.
	Zeros float64
	// Sorted: an int array that never decreases (segment bounds), so
	// that P(x) <= P(x+1).
	Sorted bool
	// Runs is the number of runs of equal adjacent values of an int
	// array (a sorted COO level's distinct coordinates): a walk of
	// runs(A(lo:hi)) binds about Runs/Len of the window's positions.
	Runs int64
	// SortedWithin maps each int array Y of the same length that never
	// decreases and repeats values to the runs of equal (Y, A) pairs,
	// where A (this array) never decreases within each run of Y's
	// values: a COO's next coordinate, sorted within each coordinate of
	// the level above, so that its positions within a run of Y are runs
	// of A's values too (rule RN1w).
	SortedWithin map[string]int64
	// Low and High bound the 32-bit halves of the values of a non-empty
	// int array with no negative value, A(e) % 2^32 and A(e) / 2^32: an
	// array may pack two narrow indices per word (the sell format), and
	// reads indexed by a half are then provably in bounds too.
	Low, High [2]int64
}

// half is the divisor that takes a packed word apart.
const half = storage.PackedHalf

// GatherStats computes statistics from the physical objects of st.
func GatherStats(st storage.Store) *Stats {
	s := &Stats{Ints: map[string]int64{}, Arrays: map[string]ArrayStats{}, Maps: map[string][]float64{}, MapKeys: map[string][]int64{}}
	for name, o := range st {
		switch x := o.(type) {
		case *storage.Scalar:
			if x.Elem == ir.Int {
				s.Ints[name] = x.I
			}
		case *storage.Array:
			as := ArrayStats{Len: int64(x.Len())}
			if x.Elem == ir.Int && slices.IsSorted(x.I) {
				as.Sorted = true
				if len(x.I) >= 2 {
					as.AvgSegment = float64(x.I[len(x.I)-1]-x.I[0]) / float64(len(x.I)-1)
				}
			}
			if x.Elem == ir.Int && len(x.I) > 0 {
				as.Runs = countRuns(x.I)
				as.Min, as.Max = x.IntRange()
				as.HasRange = true
				as.Low, as.High, _ = x.Halves()
				sum := 0.0
				for _, v := range x.I {
					sum += float64(v)
				}
				as.Mean = sum / float64(len(x.I))
			}
			as.Zeros = zeroFraction(x)
			s.Arrays[name] = as
		case *storage.HashMap:
			s.Maps[name], s.MapKeys[name] = hashStats(x)
		case *storage.Trie:
			s.Maps[name] = trieFanout(x)
			s.MapKeys[name] = keyBounds(trieKeys(x), x.Dims)
		}
	}
	sortedWithin(st, s.Arrays)
	return s
}

// hashStats returns the average number of keys per parent key at each
// level of h and a bound on each level's keys (see keyBound). It counts
// the distinct key prefixes in one pass over the entries in key order,
// sorting an index of them unless they were stored in that order (a
// per-level set of prefixes costs a hash insert per entry and level:
// seconds on a tensor of a few hundred thousand entries).
func hashStats(h *storage.HashMap) ([]float64, []int64) {
	n := len(h.Keys)
	first := func(a, b *storage.HKey) int { // the first component where a and b differ
		c := 0
		for c < h.Arity && a[c] == b[c] {
			c++
		}
		return c
	}
	inOrder := true
	for i := 1; i < n && inOrder; i++ {
		c := first(&h.Keys[i-1], &h.Keys[i])
		inOrder = c < h.Arity && h.Keys[i-1][c] < h.Keys[i][c]
	}
	key := func(i int) *storage.HKey { return &h.Keys[i] }
	if !inOrder {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int {
			ka, kb := &h.Keys[a], &h.Keys[b]
			if c := first(ka, kb); c < h.Arity {
				return cmp.Compare(ka[c], kb[c])
			}
			return 0
		})
		key = func(i int) *storage.HKey { return &h.Keys[order[i]] }
	}
	counts := make([]float64, h.Arity)
	largest := make([]int64, h.Arity)
	for i := 0; i < n; i++ {
		k := key(i)
		c := 0
		if i > 0 {
			c = first(key(i-1), k)
		}
		for l := c; l < h.Arity; l++ {
			counts[l]++
		}
		for l := range largest {
			largest[l] = max(largest[l], k[l])
		}
	}
	return fanout(counts), keyBounds(largest, h.Dims)
}

// keyBounds bounds the keys of each level of a hash map or trie by its
// declared dimension less one, or by the largest key stored when that
// exceeds it. The dimension, not the largest key, is the bound a program
// shares with its other operands: a matrix's largest stored row is often
// below the column count that bounds the keys of the matrix it multiplies,
// and a loop over one then cannot become a lookup at the other's keys
// (F1's binding would leave the range its body was judged safe in).
func keyBounds(largest, dims []int64) []int64 {
	out := slices.Clone(largest)
	for l := range out {
		if l < len(dims) && dims[l]-1 > out[l] {
			out[l] = dims[l] - 1
		}
	}
	return out
}

func trieFanout(t *storage.Trie) []float64 {
	counts := make([]float64, t.Depth)
	var walk func(n *storage.TrieNode, level int)
	walk = func(n *storage.TrieNode, level int) {
		if n == nil || level >= t.Depth {
			return
		}
		counts[level] += float64(len(n.Keys))
		for _, c := range n.Children {
			walk(c, level+1)
		}
	}
	walk(t.Root, 0)
	return fanout(counts)
}

// trieKeys returns the largest key of each level of a trie.
func trieKeys(t *storage.Trie) []int64 {
	keys := make([]int64, t.Depth)
	var walk func(n *storage.TrieNode, level int)
	walk = func(n *storage.TrieNode, level int) {
		if n == nil || level >= t.Depth {
			return
		}
		for _, k := range n.Keys {
			keys[level] = max(keys[level], k)
		}
		for _, c := range n.Children {
			walk(c, level+1)
		}
	}
	walk(t.Root, 0)
	return keys
}

// fanout turns the number of keys at each level into keys per parent key.
func fanout(counts []float64) []float64 {
	out := make([]float64, len(counts))
	for i, c := range counts {
		if i == 0 || counts[i-1] == 0 {
			out[i] = c
		} else {
			out[i] = c / counts[i-1]
		}
	}
	return out
}

// Override returns a copy of s in which every entry given in o replaces
// the gathered one.
func (s *Stats) Override(o *Stats) *Stats {
	out := &Stats{Ints: maps.Clone(s.Ints), Arrays: maps.Clone(s.Arrays), Maps: maps.Clone(s.Maps), MapKeys: maps.Clone(s.MapKeys)}
	if o == nil {
		return out
	}
	if out.Ints == nil {
		out.Ints = map[string]int64{}
	}
	if out.Arrays == nil {
		out.Arrays = map[string]ArrayStats{}
	}
	if out.Maps == nil {
		out.Maps = map[string][]float64{}
	}
	maps.Copy(out.Ints, o.Ints)
	maps.Copy(out.Arrays, o.Arrays)
	maps.Copy(out.Maps, o.Maps)
	if out.MapKeys == nil {
		out.MapKeys = map[string][]int64{}
	}
	maps.Copy(out.MapKeys, o.MapKeys)
	return out
}

// ParseStats reads statistics written one object a line:
//
//	A_dim1 = 1000                    an int scalar
//	A_pos2 len=1001 avg=4.5          an array: length, average segment
//	A_idx2 len=4500 min=0 max=999    an int array's extreme values
//	H_hash fanout=100,3.2 maxkey=999,999
//	                                 a hash map or trie: keys per parent key
//	                                 and the largest key, at each level
//
// Blank lines and lines starting with # or // are ignored. name is used
// in error messages (name:line).
func ParseStats(name string, r io.Reader) (*Stats, error) {
	s := &Stats{Ints: map[string]int64{}, Arrays: map[string]ArrayStats{}, Maps: map[string][]float64{}, MapKeys: map[string][]int64{}}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "//") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if obj, val, ok := strings.Cut(text, "="); ok && !strings.Contains(strings.TrimSpace(obj), " ") {
			v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if err != nil {
				return nil, bad("%s: the value of an int scalar must be an integer, not %q", strings.TrimSpace(obj), strings.TrimSpace(val))
			}
			s.Ints[strings.TrimSpace(obj)] = v
			continue
		}
		fields := strings.Fields(text)
		obj := fields[0]
		if len(fields) == 1 {
			return nil, bad("%s: no statistic given (want NAME key=value ... or NAME = integer)", obj)
		}
		var as ArrayStats
		isArray := false
		for _, f := range fields[1:] {
			key, val, ok := strings.Cut(f, "=")
			if !ok {
				return nil, bad("expected key=value, found %q", f)
			}
			switch key {
			case "len":
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil || n < 0 {
					return nil, bad("len must be a non-negative integer, not %q", val)
				}
				as.Len, isArray = n, true
			case "avg":
				x, err := strconv.ParseFloat(val, 64)
				if err != nil || x < 0 {
					return nil, bad("avg must be a non-negative number, not %q", val)
				}
				as.AvgSegment, isArray = x, true
			case "min", "max":
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					return nil, bad("%s must be an integer, not %q", key, val)
				}
				if key == "min" {
					as.Min = n
				} else {
					as.Max = n
				}
				as.HasRange, isArray = true, true
			case "fanout":
				var fo []float64
				for _, p := range strings.Split(val, ",") {
					x, err := strconv.ParseFloat(p, 64)
					if err != nil || x < 0 {
						return nil, bad("fanout must be non-negative numbers separated by commas, not %q", val)
					}
					fo = append(fo, x)
				}
				s.Maps[obj] = fo
			case "maxkey":
				var ks []int64
				for _, p := range strings.Split(val, ",") {
					x, err := strconv.ParseInt(p, 10, 64)
					if err != nil || x < 0 {
						return nil, bad("maxkey must be non-negative integers separated by commas, not %q", val)
					}
					ks = append(ks, x)
				}
				s.MapKeys[obj] = ks
			default:
				return nil, bad("unknown statistic %q (known: len, avg, min, max, fanout, maxkey)", key)
			}
		}
		if isArray {
			s.Arrays[obj] = as
		}
	}
	return s, sc.Err()
}

// Names returns the objects s has statistics of, sorted.
func (s *Stats) Names() []string {
	names := slices.Concat(slices.Collect(maps.Keys(s.Ints)), slices.Collect(maps.Keys(s.Arrays)),
		slices.Collect(maps.Keys(s.Maps)), slices.Collect(maps.Keys(s.MapKeys)))
	slices.Sort(names)
	return slices.Compact(names)
}

// Format writes s in the syntax ParseStats reads, sorted by name.
func (s *Stats) Format(w io.Writer) {
	for _, k := range slices.Sorted(maps.Keys(s.Ints)) {
		fmt.Fprintf(w, "%s = %d\n", k, s.Ints[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Arrays)) {
		a := s.Arrays[k]
		fmt.Fprintf(w, "%s len=%d", k, a.Len)
		if a.AvgSegment > 0 {
			fmt.Fprintf(w, " avg=%s", strconv.FormatFloat(a.AvgSegment, 'g', 4, 64))
		}
		if a.HasRange {
			fmt.Fprintf(w, " min=%d max=%d", a.Min, a.Max)
		}
		fmt.Fprintln(w)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Maps)) {
		parts := make([]string, len(s.Maps[k]))
		for i, x := range s.Maps[k] {
			parts[i] = strconv.FormatFloat(x, 'g', 4, 64)
		}
		fmt.Fprintf(w, "%s fanout=%s", k, strings.Join(parts, ","))
		if ks := s.MapKeys[k]; len(ks) > 0 {
			parts = parts[:0]
			for _, x := range ks {
				parts = append(parts, strconv.FormatInt(x, 10))
			}
			fmt.Fprintf(w, " maxkey=%s", strings.Join(parts, ","))
		}
		fmt.Fprintln(w)
	}
}

// sortedWithin sets ArrayStats.SortedWithin: for each array Y that never
// decreases and repeats values, each other int array of its length that
// never decreases within Y's runs (one pass over the two, stopping at the
// first decrease).
func sortedWithin(st storage.Store, arrays map[string]ArrayStats) {
	for yn, ys := range arrays {
		if !ys.Sorted || ys.Runs >= ys.Len {
			continue
		}
		y := st[yn].(*storage.Array).I
		for xn := range arrays {
			x, ok := st[xn].(*storage.Array)
			if xn == yn || !ok || x.Elem != ir.Int || len(x.I) != len(y) {
				continue
			}
			if n, ok := runsWithin(x.I, y); ok {
				xs := arrays[xn]
				if xs.SortedWithin == nil {
					xs.SortedWithin = map[string]int64{}
				}
				xs.SortedWithin[yn] = n
				arrays[xn] = xs
			}
		}
	}
}

// runsWithin counts the runs of equal (y, x) pairs, reporting false where
// x decreases within a run of y's values.
func runsWithin(x, y []int64) (int64, bool) {
	n := int64(0)
	for p := range x {
		switch {
		case p == 0 || y[p] != y[p-1]:
			n++
		case x[p] < x[p-1]:
			return 0, false
		case x[p] != x[p-1]:
			n++
		}
	}
	return n, true
}

// countRuns counts the runs of equal adjacent values of a.
func countRuns(a []int64) int64 {
	n := int64(0)
	for p, v := range a {
		if p == 0 || v != a[p-1] {
			n++
		}
	}
	return n
}

// zeroFraction is the fraction of a's values that are zero.
func zeroFraction(a *storage.Array) float64 {
	n, z := 0, 0
	if a.Elem == ir.Int {
		n = len(a.I)
		for _, v := range a.I {
			if v == 0 {
				z++
			}
		}
	} else {
		n = len(a.F)
		for _, v := range a.F {
			if v == 0 {
				z++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(z) / float64(n)
}
