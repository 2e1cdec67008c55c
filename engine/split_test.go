package engine

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSplitChunksShareWork: chunks cover the iterations in order, none
// is empty, and each holds about its share of the work, however skewed
// the rows (a few rows hold most of the positions, as in a web graph).
func TestSplitChunksShareWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 3, 17, 1000} {
		pos := make([]int64, n+1)
		for i := 0; i < n; i++ {
			k := int64(rng.IntN(3))
			if rng.IntN(50) == 0 {
				k = 5000
			}
			pos[i+1] = pos[i] + k
		}
		lo := int64(5) // positions start at lo
		work := func(p int64) int64 { return p + clampedAt(pos, p-lo) }
		for _, parts := range []int{1, 2, 3, 8, 16} {
			cs := splitChunks(int64(n), parts, lo, work)
			if len(cs) == 0 || len(cs) > parts || cs[0][0] != 0 || cs[len(cs)-1][1] != int64(n) {
				t.Fatalf("n %d parts %d: chunks %v do not cover 0..%d", n, parts, cs, n)
			}
			total := work(lo+int64(n)) - work(lo)
			for i, c := range cs {
				if c[0] >= c[1] || (i > 0 && c[0] != cs[i-1][1]) {
					t.Fatalf("n %d parts %d: chunks %v are not contiguous and non-empty", n, parts, cs)
				}
				// A chunk passes its share by at most its last row.
				w := work(lo+c[1]) - work(lo+c[0])
				last := work(lo+c[1]) - work(lo+c[1]-1)
				if share := total / int64(len(cs)); len(cs) > 1 && w > share+last+1 {
					t.Errorf("n %d parts %d: chunk %v has work %d, share %d", n, parts, c, w, share)
				}
			}
		}
	}
}

// TestDenseMergeByWorkers: private dense results added by workers over
// ranges of keys give the bits a merge by one worker gives.
func TestDenseMergeByWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	a := randCSR(400, 5000, 8000, rng)
	for i := range a.val {
		a.val[i] = rng.Float64()*2 - 1 // not exactly summable
	}
	st := storage.Store{"x": storage.RealArray(randVec(5000, rng)), "beta": storage.RealScalar(math.E)}
	a.store(st, "A")
	saved := denseMergeMin
	defer func() { denseMergeMin = saved }()
	for _, plan := range []string{planBATAX,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) * x(i) }`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> i }`} {
		e := parse(t, plan, st)
		for _, threads := range []int{2, 3, 7} {
			denseMergeMin = math.MaxInt
			one, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			denseMergeMin = 1
			many, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(one, many, 0) {
				t.Errorf("%s, %d threads: the merge by workers differs from the merge by one", plan, threads)
			}
		}
	}
}

// mmmOptimized is the optimizer's plan of MMM (CSR x CSR), which the
// older path runs.
const mmmOptimized = `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
      let t1 = A_val(p2) in
      sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1)))
        { @dense j -> B_val(p1) * t1 } }`

// TestSpilledPartialsMerge: private results whose keys a dense level does
// not reach (hash keys; rows of a later chunk far past the first) are
// kept in maps; their keys, sorted by the worker that built them, merge
// into the interpreter's answer at 2, 3 and 7 threads.
func TestSpilledPartialsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	// Every 500th row of A holds a few entries; B's rows are long, so
	// the product's rows are dense rows of a workspace, not sequential.
	n := 3 * maxDenseJump
	a := &sparseCSR{n: n, m: 50, pos: make([]int64, 1, n+1)}
	for i := 0; i < n; i++ {
		if i%500 == 7 {
			for _, k := range []int64{3, 17, 40} {
				a.idx = append(a.idx, k)
				a.val = append(a.val, float64(rng.IntN(5)+1))
			}
		}
		a.pos = append(a.pos, int64(len(a.idx)))
	}
	b := randCSR(50, 250, 50*150, rng)
	st := storage.Store{}
	a.store(st, "A")
	b.store(st, "B")
	for _, plan := range []string{planMMM, mmmOptimized,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @hash 1000000 * j + i -> A_val(p) }`} {
		e := parse(t, plan, st)
		want := agree(t, e, st)
		for _, threads := range []int{2, 7} {
			got, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, want, 0) {
				t.Errorf("%d threads: %s differs from one thread", threads, plan)
			}
		}
	}
}

// TestPooledRowsStartZero: a kernel run again reuses its private rows
// from the pool, and each run's answer is the answer of a kernel
// compiled afresh, whatever the run before it added.
func TestPooledRowsStartZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	a := randCSR(300, 2000, 6000, rng)
	saved := denseMergeMin
	defer func() { denseMergeMin = saved }()
	denseMergeMin = 1
	stores := make([]storage.Store, 3)
	for i := range stores {
		stores[i] = storage.Store{"x": storage.RealArray(randVec(2000, rng)), "beta": storage.RealScalar(float64(i) - 0.5)}
		a.store(stores[i], "A")
		randCSR(2000, 60, 4000+1000*i, rng).store(stores[i], "B")
	}
	for _, plan := range []string{planBATAX,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> i * j }`,
		planMMM, mmmOptimized} {
		e := parse(t, plan, stores[0])
		k, err := Compile(e, SchemaOf(stores[0]), Options{Threads: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 1, 2, 1, 0} {
			got, err := k.Run(stores[i])
			if err != nil {
				t.Fatal(err)
			}
			want, err := runEngine(e, stores[i], 3)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, want, 0) {
				t.Fatalf("%s: run with store %d after other runs differs from a fresh kernel", plan, i)
			}
		}
	}
}

// TestInOrderRowsClaimChunks: a split run whose rows arrive in order
// (MTTKRP over CSF, keyed by the values of B's first level) takes
// claimsPerWorker chunks per worker, each into a private result of its
// own appended in chunk order, and agrees with the interpreter and, bit
// for bit, with one thread; where the keys read do not increase (B's
// first level reversed) it keeps one chunk per worker and still agrees.
func TestInOrderRowsClaimChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	b := &storage.COO{Dims: []int64{300, 26, 400}, Coords: [][]int64{nil, nil, nil}, Field: storage.FieldReal}
	seen := map[[3]int64]bool{}
	for len(b.Vals) < 4000 {
		// Rows of very unequal length: the first tenth of i holds half the entries.
		i := int64(rng.IntN(300))
		if rng.IntN(2) == 0 {
			i = int64(rng.IntN(30))
		}
		c := [3]int64{i, int64(rng.IntN(26)), int64(rng.IntN(400))}
		if seen[c] {
			continue
		}
		seen[c] = true
		for m := range 3 {
			b.Coords[m] = append(b.Coords[m], c[m])
		}
		b.Vals = append(b.Vals, float64(1+rng.IntN(8)))
	}
	formats := map[string]string{"B": "csf", "C": "csr", "D": "csr"}
	st := storeOf(t, map[string]stored{"B": {b, "csf"}, "C": {randFactor(rng, 26, 25), "csr"}, "D": {randFactor(rng, 25, 400), "csr"}})
	plan := optimizedPlan(t, "mttkrp", formats, st)
	reversed := storage.Store{}
	maps.Copy(reversed, st)
	idx1 := slices.Clone(st["B_idx1"].(*storage.Array).I)
	slices.Reverse(idx1)
	reversed["B_idx1"] = storage.IntArray(idx1)
	for _, tc := range []struct {
		name      string
		st        storage.Store
		perWorker int
	}{{"keys increasing", st, claimsPerWorker}, {"keys reversed", reversed, 1}} {
		want, err := eval.Eval(plan, tc.st)
		if err != nil {
			t.Fatal(err)
		}
		one, err := runEngine(plan, tc.st, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !value.Equal(one, want, 1e-9) {
			t.Fatalf("%s, 1 thread: engine %s\ninterpreter %s", tc.name, value.Format(one), value.Format(want))
		}
		for _, threads := range []int{2, 3} {
			bal, stop := traceBalance()
			got, err := runEngine(plan, tc.st, threads)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, one, 0) {
				t.Fatalf("%s, %d threads: %s\none thread: %s", tc.name, threads, value.Format(got), value.Format(one))
			}
			n := 0
			for _, c := range bal.chunks {
				n += c
			}
			if n != threads*tc.perWorker {
				t.Errorf("%s, %d threads: %d chunks, want %d", tc.name, threads, n, threads*tc.perWorker)
			}
		}
	}
}

// TestSplitWorkFollowsLookedUpRows: the chunks of MTTKRP over CSF share
// the rows of C its fibers walk (a fiber of B at k takes C's row k, and
// merges along it), not merely B's fibers: C's row 0 is full and the
// others are empty, and only the first half of B's rows have fibers at
// k = 0, so the first half holds all the merges.
func TestSplitWorkFollowsLookedUpRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := &storage.COO{Dims: []int64{200, 26, 400}, Coords: [][]int64{nil, nil, nil}, Field: storage.FieldReal}
	seen := map[[3]int64]bool{}
	for len(b.Vals) < 6000 {
		i, k := int64(rng.IntN(200)), int64(0)
		if i >= 100 {
			k = int64(1 + rng.IntN(25))
		}
		c := [3]int64{i, k, int64(rng.IntN(400))}
		if seen[c] {
			continue
		}
		seen[c] = true
		for m := range 3 {
			b.Coords[m] = append(b.Coords[m], c[m])
		}
		b.Vals = append(b.Vals, 1)
	}
	c := &storage.COO{Dims: []int64{26, 25}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for j := range int64(25) {
		c.Coords[0], c.Coords[1] = append(c.Coords[0], 0), append(c.Coords[1], j)
		c.Vals = append(c.Vals, 1)
	}
	formats := map[string]string{"B": "csf", "C": "csr", "D": "csr"}
	st := storeOf(t, map[string]stored{"B": {b, "csf"}, "C": {c, "csr"}, "D": {randFactor(rng, 25, 400), "csr"}})
	plan := optimizedPlan(t, "mttkrp", formats, st)
	ints := func(name string) []int64 { return st[name].(*storage.Array).I }
	pos2, idx2, cpos := ints("B_pos2"), ints("B_idx2"), ints("C_pos2")
	rows := func(from, to int64) (n int64) { // C's entries the fibers of B's rows from..to-1 walk
		for q := pos2[from]; q < pos2[to]; q++ {
			n += cpos[idx2[q]+1] - cpos[idx2[q]]
		}
		return n
	}
	saved := parallelMin
	defer func() { parallelMin = saved }()
	parallelMin = time.Hour // the chunks in turn: every one traced
	var parts [][2]int64
	var mu sync.Mutex
	chunkTrace = func(_ int, p [2]int64) func() {
		mu.Lock()
		defer mu.Unlock()
		parts = append(parts, p)
		return nil
	}
	_, err := runEngine(plan, st, 2)
	chunkTrace = nil
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2*claimsPerWorker {
		t.Fatalf("%d chunks, want %d", len(parts), 2*claimsPerWorker)
	}
	total := rows(0, int64(len(pos2)-1))
	for _, p := range parts {
		if w := rows(p[0], p[1]); float64(w) > 1.5*float64(total)/float64(len(parts)) {
			t.Errorf("chunk %v walks %d of C's %d entries walked, share %d", p, w, total, total/int64(len(parts)))
		}
	}
}

// TestLookedUpPrefix: the estimated prefix sums, from every
// lookedUpStep-th position, are exact where the work is the same over each
// step of positions, and are counted again for other arrays.
func TestLookedUpPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	lu := &lookedUp{}
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		vals := make([]int64, n)
		for i := range vals {
			if i%lookedUpStep == 0 {
				vals[i] = int64(rng.IntN(9))
			} else {
				vals[i] = vals[i-1]
			}
		}
		w := func(q int64) int64 { return vals[q] * 3 }
		want := int64(0)
		for p := int64(0); p <= int64(n); p++ {
			if got := lu.at(vals, nil, p, w); got != want {
				t.Fatalf("n %d: prefix at %d is %d, want %d", n, p, got, want)
			}
			if p < int64(n) {
				want += w(p)
			}
		}
		if got := lu.at(vals, nil, int64(n)+5, w); got != want {
			t.Fatalf("n %d: prefix past the end %d, want %d", n, got, want)
		}
	}
}

// TestPrivateWorkers: the count of workers with private dense rows is
// the one whose loop share plus merge (parallel up to mergeLanes) is
// least, ties to fewer.
func TestPrivateWorkers(t *testing.T) {
	saved := mergeEntryWork
	defer func() { mergeEntryWork = saved }()
	mergeEntryWork = 1
	for _, tc := range []struct {
		work, row int64
		threads   int
		want      int
	}{
		{200, 50000, 2, 1},           // many more columns than entries
		{6_700_000, 325_557, 2, 2},   // BATAX on cnr-2000
		{6_700_000, 325_557, 16, 11}, // past mergeLanes the merge grows with W
		{8000, 1000, 3, 3},
		{2000, 1000, 2, 1}, // 1 and 2 tie
		{1000, 1000, 4, 1},
		{1 << 40, 1, 1, 1},
	} {
		if got := privateWorkers(tc.work, tc.row, tc.threads); got != tc.want {
			t.Errorf("privateWorkers(%d, %d, %d) = %d, want %d", tc.work, tc.row, tc.threads, got, tc.want)
		}
	}
}

// TestPrivateRowsOnlyWhereTheyPay: BATAX splits into one private dense
// row per worker; over a matrix with many more columns than entries the
// merge of a second row would cost more than the loop's half, so the run
// stays on one worker with no private row, and over a matrix with enough
// entries per column every worker takes chunks. Both agree with the
// interpreter at 1, 2 and 3 threads.
func TestPrivateRowsOnlyWhereTheyPay(t *testing.T) {
	saved := mergeEntryWork
	defer func() { mergeEntryWork = saved }()
	mergeEntryWork = 1
	rng := rand.New(rand.NewPCG(28, 4))
	for _, tc := range []struct {
		name           string
		n, m, nnz      int
		workers3       int // workers seen at 3 threads
		splitAtThreads bool
	}{
		{"wide", 20, 50000, 200, 0, false},
		{"square", 400, 400, 6000, 3, true},
	} {
		a := randCSR(tc.n, tc.m, tc.nnz, rng)
		st := storage.Store{"x": storage.RealArray(randVec(tc.m, rng)), "beta": storage.RealScalar(1.5)}
		a.store(st, "A")
		e := parse(t, planBATAX, st)
		want, err := eval.Eval(e, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2, 3} {
			bal, stop := traceBalance()
			got, err := runEngine(e, st, threads)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, want, 1e-9) {
				t.Fatalf("%s, %d threads: engine %s\ninterpreter %s", tc.name, threads, value.Format(got), value.Format(want))
			}
			workers := len(bal.chunks)
			switch {
			case threads == 3 && workers != tc.workers3:
				t.Errorf("%s, 3 threads: %d workers ran chunks, want %d", tc.name, workers, tc.workers3)
			case threads > 1 && !tc.splitAtThreads && workers > 1:
				t.Errorf("%s, %d threads: %d workers ran chunks, want one", tc.name, threads, workers)
			}
		}
	}
}
