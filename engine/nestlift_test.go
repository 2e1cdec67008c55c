package engine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// sameBitsPerJ runs e with ranges not lifted (the loops per j, which a
// failed run of lanes takes), checks that it took the paths of events
// want, and that its result has the same bits as the lifted run's.
func sameBitsPerJ(t *testing.T, e *ir.Expr, st storage.Store, want []string) {
	t.Helper()
	lifted, err := runEngine(e, st, 1)
	if err != nil {
		t.Fatal(err)
	}
	liftOff = true
	defer func() { liftOff = false }()
	var perJ value.Value
	seen := events(func() { perJ, err = runEngine(e, st, 1) })
	if err != nil {
		t.Fatal(err)
	}
	if seen["lifted"] > 0 {
		t.Errorf("liftOff: ranges still lifted: %v", seen)
	}
	for _, ev := range want {
		if seen[ev] == 0 {
			t.Errorf("per j: no %q event; saw %v", ev, seen)
		}
	}
	if !value.Equal(lifted, perJ, 0) {
		t.Errorf("lanes and the loops per j differ:\n%s\n%s", value.Format(lifted), value.Format(perJ))
	}
}

// Plans with a dense range above or inside compressed levels, as the
// optimizer writes them for MTTKRP, TTM and SDDMM with dense factors,
// and forms that exercise the lanes' pieces.
const (
	// MTTKRP, the optimizer's plan: the rank j between levels 1 and 2,
	// C's row a let of lanes, D read across its rows (stride D_len2).
	liftMTTKRP = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      let t3 = C_val(C_len2 * k + j) in
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val(j * D_len2 + l) * t3 } }`
	// MTTKRP as the optimizer writes it on orghs: C's row read inside the
	// product, not a let.
	liftMTTKRPInline = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * C_val(C_len2 * k + j) * D_val(j * D_len2 + l) } }`
	// MTTKRP with C's row outside the sum over l (a form the optimizer
	// keeps as written): j inside the fiber, the sum a let of lanes just
	// before the singleton.
	liftLetSingleton = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    sum(<j, _> in 0:C_len2)
	      let t1 = sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val(j * D_len2 + l) in
	      { @dense j -> C_val(C_len2 * k + j) * t1 } }`
	// TTM with a dense factor: the range innermost, a row per fiber.
	liftTTM = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense k -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	      let t1 = B_val(p3) in
	      sum(<j, _> in 0:D_len1) { @dense j -> D_val(j * D_len2 + l) * t1 } } }`
	// Lanes read backwards (a negative stride), j itself as a value, a
	// guard on k between the levels, a let inside the value, a
	// difference and a negation.
	liftMixed = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      if k < C_len1 - 2 then
	        (let u = C_val(C_len2 * k + (C_len2 - 1 - j)) in u * j - 0.5) *
	        (-(sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(j * D_len2 + l))) } }`
	// Reads across in a product: D's rows from the second on (a lane's
	// row is not j), D at a stride its length is no multiple of, C
	// backwards (a negative stride).
	liftAcross = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        C_val(C_len2 * k + (C_len2 - 1 - j)) * D_val((j + 1) * D_len2 + l) *
	        D_val(j * (D_len2 - 1) + l) } }`
	// D's rows from the row's key i on (an index part read outside the
	// lifted loop, worked out once per run) and from the fiber's key k on
	// (read inside: worked out per fiber).
	liftOuterIndex = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val((j + i) * D_len2 + l) } }`
	liftInnerIndex = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val((j + k) * D_len2 + l) } }`
	// A long range over sparse levels: runs of at most liftLanes lanes.
	liftLong = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:D_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(l * D_len2 + j) } }`
	// D's column read from another array at the entry's position, as a
	// COO's later coordinate is (E_idx(p3), not the loop's key l): walked
	// as the key is, the array's entries the loop's keys.
	liftOtherIndex = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * C_val(C_len2 * k + j) * D_val(j * D_len2 + E_idx(p3)) } }`
	// A factor at an index not linear in the loop's key (l*l): read
	// through its closure per entry.
	liftSquared = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val(j * D_len2 + l * l) } }`
	// A guard whose side wraps (j * 2^62): lanes cannot tell which j
	// pass, the loops per j compare the wrapped values.
	liftWrapped = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> if j * H < 1 then sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      C_val(C_len2 * k + j) } }`
	// A guard on j that holds in some lanes only: the loops per j.
	// An inner sum whose terms are no product (a sum of reads, a guard
	// on j inside the term): added lane by lane.
	liftSumTerms = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        if j < x_len1 then B_val(p3) + D_val(j * D_len2 + l) } }`
	liftGuarded = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> if j < x_len1 then sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      C_val(C_len2 * k + j) * x_val(j) } }`
)

// TestLiftedRanges runs plans with a dense range above or inside
// compressed levels against the interpreter at 1 and 3 threads, checks
// that the range ran as lanes, and that the lanes give the bits of the
// loops per j.
func TestLiftedRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 9))
	b := randCSF(30, 25, 40, 700, rng)
	for _, tc := range []struct {
		name, plan string
		c, d       [2]int
		xlen       int
		want       []string // events with lanes
		perJ       []string // events of the loops per j
		not        string   // an event the lanes must not show
	}{
		{"MTTKRP", liftMTTKRP, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted", "lifted product", "lifted at", "lane-major", "lifted set-up kept", "lifted fibers"}, []string{"flat"}, ""},
		{"MTTKRP, C's row inside the product", liftMTTKRPInline, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted", "lifted product", "lifted at", "lane-major", "lifted set-up kept", "lifted fibers"}, nil, ""},
		{"TTM", liftTTM, [2]int{25, 16}, [2]int{12, 40}, 16, []string{"lifted", "lane-major", "lifted rows"}, []string{"flat"}, ""},
		{"a let of lanes before the singleton", liftLetSingleton, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted", "lifted product", "lifted at", "lane-major"}, nil, ""},
		{"reads across", liftAcross, [2]int{25, 16}, [2]int{17, 40}, 16, []string{"lifted", "lifted product", "lifted at", "lane-major"}, nil, ""},
		{"an index read outside the lifted loop", liftOuterIndex, [2]int{25, 16}, [2]int{46, 40}, 16, []string{"lifted", "lifted at", "lifted set-up kept"}, nil, ""},
		{"an index read inside the lifted loop", liftInnerIndex, [2]int{25, 16}, [2]int{41, 40}, 16, []string{"lifted", "lifted at"}, nil, "lifted set-up kept"},
		{"mixed", liftMixed, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted"}, nil, ""},
		{"long range", liftLong, [2]int{25, 16}, [2]int{40, 300}, 16, []string{"lifted", "lifted product", "lifted at"}, nil, ""},
		{"an index read from another array at the position", liftOtherIndex, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted", "lifted product", "lifted at", "lifted at walk"}, nil, "lifted fibers"},
		{"an index not linear in the key", liftSquared, [2]int{25, 16}, [2]int{16, 1700}, 16, []string{"lifted", "lifted product"}, nil, "lifted at"},
		{"terms no product", liftSumTerms, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted"}, nil, ""},
		{"terms no product, a guard failing in some lanes", liftSumTerms, [2]int{25, 16}, [2]int{16, 40}, 9, nil, nil, ""},
		{"a guard on j failing in some lanes", liftGuarded, [2]int{25, 16}, [2]int{16, 40}, 9, nil, nil, ""},
		{"a guard on j holding in every lane", liftGuarded, [2]int{25, 16}, [2]int{16, 40}, 16, []string{"lifted"}, nil, ""},
		{"a guard on j that wraps", liftWrapped, [2]int{25, 16}, [2]int{16, 40}, 16, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", tc.c[0], tc.c[1], rng)
			denseStore(st, "D", tc.d[0], tc.d[1], rng)
			vecStore(st, "x", tc.xlen, rng)
			st["H"] = storage.IntScalar(1 << 62)
			st["E_idx"] = storage.IntArray(otherIndex(len(b.idx3), 40, rng))
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			for _, ev := range tc.want {
				if seen[ev] == 0 {
					t.Errorf("no %q event; saw %v", ev, seen)
				}
			}
			if tc.not != "" && seen[tc.not] > 0 {
				t.Errorf("a %q event: %v", tc.not, seen)
			}
			if tc.want == nil && seen["lifted"] > 0 {
				t.Errorf("lanes ran where a guard fails in some: %v", seen)
			}
			sameBitsPerJ(t, e, st, tc.perJ)
		})
	}
}

// TestLiftedRangeErrors: a read past an array's end in some lanes (a
// factor shorter than its length claims) is the interpreter's error: the
// run of lanes is dropped and the loops per j report it.
func TestLiftedRangeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 10))
	b := randCSF(30, 25, 40, 700, rng)
	for _, tc := range []struct {
		name, plan string
		claim      string
	}{
		{"MTTKRP, D short", liftMTTKRP, "D_len2"},
		{"MTTKRP, C short", liftMTTKRP, "C_len2"},
		{"TTM, D short", liftTTM, "D_len1"},
		{"a let of lanes before the singleton, D short", liftLetSingleton, "D_len2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", 25, 16, rng)
			denseStore(st, "D", 16, 40, rng)
			st[tc.claim] = storage.IntScalar(st[tc.claim].(*storage.Scalar).I + 1)
			sameError(t, parse(t, tc.plan, st), st, tc.claim[:1]+"_val")
		})
	}
}

// otherIndex draws n ints below m: another array of keys, one per entry.
func otherIndex(n, m int, rng *rand.Rand) []int64 {
	k := make([]int64, n)
	for i := range k {
		k[i] = int64(rng.IntN(m))
	}
	return k
}

// TestLiftedOtherIndexErrors: where the other array an index reads at
// the position is shorter than the positions, or holds a key past the
// factor, the run is the interpreter's error, not a read past the array.
func TestLiftedOtherIndexErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	b := randCSF(30, 25, 40, 700, rng)
	for _, tc := range []struct {
		name string
		n, m int
	}{
		{"E short", len(b.idx3) - 5, 40},
		{"a key of E past D", len(b.idx3), 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", 25, 16, rng)
			denseStore(st, "D", 16, 40, rng)
			e := otherIndex(tc.n, 40, rng)
			if tc.m > 40 {
				e[len(e)-1] = 40
			}
			st["E_idx"] = storage.IntArray(e)
			arr := "D_val"
			if tc.n < len(b.idx3) {
				arr = "E_idx"
			}
			sameError(t, parse(t, liftOtherIndex, st), st, arr)
		})
	}
}

// TestLaneMajorSharedByWorkers: the workers of one run share one
// lane-major copy of an array read across, made by the first that needs
// it, and agree with the interpreter.
func TestLaneMajorSharedByWorkers(t *testing.T) {
	st, _ := liftStore(12, 40, 9000)
	liftRuns(t, st, 3, 2, nil, func(run int, seen map[string]int, _ uint64) {
		if seen["lane-major"] != 1 {
			t.Errorf("run %d: %d lane-major copies of D, want one for all workers", run, seen["lane-major"])
		}
	})
}

// liftStore is MTTKRP's B (300 x 25 x l, nnz entries), C (25 x 16)
// and D (16 x l), random from seed.
func liftStore(seed uint64, l, nnz int) (storage.Store, *rand.Rand) {
	rng := rand.New(rand.NewPCG(28, seed))
	st := storage.Store{}
	randCSF(300, 25, l, nnz, rng).store(st, "B")
	denseStore(st, "C", 25, 16, rng)
	denseStore(st, "D", 16, l, rng)
	return st, rng
}

// liftRuns compiles liftMTTKRP for st at threads and runs the kernel
// runs times, each run's result against the interpreter's: before (if
// set) goes first, check gets the run's events and the bytes it
// allocated.
func liftRuns(t *testing.T, st storage.Store, threads, runs int, before func(run int), check func(run int, seen map[string]int, alloc uint64)) {
	t.Helper()
	e := parse(t, liftMTTKRP, st)
	k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	for run := range runs {
		if before != nil {
			before(run)
		}
		var res *Result
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		seen := events(func() { res, err = k.Exec(st) })
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		agreeValue(t, e, st, res.Value())
		check(run, seen, m1.TotalAlloc-m0.TotalAlloc)
	}
}

// TestLaneMajorCopyClaimedInTurn: a worker that needs a lane-major copy
// another worker is making copies the tiles left rather than waiting for
// them, and the copy is the array transposed.
func TestLaneMajorCopyClaimedInTurn(t *testing.T) {
	const stride, rows = 200, 70 // 4 x 2 tiles, the last of each partial
	src := make([]float64, stride*rows-13)
	for i := range src {
		src[i] = float64(i)
	}
	rc := &runCopies{}
	first, release := make(chan struct{}), make(chan struct{})
	var stopped atomic.Bool
	laneMajorTile = func() {
		if stopped.CompareAndSwap(false, true) { // the first worker stops after one tile
			close(first)
			<-release
		}
	}
	defer func() { laneMajorTile = nil }()
	go rc.entry(src, stride).lanes()
	<-first
	got := make(chan []float64)
	go func() { c := rc.entry(src, stride); c.lanes(); got <- c.vals }()
	var vals []float64
	select {
	case vals = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the second worker waited for the first one's tiles")
	}
	close(release)
	for r := range int64(rows) {
		for b := range int64(stride) {
			want := 0.0
			if r*stride+b < int64(len(src)) {
				want = src[r*stride+b]
			}
			if vals[b*rows+r] != want {
				t.Fatalf("copy(%d, %d) = %v, want %v", r, b, vals[b*rows+r], want)
			}
		}
	}
}

// TestLaneMajorCountedPerRun: the lanes read across an array before its
// lane-major copy are counted over the run's workers, so that with w
// workers each does not read w times its share across first.
func TestLaneMajorCountedPerRun(t *testing.T) {
	const stride, rows = 100, 16
	n := &lnode{cl: &cell{reals: make([]float64, stride*rows)}}
	rc := &runCopies{}
	workers := []*liftState{{majors: make([]laneMajor, 1), copies: rc}, {majors: make([]laneMajor, 1), copies: rc}}
	read := func(w int, lanes int64) *laneMajor {
		var m *laneMajor
		for range lanes / rows {
			m = workers[w].major(n, stride, rows)
		}
		return m
	}
	if m := read(0, stride*rows*6/10); m != nil {
		t.Fatal("a copy before the run read as many lanes across as the array holds")
	}
	if m := read(1, stride*rows*6/10); m == nil {
		t.Fatal("no copy once the workers together read as many lanes across as the array holds")
	}
	if m := read(0, stride*rows/64+rows); m == nil {
		t.Fatal("the first worker does not share the copy")
	}
}

// TestLiftedWalkOneFiberPerRow: rows of one fiber each (WordNet's
// shape; some rows also hold an empty fiber), every index part a
// global: the product's set-up is made once for the run, not per row,
// its positions walk without a window per position, and MTTKRP's fibers
// (C's row a let) walk too. Where a walk's bounds fail (D's rows from
// the second on read to the array's very end or one past it, C or D
// shorter than their lengths claim, from row 7 on: C's row 24, D's
// columns from 25), the general loop agrees with the interpreter, or
// reports its error.
func TestLiftedWalkOneFiberPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 14))
	b := &sparseCSF{dims: [3]int64{40, 25, 40}, pos1: []int64{0, 40}, pos2: []int64{0}, pos3: []int64{0}}
	for i := range int64(40) { // row i: one fiber, key (i*7)%25, of 1-3 entries (l < 25 in rows 0-7)
		b.idx1 = append(b.idx1, i)
		if k := i * 7 % 25; k > 0 && i%4 == 1 {
			b.idx2 = append(b.idx2, k-1) // an empty fiber first
			b.pos3 = append(b.pos3, int64(len(b.idx3)))
		}
		b.idx2 = append(b.idx2, i*7%25)
		for l := rng.Int64N(10); l < 40 && (i >= 8 || l < 25); l += 10 + rng.Int64N(20) {
			b.idx3 = append(b.idx3, l)
			b.val = append(b.val, float64(rng.IntN(5)+1))
		}
		b.pos2 = append(b.pos2, int64(len(b.idx2)))
		b.pos3 = append(b.pos3, int64(len(b.idx3)))
	}
	for _, tc := range []struct {
		name, plan string
		d          [2]int
		want       []string
		claim      string // a length claimed one more than it is
		fails      string // the array the error names
		downPos3   bool   // one fiber's bounds out of order
	}{
		{"MTTKRP", liftMTTKRP, [2]int{16, 40}, []string{"lifted at walk", "lifted set-up kept", "lifted fibers"}, "", "", false},
		{"reads across to the end", liftAcross, [2]int{17, 40}, []string{"lifted at walk", "lifted set-up kept"}, "", "", false},
		{"reads across past the end", liftAcross, [2]int{16, 40}, nil, "", "D_val", false},
		{"MTTKRP, C short", liftMTTKRP, [2]int{17, 40}, []string{"lifted fibers"}, "C_len2", "C_val", false},
		{"MTTKRP, D short", liftMTTKRP, [2]int{16, 40}, []string{"lifted fibers"}, "D_len2", "D_val", false},
		{"MTTKRP, C's row inside the product", liftMTTKRPInline, [2]int{16, 40}, []string{"lifted at walk", "lifted fibers"}, "", "", false},
		{"MTTKRP, C's row inside the product, C short", liftMTTKRPInline, [2]int{17, 40}, []string{"lifted fibers"}, "C_len2", "C_val", false},
		{"MTTKRP, a fiber's bounds out of order", liftMTTKRP, [2]int{16, 40}, []string{"lifted fibers"}, "", "B_idx3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", 25, 16, rng)
			denseStore(st, "D", tc.d[0], tc.d[1], rng)
			if tc.claim != "" {
				st[tc.claim] = storage.IntScalar(st[tc.claim].(*storage.Scalar).I + 1)
			}
			if tc.downPos3 {
				p := slices.Clone(b.pos3)
				p[30], p[31] = p[31], p[30]-1
				st["B_pos3"] = storage.IntArray(p)
			}
			e := parse(t, tc.plan, st)
			if tc.fails != "" {
				seen := sameError(t, e, st, tc.fails)[1]
				for _, ev := range tc.want {
					if seen[ev] == 0 {
						t.Errorf("no %q event; saw %v", ev, seen)
					}
				}
				return
			}
			seen := events(func() { agree(t, e, st) })
			for _, ev := range tc.want {
				if seen[ev] == 0 {
					t.Errorf("no %q event; saw %v", ev, seen)
				}
			}
			if seen["lifted set-up kept"]+seen["lifted fibers"] < seen["lifted"]/2 {
				t.Errorf("set-up made per row: %v", seen)
			}
			sameBitsPerJ(t, e, st, nil)
		})
	}
}

// TestLaneMajorBufferReused: a kernel's runs reuse the buffer of the
// lane-major copy the run before made, writing it again (the values of
// D changed in place between runs are the next run's), at 1 and 3
// threads: a run allocates far less than the copy.
func TestLaneMajorBufferReused(t *testing.T) {
	st, rng := liftStore(15, 4000, 20000)
	d := st["D_val"].(*storage.Array).F
	copyBytes := uint64(len(d)) * 8
	for _, threads := range []int{1, 3} {
		liftRuns(t, st, threads, 3, func(int) {
			for i := range d {
				d[i] = float64(rng.IntN(9) - 4)
			}
		}, func(run int, seen map[string]int, alloc uint64) {
			if seen["lane-major"] != 1 {
				t.Errorf("%d threads, run %d: %d lane-major copies, want 1", threads, run, seen["lane-major"])
			}
			if run > 0 && alloc >= copyBytes/2 {
				t.Errorf("%d threads, run %d: %d bytes allocated, the copy %d: its buffer made again", threads, run, alloc, copyBytes)
			}
		})
	}
}

// TestLaneMajorFromFirstRead: a kernel whose run before copied an array
// lane-major copies it at its first read across, rather than after
// reading as many lanes across as the array holds, at 1 and 3 threads;
// a kernel's first run counts.
func TestLaneMajorFromFirstRead(t *testing.T) {
	st, _ := liftStore(16, 400, 9000)
	for _, threads := range []int{1, 3} {
		liftRuns(t, st, threads, 3, nil, func(run int, seen map[string]int, _ uint64) {
			if first := seen["lane-major from the first read"]; seen["lane-major"] != 1 || (first == 1) != (run > 0) {
				t.Errorf("%d threads, run %d: %v", threads, run, seen)
			}
		})
	}
}

// TestLaneMajorCopyHelped: the copy of a run with more than one thread
// is made by helpers too, not by the worker that needs it first alone
// (at a split run's start the other workers have not started): every
// tile is copied while that worker stops after its first.
func TestLaneMajorCopyHelped(t *testing.T) {
	const stride, rows, tiles = 200, 130, 4 * 3
	src := make([]float64, stride*rows)
	for i := range src {
		src[i] = float64(i)
	}
	rc := &runCopies{helpers: 1}
	release, done := make(chan struct{}), make(chan struct{})
	var copied atomic.Int64
	laneMajorTile = func() {
		switch copied.Add(1) {
		case 1: // the first to copy a tile stops
			<-release
		case tiles:
			close(done)
		}
	}
	defer func() { laneMajorTile = nil }()
	defer close(release)
	go rc.entry(src, stride).lanes()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%d of %d tiles copied: the copy stopped with the worker that needed it", copied.Load(), tiles)
	}
}

// TestLaneMajorCopyShapes: the lane-major copy, four rows at a time
// where a tile's rows are whole, holds src's element r*stride+b at
// b*rows+r for rows not a multiple of four, more than a tile of rows
// and of columns, and a last row cut short by src's end (zero past it).
func TestLaneMajorCopyShapes(t *testing.T) {
	for _, sh := range []struct{ n, stride int64 }{{16 * 40, 40}, {17 * 40, 40}, {70 * 130, 130}, {70*130 - 57, 130}, {3*9 + 2, 9}, {6 * 200, 200}} {
		src := make([]float64, sh.n)
		for i := range src {
			src[i] = float64(i + 1)
		}
		c := (*runCopies)(nil).entry(src, sh.stride)
		c.lanes()
		for r := range c.rows {
			for b := range sh.stride {
				want := 0.0
				if r*sh.stride+b < sh.n {
					want = src[r*sh.stride+b]
				}
				if got := c.vals[b*c.rows+r]; got != want {
					t.Fatalf("%d values at stride %d: row %d column %d is %v, want %v", sh.n, sh.stride, r, b, got, want)
				}
			}
		}
	}
}

// TestLiftedCopyZeros copies a dense matrix into a built dense-of-dense
// dictionary (MMM's copy of a dense B), its lanes written into the
// appended row: rows of zeros only, few non-zeros (-0 among the zeros),
// half and no zeros keep exactly their non-zeros, at 1 and 3 threads,
// whole rows or from a column past 0. The rows are kept from where they
// are read, not copied into the row first.
func TestLiftedCopyZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 14))
	const rows, cols = 40, 250
	vals := make([]float64, rows*cols)
	n := 0
	for i := range rows {
		density := []float64{0, 1.0 / 32, 0.5, 1}[i%4]
		for j := range cols {
			switch {
			case rng.Float64() < density:
				vals[i*cols+j] = rng.Float64() + 0.5
				n++
			case j%3 == 0:
				vals[i*cols+j] = math.Copysign(0, -1)
			}
		}
	}
	st := storage.Store{"C_len1": storage.IntScalar(rows), "C_len2": storage.IntScalar(cols), "C_val": storage.RealArray(vals)}
	copyC := `sum(<k, _> in 0:C_len1)
	  { @dense k -> sum(<j, _> in 0:C_len2) { @dense j -> C_val(k * C_len2 + j) } }`
	// From column 5 on: the keys start past 0 (and past a chunk's eight).
	copyFrom := strings.ReplaceAll(copyC, "0:C_len2", "5:C_len2")
	nFrom := 0
	for i := range rows {
		for _, v := range vals[i*cols+5 : (i+1)*cols] {
			if v != 0 {
				nFrom++
			}
		}
	}
	count := func(c string) string { return "let t = " + c + " in sum(<k, r> in t) sum(<j, v> in r) 1" }
	for _, tc := range []struct {
		name, plan string
		entries    int // -1: not counted
	}{
		{"the copy", copyC, -1},
		// The copy's entries counted by a walk of it: a zero kept would count.
		{"its entries counted", count(copyC), n},
		{"the copy from column 5", copyFrom, -1},
		{"its entries from column 5 counted", count(copyFrom), nFrom},
	} {
		e := parse(t, tc.plan, st)
		seen := events(func() {
			if got := agree(t, e, st); tc.entries >= 0 && !value.Equal(got, int64(tc.entries), 0) {
				t.Errorf("%s: %s entries, want the %d non-zeros", tc.name, value.Format(got), tc.entries)
			}
		})
		if seen["lifted into the appended row"] == 0 {
			t.Errorf("%s: the rows were not lifted into appended rows: %v", tc.name, seen)
		}
		if seen["lifted row kept where it is read"] == 0 {
			t.Errorf("%s: no row was kept from where it is read: %v", tc.name, seen)
		}
	}
}

// TestLiftedFibersOneBatch: MTTKRP's lifted rank over rows of many
// short fibers adds a row's fibers in one pass of the vector loop (a
// batch: the fibers' positions and C's and D's rows, fetched ahead),
// not a pass per fiber nor per entry, and gives the interpreter's result
// and the bits of the loops per j.
func TestLiftedFibersOneBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 31))
	b := randCSF(60, 40, 60, 3000, rng) // a row: about 30 fibers of 1-2 entries
	for _, plan := range []string{liftMTTKRP, liftMTTKRPInline} {
		for _, rank := range []int{16, 21} {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", 40, rank, rng)
			denseStore(st, "D", rank, 60, rng)
			e := parse(t, plan, st)
			seen := events(func() {
				if _, err := runEngine(e, st, 1); err != nil {
					t.Fatal(err)
				}
			})
			// (The first row's fibers run one by one: they make the walks.)
			if seen["lifted fibers"] == 0 || seen["lifted batch"] == 0 || 4*seen["lifted batch"] > len(b.idx2) {
				t.Errorf("rank %d, %d fibers: not a batch a row: %v", rank, len(b.idx2), seen)
			}
			agree(t, e, st)
			sameBitsPerJ(t, e, st, nil)
		}
	}
}

// TestLiftedFibersKeptViews: a row's call of the lifted fiber walk
// takes the views its walks had the row before (MTTKRP on WordNet: a
// call per row of 1.9 fibers), made again only once the walks change:
// here D's lane-major copy, made partway through the run, gives the
// later rows other walks. The interpreter's result (1 and 3 threads) and
// the bits of the loops per j either way.
func TestLiftedFibersKeptViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 53))
	b := randCSF(300, 20, 200, 900, rng) // a row: about 2 fibers of 1-2 entries
	eachLiftedMTTKRP(t, b, rng, func(e *ir.Expr, st storage.Store) {
		seen := events(func() {
			if _, err := runEngine(e, st, 1); err != nil {
				t.Fatal(err)
			}
		})
		if seen["lane-major"] == 0 || seen["lifted fibers kept"] < seen["lifted fibers"]/2 || seen["lifted rows in a block"] == 0 {
			t.Errorf("views made per row: %v", seen)
		}
		agree(t, e, st)
	})
}

// TestLiftedFiberRowsInBlocks: MTTKRP's rows, each a sum over the row's
// fibers, run in blocks of rows (liftRows.rows), the fibers' bounds read
// at the loop's position; a row of zeros (every value of the row 0 or
// -0) leaves the block for the general way, which keeps none of it, and
// the rows after it run in a block again. The interpreter's result (1
// and 3 threads) and the bits of the loops per j.
func TestLiftedFiberRowsInBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 67))
	b := randCSF(300, 20, 200, 900, rng)
	for r := range b.idx1 {
		if r%7 != 3 {
			continue
		}
		for p := b.pos3[b.pos2[r]]; p < b.pos3[b.pos2[r+1]]; p++ {
			b.val[p] = 0
			if p%2 == 0 {
				b.val[p] = math.Copysign(0, -1)
			}
		}
	}
	rows := len(b.idx1)
	eachLiftedMTTKRP(t, b, rng, func(e *ir.Expr, st storage.Store) {
		for _, threads := range []int{1, 3} {
			seen := events(func() {
				if _, err := runEngine(e, st, threads); err != nil {
					t.Fatal(err)
				}
			})
			blocks := seen["lifted rows in a block"]
			if blocks < rows/7/threads || seen["lifted rows"]-blocks < rows/7 {
				t.Errorf("%d threads: %d blocks of rows, want one after each row of zeros: %v", threads, blocks, seen)
			}
		}
		agree(t, e, st)
	})
}

// eachLiftedMTTKRP stores b with dense C (20 x 16) and D (16 x 200),
// runs f on each MTTKRP plan of the lifted fiber walk over them, and
// checks the bits of the loops per j.
func eachLiftedMTTKRP(t *testing.T, b *sparseCSF, rng *rand.Rand, f func(e *ir.Expr, st storage.Store)) {
	t.Helper()
	for _, plan := range []string{liftMTTKRP, liftMTTKRPInline} {
		st := storage.Store{}
		b.store(st, "B")
		denseStore(st, "C", 20, 16, rng)
		denseStore(st, "D", 16, 200, rng)
		e := parse(t, plan, st)
		f(e, st)
		sameBitsPerJ(t, e, st, nil)
	}
}

// TestLiftedFibersAtTheirPositions: where a fiber's bounds are read at
// the walked iteration's own position (B_pos3(p2):B_pos3(p2 + 1)), the
// lifted fiber walk sets the iteration's variables only before what
// reads them: here t3's let (C's row at k) when D's lane-major copy,
// made partway through a row, sends a fiber to runProd, and an empty
// fiber between others. The interpreter's result (1 and 3 threads) and
// the bits of the loops per j.
func TestLiftedFibersAtTheirPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 61))
	a := randCSF(300, 20, 200, 900, rng) // a row: about 2 fibers of 1-2 entries
	b := &sparseCSF{dims: a.dims, pos1: a.pos1, idx1: a.idx1, pos2: []int64{0}, pos3: []int64{0}, idx3: a.idx3, val: a.val}
	for r := range a.idx1 {
		for f := a.pos2[r]; f < a.pos2[r+1]; f++ {
			if f == a.pos2[r] && r%5 == 2 && a.idx2[f] > 0 {
				b.idx2 = append(b.idx2, a.idx2[f]-1) // an empty fiber first
				b.pos3 = append(b.pos3, a.pos3[f])
			}
			b.idx2 = append(b.idx2, a.idx2[f])
			b.pos3 = append(b.pos3, a.pos3[f+1])
		}
		b.pos2 = append(b.pos2, int64(len(b.idx2)))
	}
	eachLiftedMTTKRP(t, b, rng, func(e *ir.Expr, st storage.Store) {
		seen := events(func() { agree(t, e, st) })
		if seen["lifted fibers at their positions"] == 0 || seen["lane-major"] == 0 || seen["lifted rows in a block"] == 0 {
			t.Errorf("no walk of fibers at their positions: %v", seen)
		}
	})
}

// TestLiftedShortWalks: TTM's walk per fiber (a row of lanes each) adds
// a fiber of at most shortRun entries position by position, a longer one
// through a batch; both give the interpreter's result (1 and 3 threads)
// and the bits of the loops per j.
func TestLiftedShortWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 47))
	for _, tc := range []struct {
		name  string
		d3    int
		nnz   int
		batch bool // a batch expected (a fiber longer than shortRun)
	}{
		{"fibers of at most 3 entries", 3, 500, false},
		{"long fibers", 40, 6000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := randCSF(20, 15, tc.d3, tc.nnz, rng)
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "D", 16, tc.d3, rng)
			e := parse(t, liftTTM, st)
			seen := events(func() { agree(t, e, st) })
			if seen["lifted at walk"] == 0 {
				t.Errorf("no walk: %v", seen)
			}
			if got := seen["lifted batch"] > 0; got != tc.batch {
				t.Errorf("a batch: %v, want %v: %v", got, tc.batch, seen)
			}
			sameBitsPerJ(t, e, st, nil)
		})
	}
}

// TestLiftedFiberRowsBatched: MTTKRP's rows, each a sum over a few short
// fibers (WordNet's shape), are staged a batch of rows at a time, every
// fiber's C row per position, and written in one loop: the fiber walk
// is not called per row. A row of more positions than a batch holds, a
// row of zeros, an empty fiber and a fiber whose C row falls outside C
// leave the batch for the general way. The interpreter's result (or its
// error) at 1 and 3 threads, and the bits of the loops per j.
func TestLiftedFiberRowsBatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 71))
	const d3 = 100
	var cs []csfCoord
	for i := range int64(400) {
		if i == 150 { // more positions than a batch holds
			for k := range int64(3) {
				for l := range int64(d3) {
					cs = append(cs, csfCoord{i, 17 + k, l})
				}
			}
			continue
		}
		for f := range 1 + rng.Int64N(3) {
			k, l := 6*f+rng.Int64N(6), rng.Int64N(d3-1)
			for x := range 1 + rng.Int64N(2) {
				cs = append(cs, csfCoord{i, k, l + x})
			}
		}
	}
	a := csfOf([3]int64{400, 20, d3}, cs, rng)
	// An empty fiber before the first of every 9th row's; every 13th
	// row's values zero (0 or -0).
	b := &sparseCSF{dims: a.dims, pos1: a.pos1, idx1: a.idx1, pos2: []int64{0}, pos3: []int64{0}, idx3: a.idx3, val: a.val}
	for r := range a.idx1 {
		for f := a.pos2[r]; f < a.pos2[r+1]; f++ {
			if f == a.pos2[r] && r%9 == 4 && a.idx2[f] > 0 {
				b.idx2 = append(b.idx2, a.idx2[f]-1)
				b.pos3 = append(b.pos3, a.pos3[f])
			}
			b.idx2 = append(b.idx2, a.idx2[f])
			b.pos3 = append(b.pos3, a.pos3[f+1])
			if r%13 == 5 {
				for p := a.pos3[f]; p < a.pos3[f+1]; p++ {
					b.val[p] = math.Copysign(0, float64(p%2)-0.5)
				}
			}
		}
		b.pos2 = append(b.pos2, int64(len(b.idx2)))
	}
	// Factors of positive values: a row's lane is zero only where B's
	// values are.
	factor := func(st storage.Store, p string, rows, cols int) {
		denseStore(st, p, rows, cols, rng)
		for i, v := range st[p+"_val"].(*storage.Array).F {
			st[p+"_val"].(*storage.Array).F[i] = math.Abs(v) + 0.25
		}
	}
	rows := len(b.idx1)
	for _, plan := range []string{liftMTTKRP, liftMTTKRPInline} {
		for _, rank := range []int{16, 12, 20} {
			st := storage.Store{}
			b.store(st, "B")
			factor(st, "C", 20, rank)
			factor(st, "D", rank, d3)
			e := parse(t, plan, st)
			seen := events(func() {
				if _, err := runEngine(e, st, 1); err != nil {
					t.Fatal(err)
				}
			})
			if seen["lifted fibers staged"] < rows/2 || seen["lifted fibers"] > rows/4 {
				t.Errorf("rank %d: rows not staged in batches: %v", rank, seen)
			}
			agree(t, e, st)
			sameBitsPerJ(t, e, st, nil)
		}
	}
	// C one row short: the fibers whose k is 19 read past C, which
	// fails as the interpreter does.
	for _, plan := range []string{liftMTTKRP, liftMTTKRPInline} {
		st := storage.Store{}
		b.store(st, "B")
		factor(st, "C", 19, 16)
		factor(st, "D", 16, d3)
		sameError(t, parse(t, plan, st), st, "C_val")
	}
}
