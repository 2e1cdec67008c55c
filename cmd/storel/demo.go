package main

import (
	"fmt"
	"io"
	"math"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/storel/storel"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var timeNow, timeSince = time.Now, time.Since

const demoUsage = `usage: storel demo [KERNEL] [flags]
runs a paper kernel on built-in random data and checks the result against
a direct Go computation (kernels: %s)

flags:
  --size N                     multiply every dimension by N (1..100, default 1)
  --plan naive|logical|optimized  which plan to run (default optimized)
  --engine compiled|interp     run the compiled kernel (default) or the reference interpreter
  --threads N                  worker threads (default: all cores)
  --repeat N                   run the execute phase N times and report the median
  --timings                    print 'timing: <phase> <ms> ms' lines on stderr
  --stats FILE                 override the statistics gathered from the data (see opt.ParseStats)
  --node-limit N, --opt-time-limit D  bound each optimizer stage (defaults 20000 nodes, 1s)
  --memory-limit SIZE, --time-limit D  bound the run (see storel run -h)
`

func demoKernels() []string { return examples.Names() }

// demoCase describes a kernel's built-in inputs: each tensor's shape,
// density and format (paper Table 3), plus the dense vector and scalar
// BATAX and SpMV need, and a direct Go computation of the answer that
// shares nothing with storel's pipeline.
type demoCase struct {
	tensors []demoTensor
	vector  int // length of dense x (0 = none)
	beta    bool
	direct  func(in map[string]*storage.COO, x []float64, beta float64) map[string]float64
}

type demoTensor struct {
	name    string
	dims    []int64
	density float64
	format  string
}

// demoCases use the paper's formats (Table 3) and its density 2^-5 for
// the right-hand factors; --size N multiplies every dimension by N.
var demoCases = map[string]demoCase{
	"spmv": {
		tensors: []demoTensor{{"A", []int64{4000, 3000}, 0.002, "csr"}},
		vector:  3000,
		direct: func(in map[string]*storage.COO, x []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			a := in["A"]
			for p := range a.Vals {
				out[key(a.Coords[0][p])] += a.Vals[p] * x[a.Coords[1][p]]
			}
			return out
		},
	},
	"mmm": {
		tensors: []demoTensor{{"A", []int64{800, 600}, 0.005, "csr"}, {"B", []int64{600, 250}, 1.0 / 32, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			a, b := in["A"], in["B"]
			brows := groupBy(b, 0)
			for p := range a.Vals {
				for _, q := range brows[a.Coords[1][p]] {
					out[key(a.Coords[0][p], b.Coords[1][q])] += a.Vals[p] * b.Vals[q]
				}
			}
			return out
		},
	},
	"summmm": {
		tensors: []demoTensor{{"A", []int64{800, 600}, 0.005, "csc"}, {"B", []int64{600, 250}, 1.0 / 32, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			s := 0.0
			a, b := in["A"], in["B"]
			brows := groupBy(b, 0)
			for p := range a.Vals {
				for _, q := range brows[a.Coords[1][p]] {
					s += a.Vals[p] * b.Vals[q]
				}
			}
			return map[string]float64{key(): s}
		},
	},
	"batax": {
		tensors: []demoTensor{{"A", []int64{2000, 1500}, 0.005, "csr"}},
		vector:  1500,
		beta:    true,
		direct: func(in map[string]*storage.COO, x []float64, beta float64) map[string]float64 {
			out := map[string]float64{}
			a := in["A"]
			for _, row := range groupBy(a, 0) {
				for _, p := range row {
					for _, q := range row {
						out[key(a.Coords[1][p])] += beta * a.Vals[p] * a.Vals[q] * x[a.Coords[1][q]]
					}
				}
			}
			return out
		},
	},
	"ttm": {
		tensors: []demoTensor{{"A", []int64{120, 100, 80}, 0.005, "csf"}, {"B", []int64{25, 80}, 1.0 / 32, "csc"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			a, b := in["A"], in["B"]
			bcols := groupBy(b, 1)
			for p := range a.Vals {
				for _, q := range bcols[a.Coords[2][p]] {
					out[key(a.Coords[0][p], a.Coords[1][p], b.Coords[0][q])] += a.Vals[p] * b.Vals[q]
				}
			}
			return out
		},
	},
	"mttkrp": {
		tensors: []demoTensor{{"B", []int64{200, 150, 100}, 0.005, "csf"}, {"C", []int64{150, 25}, 1.0 / 32, "csr"}, {"D", []int64{25, 100}, 1.0 / 32, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			b, c, d := in["B"], in["C"], in["D"]
			crows := groupBy(c, 0)
			dval := map[[2]int64]float64{}
			for r := range d.Vals {
				dval[[2]int64{d.Coords[0][r], d.Coords[1][r]}] += d.Vals[r]
			}
			for p := range b.Vals {
				for _, q := range crows[b.Coords[1][p]] {
					j := c.Coords[1][q]
					if dv, ok := dval[[2]int64{j, b.Coords[2][p]}]; ok {
						out[key(b.Coords[0][p], j)] += b.Vals[p] * c.Vals[q] * dv
					}
				}
			}
			return out
		},
	},
}

// groupBy indexes c's entries by their coordinate in mode m.
func groupBy(c *storage.COO, m int) map[int64][]int {
	g := map[int64][]int{}
	for p, x := range c.Coords[m] {
		g[x] = append(g[x], p)
	}
	return g
}

func key(c ...int64) string { return fmt.Sprint(c) }

// randomCOO draws about density*prod(dims) distinct entries with values
// in (0, 9/8], from r.
func randomCOO(r *rand.Rand, dims []int64, density float64) *storage.COO {
	total := int64(1)
	for _, d := range dims {
		total *= d
	}
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: "real"}
	seen := map[int64]bool{}
	for n := int64(float64(total) * density); int64(len(seen)) < n; {
		lin := r.Int63n(total)
		if seen[lin] {
			continue
		}
		seen[lin] = true
		rest := lin
		for m := len(dims) - 1; m >= 0; m-- {
			c.Coords[m] = append(c.Coords[m], rest%dims[m])
			rest /= dims[m]
		}
		c.Vals = append(c.Vals, float64(1+r.Intn(9))/8)
	}
	return c
}

func cmdDemo(o *options, stdout, stderr io.Writer) error {
	name := o.program
	if name == "" {
		name = "mttkrp"
	}
	dc, ok := demoCases[name]
	src, ok2 := examples.Source(name)
	if !ok || !ok2 {
		return misuse("demo: unknown kernel %q (kernels: %s)", name, strings.Join(demoKernels(), ", "))
	}
	if o.size < 1 || o.size > 100 {
		return misuse("demo: --size %d: want 1..100", o.size)
	}
	r := rand.New(rand.NewSource(1))
	w := storel.NewWorkspace()
	in := map[string]*storage.COO{}
	fmt.Fprintf(stdout, "storel demo: %s on built-in random data (seed 1)\n\n", name)
	for _, t := range dc.tensors {
		dims := make([]int64, len(t.dims))
		for i, d := range t.dims {
			dims[i] = d * int64(o.size)
		}
		c := randomCOO(r, dims, t.density)
		in[t.name] = c
		if err := w.AddTensor(t.name, c, t.format); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %s: %s, %d non-zeros, stored as %s\n", t.name, dimString(dims), len(c.Vals), t.format)
	}
	var x []float64
	if dc.vector > 0 {
		x = make([]float64, dc.vector*o.size)
		for i := range x {
			x[i] = float64(r.Intn(17)-8) / 4
		}
		w.SetObject("x", storage.RealArray(x))
		fmt.Fprintf(stdout, "  x: dense vector of %d\n", len(x))
	}
	beta := 0.5
	if dc.beta {
		w.SetObject("beta", storage.RealScalar(beta))
		fmt.Fprintf(stdout, "  beta: %g\n", beta)
	}
	fmt.Fprintf(stdout, "\nprogram (examples/%s.sdql):\n%s\n", name, indent(strings.TrimSpace(string(src))))
	p, err := w.Compile("examples/"+name+".sdql", src, "")
	if err != nil {
		return err
	}
	res, err := o.run(p)
	if err != nil {
		return err
	}
	if res.Plan != p.Naive() {
		fmt.Fprintf(stdout, "\noptimized plan (%s; storel explain shows why):\n%s\n", durationString(res.Timings.Get("optimize")), indent(ir.Format(res.Plan)))
	}
	fmt.Fprintf(stdout, "\nexecuted in %s (%s plan, %s engine)\n", durationString(res.Timings.Get("execute")), o.plan, o.engine)
	entries := value.Entries(res.Value)
	if res.Type.IsScalar() {
		fmt.Fprintf(stdout, "result: %s = %s\n", res.Type, value.Format(res.Value))
	} else {
		fmt.Fprintf(stdout, "result: %s with %d non-zeros", res.Type, len(entries))
		if len(entries) > 0 {
			fmt.Fprintf(stdout, "; first: %s", entryString(entries[0]))
		}
		fmt.Fprintln(stdout)
	}

	want := dc.direct(in, x, beta)
	if err := compareDirect(entries, want); err != nil {
		return fmt.Errorf("demo %s: result differs from a direct computation: %v", name, err)
	}
	fmt.Fprintf(stdout, "checked against a direct Go computation over the coordinates: %s\n", agreement(len(entries), res.Type.IsScalar()))
	if o.timings {
		printTimings(stderr, res)
	}
	return nil
}

// agreement says that n entries agree, in words that fit n.
func agreement(n int, scalar bool) string {
	switch {
	case scalar:
		return "the value agrees"
	case n == 0:
		return "both are empty"
	case n == 1:
		return "the 1 entry agrees"
	}
	return fmt.Sprintf("all %d entries agree", n)
}

func durationString(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000)
}

func dimString(d []int64) string {
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " x ")
}

func entryString(e value.Entry) string {
	c := make([]string, len(e.Coords))
	for i, x := range e.Coords {
		c[i] = fmt.Sprint(x)
	}
	return fmt.Sprintf("(%s) = %v", strings.Join(c, ","), e.Val)
}

// compareDirect checks storel's entries against the direct computation,
// ignoring entries the direct computation has as exact zeros.
func compareDirect(got []value.Entry, want map[string]float64) error {
	seen := map[string]bool{}
	for _, e := range got {
		k := key(e.Coords...)
		seen[k] = true
		g, _ := value.ToReal(e.Val)
		w, ok := want[k]
		if !ok || !value.CloseReal(g, w, 1e-9) {
			return fmt.Errorf("at %s: storel %v, direct %v", k, g, w)
		}
	}
	var missing []string
	for k, w := range want {
		if !seen[k] && math.Abs(w) > 1e-12 {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("storel lacks %d entries, e.g. %s = %v", len(missing), missing[0], want[missing[0]])
	}
	return nil
}
