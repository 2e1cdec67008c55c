package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Plans of rows with a scalar let (rowlet.go), and whether the fast path
// must take them.
var rowLetPlans = []struct {
	name, plan string
	fast       bool
}{
	{"BATAX as the optimizer writes it", `sum(<i1, _> in 0:A_len1)
  let t5 = beta * (sum(<p1, k> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) A_val(p1) * x(k)) in
  sum(<p2, j> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @dense j -> A_val(p2) * t5 }`, true},
	{"t first, the dot of one matrix scattering another", `sum(<_, i> in 0:A_len1)
  let t = sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k) in
  sum(<q, j> in B_idx2(B_pos2(i):B_pos2(i + 1))) { @dense j -> t * B_val(q) }`, true},
	{"an invariant on both sides", `sum(<i, _> in 0:A_len1)
  let t = (beta * (sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k))) * 3.0 in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(q) * t }`, true},
	{"scaled scatter: the general row", `sum(<i, _> in 0:A_len1)
  let t = sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(k) in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> beta * A_val(q) * t }`, false},
	{"a let of the row number: the general row", `sum(<i, _> in 0:A_len1)
  let t = x(i) * beta in
  sum(<q, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(q) * t }`, false},
}

// TestRowLet checks the rows with a scalar let against the interpreter
// (1 and 3 threads), and the fast path against the general row bit for
// bit, with real and int matrices, and on data that makes a row fail.
func TestRowLet(t *testing.T) {
	defer func(h func(*rowLet)) { rowLetCompiled = h }(rowLetCompiled)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, pc := range rowLetPlans {
		for trial := range 24 {
			n, m := 1+rng.IntN([]int{30, 300}[trial%2]), 1+rng.IntN(30) // 300: rows in several blocks
			st := storage.Store{"beta": storage.RealScalar(float64(rng.IntN(5)) - 1.5)}
			csr(st, "A", n, m, rng.IntN(4*n+1), rng)
			csr(st, "B", n, m, rng.IntN(4*n+1), rng)
			st["x"] = storage.RealArray(randVec(max(n, m), rng))
			if trial%3 == 1 {
				// A pattern matrix's values are ints.
				st["A_val"] = intsOf(st["A_val"])
				st["B_val"] = intsOf(st["B_val"])
			}
			switch trial % 8 {
			case 5: // x too short: a read outside x in some row
				x := st["x"].(*storage.Array).F
				st["x"] = storage.RealArray(x[:rng.IntN(len(x))])
			case 6: // a row's bounds out of order
				pos := slices.Clone(st["A_pos2"].(*storage.Array).I)
				if r := rng.IntN(n); pos[r+1] > pos[r] {
					pos[r], pos[r+1] = pos[r+1], pos[r]
				}
				st["A_pos2"] = storage.IntArray(pos)
			case 7: // values shorter than the indices
				if v := st["A_val"].(*storage.Array); v.Len() > 0 {
					if v.I != nil {
						st["A_val"] = storage.IntArray(v.I[:v.Len()-1])
					} else {
						st["A_val"] = storage.RealArray(v.F[:v.Len()-1])
					}
				}
			}
			e := parse(t, pc.plan, st)
			var fast []bool
			rowLetCompiled = func(rl *rowLet) { fast = append(fast, rl.dot != nil) }
			agree(t, e, st)
			if len(fast) == 0 || fast[0] != pc.fast {
				t.Fatalf("%s: fast path %v, want %v", pc.name, fast, pc.fast)
			}
			// The general row alone must give the same bits and errors.
			rowLetCompiled = func(rl *rowLet) { rl.dot = nil }
			want, werr := runEngine(e, st, 1)
			rowLetCompiled = nil
			for _, threads := range []int{1, 2} {
				got, err := runEngine(e, st, threads)
				if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("%s, threads=%d: error %v, the general row's %v", pc.name, threads, err, werr)
				}
				if threads == 1 && err == nil && !value.Equal(got, want, 0) {
					t.Fatalf("%s: fast path %s, general row %s", pc.name, value.Format(got), value.Format(want))
				}
			}
		}
	}
}

// intsOf turns a real array of whole numbers into an int array.
func intsOf(o storage.Object) *storage.Array {
	f := o.(*storage.Array).F
	v := make([]int64, len(f))
	for i, x := range f {
		v[i] = int64(x)
	}
	return storage.IntArray(v)
}
