package sdql

import (
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/storel/storel/ir"
)

// irGen builds random core-calculus expressions, well-formed but not
// necessarily well-typed, to check that ir.Format output reads back.
type irGen struct {
	rng   *rand.Rand
	scope []string
}

var (
	genGlobals = []string{"A", "B", "N"}
	genBinders = []string{"i", "j", "k", "v", "x1"}
	genFuncs   = []string{"exp", "log", "abs", "sqrt", "even_bits", "odd_bits", "min", "max"}
)

func (g *irGen) leaf() *ir.Expr {
	switch g.rng.Intn(7) {
	case 0:
		return ir.IntConst(int64(g.rng.Intn(21) - 10))
	case 1:
		return ir.RealConst(float64(g.rng.Intn(2001)-1000) / 8)
	case 2:
		return ir.BoolConst(g.rng.Intn(2) == 0)
	case 3:
		return ir.Zero(ir.Type{Depth: 1 + g.rng.Intn(2), Base: ir.Real})
	case 4, 5:
		if len(g.scope) > 0 {
			return ir.Var(g.scope[g.rng.Intn(len(g.scope))])
		}
	}
	return ir.Global(genGlobals[g.rng.Intn(len(genGlobals))])
}

func (g *irGen) bind(names ...string) func() {
	g.scope = append(g.scope, names...)
	return func() { g.scope = g.scope[:len(g.scope)-len(names)] }
}

func (g *irGen) binder() string { return genBinders[g.rng.Intn(len(genBinders))] }

// notComparison wraps e so that it is not a comparison or a logical
// operation, whose '>' would close a merge pair <e1, e2> when printed
// there; a bool merge source is ill-typed anyway.
func (g *irGen) notComparison(e *ir.Expr) *ir.Expr {
	if e.Op >= ir.OpEq && e.Op <= ir.OpOr {
		return ir.Binary(ir.OpAdd, e, g.leaf())
	}
	return e
}

func (g *irGen) expr(depth int) *ir.Expr {
	if depth <= 0 {
		return g.leaf()
	}
	d := depth - 1
	switch g.rng.Intn(12) {
	case 0:
		return g.leaf()
	case 1:
		if g.rng.Intn(2) == 0 {
			return ir.Neg(g.expr(d))
		}
		return ir.Not(g.expr(d))
	case 2, 3:
		op := ir.OpAdd + ir.Op(g.rng.Intn(int(ir.OpOr-ir.OpAdd)+1))
		return ir.Binary(op, g.expr(d), g.expr(d))
	case 4:
		fn := genFuncs[g.rng.Intn(len(genFuncs))]
		if builtinArity[fn] == 2 {
			return ir.Call(fn, g.expr(d), g.expr(d))
		}
		return ir.Call(fn, g.expr(d))
	case 5:
		ann := ir.Ann(g.rng.Intn(4))
		return ir.Singleton(ann, g.expr(d), g.expr(d))
	case 6:
		key := g.expr(d)
		if key.Op == ir.OpRange {
			// A range key prints as a subarray; it is ill-typed anyway.
			key = ir.Neg(key)
		}
		return ir.Lookup(g.expr(d), key)
	case 7:
		if g.rng.Intn(2) == 0 {
			return ir.Range(g.expr(d), g.expr(d))
		}
		return ir.SubArray(g.expr(d), g.expr(d), g.expr(d))
	case 8:
		then := g.expr(d)
		if g.rng.Intn(2) == 0 {
			return ir.If(g.expr(d), then, nil)
		}
		// A then branch ending with an if without else must not capture
		// the else when printed and read back.
		return ir.If(g.expr(d), then, g.expr(d))
	case 9:
		x := g.binder()
		val := g.expr(d)
		defer g.bind(x)()
		return ir.Let(x, val, g.expr(d))
	case 10:
		// Equal names would print as an equality test (<x, x> in e).
		perm := g.rng.Perm(len(genBinders))
		k, v := genBinders[perm[0]], genBinders[perm[1]]
		src := g.expr(d)
		defer g.bind(k, v)()
		return ir.Sum(k, v, src, g.expr(d))
	default:
		// merge needs three distinct names.
		perm := g.rng.Perm(len(genBinders))
		k1, k2, v := genBinders[perm[0]], genBinders[perm[1]], genBinders[perm[2]]
		e1, e2 := g.notComparison(g.expr(d)), g.notComparison(g.expr(d))
		defer g.bind(k1, k2, v)()
		return ir.Merge(k1, k2, v, e1, e2, g.expr(d))
	}
}

// TestFormatRoundTrip checks that printed core-calculus expressions parse
// and desugar back to the same printed form.
func TestFormatRoundTrip(t *testing.T) {
	seed := int64(1)
	if s := os.Getenv("SDQL_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	g := &irGen{rng: rand.New(rand.NewSource(seed))}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		e := g.expr(1 + i%6)
		for _, text := range []string{ir.Format(e), e.String()} {
			back, err := desugarOnly("roundtrip.sdql", []byte(text))
			if err != nil {
				t.Fatalf("printed expression does not read back:\n%s\n%v", text, err)
			}
			if again := ir.Format(back); again != ir.Format(e) {
				t.Fatalf("round trip changed the expression:\n%s\nbecame\n%s", ir.Format(e), again)
			}
		}
	}
}
