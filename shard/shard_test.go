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
	// disjoint: the result is keyed by the split coordinate, so Analyze
	// must find the parts disjoint (checked where set).
	disjoint bool
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

// whole runs the whole program's optimized plan on the compiled engine and
// compares it with the oracle's entries.
func (c *tcase) whole(t testing.TB, want []entry) error {
	p, err := c.workspace(t).Compile(c.name, []byte(c.program), "")
	if err != nil {
		t.Fatalf("%s: compile: %v", c.name, err)
	}
	res, err := p.Run(storel.RunOptions{Threads: 1})
	if err != nil {
		return err
	}
	each, err := res.Entries()
	if err != nil {
		return err
	}
	return sameEntries(collect(each), want)
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
	if c.disjoint && !split.Disjoint {
		t.Errorf("%s: the result is keyed by the split coordinate, but Analyze adds the parts' results key-wise", c.name)
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
		cs = append(cs, tcase{name: "spmv/" + f, program: example(t, "spmv"), disjoint: true,
			tensors: []tin{{"A", a, f}}, objects: map[string]storage.Object{"x": randArray(r, 9)}})
	}
	for _, f := range []string{"csr", "dcsr", "dense"} {
		cs = append(cs, tcase{name: "batax/" + f, program: example(t, "batax"),
			tensors: []tin{{"A", randCOO(r, 0.15, 14, 8), f}},
			objects: map[string]storage.Object{"x": randArray(r, 8), "beta": storage.RealScalar(3)}})
	}
	cs = append(cs,
		tcase{name: "mmm", program: example(t, "mmm"), disjoint: true, copyOK: map[string]bool{"B": true},
			tensors: []tin{{"A", randCOO(r, 0.15, 12, 7), "csr"}, {"B", randCOO(r, 0.15, 7, 6), "csr"}}},
		tcase{name: "summmm", program: example(t, "summmm"), copyOK: map[string]bool{"B": true},
			tensors: []tin{{"A", randCOO(r, 0.15, 12, 7), "csc"}, {"B", randCOO(r, 0.15, 7, 6), "csr"}}},
		tcase{name: "ttm", program: example(t, "ttm"), disjoint: true,
			tensors: []tin{{"A", randCOO(r, 0.15, 9, 5, 6), "csf"}, {"B", randCOO(r, 0.15, 4, 6), "csc"}}},
		tcase{name: "ttm/dss", program: example(t, "ttm"), disjoint: true,
			tensors: []tin{{"A", randCOO(r, 0.15, 9, 5, 6), "dss"}, {"B", randCOO(r, 0.15, 4, 6), "csc"}}},
		tcase{name: "mttkrp", program: example(t, "mttkrp"), disjoint: true,
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

// progGen writes random programs whose query is a sum over tensor S (the
// one to split) with a random body over S's entry, other tensors T1, T2
// and the array X; a few programs read S again or put something around
// the sum, which Analyze must refuse.
type progGen struct {
	r      *rand.Rand
	fresh  int
	budget int
	others []tin
}

type gvar struct {
	name  string
	depth int
}

func (g *progGen) name(s string) string { g.fresh++; return fmt.Sprintf("%s%d", s, g.fresh) }

func (g *progGen) index(keys []string) string {
	if len(keys) > 0 && g.r.IntN(4) != 0 {
		return keys[g.r.IntN(len(keys))]
	}
	return fmt.Sprint(g.r.IntN(3))
}

func (g *progGen) expr(d int, keys []string, vars []gvar) string {
	g.budget--
	choice := g.r.IntN(8)
	if g.budget <= 0 {
		choice = 7
	}
	switch choice {
	case 0, 1:
		var srcs []gvar
		for _, v := range vars {
			if v.depth > 0 {
				srcs = append(srcs, v)
			}
		}
		for _, t := range g.others {
			srcs = append(srcs, gvar{t.name, t.coo.Order()})
		}
		src := srcs[g.r.IntN(len(srcs))]
		k, v := g.name("k"), g.name("v")
		return "(sum(<" + k + ", " + v + "> in " + src.name + ") " + g.expr(d, append(slices.Clone(keys), k), append(slices.Clone(vars), gvar{v, src.depth - 1})) + ")"
	case 2:
		if d > 0 {
			return "{ " + g.index(keys) + " -> " + g.expr(d-1, keys, vars) + " }"
		}
		return g.expr(0, keys, vars) + " * " + g.expr(0, keys, vars)
	case 3:
		return "(" + g.expr(d, keys, vars) + " + " + g.expr(d, keys, vars) + ")"
	case 4:
		return "(" + g.expr(0, keys, vars) + ") * (" + g.expr(d, keys, vars) + ")"
	case 5:
		return "(if " + g.index(keys) + " < " + g.index(keys) + " then " + g.expr(d, keys, vars) + ")"
	case 6:
		x := g.name("x")
		return "(let " + x + " = " + g.expr(0, keys, vars) + " in " + g.expr(d, keys, append(slices.Clone(vars), gvar{x, 0})) + ")"
	}
	var leaves []string
	for _, v := range vars {
		if v.depth == d {
			leaves = append(leaves, v.name)
		}
	}
	if d == 0 {
		leaves = append(leaves, "2.0", "X("+g.index(keys)+")")
		for _, t := range g.others {
			if t.coo.Order() == 1 {
				leaves = append(leaves, t.name+"("+g.index(keys)+")")
			}
		}
	}
	if len(leaves) == 0 {
		e := "1.0"
		for i := 0; i < d; i++ {
			e = "{ " + g.index(keys) + " -> " + e + " }"
		}
		return e
	}
	return leaves[g.r.IntN(len(leaves))]
}

var levelFormats = map[int][]string{
	1: {"d", "s", "coo"},
	2: {"csr", "csc", "dcsr", "dcsc", "coo", "dense", "sd", "ds:1,0", "sd:1,0"},
	3: {"csf", "coo", "dense", "dss", "sds:2,0,1", "sss:1,2,0", "dsd"},
}

var otherFormats = map[int][]string{1: {"d", "s", "hash"}, 2: {"csr", "csc", "hash", "trie", "coo"}}

// randomCase returns a random program and whether Analyze must refuse it.
func randomCase(seed uint64) (tcase, bool) {
	r := rand.New(rand.NewPCG(seed, 32))
	g := &progGen{r: r, budget: 10}
	order := 1 + r.IntN(3)
	dims := make([]int64, order)
	for m := range dims {
		dims[m] = int64(2 + r.IntN(6))
	}
	dims[0] += 4
	c := tcase{name: fmt.Sprintf("random/%d", seed), objects: map[string]storage.Object{"X": randArray(r, 4)}}
	c.tensors = []tin{{"S", randCOO(r, 0.5, dims...), levelFormats[order][r.IntN(len(levelFormats[order]))]}}
	for i := 1; i <= 2; i++ {
		o := 1 + r.IntN(2)
		odims := []int64{int64(2 + r.IntN(3)), int64(2 + r.IntN(3))}[:o]
		g.others = append(g.others, tin{fmt.Sprintf("T%d", i), randCOO(r, 0.6, odims...), otherFormats[o][r.IntN(len(otherFormats[o]))]})
	}
	c.tensors = append(c.tensors, g.others...)
	c.copyOK = map[string]bool{"T1": true, "T2": true}
	depth := r.IntN(3)
	keys, vars := []string{"i"}, []gvar{{"v", order - 1}}
	head := "<i, v> in S"
	if order >= 2 && r.IntN(3) == 0 {
		head, keys, vars = "<(i, j), v> in S", []string{"i", "j"}, []gvar{{"v", order - 2}}
	}
	if r.IntN(4) == 0 {
		t := g.others[r.IntN(2)]
		head += ", <i, w> in " + t.name
		vars = append(vars, gvar{"w", t.coo.Order() - 1})
	}
	refuse := false
	body := g.expr(depth, keys, vars)
	switch r.IntN(10) {
	case 0: // S read again inside the sum
		refuse = true
		body = "(sum(<k0, u0> in S) " + strings.Repeat("{ k0 -> ", depth) + "1.0" + strings.Repeat(" }", depth) + ") + " + body
	case 1: // S's physical objects read
		refuse = true
		body = "(S_pos0 * 0 + 1) * " + body
	}
	prog := "CREATE real ARRAY X(4);\n"
	top := "sum(" + head + ") " + body
	if r.IntN(10) == 0 {
		refuse = true
		top = "2.0 * (" + top + ")"
	}
	if depth == 0 && r.IntN(2) == 0 {
		prog += top + "\n"
	} else {
		prog += "CREATE TENSOR Q AS " + top + ";\n"
	}
	if refuse && strings.Contains(prog, "S_pos0") {
		// Name an object S's format really has.
		prog = strings.Replace(prog, "S_pos0", storage.DimName("S", 1)+" * 0 + S_"+physicalOf(c.tensors[0]), 1)
	}
	c.program = prog
	return c, refuse
}

// physicalOf names a non-dimension physical object of t's format (without
// the "S_" prefix).
func physicalOf(t tin) string {
	f, _ := storage.ParseFormat(t.format)
	f, _ = f.ForOrder(t.coo.Order())
	if f.Levels[0] == storage.LevelDense {
		return "len1"
	}
	return "pos1(0)"
}

func TestRandomProgramsSharded(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 60
	}
	ran, refused, failures := 0, 0, 0
	for seed := uint64(1); seed <= uint64(n) && failures < 5; seed++ {
		c, mustRefuse := randomCase(seed)
		want, _, err := c.oracle(t)
		if err != nil {
			continue // the data makes the program fail (a read past X): says nothing
		}
		if err := c.whole(t, want); err != nil && !mustRefuse {
			// Wrong before any sharding: the optimizer's or the engine's
			// bug, but a bug all the same.
			t.Errorf("%s: the whole program's optimized run fails, not sharded: %v\n%s", c.name, err, c.program)
			failures++
			continue
		}
		for _, parts := range partCounts {
			got, _, err := c.sharded(t, parts)
			if mustRefuse {
				if err == nil {
					t.Errorf("%s: split into %d parts, but it must be refused:\n%s", c.name, parts, c.program)
					failures++
				}
				refused++
				break
			}
			if err != nil {
				t.Errorf("%s, %d parts: %v\n%s", c.name, parts, err, c.program)
				failures++
				break
			}
			if err := sameEntries(got, want); err != nil {
				t.Errorf("%s, %d parts: %v\n%s", c.name, parts, err, c.program)
				failures++
				break
			}
			ran++
		}
	}
	t.Logf("%d sharded runs agree with the interpreter, %d programs refused as they must be", ran, refused)
	if ran < n {
		t.Errorf("only %d sharded runs: the generator makes too few programs that run", ran)
	}
}

func TestRefusals(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 32))
	a, b := randCOO(r, 0.3, 8, 8), randCOO(r, 0.7, 8, 8)
	cases := []struct {
		program string
		format  string
		copyOK  map[string]bool
		want    string
	}{
		{example(t, "mmm"), "csr", nil, "B (" + fmt.Sprint(b.Len()) + " entries) is at least as large as A"},
		{"CREATE TENSOR Q AS sum(<i, Ai> in A) sum(<k, v> in A(i)) { k -> v };", "csr", nil, "reads A again inside its outermost sum"},
		{"CREATE TENSOR T AS sum(<i, Ai> in A) { i -> 1.0 };\nCREATE TENSOR Q AS sum(<i, Ai> in A) { i -> T(i) };", "csr", nil, "reads A through another tensor"},
		{"CREATE TENSOR Q AS sum(<i, Ai> in A) { i -> A_len1 * 1.0 };", "csr", nil, "reads A_len1, a physical object of A"},
		{"CREATE TENSOR Q AS sum(<i, Ai> in A) { i -> 1.0 };", "hash", nil, "A is stored as hash"},
		{"CREATE TENSOR Q AS 2.0 * sum(<i, Ai> in A) { i -> 1.0 };", "csr", nil, "not a sum over a --tensor"},
		{example(t, "mmm"), "csr", map[string]bool{"B": true}, ""},
	}
	for _, c := range cases {
		tc := tcase{name: "refusal", program: c.program, copyOK: c.copyOK, tensors: []tin{{"A", a, c.format}, {"B", b, "csr"}}}
		_, _, err := tc.sharded(t, 2)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.program, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got error %v, want one saying %q", c.program, err, c.want)
		}
	}
}

// TestCutsBalance: parts hold about len/n entries each; a part is larger
// only by the entries of one coordinate, which cannot be cut.
func TestCutsBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 32))
	for _, n := range []int{1, 2, 3, 7, 16} {
		c := randCOO(r, 0.2, 200, 30)
		rowMax := map[int64]int{}
		for _, x := range c.Coords[0] {
			rowMax[x]++
		}
		heaviest := 0
		for _, k := range rowMax {
			heaviest = max(heaviest, k)
		}
		b := shard.Cuts(c, n)
		if len(b) != n+1 || b[0] != 0 || b[n] != c.Dims[0] {
			t.Fatalf("%d parts: bounds %v", n, b)
		}
		for p := 0; p < n; p++ {
			k := 0
			for _, x := range c.Coords[0] {
				if b[p] <= x && x < b[p+1] {
					k++
				}
			}
			if limit := (c.Len()+n-1)/n + heaviest; k > limit {
				t.Errorf("%d parts: part %d holds %d entries, more than %d (bounds %v)", n, p, k, limit, b)
			}
		}
	}
}
