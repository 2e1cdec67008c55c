package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/storage"
)

// TestNestRows runs rows of nested results scattered by index-array keys
// (MMM, TTM) through the loop-nest IR (explain shows no older path) at 1
// and 3 threads against the interpreter: the leaf segments as one scatter call each, the loop above
// them vectorized over its positions, and, where a window is off or a
// factor's read leaves its array, the statements per entry that find the
// interpreter's error.
func TestNestRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	// The optimizer's MMM: A's value a let, k guarded against B's rows.
	const optMMM = `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < B_len1 then
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
        { @dense j -> B_val(p1) * t1 } }`
	// The nested form: the scale a product of two reads.
	const scaledMMM = `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
      { @dense j -> (A_val(p2) * x_val(k)) * B_val(p1) } }`
	for _, tc := range []struct {
		name, plan string
		n, m, k    int // A n x k, B k x m
		mutate     func(st storage.Store)
		want       []string
	}{
		// Its rows leave sequential mode (seqrows.go): they are
		// scattered into, not appended in order.
		{"MMM", planMMM, 60, 40, 50, nil, []string{"rows scatter", "rows out of sequence", "rows views"}},
		// Its guard discharged by the facts: the windows and factors
		// are slices of A's arrays.
		{"MMM, the optimizer's plan", optMMM, 60, 40, 50, nil, []string{"rows scatter", "rows views"}},
		{"MMM, a scaled row", scaledMMM, 60, 40, 50, nil, []string{"rows scatter"}},
		// Wide rows (more keys than the scatter marks): keys listed.
		{"MMM, wide rows", optMMM, 30, 3000, 40, nil, []string{"rows scatter"}},
		// A's columns past B's rows: the guard fails in some lanes.
		{"MMM, A wider than B", optMMM, 60, 40, 50, func(st storage.Store) {
			st["B_len1"] = storage.IntScalar(30)
		}, []string{"rows scatter"}},
		// An int factor (a pattern or integer matrix).
		{"MMM, int values of A", planMMM, 60, 40, 50, func(st storage.Store) {
			v := st["A_val"].(*storage.Array)
			ints := make([]int64, v.Len())
			for p := range ints {
				ints[p] = int64(p%5) - 2
			}
			st["A_val"] = storage.IntArray(ints)
		}, []string{"rows scatter"}},
		// x shorter than A's columns: the batch's read fails, the
		// statements find the error.
		{"MMM, a factor's read fails", scaledMMM, 60, 40, 50, func(st storage.Store) {
			vecStore(st, "x", 10, rng)
		}, nil},
		// A's values shorter than its index array: a factor's slice
		// leaves its array, the statements find the error.
		{"MMM, A's values short", planMMM, 60, 40, 50, func(st storage.Store) {
			v := st["A_val"].(*storage.Array)
			st["A_val"] = storage.RealArray(v.F[:v.Len()-3])
		}, nil},
		// B's positions past its index array: a window is off.
		{"MMM, a window past B", planMMM, 60, 40, 50, func(st storage.Store) {
			pos := append([]int64(nil), st["B_pos2"].(*storage.Array).I...)
			pos[len(pos)-1] += 5
			st["B_pos2"] = storage.IntArray(pos)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			randCSR(tc.n, tc.k, 6*tc.n, rng).store(st, "A")
			randCSR(tc.k, tc.m, 5*tc.k, rng).store(st, "B")
			vecStore(st, "x", tc.k, rng)
			if tc.mutate != nil {
				tc.mutate(st)
			}
			e := parse(t, tc.plan, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			if x := k.String(); strings.Contains(x, "older path") || !strings.Contains(x, "scattered into the row") {
				t.Errorf("explain:\n%s", x)
			}
			seen := events(func() { agree(t, e, st) })
			for _, ev := range tc.want {
				if seen[ev] == 0 {
					t.Errorf("no %q event; saw %v", ev, seen)
				}
			}
		})
	}
	// TTM's fibers hold a few entries each: lane by lane, or in
	// batches where longer; a window off runs through the statements.
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("TTM, a window off %v", off), func(t *testing.T) {
			st := storage.Store{}
			randCSF(12, 10, 30, 500, rng).store(st, "A")
			randCSR(30, 20, 150, rng).store(st, "B")
			if off {
				pos := append([]int64(nil), st["B_pos2"].(*storage.Array).I...)
				pos[len(pos)-1] += 5
				st["B_pos2"] = storage.IntArray(pos)
			}
			e := parse(t, planTTM, st)
			if seen := events(func() { agree(t, e, st) }); seen["rows lanes"] == 0 || !off && seen["rows scatter"] == 0 {
				t.Errorf("TTM: %v; want its rows scattered lane by lane and in batches", seen)
			}
		})
	}
}

// TestAppendKid builds the transposed copy of a CSC matrix (MMM with B
// by columns, the optimizer's plan): row c takes key j from column j,
// column after column, and is appended to where it is, never reopened
// in the workspace (which moves its whole list back: quadratic in the
// row's length). Zeros at new keys add no entry.
func TestAppendKid(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	st := storage.Store{}
	randCSR(40, 300, 400, rng).store(st, "A")
	// B by columns: 300 rows (k), 60 columns; its rows a few keys each,
	// kept as lists (a row at least half full gets a dense slice).
	randCSR(60, 300, 1500, rng).store(st, "B")
	// moved counts the entries reopened rows move back, in one run on
	// one thread (the merge of workers' private results reopens each
	// row once per worker, which is linear).
	moved := func(plan string) int {
		e := parse(t, plan, st)
		agree(t, e, st)
		n := 0
		defer func() { reopened = nil }()
		reopened = func(entries int) { n += entries }
		if _, err := runEngine(e, st, 1); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := moved(planMMMcsc); n != 0 {
		t.Errorf("closed rows reopened, moving %d entries back into the workspace", n)
	}
	// A copy with zeros: {c -> {j -> v}} where v is 0 for some entries.
	const copyZeros = `sum(<j1, _> in 0:B_len1)
  sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
    { @dense c1 -> { @dense j1 -> (p3 % 3) * 1.5 } }`
	if n := moved(copyZeros); n != 0 {
		t.Errorf("closed rows reopened, moving %d entries", n)
	}
}

// TestListRowsWalked: the transposed copy of a CSC matrix with rows
// kept as sorted lists (an unannotated inner level), walked per entry of
// A, hands each row's keys and values over as the list's own slices,
// zeros dropped first, not entry by entry through its methods; the
// product agrees with the interpreter. Both value types, scattered as
// compressed rows (dictrows.go): positions (ints), B's values read at
// them, and B's values (reals, some zero).
func TestListRowsWalked(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	st := storage.Store{}
	randCSR(40, 300, 400, rng).store(st, "A")
	randCSR(60, 300, 1500, rng).store(st, "B")
	const (
		positions = `let t1 =
  sum(<j1, _> in 0:B_len1)
    sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
      { @dense c1 -> { j1 -> p3 + 1 } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t14 = A_val(p2) in
    sum(<i3, r1> in t1(k)) { @dense i3 -> B_val(r1 - 1) * t14 } }`
		values = `let t1 =
  sum(<j1, _> in 0:B_len1)
    sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
      { @dense c1 -> { j1 -> (p3 % 3) * B_val(p3) } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t14 = A_val(p2) in
    sum(<i3, b> in t1(k)) { @dense i3 -> b * t14 } }`
	)
	for name, plan := range map[string]string{"positions": positions, "values": values} {
		t.Run(name, func(t *testing.T) {
			e := parse(t, plan, st)
			seen := events(func() { agree(t, e, st) })
			if seen["dict rows scatter"] == 0 || seen["one by one"] != 0 {
				t.Errorf("%v; want the copy's rows scattered from their own slices, none entry by entry", seen)
			}
		})
	}
}

// BenchmarkTransposedCopy builds the copy MMM makes of a CSC matrix
// (row c takes key j from column j, column after column): short rows (a
// copter2-sized factor of 250 columns, 8 entries a row) and long ones
// (100 entries a row).
func BenchmarkTransposedCopy(b *testing.B) {
	const copyPlan = `sum(<j1, _> in 0:B_len1)
  sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
    { @dense c1 -> { @dense j1 -> p3 + 1 } }`
	for _, sh := range []struct{ cols, rows, nnz int }{{250, 55476, 440000}, {4000, 2000, 200000}} {
		rng := rand.New(rand.NewPCG(1, 2))
		st := storage.Store{}
		randCSR(sh.cols, sh.rows, sh.nnz, rng).store(st, "B")
		e := parse(b, copyPlan, st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx%d", sh.rows, sh.cols), func(b *testing.B) {
			for b.Loop() {
				if _, err := k.Run(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSharedRows: a split loop keyed by its own key whose rows are
// scattered into (MMM over A's rows as a range: csr, B by hash, the
// nested and scaled-row plans) writes every row into one shared result,
// a workspace per worker, and agrees with the interpreter at 1 and 3
// threads. A dcsr A's rows are keys read from an index array: shared
// where they increase, private results merged where a key repeats.
func TestSharedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 4))
	const scaledMMM = `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
      { @dense j -> (A_val(p2) * x_val(k)) * B_val(p1) } }`
	check := func(t *testing.T, e *ir.Expr, st storage.Store, shared bool) {
		k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
		if err != nil {
			t.Fatal(err)
		}
		x := k.String()
		if strings.Contains(x, "disjoint rows of one shared result") != shared {
			t.Errorf("explain at 3 threads (want shared rows %v):\n%s", shared, x)
		}
		if seen := events(func() { agree(t, e, st) }); (seen["shared rows"] > 0) != shared {
			t.Errorf("want shared rows %v; saw %v", shared, seen)
		}
	}
	for _, f := range []struct {
		a, b   string
		shared bool
	}{
		{"csr", "csr", true},
		{"dcsr", "csr", true},
		{"csr", "hash", true},
	} {
		t.Run(fmt.Sprintf("optimized A %s, B %s", f.a, f.b), func(t *testing.T) {
			naive, st := paperProgram(t, "mmm", map[string][]int64{"A": {90, 60}, "B": {60, 40}}, map[string]string{"A": f.a, "B": f.b}, 900, rng)
			res, err := opt.Optimize(naive, st, planLimits)
			if err != nil {
				t.Fatal(err)
			}
			check(t, res.Plan, st, f.shared)
		})
	}
	// A's rows by the keys of a compressed level, each key twice.
	const keyedMMM = `sum(<p1, i> in A_idx1(A_pos1(0):A_pos1(1)))
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(p1):A_pos2(p1 + 1)))
    let t1 = A_val(p2) in
    sum(<p3, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
      { @dense j -> B_val(p3) * t1 } }`
	for _, repeat := range []bool{false, true} {
		t.Run(fmt.Sprintf("keys of a level, repeated %v", repeat), func(t *testing.T) {
			st := storage.Store{}
			randCSR(90, 60, 900, rng).store(st, "A")
			randCSR(60, 40, 500, rng).store(st, "B")
			keys := make([]int64, 90)
			for p := range keys {
				keys[p] = 3 * int64(p)
				if repeat {
					keys[p] = int64(p / 2)
				}
			}
			st["A_pos1"] = storage.IntArray([]int64{0, 90})
			st["A_idx1"] = storage.IntArray(keys)
			e := parse(t, keyedMMM, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
			if err != nil {
				t.Fatal(err)
			}
			if x := k.String(); !strings.Contains(x, "where the keys read increase") {
				t.Errorf("explain at 3 threads:\n%s", x)
			}
			if seen := events(func() { agree(t, e, st) }); (seen["shared rows"] > 0) == repeat {
				t.Errorf("keys repeated %v: saw %v", repeat, seen)
			}
		})
	}
	for name, plan := range map[string]string{"nested": planMMM, "scaled row": scaledMMM} {
		t.Run(name, func(t *testing.T) {
			st := storage.Store{}
			randCSR(90, 60, 900, rng).store(st, "A")
			randCSR(60, 40, 500, rng).store(st, "B")
			vecStore(st, "x", 60, rng)
			check(t, parse(t, plan, st), st, true)
		})
	}
}

// TestAddRows pins the fused loop of a batch of scattered rows: every
// lane's window added at its keys, and, at the first lane whose window
// is off or one of whose keys falls outside the row, a stop that reports
// the lanes done, that lane's keys before the outside one added.
func TestAddRows(t *testing.T) {
	// Windows: 0 is keys 0, 3; 1 is 1, 2, 3; 2 is empty; 3 is 1, 9;
	// 4 is past pa. Lane 1's factor is 3, the others' 1.
	pa := []int64{0, 2, 5, 5, 7}
	idx := []int64{0, 3, 1, 2, 3, 1, 9}
	x := []float64{1, 2, 3, 4, 5, 6, 7}
	for _, tc := range []struct {
		name string
		ws   []int64
		done int
		want []float64 // the row after the call, 4 keys
	}{
		{"all lanes", []int64{0, 2, 1}, 3, []float64{1, 3, 4, 2 + 5}},
		{"an empty window", []int64{2, 0}, 2, []float64{3, 0, 0, 6}},
		{"a window past pa", []int64{0, 4, 1}, 1, []float64{1, 0, 0, 2}},
		{"a negative window", []int64{0, -1}, 1, []float64{1, 0, 0, 2}},
		// Lane 1's key 1 is added, its key 9 is outside the row.
		{"a key outside the row", []int64{0, 3, 1}, 1, []float64{1, 3 * 6, 0, 2}},
	} {
		ts := make([]float64, len(tc.ws))
		for q := range ts {
			ts[q] = 1
			if q == 1 {
				ts[q] = 3
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, done int, out []float64) {
				t.Helper()
				if done != tc.done || !slices.Equal(out, tc.want) {
					t.Errorf("%s: %d lanes done, row %v; want %d, %v", what, done, out, tc.done, tc.want)
				}
			}
			out := make([]float64, 4)
			check("addRows", addRows(out, nil, pa, idx, x, tc.ws, ts), out)
			out, bm := make([]float64, 4), make([]uint64, 1)
			done := addRows(out, bm, pa, idx, x, tc.ws, ts)
			check("addRows marking", done, out)
			var marks uint64
			for j, v := range out {
				if v != 0 {
					marks |= 1 << j
				}
			}
			if bm[0] != marks {
				t.Errorf("addRows marked %b; want %b", bm[0], marks)
			}
			ints := []int64{1, 2, 3, 4, 5, 6, 7}
			out = make([]float64, 4)
			check("addRows of ints", addRows(out, nil, pa, idx, ints, tc.ws, ts), out)
		})
	}
	// A window past idx: hi beyond the index array.
	if n := addRows(make([]float64, 4), nil, []int64{0, 9}, idx, x, []int64{0}, []float64{1}); n != 0 {
		t.Errorf("a window past idx: %d lanes done; want 0", n)
	}
}

// TestNestRowsNegativeKey runs MMM with a key of A below zero: its
// window is off the position array B_pos2 (no guard tests it), in
// batches and lane by lane, and the run fails as the interpreter's does.
func TestNestRowsNegativeKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	for _, tc := range []struct {
		perRow int
		want   string
	}{{1, "rows lanes"}, {40, "rows scatter"}} {
		t.Run(fmt.Sprintf("%d entries a row", tc.perRow), func(t *testing.T) {
			st := storage.Store{}
			a := randCSR(60, 50, 60*tc.perRow, rng)
			a.idx[len(a.idx)/2] = -1
			a.store(st, "A")
			randCSR(50, 40, 250, rng).store(st, "B")
			e := parse(t, planMMM, st)
			if seen := events(func() { agree(t, e, st) }); seen[tc.want] == 0 {
				t.Errorf("no %q event; saw %v", tc.want, seen)
			}
		})
	}
}

// TestNestRowsWidening runs MMM whose rows reach ever greater keys: a
// row carved at the width of the rows before it (a streak of dense rows)
// or a workspace row meets keys past its end in the middle of a batch;
// the lanes before are added by the batch's loop, the row grows, and the
// batch goes on. At 1 and 3 threads against the interpreter.
func TestNestRowsWidening(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 9))
	for _, dense := range []bool{true, false} {
		t.Run(fmt.Sprintf("dense rows %v", dense), func(t *testing.T) {
			const n = 80
			// B's row k holds keys below 4+3k: every key when dense,
			// one in five otherwise.
			b := &sparseCSR{n: n, m: 4 + 3*n, pos: []int64{0}}
			for k := 0; k < n; k++ {
				for j := 0; j < 4+3*k; j++ {
					if dense || rng.IntN(5) == 0 {
						b.idx = append(b.idx, int64(j))
						b.val = append(b.val, float64(rng.IntN(5)+1))
					}
				}
				b.pos = append(b.pos, int64(len(b.idx)))
			}
			// A's row i reads B's rows i-40..i: each row of the
			// product reaches past the one before it, from lanes
			// (the rows' entries) deep in a batch.
			a := &sparseCSR{n: n, m: n, pos: []int64{0}}
			for i := 0; i < n; i++ {
				for k := max(0, i-40); k <= i; k++ {
					a.idx = append(a.idx, int64(k))
					a.val = append(a.val, float64(rng.IntN(3)+1))
				}
				a.pos = append(a.pos, int64(len(a.idx)))
			}
			st := storage.Store{}
			a.store(st, "A")
			b.store(st, "B")
			e := parse(t, planMMM, st)
			if seen := events(func() { agree(t, e, st) }); seen["rows scatter"] == 0 {
				t.Errorf("no rows scatter; saw %v", seen)
			}
		})
	}
}
