package eval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// These tests write the paper's examples in SDQLite, compile them with the
// front end, compose the naive plan and evaluate it on random data; each
// result is checked against a plain Go computation on the same data.

// plan compiles the sources (storage mappings first, the program last)
// and composes the naive plan of query ("" for the default).
func plan(t testing.TB, query string, srcs ...string) *ir.Expr {
	t.Helper()
	var ss []sdql.Source
	for i, s := range srcs {
		ss = append(ss, sdql.Source{Name: fmt.Sprintf("src%d.sdql", i), Text: []byte(s)})
	}
	p, err := sdql.Compile(ss...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	e := p.Compose(query)
	if e == nil {
		t.Fatalf("nothing to compute for query %q", query)
	}
	return e
}

// runPlan evaluates a compiled plan, failing the test on error.
func runPlan(t testing.TB, e *ir.Expr, st storage.Store) value.Value {
	t.Helper()
	v, err := EvalWith(e, st, Options{CheckUnique: true})
	if err != nil {
		t.Fatalf("eval: %v\nplan:\n%s", err, ir.Format(e))
	}
	return v
}

// csrMapping is Fig. 1 (c) for tensor T.
func csrMapping(T string) string {
	return fmt.Sprintf(`
CREATE int SCALAR %[1]s_len1;
CREATE int ARRAY %[1]s_pos2(%[1]s_len1 + 1);
CREATE int ARRAY %[1]s_idx2(%[1]s_pos2(%[1]s_len1));
CREATE real ARRAY %[1]s_val(%[1]s_pos2(%[1]s_len1));
CREATE TENSOR %[1]s AS sum(<row,_> in 0:%[1]s_len1)
    { row ->
      sum(<off,col> in %[1]s_idx2( %[1]s_pos2(row):%[1]s_pos2(row+1) ))
        { col -> %[1]s_val(off) }
    };
`, T)
}

// csf3 stores a 3-dimensional tensor sparse at every level (CSF):
// name_pos1 = [0, #i], name_idx1, name_pos2, name_idx2, name_pos3,
// name_idx3, name_val.
func csf3(st storage.Store, name string, c coords) {
	keys := c.sortedKeys()
	var idx [3][]int64
	pos := [3][]int64{{0}, {0}, {0}}
	var val []float64
	for n, k := range keys {
		newAt := 3 // first level at which k differs from the previous key
		for l := 0; l < 3; l++ {
			if n == 0 || keys[n-1][l] != k[l] {
				newAt = l
				break
			}
		}
		for l := newAt; l < 3; l++ {
			idx[l] = append(idx[l], k[l])
			if l < 2 {
				pos[l+1] = append(pos[l+1], pos[l+1][len(pos[l+1])-1])
			}
			if l > 0 {
				pos[l][len(pos[l])-1]++
			}
		}
		val = append(val, c[k])
	}
	pos[0] = []int64{0, int64(len(idx[0]))}
	for l := 0; l < 3; l++ {
		st[fmt.Sprintf("%s_pos%d", name, l+1)] = storage.IntArray(pos[l])
		st[fmt.Sprintf("%s_idx%d", name, l+1)] = storage.IntArray(idx[l])
	}
	st[name+"_val"] = storage.RealArray(val)
}

const csfMappingB = `
CREATE int ARRAY B_pos1(2);
CREATE int ARRAY B_idx1(B_pos1(1));
CREATE int ARRAY B_pos2(B_pos1(1) + 1);
CREATE int ARRAY B_idx2(B_pos2(B_pos1(1)));
CREATE int ARRAY B_pos3(B_pos2(B_pos1(1)) + 1);
CREATE int ARRAY B_idx3(B_pos3(B_pos2(B_pos1(1))));
CREATE real ARRAY B_val(B_pos3(B_pos2(B_pos1(1))));
CREATE TENSOR B AS
  sum(<i_pos, i> in B_idx1(B_pos1(0):B_pos1(1)))
    { @unique i ->
      sum(<k_pos, k> in B_idx2(B_pos2(i_pos):B_pos2(i_pos+1)))
        { @unique k ->
          sum(<l_pos, l> in B_idx3(B_pos3(k_pos):B_pos3(k_pos+1)))
            { @unique l -> B_val(l_pos) } } };
`

func TestCSF3Builder(t *testing.T) {
	// The CSF builder used below, on a tensor small enough to check by hand:
	// (0,1,2), (0,1,3), (0,4,0), (2,0,1).
	c := coords{{0, 1, 2}: 1, {0, 1, 3}: 2, {0, 4, 0}: 3, {2, 0, 1}: 4}
	st := storage.Store{}
	csf3(st, "T", c)
	want := map[string][]int64{
		"T_pos1": {0, 2}, "T_idx1": {0, 2},
		"T_pos2": {0, 2, 3}, "T_idx2": {1, 4, 0},
		"T_pos3": {0, 2, 3, 4}, "T_idx3": {2, 3, 0, 1},
	}
	for name, w := range want {
		if got := st[name].(*storage.Array).I; fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("%s = %v, want %v", name, got, w)
		}
	}
}

// Fig. 1: MTTKRP A(i,j) = sum_{k,l} B(i,k,l) C(k,j) D(j,l) with B in CSF
// and C, D in CSR (Fig. 1 (c)); the program of Fig. 1 (a) and the
// optimized plan of Fig. 1 (d), which uses merge.
func TestMTTKRP(t *testing.T) {
	const I, K, L, J = 5, 6, 7, 4
	r := newRand(51)
	b := coords{}
	for range 60 {
		b[[4]int64{int64(r.IntN(I)), int64(r.IntN(K)), int64(r.IntN(L))}] = float64(r.IntN(9) + 1)
	}
	c := randSparse(r, K, J, 0.5, true)
	d := randSparse(r, J, L, 0.5, true) // indexed (j, l), as in the program
	st := storage.Store{}
	csf3(st, "B", b)
	csr(st, "C", c, K)
	csr(st, "D", d, J)

	want := coords{}
	for kb, bv := range b {
		i, k, l := kb[0], kb[1], kb[2]
		for j := int64(0); j < J; j++ {
			want[[4]int64{i, j}] += bv * c[[4]int64{k, j}] * d[[4]int64{j, l}]
		}
	}
	program := `
CREATE TENSOR A AS
  sum(<(i,k,l), B_v> in B, <(k,j), C_v> in C, <(j,l), D_v> in D)
    { (i, j) -> B_v * C_v * D_v };
`
	naive := plan(t, "A", csfMappingB, csrMapping("C"), csrMapping("D"), program)
	same(t, "MTTKRP naive plan", runPlan(t, naive, st), want.toValue(2))

	// Fig. 1 (d), with this test's array names (C_pos2 for C_pos, ...).
	optimized := `
sum(<i_pos, i> in B_idx1)
  { i ->
    sum(<k_pos, k> in B_idx2( B_pos2(i_pos):B_pos2(i_pos+1) ))
      sum(<j_pos, j> in C_idx2( C_pos2(k):C_pos2(k+1) ))
        { j ->
          C_val(j_pos) * (
            merge(<l_posB,l_posD,l> in
                <B_idx3( B_pos3(k_pos):B_pos3(k_pos+1) ),
                 D_idx2( D_pos2(j):D_pos2(j+1) )>)
              B_val(l_posB) * D_val(l_posD)
          )
        }
  }
`
	opt := plan(t, "", csfMappingB, csrMapping("C"), csrMapping("D"), optimized)
	same(t, "MTTKRP Fig. 1 (d)", runPlan(t, opt, st), want.toValue(2))
}

// The storage mappings of §4 for a matrix C, each on random data.
func TestMatrixMappings(t *testing.T) {
	const M, N = 6, 7
	c := randSparse(newRand(61), M, N, 0.4, false)
	whole := c.toValue(2)
	dense := func() []float64 {
		v := make([]float64, M*N)
		for k, x := range c {
			v[k[0]*N+k[1]] = x
		}
		return v
	}

	t.Run("dense row-major", func(t *testing.T) {
		st := storage.Store{"M": storage.IntScalar(M), "N": storage.IntScalar(N), "V": storage.RealArray(dense())}
		e := plan(t, "C", `
CREATE int SCALAR M, N; CREATE ARRAY V(M*N);
CREATE TENSOR C AS
  sum (<i,_> in 0:M, <j,_> in 0:N) { (i,j) -> V(i*N+j) };`)
		same(t, "dense", runPlan(t, e, st), whole)
	})

	t.Run("DCSR", func(t *testing.T) {
		st := storage.Store{}
		var idx1, pos2, idx2 []int64
		var val []float64
		pos2 = []int64{0}
		last := int64(-1)
		for _, k := range c.sortedKeys() {
			if k[0] != last {
				idx1 = append(idx1, k[0])
				pos2 = append(pos2, pos2[len(pos2)-1])
				last = k[0]
			}
			idx2 = append(idx2, k[1])
			val = append(val, c[k])
			pos2[len(pos2)-1]++
		}
		st["C_pos1"] = storage.IntArray([]int64{0, int64(len(idx1))})
		st["C_idx1"] = storage.IntArray(idx1)
		st["C_pos2"] = storage.IntArray(pos2)
		st["C_idx2"] = storage.IntArray(idx2)
		st["C_val"] = storage.RealArray(val)
		e := plan(t, "C", `
CREATE int ARRAY C_pos1(2);
CREATE int ARRAY C_idx1(C_pos1(1));
CREATE int ARRAY C_pos2(C_pos1(1)+1);
CREATE int ARRAY C_idx2(C_pos2(C_pos1(1)));
CREATE real ARRAY C_val(C_pos2(C_pos1(1)));
CREATE TENSOR C AS
  sum (<i_pos, i> in C_idx1)
     let j_start = C_pos2(i_pos),
         j_end   = C_pos2(i_pos+1)
     in sum( <j_pos, j> in C_idx2( j_start:j_end ))
            { (i,j) -> C_val(j_pos)}`)
		same(t, "DCSR", runPlan(t, e, st), whole)
	})

	t.Run("CSR", func(t *testing.T) {
		st := storage.Store{}
		csr(st, "C", c, M)
		same(t, "CSR", runPlan(t, plan(t, "C", csrMapping("C")), st), whole)
	})

	t.Run("hash (DOK)", func(t *testing.T) {
		st := storage.Store{"H": hashOf(c, 2)}
		e := plan(t, "C", `
CREATE int SCALAR M, N;
CREATE real HASHMAP H(M,N);
CREATE TENSOR C AS sum(<(i,j),v> in H) {(i,j) -> v};`)
		same(t, "hash", runPlan(t, e, st), whole)
	})

	t.Run("trie", func(t *testing.T) {
		st := storage.Store{"T": trieOf(c, 2)}
		e := plan(t, "C", `
CREATE int SCALAR M, N;
CREATE real TRIE T(M)(N);
CREATE TENSOR C AS
  sum (<i,row> in T, <j,v> in row) { (i,j) -> v };`)
		same(t, "trie", runPlan(t, e, st), whole)
	})
}

// The lower-triangular, band and Z-order mappings of §4, with the
// corrections of docs/design.md §2.
func TestSpecialMappings(t *testing.T) {
	r := newRand(71)
	t.Run("lower triangular", func(t *testing.T) {
		const N = 6
		val := make([]float64, N*(N+1)/2)
		want := coords{}
		p := 0
		for i := range int64(N) { // row-major over the lower triangle
			for j := int64(0); j <= i; j++ {
				val[p] = float64(r.IntN(9) + 1)
				want[[4]int64{i, j}] = val[p]
				p++
			}
		}
		st := storage.Store{"N": storage.IntScalar(N), "A_val": storage.RealArray(val)}
		e := plan(t, "A", `
CREATE int SCALAR N;
CREATE real ARRAY A_val(N*(N+1)/2);
CREATE TENSOR A AS        // lower triangular
  sum(<i,_> in 0:N, <j,_> in 0:(i+1))
     {(i,j) -> A_val(i*(i+1)/2+j)}`)
		same(t, "lower triangular", runPlan(t, e, st), want.toValue(2))
	})

	t.Run("band", func(t *testing.T) {
		for _, N := range []int64{1, 2, 5} {
			val := make([]float64, 3*N-2)
			want := coords{}
			for p := range N {
				val[3*p] = float64(r.IntN(9) + 1)
				want[[4]int64{p, p}] = val[3*p]
				if p < N-1 {
					val[3*p+1] = float64(r.IntN(9) + 1)
					val[3*p+2] = float64(r.IntN(9) + 1)
					want[[4]int64{p, p + 1}] = val[3*p+1]
					want[[4]int64{p + 1, p}] = val[3*p+2]
				}
			}
			st := storage.Store{"N": storage.IntScalar(N), "B_val": storage.RealArray(val)}
			e := plan(t, "B", `
CREATE int SCALAR N;
CREATE real ARRAY B_val(3*N-2);
CREATE TENSOR B AS        // band matrix
  sum(<p,_> in 0:N)
    { (p,p) -> B_val(3*p)} +
    if (p<N-1)
      then { (p,p+1) -> B_val(3*p+1),
             (p+1,p) -> B_val(3*p+2) }`)
			same(t, fmt.Sprint("band N=", N), runPlan(t, e, st), want.toValue(2))
		}
	})

	t.Run("Z-order", func(t *testing.T) {
		const N = 8 // a power of 2
		val := make([]float64, N*N)
		want := coords{}
		for d := range int64(N * N) {
			val[d] = float64(r.IntN(9) + 1)
			var i, j int64
			for b := range int64(3) {
				i |= (d >> (2 * b) & 1) << b
				j |= (d >> (2*b + 1) & 1) << b
			}
			want[[4]int64{i, j}] = val[d]
		}
		st := storage.Store{"N": storage.IntScalar(N), "C_val": storage.RealArray(val)}
		e := plan(t, "C", `
CREATE int SCALAR N;
CREATE real ARRAY C_val(N*N);   // N is power of 2
CREATE TENSOR C AS              // Z-order curve
   sum (<d,v> in C_val)
      let i = even_bits(d),     // even bits of d
          j = odd_bits(d)       // odd bits of d
      in { (i,j) -> v }`)
		got := runPlan(t, e, st)
		same(t, "Z-order", got, want.toValue(2))
		if n := len(value.Entries(got)); n != N*N {
			t.Fatalf("Z-order decodes %d distinct positions, want %d", n, N*N)
		}
	})
}

// §2: the filter, the dot product and the element-wise product.
func TestVectorExamples(t *testing.T) {
	const size = 40
	r := newRand(81)
	u, v := make([]float64, size), make([]float64, size)
	for i := range u {
		u[i] = float64(r.IntN(11) - 5)
		v[i] = float64(r.IntN(11) - 5)
	}
	st := storage.Store{"n": storage.IntScalar(size), "U_val": storage.RealArray(u), "V_val": storage.RealArray(v)}
	mappings := `
CREATE int SCALAR n;
CREATE real ARRAY U_val(n), V_val(n);
CREATE TENSOR U AS sum(<i,x> in U_val) { i -> x };
CREATE TENSOR V AS sum(<i,x> in V_val) { i -> x };
`
	filter, dot, ew := coords{}, 0.0, coords{}
	for i := range u {
		if v[i] > 0 {
			filter[[4]int64{int64(i)}] = 5 * v[i]
		}
		dot += u[i] * v[i]
		ew[[4]int64{int64(i)}] = u[i] * v[i]
	}
	same(t, "filter", runPlan(t, plan(t, "", mappings, `sum( <i,v> in V ) if v>0 then { i -> 5*v }`), st), filter.toValue(1))
	same(t, "dot", runPlan(t, plan(t, "", mappings, `sum(<i,u> in U, <i,v> in V) {() -> u*v}`), st), dot)
	same(t, "elementwise", runPlan(t, plan(t, "", mappings, `sum(<i,u> in U, <i,v> in V) {i -> u*v}`), st), ew.toValue(1))
	scaled := coords{}
	for i := range v {
		scaled[[4]int64{int64(i)}] = 2.5 * v[i]
	}
	same(t, "a * V", runPlan(t, plan(t, "", mappings, `let a = 2.5 in a * V`), st), scaled.toValue(1))
	same(t, "sum form of a * V", runPlan(t, plan(t, "", mappings, `let a = 2.5 in sum(<i,v> in V) {i -> a * v}`), st), scaled.toValue(1))
}

// §3.2: both forms of matrix multiplication, on CSR inputs.
func TestMatrixMultiplication(t *testing.T) {
	const m, n, p = 6, 5, 7
	r := newRand(91)
	a, b := randSparse(r, m, n, 0.4, true), randSparse(r, n, p, 0.4, true)
	st := storage.Store{"m": storage.IntScalar(m), "n": storage.IntScalar(n), "p": storage.IntScalar(p)}
	csr(st, "A", a, m)
	csr(st, "B", b, n)
	want := coords{}
	for i := range int64(m) {
		for j := range int64(n) {
			for k := range int64(p) {
				want[[4]int64{i, k}] += a[[4]int64{i, j}] * b[[4]int64{j, k}]
			}
		}
	}
	dims := `CREATE int SCALAR m, n, p;`
	joins := plan(t, "", csrMapping("A"), csrMapping("B"), dims,
		`sum( <(i,j),a> in A, <(j,k),b> in B) { (i,k) -> a*b }`)
	same(t, "A*B as a join", runPlan(t, joins, st), want.toValue(2))
	ranges := plan(t, "", csrMapping("A"), csrMapping("B"), dims, `
  sum( <i,_> in 0:m, <j,_> in 0:n, <k,_> in 0:p)
     { (i,k) ->  A(i,j)*B(j,k) }`)
	same(t, "A*B over ranges", runPlan(t, ranges, st), want.toValue(2))
}

// §6.3: BATAX, Q(j) = sum_{i,k} beta A(i,j) A(i,k) x(k), with A in CSR:
// the unoptimized program and the two factorized forms of the paper.
func TestBATAX(t *testing.T) {
	const rows, cols = 9, 8
	r := newRand(101)
	a := randSparse(r, rows, cols, 0.35, true)
	x := make([]float64, cols)
	for i := range x {
		x[i] = float64(r.IntN(7) - 3)
	}
	st := storage.Store{"beta": storage.RealScalar(0.5), "x": storage.RealArray(x)}
	csr(st, "A", a, rows)
	want := coords{}
	for i := range int64(rows) {
		for j := range int64(cols) {
			for k := range int64(cols) {
				want[[4]int64{j}] += 0.5 * a[[4]int64{i, j}] * a[[4]int64{i, k}] * x[k]
			}
		}
	}
	decls := `
CREATE real SCALAR beta;
CREATE real ARRAY x(A_len1);
`
	for name, prog := range map[string]string{
		"unoptimized": `
sum(<i, Ai> in A)
  sum(<j, Aij> in Ai)
    sum(<k, Aik> in Ai)
      { j -> beta * Aij * Aik * x(k) }`,
		"first factorization": `
sum(<i, Ai> in A)
  sum(<j, Aij> in Ai)
    { j -> sum(<k, Aik> in Ai)
      beta * Aij * Aik * x(k) }`,
		"second factorization": `
  sum(<i, Ai> in A)
    let t = (sum(<k, Aik> in Ai) Aik * x(k))
    in (sum(<j, Aij> in Ai) { j ->  beta * Aij * t})`,
	} {
		e := plan(t, "", csrMapping("A"), decls, prog)
		same(t, "BATAX "+name, runPlan(t, e, st), want.toValue(1))
	}
}

// Runtime errors in compiled programs point into the source text.
func TestErrorPositionsInSource(t *testing.T) {
	st := storage.Store{"C_len1": storage.IntScalar(3), "C_pos2": storage.IntArray([]int64{0, 3, 3}),
		"C_idx2": storage.IntArray([]int64{0, 2, 3}), "C_val": storage.RealArray([]float64{6, 9, 8})}
	e := plan(t, "C", csrMapping("C")) // C_pos2 is one element short
	_, err := Eval(e, st)
	if err == nil {
		t.Fatal("no error for a short C_pos2")
	}
	// The front end places a lookup at its opening parenthesis: here the
	// one of C_pos2(row+1) on line 8.
	line := strings.Split(csrMapping("C"), "\n")[7]
	col := strings.Index(line, "C_pos2(row+1)") + len("C_pos2") + 1
	want := fmt.Sprintf("src0.sdql:8:%d: C_pos2(3) is past the end of C_pos2, which has 3 elements", col)
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
}
