package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/storage"
)

// The rows of merges the nest takes when it is let (nestRowMerges): the
// loops over C's row whose body is one merge into the row (a product of
// the merge and factors, or the merge adding into the row's entry), alone
// or inside the loop over A's row (MTTKRP's nest), guarded or not.
var rowMergeNames = []string{
	"the guard in front", "invariant factors, no guard",
	"the nest as the optimizer writes it for the e2e factors",
	"the loop over C's row", "the fixed segment second, no guard",
	"MTTKRP's nest as the optimizer writes it on orghs", "the nest behind a guard on a scalar",
	"SDDMM's rows: a factor at the loop's position times a merge-dot",
	"a merge-dot alone, the fixed operand second",
	"a merge-dot times factors read at the key and outside the loop",
}

// rowDotPlans are rows of merge-dots (SDDMM's shape with CSR factors)
// over mergeData: C's row i against A's row i and B's row j.
var rowDotPlans = []struct{ name, plan string }{
	{"SDDMM's rows: a factor at the loop's position times a merge-dot", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(p2) * (merge(<p1, p3, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      A_val(p1) * B_val(p3)) } }`},
	{"a merge-dot alone, the fixed operand second", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> merge(<p3, p1, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), A_idx2(A_pos2(i):A_pos2(i + 1))>)
      B_val(p3) * A_val(p1) } }`},
	{"a merge-dot times factors read at the key and outside the loop", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, j> in C_idx2(C_pos2(i):C_pos2(i + 1)))
    { @dense j -> C_val(j) * A_val(i) * (merge(<p1, p3, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(j):B_pos2(j + 1))>)
      A_val(p1) * B_val(p3)) } }`},
}

// TestRowsOfMergesInNest runs the rows of merges in the nest against the
// interpreter (bits and errors, 1 and 3 threads) on mergeData spoiled as
// TestMergeLoops spoils it, and checks that the nest took every loop of
// them: explain names no older path.
func TestRowsOfMergesInNest(t *testing.T) {
	defer func() { nestRowMerges = false }()
	nestRowMerges = true
	plans := map[string]string{}
	for _, pc := range slices.Concat(mergeRowPlans, mergeLoopPlans, rowDotPlans) {
		plans[pc.name] = pc.plan
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, name := range rowMergeNames {
		plan := plans[name]
		if plan == "" {
			t.Fatalf("no plan %q", name)
		}
		for trial := range 80 {
			st := mergeData(trial, rng)
			spoilMergeData(st, trial, rng)
			e := parse(t, plan, st)
			k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
			if err != nil {
				t.Fatal(err)
			}
			if x := k.String(); strings.Contains(x, "older path") || !strings.Contains(x, "iterator: merge") {
				t.Fatalf("%s: not all in the nest:\n%s", name, x)
			}
			agree(t, e, st)
		}
	}
}

// BenchmarkRowsOfMerges compares the nest's rows of merges with the
// older paths' loops (mergerow.go, mergeloop.go) on SDDMM with CSR
// factors (rank 8) and MTTKRP's nest as the optimizer writes it for
// sparse factors (fibers of an entry or two, rows of C and D of about
// one), with its guards and without, in alternate runs: go test ./engine
// -run XXX -bench RowsOfMerges -benchtime 40x -count 3.
func BenchmarkRowsOfMerges(b *testing.B) {
	rng := rand.New(rand.NewPCG(43, 44))
	sddmm := storage.Store{}
	randCSR(4000, 4000, 240_000, rng).store(sddmm, "S")
	randCSR(4000, 8, 32_000, rng).store(sddmm, "U")
	randCSR(4000, 8, 32_000, rng).store(sddmm, "V")
	mttkrp := storage.Store{}
	a := randCSR(20_000, 19_000, 300_000, rng)
	a.store(mttkrp, "A")
	randCSR(len(a.idx), 20, len(a.idx)*6/5, rng).store(mttkrp, "E")
	randCSR(19_000, 25, 15_000, rng).store(mttkrp, "F")
	randCSR(25, 20, 16, rng).store(mttkrp, "B")
	mttkrp["lastB"] = storage.IntScalar(24)
	plans := map[string]string{}
	for _, pc := range mergeLoopPlans {
		plans[pc.name] = pc.plan
	}
	for _, c := range []struct {
		name, plan string
		st         storage.Store
	}{
		{"SDDMM", nestMergePlans[2].plan, sddmm},
		{"MTTKRP-guarded", plans["MTTKRP's nest as the optimizer writes it on orghs"], mttkrp},
		// The e2e plan once the optimizer has proven its guards.
		{"MTTKRP", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      merge(<p5, p3, _> in <B_idx2(B_pos2(j):B_pos2(j + 1)), E_idx2(E_pos2(p2):E_pos2(p2 + 1))>)
        { @dense j -> E_val(p3) * F_val(q) * B_val(p5) } }`, mttkrp},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Alternate runs of the two kernels, which resists the load
			// of a shared machine better than separate benchmarks.
			var ks [2]*Kernel
			for i := range ks {
				nestRowMerges = i == 1
				k, err := Compile(parse(b, c.plan, c.st), SchemaOf(c.st), Options{Threads: 1})
				nestRowMerges = false
				if err != nil {
					b.Fatal(err)
				}
				ks[i] = k
			}
			var ts [2][]time.Duration
			for range b.N {
				for i, k := range ks {
					start := time.Now()
					if _, err := k.Exec(c.st); err != nil {
						b.Fatal(err)
					}
					ts[i] = append(ts[i], time.Since(start))
				}
			}
			med := func(t []time.Duration) float64 {
				slices.Sort(t)
				return float64(t[len(t)/2].Microseconds()) / 1000
			}
			older, nest := med(ts[0]), med(ts[1])
			b.ReportMetric(older, "older-ms")
			b.ReportMetric(nest, "nest-ms")
			b.ReportMetric(nest/older, "nest/older")
		})
	}
}
