package engine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

var showPlans = flag.Bool("engine.showplans", false, "TestOptimizedPlans: print the optimized plans")

// paperProgram composes one of the paper's programs with its tensors in the
// given formats (paper Table 3), on random data.
func paperProgram(t testing.TB, name string, tensors map[string][]int64, formats map[string]string, nnz int, rng *rand.Rand) (*ir.Expr, storage.Store) {
	st := storage.Store{}
	var srcs []sdql.Source
	for _, tn := range []string{"A", "B", "C", "D"} {
		dims, ok := tensors[tn]
		if !ok {
			continue
		}
		f, err := storage.ParseFormat(formats[tn])
		if err != nil {
			t.Fatal(err)
		}
		objs, err := storage.Build(tn, randCOO(dims, nnz, rng), f)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range objs {
			st[k] = v
		}
		srcs = append(srcs, sdql.Source{Name: tn + ".sdql", Text: []byte(storage.Mapping(tn, f, len(dims), ir.Real))})
	}
	text, _ := examples.Source(name)
	srcs = append(srcs, sdql.Source{Name: name + ".sdql", Text: text})
	if d, ok := tensors["A"]; ok {
		st["x"] = storage.RealArray(randVec(int(d[len(d)-1]), rng))
	}
	st["beta"] = storage.RealScalar(1.5)
	prog, err := sdql.Compile(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	return prog.Compose(""), st
}

type paperCase struct {
	name    string
	tensors map[string][]int64
	formats map[string]string
}

var paperCases = []paperCase{
	{"spmv", map[string][]int64{"A": {60, 50}}, map[string]string{"A": "csr"}},
	{"spmv", map[string][]int64{"A": {60, 50}}, map[string]string{"A": "csc"}},
	{"batax", map[string][]int64{"A": {60, 50}}, map[string]string{"A": "csr"}},
	{"mmm", map[string][]int64{"A": {40, 30}, "B": {30, 20}}, map[string]string{"A": "csr", "B": "csr"}},
	{"mmm", map[string][]int64{"A": {200, 300}, "B": {300, 60}}, map[string]string{"A": "csr", "B": "csc"}},
	{"summmm", map[string][]int64{"A": {40, 30}, "B": {30, 20}}, map[string]string{"A": "csc", "B": "csr"}},
	{"ttm", map[string][]int64{"A": {10, 12, 14}, "B": {8, 14}}, map[string]string{"A": "csf", "B": "csc"}},
	{"mttkrp", map[string][]int64{"B": {10, 12, 14}, "C": {12, 8}, "D": {8, 14}}, map[string]string{"B": "csf", "C": "csr", "D": "csr"}},
}

// TestOptimizedPlans runs the optimizer's physical plans of the paper's
// kernels (paper Table 3 formats) and checks them against the interpreter.
// SpMV's and BATAX's CSR row loops (and SpMV's CSC column scatter) must
// read the indices' 32-bit copy where the assembly can.
func TestOptimizedPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	defer func() { narrowRead = nil }()
	var narrowReads atomic.Int64
	narrowRead = func() { narrowReads.Add(1) }
	for _, pc := range paperCases {
		t.Run(pc.name, func(t *testing.T) {
			naive, st := paperProgram(t, pc.name, pc.tensors, pc.formats, 200, rng)
			res, err := opt.Optimize(naive, st, planLimits)
			if err != nil {
				t.Fatal(err)
			}
			if *showPlans {
				fmt.Printf("== %s\n%s\n", pc.name, ir.Format(res.Plan))
			}
			narrowReads.Store(0)
			agree(t, res.Plan, st)
			if n := narrowReads.Load(); (n > 0) != ((pc.name == "spmv" || pc.name == "batax") && narrowRows) {
				t.Errorf("%d row loops read narrow indices", n)
			}
		})
	}
}
