package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// sparseCSR holds the arrays of a CSR (or, read by columns, CSC) matrix.
type sparseCSR struct {
	n, m int
	pos  []int64
	idx  []int64
	val  []float64
}

// randCSR draws an n x m matrix with about nnz entries, rows of varying
// length, sorted distinct columns and small integer-valued reals (so sums
// are exact in any order).
func randCSR(n, m, nnz int, rng *rand.Rand) *sparseCSR {
	a := &sparseCSR{n: n, m: m, pos: make([]int64, 1, n+1)}
	seen := map[int]bool{}
	var cols []int
	for i := 0; i < n; i++ {
		// Row lengths vary between 0 and twice the mean.
		k := 0
		if nnz > 0 {
			k = rng.IntN(2*nnz/n + 1)
		}
		k = min(k, m)
		clear(seen)
		cols = cols[:0]
		for len(cols) < k {
			c := rng.IntN(m)
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
		slices.Sort(cols)
		for _, c := range cols {
			a.idx = append(a.idx, int64(c))
			a.val = append(a.val, float64(rng.IntN(7)+1))
		}
		a.pos = append(a.pos, int64(len(a.idx)))
	}
	return a
}

// store adds the arrays under the naming contract (docs/design.md §3): a
// dense first level P_len1 and a sparse second level P_pos2, P_idx2.
func (a *sparseCSR) store(st storage.Store, p string) {
	st[p+"_len1"] = storage.IntScalar(int64(a.n))
	st[p+"_dim1"] = storage.IntScalar(int64(a.n))
	st[p+"_dim2"] = storage.IntScalar(int64(a.m))
	st[p+"_pos2"] = storage.IntArray(a.pos)
	st[p+"_idx2"] = storage.IntArray(a.idx)
	st[p+"_val"] = storage.RealArray(a.val)
}

// storeCSC adds the arrays read as a CSC matrix: level 1 is a.n columns
// of a.m rows.
func (a *sparseCSR) storeCSC(st storage.Store, p string) {
	a.store(st, p)
	st[p+"_dim1"] = storage.IntScalar(int64(a.m))
	st[p+"_dim2"] = storage.IntScalar(int64(a.n))
}

// sparseCSF holds a 3-level compressed (sss) tensor.
type sparseCSF struct {
	dims                               [3]int64
	pos1, idx1, pos2, idx2, pos3, idx3 []int64
	val                                []float64
}

// randCSF draws a d1 x d2 x d3 tensor with about nnz entries.
func randCSF(d1, d2, d3, nnz int, rng *rand.Rand) *sparseCSF {
	set := map[csfCoord]bool{}
	for len(set) < nnz {
		set[csfCoord{int64(rng.IntN(d1)), int64(rng.IntN(d2)), int64(rng.IntN(d3))}] = true
	}
	cs := make([]csfCoord, 0, len(set))
	for c := range set {
		cs = append(cs, c)
	}
	return csfOf([3]int64{int64(d1), int64(d2), int64(d3)}, cs, rng)
}

// csfCoord is an entry's coordinates in a 3-level tensor.
type csfCoord [3]int64

// csfOf returns the tensor of dims whose entries are at cs (distinct),
// with values drawn from rng.
func csfOf(dims [3]int64, cs []csfCoord, rng *rand.Rand) *sparseCSF {
	slices.SortFunc(cs, func(a, b csfCoord) int {
		for i := range a {
			if a[i] != b[i] {
				if a[i] < b[i] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	t := &sparseCSF{dims: dims, pos1: []int64{0}, pos2: []int64{0}, pos3: []int64{0}}
	for i, c := range cs {
		newI := i == 0 || c[0] != cs[i-1][0]
		newJ := newI || c[1] != cs[i-1][1]
		if newI {
			t.idx1 = append(t.idx1, c[0])
			if i > 0 {
				t.pos2 = append(t.pos2, int64(len(t.idx2)))
			}
		}
		if newJ {
			t.idx2 = append(t.idx2, c[1])
			if i > 0 {
				t.pos3 = append(t.pos3, int64(len(t.idx3)))
			}
		}
		t.idx3 = append(t.idx3, c[2])
		t.val = append(t.val, float64(rng.IntN(5)+1))
	}
	t.pos1 = append(t.pos1, int64(len(t.idx1)))
	t.pos2 = append(t.pos2, int64(len(t.idx2)))
	t.pos3 = append(t.pos3, int64(len(t.idx3)))
	return t
}

func (t *sparseCSF) store(st storage.Store, p string) {
	for k, d := range t.dims {
		st[fmt.Sprintf("%s_dim%d", p, k+1)] = storage.IntScalar(d)
	}
	st[p+"_pos1"] = storage.IntArray(t.pos1)
	st[p+"_idx1"] = storage.IntArray(t.idx1)
	st[p+"_pos2"] = storage.IntArray(t.pos2)
	st[p+"_idx2"] = storage.IntArray(t.idx2)
	st[p+"_pos3"] = storage.IntArray(t.pos3)
	st[p+"_idx3"] = storage.IntArray(t.idx3)
	st[p+"_val"] = storage.RealArray(t.val)
}

// The paper's kernels as optimized physical plans (the shapes the
// optimizer produces), over the arrays above.
const (
	planSpMV = `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j) }`

	planMMM = `sum(<i, _> in 0:A_len1)
  { @dense i ->
    sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
      sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1)))
        { @dense j -> A_val(p) * B_val(q) } }`

	// MMM with B stored by columns, as the optimizer plans it: B's rows
	// built once, holding positions into B_val (plus one: 0 is no entry).
	planMMMcsc = `let t1 =
  sum(<j1, _> in 0:B_len1)
    sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
      { @dense c1 -> { @dense j1 -> p3 + 1 } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t14 = A_val(p2) in
    sum(<i3, r1> in t1(k)) { @dense i3 -> B_val(r1 - 1) * t14 } }`

	// A is CSC (level 1: columns k), B is CSR (level 1: rows k).
	planSumMMM = `sum(<k, _> in 0:A_len1)
  (sum(<p, i> in A_idx2(A_pos2(k):A_pos2(k+1))) A_val(p)) *
  (sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) B_val(q))`

	// The optimizer's SumMMM plan: B's row sum bound per row, a factor
	// of the terms of A's row.
	planRowSumLet = `sum(<k, _> in 0:A_len1)
  let t = sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) B_val(q) in
  sum(<p, i> in A_idx2(A_pos2(k):A_pos2(k+1))) A_val(p) * t`

	planBATAXNaive = `sum(<i, _> in 0:A_len1)
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i+1)))
    sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
      { @dense j -> beta * A_val(q) * A_val(p) * x(k) }`

	planBATAX = `sum(<i, _> in 0:A_len1)
  let t = sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(k) in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> beta * A_val(q) * t }`

	// A is CSF (i, j, l); B is CSC (level 1: columns l, level 2: rows k).
	planTTM = `sum(<ip, i> in A_idx1)
  { @hash i ->
    sum(<jp, j> in A_idx2(A_pos2(ip):A_pos2(ip+1)))
      { @hash j ->
        sum(<lp, l> in A_idx3(A_pos3(jp):A_pos3(jp+1)))
          sum(<kp, k> in B_idx2(B_pos2(l):B_pos2(l+1)))
            { @dense k -> A_val(lp) * B_val(kp) } } }`

	// Fig. 1 (d): B is CSF (i, k, l), C is CSR (k, j), D is CSR (j, l).
	planMTTKRP = `sum(<i_pos, i> in B_idx1)
  { @hash i ->
    sum(<k_pos, k> in B_idx2(B_pos2(i_pos):B_pos2(i_pos+1)))
      sum(<j_pos, j> in C_idx2(C_pos2(k):C_pos2(k+1)))
        { @dense j ->
          C_val(j_pos) * (
            merge(<l_posB, l_posD, l> in
                <B_idx3(B_pos3(k_pos):B_pos3(k_pos+1)),
                 D_idx2(D_pos2(j):D_pos2(j+1))>)
              B_val(l_posB) * D_val(l_posD)) } }`
)

// Hand-written loops over the same arrays doing the same work: the
// references for the tests and the baselines of the benchmarks.

func refSpMV(a *sparseCSR, x, y []float64) {
	for i := 0; i < a.n; i++ {
		s := 0.0
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			s += a.val[p] * x[a.idx[p]]
		}
		y[i] = s
	}
}

// refMMM computes A*B as the plan says: dense rows of dense columns.
func refMMM(a, b *sparseCSR) [][]float64 {
	rows := make([][]float64, a.n)
	for i := 0; i < a.n; i++ {
		if a.pos[i] == a.pos[i+1] {
			continue
		}
		w := make([]float64, b.m)
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			k, av := a.idx[p], a.val[p]
			for q := b.pos[k]; q < b.pos[k+1]; q++ {
				w[b.idx[q]] += av * b.val[q]
			}
		}
		rows[i] = w
	}
	return rows
}

// refMMMSparse computes A*B into sorted sparse rows (CSR arrays), as
// Gustavson's algorithm with a dense accumulator does: the hand-written
// counterpart of the engine's rows when they are less than half full
// (workspace.go keeps such rows as sorted lists). A row whose products
// could fill an eighth of the accumulator is collected by sweeping it;
// a sparser one tracks and sorts the keys it touches.
func refMMMSparse(a, b *sparseCSR) (pos, idx []int64, val []float64) {
	w := make([]float64, b.m)
	seen := make([]bool, b.m)
	var touched []int64
	pos = make([]int64, 1, a.n+1)
	// Products per row (at most its width): room for the output (and a
	// row's sweep), so that it never grows, and the choice of collection.
	prods := make([]int64, a.n)
	bound := int64(0)
	for i := range prods {
		r := int64(0)
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			k := a.idx[p]
			r += b.pos[k+1] - b.pos[k]
		}
		prods[i] = min(r, int64(b.m))
		bound += prods[i]
	}
	idx, val = make([]int64, 0, bound+int64(b.m)), make([]float64, 0, bound+int64(b.m))
	for i := 0; i < a.n; i++ {
		if 8*prods[i] >= int64(b.m) {
			for p := a.pos[i]; p < a.pos[i+1]; p++ {
				k, av := a.idx[p], a.val[p]
				for q := b.pos[k]; q < b.pos[k+1]; q++ {
					w[b.idx[q]] += av * b.val[q]
				}
			}
			// Every key is written, and kept if its value is not zero:
			// no branch on the values.
			n, c := len(idx), 0
			ks, vs := idx[n:n+b.m], val[n:n+b.m]
			for j, x := range w {
				ks[c], vs[c] = int64(j), x
				if x != 0 {
					c++
				}
				w[j] = 0
			}
			idx, val = idx[:n+c], val[:n+c]
			pos = append(pos, int64(len(idx)))
			continue
		}
		touched = touched[:0]
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			k, av := a.idx[p], a.val[p]
			for q := b.pos[k]; q < b.pos[k+1]; q++ {
				j := b.idx[q]
				if !seen[j] {
					seen[j] = true
					touched = append(touched, j)
				}
				w[j] += av * b.val[q]
			}
		}
		slices.Sort(touched)
		for _, j := range touched {
			if x := w[j]; x != 0 {
				idx, val = append(idx, j), append(val, x)
			}
			w[j], seen[j] = 0, false
		}
		pos = append(pos, int64(len(idx)))
	}
	return pos, idx, val
}

func refSumMMM(a, b *sparseCSR) float64 {
	s := 0.0
	for k := 0; k < a.n; k++ {
		sa, sb := 0.0, 0.0
		for p := a.pos[k]; p < a.pos[k+1]; p++ {
			sa += a.val[p]
		}
		for q := b.pos[k]; q < b.pos[k+1]; q++ {
			sb += b.val[q]
		}
		s += sa * sb
	}
	return s
}

func refBATAX(a *sparseCSR, beta float64, x, y []float64) {
	clear(y)
	for i := 0; i < a.n; i++ {
		t := 0.0
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			t += a.val[p] * x[a.idx[p]]
		}
		for q := a.pos[i]; q < a.pos[i+1]; q++ {
			y[a.idx[q]] += beta * a.val[q] * t
		}
	}
}

// refTTM returns Q(i,j,k) as nested maps over i and j with dense rows k.
func refTTM(a *sparseCSF, b *sparseCSR) map[int64]map[int64][]float64 {
	out := map[int64]map[int64][]float64{}
	for ip, i := range a.idx1 {
		for jp := a.pos2[ip]; jp < a.pos2[ip+1]; jp++ {
			row := make([]float64, b.m)
			for lp := a.pos3[jp]; lp < a.pos3[jp+1]; lp++ {
				l, av := a.idx3[lp], a.val[lp]
				for kp := b.pos[l]; kp < b.pos[l+1]; kp++ {
					row[b.idx[kp]] += av * b.val[kp]
				}
			}
			if out[i] == nil {
				out[i] = map[int64][]float64{}
			}
			out[i][a.idx2[jp]] = row
		}
	}
	return out
}

// refMTTKRP returns A(i,j) as dense rows j for every i of B.
func refMTTKRP(b *sparseCSF, c, d *sparseCSR) map[int64][]float64 {
	out := map[int64][]float64{}
	for ip, i := range b.idx1 {
		row := make([]float64, c.m)
		for kp := b.pos2[ip]; kp < b.pos2[ip+1]; kp++ {
			k := b.idx2[kp]
			lb0, lb1 := b.pos3[kp], b.pos3[kp+1]
			for jp := c.pos[k]; jp < c.pos[k+1]; jp++ {
				j := c.idx[jp]
				// The same galloping merge as the engine's (seek): the
				// fiber of B is short, the row of D long.
				s := 0.0
				bs, bv := b.idx3[lb0:lb1], b.val[lb0:lb1]
				ds, dv := d.idx[d.pos[j]:d.pos[j+1]], d.val[d.pos[j]:d.pos[j+1]]
				x, y := 0, 0
				for x < len(bs) && y < len(ds) {
					switch {
					case bs[x] < ds[y]:
						x = seek(bs, x+1, ds[y])
					case ds[y] < bs[x]:
						y = seek(ds, y+1, bs[x])
					default:
						s += bv[x] * dv[y]
						x++
						y++
					}
				}
				row[j] += c.val[jp] * s
			}
		}
		out[i] = row
	}
	return out
}

// vecValue and friends turn reference results into logical values.
func vecValue(v []float64) value.Value {
	d := &value.Dict{}
	for i, x := range v {
		if x != 0 {
			d.Keys = append(d.Keys, int64(i))
			d.Vals = append(d.Vals, x)
		}
	}
	return d
}

func rowsValue(rows [][]float64) value.Value {
	d := &value.Dict{}
	for i, r := range rows {
		if v := vecValue(r).(*value.Dict); len(v.Keys) > 0 {
			d.Keys = append(d.Keys, int64(i))
			d.Vals = append(d.Vals, v)
		}
	}
	return d
}

func mapValue[V any](m map[int64]V, f func(V) value.Value) value.Value {
	d := &value.Dict{}
	for _, k := range sortedKeys(m) {
		d.Keys = append(d.Keys, k)
		d.Vals = append(d.Vals, f(m[k]))
	}
	return d
}

// kernelCase is one paper kernel on random data with its reference.
type kernelCase struct {
	name string
	plan string
	st   storage.Store
	want func() value.Value
}

func kernelCases(scale int, rng *rand.Rand) []kernelCase {
	var cases []kernelCase
	{
		n := 50 * scale
		a := randCSR(n, n, 8*n, rng)
		x := randVec(n, rng)
		st := storage.Store{"x": storage.RealArray(x)}
		a.store(st, "A")
		cases = append(cases, kernelCase{"SpMV", planSpMV, st, func() value.Value {
			y := make([]float64, n)
			refSpMV(a, x, y)
			return vecValue(y)
		}})
	}
	{
		n := 40 * scale
		a := randCSR(n, n, 6*n, rng)
		b := randCSR(n, 25, 4*n, rng)
		st := storage.Store{}
		a.store(st, "A")
		b.store(st, "B")
		cases = append(cases, kernelCase{"MMM", planMMM, st, func() value.Value { return rowsValue(refMMM(a, b)) }})
		at := randCSR(n, n, 6*n, rng) // read as CSC: level 1 is k
		st2 := storage.Store{}
		at.store(st2, "A")
		b.store(st2, "B")
		cases = append(cases, kernelCase{"SumMMM", planSumMMM, st2, func() value.Value { return refSumMMM(at, b) }})
	}
	{
		n := 40 * scale
		a := randCSR(n, n, 6*n, rng)
		x := randVec(n, rng)
		st := storage.Store{"x": storage.RealArray(x), "beta": storage.RealScalar(2)}
		a.store(st, "A")
		want := func() value.Value {
			y := make([]float64, n)
			refBATAX(a, 2, x, y)
			return vecValue(y)
		}
		cases = append(cases, kernelCase{"BATAX", planBATAX, st, want})
		cases = append(cases, kernelCase{"BATAXNaive", planBATAXNaive, st, want})
	}
	{
		d := 12 * scale
		a := randCSF(d, d, d, 20*d, rng)
		b := randCSR(d, 25, 5*d, rng) // CSC of B(k, l): level 1 is l
		st := storage.Store{}
		a.store(st, "A")
		b.store(st, "B")
		cases = append(cases, kernelCase{"TTM", planTTM, st, func() value.Value {
			return mapValue(refTTM(a, b), func(m map[int64][]float64) value.Value {
				return mapValue(m, func(r []float64) value.Value { return vecValue(r) })
			})
		}})
	}
	{
		d := 12 * scale
		b := randCSF(d, d, d, 20*d, rng)
		c := randCSR(d, 25, 5*d, rng)
		dd := randCSR(25, d, 5*d, rng)
		st := storage.Store{}
		b.store(st, "B")
		c.store(st, "C")
		dd.store(st, "D")
		cases = append(cases, kernelCase{"MTTKRP", planMTTKRP, st, func() value.Value {
			return mapValue(refMTTKRP(b, c, dd), func(r []float64) value.Value { return vecValue(r) })
		}})
	}
	return cases
}

// Each kernel runs with narrow rows swept whole and marked (useSweep),
// on the closure path and with the loop-nest IR, where MMM and TTM,
// whose rows are narrow, must sweep some of them.
func TestPaperKernels(t *testing.T) {
	defer nestsOff()()
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(s bool) { useSweep, sweptRow, narrowRead = s, nil, nil }(useSweep)
	var swept, narrowReads atomic.Int64
	sweptRow = func() { swept.Add(1) }
	narrowRead = func() { narrowReads.Add(1) }
	for _, kc := range kernelCases(1, rng) {
		t.Run(kc.name, func(t *testing.T) {
			e := parse(t, kc.plan, kc.st)
			want := kc.want()
			before := kc.st.Bytes()
			for _, sweep := range []bool{false, true} {
				useSweep = sweep
				swept.Store(0)
				for _, threads := range []int{1, 2, 4} {
					got, err := runEngine(e, kc.st, threads)
					if err != nil {
						t.Fatalf("sweep=%v threads=%d: %v", sweep, threads, err)
					}
					if !value.Equal(got, want, 0) {
						t.Fatalf("sweep=%v threads=%d: engine differs from the hand-written loop\nengine: %.300s\nwant:   %.300s", sweep, threads, value.Format(got), value.Format(want))
					}
				}
			}
			agree(t, e, kc.st)
			narrowReads.Store(0)
			// SpMV's row loop (the loop-nest IR's, in position space)
			// reads its column indices as int32s where the assembly can
			// (a copy made at the first run).
			closuresOnly = false
			for _, sweep := range []bool{false, true} {
				useSweep = sweep
				swept.Store(0)
				agree(t, e, kc.st)
				if n := swept.Load(); (n > 0) != (sweep && (kc.name == "MMM" || kc.name == "TTM")) {
					t.Errorf("loop nests, sweep=%v: %d rows swept", sweep, n)
				}
			}
			closuresOnly = true
			if kc.name != "SpMV" || !narrowRows {
				return
			}
			if narrowed, idx := kc.st.Bytes()-before, kc.st["A_idx2"]; narrowed != 4*int64(idx.(*storage.Array).Len()) {
				t.Errorf("SpMV made %d bytes of narrow index copies; want 4 per index", narrowed)
			}
			if narrowReads.Swap(0) == 0 {
				t.Errorf("no row loop read narrow indices")
			}
		})
	}
}

// TestRefMMMSparse checks the sparse-row hand loop against the dense-row
// one, so that both baselines of the MMM benchmark do the same product.
func TestRefMMMSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, m := range []int{3, 40, 400} {
		a, b := randCSR(60, 50, 300, rng), randCSR(50, m, 10*m, rng)
		dense := refMMM(a, b)
		pos, idx, val := refMMMSparse(a, b)
		for i, row := range dense {
			var want []float64
			for _, x := range row {
				if x != 0 {
					want = append(want, x)
				}
			}
			got := val[pos[i]:pos[i+1]]
			if !slices.Equal(got, want) || !slices.IsSorted(idx[pos[i]:pos[i+1]]) {
				t.Fatalf("m=%d row %d: sparse %v at %v, dense %v", m, i, got, idx[pos[i]:pos[i+1]], row)
			}
			for q, j := range idx[pos[i]:pos[i+1]] {
				if row[j] != got[q] {
					t.Fatalf("m=%d row %d: key %d holds %v, dense %v", m, i, j, got[q], row[j])
				}
			}
		}
	}
}
