package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// rowRangeStore holds a dense 150 x 90 matrix M, a vector x and an
// ELL-like layout: row i has L(i) entries from S(i) on, every second slot
// of V and C (the others padding).
func rowRangeStore(rng *rand.Rand) storage.Store {
	st := rowRangeStoreN(150, 90, 16, rng)
	denseStore(st, "M", 150, 90, rng)
	return st
}

// rowRangeStoreN holds the vector and the ELL-like layout of
// rowRangeStore, n rows of fewer than w entries (but every ninth), m
// columns.
func rowRangeStoreN(n, m, w int, rng *rand.Rand) storage.Store {
	st := storage.Store{"M_len1": storage.IntScalar(int64(n))}
	vecStore(st, "x", m, rng)
	var l, s, c []int64
	var v []float64
	for i := range n {
		k := rng.IntN(w)
		if i%9 == 4 {
			k = 70 // a row longer than a block takes alone
		}
		l = append(l, int64(k))
		s = append(s, int64(len(c)))
		for range 2 * k {
			c = append(c, rng.Int64N(int64(m)))
			v = append(v, rng.NormFloat64())
		}
	}
	st["L"], st["S"], st["C"], st["V"] = storage.IntArray(l), storage.IntArray(s), storage.IntArray(c), storage.RealArray(v)
	return st
}

// ellZeroStore holds an ELL matrix of width w: row i's slots are
// W*i..W*i+W-1 of E_col and E_val, padded with column 0 and value 0.
func ellZeroStore(st storage.Store, n, m, w int, rng *rand.Rand) {
	col, val := make([]int64, n*w), make([]float64, n*w)
	for i := range n {
		for s := range rng.IntN(w + 1) {
			col[i*w+s], val[i*w+s] = rng.Int64N(int64(m)), rng.NormFloat64()
		}
	}
	st["E_col"], st["E_val"], st["W"] = storage.IntArray(col), storage.RealArray(val), storage.IntScalar(int64(w))
}

// TestRowRangeDot: a range loop reading V(B + k) and y(C(B + k)) with
// windows end to end (a row-major ELL; a dense matrix's rows of any
// width) runs its rows as CSR rows of the segmented dot, at 1 and 3
// threads, as the interpreter computes it; windows that do not line up
// (a triangle) run in batches.
func TestRowRangeDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 13))
	for _, w := range []int{5, 81} {
		st := rowRangeStore(rng)
		ellZeroStore(st, 150, 90, w, rng)
		for _, tc := range []struct {
			name, plan string
			dot        bool
		}{
			{"ELL", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<s, _> in 0:W) E_val(W * i + s) * x_val(E_col(s + i * W)) }`, true},
			{"ELL pattern", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<s, _> in 0:W) x_val(E_col(W * i + s)) }`, true},
			{"ELL keyed by another row", `sum(<i, _> in 0:M_len1) { @dense M_len1 - 1 - i -> sum(<s, _> in 0:W) E_val(W * i + s) * x_val(E_col(W * i + s)) }`, true},
			{"a triangle", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<s, _> in i % W:W) E_val(W * i + s) * x_val(E_col(W * i + s)) }`, false},
			{"windows that differ", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<s, _> in 0:W) E_val(W * i + s) * x_val(E_col(W * i + s + 1 - 1 + (if i == 149 then 0 else 0))) }`, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := parse(t, tc.plan, st)
				seen := events(func() { agree(t, e, st) })
				// Without lined-up windows the rows run in batches; a run of
				// one row (the split's probe) lines up trivially.
				if (tc.dot && seen["dot"] == 0) || (!tc.dot && seen["dot"] > 1) || seen["fallback"] > 0 {
					t.Errorf("width %d: events %v, want dot %v and no fallback", w, seen, tc.dot)
				}
			})
		}
	}
}

// TestRowRanges runs loops whose inner range changes from row to row (a
// triangle, a band, row lengths read from an array) through the
// loop-nest IR at 1 and 3 threads against the interpreter: the rows must
// run in position space, blocks of rows at once, with no batch falling
// back to the closures.
func TestRowRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	st := rowRangeStore(rng)
	for _, tc := range []struct{ name, plan string }{
		{"upper triangle", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<j, _> in i:M_len2) M_val(M_len2 * i + j) * x_val(j) }`},
		{"lower triangle into a scalar", `sum(<i, _> in 0:x_len1) sum(<j, _> in 0:i + 1) M_val(M_len2 * i + j) * x_val(j)`},
		{"band", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<j, _> in (if i < 3 then 0 else i - 3):(if i + 4 > M_len2 then M_len2 else i + 4))
			M_val(M_len2 * i + j) * x_val(j) }`},
		{"empty and reversed ranges", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<j, _> in i % 7 + 30:i % 11 + 30) M_val(M_len2 * i + j) * x_val(j) }`},
		{"row lengths, strided", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<k, _> in 0:L(i)) V(S(i) + 2 * k) * x_val(C(S(i) + 2 * k)) }`},
		{"row lengths, keyed by another row", `sum(<i, _> in 0:M_len1) { @dense M_len1 - 1 - i -> sum(<k, _> in 0:L(i)) V(S(i) + 2 * k) * x_val(C(S(i) + 2 * k)) }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parse(t, tc.plan, st)
			if ex := explainOf(t, e, st); !strings.Contains(ex, "bounds laid out row by row") {
				t.Errorf("explain does not say the bounds are laid out row by row:\n%s", ex)
			}
			seen := events(func() { agree(t, e, st) })
			if seen["flat"] == 0 || seen["fallback"] > 0 {
				t.Errorf("events %v: want blocks in position space and no fallback", seen)
			}
		})
	}
}

// TestRowRangeErrors: a row whose range reads past an array, or whose
// bounds read past one, fails as in the interpreter, naming the array,
// at 1 and 3 threads; rows before it still run in blocks.
func TestRowRangeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 12))
	for _, tc := range []struct{ name, plan, want string }{
		{"a row past V", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<k, _> in 0:L(i) + (if i == 120 then 1000 else 0)) V(S(i) + 2 * k) * x_val(C(S(i) + 2 * k)) }`, "V"},
		{"bounds past L", `sum(<i, _> in 0:M_len1 + 5) { @dense i -> sum(<k, _> in 0:L(i)) V(S(i) + 2 * k) * x_val(C(S(i) + 2 * k)) }`, "L"},
		{"a triangle past x", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<j, _> in i:M_len2 + 1) M_val(i) * x_val(j) }`, "x_val"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := rowRangeStore(rng)
			e := parse(t, tc.plan, st)
			for _, threads := range []int{1, 3} {
				_, err := runEngine(e, st, threads)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("threads=%d: error %v, want one naming %s", threads, err, tc.want)
				}
			}
			agree(t, e, st)
		})
	}
}

// TestTriangularMapping: SpMV over the paper's lower-triangular mapping
// (row i's entries at i*(i+1)/2 + j, j in 0:i+1), as the optimizer plans
// it, runs its rows in position space and agrees with the interpreter at
// 1 and 3 threads.
func TestTriangularMapping(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(28, 14))
	st := storage.Store{"N": storage.IntScalar(n), "A_val": storage.RealArray(randVec(n*(n+1)/2, rng)), "x": storage.RealArray(randVec(n, rng))}
	prog, err := sdql.Compile(sdql.Source{Name: "tri.sdql", Text: []byte(`
CREATE int SCALAR N;
CREATE real ARRAY A_val(N*(N+1)/2);
CREATE real ARRAY x(N);
CREATE TENSOR A AS
  sum(<i,_> in 0:N, <j,_> in 0:(i+1)) {(i,j) -> A_val(i*(i+1)/2+j)};
CREATE TENSOR y AS sum(<(i,j),a> in A) { i -> a * x(j) };`)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := opt.Optimize(prog.Compose(""), st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	seen := events(func() { agree(t, res.Plan, st) })
	if seen["flat"] == 0 || seen["fallback"] > 0 {
		t.Errorf("%s: events %v, want rows in position space and no fallback", ir.Format(res.Plan), seen)
	}
}

// BenchmarkRowRanges times loops whose inner range changes from row to
// row, one thread: a band of 7 (200k rows), rows of 0-39 entries read
// through a length and a start per row (100k rows), and a row-major ELL
// of width 81 (20k rows, rows 0-81 long); cpu-ms/op is the process's CPU
// time per run, steadier than wall time on a shared machine:
//
//	go test ./engine -run XXX -bench RowRanges -count 5
func BenchmarkRowRanges(b *testing.B) {
	rng := rand.New(rand.NewPCG(28, 16))
	const n = 200000
	band := storage.Store{"N": storage.IntScalar(n), "B_val": storage.RealArray(randVec(7*n, rng)), "x_val": storage.RealArray(randVec(n, rng))}
	rows := rowRangeStoreN(100000, 1000, 40, rng)
	ell := storage.Store{"x_val": storage.RealArray(randVec(1000, rng)), "M_len1": storage.IntScalar(20000)}
	ellZeroStore(ell, 20000, 1000, 81, rng)
	for _, bc := range []struct {
		name, plan string
		st         storage.Store
	}{
		{"band", `sum(<i, _> in 0:N) { @dense i -> sum(<j, _> in (if i < 3 then 0 else i - 3):(if i + 4 > N then N else i + 4))
			B_val(6 * i + j + 3) * x_val(j) }`, band},
		{"row lengths", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<k, _> in 0:L(i)) V(S(i) + 2 * k) * x_val(C(S(i) + 2 * k)) }`, rows},
		{"ELL", `sum(<i, _> in 0:M_len1) { @dense i -> sum(<s, _> in 0:W) E_val(W * i + s) * x_val(E_col(W * i + s)) }`, ell},
	} {
		b.Run(bc.name, func(b *testing.B) {
			k, err := Compile(parse(b, bc.plan, bc.st), SchemaOf(bc.st), Options{Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			k.Prepare(bc.st)
			b.ResetTimer()
			c0 := cpuTime()
			for range b.N {
				if _, err := k.Exec(bc.st); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time too: on a shared machine, wall time counts waits.
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
