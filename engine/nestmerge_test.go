package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Merges the itMerge iterator takes: a product of U's and V's rows by
// merges, the rows of V by a range's key; a body of sums and products
// that reads the key and an invariant; SDDMM with csr factors as the
// optimizer writes it (V's rows by the keys of S's rows); and rows of U
// against a range of keys (a lookup j:j+1 into a sorted row, as in
// MTTKRP with csr factors; a few keys around j; every key up to j).
var nestMergePlans = []struct{ plan string }{{`sum(<i, _> in 0:U_len1)
  { @dense i -> sum(<j, _> in 0:V_len1)
    { @dense j -> 2.0 * merge(<p1, p3, _> in <U_idx2(U_pos2(i):U_pos2(i + 1)), V_idx2(V_pos2(j):V_pos2(j + 1))>)
      V_val(p3) * U_val(p1) } }`}, {`sum(<i, _> in 0:U_len1)
  { @dense i -> sum(<j, _> in 0:V_len1)
    let t = w(j) in
    { @dense j -> t * (merge(<p1, p3, k> in <U_idx2(U_pos2(i):U_pos2(i + 1)), V_idx2(V_pos2(j):V_pos2(j + 1))>)
      -(U_val(p1) * (V_val(p3) - w(k)) + t)) } }`}, {`sum(<i, _> in 0:S_len1)
  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
    { @dense j -> S_val(p2) * (merge(<p1, p3, _> in <U_idx2(U_pos2(i):U_pos2(i + 1)), V_idx2(V_pos2(j):V_pos2(j + 1))>)
      U_val(p1) * V_val(p3)) } }`}, {`sum(<i, _> in 0:S_len1)
  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
    { @dense j -> S_val(p2) * merge(<p1, _, k> in <U_idx2(U_pos2(i):U_pos2(i + 1)), j:j + 1>)
      U_val(p1) * w(k) } }`}, {`sum(<i, _> in 0:S_len1)
  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
    { @dense j -> merge(<p1, r, _> in <U_idx2(U_pos2(i):U_pos2(i + 1)), j - 2:j + 2>)
      U_val(p1) - w(r) } }`}, {`sum(<i, _> in 0:S_len1)
  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
    { @dense j -> 3.0 * merge(<p1, _, k> in <U_idx2(U_pos2(i):U_pos2(i + 1)), 0:j + 1>)
      U_val(p1) * w(k) } }`}}

// mergeRows builds the CSR arrays of rows (sorted keys, possibly
// repeated) under P_len1, P_pos2, P_idx2, P_val.
func mergeRows(st storage.Store, p string, rows [][]int64, rng *rand.Rand) {
	pos := []int64{0}
	var idx []int64
	var val []float64
	for _, r := range rows {
		idx = append(idx, r...)
		for range r {
			val = append(val, float64(rng.IntN(19)-9)/4+rng.Float64()/8)
		}
		pos = append(pos, int64(len(idx)))
	}
	st[p+"_len1"] = storage.IntScalar(int64(len(rows)))
	st[p+"_pos2"] = storage.IntArray(pos)
	st[p+"_idx2"] = storage.IntArray(idx)
	st[p+"_val"] = storage.RealArray(val)
}

// mergeRowPair returns two sorted rows of keys below m: empty, disjoint,
// equal, one long and one short, or random with repeated keys.
func mergeRowPair(kind, m int, rng *rand.Rand) (a, b []int64) {
	some := func(n int) []int64 {
		r := make([]int64, n)
		for i := range r {
			r[i] = int64(rng.IntN(m))
		}
		slices.Sort(r)
		return r
	}
	switch kind {
	case 0: // one empty
		return some(rng.IntN(5)), nil
	case 1: // disjoint: even against odd keys
		for k := range int64(m) {
			if rng.IntN(2) == 0 {
				if k%2 == 0 {
					a = append(a, k)
				} else {
					b = append(b, k)
				}
			}
		}
		return a, b
	case 2: // equal
		a = slices.Compact(some(rng.IntN(m) + 1))
		return a, slices.Clone(a)
	case 3: // one long, one short (galloping)
		for k := range int64(m) {
			a = append(a, k)
		}
		b = slices.Compact(some(1 + rng.IntN(2)))
		if rng.IntN(2) == 0 {
			return b, a
		}
		return a, b
	}
	return some(rng.IntN(m)), some(rng.IntN(m)) // repeated keys pair run by run
}

// TestNestMerge runs the plans (through the itMerge iterator where it
// takes them) against the interpreter, bit for bit at 1 and 3 threads, on merges of every kind of
// row pair (rows longer than a batch among them), and on data that sends a
// merge to the closure path's merge: an unsorted row, bounds out of
// order, values shorter than the indices, keys past w.
func TestNestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	for pi, pc := range nestMergePlans {
		plan := pc.plan
		for trial := range 60 {
			n, m := 1+rng.IntN(6), 1+rng.IntN(40)
			if trial%10 == 9 {
				m = 3 * mbatch // runs longer than a batch
			}
			st := storage.Store{}
			us, vs := make([][]int64, n), make([][]int64, m)
			var srows [][]int64
			for i := range us {
				var s []int64
				for j := range int64(m) {
					if rng.IntN(3) == 0 {
						s = append(s, j)
						a, b := mergeRowPair(rng.IntN(5), m, rng)
						if us[i] == nil || rng.IntN(2) == 0 {
							us[i] = a
						}
						vs[j] = b
					}
				}
				srows = append(srows, s)
			}
			mergeRows(st, "S", srows, rng)
			mergeRows(st, "U", us, rng)
			mergeRows(st, "V", vs, rng)
			st["w"] = storage.RealArray(randVec(m, rng))
			bad := ""
			switch trial % 12 {
			case 1:
				bad = "an unsorted row of V"
				unsortOnce(st, "V_idx2")
			case 5:
				bad = "U's bounds out of order"
				swapBounds(st, "U_pos2", rng.IntN(n))
			case 7:
				bad = "V's values shorter than its indices"
				dropLast(st, "V_val")
			case 11:
				bad = "w shorter than the keys"
				st["w"] = storage.RealArray(randVec(m/2, rng))
			}
			e, x := explained(t, plan, st)
			if !strings.Contains(x, "iterator: merge") && !strings.Contains(x, "iterator: seek") || strings.Contains(x, "older path") {
				t.Fatalf("plan %d: not lowered with itMerge:\n%s", pi, x)
			}
			agree(t, e, st)
			sameBits(t, e, st, fmt.Sprintf("plan %d trial %d (%s)", pi, trial, bad))
		}
	}
}

// explained parses plan over st and returns it and its kernel's explain
// at 3 threads.
func explained(t *testing.T, plan string, st storage.Store) (*ir.Expr, string) {
	t.Helper()
	e := parse(t, plan, st)
	k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	return e, k.String()
}

// sameBits runs e on st at 1 and 3 threads and fails unless the engine
// and the interpreter both fail or give the same bits; it returns what
// the lowered loops reported (events).
func sameBits(t *testing.T, e *ir.Expr, st storage.Store, what string) map[string]int {
	t.Helper()
	want, werr := eval.Eval(e, st)
	seen := map[string]int{}
	for _, threads := range []int{1, 3} {
		var got value.Value
		var err error
		for ev, n := range events(func() { got, err = runEngine(e, st, threads) }) {
			seen[ev] += n
		}
		if (err != nil) != (werr != nil) {
			t.Fatalf("%s threads=%d: engine error %v, interpreter %v", what, threads, err, werr)
		}
		if werr == nil && !value.Equal(got, want, 0) {
			t.Fatalf("%s threads=%d: not the interpreter's bits\nengine:      %s\ninterpreter: %s",
				what, threads, value.Format(got), value.Format(want))
		}
	}
	return seen
}

// unsortOnce swaps the first two different neighbours of each int
// array named.
func unsortOnce(st storage.Store, names ...string) {
	for _, v := range names {
		idx := slices.Clone(st[v].(*storage.Array).I)
		for k := 1; k < len(idx); k++ {
			if idx[k] != idx[k-1] {
				idx[k], idx[k-1] = idx[k-1], idx[k]
				break
			}
		}
		st[v] = storage.IntArray(idx)
	}
}

// swapBounds swaps bounds r and r+1 of the position array named, where
// that puts them out of order.
func swapBounds(st storage.Store, name string, r int) {
	pos := slices.Clone(st[name].(*storage.Array).I)
	if pos[r+1] > pos[r] {
		pos[r], pos[r+1] = pos[r+1], pos[r]
	}
	st[name] = storage.IntArray(pos)
}

// dropLast drops the last value of each real array named.
func dropLast(st storage.Store, names ...string) {
	for _, v := range names {
		if a := st[v].(*storage.Array); a.Len() > 0 {
			st[v] = storage.RealArray(a.F[:a.Len()-1])
		}
	}
}

// TestPairsFill checks the intersection walk against the nested loops
// of merge's definition on random sorted rows with repeated keys, with
// buffers of 1 to 4 pairs (runs of equal keys cut between fills), and
// with a's seeks through its table (fixedTable) on every other row.
func TestPairsFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	for trial := range 1000 {
		m := 1 + rng.IntN(12)
		if trial%3 == 0 {
			m = 1 + rng.IntN(300)
		}
		a, b := mergeRowPair(trial%5, m, rng)
		var want [][3]int64
		for i, x := range a {
			for j, y := range b {
				if x == y {
					want = append(want, [3]int64{10 + int64(i), 20 + int64(j), x})
				}
			}
		}
		size := 1 + rng.IntN(4)
		p1, p2, keys := make([]int64, size), make([]int64, size), make([]int64, size)
		var got [][3]int64
		var ps pairs
		var ft fixedTable
		if trial%2 == 1 && len(a) > 0 {
			ps.ix, ps.tab = ft.of(a)
		}
		for n := ps.fill(a, b, 10, 20, p1, p2, keys); n > 0; n = ps.fill(a, b, 10, 20, p1, p2, keys) {
			for l := range n {
				got = append(got, [3]int64{p1[l], p2[l], keys[l]})
			}
		}
		if !slices.Equal(got, want) || ps.any != (len(want) > 0) {
			t.Fatalf("a %v, b %v, buffer %d: pairs %v, want %v", a, b, size, got, want)
		}
	}
}

// Plans whose merge pairs scatter rows of B into the result's row: MMM
// with A csr and B dcsr (B's row keys merged with A's row), the same
// with B coo (the runs of its row keys), and a factor on the left times
// a constant, a let the scatter does not use reading at the merge's key.
var mergeRowsPlans = []string{`sum(<i, _> in 0:S_len1)
  { @dense i -> merge(<r, p, _> in <B_idx1(0:B_n), S_idx2(S_pos2(i):S_pos2(i + 1))>)
    let t = S_val(p) in
    sum(<q, j> in B_idx2(B_pos2(r):B_pos2(r + 1))) { @dense j -> B_val(q) * t } }`, `sum(<i, _> in 0:S_len1)
  { @dense i -> merge(<p0, p2, _> in <runs(C_idx1(C_pos1(0):C_pos1(1))), S_idx2(S_pos2(i):S_pos2(i + 1))>)
    let t2 = S_val(p2) in
    sum(<p1, j> in C_idx2(p0:runend(C_idx1, p0, C_pos1(1)))) { @dense j -> C_val(p1) * t2 } }`, `sum(<i, _> in 0:S_len1)
  { @dense i -> merge(<r, p, k> in <B_idx1(0:B_n), S_idx2(S_pos2(i):S_pos2(i + 1))>)
    let u = w(k) in
    let t = S_val(p) * 2.5 in
    sum(<q, j> in B_idx2(B_pos2(r):B_pos2(r + 1))) { @dense j -> t * B_val(q) } }`}

// TestMergeRowsScatter runs the plans, lowered as merges whose pairs
// scatter rows (pairRows), against the interpreter, bit for bit at 1 and
// 3 threads, on random matrices (rows longer than a batch of pairs among
// them) and on data the batches do not take: bounds of B out of order,
// B's values shorter than its indices (a pair's window off: the pair
// through the closure path), S's values shorter than its indices, B's row
// keys or a row of S unsorted (the whole merge on the closure path: the
// rows of S are then not known sorted, segBounds.sorted), w shorter than
// the keys (a batch's factor failing).
func TestMergeRowsScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 29))
	for pi, plan := range mergeRowsPlans {
		scattered := 0
		for trial := range 40 {
			n, m, cols := 1+rng.IntN(8), 1+rng.IntN(30), 1+rng.IntN(20)
			if trial%10 == 9 {
				m = 2 * mbatch // a row of S meets more than a batch of B's rows
			}
			st := storage.Store{}
			csr(st, "S", n, m, n*m/2+1, rng)
			mergeRowsB(st, m, cols, rng)
			st["w"] = storage.RealArray(randVec(m, rng))
			bad := ""
			switch trial % 8 {
			case 1:
				bad = "B's bounds out of order"
				swapBounds(st, "B_pos2", rng.IntN(st["B_pos2"].(*storage.Array).Len()-1))
			case 2:
				bad = "a row of S unsorted"
				unsortOnce(st, "S_idx2")
			case 3:
				bad = "B's values shorter than its indices"
				dropLast(st, "B_val", "C_val")
			case 5:
				bad = "S's values shorter than its indices"
				dropLast(st, "S_val")
			case 6:
				bad = "B's row keys unsorted"
				unsortOnce(st, "B_idx1", "C_idx1")
			case 7:
				bad = "w shorter than the keys"
				st["w"] = storage.RealArray(randVec(m/2, rng))
			}
			e, x := explained(t, plan, st)
			if !strings.Contains(x, "iterator: merge") || !strings.Contains(x, "scattered into the row") || strings.Contains(x, "older path") {
				t.Fatalf("plan %d: the merge is not lowered as rows scattered:\n%s", pi, x)
			}
			seen := sameBits(t, e, st, fmt.Sprintf("plan %d trial %d (%s)", pi, trial, bad))
			scattered += seen["merge rows scatter"]
		}
		if scattered == 0 {
			t.Errorf("plan %d: no merge ran its rows scattered", pi)
		}
	}
}

// mergeRowsB stores a random m x cols matrix as dcsr (B_n, B_idx1,
// B_pos2, B_idx2, B_val: its nonempty rows) and as sorted coo (C_pos1,
// C_idx1, C_idx2, C_val).
func mergeRowsB(st storage.Store, m, cols int, rng *rand.Rand) {
	var rows, pos, idx, ridx []int64
	var val []float64
	pos = append(pos, 0)
	for r := range int64(m) {
		if rng.IntN(4) == 0 {
			continue
		}
		var row []int64
		for j := range int64(cols) {
			if rng.IntN(3) == 0 {
				row = append(row, j)
			}
		}
		if len(row) == 0 {
			continue
		}
		rows = append(rows, r)
		for _, j := range row {
			idx, ridx = append(idx, j), append(ridx, r)
			val = append(val, float64(rng.IntN(19)-9)/4+rng.Float64()/8)
		}
		pos = append(pos, int64(len(idx)))
	}
	st["B_n"] = storage.IntScalar(int64(len(rows)))
	st["B_idx1"] = storage.IntArray(rows)
	st["B_pos2"] = storage.IntArray(pos)
	st["B_idx2"] = storage.IntArray(idx)
	st["B_val"] = storage.RealArray(val)
	st["C_pos1"] = storage.IntArray([]int64{0, int64(len(idx))})
	st["C_idx1"] = storage.IntArray(ridx)
	st["C_idx2"] = storage.IntArray(slices.Clone(idx))
	st["C_val"] = storage.RealArray(slices.Clone(val))
}
