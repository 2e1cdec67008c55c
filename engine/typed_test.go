package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// intValued returns a copy of st whose real arrays named in names (all
// of them if names is empty) hold ints: the values of pattern and integer
// matrices. The test data's values are small integers, so nothing changes
// but the type.
func intValued(st storage.Store, names ...string) storage.Store {
	out := storage.Store{}
	for k, v := range st {
		out[k] = v
		a, ok := v.(*storage.Array)
		if !ok || a.ElemType() != ir.Real || (len(names) > 0 && !contains(names, k)) {
			continue
		}
		ints := make([]int64, len(a.F))
		for i, f := range a.F {
			ints[i] = int64(f)
		}
		out[k] = storage.IntArray(ints)
	}
	return out
}

func contains(names []string, k string) bool {
	for _, n := range names {
		if n == k {
			return true
		}
	}
	return false
}

// TestIntValuedKernels runs the paper kernels' physical plans with int
// values in some or all of their arrays (the fused loops read int arrays
// in place, converting as they read) against the interpreter.
func TestIntValuedKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for _, kc := range kernelCases(1, rng) {
		for _, names := range [][]string{{"A_val"}, {"B_val"}, {"x"}, {"A_val", "x"}, {"C_val"}, nil} {
			st := intValued(kc.st, names...)
			t.Run(kc.name+"/"+strings.Join(names, ","), func(t *testing.T) {
				agree(t, parse(t, kc.plan, st), st)
			})
		}
	}
}

// TestIntValuedOptimizedPlans runs the optimizer's plans of the paper's
// programs over tensors with integer values (as pattern and integer files
// load) against the interpreter.
func TestIntValuedOptimizedPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, pc := range paperCases {
		for _, allInt := range []bool{false, true} {
			t.Run(pc.name, func(t *testing.T) {
				st := storage.Store{}
				var srcs []sdql.Source
				first := true
				for _, tn := range []string{"A", "B", "C", "D"} {
					dims, ok := pc.tensors[tn]
					if !ok {
						continue
					}
					f, err := storage.ParseFormat(pc.formats[tn])
					if err != nil {
						t.Fatal(err)
					}
					c := randCOO(dims, 200, rng)
					elem := ir.Real
					if first || allInt {
						c.Field, elem = storage.FieldInteger, ir.Int
					}
					first = false
					objs, err := storage.Build(tn, c, f)
					if err != nil {
						t.Fatal(err)
					}
					for k, v := range objs {
						st[k] = v
					}
					srcs = append(srcs, sdql.Source{Name: tn + ".sdql", Text: []byte(storage.Mapping(tn, f, len(dims), elem))})
				}
				text, _ := examples.Source(pc.name)
				srcs = append(srcs, sdql.Source{Name: pc.name + ".sdql", Text: text})
				if d, ok := pc.tensors["A"]; ok {
					st["x"] = storage.RealArray(randVec(int(d[len(d)-1]), rng))
				}
				st["beta"] = storage.RealScalar(1.5)
				prog, err := sdql.Compile(srcs...)
				if err != nil {
					t.Fatal(err)
				}
				res, err := opt.Optimize(prog.Compose(""), st, planLimits)
				if err != nil {
					t.Fatal(err)
				}
				agree(t, res.Plan, st)
			})
		}
	}
}

// TestTypedLoopShapes runs the typed loops' variants (pure or scaled
// products, int or real arrays, rows in one loop or one by one, keys in
// and out of the slice) on sound and corrupt CSR arrays: the engine
// computes the interpreter's value, or fails where it fails.
func TestTypedLoopShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	plans := []string{
		planSpMV,
		planMMM,
		`sum(<i, _> in 0:A_len1) { @dense i -> 3.0 * sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j) }`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) 2.5 * A_val(p) * x(j) }`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * beta * x(j) }`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * 0.5 }`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * 2.5`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j)`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> A_val(p) * B_val(q) * beta } }`,
		`sum(<p, k> in A_idx2) sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> A_val(p) * B_val(q) * beta }`,
		`sum(<p, k> in A_idx2) sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> B_val(q) }`,
		// Gathers: a pattern matrix (no value array) times x.
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<_, j> in A_idx2(A_pos2(i):A_pos2(i+1))) x(j) }`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<_, j> in A_idx2(A_pos2(i):A_pos2(i+1))) beta * x(j) }`,
		`sum(<i, _> in 0:A_len1) sum(<_, j> in A_idx2(A_pos2(i):A_pos2(i+1))) x(j)`,
		`sum(<p, j> in A_idx2(2:9)) x(j) * 0.5`,
		// A row's factor applied to its sum's total: SumMMM's rows, in
		// a scalar, a dense row and a product of two sums.
		planRowSumLet,
		`sum(<k, _> in 0:A_len1) let t = sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) B_val(q) in
			{ @dense k -> sum(<p, i> in A_idx2(A_pos2(k):A_pos2(k+1))) t * A_val(p) * t }`,
		planSumMMM,
	}
	corruptions := []func(a *sparseCSR){
		func(a *sparseCSR) {},
		func(a *sparseCSR) { a.pos[len(a.pos)/2] = int64(len(a.idx)) + 5 },
		func(a *sparseCSR) { a.pos[3] = a.pos[4] + 1 },
		func(a *sparseCSR) { a.idx[len(a.idx)/3] = 1 << 40 },
		func(a *sparseCSR) { a.idx[len(a.idx)/2] = -3 },
		func(a *sparseCSR) { a.idx[len(a.idx)/2] = 70_000 },
	}
	for _, plan := range plans {
		for ci, corrupt := range corruptions {
			for _, names := range [][]string{{"none"}, {"A_val"}, {"x"}, {"B_val"}, nil} {
				st := storage.Store{"x": storage.RealArray(randVec(40, rng)), "beta": storage.RealScalar(2)}
				a, b := randCSR(40, 40, 300, rng), randCSR(40, 40, 300, rng)
				corrupt(a)
				corrupt(b)
				a.store(st, "A")
				b.store(st, "B")
				st = intValued(st, names...)
				t.Run(strings.Join(names, ","), func(t *testing.T) {
					e := parse(t, plan, st)
					agree(t, e, st)
					if _, err := runEngine(e, st, 1); (err == nil) != (ci == 0 || ci == 5) {
						if _, ierr := eval.Eval(e, st); (ierr == nil) != (err == nil) {
							t.Fatalf("%s: engine error %v, interpreter error %v", plan, err, ierr)
						}
					}
				})
			}
		}
	}
}

// TestIntSums runs int sums of int array reads at the loop's key or
// value on sound and corrupt arrays, against the interpreter and against
// the closure path (the same values and errors); the loop-nest IR must
// lower them.
func TestIntSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 58))
	plans := []string{
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p)`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j)`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) x(j) * A_val(p)`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) x(j)`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * A_val(p)`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) A_val(p) * x(j) }`,
		`sum(<p, j> in A_idx2) A_val(p) * x(j)`,
		`sum(<p, j> in A_idx2(3:9)) x(j) * x(p)`,
	}
	for _, plan := range plans {
		for ci, corrupt := range []func(a *sparseCSR){
			func(a *sparseCSR) {},
			func(a *sparseCSR) { a.pos[3] = a.pos[4] + 1 },
			func(a *sparseCSR) { a.idx[len(a.idx)/3] = 1 << 40 },
			func(a *sparseCSR) { a.idx[len(a.idx)/2] = -3 },
			func(a *sparseCSR) { a.val = a.val[:len(a.val)/2] },
		} {
			st := storage.Store{"x": storage.RealArray(randVec(40, rng))}
			a := randCSR(40, 40, 300, rng)
			corrupt(a)
			a.store(st, "A")
			st = intValued(st)
			t.Run(plan, func(t *testing.T) {
				againstGeneral(t, plan, plan, st, func(off bool) { closuresOnly = off })
				if _, err := runEngine(parse(t, plan, st), st, 1); ci == 0 && err != nil {
					t.Fatal(err)
				}
				if k, err := Compile(parse(t, plan, st), SchemaOf(st), Options{}); err != nil || len(k.nests) == 0 {
					t.Errorf("the loop-nest IR lowered no loop (%v)", err)
				}
			})
		}
	}
}
