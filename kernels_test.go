package storel_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/storel/storel"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Each kernel below runs through the whole pipeline (parse, desugar, check,
// compose with the standard mappings, run) on random data stored in every
// format, and is compared with a plain Go loop over the coordinates.

var matrixFormats = []string{"dense", "coo", "csr", "csc", "dcsr", "dcsc", "hash", "trie", "sd", "dd:1,0", "ss:1,0"}
var tensor3Formats = []string{"csf", "coo", "hash", "trie", "dense", "sss:2,0,1", "dsd:1,0,2", "ssd"}

func randCOO(r *rand.Rand, density float64, dims ...int64) *storage.COO {
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: "real"}
	var rec func(m int, prefix []int64)
	rec = func(m int, prefix []int64) {
		if m == len(dims) {
			if r.Float64() < density {
				for i, x := range prefix {
					c.Coords[i] = append(c.Coords[i], x)
				}
				c.Vals = append(c.Vals, float64(r.Intn(19)-9)/4)
			}
			return
		}
		for x := int64(0); x < dims[m]; x++ {
			rec(m+1, append(prefix, x))
		}
	}
	rec(0, nil)
	return c
}

// want is an expected result: coordinates (as fmt.Sprint of []int64) to value.
type want map[string]float64

func (w want) add(v float64, coords ...int64) { w[fmt.Sprint(coords)] += v }

func check(t *testing.T, what string, got value.Value, w want) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range value.Entries(got) {
		k := fmt.Sprint(e.Coords)
		if e.Coords == nil {
			k = fmt.Sprint([]int64{})
		}
		seen[k] = true
		g, _ := value.ToReal(e.Val)
		if !value.CloseReal(g, w[k], 1e-9) {
			t.Errorf("%s: at %s got %v, want %v", what, k, g, w[k])
			return
		}
	}
	for k, v := range w {
		if !seen[k] && v != 0 {
			t.Errorf("%s: missing %s = %v", what, k, v)
			return
		}
	}
}

func runProgram(t *testing.T, w *storel.Workspace, src string) value.Value {
	t.Helper()
	p, err := w.Compile("test.sdql", []byte(src), "")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	// The reference interpreter on the naive plan is the oracle; every
	// other plan and engine must agree with it.
	var oracle value.Value
	for _, pl := range []storel.Plan{storel.PlanNaive, storel.PlanLogical, storel.PlanOptimized} {
		for _, e := range []storel.Engine{storel.EngineInterp, storel.EngineCompiled} {
			for _, threads := range []int{1, 2} {
				res, err := p.Run(storel.RunOptions{Plan: pl, Engine: e, Threads: threads})
				if err != nil {
					t.Fatalf("run (%s plan, %s, %d threads): %v", pl, e, threads, err)
				}
				if oracle == nil {
					oracle = res.Value
				} else if !value.Equal(oracle, res.Value, 1e-9) {
					t.Fatalf("%s plan on %s with %d threads disagrees with the interpreter on\n%s\nplan:\n%s\ninterp:   %s\ngot:      %s",
						pl, e, threads, src, res.Plan, value.Format(oracle), value.Format(res.Value))
				}
			}
		}
	}
	return oracle
}

func TestTransposeAndSpMV(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, f := range matrixFormats {
		a := randCOO(r, 0.3, 7, 5)
		x := make([]float64, 5)
		for i := range x {
			x[i] = float64(r.Intn(7) - 3)
		}
		w := storel.NewWorkspace()
		if err := w.AddTensor("A", a, f); err != nil {
			t.Fatal(err)
		}
		w.SetObject("x", storage.RealArray(x))
		tr, spmv := want{}, want{}
		for p, v := range a.Vals {
			i, j := a.Coords[0][p], a.Coords[1][p]
			tr.add(v, j, i)
			spmv.add(v*x[j], i)
		}
		check(t, "transpose/"+f, runProgram(t, w, `sum(<(i,j),v> in A) {(j,i) -> v}`), tr)
		check(t, "spmv/"+f, runProgram(t, w, `CREATE real ARRAY x(A_dim2); sum(<(i,j),a> in A) {i -> a * x(j)}`), spmv)
	}
}

func TestSumOfTwoFormats(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for i, fa := range matrixFormats {
		fb := matrixFormats[(i+3)%len(matrixFormats)]
		a, b := randCOO(r, 0.3, 6, 6), randCOO(r, 0.3, 6, 6)
		w := storel.NewWorkspace()
		if err := w.AddTensor("A", a, fa); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor("B", b, fb); err != nil {
			t.Fatal(err)
		}
		sum := want{}
		for p, v := range a.Vals {
			sum.add(v, a.Coords[0][p], a.Coords[1][p])
		}
		for p, v := range b.Vals {
			sum.add(v, b.Coords[0][p], b.Coords[1][p])
		}
		check(t, "A+B/"+fa+"+"+fb, runProgram(t, w, `A + B`), sum)
	}
}

func TestSDDMM(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for k, f := range matrixFormats {
		s, a, b := randCOO(r, 0.3, 6, 5), randCOO(r, 0.4, 6, 4), randCOO(r, 0.4, 4, 5)
		w := storel.NewWorkspace()
		for name, c := range map[string]*storage.COO{"S": s, "A": a, "B": b} {
			if err := w.AddTensor(name, c, matrixFormats[(k+len(name))%len(matrixFormats)]); err != nil {
				t.Fatal(err)
			}
		}
		// Q(i,j) = S(i,j) * sum_k A(i,k) B(k,j)
		exp := want{}
		for p, sv := range s.Vals {
			i, j := s.Coords[0][p], s.Coords[1][p]
			for q, av := range a.Vals {
				if a.Coords[0][q] != i {
					continue
				}
				for u, bv := range b.Vals {
					if b.Coords[0][u] == a.Coords[1][q] && b.Coords[1][u] == j {
						exp.add(sv*av*bv, i, j)
					}
				}
			}
		}
		got := runProgram(t, w, `sum(<(i,j),s> in S, <(i,k),a> in A, <(k,j),b> in B) {(i,j) -> s*a*b}`)
		check(t, "sddmm/"+f, got, exp)
	}
}

func TestTTV(t *testing.T) {
	r := rand.New(rand.NewSource(10))
	for _, f := range tensor3Formats {
		a := randCOO(r, 0.2, 5, 4, 6)
		v := make([]float64, 6)
		for i := range v {
			v[i] = float64(r.Intn(9) - 4)
		}
		w := storel.NewWorkspace()
		if err := w.AddTensor("A", a, f); err != nil {
			t.Fatal(err)
		}
		w.SetObject("v", storage.RealArray(v))
		exp := want{}
		for p, x := range a.Vals {
			exp.add(x*v[a.Coords[2][p]], a.Coords[0][p], a.Coords[1][p])
		}
		check(t, "ttv/"+f, runProgram(t, w, `CREATE real ARRAY v(A_dim3); sum(<(i,j,k),a> in A) {(i,j) -> a * v(k)}`), exp)
	}
}

// TestTriangleJoin is the cyclic join R(a,b) S(b,c) T(c,a), each relation
// in a different format.
func TestTriangleJoin(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for k := range matrixFormats {
		g := []*storage.COO{randCOO(r, 0.35, 6, 6), randCOO(r, 0.35, 6, 6), randCOO(r, 0.35, 6, 6)}
		w := storel.NewWorkspace()
		for i, name := range []string{"R", "S", "T"} {
			if err := w.AddTensor(name, g[i], matrixFormats[(k+4*i)%len(matrixFormats)]); err != nil {
				t.Fatal(err)
			}
		}
		total := 0.0
		for p := range g[0].Vals {
			for q := range g[1].Vals {
				if g[0].Coords[1][p] != g[1].Coords[0][q] {
					continue
				}
				for u := range g[2].Vals {
					if g[2].Coords[0][u] == g[1].Coords[1][q] && g[2].Coords[1][u] == g[0].Coords[0][p] {
						total += g[0].Vals[p] * g[1].Vals[q] * g[2].Vals[u]
					}
				}
			}
		}
		got := runProgram(t, w, `sum(<(a,b),x> in R, <(b,c),y> in S, <(c,a),z> in T) x*y*z`)
		check(t, fmt.Sprint("triangle/", k), got, want{fmt.Sprint([]int64{}): total})
	}
}
