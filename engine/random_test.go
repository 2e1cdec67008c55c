package engine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var randomCases = flag.Int("engine.random", 1500, "number of random programs TestRandomPrograms checks")
var randomSeed = flag.Uint64("engine.seed", 1, "seed of TestRandomPrograms")

// gtype is a type in the generator: depth of dictionary nesting and
// whether the leaves are real (else int); bool is a separate flag.
type gtype struct {
	depth int
	real  bool
	bool  bool
}

var (
	tInt  = gtype{}
	tReal = gtype{real: true}
)

func (t gtype) elem() gtype { return gtype{depth: t.depth - 1, real: t.real} }
func (t gtype) dict() gtype { return gtype{depth: t.depth + 1, real: t.real} }

type gvar struct {
	name string
	t    gtype
}

// gen writes random well-typed SDQLite expressions over the objects of
// randomStore.
type gen struct {
	rng  *rand.Rand
	vars []gvar
	next int
}

func (g *gen) pick(n int) int { return g.rng.IntN(n) }

func (g *gen) fresh() string {
	g.next++
	return fmt.Sprintf("v%d", g.next)
}

func (g *gen) withVars(vs []gvar, f func() string) string {
	g.vars = append(g.vars, vs...)
	s := f()
	g.vars = g.vars[:len(g.vars)-len(vs)]
	return s
}

func (g *gen) varOf(t gtype) string {
	var names []string
	for _, v := range g.vars {
		if v.t == t {
			names = append(names, v.name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return names[g.pick(len(names))]
}

// globals of each type in randomStore.
var globalsOf = map[gtype][]string{
	tInt:                    {"n", "m"},
	tReal:                   {"x"},
	{depth: 1}:              {"I", "S", "U", "HI"},
	{depth: 1, real: true}:  {"R", "Q"},
	{depth: 2, real: true}:  {"H", "T"},
	{depth: 3, real: false}: {"T3"},
}

// arrays usable with subarray syntax, with their lengths.
var arrays = map[string]int{"I": 8, "S": 8, "U": 6, "R": 8, "Q": 6}

func (g *gen) expr(t gtype, size int) string {
	if t.bool {
		return g.boolExpr(size)
	}
	if t.depth == 0 {
		return g.scalar(t, size)
	}
	return g.dictExpr(t, size)
}

func (g *gen) leafScalar(t gtype) string {
	if v := g.varOf(t); v != "" && g.pick(4) > 0 {
		return v
	}
	if gs := globalsOf[t]; len(gs) > 0 && g.pick(3) == 0 {
		return gs[g.pick(len(gs))]
	}
	if t.real {
		return fmt.Sprintf("%g", float64(g.pick(9)-3)/2)
	}
	c := g.pick(8) - 1
	if c < 0 {
		return fmt.Sprintf("(%d)", c)
	}
	return fmt.Sprint(c)
}

// small returns an int expression likely to be a valid small index.
func (g *gen) small(size int) string {
	if size <= 1 || g.pick(2) == 0 {
		return g.leafScalar(tInt)
	}
	return g.scalar(tInt, size)
}

func (g *gen) scalar(t gtype, size int) string {
	if size <= 1 {
		return g.leafScalar(t)
	}
	s := size - 1
	switch g.pick(13) {
	case 0, 1:
		ops := []string{"+", "-", "*", "/", "%"}
		if t.real {
			ops = ops[:4]
		}
		op := ops[g.pick(len(ops))]
		a, b := t, t
		if t.real && g.pick(3) == 0 {
			a = tInt // int and real mix as real
		}
		return fmt.Sprintf("(%s %s %s)", g.scalar(a, s/2), op, g.scalar(b, s/2))
	case 2:
		if t.real {
			return fmt.Sprintf("(if %s then %s else %s)", g.boolExpr(s/3), g.scalar(t, s/3), g.scalar(tInt, s/3))
		}
		return fmt.Sprintf("(if %s then %s else %s)", g.boolExpr(s/3), g.scalar(t, s/3), g.scalar(t, s/3))
	case 3:
		return fmt.Sprintf("(if %s then %s)", g.boolExpr(s/2), g.scalar(t, s/2))
	case 4:
		vt := []gtype{tInt, tReal, {depth: 1}, {depth: 1, real: true}, {bool: true}}[g.pick(5)]
		x := g.fresh()
		val := g.expr(vt, s/2)
		return fmt.Sprintf("(let %s = %s in %s)", x, val, g.withVars([]gvar{{x, vt}}, func() string { return g.scalar(t, s/2) }))
	case 5, 6:
		return g.sum(t, s)
	case 7:
		dt := gtype{depth: 1, real: t.real}
		if g.pick(2) == 0 {
			dt.depth = 2
			return fmt.Sprintf("(%s)(%s)(%s)", g.dictExpr(dt, s/2), g.small(s/4), g.small(s/4))
		}
		return fmt.Sprintf("(%s)(%s)", g.dictExpr(dt, s/2), g.small(s/2))
	case 8:
		return g.merge(t, s)
	case 9:
		if t.real {
			fs := []string{"sqrt(abs(%s))", "abs(%s)", "max(%s, 0.5)", "min(%s, 2)"}
			return fmt.Sprintf(fs[g.pick(len(fs))], g.scalar(t, s))
		}
		fs := []string{"abs(%s)", "even_bits(abs(%s))", "odd_bits(abs(%s))", "max(%s, 1)", "min(%s, 3)"}
		return fmt.Sprintf(fs[g.pick(len(fs))], g.scalar(t, s))
	case 10:
		return fmt.Sprintf("(-%s)", g.scalar(t, s))
	case 11:
		if t.real {
			// A product chain of array reads at variables and
			// scalars: the shape of fused loop bodies.
			n := 1 + g.pick(4)
			fs := make([]string, n)
			for i := range fs {
				if v := g.varOf(tInt); v != "" && g.pick(3) > 0 {
					fs[i] = fmt.Sprintf("%s(%s)", []string{"R", "Q", "R"}[g.pick(3)], v)
				} else {
					fs[i] = g.leafScalar(tReal)
				}
			}
			return "(" + strings.Join(fs, " * ") + ")"
		}
	}
	return g.leafScalar(t)
}

func (g *gen) boolExpr(size int) string {
	if size <= 1 {
		return []string{"true", "false", "(n < 3)", "(x > 0.5)"}[g.pick(4)]
	}
	s := size - 1
	switch g.pick(5) {
	case 0:
		return fmt.Sprintf("(%s && %s)", g.boolExpr(s/2), g.boolExpr(s/2))
	case 1:
		return fmt.Sprintf("(%s || %s)", g.boolExpr(s/2), g.boolExpr(s/2))
	case 2:
		return fmt.Sprintf("(!%s)", g.boolExpr(s))
	}
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	t := []gtype{tInt, tReal}[g.pick(2)]
	return fmt.Sprintf("(%s %s %s)", g.scalar(t, s/2), ops[g.pick(len(ops))], g.scalar(t, s/2))
}

// source returns a dictionary expression to iterate and its type.
func (g *gen) source(size int) (string, gtype) {
	switch g.pick(7) {
	case 0:
		lo := g.pick(3)
		return fmt.Sprintf("%d:%s", lo, []string{"n", "4", "m"}[g.pick(3)]), gtype{depth: 1}
	case 1, 2:
		names := []string{"I", "S", "U", "R", "Q"}
		a := names[g.pick(len(names))]
		n := arrays[a]
		lo := g.pick(n)
		hi := lo + g.pick(n-lo+1)
		if g.pick(4) == 0 {
			// a bound computed from another array, as in CSR
			return fmt.Sprintf("%s(S(%d):S(%d))", a, g.pick(4), 4+g.pick(3)), gtype{depth: 1, real: a == "R" || a == "Q"}
		}
		if v := g.varOf(tInt); v != "" && g.pick(2) == 0 {
			// a segment picked by a variable: S is sorted, so mostly valid
			return fmt.Sprintf("%s(S(%s):S(%s + 1))", a, v, v), gtype{depth: 1, real: a == "R" || a == "Q"}
		}
		return fmt.Sprintf("%s(%d:%d)", a, lo, hi), gtype{depth: 1, real: a == "R" || a == "Q"}
	}
	ts := []gtype{{depth: 1}, {depth: 1, real: true}, {depth: 2, real: true}, {depth: 2}}
	t := ts[g.pick(len(ts))]
	return g.dictExpr(t, size), t
}

func (g *gen) sum(t gtype, size int) string {
	src, st := g.source(size / 2)
	k, v := g.fresh(), g.fresh()
	body := g.withVars([]gvar{{k, tInt}, {v, st.elem()}}, func() string {
		if g.pick(5) == 0 {
			// the key-filter shape: if k == o then ...
			return fmt.Sprintf("if %s == %s then %s", k, g.small(2), g.expr(t, size/2))
		}
		return g.expr(t, size/2)
	})
	return fmt.Sprintf("(sum(<%s, %s> in %s) %s)", k, v, src, body)
}

func (g *gen) merge(t gtype, size int) string {
	vec := func() string {
		switch g.pick(4) {
		case 0:
			return []string{"S", "U", "I"}[g.pick(3)]
		case 1:
			return fmt.Sprintf("%d:%d", g.pick(3), 2+g.pick(5))
		}
		a := []string{"S", "U", "I"}[g.pick(3)]
		n := arrays[a]
		lo := g.pick(n)
		return fmt.Sprintf("%s(%d:%d)", a, lo, lo+g.pick(n-lo+1))
	}
	k1, k2, v := g.fresh(), g.fresh(), g.fresh()
	// The front end accepts only int vectors in merge.
	e1, e2 := vec(), vec()
	body := g.withVars([]gvar{{k1, tInt}, {k2, tInt}, {v, tInt}}, func() string { return g.expr(t, size) })
	return fmt.Sprintf("(merge(<%s, %s, %s> in <%s, %s>) %s)", k1, k2, v, e1, e2, body)
}

func (g *gen) ann() string {
	return []string{"", "@dense ", "@hash ", "@unique ", "@dense "}[g.pick(5)]
}

func (g *gen) dictExpr(t gtype, size int) string {
	if size <= 1 {
		if v := g.varOf(t); v != "" && g.pick(2) == 0 {
			return v
		}
		if gs := globalsOf[t]; len(gs) > 0 {
			return gs[g.pick(len(gs))]
		}
		if t.depth == 1 && !t.real && g.pick(2) == 0 {
			return fmt.Sprintf("(%d:%d)", g.pick(3), 2+g.pick(4))
		}
		return fmt.Sprintf("{ %s%s -> %s }", g.ann(), g.small(1), g.expr(t.elem(), 1))
	}
	s := size - 1
	switch g.pick(12) {
	case 0, 1:
		return fmt.Sprintf("{ %s%s -> %s }", g.ann(), g.small(s/3), g.expr(t.elem(), s))
	case 2, 3:
		return g.sum(t, s)
	case 4:
		op := []string{"+", "-", "*"}[g.pick(3)]
		return fmt.Sprintf("(%s %s %s)", g.dictExpr(t, s/2), op, g.dictExpr(t, s/2))
	case 5:
		sc := g.scalar(gtype{real: t.real}, s/3)
		if g.pick(2) == 0 {
			return fmt.Sprintf("(%s * %s)", sc, g.dictExpr(t, s/2))
		}
		return fmt.Sprintf("(%s * %s)", g.dictExpr(t, s/2), sc)
	case 6:
		if g.pick(2) == 0 {
			return fmt.Sprintf("(if %s then %s)", g.boolExpr(s/3), g.dictExpr(t, s/2))
		}
		return fmt.Sprintf("(if %s then %s else %s)", g.boolExpr(s/3), g.dictExpr(t, s/3), g.dictExpr(t, s/3))
	case 7:
		vt := []gtype{tInt, tReal, {depth: 1, real: true}, t}[g.pick(4)]
		x := g.fresh()
		val := g.expr(vt, s/2)
		return fmt.Sprintf("(let %s = %s in %s)", x, val, g.withVars([]gvar{{x, vt}}, func() string { return g.dictExpr(t, s/2) }))
	case 8:
		return fmt.Sprintf("(%s)(%s)", g.dictExpr(t.dict(), s), g.small(2))
	case 9:
		return g.merge(t, s)
	case 10:
		return fmt.Sprintf("(-%s)", g.dictExpr(t, s))
	}
	if t.depth == 1 {
		if !t.real && g.pick(2) == 0 {
			return fmt.Sprintf("(%s:%s)", g.small(2), g.small(2))
		}
		var names []string
		for a := range arrays {
			if (a == "R" || a == "Q") == t.real {
				names = append(names, a)
			}
		}
		slices.Sort(names)
		a := names[g.pick(len(names))]
		lo := g.pick(arrays[a])
		return fmt.Sprintf("%s(%d:%s)", a, lo, g.small(2))
	}
	return g.dictExpr(t, 1)
}

// randomStore holds the objects random programs read. Int arrays hold
// small values so they index each other; S and U are sorted (merge).
func randomStore(rng *rand.Rand) storage.Store {
	ints := func(n, hi int, sorted bool) []int64 {
		a := make([]int64, n)
		for i := range a {
			a[i] = int64(rng.IntN(hi))
		}
		if sorted {
			slices.Sort(a)
		}
		return a
	}
	reals := func(n int) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = float64(rng.IntN(7)-2) / 2
		}
		return a
	}
	h := storage.NewHashMap(ir.Real, []int64{4, 4})
	t := storage.NewTrie(ir.Real, []int64{4, 4})
	t3 := storage.NewTrie(ir.Int, []int64{3, 3, 3})
	hi := storage.NewHashMap(ir.Int, []int64{6})
	for i := 0; i < 6; i++ {
		_ = h.Put([]int64{int64(rng.IntN(4)), int64(rng.IntN(4))}, 0, float64(rng.IntN(5)-1))
		_ = t.Put([]int64{int64(rng.IntN(4)), int64(rng.IntN(4))}, 0, float64(rng.IntN(5)-1))
		_ = t3.Put([]int64{int64(rng.IntN(3)), int64(rng.IntN(3)), int64(rng.IntN(3))}, int64(rng.IntN(4)-1), 0)
		_ = hi.Put([]int64{int64(rng.IntN(6))}, int64(rng.IntN(5)-1), 0)
	}
	t.Finish()
	t3.Finish()
	return storage.Store{
		"n":  storage.IntScalar(int64(2 + rng.IntN(4))),
		"m":  storage.IntScalar(int64(rng.IntN(7))),
		"x":  storage.RealScalar(float64(rng.IntN(5)) / 2),
		"I":  storage.IntArray(ints(8, 8, false)),
		"S":  storage.IntArray(ints(8, 8, true)),
		"U":  storage.IntArray(ints(6, 6, true)),
		"R":  storage.RealArray(reals(8)),
		"Q":  storage.RealArray(reals(6)),
		"H":  h,
		"T":  t,
		"T3": t3,
		"HI": hi,
	}
}

func TestRandomPrograms(t *testing.T) {
	n := *randomCases
	if testing.Short() {
		n = min(n, 100)
	}
	rng := rand.New(rand.NewPCG(*randomSeed, 7))
	var checked, rejected, failedBoth int
	for i := 0; checked < n && i < 50*n; i++ {
		st := randomStore(rng)
		g := &gen{rng: rng}
		types := []gtype{tInt, tReal, {depth: 1}, {depth: 1, real: true}, {depth: 2, real: true}, {depth: 2}}
		src := g.expr(types[g.pick(len(types))], 4+g.pick(14))
		e, err := sdql.CompileExpr("random.sdql", []byte(src), envOf(st))
		if err != nil {
			rejected++
			if rejected < 5 && testing.Verbose() {
				t.Logf("front end rejects %s: %v", src, firstLine(err))
			}
			continue
		}
		checked++
		want, werr := eval.EvalWith(e, st, eval.Options{MaxSteps: 2_000_000})
		if werr != nil && strings.Contains(werr.Error(), "step limit") {
			continue
		}
		for _, threads := range []int{1, 2} {
			got, err := runEngine(e, st, threads)
			switch {
			case werr != nil && err != nil:
				failedBoth++
				continue
			case werr != nil:
				t.Fatalf("case %d threads=%d\n%s\ninterpreter failed: %v\nengine returned %s", i, threads, src, werr, value.Format(got))
			case err != nil:
				t.Fatalf("case %d threads=%d\n%s\nengine failed: %v\ninterpreter returned %s", i, threads, src, err, value.Format(want))
			}
			if !value.Equal(got, want, 1e-9) {
				t.Fatalf("case %d threads=%d\n%s\nplan: %s\nengine:      %s\ninterpreter: %s\nstore: %s", i, threads, src, ir.Format(e), value.Format(got), value.Format(want), dumpStore(st))
			}
		}
	}
	t.Logf("%d programs checked (%d failed in both), %d rejected by the front end", checked, failedBoth/2, rejected)
	if checked < n/2 {
		t.Fatalf("only %d programs were well typed", checked)
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// dumpStore prints the objects of a store as logical values.
func dumpStore(st storage.Store) string {
	var names []string
	for n := range st {
		names = append(names, n)
	}
	slices.Sort(names)
	var sb strings.Builder
	for _, n := range names {
		v, err := eval.Eval(ir.Global(n).At(ir.Pos{}), st)
		if err != nil {
			fmt.Fprintf(&sb, "\n  %s: %v", n, err)
			continue
		}
		fmt.Fprintf(&sb, "\n  %s = %s", n, value.Format(v))
	}
	return sb.String()
}
