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
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var timeNow, timeSince = time.Now, time.Since

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

// demoCases are sized so the naive plan finishes in about a second in the
// reference interpreter; --size N multiplies every dimension by N.
var demoCases = map[string]demoCase{
	"spmv": {
		tensors: []demoTensor{{"A", []int64{400, 300}, 0.02, "csr"}},
		vector:  300,
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
		tensors: []demoTensor{{"A", []int64{40, 30}, 1.0 / 32 * 4, "csr"}, {"B", []int64{30, 25}, 1.0 / 32 * 4, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			a, b := in["A"], in["B"]
			for p := range a.Vals {
				for q := range b.Vals {
					if a.Coords[1][p] == b.Coords[0][q] {
						out[key(a.Coords[0][p], b.Coords[1][q])] += a.Vals[p] * b.Vals[q]
					}
				}
			}
			return out
		},
	},
	"summmm": {
		tensors: []demoTensor{{"A", []int64{40, 30}, 0.1, "csc"}, {"B", []int64{30, 25}, 0.1, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			s := 0.0
			a, b := in["A"], in["B"]
			for p := range a.Vals {
				for q := range b.Vals {
					if a.Coords[1][p] == b.Coords[0][q] {
						s += a.Vals[p] * b.Vals[q]
					}
				}
			}
			return map[string]float64{key(): s}
		},
	},
	"batax": {
		tensors: []demoTensor{{"A", []int64{60, 50}, 0.1, "csr"}},
		vector:  50,
		beta:    true,
		direct: func(in map[string]*storage.COO, x []float64, beta float64) map[string]float64 {
			out := map[string]float64{}
			a := in["A"]
			for p := range a.Vals {
				for q := range a.Vals {
					if a.Coords[0][p] == a.Coords[0][q] {
						out[key(a.Coords[1][p])] += beta * a.Vals[p] * a.Vals[q] * x[a.Coords[1][q]]
					}
				}
			}
			return out
		},
	},
	"ttm": {
		tensors: []demoTensor{{"A", []int64{12, 10, 8}, 0.1, "csf"}, {"B", []int64{6, 8}, 0.5, "csc"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			a, b := in["A"], in["B"]
			for p := range a.Vals {
				for q := range b.Vals {
					if a.Coords[2][p] == b.Coords[1][q] {
						out[key(a.Coords[0][p], a.Coords[1][p], b.Coords[0][q])] += a.Vals[p] * b.Vals[q]
					}
				}
			}
			return out
		},
	},
	"mttkrp": {
		tensors: []demoTensor{{"B", []int64{20, 10, 10}, 0.1, "csf"}, {"C", []int64{10, 8}, 0.5, "csr"}, {"D", []int64{8, 10}, 0.5, "csr"}},
		direct: func(in map[string]*storage.COO, _ []float64, _ float64) map[string]float64 {
			out := map[string]float64{}
			b, c, d := in["B"], in["C"], in["D"]
			for p := range b.Vals {
				for q := range c.Vals {
					if b.Coords[1][p] != c.Coords[0][q] {
						continue
					}
					for r := range d.Vals {
						if c.Coords[1][q] == d.Coords[0][r] && b.Coords[2][p] == d.Coords[1][r] {
							out[key(b.Coords[0][p], c.Coords[1][q])] += b.Vals[p] * c.Vals[q] * d.Vals[r]
						}
					}
				}
			}
			return out
		},
	},
}

func key(c ...int64) string { return fmt.Sprint(c) }

// randomCOO draws a tensor with about density*prod(dims) distinct entries
// with values in (0, 1], from a fixed seed.
func randomCOO(r *rand.Rand, dims []int64, density float64) *storage.COO {
	total := int64(1)
	for _, d := range dims {
		total *= d
	}
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: "real"}
	for lin := int64(0); lin < total; lin++ {
		if r.Float64() >= density {
			continue
		}
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
	ro, err := o.runOptions()
	if err != nil {
		return err
	}
	res, err := p.Run(ro)
	if err != nil {
		return err
	}
	entries := value.Entries(res.Value)
	fmt.Fprintf(stdout, "\nresult: %s with %d non-zeros", res.Type, len(entries))
	if len(entries) > 0 {
		fmt.Fprintf(stdout, "; first: %s", entryString(entries[0]))
	}
	fmt.Fprintln(stdout)

	want := dc.direct(in, x, beta)
	if err := compareDirect(entries, want); err != nil {
		return fmt.Errorf("demo %s: result differs from a direct computation: %v", name, err)
	}
	fmt.Fprintf(stdout, "checked against a direct Go computation over the coordinates: %d entries agree\n", len(want))
	if o.timings {
		printTimings(stderr, res)
	}
	return nil
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
