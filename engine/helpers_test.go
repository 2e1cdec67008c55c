package engine

import (
	"maps"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// envOf gives the type of every object of st, for the front end.
func envOf(st storage.Store) map[string]ir.Type {
	env := map[string]ir.Type{}
	for name, info := range SchemaOf(st) {
		env[name] = info.Type()
	}
	return env
}

func parse(t testing.TB, src string, st storage.Store) *ir.Expr {
	t.Helper()
	e, err := sdql.CompileExpr("test.sdql", []byte(src), envOf(st))
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return e
}

// planLimits are the optimizer's limits for the plans these tests run:
// the node and round limits, not the machine's load, bound the search.
// Under the default time limit (1 s), reached on a loaded 2-core machine,
// the plan and so the splits and nests it compiles to would vary.
var planLimits = opt.Options{TimeLimit: time.Minute}

// runEngine compiles and runs e on st.
func runEngine(e *ir.Expr, st storage.Store, threads int) (value.Value, error) {
	k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
	if err != nil {
		return nil, err
	}
	return k.Run(st)
}

// agree checks that the engine (1 and 3 threads) and the interpreter
// compute the same value, or both fail. The 3-thread run sweeps no row
// (useSweep off): rows are then marked key by key, as on a CPU without
// AVX-512, so both ways of tracking a row's keys are checked on any CPU.
func agree(t testing.TB, e *ir.Expr, st storage.Store) value.Value {
	t.Helper()
	want, werr := eval.Eval(e, st)
	var first value.Value
	for _, threads := range []int{1, 3} {
		sweep := useSweep
		useSweep = sweep && threads == 1
		got, err := runEngine(e, st, threads)
		useSweep = sweep
		switch {
		case werr != nil && err != nil:
			continue
		case werr != nil:
			t.Fatalf("threads=%d: %s\ninterpreter failed: %v\nengine returned %s", threads, ir.Format(e), werr, value.Format(got))
		case err != nil:
			t.Fatalf("threads=%d: %s\nengine failed: %v\ninterpreter returned %s", threads, ir.Format(e), err, value.Format(want))
		}
		tol := 1e-9
		if !value.Equal(got, want, tol) {
			t.Fatalf("threads=%d: %s\nengine:      %s\ninterpreter: %s", threads, ir.Format(e), value.Format(got), value.Format(want))
		}
		if threads == 1 {
			first = got
		}
	}
	return first
}

// csr builds the CSR arrays of a random n x m matrix with about nnz
// entries under the names P_len1, P_dim2, P_pos2, P_idx2, P_val.
func csr(st storage.Store, p string, n, m, nnz int, rng *rand.Rand) [][]float64 {
	rows := make([]map[int64]float64, n)
	for i := range rows {
		rows[i] = map[int64]float64{}
	}
	for e := 0; e < nnz; e++ {
		rows[rng.IntN(n)][int64(rng.IntN(m))] = float64(rng.IntN(9) + 1)
	}
	pos := []int64{0}
	var idx []int64
	var val []float64
	dense := make([][]float64, n)
	for i, r := range rows {
		dense[i] = make([]float64, m)
		keys := make([]int64, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
		for _, k := range keys {
			idx = append(idx, k)
			val = append(val, r[k])
			dense[i][k] = r[k]
		}
		pos = append(pos, int64(len(idx)))
	}
	st[p+"_len1"] = storage.IntScalar(int64(n))
	st[p+"_dim2"] = storage.IntScalar(int64(m))
	st[p+"_pos2"] = storage.IntArray(pos)
	st[p+"_idx2"] = storage.IntArray(idx)
	st[p+"_val"] = storage.RealArray(val)
	return dense
}

func randVec(n int, rng *rand.Rand) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(rng.IntN(7)) - 2
	}
	return v
}

// randFactor draws an n x m right-hand factor as the e2e benchmark's:
// density 1/32, values k/1024 for k in 1..2048.
func randFactor(rng *rand.Rand, n, m int64) *storage.COO {
	f := &storage.COO{Dims: []int64{n, m}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := range n {
		for j := range m {
			if rng.IntN(32) == 0 {
				f.Coords[0], f.Coords[1] = append(f.Coords[0], i), append(f.Coords[1], j)
				f.Vals = append(f.Vals, float64(1+rng.IntN(2048))/1024)
			}
		}
	}
	return f
}

// stored is a tensor and the format to build it in.
type stored struct {
	coo    *storage.COO
	format string
}

// storeOf builds every tensor in its format into one store.
func storeOf(t *testing.T, tensors map[string]stored) storage.Store {
	t.Helper()
	st := storage.Store{}
	for name, in := range tensors {
		f, err := storage.ParseFormat(in.format)
		if err != nil {
			t.Fatal(err)
		}
		s, err := storage.Build(name, in.coo, f)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(st, s)
	}
	return st
}

// nestsOff compiles with the older paths only, for the tests that count
// what their shape-specific loops did; it returns the undo.
func nestsOff() func() {
	closuresOnly = true
	return func() { closuresOnly = false }
}

// listed reports whether d lists an entry at key k.
func listed(d dict, k int64) bool {
	for p := range d.size() {
		if d.keyAt(p) == k {
			return true
		}
	}
	return false
}
