package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// TestGuardDecidedOncePerRun: a guard whose facts read only values of the
// whole run (array min/max, sizes) is decided once per run, whatever the
// number of rows, windows or loop entries; one that reads a loop's
// variables is still decided per entry. Checked against the interpreter
// at 1 and 3 threads.
func TestGuardDecidedOncePerRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	n, m := 300, 200
	st := storage.Store{"beta": storage.RealScalar(1.5)}
	randCSR(n, m, 7*n, rng).store(st, "A")
	randCSR(m, 60, 4*m, rng).store(st, "B")
	vecStore(st, "x", m, rng)
	b := randCSF(40, 30, 50, 900, rng)
	b.store(st, "T")
	denseStore(st, "C", 30, 16, rng)
	denseStore(st, "D", 16, 50, rng)
	mmm := `sum(<i, _> in 0:A_len1)
	  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
	    if 0 <= k && k < B_len1 then
	      let t1 = A_val(p2) in
	      sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> t1 * B_val(q) } }`
	mttkrp := `sum(<p1, i> in T_idx1(T_pos1(0):T_pos1(1)))
	  { @dense i -> sum(<p2, k> in T_idx2(T_pos2(p1):T_pos2(p1 + 1)))
	    if 0 <= k && k < C_len1 then
	      sum(<p3, l> in T_idx3(T_pos3(p2):T_pos3(p2 + 1)))
	        if 0 <= l && l < D_len2 then
	          let t1 = T_val(p3) in
	          sum(<j, _> in 0:C_len2)
	            { @dense j -> if 0 <= j && j < D_len1 then
	              t1 * (C_val(k * C_len2 + j) * D_val(D_len2 * j + l)) } }`
	for _, tc := range []struct {
		name, plan string
		most       int // discharges in one single-threaded run
	}{
		{"SpMV", nestSpMV, 2},
		{"BATAX", nestBATAX, 2},
		{"MMM, a guarded row lookup", mmm, 3},
		{"MTTKRP", mttkrp, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parse(t, tc.plan, st)
			seen := events(func() {
				if _, err := runEngine(e, st, 1); err != nil {
					t.Fatal(err)
				}
			})
			if got := seen["discharged"]; got == 0 || got > tc.most {
				t.Errorf("the facts discharged guards %d times in a run; want 1 to %d", got, tc.most)
			}
			agree(t, e, st)
		})
	}
	// k <= i + 1000 reads the outer loop's variable: its facts are each
	// entry's.
	e := parse(t, strings.Replace(mmm, "k < B_len1", "k <= i + 1000", 1), st)
	seen := events(func() { agree(t, e, st) })
	if seen["discharged"] < n {
		t.Errorf("a guard on the row's variable was discharged %d times; want one per row at least (%d)", seen["discharged"], n)
	}
}
