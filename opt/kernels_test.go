package opt

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// searchLimits are the options of the searches whose plan a test judges:
// the node and round limits, not the machine's load, bound them. Under
// the default time limit (1 s), reached on a loaded 2-core machine, the
// plan would vary.
var searchLimits = Options{TimeLimit: time.Minute}

// kernelSpec is a kernel of examples/ and its tensors.
type kernelSpec struct {
	name    string
	tensors []tensorSpec
}

// tensorSpec describes a random tensor of a kernel test: its name, storage
// format, dimensions and density.
type tensorSpec struct {
	name, format string
	dims         []int64
	density      float64
}

// paperKernels are the kernels of the paper's Table 3 with its best
// formats. The program's D in MTTKRP is indexed (j,l) (docs/design.md §2), so
// the paper's CSC of D(l,j) is the CSR of our D(j,l): the same arrays, j
// the outer level, as in Fig. 1 (d). The sizes keep the interpreter fast
// while making the factor matrices of MTTKRP and TTM denser than the
// tensors, as in the paper's experiments.
var paperKernels = []kernelSpec{
	{"mmm", []tensorSpec{{"A", "csr", []int64{30, 40}, 0.1}, {"B", "csr", []int64{40, 30}, 0.1}}},
	{"summmm", []tensorSpec{{"A", "csc", []int64{40, 40}, 0.05}, {"B", "csr", []int64{40, 40}, 0.05}}},
	{"batax", []tensorSpec{{"A", "csr", []int64{40, 50}, 0.1}}},
	{"ttm", []tensorSpec{{"A", "csf", []int64{20, 30, 40}, 0.02}, {"B", "csc", []int64{10, 40}, 0.3}}},
	{"mttkrp", []tensorSpec{{"B", "csf", []int64{20, 30, 40}, 0.02}, {"C", "csr", []int64{30, 8}, 0.5}, {"D", "csr", []int64{8, 40}, 0.5}}},
}

// randomCOO returns a tensor with about density*size non-zeros, small
// integer values.
func randomCOO(r *rand.Rand, dims []int64, density float64) *storage.COO {
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: storage.FieldReal}
	total := int64(1)
	for _, d := range dims {
		total *= d
	}
	for p := int64(0); p < total; p++ {
		if r.Float64() >= density {
			continue
		}
		q := p
		for m := len(dims) - 1; m >= 0; m-- {
			c.Coords[m] = append(c.Coords[m], q%dims[m])
			q /= dims[m]
		}
		c.Vals = append(c.Vals, float64(r.IntN(9)+1))
	}
	return c
}

// setupKernel stores the kernel's tensors (seeded random data) in their
// formats, fills the program's other objects (beta, x) and returns the
// naive plan.
func setupKernel(t testing.TB, kernel string, seed uint64, tensors []tensorSpec) (*ir.Expr, storage.Store) {
	t.Helper()
	src, ok := examples.Source(kernel)
	if !ok {
		t.Fatalf("no kernel %s", kernel)
	}
	return setupProgram(t, kernel, src, seed, tensors)
}

// setupProgram is setupKernel for the program src.
func setupProgram(t testing.TB, name string, src []byte, seed uint64, tensors []tensorSpec) (*ir.Expr, storage.Store) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	specs := make([]cooSpec, len(tensors))
	for i, ts := range tensors {
		specs[i] = cooSpec{ts.name, ts.format, randomCOO(r, ts.dims, ts.density)}
	}
	return setupCOO(t, r, name, src, specs)
}

// cooSpec is a tensor of a kernel given by its entries, and the format
// it is stored in.
type cooSpec struct {
	name, format string
	coo          *storage.COO
}

// setupCOO stores the tensors in their formats, fills the program's other
// objects from r and returns the naive plan.
func setupCOO(t testing.TB, r *rand.Rand, name string, src []byte, tensors []cooSpec) (*ir.Expr, storage.Store) {
	t.Helper()
	st := storage.Store{}
	var srcs []sdql.Source
	for _, ts := range tensors {
		f, err := storage.ParseFormat(ts.format)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := storage.Build(ts.name, ts.coo, f)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range objs {
			st[k] = v
		}
		srcs = append(srcs, sdql.Source{Name: ts.name + ".sdql", Text: []byte(storage.Mapping(ts.name, f, len(ts.coo.Dims), ir.Real))})
	}
	return composeProgram(t, r, st, srcs, name, src), st
}

// composeProgram compiles the storage mappings srcs with program src,
// fills the program's objects that st lacks (beta, x) from r and returns
// the naive plan.
func composeProgram(t testing.TB, r *rand.Rand, st storage.Store, srcs []sdql.Source, name string, src []byte) *ir.Expr {
	t.Helper()
	srcs = append(srcs, sdql.Source{Name: name + ".sdql", Text: src})
	p, err := sdql.Compile(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p.Decls {
		if _, ok := st[d.Name]; ok {
			continue
		}
		switch d.Kind {
		case ir.ObjScalar:
			st[d.Name] = storage.RealScalar(1.5)
		case ir.ObjArray:
			n, err := eval.Eval(d.Dims[0], st)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, n.(int64))
			for i := range x {
				x[i] = float64(r.IntN(5) + 1)
			}
			st[d.Name] = storage.RealArray(x)
		}
	}
	return p.Compose("")
}

// BenchmarkOptimizeKernels measures the optimization of each of the
// paper's kernels, and of MMM and SumMMM over hash maps of 90,000 entries
// (statistics gathered from them included), (go test ./opt -run ^$ -bench
// OptimizeKernels).
func BenchmarkOptimizeKernels(b *testing.B) {
	hash := []tensorSpec{{"A", "hash", []int64{3000, 3000}, 0.01}, {"B", "hash", []int64{3000, 3000}, 0.01}}
	kernels := append(slices.Clone(paperKernels), kernelSpec{"mmm", hash}, kernelSpec{"summmm", hash})
	for _, k := range kernels {
		b.Run(k.name+"-"+k.tensors[0].format, func(b *testing.B) {
			naive, st := setupKernel(b, k.name, 1, k.tensors)
			for b.Loop() {
				if _, err := Optimize(naive, st, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
