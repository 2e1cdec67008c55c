package shard_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/shard"
	"github.com/storel/storel/storage"
)

// A tensor input of a test case: its coordinates and format.
type tin struct {
	name   string
	coo    *storage.COO
	format string
}

// A test case: a program, its tensors (the first is the one expected to be
// split) and its other objects (scalars, arrays).
type tcase struct {
	name    string
	program string
	tensors []tin
	objects map[string]storage.Object
	copyOK  map[string]bool
}

func (c *tcase) workspace(t testing.TB) *storel.Workspace {
	w := storel.NewWorkspace()
	for _, in := range c.tensors {
		if err := w.AddTensor(in.name, in.coo, in.format); err != nil {
			t.Fatal(err)
		}
	}
	for k, o := range c.objects {
		w.SetObject(k, o)
	}
	return w
}

func (c *tcase) inputs(t testing.TB) ([]shard.Input, map[string]int) {
	var ins []shard.Input
	sizes := map[string]int{}
	for _, in := range c.tensors {
		f, err := storage.ParseFormat(in.format)
		if err == nil {
			f, err = f.ForOrder(in.coo.Order())
		}
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, shard.Input{Name: in.name, COO: in.coo, Format: f})
		sizes[in.name] = in.coo.Len()
	}
	return ins, sizes
}

type entry struct {
	coords []int64
	f      float64
}

func collect(each storage.Entries) []entry {
	var out []entry
	each(func(c []int64, _ int64, f float64) { out = append(out, entry{slices.Clone(c), f}) })
	return out
}

// sliceSource replays collected entries as a shard.Source.
type sliceSource struct {
	es []entry
	i  int
}

func (s *sliceSource) Next() ([]int64, int64, float64, bool, error) {
	if s.i == len(s.es) {
		return nil, 0, 0, false, nil
	}
	e := s.es[s.i]
	s.i++
	return e.coords, int64(e.f), e.f, true, nil
}
func (s *sliceSource) Close() error { return nil }

// oracle runs the whole program on the reference interpreter.
func (c *tcase) oracle(t testing.TB) ([]entry, ir.Type, error) {
	p, err := c.workspace(t).Compile(c.name, []byte(c.program), "")
	if err != nil {
		t.Fatalf("%s: compile: %v\n%s", c.name, err, c.program)
	}
	res, err := p.Run(storel.RunOptions{Plan: storel.PlanNaive, Engine: storel.EngineInterp})
	if err != nil {
		return nil, ir.Type{}, err
	}
	each, err := res.Entries()
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return collect(each), res.Type, nil
}

// sharded splits the program into n parts, runs each part's optimized
// plan on the compiled engine, and combines their results in process. It
// returns the parts' sizes (entries of the split tensor).
func (c *tcase) sharded(t testing.TB, n int) ([]entry, []int, error) {
	p, err := c.workspace(t).Compile(c.name, []byte(c.program), "")
	if err != nil {
		t.Fatalf("%s: compile: %v", c.name, err)
	}
	ins, sizes := c.inputs(t)
	split, err := shard.Analyze(p.IR(), "", ins, sizes, c.copyOK)
	if err != nil {
		return nil, nil, err
	}
	var in shard.Input
	for _, x := range ins {
		if x.Name == split.Tensor {
			in = x
		}
	}
	cuts := shard.Cuts(in.COO, n)
	results := make([][]entry, n)
	counts := make([]int, n)
	for k := 0; k < n; k++ {
		st, mapping, err := shard.Part(in, cuts[k], cuts[k+1])
		if err != nil {
			t.Fatalf("%s: part %d: %v", c.name, k, err)
		}
		for _, x := range in.COO.Coords[0] {
			if cuts[k] <= x && x < cuts[k+1] {
				counts[k]++
			}
		}
		w := storel.NewWorkspace()
		w.AddSource("<part mapping>", []byte(mapping))
		for name, o := range st {
			w.SetObject(name, o)
		}
		for _, x := range c.tensors {
			if x.name != split.Tensor {
				if err := w.AddTensor(x.name, x.coo, x.format); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, o := range c.objects {
			w.SetObject(name, o)
		}
		pp, err := w.Compile(c.name, []byte(c.program), "")
		if err != nil {
			t.Fatalf("%s: part %d: compile: %v\nmapping:\n%s", c.name, k, err, mapping)
		}
		res, err := pp.Run(storel.RunOptions{Threads: 1 + k%2})
		if err != nil {
			return nil, nil, fmt.Errorf("part %d [%d, %d): %v\nmapping:\n%s", k, cuts[k], cuts[k+1], err, mapping)
		}
		each, err := res.Entries()
		if err != nil {
			t.Fatal(err)
		}
		results[k] = collect(each)
	}
	each, errf := shard.Combine(n, split.Type, split.Disjoint, func(k int) (shard.Source, error) {
		return &sliceSource{es: results[k]}, nil
	})
	got := collect(each)
	return got, counts, errf()
}

// randCOO returns a random tensor of the given dimensions whose values
// are small integers (so that sums in any order are exact), with one
// mode-0 coordinate empty and one full, so that parts balanced by entries
// cut the full one's neighbourhood into empty parts.
func randCOO(r *rand.Rand, density float64, dims ...int64) *storage.COO {
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: storage.FieldReal}
	total := int64(1)
	for _, d := range dims {
		total *= d
	}
	emptyRow, fullRow := r.Int64N(dims[0]), r.Int64N(dims[0])
	for p := int64(0); p < total; p++ {
		q, coords := p, make([]int64, len(dims))
		for m := len(dims) - 1; m >= 0; m-- {
			coords[m] = q % dims[m]
			q /= dims[m]
		}
		if coords[0] != fullRow && (coords[0] == emptyRow || r.Float64() >= density) {
			continue
		}
		for m, x := range coords {
			c.Coords[m] = append(c.Coords[m], x)
		}
		c.Vals = append(c.Vals, float64(r.IntN(9)-4))
	}
	return c
}

func randArray(r *rand.Rand, n int64) *storage.Array {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(r.IntN(7) - 3)
	}
	return storage.RealArray(v)
}

func example(t testing.TB, name string) string {
	b, err := os.ReadFile("../examples/" + name + ".sdql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// paperCases are the paper's kernels (examples/*.sdql) on random data,
// the split tensor in several formats.
func paperCases(t testing.TB, r *rand.Rand) []tcase {
	var cs []tcase
	for _, f := range []string{"csr", "csc", "dcsr", "coo", "dense", "sd:1,0", "csr+pattern"} {
		a := randCOO(r, 0.15, 13, 9)
		if strings.HasSuffix(f, "+pattern") {
			for i := range a.Vals {
				a.Vals[i] = 1
			}
			a.Field = storage.FieldPattern
		}
		cs = append(cs, tcase{name: "spmv/" + f, program: example(t, "spmv"),
			tensors: []tin{{"A", a, f}}, objects: map[string]storage.Object{"x": randArray(r, 9)}})
	}
	for _, f := range []string{"csr", "dcsr", "dense"} {
		cs = append(cs, tcase{name: "batax/" + f, program: example(t, "batax"),
			tensors: []tin{{"A", randCOO(r, 0.15, 14, 8), f}},
			objects: map[string]storage.Object{"x": randArray(r, 8), "beta": storage.RealScalar(3)}})
	}
	cs = append(cs,
		tcase{name: "mmm", program: example(t, "mmm"), copyOK: map[string]bool{"B": true},
			tensors: []tin{{"A", randCOO(r, 0.15, 12, 7), "csr"}, {"B", randCOO(r, 0.15, 7, 6), "csr"}}},
		tcase{name: "summmm", program: example(t, "summmm"), copyOK: map[string]bool{"B": true},
			tensors: []tin{{"A", randCOO(r, 0.15, 12, 7), "csc"}, {"B", randCOO(r, 0.15, 7, 6), "csr"}}},
		tcase{name: "ttm", program: example(t, "ttm"),
			tensors: []tin{{"A", randCOO(r, 0.15, 9, 5, 6), "csf"}, {"B", randCOO(r, 0.15, 4, 6), "csc"}}},
		tcase{name: "ttm/dss", program: example(t, "ttm"),
			tensors: []tin{{"A", randCOO(r, 0.15, 9, 5, 6), "dss"}, {"B", randCOO(r, 0.15, 4, 6), "csc"}}},
		tcase{name: "mttkrp", program: example(t, "mttkrp"),
			tensors: []tin{{"B", randCOO(r, 0.15, 10, 5, 6), "csf"}, {"C", randCOO(r, 0.5, 5, 3), "csr"}, {"D", randCOO(r, 0.5, 3, 6), "csr"}}},
	)
	return cs
}

func sameEntries(got, want []entry) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d entries, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if !slices.Equal(got[i].coords, want[i].coords) || got[i].f != want[i].f {
			return fmt.Errorf("entry %d: got %v = %v, want %v = %v", i, got[i].coords, got[i].f, want[i].coords, want[i].f)
		}
	}
	return nil
}

var partCounts = []int{1, 2, 3, 7}

func TestPaperKernelsSharded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 32))
	for _, c := range paperCases(t, r) {
		want, _, err := c.oracle(t)
		if err != nil {
			t.Fatalf("%s: oracle: %v", c.name, err)
		}
		sawEmpty := false
		for _, n := range partCounts {
			got, counts, err := c.sharded(t, n)
			if err != nil {
				t.Errorf("%s, %d parts: %v", c.name, n, err)
				continue
			}
			sawEmpty = sawEmpty || slices.Contains(counts, 0)
			if err := sameEntries(got, want); err != nil {
				t.Errorf("%s, %d parts (entries per part %v): %v", c.name, n, counts, err)
			}
		}
		if !sawEmpty {
			t.Errorf("%s: no part was empty at %v parts", c.name, partCounts)
		}
	}
}
