package engine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/storel/storel/ir"
)

// rowsShape is a nested @dense result {@dense i -> {@dense j -> real}}
// built row by row, as MTTKRP and MMM build theirs.
var rowsShape = &bspec{depth: 2, real: true, dense: true, kid: &bspec{depth: 1, real: true, dense: true}}

// buildRows adds, for every row i of rows (keys i in order, each row
// visited once unless reopen), the entries (j, v) of that row through
// builder.child, and returns the frozen result.
func buildRows(rows [][]int64, reopen bool) dict {
	b := newBuilder(rowsShape)
	for i, row := range rows {
		c := b.child(int64(i))
		for _, j := range row {
			c.addReal(j, float64(j+1))
		}
	}
	if reopen {
		for i := len(rows) - 1; i >= 0; i -= 3 {
			c := b.child(int64(i))
			for _, j := range rows[i] {
				c.addReal(j, 1)
			}
		}
	}
	return b.freeze()
}

// randomRows returns n rows of about per keys each below width.
func randomRows(n, per, width int, seed uint64) [][]int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([][]int64, n)
	for i := range rows {
		m := rng.IntN(2*per + 1)
		for range m {
			rows[i] = append(rows[i], int64(rng.IntN(width)))
		}
	}
	return rows
}

// BenchmarkBuildRows: the per-row cost of a nested @dense result: rows
// of few entries (MTTKRP on WordNet: 1.5 entries a row of 25 keys) and
// of many (MMM: a quarter of 250 keys), frozen and listed as a writer
// would list them.
func BenchmarkBuildRows(b *testing.B) {
	for _, c := range []struct {
		name       string
		per, width int
	}{{"few", 1, 25}, {"quarter", 60, 250}} {
		rows := randomRows(100000, c.per, c.width, 3)
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				d := buildRows(rows, false)
				n := 0
				for p := range d.size() {
					n += d.dictAt(p).size()
				}
				if n == 0 {
					b.Fatal("empty result")
				}
			}
		})
	}
}

// TestRowsAgainstMaps: rows of a nested @dense result, added to in any
// order (reopened), at keys inside the slice, spilled (negative or far
// beyond it) and cancelling to zero, by one builder or by three merged as
// workers' are, freeze to exactly the non-zero entries of a map-based
// reference: rows frozen as they are (rowLeaf) must hold no zeros.
//
// Half of the trials add runs of entries of one row with scatterAdd, as
// the loops of sparse products do, so that rows are marked in a bitmap
// or (useSweep) swept whole, besides listed.
func TestRowsAgainstMaps(t *testing.T) {
	defer func(l int64, s bool) { narrowKeyLimit, useSweep = l, s }(narrowKeyLimit, useSweep)
	rng := rand.New(rand.NewPCG(7, 8))
	sequential := map[string]int{}
	defer func() {
		// Enough trials stayed in sequential mode to the end, built in
		// one piece and merged from three.
		if !t.Failed() && (sequential["one"] < 40 || sequential["merged"] < 25) {
			t.Errorf("trials frozen in sequential mode: %v", sequential)
		}
	}()
	for trial := range 400 {
		// Every other trial, rows with keys past 20 keep 8-byte keys.
		narrowKeyLimit = []int64{math.MaxInt32, 20}[trial/3%2]
		scatter := trial%4 >= 2
		useSweep = trial%8 >= 4
		nrows := 1 + rng.IntN(40)
		width := []int{4, 25, 300}[trial%3]
		// One trial in three adds the rows in order (sequential mode,
		// seqrows.go), half of those without spilled keys, which would
		// end the mode.
		inOrder := trial%3 == 1
		spills := !inOrder || trial%2 == 0
		type op struct {
			i, j int64
			v    float64
		}
		var ops []op
		for range rng.IntN(400) {
			o := op{i: int64(rng.IntN(nrows)), j: int64(rng.IntN(width)), v: float64(1 + rng.IntN(5))}
			switch rng.IntN(10) {
			case 0:
				if !spills {
					break
				}
				o.j = -1 - int64(rng.IntN(3)) // spilled below the slice
			case 1:
				if !spills {
					break
				}
				o.j = 1<<20 + int64(rng.IntN(3)) // spilled beyond it
			case 2:
				o.v = 0 // adds no entry (and lists no key)
			}
			ops = append(ops, o)
			if rng.IntN(4) == 0 { // cancelled, later or at once
				ops = append(ops, op{o.i, o.j, -o.v})
			}
		}
		rng.Shuffle(len(ops), func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
		if inOrder {
			slices.SortStableFunc(ops, func(a, b op) int { return int(a.i - b.i) })
		} else if scatter && rng.IntN(2) == 0 {
			// Long runs of one row, each row visited once or twice.
			slices.SortStableFunc(ops[:rng.IntN(len(ops)+1)], func(a, b op) int { return int(a.i - b.i) })
		}
		want := map[int64]map[int64]float64{}
		for _, o := range ops {
			if want[o.i] == nil {
				want[o.i] = map[int64]float64{}
			}
			want[o.i][o.j] += o.v
		}
		add := func(b *builder, ops []op) {
			for len(ops) > 0 {
				if !scatter {
					b.child(ops[0].i).addReal(ops[0].j, ops[0].v)
					ops = ops[1:]
					continue
				}
				n := 1
				for n < len(ops) && ops[n].i == ops[0].i {
					n++
				}
				idx, vals := make([]int64, n), make([]float64, n)
				for q, o := range ops[:n] {
					idx[q], vals[q] = o.j, o.v
				}
				scatterAdd(b.child(ops[0].i), idx, vals, 1)
				ops = ops[n:]
			}
		}
		one := newBuilder(rowsShape)
		add(one, ops)
		// Three workers, cut at row boundaries in half the trials in
		// order (their rows then appended), anywhere in the others.
		var split func(a, b op) bool
		if inOrder && trial/6%2 == 0 {
			split = func(a, b op) bool { return a.i != b.i } // the rows, not a row
		}
		w0 := threeWorkers(rng, rowsShape, ops, split, add)
		for name, d := range map[string]dict{"one": one.freeze(), "merged": w0.freeze()} {
			if _, ok := d.(*seqNode); ok {
				sequential[name]++
			}
			checkEntries(t, d, want)
			rows := 0
			for i := range int64(nrows) {
				var keys []int64
				for j, v := range want[i] {
					if v != 0 {
						keys = append(keys, j)
					}
				}
				slices.Sort(keys)
				row := d.getDict(i)
				if len(keys) > 0 {
					rows++
				}
				if row.size() != len(keys) {
					t.Fatalf("trial %d %s row %d: %d entries, want %d", trial, name, i, row.size(), len(keys))
				}
				for p, j := range keys {
					if row.keyAt(p) != j || row.realAt(p) != want[i][j] {
						t.Fatalf("trial %d %s row %d entry %d: %d -> %v, want %d -> %v", trial, name, i, p, row.keyAt(p), row.realAt(p), j, want[i][j])
					}
					if v, _ := row.getReal(j); v != want[i][j] || !listed(row, j) {
						t.Fatalf("trial %d %s row %d: lookup of %d: %v, want %v", trial, name, i, j, v, want[i][j])
					}
				}
				// Absent keys, some of them past 4 bytes.
				for _, j := range []int64{-1 << 40, -5, int64(width), 1 << 19, 1<<32 + 1} {
					if v, _ := row.getReal(j); want[i][j] == 0 && (v != 0 || listed(row, j)) {
						t.Fatalf("trial %d %s row %d: absent key %d found: %v", trial, name, i, j, v)
					}
				}
			}
			if d.size() != rows {
				t.Fatalf("trial %d %s: %d rows, want %d", trial, name, d.size(), rows)
			}
		}
	}
}

// threeWorkers builds ops as three workers would, cut at two random
// places (moved on while split, if not nil, says no cut may fall between
// two ops), by add into a builder of spec each, and returns their
// builders merged as parallelSum merges them.
func threeWorkers[O any](rng *rand.Rand, spec *bspec, ops []O, split func(a, b O) bool, add func(*builder, []O)) *builder {
	cuts := []int{0, rng.IntN(len(ops) + 1), rng.IntN(len(ops) + 1), len(ops)}
	slices.Sort(cuts)
	for c := 1; c <= 2; c++ {
		for split != nil && cuts[c] > 0 && cuts[c] < len(ops) && !split(ops[cuts[c]-1], ops[cuts[c]]) {
			cuts[c]++
		}
	}
	cuts[2] = max(cuts[1], cuts[2])
	var ws [3]*builder
	for w := range ws {
		ws[w] = newBuilder(spec)
		add(ws[w], ops[cuts[w]:cuts[w+1]])
	}
	ws[0].mergeRoots(ws[1:])
	return ws[0]
}

// checkEntries checks that Result.Entries lists the non-zero entries of
// want, a dictionary of depth 2, in order, and nothing else.
func checkEntries(t *testing.T, d dict, want map[int64]map[int64]float64) {
	t.Helper()
	flat := map[[3]int64]float64{}
	for i, row := range want {
		for j, v := range row {
			flat[[3]int64{i, j}] = v
		}
	}
	checkEntriesOf(t, d, 2, flat)
}

// checkEntriesOf checks that Result.Entries lists the non-zero entries of
// want, a dictionary of the given depth (at most 3) by coordinates, in
// order, and nothing else.
func checkEntriesOf(t *testing.T, d dict, depth int, want map[[3]int64]float64) {
	t.Helper()
	type entry struct {
		c [3]int64
		v float64
	}
	var wants, got []entry
	for c, v := range want {
		if v != 0 {
			wants = append(wants, entry{c, v})
		}
	}
	slices.SortFunc(wants, func(a, b entry) int { return slices.Compare(a.c[:], b.c[:]) })
	r := &Result{Type: ir.Type{Base: ir.Real, Depth: depth}, d: d}
	r.Entries(func(c []int64, _ int64, f float64) {
		var e entry
		copy(e.c[:], c)
		e.v = f
		got = append(got, e)
	})
	if !slices.Equal(got, wants) {
		t.Fatalf("entries:\n got %v\nwant %v", got, wants)
	}
}

// TestSequentialLongRows: rows too long for the level's blocks (more
// than maxBlock/4 entries) get storage of their own, as a list or as a
// dense slice, between short rows that share blocks (enough of them
// first that the current block is longer than a long row); in
// sequential mode every row keeps its entries.
func TestSequentialLongRows(t *testing.T) {
	long := maxBlock/4 + 100
	short := int64(30000)
	want := map[int64]map[int64]float64{}
	b := newBuilder(rowsShape)
	for i := range short + 12 {
		want[i] = map[int64]float64{}
		var keys []int64
		switch {
		case i >= short && i%4 == 0: // a long list: every third key
			for k := 0; k < 3*long; k += 3 {
				keys = append(keys, int64(k))
			}
		case i >= short && i%4 == 1: // a long dense row
			for k := range long {
				keys = append(keys, int64(k))
			}
		default: // short lists
			keys = []int64{i % 7, 40 + i%11}
		}
		c := b.child(i)
		for _, k := range keys {
			v := float64(i%13 + k + 1)
			c.addReal(k, v)
			want[i][k] = v
		}
	}
	d := b.freeze()
	if _, ok := d.(*seqNode); !ok {
		t.Fatalf("left sequential mode: %T", d)
	}
	checkEntries(t, d, want)
}

// A run of lanes added to a new sequential row (addRow, as a lifted loop
// writes each outer key's dense row) keeps the row appending, where it
// is to stay; runs that repeat keys, start past 0, hold zeros or follow
// entries at greater keys still add up as addReal would.
func TestAddRowAppends(t *testing.T) {
	b := newBuilder(rowsShape)
	want := map[int64]map[int64]float64{}
	add := func(c *builder, i, lo int64, vals []float64) {
		c.addRow(lo, vals)
		for q, v := range vals {
			if want[i] == nil {
				want[i] = map[int64]float64{}
			}
			want[i][lo+int64(q)] += v
		}
	}
	for i := range int64(400) {
		vals := make([]float64, 4+i%13)
		for q := range vals {
			vals[q] = float64((int64(q)*7+i)%5) - 1 // some zeros
		}
		c := b.child(i)
		lo := (i % 3) * 2
		add(c, i, lo, vals)
		if i%5 == 0 {
			if !c.app {
				t.Fatalf("row %d: a run into a new row settled it", i)
			}
		}
		switch i % 4 {
		case 1: // the same keys again
			add(c, i, lo, vals)
		case 2: // a key below the run
			c.addReal(0, 3)
			want[i][0] += 3
		}
	}
	for i, row := range want {
		for k, v := range row {
			if v == 0 {
				delete(row, k)
			}
		}
		if len(row) == 0 {
			delete(want, i)
		}
	}
	d := b.freeze()
	if _, ok := d.(*seqNode); !ok {
		t.Fatalf("left sequential mode: %T", d)
	}
	checkEntries(t, d, want)
}

// TestMergeRootsGrowOnce: the rows of many parts in sequential mode
// (a result split in chunks, each a private builder) merge by appending
// their records after the ones before, sized once for all the parts:
// merging sixteen parts allocates no more than merging two, and the
// merged rows are every part's.
func TestMergeRootsGrowOnce(t *testing.T) {
	const perPart = 300
	parts := func(n int) []*builder {
		bs := make([]*builder, n)
		for w := range bs {
			bs[w] = newBuilder(rowsShape)
			for i := range int64(perPart) {
				bs[w].child(int64(w)*perPart+i).addReal(i%7, float64(w+1))
			}
		}
		return bs
	}
	mallocs := func(n int) (uint64, dict) {
		bs := parts(n)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		bs[0].mergeRoots(bs[1:])
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs, bs[0].freeze()
	}
	two, _ := mallocs(2)
	sixteen, d := mallocs(16)
	if sixteen > two+2 {
		t.Errorf("merging 16 parts took %d allocations, 2 parts %d: the records grew part after part", sixteen, two)
	}
	if _, ok := d.(*seqNode); !ok {
		t.Fatalf("the merged rows left sequential mode: %T", d)
	}
	want := map[int64]map[int64]float64{}
	for w := range 16 {
		for i := range int64(perPart) {
			want[int64(w)*perPart+i] = map[int64]float64{i % 7: float64(w + 1)}
		}
	}
	checkRows(t, d, want)
}
