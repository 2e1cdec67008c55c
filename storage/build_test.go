package storage

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/storel/storel/ir"
)

// matrixC is the matrix C of the paper's Fig. 1 (b):
//
//	6 0 9 8
//	0 0 0 0
//	5 0 0 7
func matrixC() *COO {
	// Given in a scrambled order to exercise the sort.
	return &COO{
		Dims:   []int64{3, 4},
		Coords: [][]int64{{2, 0, 0, 2, 0}, {3, 2, 0, 0, 3}},
		Vals:   []float64{7, 9, 6, 5, 8},
		Field:  FieldReal,
	}
}

func ints(st Store, name string) []int64 {
	a, ok := st[name].(*Array)
	if !ok || a.Elem != ir.Int {
		return nil
	}
	return a.I
}

func reals(st Store, name string) []float64 {
	a, ok := st[name].(*Array)
	if !ok || a.Elem != ir.Real {
		return nil
	}
	return a.F
}

func scalar(st Store, name string) int64 {
	if s, ok := st[name].(*Scalar); ok && s.Elem == ir.Int {
		return s.I
	}
	return -1
}

func mustFormat(t testing.TB, s string) Format {
	t.Helper()
	f, err := ParseFormat(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuildPaperCSR(t *testing.T) {
	st, err := Build("C", matrixC(), mustFormat(t, "csr"))
	if err != nil {
		t.Fatal(err)
	}
	// Fig. 1 (b): C_len1 = 3, C_pos2 = 0 3 3 5, C_idx2 = 0 2 3 0 3, C_val = 6 9 8 5 7.
	if got := scalar(st, "C_len1"); got != 3 {
		t.Errorf("C_len1 = %d, want 3", got)
	}
	check := func(name string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("C_pos2", ints(st, "C_pos2"), []int64{0, 3, 3, 5})
	check("C_idx2", ints(st, "C_idx2"), []int64{0, 2, 3, 0, 3})
	check("C_val", reals(st, "C_val"), []float64{6, 9, 8, 5, 7})
	check("C_dim1", scalar(st, "C_dim1"), int64(3))
	check("C_dim2", scalar(st, "C_dim2"), int64(4))
	if len(st) != 6 {
		t.Errorf("CSR store has %d objects, want 6: %v", len(st), keys(st))
	}
}

func TestBuildPaperDCSR(t *testing.T) {
	st, err := Build("C", matrixC(), mustFormat(t, "dcsr"))
	if err != nil {
		t.Fatal(err)
	}
	// §2: C_pos1 = 0 2, C_idx1 = 0 2, C_pos2 = 0 3 5, C_idx2 = 0 2 3 0 3.
	want := map[string][]int64{
		"C_pos1": {0, 2}, "C_idx1": {0, 2}, "C_pos2": {0, 3, 5}, "C_idx2": {0, 2, 3, 0, 3},
	}
	for name, w := range want {
		if got := ints(st, name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
	if got := reals(st, "C_val"); !reflect.DeepEqual(got, []float64{6, 9, 8, 5, 7}) {
		t.Errorf("C_val = %v", got)
	}
}

// TestBuildCOOArrays: a COO stores its coordinates and values only; the
// runs of its sorted levels are found while walking (the mapping's runs
// and runend), not stored.
func TestBuildCOOArrays(t *testing.T) {
	st, err := Build("C", matrixC(), mustFormat(t, "coo"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"C_dim1", "C_dim2", "C_idx1", "C_idx2", "C_pos1", "C_val"}
	if got := keys(st); !reflect.DeepEqual(got, want) {
		t.Errorf("coo C stores %v, want %v", got, want)
	}
	if !reflect.DeepEqual(ints(st, "C_idx1"), []int64{0, 0, 0, 2, 2}) {
		t.Errorf("coo C: idx1 %v", ints(st, "C_idx1"))
	}
}

func TestBuildPaperVectorCOOAndDense(t *testing.T) {
	// §2: v = (9, 0, 7, 5): dense v_len = 4, v_val = 9 0 7 5; COO
	// v_pos = 0 3, v_idx = 0 2 3, v_val = 9 7 5.
	v := &COO{Dims: []int64{4}, Coords: [][]int64{{3, 0, 2}}, Vals: []float64{5, 9, 7}, Field: FieldInteger}
	st, err := Build("v", v, mustFormat(t, "dense"))
	if err != nil {
		t.Fatal(err)
	}
	if scalar(st, "v_len1") != 4 || !reflect.DeepEqual(ints(st, "v_val"), []int64{9, 0, 7, 5}) {
		t.Errorf("dense v: len %d val %v", scalar(st, "v_len1"), ints(st, "v_val"))
	}
	st, err = Build("v", v, mustFormat(t, "coo"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ints(st, "v_pos1"), []int64{0, 3}) || !reflect.DeepEqual(ints(st, "v_idx1"), []int64{0, 2, 3}) ||
		!reflect.DeepEqual(ints(st, "v_val"), []int64{9, 7, 5}) {
		t.Errorf("coo v: %v %v %v", ints(st, "v_pos1"), ints(st, "v_idx1"), ints(st, "v_val"))
	}
}

func keys(st Store) []string {
	var ks []string
	for k := range st {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// walkFormat reads back the logical entries of tensor name from its
// physical objects by following the definition of each level kind (not the
// builder's code), checking the structural invariants on the way.
func walkFormat(t *testing.T, st Store, name string, f Format, dims []int64) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	d := len(dims)
	for k := 1; k <= d; k++ {
		if got := scalar(st, DimName(name, k)); got != dims[k-1] {
			t.Fatalf("%s = %d, want %d", DimName(name, k), got, dims[k-1])
		}
	}
	add := func(coords []int64, v float64) {
		if v != 0 {
			out[fmt.Sprint(coords)] += v
		}
	}
	switch f.Kind {
	case FormatHash:
		h := st[HashName(name)].(*HashMap)
		for p, k := range h.Keys {
			v := float64(0)
			if h.Elem == ir.Real {
				v = h.F[p]
			} else {
				v = float64(h.I[p])
			}
			add(k[:d], v)
		}
		return out
	case FormatTrie:
		tr := st[TrieName(name)].(*Trie)
		var rec func(n *TrieNode, prefix []int64)
		rec = func(n *TrieNode, prefix []int64) {
			if !slices.IsSorted(n.Keys) {
				t.Fatalf("trie node keys not sorted: %v", n.Keys)
			}
			for i, k := range n.Keys {
				c := append(append([]int64(nil), prefix...), k)
				switch {
				case len(c) < d:
					rec(n.Children[i], c)
				case tr.Elem == ir.Real:
					add(c, n.F[i])
				default:
					add(c, float64(n.I[i]))
				}
			}
		}
		rec(tr.Root, nil)
		return out
	}
	val := func(p int64) float64 {
		if a := reals(st, ValName(name)); a != nil {
			return a[p]
		}
		return float64(ints(st, ValName(name))[p])
	}
	count := int64(1)
	for l, kind := range f.Levels {
		level := l + 1
		switch kind {
		case LevelDense:
			count *= scalar(st, LenName(name, level))
		case LevelCompressed, LevelCompressedNonUnique:
			pos, idx := ints(st, PosName(name, level)), ints(st, IdxName(name, level))
			if int64(len(pos)) != count+1 || pos[0] != 0 || !slices.IsSorted(pos) || pos[count] != int64(len(idx)) {
				t.Fatalf("level %d: bad %s %v (count %d, idx %d)", level, PosName(name, level), pos, count, len(idx))
			}
			for p := int64(0); p < count; p++ {
				seg := idx[pos[p]:pos[p+1]]
				for i := 1; i < len(seg); i++ {
					if seg[i-1] > seg[i] || kind == LevelCompressed && seg[i-1] == seg[i] {
						t.Fatalf("level %d: segment %d not sorted and distinct: %v", level, p, seg)
					}
				}
			}
			count = int64(len(idx))
		case LevelSingleton:
			if got := int64(len(ints(st, IdxName(name, level)))); got != count {
				t.Fatalf("singleton level %d has %d coordinates for %d positions", level, got, count)
			}
		}
	}
	if n := st[ValName(name)].(*Array).Len(); int64(n) != count {
		t.Fatalf("%s has %d values for %d positions", ValName(name), n, count)
	}
	coords := make([]int64, d)
	var rec func(l int, p int64)
	rec = func(l int, p int64) {
		if l == len(f.Levels) {
			add(coords, val(p))
			return
		}
		level, m := l+1, f.ModeOrder[l]
		switch f.Levels[l] {
		case LevelDense:
			n := scalar(st, LenName(name, level))
			if n != dims[m] {
				t.Fatalf("%s = %d, want dimension %d", LenName(name, level), n, dims[m])
			}
			for i := int64(0); i < n; i++ {
				coords[m] = i
				rec(l+1, p*n+i)
			}
		case LevelSingleton:
			coords[m] = ints(st, IdxName(name, level))[p]
			rec(l+1, p)
		default:
			pos, idx := ints(st, PosName(name, level)), ints(st, IdxName(name, level))
			for q := pos[p]; q < pos[p+1]; q++ {
				coords[m] = idx[q]
				rec(l+1, q)
			}
		}
	}
	rec(0, 0)
	return out
}

// cooEntries sums the entries of c by coordinates, dropping zeros.
func cooEntries(c *COO) map[string]float64 {
	out := map[string]float64{}
	coords := make([]int64, c.Order())
	for p, v := range c.Vals {
		for m := range coords {
			coords[m] = c.Coords[m][p]
		}
		out[fmt.Sprint(coords)] += v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// randomCOO returns a random tensor with repeated coordinates and an
// explicit zero or two; integer values so sums are exact.
func randomCOO(rng *rand.Rand, dims []int64, n int) *COO {
	c := newCOO(len(dims), n)
	copy(c.Dims, dims)
	c.Field = FieldReal
	for p := 0; p < n; p++ {
		for m, d := range dims {
			c.Coords[m] = append(c.Coords[m], rng.Int63n(d))
		}
		c.Vals = append(c.Vals, float64(rng.Intn(9)-2))
	}
	return c
}

func TestBuildRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cases := []struct {
		format string
		dims   []int64
	}{
		{"dense", []int64{5, 7}}, {"coo", []int64{5, 7}}, {"csr", []int64{6, 4}}, {"csc", []int64{6, 4}},
		{"dcsr", []int64{9, 3}}, {"dcsc", []int64{9, 3}}, {"csf", []int64{4, 5, 6}}, {"hash", []int64{4, 5}},
		{"trie", []int64{4, 5, 3}}, {"dense", []int64{3, 4, 2}}, {"coo", []int64{3, 4, 5}}, {"csf", []int64{7}},
		{"coo", []int64{8}}, {"dense", []int64{6}}, {"hash", []int64{6}}, {"trie", []int64{6}},
		{"ds", []int64{5, 5}}, {"sd", []int64{5, 6}}, {"sd:1,0", []int64{5, 6}}, {"dd:1,0", []int64{3, 4}},
		{"sss:0,2,1", []int64{3, 4, 5}}, {"sds:2,0,1", []int64{3, 4, 5}}, {"dsd:1,2,0", []int64{3, 4, 5}},
		{"ssss:3,1,0,2", []int64{2, 3, 4, 5}}, {"ssd:2,1,0", []int64{3, 70000, 1 << 40}},
	}
	for _, tc := range cases {
		for _, n := range []int{0, 1, 12, 60} {
			c := randomCOO(rng, tc.dims, n)
			for _, field := range []string{FieldReal, FieldInteger} {
				c.Field = field
				f := mustFormat(t, tc.format)
				st, err := Build("T", c, f)
				if err != nil {
					t.Fatalf("%s %v n=%d: %v", tc.format, tc.dims, n, err)
				}
				if field == FieldInteger && st[ValName("T")] != nil && st[ValName("T")].ElemType() != ir.Int {
					t.Errorf("%s: integer field stored as %s", tc.format, st[ValName("T")].ElemType())
				}
				ff, _ := f.ForOrder(len(tc.dims))
				got := walkFormat(t, st, "T", ff, tc.dims)
				if want := cooEntries(c); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v n=%d %s: entries differ\n got %v\nwant %v", tc.format, tc.dims, n, field, got, want)
				}
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	c := matrixC()
	if _, err := Build("C", c, mustFormat(t, "csf")); err != nil {
		t.Errorf("csf of a matrix: %v", err)
	}
	if _, err := Build("C", c, mustFormat(t, "sss")); err == nil || err.Error() != "tensor C: format sss stores tensors of order 3, not 2" {
		t.Errorf("order mismatch: %v", err)
	}
	bad := matrixC()
	bad.Coords[1][2] = 4
	if _, err := Build("C", bad, mustFormat(t, "csr")); err == nil {
		t.Errorf("coordinate out of range accepted")
	}
	huge := &COO{Dims: []int64{1 << 20, 1 << 20}, Coords: [][]int64{{1}, {2}}, Vals: []float64{1}}
	if _, err := Build("H", huge, mustFormat(t, "dense")); err == nil {
		t.Errorf("dense 2^40 elements accepted")
	}
	if _, err := Build("H", huge, mustFormat(t, "csr")); err != nil {
		t.Errorf("csr of a huge sparse matrix: %v", err)
	}
}

func TestSortEntriesLarge(t *testing.T) {
	// Enough entries and wide enough keys for several radix passes, and
	// a fallback comparison sort for keys wider than 64 bits.
	rng := rand.New(rand.NewSource(2))
	for _, dims := range [][]int64{{1 << 20, 1 << 19}, {1 << 40, 1 << 30}, {3, 1 << 62}} {
		c := randomCOO(rng, dims, 5000)
		for _, modes := range [][]int{{0, 1}, {1, 0}} {
			perm := sortEntries(c, modes)
			for i := 1; i < len(perm); i++ {
				a, b := perm[i-1], perm[i]
				x := [2]int64{c.Coords[modes[0]][a], c.Coords[modes[1]][a]}
				y := [2]int64{c.Coords[modes[0]][b], c.Coords[modes[1]][b]}
				if x[0] > y[0] || x[0] == y[0] && (x[1] > y[1] || x[1] == y[1] && a > b) {
					t.Fatalf("dims %v modes %v: entries %d, %d out of order: %v %v", dims, modes, a, b, x, y)
				}
			}
		}
	}
}

func BenchmarkBuildCSR(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	c := randomCOO(rng, []int64{300000, 300000}, 1<<20)
	f := mustFormat(b, "csr")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Build("A", c, f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildHashInKeyOrder: a hash map holds its entries in key order
// whatever the order they were read in, repeated coordinates summed.
func TestBuildHashInKeyOrder(t *testing.T) {
	c := matrixC()
	c.Coords[0] = append(c.Coords[0], 0)
	c.Coords[1] = append(c.Coords[1], 2)
	c.Vals = append(c.Vals, 1)
	st, err := Build("C", c, mustFormat(t, "hash"))
	if err != nil {
		t.Fatal(err)
	}
	h := st[HashName("C")].(*HashMap)
	var keys [][2]int64
	for _, k := range h.Keys {
		keys = append(keys, [2]int64{k[0], k[1]})
	}
	want := [][2]int64{{0, 0}, {0, 2}, {0, 3}, {2, 0}, {2, 3}}
	if !slices.Equal(keys, want) || !slices.Equal(h.F, []float64{6, 10, 8, 5, 7}) {
		t.Errorf("keys %v values %v, want %v and [6 10 8 5 7]", keys, h.F, want)
	}
}
