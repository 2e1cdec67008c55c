package opt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// randomSparseCOO returns a tensor of nnz distinct random coordinates in
// dims, sorted, with small integer values (randomCOO visits every
// position: too slow for the shapes of real tensors).
func randomSparseCOO(r *rand.Rand, dims []int64, nnz int) *storage.COO {
	seen := map[string]bool{}
	var keys [][]int64
	for len(keys) < nnz {
		k := make([]int64, len(dims))
		for m, d := range dims {
			k[m] = r.Int64N(d)
		}
		if id := fmt.Sprint(k); !seen[id] {
			seen[id] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, slices.Compare)
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: storage.FieldReal}
	for _, k := range keys {
		for m := range dims {
			c.Coords[m] = append(c.Coords[m], k[m])
		}
		c.Vals = append(c.Vals, float64(r.IntN(9)+1))
	}
	return c
}

// setupWordNetTTM builds TTM over a tensor shaped like WordNet's synset
// relations (n x 26 x n, nnz entries) stored as CSF, and a 25 x n matrix
// B of the given density stored as CSC, the formats of the paper's Table 3.
func setupWordNetTTM(t testing.TB, n int64, nnz int, bDensity float64) (*ir.Expr, storage.Store) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 2))
	return composeOver(t, "ttm", []tensorInput{
		{"A", "csf", randomSparseCOO(r, []int64{n, 26, n}, nnz)},
		{"B", "csc", randomSparseCOO(r, []int64{25, n}, int(bDensity*float64(25*n)))},
	})
}

// tensorInput is a tensor of a test program: its name, format and entries.
type tensorInput struct {
	name, format string
	coo          *storage.COO
}

// composeOver builds the tensors in their formats and composes the
// example program with their standard mappings.
func composeOver(t testing.TB, program string, tensors []tensorInput) (*ir.Expr, storage.Store) {
	t.Helper()
	st := storage.Store{}
	var srcs []sdql.Source
	for _, x := range tensors {
		f, err := storage.ParseFormat(x.format)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := storage.Build(x.name, x.coo, f)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range objs {
			st[k] = v
		}
		srcs = append(srcs, sdql.Source{Name: x.name + ".sdql", Text: []byte(storage.Mapping(x.name, f, len(x.coo.Dims), ir.Real))})
	}
	src, _ := examples.Source(program)
	p, err := sdql.Compile(append(srcs, sdql.Source{Name: program + ".sdql", Text: src})...)
	if err != nil {
		t.Fatal(err)
	}
	return p.Compose(""), st
}

// columnScatterTTM is the plan TTM with A in CSF and B in CSC wants: for
// each entry A(i,j,l), scatter column l of B (a segment of CSC) into
// Q(i,j,·). It reads no B entry twice and builds no transposed B.
const columnScatterTTM = `
sum(<p1, i> in A_idx1(A_pos1(0):A_pos1(1)))
  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(p1):A_pos2(p1 + 1)))
    { @dense j -> sum(<p3, l> in A_idx3(A_pos3(p2):A_pos3(p2 + 1)))
      if 0 <= l && l < B_len1 then
        sum(<p4, k> in B_idx2(B_pos2(l):B_pos2(l + 1)))
          { @dense k -> A_val(p3) * B_val(p4) } } }`

// TestTTMScattersColumns: on WordNet-shaped data, where B has many more
// columns than TTM has A entries per column, the optimizer must find the
// column-scatter plan. It used to keep a plan that transposes B into a
// dictionary and runs k outermost (16x dearer by its own estimate): the
// fusion stage left the test l == i4 behind the lets S1 writes (let k =
// i5 in let l1 = i4 in let b = B_val(p4) in if l == l1 then ...), where
// neither I3 nor F1r could reach it; F1r only fired in the next stage,
// after the lets were inlined between stages, and only if the fused plan
// without F1r (a loop over every column of B per entry of A) had been
// the cheapest of the fusion stage, which it is only when B has few
// columns; from the transposed plan the explore stage cannot reach it
// (it saturates without F1r firing). Rule I4a, with I4, now moves the
// test out of those lets during fusion.
func TestTTMScattersColumns(t *testing.T) {
	naive, st := setupWordNetTTM(t, 20000, 60000, 1.0/32)
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	env := globalsEnv(naive)
	want, err := sdql.CompileExpr("column-scatter", []byte(columnScatterTTM), env)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(st, res.Stats)
	s.reserveNames(want)
	wantCost, err := s.termCost(want, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cost.Value > 1.1*wantCost.Value {
		t.Errorf("the optimized plan costs %s, the column-scatter plan %s:\n%s", res.Cost, wantCost, ir.Format(res.Plan))
	}
	if n := shapeOf(res.Plan).computedIters; n > 0 {
		t.Errorf("the plan iterates %d computed dictionaries (B transposed?):\n%s", n, ir.Format(res.Plan))
	}
	got, err := eval.Eval(res.Plan, st)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eval.Eval(want, st)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(got, ref, 1e-9) {
		t.Errorf("the optimized plan and the column-scatter plan disagree")
	}
}
