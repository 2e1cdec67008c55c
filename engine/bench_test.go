package engine

import (
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// Benchmarks: each paper kernel compiled from its physical plan beside a
// hand-written Go loop over the same arrays doing the same work (a fresh
// output per run, as the engine returns one). Run with
//
//	go test ./engine -run '^$' -bench . -benchtime 20x
//
// and compare the storel and hand lines of each kernel.

type benchData struct {
	spmvA, mmmA, mmmB, sumA, sumB, bataxA *sparseCSR
	mmmBc                                 *sparseCSR // MMM's B by columns
	// MMM of bcsstk16's shape (4884 rows of about 60 entries, B of
	// 250 columns): rows of the product nearly full, so dense.
	narrowA, narrowB *sparseCSR
	x                []float64
	ttmA, mttB       *sparseCSF
	ttmB, mttC, mttD *sparseCSR
}

var (
	benchOnce sync.Once
	bench     benchData
)

func benchInputs() *benchData {
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(11, 12))
		const n = 100_000
		bench.spmvA = randCSR(n, n, 1_000_000, rng)
		bench.x = randVec(n, rng)
		bench.mmmA = randCSR(n, n, 1_000_000, rng)
		bench.mmmB = randCSR(n, 250, n*250/32, rng)
		bench.mmmBc = randCSR(250, n, n*250/32, rng)
		bench.narrowA = randCSR(4884, 4884, 290_000, rng)
		bench.narrowB = randCSR(4884, 250, 4884*250/32, rng)
		bench.sumA = bench.mmmA
		bench.sumB = bench.mmmB
		bench.bataxA = bench.spmvA
		bench.ttmA = randCSF(100, 100, 1000, 500_000, rng)
		bench.ttmB = randCSR(1000, 64, 1000*16, rng) // CSC of B(k, l): level 1 is l
		bench.mttB = randCSF(100, 1000, 1000, 500_000, rng)
		bench.mttC = randCSR(1000, 32, 1000*8, rng)
		bench.mttD = randCSR(32, 1000, 32*250, rng)
	})
	return &bench
}

func csrBytes(a *sparseCSR) int64 { return int64(8 * (len(a.pos) + len(a.idx) + len(a.val))) }
func csfBytes(t *sparseCSF) int64 {
	return int64(8 * (len(t.pos2) + len(t.idx1) + len(t.idx2) + len(t.pos3) + len(t.idx3) + len(t.val)))
}

// benchLimits runs the kernels with limits (which storel run always sets):
// the top sum then runs in checked windows.
var benchLimits = flag.Bool("engine.limits", false, "benchmark the kernels with memory and time limits")

// runKernel benchmarks the engine on plan over st.
func runKernel(b *testing.B, plan string, st storage.Store, threads int, bytes int64) {
	e := parse(b, plan, st)
	opts := Options{Threads: threads}
	if *benchLimits {
		opts.Limits = Limits{Memory: 1 << 50, Time: time.Hour}
	}
	k, err := Compile(e, SchemaOf(st), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := k.Exec(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpMV(b *testing.B) {
	d := benchInputs()
	st := storage.Store{"x": storage.RealArray(d.x)}
	d.spmvA.store(st, "A")
	bytes := csrBytes(d.spmvA) + int64(16*len(d.x))
	b.Run("storel", func(b *testing.B) { runKernel(b, planSpMV, st, 1, bytes) })
	b.Run("hand", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for range b.N {
			y := make([]float64, d.spmvA.n)
			refSpMV(d.spmvA, d.x, y)
		}
	})
	b.Run("storel-2threads", func(b *testing.B) { runKernel(b, planSpMV, st, 2, bytes) })
}

func BenchmarkBATAX(b *testing.B) {
	d := benchInputs()
	st := storage.Store{"x": storage.RealArray(d.x), "beta": storage.RealScalar(0.5)}
	d.bataxA.store(st, "A")
	bytes := 2*csrBytes(d.bataxA) + int64(16*len(d.x))
	b.Run("storel", func(b *testing.B) { runKernel(b, planBATAX, st, 1, bytes) })
	b.Run("hand", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for range b.N {
			y := make([]float64, d.bataxA.m)
			refBATAX(d.bataxA, 0.5, d.x, y)
		}
	})
}

func BenchmarkSumMMM(b *testing.B) {
	d := benchInputs()
	st := storage.Store{}
	d.sumA.store(st, "A")
	d.sumB.store(st, "B")
	bytes := csrBytes(d.sumA) + csrBytes(d.sumB)
	b.Run("storel", func(b *testing.B) { runKernel(b, planSumMMM, st, 1, bytes) })
	b.Run("storel-rowsum-let", func(b *testing.B) { runKernel(b, planRowSumLet, st, 1, bytes) })
	b.Run("hand", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for range b.N {
			refSumMMM(d.sumA, d.sumB)
		}
	})
}

func BenchmarkMMM(b *testing.B) {
	d := benchInputs()
	st := storage.Store{}
	d.mmmA.store(st, "A")
	d.mmmB.store(st, "B")
	b.Run("storel", func(b *testing.B) { runKernel(b, planMMM, st, 1, 0) })
	b.Run("storel-2-threads", func(b *testing.B) { runKernel(b, planMMM, st, 2, 0) })
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			refMMM(d.mmmA, d.mmmB)
		}
	})
	// B stored by columns: the optimizer's plan builds B's rows once (a
	// transposed copy holding positions) and walks them per entry of A.
	sc := storage.Store{}
	d.mmmA.store(sc, "A")
	d.mmmBc.storeCSC(sc, "B")
	b.Run("storel-B-csc", func(b *testing.B) { runKernel(b, planMMMcsc, sc, 1, 0) })
	// The same copy with rows kept as sorted lists (an unannotated
	// level): the walk per entry of A reads the same entries.
	listRows := strings.Replace(planMMMcsc, "{ @dense j1 ->", "{ j1 ->", 1)
	b.Run("storel-B-csc-list-rows", func(b *testing.B) { runKernel(b, listRows, sc, 1, 0) })
}

func BenchmarkTTM(b *testing.B) {
	d := benchInputs()
	st := storage.Store{}
	d.ttmA.store(st, "A")
	d.ttmB.store(st, "B")
	b.Run("storel", func(b *testing.B) { runKernel(b, planTTM, st, 1, 0) })
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			refTTM(d.ttmA, d.ttmB)
		}
	})
}

func BenchmarkMTTKRP(b *testing.B) {
	d := benchInputs()
	st := storage.Store{}
	d.mttB.store(st, "B")
	d.mttC.store(st, "C")
	d.mttD.store(st, "D")
	bytes := csfBytes(d.mttB)
	b.Run("storel", func(b *testing.B) { runKernel(b, planMTTKRP, st, 1, bytes) })
	b.Run("hand", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for range b.N {
			refMTTKRP(d.mttB, d.mttC, d.mttD)
		}
	})
}

var ratios = flag.Int("engine.ratios", 0, "TestKernelRatios: alternate this many runs of each kernel and its hand-written loop and print the ratios")

// TestKernelRatios measures storel against the hand-written loops by
// alternating runs, which resists the load of a shared machine better than
// separate benchmarks: go test ./engine -run KernelRatios -engine.ratios 15 -v
func TestKernelRatios(t *testing.T) {
	if *ratios == 0 {
		t.Skip("set -engine.ratios N")
	}
	d := benchInputs()
	type kernel struct {
		name    string
		plan    string
		st      storage.Store
		hand    func()
		program string            // examples/<program>.sdql
		formats map[string]string // tensor formats, for the optimizer's plan
	}
	stSpMV := storage.Store{"x": storage.RealArray(d.x)}
	d.spmvA.store(stSpMV, "A")
	stBATAX := storage.Store{"x": storage.RealArray(d.x), "beta": storage.RealScalar(0.5)}
	d.bataxA.store(stBATAX, "A")
	stMMM := storage.Store{}
	d.mmmA.store(stMMM, "A")
	d.mmmB.store(stMMM, "B")
	stNarrow := storage.Store{}
	d.narrowA.store(stNarrow, "A")
	d.narrowB.store(stNarrow, "B")
	stSum := storage.Store{}
	d.sumA.storeCSC(stSum, "A")
	d.sumB.store(stSum, "B")
	stTTM := storage.Store{}
	d.ttmA.store(stTTM, "A")
	d.ttmB.storeCSC(stTTM, "B")
	stMTT := storage.Store{}
	d.mttB.store(stMTT, "B")
	d.mttC.store(stMTT, "C")
	d.mttD.store(stMTT, "D")
	kernels := []kernel{
		{"SpMV", planSpMV, stSpMV, func() { refSpMV(d.spmvA, d.x, make([]float64, d.spmvA.n)) }, "spmv", map[string]string{"A": "csr"}},
		{"BATAX", planBATAX, stBATAX, func() { refBATAX(d.bataxA, 0.5, d.x, make([]float64, d.bataxA.m)) }, "batax", map[string]string{"A": "csr"}},
		{"SumMMM", planSumMMM, stSum, func() { refSumMMM(d.sumA, d.sumB) }, "summmm", map[string]string{"A": "csc", "B": "csr"}},
		{"MMM", planMMM, stMMM, func() { refMMM(d.mmmA, d.mmmB) }, "mmm", map[string]string{"A": "csr", "B": "csr"}},
		// The same product against a hand loop that also keeps rows less
		// than half full as sorted lists, as the engine does.
		{"MMM/sparse-rows", planMMM, stMMM, func() { refMMMSparse(d.mmmA, d.mmmB) }, "mmm", map[string]string{"A": "csr", "B": "csr"}},
		{"MMM/narrow", planMMM, stNarrow, func() { refMMM(d.narrowA, d.narrowB) }, "mmm", map[string]string{"A": "csr", "B": "csr"}},
		{"TTM", planTTM, stTTM, func() { refTTM(d.ttmA, d.ttmB) }, "ttm", map[string]string{"A": "csf", "B": "csc"}},
		{"MTTKRP", planMTTKRP, stMTT, func() { refMTTKRP(d.mttB, d.mttC, d.mttD) }, "mttkrp", map[string]string{"B": "csf", "C": "csr", "D": "csr"}},
	}
	for _, kn := range kernels {
		if *kernelFilter != "" && !strings.Contains(kn.name, *kernelFilter) {
			continue
		}
		plan := parse(t, kn.plan, kn.st)
		if *useOptimizer {
			plan = optimizedPlan(t, kn.program, kn.formats, kn.st)
			t.Logf("%s: the optimizer's plan:\n%s", kn.name, ir.Format(plan))
		}
		k, err := Compile(plan, SchemaOf(kn.st), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Wall time and process CPU time (which a loaded machine's
		// scheduling does not inflate) of each run.
		var ts, th, cs, ch []time.Duration
		for r := 0; r < *ratios; r++ {
			start, cpu := time.Now(), cpuTime()
			if _, err := k.Exec(kn.st); err != nil {
				t.Fatal(err)
			}
			ts, cs = append(ts, time.Since(start)), append(cs, cpuTime()-cpu)
			start, cpu = time.Now(), cpuTime()
			kn.hand()
			th, ch = append(th, time.Since(start)), append(ch, cpuTime()-cpu)
		}
		for _, s := range [][]time.Duration{ts, th, cs, ch} {
			slices.Sort(s)
		}
		t.Logf("%-7s wall min: storel %8.2fms hand %8.2fms ratio %.2f | cpu min: storel %8.2fms hand %8.2fms ratio %.2f | cpu median ratio %.2f",
			kn.name, ms(ts[0]), ms(th[0]), float64(ts[0])/float64(th[0]),
			ms(cs[0]), ms(ch[0]), float64(cs[0])/float64(ch[0]), float64(cs[len(cs)/2])/float64(ch[len(ch)/2]))
	}
}

var useOptimizer = flag.Bool("engine.optimizer", false, "TestKernelRatios: run the optimizer's plans instead of the hand-written physical plans")

// optimizedPlan composes examples/<program>.sdql with the standard mappings
// of its tensors in the given formats and optimizes it over st.
func optimizedPlan(t testing.TB, program string, formats map[string]string, st storage.Store) *ir.Expr {
	var srcs []sdql.Source
	for _, name := range []string{"A", "B", "C", "D"} {
		fname, ok := formats[name]
		if !ok {
			continue
		}
		f, err := storage.ParseFormat(fname)
		if err != nil {
			t.Fatal(err)
		}
		order := 2
		if _, ok := st[name+"_dim3"]; ok {
			order = 3
		}
		srcs = append(srcs, sdql.Source{Name: name + ".sdql", Text: []byte(storage.Mapping(name, f, order, ir.Real))})
	}
	text, _ := examples.Source(program)
	srcs = append(srcs, sdql.Source{Name: program + ".sdql", Text: text})
	prog, err := sdql.Compile(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := opt.Optimize(prog.Compose(""), st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	return res.Plan
}

var kernelFilter = flag.String("engine.kernel", "", "TestKernelRatios: only kernels whose name contains this")

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// naiveSpMV composes examples/spmv.sdql with the CSR mapping: the naive
// plan builds A as a dictionary, then multiplies.
func naiveSpMV(b *testing.B, n, nnz int) (*ir.Expr, storage.Store) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := randCOO([]int64{int64(n), int64(n)}, nnz, rng)
	f, _ := storage.ParseFormat("csr")
	st, err := storage.Build("A", c, f)
	if err != nil {
		b.Fatal(err)
	}
	st["x"] = storage.RealArray(randVec(n, rng))
	text, _ := examples.Source("spmv")
	prog, err := sdql.Compile(sdql.Source{Name: "A.sdql", Text: []byte(storage.Mapping("A", f, 2, ir.Real))}, sdql.Source{Name: "spmv.sdql", Text: text})
	if err != nil {
		b.Fatal(err)
	}
	return prog.Compose(""), st
}

// BenchmarkNaiveSpMV runs the naive plan of SpMV (a 20k x 20k matrix with
// 200k entries) on the engine and on the interpreter.
func BenchmarkNaiveSpMV(b *testing.B) {
	plan, st := naiveSpMV(b, 20_000, 200_000)
	b.Run("storel", func(b *testing.B) {
		k, err := Compile(plan, SchemaOf(st), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for range b.N {
			if _, err := k.Exec(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interpreter", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := eval.Eval(plan, st); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTTMShortFibers: TTM of orghs's shape (about 350k fibers of
// one or two entries, B dense 16 x 20), the variants' plan: what a fiber
// costs beside its few entries' work. The hand loop writes each fiber's
// dense row of 16 into one output, B read l-major.
func BenchmarkTTMShortFibers(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 13))
	a := randCSF(20728, 18933, 20, 348_116, rng)
	st := storage.Store{}
	a.store(st, "A")
	bv := make([]float64, 16*20) // no zeros: every row full, as the harness's B
	for i := range bv {
		bv[i] = 0.5 + rng.Float64()
	}
	st["B_len1"], st["B_len2"], st["B_val"] = storage.IntScalar(16), storage.IntScalar(20), storage.RealArray(bv)
	plan := `sum(<p1, i> in A_idx1(A_pos1(0):A_pos1(1)))
	  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(p1):A_pos2(p1 + 1)))
	    { @dense j -> sum(<p3, l> in A_idx3(A_pos3(p2):A_pos3(p2 + 1)))
	      let t1 = A_val(p3) in
	      sum(<k, _> in 0:B_len1) { @dense k -> B_val(k * B_len2 + l) * t1 } } }`
	// The machine is shared: CPU time per run is steadier than the wall.
	b.Run("storel", func(b *testing.B) {
		c0 := cpuTime()
		runKernel(b, plan, st, 1, 0)
		b.ReportMetric(ms(cpuTime()-c0)/float64(b.N), "cpu-ms/op")
	})
	bt := make([]float64, len(bv)) // l-major
	for k := range 16 {
		for l := range 20 {
			bt[l*16+k] = bv[k*20+l]
		}
	}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		c0 := cpuTime()
		for range b.N {
			out := make([]float64, len(a.idx2)*16)
			for f := range a.idx2 {
				acc := out[f*16 : f*16+16]
				for p := a.pos3[f]; p < a.pos3[f+1]; p++ {
					av, row := a.val[p], bt[a.idx3[p]*16:][:16]
					for k, x := range row {
						acc[k] += av * x
					}
				}
			}
		}
		b.ReportMetric(ms(cpuTime()-c0)/float64(b.N), "cpu-ms/op")
	})
}
