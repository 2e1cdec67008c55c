package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Short constructors for hand-built expressions.

func n(i int64) *ir.Expr                   { return ir.IntConst(i) }
func re(x float64) *ir.Expr                { return ir.RealConst(x) }
func vr(name string) *ir.Expr              { return ir.Var(name) }
func gl(name string) *ir.Expr              { return ir.Global(name) }
func add(a, b *ir.Expr) *ir.Expr           { return ir.Binary(ir.OpAdd, a, b) }
func sub(a, b *ir.Expr) *ir.Expr           { return ir.Binary(ir.OpSub, a, b) }
func mul(a, b *ir.Expr) *ir.Expr           { return ir.Binary(ir.OpMul, a, b) }
func div(a, b *ir.Expr) *ir.Expr           { return ir.Binary(ir.OpDiv, a, b) }
func eq(a, b *ir.Expr) *ir.Expr            { return ir.Binary(ir.OpEq, a, b) }
func and(a, b *ir.Expr) *ir.Expr           { return ir.Binary(ir.OpAnd, a, b) }
func single(k, v *ir.Expr) *ir.Expr        { return ir.Singleton(ir.AnnNone, k, v) }
func uniq(k, v *ir.Expr) *ir.Expr          { return ir.Singleton(ir.AnnUnique, k, v) }
func look(d, k *ir.Expr) *ir.Expr          { return ir.Lookup(d, k) }
func rng(a, b *ir.Expr) *ir.Expr           { return ir.Range(a, b) }
func subarr(d, a, b *ir.Expr) *ir.Expr     { return ir.SubArray(d, a, b) }
func let(x string, v, b *ir.Expr) *ir.Expr { return ir.Let(x, v, b) }
func sum(k, v string, src, body *ir.Expr) *ir.Expr {
	return ir.Sum(k, v, src, body)
}
func ifte(c, t, e *ir.Expr) *ir.Expr { return ir.If(c, t, e) }

// at gives e a position in file t.sdql.
func at(line, col int, e *ir.Expr) *ir.Expr {
	return e.At(ir.Pos{File: "t.sdql", Line: line, Col: col})
}

// typed fills the Type of every node of e the way the type checker would
// (globals typed from st), so hand-built trees can be evaluated.
func typed(t testing.TB, e *ir.Expr, st storage.Store) *ir.Expr {
	t.Helper()
	if err := inferTypes(e, st, map[string]ir.Type{}); err != nil {
		t.Fatalf("typing %s: %v", e, err)
	}
	return e
}

func join(a, b ir.Type) ir.Type {
	t := a
	if b.Depth > t.Depth {
		t.Depth = b.Depth
	}
	if a.Base == ir.Real || b.Base == ir.Real {
		t.Base = ir.Real
	}
	return t
}

func inferTypes(e *ir.Expr, st storage.Store, env map[string]ir.Type) error {
	with := func(names []string, types []ir.Type, body *ir.Expr) error {
		inner := make(map[string]ir.Type, len(env)+len(names))
		for k, v := range env {
			inner[k] = v
		}
		for i, x := range names {
			inner[x] = types[i]
		}
		return inferTypes(body, st, inner)
	}
	for i, a := range e.Args {
		if !e.BinderScope(i) {
			if err := inferTypes(a, st, env); err != nil {
				return err
			}
		}
	}
	arg := func(i int) ir.Type { return e.Args[i].Type }
	switch e.Op {
	case ir.OpConst:
		if e.Type.Base == ir.Unknown {
			return fmt.Errorf("untyped constant")
		}
	case ir.OpVar:
		t, ok := env[e.Name]
		if !ok {
			t = ir.Type{Depth: 1, Base: ir.Real} // left for the interpreter to reject
		}
		e.Type = t
	case ir.OpGlobal:
		switch o := st[e.Name].(type) {
		case *storage.Scalar:
			e.Type = ir.Type{Depth: 0, Base: o.Elem}
		case *storage.Array:
			e.Type = ir.Type{Depth: 1, Base: o.Elem}
		case *storage.HashMap:
			e.Type = ir.Type{Depth: o.Arity, Base: o.Elem}
		case *storage.Trie:
			e.Type = ir.Type{Depth: o.Depth, Base: o.Elem}
		default:
			e.Type = ir.Type{Depth: 1, Base: ir.Real} // left for the interpreter to reject
		}
	case ir.OpNeg:
		e.Type = arg(0)
	case ir.OpNot, ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpAnd, ir.OpOr:
		e.Type = ir.BoolType
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod:
		e.Type = join(arg(0), arg(1))
	case ir.OpCall:
		switch e.Name {
		case "exp", "log", "sqrt":
			e.Type = ir.RealType
		case "even_bits", "odd_bits":
			e.Type = ir.IntType
		default:
			e.Type = arg(0)
			for i := range e.Args {
				e.Type = join(e.Type, arg(i))
			}
		}
	case ir.OpSingleton:
		e.Type = arg(1).Dict()
	case ir.OpLookup:
		if arg(0).Depth == 0 {
			return fmt.Errorf("lookup in a scalar: %s", e)
		}
		e.Type = arg(0).Elem()
	case ir.OpRange:
		e.Type = ir.Type{Depth: 1, Base: ir.Int}
	case ir.OpSubArray:
		e.Type = arg(0)
	case ir.OpIf:
		e.Type = arg(1)
		if len(e.Args) == 3 {
			e.Type = join(arg(1), arg(2))
		}
	case ir.OpLet:
		if err := with(e.Vars, []ir.Type{arg(0)}, e.Args[1]); err != nil {
			return err
		}
		e.Type = arg(1)
	case ir.OpSum:
		if arg(0).Depth == 0 {
			return fmt.Errorf("sum over a scalar: %s", e)
		}
		if err := with(e.Vars, []ir.Type{ir.IntType, arg(0).Elem()}, e.Args[1]); err != nil {
			return err
		}
		e.Type = arg(1)
	case ir.OpMerge:
		if err := with(e.Vars, []ir.Type{ir.IntType, ir.IntType, arg(0).Elem()}, e.Args[2]); err != nil {
			return err
		}
		e.Type = arg(2)
	}
	return nil
}

// run types e over st and evaluates it, failing the test on error.
func run(t testing.TB, e *ir.Expr, st storage.Store) value.Value {
	t.Helper()
	v, err := Eval(typed(t, e, st), st)
	if err != nil {
		t.Fatalf("Eval(%s): %v", e, err)
	}
	return v
}

// runErr types e over st and evaluates it with opt, expecting an error.
func runErr(t testing.TB, e *ir.Expr, st storage.Store, opt Options) string {
	t.Helper()
	v, err := EvalWith(typed(t, e, st), st, opt)
	if err == nil {
		t.Fatalf("Eval(%s) = %s, want an error", e, value.Format(v))
	}
	if _, ok := err.(*Error); !ok {
		t.Fatalf("Eval(%s): error %v is a %T, not *Error", e, err, err)
	}
	return err.Error()
}

// coords is a reference tensor computed by plain Go loops: coordinates
// (as many as the tensor's order) to value.
type coords map[[4]int64]float64

// toValue builds the dictionary of the first order coordinates of c,
// dropping zeros: written without the value package's arithmetic so that
// it is independent of what it checks.
func (c coords) toValue(order int) value.Value {
	if order == 0 {
		return c[[4]int64{}]
	}
	var keys [][4]int64
	for k, v := range c {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b [4]int64) int { return slices.Compare(a[:order], b[:order]) })
	var build func(lo, hi, level int) *value.Dict
	build = func(lo, hi, level int) *value.Dict {
		d := &value.Dict{}
		for i := lo; i < hi; {
			j := i + 1
			for j < hi && keys[j][level] == keys[i][level] {
				j++
			}
			d.Keys = append(d.Keys, keys[i][level])
			if level == order-1 {
				d.Vals = append(d.Vals, c[keys[i]])
			} else {
				d.Vals = append(d.Vals, build(i, j, level+1))
			}
			i = j
		}
		return d
	}
	return build(0, len(keys), 0)
}

// same fails the test unless got equals want (reals within 1e-9).
func same(t testing.TB, what string, got, want value.Value) {
	t.Helper()
	if !value.Equal(got, want, 1e-9) {
		t.Fatalf("%s:\n got  %s\n want %s", what, clip(value.Format(got)), clip(value.Format(want)))
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

func wantSubstr(t testing.TB, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("error %q does not contain %q", got, want)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randSparse returns a random sparse matrix with the given density as a
// coordinate map; values are small integers stored as reals, some of them
// explicitly zero when zeros is set.
func randSparse(r *rand.Rand, rows, cols int, density float64, zeros bool) coords {
	c := coords{}
	for i := range rows {
		for j := range cols {
			if r.Float64() < density {
				v := float64(r.IntN(9) + 1)
				if zeros && r.IntN(5) == 0 {
					v = 0
				}
				c[[4]int64{int64(i), int64(j)}] = v
			}
		}
	}
	return c
}

// sortedKeys returns the keys of c in lexicographic order.
func (c coords) sortedKeys() [][4]int64 {
	keys := make([][4]int64, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [4]int64) int { return slices.Compare(a[:], b[:]) })
	return keys
}

// csr stores matrix c (rows x cols) as arrays name_len1, name_pos2,
// name_idx2, name_val in st, explicit zeros included.
func csr(st storage.Store, name string, c coords, rows int) {
	pos := make([]int64, rows+1)
	var idx []int64
	var val []float64
	keys := c.sortedKeys()
	for _, k := range keys {
		pos[k[0]+1]++
		idx = append(idx, k[1])
		val = append(val, c[k])
	}
	for i := 1; i <= rows; i++ {
		pos[i] += pos[i-1]
	}
	st[name+"_len1"] = storage.IntScalar(int64(rows))
	st[name+"_pos2"] = storage.IntArray(pos)
	st[name+"_idx2"] = storage.IntArray(idx)
	st[name+"_val"] = storage.RealArray(val)
}
