package opt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// hashKernels are the paper's kernels with hashed operands (hash maps and
// tries), on data whose hashed matrices store nothing in their last rows (trim: as in real
// matrices, whose largest stored row is often below the column count of
// the matrix they multiply).
//
// walked names the hash map the kernel itself walks whole inside a loop:
// TTM's output is dense in k, so every fiber of A meets every row of B.
var hashKernels = []struct {
	name    string
	tensors []tensorSpec
	walked  string
}{
	{"spmv", []tensorSpec{{"A", "hash", []int64{30, 40}, 0.1}}, ""},
	{"mmm", []tensorSpec{{"A", "hash", []int64{30, 40}, 0.1}, {"B", "hash", []int64{40, 25}, 0.1}}, ""},
	{"mmm", []tensorSpec{{"A", "csr", []int64{30, 40}, 0.1}, {"B", "hash", []int64{40, 25}, 0.1}}, ""},
	{"summmm", []tensorSpec{{"A", "hash", []int64{40, 40}, 0.1}, {"B", "hash", []int64{40, 40}, 0.1}}, ""},
	{"summmm", []tensorSpec{{"A", "csc", []int64{40, 40}, 0.1}, {"B", "hash", []int64{40, 40}, 0.1}}, ""},
	{"ttm", []tensorSpec{{"A", "hash", []int64{20, 30, 40}, 0.02}, {"B", "hash", []int64{10, 40}, 0.3}}, "B_hash"},
	{"mttkrp", []tensorSpec{{"B", "hash", []int64{20, 30, 40}, 0.02}, {"C", "hash", []int64{30, 8}, 0.5}, {"D", "hash", []int64{8, 40}, 0.5}}, ""},
	{"mmm", []tensorSpec{{"A", "trie", []int64{30, 40}, 0.1}, {"B", "trie", []int64{40, 25}, 0.1}}, ""},
	{"summmm", []tensorSpec{{"A", "trie", []int64{40, 40}, 0.1}, {"B", "trie", []int64{40, 40}, 0.1}}, ""},
}

// hashTrim is how many of the last keys of a hashed tensor's first mode
// store nothing in hashKernels.
const hashTrim = 3

// TestHashFormatsFuse: with hashed operands the plan walks each hash map
// once, at the outside or through a probe at the key it needs (B_hash(k)),
// never all of a hash map inside another loop, and computes what the naive
// plan computes.
func TestHashFormatsFuse(t *testing.T) {
	for _, k := range hashKernels {
		var formats []string
		for _, ts := range k.tensors {
			formats = append(formats, ts.format)
		}
		name := fmt.Sprintf("%s %v", k.name, formats)
		naive, st := setupKernel(t, k.name, 3, k.tensors)
		trimHashes(t, st, hashTrim)
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := eval.Eval(naive, st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eval.Eval(res.Plan, st)
		if err != nil || !value.Equal(want, got, 1e-9) {
			t.Fatalf("%s: the plan computes %v (%v), the naive plan %v:\n%s", name, got, err, want, ir.Format(res.Plan))
		}
		if s := shapeOf(res.Plan); s.logical > 0 {
			t.Errorf("%s: %d logical dictionaries:\n%s", name, s.logical, ir.Format(res.Plan))
		}
		if n := builtIters(res.Plan); n > 0 {
			t.Errorf("%s: %d loops over a dictionary the plan builds (a mapping not fused):\n%s", name, n, ir.Format(res.Plan))
		}
		w := nestedGlobalWalks(res.Plan, false)
		if w = slices.DeleteFunc(w, func(g string) bool { return g == k.walked }); len(w) > 0 {
			t.Errorf("%s: the plan walks all of %v inside another loop:\n%s", name, w, ir.Format(res.Plan))
		}
	}
}

// trimHashes drops the entries of every hash map and trie of st whose
// first key is among the last n of its dimension (the tensors' other
// formats keep them: the test compares plans, not formats).
func trimHashes(t *testing.T, st storage.Store, n int64) {
	t.Helper()
	for name, o := range st {
		switch h := o.(type) {
		case *storage.HashMap:
			out := storage.NewHashMap(h.Elem, h.Dims)
			for p, k := range h.Keys {
				if k[0] >= h.Dims[0]-n {
					continue
				}
				var i int64
				var f float64
				if h.Elem == ir.Real {
					f = h.F[p]
				} else {
					i = h.I[p]
				}
				if err := out.Put(k[:h.Arity], i, f); err != nil {
					t.Fatal(err)
				}
			}
			st[name] = out
		case *storage.Trie:
			root := h.Root
			keep := 0
			for keep < len(root.Keys) && root.Keys[keep] < h.Dims[0]-n {
				keep++
			}
			root.Keys, root.Children = root.Keys[:keep], root.Children[:keep]
			if h.Depth == 1 {
				root.I, root.F = root.I[:min(keep, len(root.I))], root.F[:min(keep, len(root.F))]
			}
			for k := range root.Index {
				if k >= h.Dims[0]-n {
					delete(root.Index, k)
				}
			}
		}
	}
}

// builtIters counts the loops of e over a dictionary that e computes: a
// source other than a range, a subarray, a variable, a physical object or
// a lookup into one (a hash probe).
func builtIters(e *ir.Expr) int {
	n := 0
	ir.Walk(e, func(x *ir.Expr) bool {
		if x.Op == ir.OpSum {
			src := x.Args[0]
			for src.Op == ir.OpLookup {
				src = src.Args[0]
			}
			switch src.Op {
			case ir.OpRange, ir.OpSubArray, ir.OpGlobal, ir.OpVar:
			default:
				n++
			}
		}
		return true
	})
	return n
}

// nestedGlobalWalks lists the physical objects that e iterates whole
// inside another loop (inLoop: e is in a loop's body).
func nestedGlobalWalks(e *ir.Expr, inLoop bool) []string {
	var out []string
	if inLoop && e.Op == ir.OpSum && e.Args[0].Op == ir.OpGlobal {
		out = append(out, e.Args[0].Name)
	}
	for i, a := range e.Args {
		body := (e.Op == ir.OpSum && i == 1) || (e.Op == ir.OpMerge && i == 2)
		out = append(out, nestedGlobalWalks(a, inLoop || body)...)
	}
	return out
}

// TestHashStats: the fan-outs and key bounds of a hash map do not depend
// on the order its entries were stored in, match a count of the distinct
// key prefixes, and bound each level's keys by its declared dimension.
func TestHashStats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dims := []int64{50, 40, 30}
	var keys [][]int64
	for range 500 {
		keys = append(keys, []int64{r.Int64N(dims[0] - 5), r.Int64N(dims[1]), r.Int64N(dims[2])})
	}
	build := func(keys [][]int64) *storage.HashMap {
		h := storage.NewHashMap(ir.Real, dims)
		for _, k := range keys {
			if err := h.Put(k, 0, 1); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	shuffled := build(keys)
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, slices.Compare)
	inOrder := build(sorted)

	// Distinct prefixes of each length, counted with sets.
	want := make([]float64, len(dims))
	for l := range dims {
		seen := map[[3]int64]bool{}
		for _, k := range keys {
			var p [3]int64
			copy(p[:l+1], k[:l+1])
			seen[p] = true
		}
		want[l] = float64(len(seen))
	}
	want = fanout(want)
	for _, h := range []*storage.HashMap{shuffled, inOrder} {
		fo, kb := hashStats(h)
		if !slices.Equal(fo, want) {
			t.Errorf("fan-out %v, want %v", fo, want)
		}
		if wantKeys := []int64{49, 39, 29}; !slices.Equal(kb, wantKeys) {
			t.Errorf("key bounds %v, want %v (the dimensions less one)", kb, wantKeys)
		}
	}
	// A key past its declared dimension raises the bound to it.
	over := build(append(slices.Clone(keys), []int64{60, 1, 1}))
	if _, kb := hashStats(over); kb[0] != 60 {
		t.Errorf("key bound %d with a key 60 stored past the dimension %d", kb[0], dims[0])
	}
}

// BenchmarkOptimizeHash measures the optimization of SpMV and MMM over
// hash maps of about 100,000 entries, statistics included (go test ./opt
// -run '^$' -bench OptimizeHash).
func BenchmarkOptimizeHash(b *testing.B) {
	for _, k := range []struct {
		name    string
		tensors []tensorSpec
	}{
		{"spmv", []tensorSpec{{"A", "hash", []int64{4000, 4000}, 0.006}}},
		{"mmm", []tensorSpec{{"A", "hash", []int64{4000, 4000}, 0.006}, {"B", "hash", []int64{4000, 4000}, 0.006}}},
	} {
		b.Run(k.name, func(b *testing.B) {
			naive, st := setupKernel(b, k.name, 1, k.tensors)
			for b.Loop() {
				if _, err := Optimize(naive, st, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
