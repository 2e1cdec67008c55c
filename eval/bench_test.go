package eval

import (
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// spmvNaivePlan is the naive plan of SpMV over the CSR mapping of Fig. 1
// (c): let A = <CSR mapping> in sum(<i,row> in A) {i -> sum(<j,a> in row) a * x(j)}.
func spmvNaivePlan(t testing.TB, st storage.Store) *ir.Expr {
	mapping := sum("row", "_", rng(n(0), gl("A_len1")), single(vr("row"),
		sum("off", "col", subarr(gl("A_idx2"), look(gl("A_pos2"), vr("row")), look(gl("A_pos2"), add(vr("row"), n(1)))),
			single(vr("col"), look(gl("A_val"), vr("off"))))))
	spmv := sum("i", "row", vr("A"), single(vr("i"), sum("j", "a", vr("row"), mul(vr("a"), look(gl("x"), vr("j"))))))
	return typed(t, let("A", mapping, spmv), st)
}

func TestSpMVNaivePlan(t *testing.T) {
	const rows, cols = 40, 30
	a := randSparse(newRand(41), rows, cols, 0.2, true)
	x := make([]float64, cols)
	for i := range x {
		x[i] = float64(i%7) - 2.5
	}
	st := storage.Store{"x": storage.RealArray(x)}
	csr(st, "A", a, rows)
	want := coords{}
	for k, v := range a {
		want[[4]int64{k[0]}] += v * x[k[1]]
	}
	same(t, "SpMV", run(t, spmvNaivePlan(t, st), st), want.toValue(1))
}

// BenchmarkSpMVNaivePlan runs the naive CSR SpMV plan on a 20000 x 20000
// matrix with about 10^5 non-zeros.
func BenchmarkSpMVNaivePlan(b *testing.B) {
	const size = 20000
	r := newRand(42)
	a := coords{}
	for i := range size {
		for range 5 {
			a[[4]int64{int64(i), int64(r.IntN(size))}] = r.Float64()
		}
	}
	x := make([]float64, size)
	for i := range x {
		x[i] = r.Float64()
	}
	st := storage.Store{"x": storage.RealArray(x)}
	csr(st, "A", a, size)
	plan := spmvNaivePlan(b, st)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Eval(plan, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(a)), "ns/nnz")
}
