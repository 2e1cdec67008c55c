package opt

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// The differential test: random SDQLite programs (sums, joins, lets, ifs,
// products, sums of dictionaries, lookups) over random tensors stored in
// random formats; the reference interpreter must give the same result for
// the naive plan and the optimized one. go test runs a few hundred cases;
// -opt.random=N runs N (thousands locally), -opt.seed picks the first seed.
var (
	randomCases = flag.Int("opt.random", 150, "number of random programs the differential test optimizes")
	randomSeed  = flag.Uint64("opt.seed", 1, "seed of the first random program")
)

func TestRandomProgramsKeepTheirResults(t *testing.T) {
	n := *randomCases
	if testing.Short() {
		n = min(n, 30)
	}
	failures, skipped := 0, 0
	for i := 0; i < n && failures < 5; i++ {
		seed := *randomSeed + uint64(i)
		ran, err := checkRandomProgram(seed)
		if err != nil {
			t.Errorf("seed %d: %v", seed, err)
			failures++
		}
		if !ran {
			skipped++
		}
	}
	t.Logf("%d programs, %d skipped (the naive plan fails on the data)", n, skipped)
}

// checkRandomProgram builds, optimizes and compares one random program;
// it reports whether the program could be run.
func checkRandomProgram(seed uint64) (bool, error) {
	r := rand.New(rand.NewPCG(seed, 7))
	g := &progGen{r: r}
	st, srcs := g.tensors()
	g.vector(st)
	prog := vectorDecl + g.program()
	srcs = append(srcs, sdql.Source{Name: "random.sdql", Text: []byte(prog)})
	p, err := sdql.Compile(srcs...)
	if err != nil {
		return false, fmt.Errorf("the generated program does not compile: %v\n%s", err, prog)
	}
	naive := p.Compose("")
	want, err := eval.Eval(naive, st)
	if err != nil {
		return false, nil // a program the data makes fail (e.g. a read past an array) says nothing
	}
	res, err := Optimize(naive, st, Options{})
	if err != nil {
		return true, fmt.Errorf("optimize: %v\n%s", err, prog)
	}
	if err := checkPrintedPlan(res.Plan, st); err != nil {
		return true, fmt.Errorf("%v\nprogram:\n%s", err, prog)
	}
	got, err := eval.Eval(res.Plan, st)
	if err != nil {
		return true, fmt.Errorf("the optimized plan fails: %v\nprogram:\n%s\nplan:\n%s", err, prog, ir.Format(res.Plan))
	}
	if !value.Equal(want, got, 1e-9) {
		return true, fmt.Errorf("results differ\nprogram:\n%s\nnaive: %s\noptimized: %s\nplan:\n%s", prog, value.Format(want), value.Format(got), ir.Format(res.Plan))
	}
	return true, nil
}

// progGen generates random tensors and programs over them.
type progGen struct {
	r      *rand.Rand
	tens   []genTensor
	fresh  int
	budget int
}

type genTensor struct {
	name  string
	order int
}

var formatsByOrder = map[int][]string{
	1: {"dense", "coo", "hash", "trie", "s", "d", "csf"},
	2: {"dense", "coo", "csr", "csc", "dcsr", "dcsc", "hash", "trie", "ds", "sd", "ss:1,0", "sd:1,0", "csf"},
	3: {"csf", "coo", "hash", "trie", "dense", "sss:0,2,1", "dsd", "sds:2,0,1", "dss"},
}

// tensors stores 1 to 3 random tensors and returns their mappings.
func (g *progGen) tensors() (storage.Store, []sdql.Source) {
	st := storage.Store{}
	var srcs []sdql.Source
	n := 1 + g.r.IntN(3)
	for i := 0; i < n; i++ {
		name := string(rune('A' + i))
		order := 1 + g.r.IntN(3)
		dims := make([]int64, order)
		for m := range dims {
			dims[m] = int64(2 + g.r.IntN(4))
		}
		c := &storage.COO{Dims: dims, Coords: make([][]int64, order), Field: storage.FieldReal}
		density := 0.2 + 0.6*g.r.Float64()
		if density > 0.72 {
			// Every entry stored: compressed levels with full rows (M5).
			density = 1
		}
		total := int64(1)
		for _, d := range dims {
			total *= d
		}
		for p := int64(0); p < total; p++ {
			if g.r.Float64() >= density {
				continue
			}
			q := p
			for m := order - 1; m >= 0; m-- {
				c.Coords[m] = append(c.Coords[m], q%dims[m])
				q /= dims[m]
			}
			v := float64(g.r.IntN(7) - 2) // small ints, some zeros: exact arithmetic
			c.Vals = append(c.Vals, v)
		}
		fs := formatsByOrder[order]
		f, err := storage.ParseFormat(fs[g.r.IntN(len(fs))])
		if err != nil {
			panic(err)
		}
		objs, err := storage.Build(name, c, f)
		if err != nil {
			panic(err)
		}
		for k, o := range objs {
			st[k] = o
		}
		srcs = append(srcs, sdql.Source{Name: name + ".sdql", Text: []byte(storage.Mapping(name, f, order, ir.Real))})
		g.tens = append(g.tens, genTensor{name, order})
	}
	return st, srcs
}

// vectorDecl declares the physical vector X of XN reals that programs
// may read directly (X(k), X(a:b), 0:XN), as BATAX reads its x: reads past
// its end make the naive plan fail, and such programs are skipped.
const vectorDecl = "CREATE int SCALAR XN;\nCREATE real ARRAY X(XN);\n"

// vector stores X and XN.
func (g *progGen) vector(st storage.Store) {
	n := 2 + g.r.IntN(5)
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(g.r.IntN(5) - 1)
	}
	st["X"] = storage.RealArray(x)
	st["XN"] = storage.IntScalar(int64(n))
}

// scope lists the variables in reach: int keys and values of some depth.
type scope struct {
	keys []string
	vals []genVal
}

type genVal struct {
	name  string
	depth int
}

func (s scope) with(keys []string, vals ...genVal) scope {
	return scope{keys: append(append([]string(nil), s.keys...), keys...), vals: append(append([]genVal(nil), s.vals...), vals...)}
}

func (g *progGen) name(base string) string {
	g.fresh++
	return fmt.Sprintf("%s%d", base, g.fresh)
}

// program returns a whole program: a tensor definition or a bare
// expression of random depth.
func (g *progGen) program() string {
	g.budget = 14
	depth := g.r.IntN(3)
	e := g.expr(depth, scope{})
	if depth == 0 || g.r.IntN(2) == 0 {
		return e + "\n"
	}
	return "CREATE TENSOR Q AS " + e + ";\n"
}

func (g *progGen) pick(n int) int { return g.r.IntN(n) }

// expr returns an expression of dictionary depth d (0: a scalar).
func (g *progGen) expr(d int, s scope) string {
	g.budget--
	if g.budget <= 0 {
		return g.leaf(d, s)
	}
	switch g.pick(9) {
	case 0, 1, 2:
		return g.sum(d, s)
	case 3:
		if d > 0 {
			return "{ " + g.index(s) + " -> " + g.expr(d-1, s) + " }"
		}
		return g.expr(0, s) + " * " + g.expr(0, s)
	case 4:
		return "(" + g.expr(d, s) + " + " + g.expr(d, s) + ")"
	case 5:
		return "(" + g.expr(0, s) + ") * (" + g.expr(d, s) + ")"
	case 6:
		return "(if " + g.cond(s) + " then " + g.expr(d, s) + ")"
	case 7:
		x := g.name("x")
		vd := g.pick(2)
		val := g.expr(vd, s)
		return "(let " + x + " = " + val + " in " + g.expr(d, s.with(nil, genVal{x, vd})) + ")"
	default:
		return g.leaf(d, s)
	}
}

// sum iterates a tensor, a lookup into one, or a dictionary variable; it
// sometimes joins two sources on a shared key (a repeated variable) or
// unpacks a tuple key.
func (g *progGen) sum(d int, s scope) string {
	src, sd := g.source(s)
	if sd == 0 {
		return g.leaf(d, s)
	}
	k, v := g.name("k"), g.name("v")
	head := "<" + k + ", " + v + "> in " + src
	inner := s.with([]string{k}, genVal{v, sd - 1})
	switch {
	case sd >= 2 && g.pick(3) == 0:
		k2 := g.name("k")
		head = "<(" + k + ", " + k2 + "), " + v + "> in " + src
		inner = s.with([]string{k, k2}, genVal{v, sd - 2})
	case g.pick(3) == 0:
		src2, sd2 := g.source(s)
		if sd2 > 0 {
			w := g.name("w")
			head += ", <" + k + ", " + w + "> in " + src2
			inner = inner.with(nil, genVal{w, sd2 - 1})
		}
	}
	return "(sum(" + head + ") " + g.expr(d, inner) + ")"
}

// source returns something to iterate and its depth.
func (g *progGen) source(s scope) (string, int) {
	var dicts []genVal
	for _, v := range s.vals {
		if v.depth > 0 {
			dicts = append(dicts, v)
		}
	}
	if len(dicts) > 0 && g.pick(2) == 0 {
		v := dicts[g.pick(len(dicts))]
		return v.name, v.depth
	}
	switch g.pick(8) {
	case 0:
		return "0:XN", 1
	case 1:
		return "X", 1
	case 2:
		return "X(" + g.index(s) + ":" + g.index(s) + ")", 1
	}
	t := g.tens[g.pick(len(g.tens))]
	if t.order >= 2 && len(s.keys) > 0 && g.pick(4) == 0 {
		return t.name + "(" + g.index(s) + ")", t.order - 1
	}
	return t.name, t.order
}

// leaf returns a simple expression of depth d.
func (g *progGen) leaf(d int, s scope) string {
	var cands []string
	for _, v := range s.vals {
		if v.depth == d {
			cands = append(cands, v.name)
		}
		if v.depth == d+1 && len(s.keys) > 0 {
			cands = append(cands, v.name+"("+g.index(s)+")")
		}
	}
	for _, t := range g.tens {
		if t.order == d {
			cands = append(cands, t.name)
		}
		if t.order > d {
			args := make([]string, t.order-d)
			for i := range args {
				args[i] = g.index(s)
			}
			cands = append(cands, t.name+"("+strings.Join(args, ", ")+")")
		}
	}
	if d == 0 {
		cands = append(cands, "2.0", "0.5", "-1.0", "X("+g.index(s)+")")
		cands = append(cands, s.keys...)
	}
	if len(cands) == 0 {
		// A singleton chain of constants.
		e := "1.0"
		for i := 0; i < d; i++ {
			e = "{ " + g.index(s) + " -> " + e + " }"
		}
		return e
	}
	return cands[g.pick(len(cands))]
}

// index returns an int expression: a key in scope or a small constant.
func (g *progGen) index(s scope) string {
	if len(s.keys) > 0 && g.pick(4) != 0 {
		k := s.keys[g.pick(len(s.keys))]
		if g.pick(5) == 0 {
			return "(" + k + " + 1)"
		}
		return k
	}
	return fmt.Sprint(g.pick(4))
}

// cond returns a bool expression over the scope.
func (g *progGen) cond(s scope) string {
	var scalars []string
	for _, v := range s.vals {
		if v.depth == 0 {
			scalars = append(scalars, v.name)
		}
	}
	switch {
	case len(s.keys) >= 2 && g.pick(2) == 0:
		return s.keys[g.pick(len(s.keys))] + " == " + s.keys[g.pick(len(s.keys))]
	case len(scalars) > 0 && g.pick(2) == 0:
		return scalars[g.pick(len(scalars))] + " > 0.5"
	case g.pick(3) == 0:
		return g.index(s) + " < " + g.index(s) + " && " + g.index(s) + " != 2"
	}
	return g.index(s) + " < " + fmt.Sprint(1+g.pick(4))
}
