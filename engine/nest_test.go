package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/storel/storel/storage"
)

// events counts what the lowered loops report (nestEvent) while f runs.
func events(f func()) map[string]int {
	var mu sync.Mutex
	seen := map[string]int{}
	nestEvent = func(ev string) {
		mu.Lock()
		seen[ev]++
		mu.Unlock()
	}
	defer func() { nestEvent = nil }()
	f()
	return seen
}

// The plans the optimizer writes for the shapes: x loaded as a
// tensor (its reads guarded by its length), a dense matrix, MTTKRP with
// dense factors.
const (
	nestSpMV = `sum(<i, _> in 0:A_len1)
	  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1)))
	    A_val(p2) * (if 0 <= j && j < x_len1 then x_val(j)) }`
	nestSpMVPattern = `sum(<i, _> in 0:A_len1)
	  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) x_val(j) }`
	nestBATAX = `beta * (sum(<i1, _> in 0:A_len1)
	  let t18 = sum(<p1, k> in A_idx2(A_pos2(i1):A_pos2(i1 + 1)))
	    A_val(p1) * (if 0 <= k && k < x_len1 then x_val(k))
	  in sum(<p2, j> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @dense j -> A_val(p2) * t18 })`
	// BATAX as the optimizer writes it when the scale is a let of its own.
	nestBATAXScaleLet = `sum(<i1, _> in 0:A_len1)
	  let t4 = sum(<p1, k> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) A_val(p1) * x_val(k) in
	  let t22 = beta * t4 in
	  sum(<p2, j> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @dense j -> A_val(p2) * t22 }`
	nestRowValue = `sum(<i, _> in 0:A_len1)
	  let t = sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x_val(j) in
	  { @dense i -> beta * t + x_val(i) }`
	nestRowValueKeyed = `sum(<i, _> in 0:A_len1)
	  let t = sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x_val(j) in
	  { @dense A_idx2(25 * i) -> beta * t + x_val(i) }`
	nestRowValueIf = `sum(<i, _> in 0:A_len1)
	  { @dense i -> if 0 <= i && i < x_len1 then
	    sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x_val(j) }`
	nestDenseMV = `sum(<i, _> in 0:M_len1)
	  { @dense i -> sum(<j, _> in 0:M_len2)
	    M_val(M_len2 * i + j) * (if 0 <= j && j < x_len1 then x_val(j)) }`
	nestMTTKRP = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    if 0 <= k && k < C_len1 then
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        if 0 <= l && l < D_len2 then
	          let t1 = B_val(p3) in
	          sum(<j, _> in 0:C_len2)
	            { @dense j -> if 0 <= j && j < D_len1 then
	              t1 * (C_val(k * C_len2 + j) * D_val(D_len2 * j + l)) } }`
)

func denseStore(st storage.Store, p string, rows, cols int, rng *rand.Rand) {
	st[p+"_len1"] = storage.IntScalar(int64(rows))
	st[p+"_len2"] = storage.IntScalar(int64(cols))
	st[p+"_val"] = storage.RealArray(randVec(rows*cols, rng))
}

func vecStore(st storage.Store, p string, n int, rng *rand.Rand) {
	st[p+"_len1"] = storage.IntScalar(int64(n))
	st[p+"_val"] = storage.RealArray(randVec(n, rng))
}

// TestNestKernels runs the shapes through the loop-nest IR at 1
// and 3 threads against the interpreter, and checks that the facts
// discharged the bounds guards and that short rows ran in position space.
func TestNestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	n, m := 300, 200
	a := randCSR(n, m, 7*n, rng)
	for _, tc := range []struct {
		name, plan string
		xlen       int // x's length: shorter than A's columns, the guard filters
		want       []string
	}{
		{"SpMV", nestSpMV, m, []string{"discharged", "flat", "dot"}},
		{"SpMV, x shorter", nestSpMV, m / 2, []string{"flat", "fallback"}},
		{"SpMV of a pattern", nestSpMVPattern, m, []string{"flat", "dot"}},
		{"SpMV of a pattern, x shorter", nestSpMVPattern, m / 2, []string{"flat", "fallback"}},
		{"BATAX", nestBATAX, m, []string{"discharged", "flat", "dot", "scatter", "dot-scatter"}},
		{"BATAX, x shorter", nestBATAX, m / 3, []string{"flat", "fallback", "scatter"}},
		{"BATAX, the scale a let of its own", nestBATAXScaleLet, m, []string{"flat", "dot-scatter"}},
		{"dense MV", nestDenseMV, m, []string{"range dot"}},
		// A transpose's row sums (a CSC matrix's, or SumMMM's B in
		// CSC): each entry's value alone scattered at its key.
		{"column sums by a scatter", `sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(p) }`,
			m, []string{"flat", "scatter"}},
		// Rows whose terms add into the outer loop's own scalar: one
		// segmented dot over the block's positions.
		{"a dot into a scalar", `sum(<i, _> in 0:A_len1) sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * x_val(j)`,
			m, []string{"flat", "dot"}},
		// A row's let, or a second sum, as a factor of a row's terms:
		// applied to the rows' sums in batches.
		{"a row's let times its terms", strings.ReplaceAll(planRowSumLet, "B_", "A_"), m, []string{"flat", "post"}},
		{"a product of two sums", strings.ReplaceAll(planSumMMM, "B_", "A_"), m, []string{"flat", "post"}},
		{"dense MV, x shorter", nestDenseMV, m - 7, []string{"fallback"}},
		// A row's value computed from its let without a loop: over the
		// rows in batches, at the row's key in place or at keys of its
		// own; a batch that fails runs row by row, key then value, so
		// the first error in row order is the interpreter's.
		{"a row's value from its let", nestRowValue, n, []string{"flat", "values"}},
		{"a row's value from its let, x shorter", nestRowValue, m, []string{"flat", "values", "fallback"}},
		{"a row's value at a key of its own", nestRowValueKeyed, n, []string{"flat", "values"}},
		{"a row's key fails before its value", nestRowValueKeyed, 100, []string{"flat", "fallback"}},
		// A test inside a row's value (a hash row looked up by key reads
		// so) guards the row: the rows still run in position space.
		{"a row's value under a test", nestRowValueIf, n, []string{"flat", "dot"}},
		{"a row's value under a test some rows fail", nestRowValueIf, n - 50, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{"beta": storage.RealScalar(1.5)}
			a.store(st, "A")
			vecStore(st, "x", tc.xlen, rng)
			denseStore(st, "M", n, m, rng)
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			for _, ev := range tc.want {
				if seen[ev] == 0 {
					t.Errorf("no %q event; saw %v", ev, seen)
				}
			}
			if closed := events(func() {
				defer nestsOff()()
				agree(t, e, st)
			}); len(closed) > 0 {
				t.Errorf("the older paths reported nest events %v", closed)
			}
		})
	}
	t.Run("MTTKRP dense factors", func(t *testing.T) {
		b := randCSF(40, 30, 50, 900, rng)
		st := storage.Store{}
		b.store(st, "B")
		denseStore(st, "C", 30, 16, rng)
		denseStore(st, "D", 16, 50, rng)
		e := parse(t, nestMTTKRP, st)
		if seen := events(func() { agree(t, e, st) }); seen["lifted"] == 0 {
			t.Errorf("MTTKRP: %v; want the rank's keys as lanes", seen)
		}
		// Per j, as a failed run of lanes goes: the guards discharged
		// and the fibers of a row's level-2 entries in position space.
		sameBitsPerJ(t, e, st, []string{"discharged", "flat", "up"})
		// A factor narrower than B's keys: the guards filter.
		denseStore(st, "C", 20, 16, rng)
		agree(t, e, st)
	})
}

// TestNestErrors: a read past an array's end inside a vectorized loop is
// the interpreter's error, not a panic or a zero.
func TestNestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	a := randCSR(100, 80, 600, rng)
	st := storage.Store{}
	a.store(st, "A")
	vecStore(st, "x", 40, rng)
	for _, plan := range []string{
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x_val(j) }`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) { @dense j -> A_val(p) * x_val(i) }`,
	} {
		e := parse(t, plan, st)
		for _, threads := range []int{1, 3} {
			if _, err := runEngine(e, st, threads); err == nil {
				t.Errorf("threads=%d: %s ran past x_val without an error", threads, plan)
			}
		}
		agree(t, e, st)
	}
}

// TestNestScatterCOO: a scatter into a dense row by a key read per entry
// (SpMV over COO) sums each run of equal keys and fuses a gathered
// factor, whether the keys come in rows, shuffled, or past the row's
// current end, with the interpreter's result.
func TestNestScatterCOO(t *testing.T) {
	const plan = `sum(<p1, i1> in A_idx1(A_pos1(0):A_pos1(1)))
	  { @dense i1 -> A_val(p1) * x_val(A_idx2(p1)) }`
	rng := rand.New(rand.NewPCG(29, 1))
	n, m := 300, 200
	a := randCSR(n, m, 7*n, rng)
	var rows []int64
	for i := range n {
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			rows = append(rows, int64(i))
		}
	}
	cols := append([]int64(nil), a.idx...)
	vals := append([]float64(nil), a.val...)
	for _, order := range []string{"rows", "shuffled", "descending"} {
		t.Run(order, func(t *testing.T) {
			switch order {
			case "shuffled":
				rng.Shuffle(len(rows), func(x, y int) {
					rows[x], rows[y] = rows[y], rows[x]
					cols[x], cols[y] = cols[y], cols[x]
					vals[x], vals[y] = vals[y], vals[x]
				})
			case "descending":
				slices.Reverse(rows)
				slices.Reverse(cols)
				slices.Reverse(vals)
			}
			st := storage.Store{
				"A_pos1": storage.IntArray([]int64{0, int64(len(rows))}),
				"A_idx1": storage.IntArray(rows),
				"A_idx2": storage.IntArray(cols),
				"A_val":  storage.RealArray(vals),
			}
			vecStore(st, "x", m, rng)
			e := parse(t, plan, st)
			// x's length bounds every column: the facts check the reads.
			if seen := events(func() { agree(t, e, st) }); seen["gathered scatter"] == 0 || seen["gather fits"] == 0 {
				t.Errorf("want a gathered scatter whose reads the facts check; saw %v", seen)
			}
		})
	}
	// BATAX over COO's second pass: the gathered factor a vector the plan
	// built, read at each entry's row; and one shorter than the rows.
	for _, tc := range []struct {
		name, let string
		gathered  bool
	}{
		{"a built vector", `sum(<p1, i1> in A_idx1(A_pos1(0):A_pos1(1))) { @dense i1 -> A_val(p1) }`, true},
		{"a built vector shorter than the rows", `{ @dense 3 -> 2.0 }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{
				"A_pos1": storage.IntArray([]int64{0, int64(len(rows))}),
				"A_idx1": storage.IntArray(rows),
				"A_idx2": storage.IntArray(cols),
				"A_val":  storage.RealArray(vals),
			}
			e := parse(t, "let t1 = "+tc.let+` in
			  sum(<p2, i2> in A_idx1(A_pos1(0):A_pos1(1))) { @dense A_idx2(p2) -> A_val(p2) * t1(i2) }`, st)
			seen := events(func() { agree(t, e, st) })
			if tc.gathered && seen["gathered scatter"] == 0 {
				t.Errorf("no gathered scatter; saw %v", seen)
			}
		})
	}
	t.Run("x shorter", func(t *testing.T) {
		st := storage.Store{
			"A_pos1": storage.IntArray([]int64{0, int64(len(rows))}),
			"A_idx1": storage.IntArray(rows),
			"A_idx2": storage.IntArray(cols),
			"A_val":  storage.RealArray(vals),
		}
		vecStore(st, "x", m/2, rng)
		if seen := events(func() { agree(t, parse(t, plan, st), st) }); seen["gather fits"] > 0 {
			t.Errorf("the facts passed reads past x's end; saw %v", seen)
		}
	})
}

// TestScatterRuns: keys in runs and keys that change at every entry give
// the bits of one add per value in order, and a key outside the row
// stops the scatter there.
func TestScatterRuns(t *testing.T) {
	for _, keys := range [][]int64{
		{2, 2, 2, 0, 1, 1, 2, 5, 1},                         // a few repeats: a store per value
		{2, 2, 2, 2, 0, 0, 0, 1, 1, 1, 1, 2, 2, 5, 1, 1, 1}, // in runs
	} {
		stop := slices.Index(keys, 5)
		vals := make([]float64, len(keys))
		idx := make([]int64, len(keys))
		for l := range vals {
			vals[l] = []float64{0.1, 0.2, 0.3, 1e16, 1, -1e16, 0.7}[l%7]
			idx[l] = int64(l % 3)
		}
		src := []float64{1, 2, 3}
		want, wantP := make([]float64, 3), make([]float64, 3)
		for l, k := range keys[:stop] {
			want[k] += vals[l]
			wantP[k] += vals[l] * src[idx[l]]
		}
		got := make([]float64, 3)
		if q := scatterRuns(got, keys, vals); q != stop || !slices.Equal(got, want) {
			t.Errorf("scatterRuns(%v): %d %v; want %d %v", keys, q, got, stop, want)
		}
		got = make([]float64, 3)
		if q := scatterProductRuns(got, keys, vals, src, idx); q != stop || !slices.Equal(got, wantP) {
			t.Errorf("scatterProductRuns(%v): %d %v; want %d %v", keys, q, got, stop, wantP)
		}
	}
}

// TestNestTwoLevelScatter: a scatter into a two-level result by keys read
// per entry (TTV over COO) runs in the loop-nest IR, each run of equal
// outer keys into its row, with the interpreter's result whatever the
// order of the entries, for real and int values, and with the
// interpreter's error when a read leaves its array.
func TestNestTwoLevelScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	const nnz = 3000
	var is, js, ks []int64
	var vals []float64
	for range nnz {
		is = append(is, int64(rng.IntN(40)))
		js = append(js, int64(rng.IntN(30)))
		ks = append(ks, int64(rng.IntN(20)))
		vals = append(vals, float64(rng.IntN(9)+1))
	}
	sorted := func() {
		ord := make([]int, nnz)
		for p := range ord {
			ord[p] = p
		}
		slices.SortFunc(ord, func(a, b int) int {
			if is[a] != is[b] {
				return int(is[a] - is[b])
			}
			return int(js[a] - js[b])
		})
		perm := func(x []int64) []int64 {
			y := make([]int64, nnz)
			for p, q := range ord {
				y[p] = x[q]
			}
			return y
		}
		y := make([]float64, nnz)
		for p, q := range ord {
			y[p] = vals[q]
		}
		is, js, ks, vals = perm(is), perm(js), perm(ks), y
	}
	for _, tc := range []struct{ name, plan string }{
		{"real", `sum(<p1, i1> in T_idx1(T_pos1(0):T_pos1(1)))
		  { @dense i1 -> { @dense T_idx2(p1) -> T_val(p1) * v_val(T_idx3(p1)) } }`},
		{"int", `sum(<p1, i1> in T_idx1(T_pos1(0):T_pos1(1)))
		  { @dense i1 -> { @dense T_idx2(p1) -> T_idx3(p1) + 1 } }`},
		{"hash rows", `sum(<p1, i1> in T_idx1(T_pos1(0):T_pos1(1)))
		  { @dense i1 -> { @hash T_idx2(p1) -> T_val(p1) * v_val(T_idx3(p1)) } }`},
	} {
		for _, order := range []string{"shuffled", "sorted"} {
			if order == "sorted" {
				sorted()
			}
			for _, vlen := range []int{20, 15} {
				st := storage.Store{
					"T_pos1": storage.IntArray([]int64{0, nnz}),
					"T_idx1": storage.IntArray(is),
					"T_idx2": storage.IntArray(js),
					"T_idx3": storage.IntArray(ks),
					"T_val":  storage.RealArray(vals),
				}
				vecStore(st, "v", vlen, rng)
				e := parse(t, tc.plan, st)
				k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				var ex strings.Builder
				k.Explain(&ex)
				if !strings.Contains(ex.String(), "loop sum(<p1, i1>") {
					t.Errorf("%s: not lowered by the loop-nest IR:\n%s", tc.name, ex.String())
				}
				agree(t, e, st)
			}
		}
	}
}

// TestNestFilteredRangeDot: SpMV over a user's ELL whose padding is
// marked by column -1 and skipped by an if runs in position space, the
// rows' sums by the filtered dot (wide rows) or by masked batches
// (narrow rows), with the interpreter's result; a guard that lets a read
// leave x gives the interpreter's error.
func TestNestFilteredRangeDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	const rows, cols = 200, 150
	ell := func(width int) storage.Store {
		st := storage.Store{"lo": storage.IntScalar(-1)}
		ellStore(st, rows, width, cols, rng)
		vecStore(st, "x", cols, rng)
		return st
	}
	plan := func(cond string) string {
		return `sum(<i1, _> in 0:R)
		  { @dense i1 -> sum(<s, _> in 0:W)
		    if ` + cond + ` then
		      E_val(W * i1 + s) * x_val(E_col(W * i1 + s)) }`
	}
	for _, tc := range []struct {
		name, cond string
		width      int
		want       string // the event that shows the rows' sums ran as a whole
	}{
		{"wide rows", "0 <= E_col(W * i1 + s)", 90, "filtered dot"},
		{"wide rows, bounds both sides", "E_col(W * i1 + s) >= 0 && E_col(W * i1 + s) < x_len1", 90, "filtered dot"},
		{"wide rows, x shorter", "0 <= E_col(W * i1 + s) && E_col(W * i1 + s) < 100", 90, "filtered dot"},
		{"narrow rows", "0 <= E_col(W * i1 + s)", 20, "filtered dot"},
		{"wide rows, padding read", "lo <= E_col(W * i1 + s)", 90, ""},
		{"narrow rows, padding read", "lo <= E_col(W * i1 + s)", 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := ell(tc.width)
			if tc.name == "wide rows, x shorter" {
				vecStore(st, "x", 100, rng)
			}
			e := parse(t, plan(tc.cond), st)
			seen := events(func() { agree(t, e, st) })
			if tc.want != "" && seen[tc.want] == 0 {
				t.Errorf("no %q event; saw %v", tc.want, seen)
			}
		})
	}
	// A guard on the row's own key (the lower triangle of a CSR
	// matrix): its failing lanes masked in position space.
	t.Run("lower triangle", func(t *testing.T) {
		st := storage.Store{}
		randCSR(rows, rows, 9*rows, rng).store(st, "A")
		vecStore(st, "x", rows, rng)
		// A gathered product, a sum of reads, and int counts.
		for _, v := range []string{"A_val(p2) * x_val(j)", "A_val(p2) + x_val(j)", "1"} {
			e := parse(t, `sum(<i, _> in 0:A_len1)
			  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1)))
			    if j <= i then `+v+` }`, st)
			if seen := events(func() { agree(t, e, st) }); seen["masked"] == 0 || seen["flat"] == 0 {
				t.Errorf("%s: want masked batches in position space; saw %v", v, seen)
			}
		}
	})
}

// TestUpRunGuardOnRowKey: a loop whose inner loop's rows of every
// iteration run as one entry (the "up" run) decides the inner loop's
// guards once per entry; a guard reading the outer loop's key or
// position (k6 < k1, p4 < k1) must keep the iterations apart, or every
// row would pass or fail with the first iteration's key. A guard on
// variables bound outside both still takes the one run.
func TestUpRunGuardOnRowKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(80, 158356))
	st := storage.Store{}
	randCSF(8, 6, 5, 120, rng).store(st, "A")
	inner := func(cond string) string {
		return `sum(<k1, _> in 0:9) { @dense k1 -> sum(<p4, k6> in A_idx1(A_pos1(0):A_pos1(1)))
			sum(<p5, _> in A_idx2(A_pos2(p4):A_pos2(p4 + 1))) if ` + cond + ` then
				sum(<p6, i8> in A_idx3(A_pos3(p5):A_pos3(p5 + 1))) A_val(p6) }`
	}
	for _, tc := range []struct {
		cond string
		up   bool
	}{
		{"k6 < k1", false},
		{"p4 < k1", false},
		{"k1 > 2", true},
	} {
		e := parse(t, inner(tc.cond), st)
		seen := events(func() { agree(t, e, st) })
		if (seen["up"] > 0) != tc.up {
			t.Errorf("%s: events %v, want one run over the rows %v", tc.cond, seen, tc.up)
		}
	}
}

// TestNestRowSums: a segment loop whose value is an array read at the
// position alone (a CSR matrix's row sums, SumMMM's column sums of a
// CSC A) runs its rows' sums as one call of the row-sum primitive, in
// the row dot's partial sums, into a dense row, a let or a scalar, with
// the interpreter's result; rows that leave the values array are the
// interpreter's error.
func TestNestRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	const rows = 300
	for _, tc := range []struct {
		name, plan string
		short      bool // A_val shorter than A_pos2 claims
	}{
		{"into a dense row", `sum(<i, _> in 0:A_len1)
		  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) }`, false},
		{"a let times a row", `sum(<i, _> in 0:A_len1)
		  let t = sum(<p2, _> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) in
		  sum(<p1, _> in B_idx2(B_pos2(i):B_pos2(i + 1))) B_val(p1) * t`, false},
		{"into a scalar", `sum(<i, _> in 0:A_len1)
		  sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2)`, false},
		{"values short: the interpreter's error", `sum(<i, _> in 0:A_len1)
		  { @dense i -> sum(<p2, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) }`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			a := randCSR(rows, 90, 20*rows, rng)
			a.store(st, "A")
			randCSR(rows, 40, 6*rows, rng).store(st, "B")
			if tc.short {
				st["A_val"] = storage.RealArray(a.val[:len(a.val)-5])
			}
			seen := events(func() { agree(t, parse(t, tc.plan, st), st) })
			if !tc.short && seen["row sums"] == 0 {
				t.Errorf("no row sums event; saw %v", seen)
			}
		})
	}
}
