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
	randCSR(m, 60, 4*m, rng).store(st, "M")
	vecStore(st, "x", m, rng)
	randCSF(40, 30, 50, 900, rng).store(st, "B")
	denseStore(st, "C", 30, 16, rng)
	denseStore(st, "D", 16, 50, rng)
	mmm := `sum(<i, _> in 0:A_len1)
	  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
	    if 0 <= k && k < M_len1 then
	      let t1 = A_val(p2) in
	      sum(<q, j> in M_idx2(M_pos2(k):M_pos2(k + 1))) { @dense j -> t1 * M_val(q) } }`
	for _, tc := range []struct {
		name, plan string
		most       int // discharges in one single-threaded run
	}{
		{"SpMV", nestSpMV, 2},
		{"BATAX", nestBATAX, 2},
		{"MMM, a guarded row lookup", mmm, 3},
		{"MTTKRP", nestMTTKRP, 5},
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
	e := parse(t, strings.Replace(mmm, "k < M_len1", "k <= i + 1000", 1), st)
	seen := events(func() { agree(t, e, st) })
	if seen["discharged"] < n {
		t.Errorf("a guard on the row's variable was discharged %d times; want one per row at least (%d)", seen["discharged"], n)
	}
}
