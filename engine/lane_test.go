package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// The optimizer's plans for MTTKRP and SDDMM with dense factors: an
// inner sum of a few entries (a fiber, a rank-8 dot product) multiplied
// by a factor of the row, into a scalar or a dictionary.
const (
	shortMTTKRP = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      C_val(C_len2 * k + j) * (sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	        B_val(p3) * D_val(j * D_len2 + l)) } }`
	// The same with the guards a factor narrower than B needs: tested
	// per iteration (k) and per lane (l) where the facts fail.
	shortMTTKRPGuarded = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<j, _> in 0:C_len2)
	    { @dense j -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	      if k < C_len1 then
	        C_val(C_len2 * k + j) * (sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	          if l < D_len2 then B_val(p3) * D_val(j * D_len2 + l)) } }`
	shortSDDMM = `sum(<i, _> in 0:S_len1)
	  { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
	    { @dense j -> S_val(p2) * (sum(<k, _> in 0:U_len2)
	      U_val(i * U_len2 + k) * V_val(j * V_len2 + k)) } }`
	// TTV: each fiber's sum at the fiber's key, a row of a nested result.
	shortTTV = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense k -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(l) } }`
	// TTM, the optimizer's plan with the factor dense (D(k, l) at
	// k * D_len2 + l): a fiber's row, one run of D's column per entry.
	shortTTM = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, j> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense j -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	      let t1 = B_val(p3) in
	      sum(<k, _> in 0:D_len1) { @dense k -> D_val(k * D_len2 + l) * t1 } } }`
	// The keys read from another array (K_val): a read the batches check.
	shortKeyed = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense K_val(p2) -> 2.0 * (sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(l)) } }`
	// A scalar: the product statement into the sink's accumulator.
	shortScalar = `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    C_val(C_len2 * k + 1) * (sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(l))`
)

// TestShortLoops runs plans whose inner loops hold a few entries against
// the interpreter at 1 and 3 threads (agree), checks which execution they
// took, and that lanes give the batches' bits.
func TestShortLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	b := randCSF(30, 25, 40, 700, rng)
	s := randCSR(60, 50, 400, rng)
	type mat struct {
		p    string
		r, c int
	}
	for _, tc := range []struct {
		name, plan string
		mats       []mat // dense factors
		want       []string
		perJ       []string // with ranges not lifted (liftOff): the path a failed run of lanes takes
	}{
		{"MTTKRP", shortMTTKRP, []mat{{"C", 25, 16}, {"D", 16, 40}}, []string{"lifted"}, []string{"flat", "post"}},
		{"MTTKRP, guards discharged", shortMTTKRPGuarded, []mat{{"C", 25, 16}, {"D", 16, 40}}, []string{"lifted"}, []string{"discharged", "flat", "post"}},
		{"MTTKRP, guards tested", shortMTTKRPGuarded, []mat{{"C", 20, 16}, {"D", 16, 30}}, []string{"lifted"}, []string{"lanes", "fallback"}},
		{"SDDMM", shortSDDMM, []mat{{"U", 60, 8}, {"V", 50, 8}}, []string{"range dot", "range dot bounds by facts"}, nil},
		{"TTV", shortTTV, []mat{{"D", 1, 40}}, []string{"flat", "dot", "keys"}, nil},
		// A fiber's row, one run of D's column per entry of the fiber: the
		// range swapped outward, the row summed in lanes and added once.
		{"TTM, dense factor", shortTTM, []mat{{"D", 16, 40}}, []string{"range swapped outward", "lifted at"}, nil},
		{"keys from an array", shortKeyed, []mat{{"D", 1, 40}}, []string{"flat", "post", "keys"}, nil},
		{"scalar", shortScalar, []mat{{"C", 25, 16}, {"D", 1, 40}}, []string{"flat", "post"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			s.store(st, "S")
			st["K_val"] = storage.IntArray(keysFor(len(b.idx2), rng))
			for _, m := range tc.mats {
				denseStore(st, m.p, m.r, m.c, rng)
			}
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			for _, ev := range tc.want {
				if seen[ev] == 0 {
					t.Errorf("no %q event; saw %v", ev, seen)
				}
			}
			if tc.perJ != nil {
				sameBitsPerJ(t, e, st, tc.perJ)
			}
			got, err := runEngine(e, st, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer func(n int64) { shortRun = n }(shortRun)
			shortRun = 0
			batched, err := runEngine(e, st, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, batched, 0) {
				t.Errorf("lanes and batches differ:\n%s\n%s", value.Format(got), value.Format(batched))
			}
		})
	}
}

// TestRowKeysPerBlock: the keys of TTV's fibers, rows of many
// iterations of the loop around (several hundred rows i of a few fibers
// each), are computed once per block of rows in full batches, not once
// per row i, and the rows of the iterations go to the rows at their keys
// in one pass over the iterations while those keys come in order (the
// "appended" event): the row's key the loop's value (i), its position
// (p1) or a range's key, the fibers' keys read in place (k), computed
// (2 * k) or out of order (K_val: those rows go on in the workspace);
// rows out of order (a layout of the user's whose first level is not
// sorted) go row by row. Each agrees with the interpreter at 1 and 3
// threads.
func TestRowKeysPerBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 9))
	st := storage.Store{}
	b := randCSF(600, 300, 20, 4000, rng)
	b.store(st, "B")
	denseStore(st, "D", 1, 20, rng)
	st["K_val"] = storage.IntArray(keysFor(len(b.idx2), rng))
	st["n"] = storage.IntScalar(int64(len(b.pos2) - 1))
	overRange := `sum(<i, _> in 0:n)
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(i):B_pos2(i + 1)))
	    { @dense k -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(l) } }`
	for _, tc := range []struct {
		name, plan string
		appended   bool
	}{
		{"rows at i", shortTTV, true},
		{"rows at p1", strings.Replace(shortTTV, "@dense i ->", "@dense p1 ->", 1), true},
		{"rows at a range's key", overRange, true},
		{"entries at computed keys", strings.Replace(shortTTV, "@dense k ->", "@dense 2 * k ->", 1), true},
		{"entries at keys out of order", shortKeyed, true},
		{"rows out of order", shortTTV, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := st
			if !tc.appended {
				st = maps.Clone(st)
				idx1 := slices.Clone(b.idx1)
				slices.Reverse(idx1)
				st["B_idx1"] = storage.IntArray(idx1)
			}
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			if seen["keys"] == 0 || seen["keys"] > seen["flat"] {
				t.Errorf("want one key pass per block of rows (%d blocks), saw %d; events %v", seen["flat"], seen["keys"], seen)
			}
			if got := seen["appended"] > 0; got != tc.appended {
				t.Errorf("rows appended in place: %v, want %v; events %v", got, tc.appended, seen)
			}
		})
	}
}

// TestShortLoopErrors: a read past an array's end in a lane, or in the
// factors applied to a block's rows, is the interpreter's error.
func TestShortLoopErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	b := randCSF(30, 25, 40, 700, rng)
	for _, tc := range []struct {
		name, plan string
		c, d       [2]int
		claim      string // the length the plan reads that claims more than the array holds
		want       string // the event of the path that meets the read
	}{
		{"D short: lanes", shortMTTKRPGuarded, [2]int{20, 16}, [2]int{15, 40}, "D_len1", "lanes"},
		{"D short: position space", shortMTTKRP, [2]int{25, 16}, [2]int{15, 40}, "D_len1", "flat"},
		{"C short: the rows' factors", shortMTTKRP, [2]int{20, 16}, [2]int{16, 40}, "C_len1", "post"},
		{"K short: the rows' keys", shortKeyed, [2]int{25, 16}, [2]int{16, 40}, "K_val", "post"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "C", tc.c[0], tc.c[1], rng)
			denseStore(st, "D", tc.d[0], tc.d[1], rng)
			if tc.claim == "K_val" {
				// Keys for all but the last fiber.
				st["K_val"] = storage.IntArray(keysFor(len(b.idx2)-1, rng))
			} else {
				st[tc.claim] = storage.IntScalar(map[string]int64{"C_len1": 25, "D_len1": 16}[tc.claim])
			}
			for threads, seen := range sameError(t, parse(t, tc.plan, st), st, strings.TrimSuffix(tc.claim, "_len1")) {
				if seen[tc.want] == 0 {
					t.Errorf("threads=%d: no %q event; saw %v", threads, tc.want, seen)
				}
			}
		})
	}
}

// sameError checks that e fails on st, at 1 and 3 threads, as the
// interpreter does: with its message at one thread, naming arr at three.
// It returns the events of each run, by threads.
func sameError(t *testing.T, e *ir.Expr, st storage.Store, arr string) map[int]map[string]int {
	t.Helper()
	_, werr := eval.Eval(e, st)
	if werr == nil {
		t.Fatal("the interpreter read past the array without an error")
	}
	seen := map[int]map[string]int{}
	for _, threads := range []int{1, 3} {
		var err error
		seen[threads] = events(func() { _, err = runEngine(e, st, threads) })
		switch {
		case err == nil:
			t.Fatalf("threads=%d: no error; the interpreter's: %v", threads, werr)
		case threads == 1 && err.Error() != werr.Error():
			t.Errorf("engine %q, interpreter %q", err, werr)
		case !strings.Contains(err.Error(), arr):
			t.Errorf("threads=%d: engine %q, interpreter %q", threads, err, werr)
		}
	}
	return seen
}

// keysFor draws n keys below 10, in no order and with repeats.
func keysFor(n int, rng *rand.Rand) []int64 {
	k := make([]int64, n)
	for i := range k {
		k[i] = int64(rng.IntN(10))
	}
	return k
}
