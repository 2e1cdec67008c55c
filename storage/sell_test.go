package storage_test

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSellLayout builds SELL matrices taller than a sort window, with
// and without values, and checks the layout buildSell promises (rows
// sorted by decreasing length within each window, lanes packed two
// columns to a word, padding past each row) and that the mapping,
// evaluated by the interpreter with its @unique promises checked, is
// the logical matrix.
func TestSellLayout(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, format := range []string{"sell", "sell+pattern"} {
		f, err := storage.ParseFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		for _, dims := range [][]int64{{storage.SellWindow + 29, 37}, {13, 1 << 20}, {1, 1}} {
			c := randomTensor(rng, dims, int(dims[0]*3), storage.FieldInteger)
			// Some long rows, so that windows sort and chunks pad.
			for p := 0; p < 200; p++ {
				c.Coords[0] = append(c.Coords[0], int64(p%5)*dims[0]/5)
				c.Coords[1] = append(c.Coords[1], rng.Int63n(dims[1]))
				c.Vals = append(c.Vals, 2)
			}
			if f.Pattern {
				c = dedupOnes(c)
			}
			st, err := storage.Build("A", c, f)
			if err != nil {
				t.Fatal(err)
			}
			checkSellLayout(t, st, dims)
			src := storage.Mapping("A", f, 2, c.Elem())
			prog, err := sdql.Compile(sdql.Source{Name: "sell.sdql", Text: []byte(src)})
			if err != nil {
				t.Fatalf("%s: %v\n%s", format, err, src)
			}
			checkDeclaredSizes(t, format, prog, st)
			got, err := eval.EvalWith(prog.Compose("A"), st, eval.Options{CheckUnique: true})
			if err != nil {
				t.Fatalf("%s %v: %v", format, dims, err)
			}
			if want := logical(t, c); !value.Equal(got, want, 0) {
				t.Fatalf("%s %v: the mapping is not the matrix", format, dims)
			}
		}
	}
}

// dedupOnes keeps one entry of 1 per coordinate: a pattern matrix.
func dedupOnes(c *storage.COO) *storage.COO {
	out := &storage.COO{Dims: c.Dims, Coords: [][]int64{nil, nil}, Field: storage.FieldPattern}
	seen := map[[2]int64]bool{}
	for p := range c.Vals {
		k := [2]int64{c.Coords[0][p], c.Coords[1][p]}
		if !seen[k] {
			seen[k] = true
			out.Coords[0] = append(out.Coords[0], k[0])
			out.Coords[1] = append(out.Coords[1], k[1])
			out.Vals = append(out.Vals, 1)
		}
	}
	return out
}

func checkSellLayout(t *testing.T, st storage.Store, dims []int64) {
	t.Helper()
	arr := func(name string) []int64 { return st[name].(*storage.Array).I }
	perm, rlen, cpos, cols := arr("A_perm"), arr("A_rlen"), arr("A_cpos"), arr("A_cols")
	chunks := st["A_chunks"].(*storage.Scalar).I
	if chunks != (dims[0]+7)/8 || int64(len(perm)) != 8*chunks || int64(len(cpos)) != chunks+1 {
		t.Fatalf("%d chunks, %d lanes, %d chunk starts for %d rows", chunks, len(perm), len(cpos), dims[0])
	}
	seen := make([]bool, dims[0])
	for q, i := range perm {
		if int64(q) >= dims[0] {
			if i != 0 || rlen[q] != 0 {
				t.Fatalf("lane %d past the last row holds row %d of length %d", q, i, rlen[q])
			}
			continue
		}
		if i < 0 || i >= dims[0] || seen[i] {
			t.Fatalf("lane %d holds row %d: not a permutation", q, i)
		}
		seen[i] = true
		if q%storage.SellWindow != 0 && rlen[q] > rlen[q-1] {
			t.Fatalf("lane %d: row length %d after %d within a window", q, rlen[q], rlen[q-1])
		}
	}
	for c := int64(0); c < chunks; c++ {
		longest := int64(0)
		for _, l := range rlen[8*c : 8*c+8] {
			longest = max(longest, l)
		}
		if cpos[c+1]-cpos[c] != 4*longest {
			t.Fatalf("chunk %d: %d words for a longest row of %d", c, cpos[c+1]-cpos[c], longest)
		}
		for k := int64(0); k < longest; k++ {
			for lane := int64(0); lane < 8; lane++ {
				w := cols[cpos[c]+4*k+lane/2]
				col := w & math.MaxUint32
				if lane%2 == 1 {
					col = w >> 32
				}
				if k >= rlen[8*c+lane] && col != 0 {
					t.Fatalf("chunk %d lane %d step %d: padding holds column %d", c, lane, k, col)
				}
			}
		}
	}
}

func TestSellErrors(t *testing.T) {
	f, _ := storage.ParseFormat("sell")
	c := &storage.COO{Dims: []int64{2, 2, 2}, Coords: [][]int64{{0}, {1}, {1}}, Vals: []float64{1}, Field: storage.FieldReal}
	if _, err := storage.Build("A", c, f); err == nil || !strings.Contains(err.Error(), "order 2") {
		t.Errorf("a 3-tensor in sell: %v", err)
	}
	c = &storage.COO{Dims: []int64{2, 1 << 32}, Coords: [][]int64{{0}, {1}}, Vals: []float64{1}, Field: storage.FieldReal}
	if _, err := storage.Build("A", c, f); err == nil || !strings.Contains(err.Error(), "32 bits") {
		t.Errorf("2^32 columns in sell: %v", err)
	}
	if _, err := storage.ParseFormat("hash+pattern"); err == nil {
		t.Error("hash+pattern parses")
	}
}
