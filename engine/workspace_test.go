package engine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Dense levels below the outermost share a workspace (workspace.go).
// These plans exercise its paths against the interpreter: builders closed
// and reopened in every order, keys outside the slice, entries that cancel,
// shared views, lookups into the result, ints, several workers.
func TestNestedDenseLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	st := storage.Store{}
	csr(st, "A", 30, 40, 300, rng)
	csr(st, "B", 40, 300, 4000, rng) // rows of B: up to 300 keys, so reopened rows outgrow the workspace
	st["R"] = storage.RealArray([]float64{1, 0, -2, 3.5, 0, 4})
	st["K"] = storage.IntArray([]int64{3, 1, 4, 1, 5, 9, 2, 6})
	plans := map[string]string{
		// Row by row (each row opened once).
		"mmm": `sum(<i, _> in 0:A_len1) { @dense i ->
			sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
				sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> A_val(p) * B_val(q) } }`,
		// Outer product order: rows of the result reopened over and over.
		"mmm by k": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> { @dense i -> A_val(p) * B_val(q) } }`,
		"mmm by k, three levels": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1)))
				{ @dense j % 7 -> { @dense i -> { @dense j -> A_val(p) * B_val(q) } } }`,
		// Keys far beyond the slice and negative keys spill to maps.
		"spilled keys": `sum(<i, _> in 0:A_len1) { @dense i ->
			sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
				{ @dense (k - 20) * 70001 -> A_val(p) } + { @dense k * 3000 -> A_val(p) } }`,
		"spilled kids": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			{ @dense k -> { @dense (i - 10) * 100003 -> { @dense i -> A_val(p) } } }`,
		// Entries that cancel, then come back.
		"cancelling": `sum(<i, _> in 0:A_len1) { @dense i ->
			sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
				({ @dense k -> A_val(p) } - { @dense k -> A_val(p) } + { @dense k % 3 -> A_val(p) }) }`,
		// Whole views stored as children, then added to.
		"views": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			{ @dense k % 5 -> { @dense i % 4 -> R } }`,
		// Children at keys out of order: sorted, or marked and swept.
		"scattered kids": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			{ @dense i % 3 -> { @dense (k * 7919) % 1000 -> { @dense 1 -> A_val(p) } } }`,
		"banded kids": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			{ @dense i % 2 -> { @dense 500 + (k * 37) % 60 -> { @dense i -> A_val(p) } } }`,
		"reopened kids": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense k -> { @dense j -> { @dense 0 -> A_val(p) * B_val(q) } } }`,
		// Sparse rows reopened until they get slices of their own.
		"alternating ints": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j % 2 -> { @dense (i * 300 + j) * 4 -> 1 } }`,
		"alternating reals": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j % 2 -> { @dense (i * 300 + j) * 4 -> B_val(q) } }`,
		"ints": `sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
			{ @dense k % 6 -> { @dense i -> k * i } }`,
		// Lookups into a built matrix with workspace rows.
		"lookup": `let M = sum(<i, _> in 0:A_len1) sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
				{ @dense k -> { @dense i -> A_val(p) } } in
			sum(<a, k> in K) sum(<b, i> in K) M(k)(i) * 10 + M(i)(k)`,
		"negated product": `sum(<i, _> in 0:A_len1) { @dense i % 3 ->
			-({ @dense i -> { @dense 2 -> 1.5 } } * sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense i -> { @dense 2 -> A_val(p) } }) }`,
		"under hash": `sum(<i, _> in 0:A_len1) { @hash i % 5 ->
			sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i+1)))
				sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k+1))) { @dense j -> A_val(p) * B_val(q) } }`,
	}
	for name, src := range plans {
		t.Run(name, func(t *testing.T) {
			agree(t, parse(t, src, st), st)
		})
	}
}

// TestSpillThenCover adds at a key that first spills (too far beyond the
// slice) and is later covered by the growing slice: one entry, not two.
func TestSpillThenCover(t *testing.T) {
	st := storage.Store{"K": storage.IntArray([]int64{10, 200000, 65000, 130000, 190000, 200000, -4, 3})}
	for _, src := range []string{
		`sum(<p, k> in K) { @dense k -> 1.5 }`,
		`sum(<p, k> in K) { @dense k -> 2 }`,
		`sum(<p, k> in K) { @dense k -> { @dense 1 -> 1.5 } }`,
		`sum(<p, k> in K) { @dense p % 2 -> { @dense k -> 1.5 } }`,
	} {
		got := agree(t, parse(t, src, st), st)
		if d := got.(*value.Dict); len(d.Keys) != 7 && len(d.Keys) != 2 {
			t.Errorf("%s: %d keys: %s", src, len(d.Keys), value.Format(got))
		}
	}
}

// TestNestedDenseMemory checks that a dense level below the outermost
// costs its entries, not its key range, per outer entry: 2000 rows of
// one entry each over a range of a million keys.
func TestNestedDenseMemory(t *testing.T) {
	const rows, width = 2000, 1_000_000
	pos := make([]int64, rows+1)
	idx := make([]int64, rows)
	val := make([]float64, rows)
	for i := range rows {
		pos[i+1] = int64(i + 1)
		idx[i] = int64((i * 7919) % width)
		val[i] = float64(i%5 + 1)
	}
	st := storage.Store{
		"A_len1": storage.IntScalar(rows),
		"A_pos2": storage.IntArray(pos),
		"A_idx2": storage.IntArray(idx),
		"A_val":  storage.RealArray(val),
	}
	e := parse(t, `sum(<i, _> in 0:A_len1) { @dense i ->
		sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) } }`, st)
	k, err := Compile(e, SchemaOf(st), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := k.Exec(st)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	r.Entries(func([]int64, int64, float64) { n++ })
	runtime.ReadMemStats(&after)
	if n != rows {
		t.Fatalf("%d entries, want %d", n, rows)
	}
	// One workspace of the range (8 MB) plus the entries; a slice per
	// row would be 16 GB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("allocated %d MB", got>>20)
	}
}

// TestDenseStreakEnds: rows that fill their keys start a streak of rows
// with slices of their own; rows of one entry over a million keys that
// follow must end it (a slice each would be 16 GB).
func TestDenseStreakEnds(t *testing.T) {
	const dense, sparse, width = 50, 2000, 1_000_000
	pos := []int64{0}
	var idx []int64
	var val []float64
	for i := range dense {
		for j := range 100 {
			idx = append(idx, int64(j))
			val = append(val, float64(i+j%3))
		}
		pos = append(pos, int64(len(idx)))
	}
	for i := range sparse {
		idx = append(idx, int64((i*7919)%width))
		val = append(val, 1.5)
		pos = append(pos, int64(len(idx)))
	}
	st := storage.Store{
		"A_len1": storage.IntScalar(dense + sparse),
		"A_pos2": storage.IntArray(pos),
		"A_idx2": storage.IntArray(idx),
		"A_val":  storage.RealArray(val),
	}
	e := parse(t, `sum(<i, _> in 0:A_len1) { @dense i ->
		sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) } }`, st)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := runEngine(e, st, 1)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if d := got.(*value.Dict); len(d.Keys) != dense+sparse {
		t.Fatalf("%d rows", len(d.Keys))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 128<<20 {
		t.Errorf("allocated %d MB", got>>20)
	}
	small := storage.Store{}
	for k, v := range st {
		small[k] = v
	}
	small["A_len1"] = storage.IntScalar(dense + 40)
	agree(t, parse(t, `sum(<i, _> in 0:A_len1) { @dense i ->
		sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) } }`, small), small)
}

// TestHasNonZeros checks the streak's test of a row against a count of
// its non-zeros, for every threshold, on rows of reals (-0 is zero) and
// ints of lengths around the counting block.
func TestHasNonZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 250} {
		reals, ints := make([]float64, n), make([]int64, n)
		for i := range reals {
			switch rng.IntN(3) {
			case 0:
				reals[i], ints[i] = float64(rng.IntN(5)+1), int64(rng.IntN(5)+1)
			case 1:
				reals[i] = math.Copysign(0, -1)
			}
		}
		nzr, nzi := 0, 0
		for i := range reals {
			if reals[i] != 0 {
				nzr++
			}
			if ints[i] != 0 {
				nzi++
			}
		}
		for need := 0; need <= n+1; need++ {
			if got := hasNonZeros(reals, nil, need); got != (nzr >= need) {
				t.Errorf("reals of length %d with %d non-zeros: hasNonZeros(%d) = %v", n, nzr, need, got)
			}
			if got := hasNonZeros(nil, ints, need); got != (nzi >= need) {
				t.Errorf("ints of length %d with %d non-zeros: hasNonZeros(%d) = %v", n, nzi, need, got)
			}
		}
	}
}

// TestStreakKeepsUnjudgedSparseRows: Gustavson rows (a row of B scattered
// per entry of A) where every tenth row is dense but for two sparse rows
// after it and one whose products cancel to zeros: a streak of dense
// rows judges only every streakCheck-th row, so the sparse rows between
// stay dense slices and the streak goes on (one sparse row ended it,
// and the next went through the workspace into a list). The values are
// the interpreter's at 1 and 3 threads, cancelled rows included.
func TestStreakKeepsUnjudgedSparseRows(t *testing.T) {
	const n, width = 400, 64
	// B: rows 0-3 full, row 4 one key, rows 5 and 6 the same full row.
	bpos := []int64{0}
	var bidx []int64
	var bval []float64
	for k := range 7 {
		for j := range width {
			if k == 4 && j != 9 {
				continue
			}
			bidx = append(bidx, int64(j))
			bval = append(bval, float64(k%5+1)+float64(j)/8)
		}
		bpos = append(bpos, int64(len(bidx)))
	}
	apos := []int64{0}
	var aidx []int64
	var aval []float64
	sparse := 0
	for i := range n {
		switch i % 10 {
		case 3, 4: // one entry
			aidx, aval = append(aidx, 4), append(aval, 2)
			sparse++
		case 7: // rows 5 and 6, cancelling: zeros only
			aidx, aval = append(aidx, 5, 6), append(aval, 1.5, -1.5)
		default:
			aidx, aval = append(aidx, 0, 2, 3), append(aval, 1, float64(i%3)-1, 0.25)
		}
		apos = append(apos, int64(len(aidx)))
	}
	st := storage.Store{
		"A_len1": storage.IntScalar(n), "A_pos2": storage.IntArray(apos),
		"A_idx2": storage.IntArray(aidx), "A_val": storage.RealArray(aval),
		"B_pos2": storage.IntArray(bpos), "B_idx2": storage.IntArray(bidx), "B_val": storage.RealArray(bval),
	}
	e := parse(t, `sum(<i, _> in 0:A_len1)
		{ @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
		  let t1 = A_val(p2) in
		  sum(<p1, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> B_val(p1) * t1 } }`, st)
	agree(t, e, st)
	for _, threads := range []int{1, 3} {
		k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		res, err := k.Exec(st)
		if err != nil {
			t.Fatal(err)
		}
		lists := 0
		for i := range n {
			if _, ok := res.d.getDict(int64(i)).(*rowLeaf); ok {
				lists++
			}
		}
		// Only a judged row, every streakCheck-th, ends the streak.
		if lists > sparse/streakCheck {
			t.Errorf("%d threads: %d rows made lists of %d sparse ones, want at most %d", threads, lists, sparse, sparse/streakCheck)
		}
	}
}
