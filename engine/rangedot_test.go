package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestRangeDots runs sums over a range inside a loop over a sparse
// level's positions (SDDMM's rank dot and its neighbours: a let, three
// factors, a column-major factor, a lone factor, a factor that does not
// read k, bounds read per entry, reads past an array's end) against the
// interpreter at 1 and 3 threads, as batches and lane by lane: the range
// dots run, and their bits are the interpreter's. Where the index
// array's facts keep a factor's reads inside its array (V's rows cover
// S's columns), no batch scans its bases ("bounds by facts"); where they
// do not, the batches' bases decide.
func TestRangeDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	s := randCSR(60, 50, 700, rng)
	for _, tc := range []struct {
		name, plan string
		vRows      int // V's rows: fewer than S's columns sends batches to the closures
		dot        bool
		facts      bool // the reads' bounds discharged by facts
	}{
		{"SDDMM, a let", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    let t = sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(j * V_len2 + k) in
		    { @dense j -> S_val(p2) * t } }`, 50, true, true},
		{"SDDMM, in the value", shortSDDMM, 50, true, true},
		{"SDDMM, V a row more than S's columns", shortSDDMM, 51, true, true},
		{"the factor of one base per batch second", strings.Replace(shortSDDMM,
			"U_val(i * U_len2 + k) * V_val(j * V_len2 + k)", "V_val(j * V_len2 + k) * U_val(i * U_len2 + k)", 1), 50, true, true},
		{"both factors one base per batch", strings.Replace(shortSDDMM, "V_val(j * V_len2 + k)", "U_val(i * U_len2 + k)", 1), 50, true, false},
		{"three factors, V column-major", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(k * V_len1 + j) * W_val(k) } }`, 50, true, false},
		{"a lone factor, a factor not reading k", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> (sum(<k, _> in 1:U_len2 - 1) V_val(V_len2 * j + k + 1)) +
		        sum(<k, _> in 0:3) S_val(p2) * V_val(j * V_len2 - k + 4) } }`, 50, true, true},
		{"bounds per entry", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> sum(<k, _> in j % 5:j % 7) U_val(i * U_len2 + k) * V_val(j * V_len2 + k) } }`, 50, true, false},
		{"V short: the interpreter's error", shortSDDMM, 45, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			s.store(st, "S")
			denseStore(st, "U", 60, 8, rng)
			denseStore(st, "V", tc.vRows, 8, rng)
			vecStore(st, "W", 8, rng)
			st["V_len1"], st["V_len2"] = storage.IntScalar(50), storage.IntScalar(8) // V_len1 claims 50 rows
			dotRuns(t, parse(t, tc.plan, st), st, func(short int64, seen map[string]int) {
				if tc.dot && seen["range dot"] == 0 {
					t.Errorf("shortRun %d: no range dot; saw %v", short, seen)
				}
				if f := seen["range dot bounds by facts"] > 0; f != tc.facts {
					t.Errorf("shortRun %d: bounds by facts %v, want %v; saw %v", short, f, tc.facts, seen)
				}
			})
		})
	}
}

// dotRuns runs e lane by lane and as batches (shortRun 3 and 0): it
// agrees with the interpreter at 1 and 3 threads, check sees each run's
// events, and at 1 thread its bits (or its error) are the interpreter's.
func dotRuns(t *testing.T, e *ir.Expr, st storage.Store, check func(short int64, seen map[string]int)) {
	t.Helper()
	want, werr := eval.Eval(e, st)
	defer func(n int64) { shortRun = n }(shortRun)
	for _, short := range []int64{3, 0} {
		shortRun = short
		check(short, events(func() { agree(t, e, st) }))
		got, err := runEngine(e, st, 1)
		if (err != nil) != (werr != nil) || werr == nil && !value.Equal(got, want, 0) {
			t.Errorf("shortRun %d: not the interpreter's bits (%v, %v):\n%s\n%s", short, err, werr, value.Format(got), value.Format(want))
		}
	}
}

// TestNestedRowSink runs loops over COO positions into a nested result,
// {i -> {j -> v}} per entry (SDDMM's and TTV's COO forms), against the
// interpreter at 1 and 3 threads, as batches and lane by lane, with the
// entries in row order and shuffled (rows revisited, keys out of order),
// real and int: the loop is vectorized, not left to the older paths.
func TestNestedRowSink(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 12))
	s := randCSR(60, 50, 700, rng)
	var rows, cols []int64
	for i := range s.n {
		for p := s.pos[i]; p < s.pos[i+1]; p++ {
			rows, cols = append(rows, int64(i)), append(cols, s.idx[p])
		}
	}
	nnz := int64(len(rows))
	for _, tc := range []struct{ name, plan string }{
		{"SDDMM", `sum(<p1, i> in S_idx1(S_pos1(0):S_pos1(1)))
		  { @dense i -> let t = sum(<k, _> in 0:U_len2) U_val(U_len2 * i + k) * V_val(S_idx2(p1) * V_len2 + k) in
		    { @dense S_idx2(p1) -> S_val(p1) * t } }`},
		{"TTV", `sum(<p1, i> in S_idx1(S_pos1(0):S_pos1(1)))
		  { @dense i -> { @dense S_idx2(p1) -> S_val(p1) * W_val(S_idx2(p1) % 8) } }`},
		{"int values", `sum(<p1, i> in S_idx1(S_pos1(0):S_pos1(1)))
		  { @dense i -> { @dense S_idx2(p1) -> i * 3 - S_idx2(p1) } }`},
	} {
		for _, shuffled := range []bool{false, true} {
			st := storage.Store{}
			r, c := rows, cols
			if shuffled {
				r, c = append([]int64(nil), rows...), append([]int64(nil), cols...)
				rng.Shuffle(len(r), func(a, b int) { r[a], r[b], c[a], c[b] = r[b], r[a], c[b], c[a] })
			}
			st["S_pos1"], st["S_idx1"], st["S_idx2"] = storage.IntArray([]int64{0, nnz}), storage.IntArray(r), storage.IntArray(c)
			st["S_val"] = storage.RealArray(randVec(int(nnz), rng))
			denseStore(st, "U", 60, 8, rng)
			denseStore(st, "V", 50, 8, rng)
			vecStore(st, "W", 8, rng)
			e := parse(t, tc.plan, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			k.Explain(&sb)
			if !strings.Contains(sb.String(), "runs: vectorized batches") || strings.Contains(sb.String(), "older path") {
				t.Errorf("%s: not vectorized:\n%s", tc.name, sb.String())
			}
			defer func(n int64) { shortRun = n }(shortRun)
			for _, short := range []int64{3, 0} {
				shortRun = short
				agree(t, e, st)
			}
		}
	}
}

// TestRangeDotBaseScaled: SDDMM's dot reads V's row j at j*V_len2, a
// vector of the lanes times a scalar: the dot scales each lane's index
// where it reads (no pass computing the offsets), with V's rows all
// there, or some missing (the interpreter's error), or the facts unable
// to bound the offsets (S's columns past V's rows for a few entries:
// checked per batch), at 1 and 3 threads.
func TestRangeDotBaseScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 12))
	for _, vrows := range []int{60, 45} {
		s := randCSR(50, 60, 600, rng)
		st := storage.Store{}
		s.store(st, "S")
		denseStore(st, "U", 50, 8, rng)
		denseStore(st, "V", vrows, 8, rng)
		seen := events(func() { agree(t, parse(t, planSDDMMNested, st), st) })
		if seen["range dot base scaled where read"] == 0 {
			t.Errorf("V with %d rows: the dot's base was not scaled where read: %v", vrows, seen)
		}
	}
}

// TestRangeDotLoneFactor: a sum over a range of one real array read at
// base + k (a dense matrix's row sums, SumMMM's rowsum(B) with B dense)
// runs as eight lanes' sums at a time, with the lanes a range
// or a sparse level's positions, the base one value for the batch or one
// per lane, the range per lane or empty; its bits are the interpreter's,
// and a read past the array's end is the interpreter's error.
func TestRangeDotLoneFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 13))
	s := randCSR(60, 50, 700, rng)
	for _, tc := range []struct {
		name, plan string
		bRows      int // B's rows: fewer than B_len1 claims leaves reads past its end
		lone       int // 1: the lone factor's dot runs; 0: it does not; -1: either
	}{
		{"row sums", `sum(<k, _> in 0:B_len1)
		  { @dense k -> sum(<j, _> in 0:B_len2) B_val(B_len2 * k + j) }`, 50, 1},
		{"SumMMM, rowsum(B) once", `let t = sum(<k, _> in 0:B_len1)
		    { @dense k -> sum(<j, _> in 0:B_len2) B_val(B_len2 * k + j) } in
		  sum(<i, _> in 0:S_len1) sum(<p2, k> in S_idx2(S_pos2(i):S_pos2(i + 1))) S_val(p2) * t(k)`, 50, 1},
		{"per entry of a sparse level", `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
		    { @dense j -> sum(<k, _> in 2:B_len2) B_val(j * B_len2 + k) } }`, 50, 1},
		{"one base for the batch", `sum(<k, _> in 0:B_len1)
		  { @dense k -> sum(<j, _> in 0:B_len2) B_val(B_len2 * 3 + j) }`, 50, 1},
		{"a range per lane", `sum(<k, _> in 0:B_len1)
		  { @dense k -> sum(<j, _> in 0:k % 9) B_val(B_len2 * k + j) }`, 50, 0},
		{"B short: the interpreter's error", `sum(<k, _> in 0:B_len1)
		  { @dense k -> sum(<j, _> in 0:B_len2) B_val(B_len2 * k + j) }`, 47, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			s.store(st, "S")
			denseStore(st, "B", tc.bRows, 37, rng)
			st["B_len1"] = storage.IntScalar(50)
			dotRuns(t, parse(t, tc.plan, st), st, func(short int64, seen map[string]int) {
				if got := seen["range dot of a lone factor, eight lanes at a time"] > 0; tc.lone >= 0 && got != (tc.lone == 1) {
					t.Errorf("shortRun %d: a lone factor's dot %v, want %v; saw %v", short, got, tc.lone, seen)
				}
			})
		})
	}
}

// TestDotBoundsOncePerRun runs SDDMM's plan (a batch a row) through one
// compiled kernel on stores of two ranks, at 1 and 2 threads: the range
// dot's reads of V, bounded by values of the whole run (V_len2, the
// dot's bounds) and S_idx2's facts, are decided once per run and frame,
// not per batch, and each run has the interpreter's bits (nothing of
// the run before is kept).
func TestDotBoundsOncePerRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 13))
	s := randCSR(60, 50, 700, rng)
	var e *ir.Expr
	kernels := map[int]*Kernel{}
	for _, rank := range []int{8, 5, 8} {
		st := storage.Store{}
		s.store(st, "S")
		denseStore(st, "U", 60, rank, rng)
		denseStore(st, "V", 50, rank, rng)
		if e == nil {
			e = parse(t, shortSDDMM, st)
		}
		want, err := eval.Eval(e, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			k := kernels[threads]
			if k == nil {
				if k, err = Compile(e, SchemaOf(st), Options{Threads: threads}); err != nil {
					t.Fatal(err)
				}
				kernels[threads] = k
			}
			var got value.Value
			seen := events(func() { got, err = k.Run(st) })
			if err != nil || !value.Equal(got, want, 0) {
				t.Fatalf("rank %d, %d threads: not the interpreter's bits (%v):\n%s\n%s", rank, threads, err, value.Format(got), value.Format(want))
			}
			if d := seen["range dot bounds decided for the run"]; d < 1 || d > threads || seen["range dot"] <= d {
				t.Errorf("rank %d, %d threads: bounds decided %d times for %d batches; saw %v", rank, threads, d, seen["range dot"], seen)
			}
		}
	}
}

// TestRangeDotTimesFactor runs products of a range dot and a factor of
// the lane (SDDMM's S_val(p2) * dot, the dot a let read once or written
// in place, on either side) against the interpreter at 1 and 3 threads,
// as batches and lane by lane, with the interpreter's bits: the dot
// multiplies its lanes as it stores them. A let read twice stays a let,
// its dot unscaled; a factor that reads past its array gives the
// interpreter's error (its batches go to the closures).
func TestRangeDotTimesFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 14))
	s := randCSR(60, 50, 700, rng)
	const dot = "sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(j * V_len2 + k)"
	row := func(v string) string {
		return `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1))) ` + v + ` }`
	}
	for _, tc := range []struct {
		name, plan string
		scaled     bool
		fails      bool
	}{
		{"a let read once", row("let t = " + dot + " in { @dense j -> S_val(p2) * t }"), true, false},
		{"in place, the factor second", row("{ @dense j -> (" + dot + ") * S_val(p2) }"), true, false},
		{"a factor of the row", row("let t = " + dot + " in { @dense j -> 2.5 * t }"), true, false},
		{"a let read twice", row("let t = " + dot + " in { @dense j -> S_val(p2) * t + t }"), false, false},
		{"a factor past its array", row("let t = " + dot + " in { @dense j -> W_val(j) * t }"), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := sddmmStore(s, 60, 50, 40, rng)
			dotRuns(t, parse(t, tc.plan, st), st, func(short int64, seen map[string]int) {
				if tc.fails {
					return
				}
				if seen["range dot"] == 0 {
					t.Errorf("shortRun %d: no range dot; saw %v", short, seen)
				}
				if got := seen["range dot times a factor"] > 0; got != tc.scaled && short == 0 {
					t.Errorf("shortRun %d: dot times a factor %v, want %v; saw %v", short, got, tc.scaled, seen)
				}
			})
		})
	}
}

// TestRangeDotLaneStride: the lane loops of a range dot (a lone factor;
// a factor read at one base for the batch, the other per entry of a
// sparse level; two factors read per lane; with and without a factor
// times the dot) take their lanes a stride apart where the rows are
// long (70 values) and adjacent where they are short (8), over a range
// of keys of 300 rows (batches of 256 and 44 lanes) and over the entries
// of a sparse level (the last lanes of each batch adjacent); each lane's
// bits are the interpreter's.
func TestRangeDotLaneStride(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 15))
	s := randCSR(60, 300, 1500, rng)
	row := func(v string) string {
		return "sum(<k, _> in 0:B_len1) { @dense k -> " + v + " }"
	}
	entry := func(v string) string {
		return `sum(<i, _> in 0:S_len1)
		  { @dense i -> sum(<p2, k> in S_idx2(S_pos2(i):S_pos2(i + 1))) { @dense k -> ` + v + ` } }`
	}
	const b = "B_val(B_len2 * k + j)"
	for _, tc := range []struct{ name, plan string }{
		{"a lone factor", row("sum(<j, _> in 0:B_len2) " + b)},
		{"a factor at one base", entry("sum(<j, _> in 1:B_len2) W_val(j) * " + b)},
		{"a factor at one base, times a factor", entry("S_val(p2) * sum(<j, _> in 0:B_len2) " + b + " * W_val(j)")},
		{"two factors per lane", row("sum(<j, _> in 0:B_len2) " + b + " * B_val(B_len2 * (k % 7) + j)")},
		{"two factors per lane, times a factor", row("W_val(k % 8) * sum(<j, _> in 0:B_len2) B_val(B_len2 * (k % 7) + j) * " + b)},
	} {
		for _, cols := range []int{70, 8} {
			t.Run(fmt.Sprintf("%s, rows of %d", tc.name, cols), func(t *testing.T) {
				st := storage.Store{}
				s.store(st, "S")
				denseStore(st, "B", 300, cols, rng)
				vecStore(st, "W", cols, rng)
				dotRuns(t, parse(t, tc.plan, st), st, func(short int64, seen map[string]int) {
					if got := seen["range dot lanes a stride apart"] > 0; short == 0 && got != (cols == 70) {
						t.Errorf("lanes a stride apart %v, want %v; saw %v", got, cols == 70, seen)
					}
				})
			})
		}
	}
}

// TestRangeDotBasePerRow runs range dots whose first factor's base is one
// value per row of S (U's row i: i times U_len2, with an offset, read
// second) against the interpreter at 1 and 3 threads, as batches and
// lane by lane: the base is taken once per row, not spread over the
// lanes, and the bits are the interpreter's. S's last rows are empty and
// U has no rows for them: no lane reads those rows' bases, so no batch
// leaves the dot for them. A second factor read at one base for the
// batch (W) takes the lanes' bases after all.
func TestRangeDotBasePerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 13))
	s := randCSR(50, 50, 900, rng)
	for range 10 {
		s.pos = append(s.pos, s.pos[len(s.pos)-1])
	}
	s.n += 10
	for _, tc := range []struct {
		name, plan string
		perRow     bool
	}{
		{"SDDMM", shortSDDMM, true},
		{"U's row read second", strings.Replace(shortSDDMM,
			"U_val(i * U_len2 + k) * V_val(j * V_len2 + k)", "V_val(j * V_len2 + k) * U_val(i * U_len2 + k)", 1), true},
		{"U's next row", strings.Replace(shortSDDMM, "U_val(i * U_len2 + k)", "U_val(i * U_len2 + U_len2 + k - 8)", 1), true},
		{"the other factor one base per batch", strings.Replace(shortSDDMM, "V_val(j * V_len2 + k)", "W_val(k)", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := sddmmStore(s, 50, 50, 8, rng)
			dotRuns(t, parse(t, tc.plan, st), st, func(short int64, seen map[string]int) {
				if short != 0 {
					return
				}
				if seen["range dot"] == 0 || seen["fallback"] > 0 {
					t.Errorf("not all batches ran the range dot; saw %v", seen)
				}
				if tc.perRow && (seen["range dot base per row"] == 0 || seen["dot lanes as columns"] == 0 && useDotColumns) {
					t.Errorf("no range dot with U's base per row; saw %v", seen)
				}
			})
		})
	}
}

// sddmmStore holds S, U and V of rank 8 with uRows and vRows rows, and W
// of w values.
func sddmmStore(s *sparseCSR, uRows, vRows, w int, rng *rand.Rand) storage.Store {
	st := storage.Store{}
	s.store(st, "S")
	denseStore(st, "U", uRows, 8, rng)
	denseStore(st, "V", vRows, 8, rng)
	vecStore(st, "W", w, rng)
	return st
}
