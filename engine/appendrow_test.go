package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestAppendRowsSkipWorkspace: rows whose keys arrive in increasing
// order, as a sorted segment gives them, are written where they stay:
// the level's workspace never gets a slice. Their entries are those of a
// map-based reference, zeros dropped (a zero added, or entries that
// cancel), repeated keys added, rows half full or more dense, the rest
// lists, real and int alike.
func TestAppendRowsSkipWorkspace(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	ints := &bspec{depth: 2, dense: true, kid: &bspec{depth: 1, dense: true}}
	for trial := range 60 {
		spec := rowsShape
		if trial%3 == 2 {
			spec = ints
		}
		b := newBuilder(spec)
		want := map[int64]map[int64]float64{}
		width := []int{3, 40, 2000}[trial%3]
		for i := int64(0); i < 50; i += 1 + int64(rng.IntN(3)) {
			c := b.child(i)
			for j := int64(rng.IntN(3)); j < int64(width); j += 1 + int64(rng.IntN(width/3+1)) {
				v := float64(rng.IntN(5) - 1) // zeros too
				repeat := rng.IntN(4) == 0
				for range 1 + btoi(repeat) {
					if spec.real {
						c.addReal(j, v)
					} else {
						c.addInt(j, int64(v))
					}
					if want[i] == nil {
						want[i] = map[int64]float64{}
					}
					want[i][j] += v
				}
				if repeat && rng.IntN(2) == 0 { // cancelled at once
					if spec.real {
						c.addReal(j, -2*v)
					} else {
						c.addInt(j, -2*int64(v))
					}
					want[i][j] -= 2 * v
				}
			}
		}
		w := b.x.tree.workspace(1)
		if len(w.reals)+len(w.ints) > 0 {
			t.Fatalf("trial %d: rows in key order went through the workspace (%d reals, %d ints)", trial, len(w.reals), len(w.ints))
		}
		d := b.freeze()
		if _, ok := d.(*seqNode); !ok {
			t.Fatalf("trial %d: rows in order left sequential mode: %T", trial, d)
		}
		checkRows(t, d, want)
	}
}

// checkRows checks d, a dictionary of rows, against want: its entries,
// each row's keys sorted, no listed zero.
func checkRows(t *testing.T, d dict, want map[int64]map[int64]float64) {
	t.Helper()
	checkEntries(t, d, want)
	checkSorted(t, d)
	checkNoZeros(t, d)
}

// TestAppendRowRuns: a row built from runs over the same keys (TTM's row
// of a fiber, one run of the factor's row per entry of the fiber), a run
// starting inside the keys so far and going past them, and single keys
// added inside a run in any order stay where they are appended: the
// workspace never gets a slice. A row whose keys skip one (a zero at a
// new key) is no run: a key before its last settles it as before. The
// entries are a map-based reference's, zeros dropped (runs that cancel).
func TestAppendRowRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 17))
	for trial := range 40 {
		b := newBuilder(rowsShape)
		want := map[int64]map[int64]float64{}
		add := func(i, k int64, v float64) {
			if want[i] == nil {
				want[i] = map[int64]float64{}
			}
			want[i][k] += v
		}
		gap := trial%4 == 3
		for i := int64(0); i < 30; i += 1 + int64(rng.IntN(2)) {
			c := b.child(i)
			width := 1 + rng.IntN(20)
			lo := int64(rng.IntN(3))
			for r := range 1 + rng.IntN(4) {
				vals := make([]float64, width)
				for q := range vals {
					vals[q] = float64(rng.IntN(7) - 3)
					if r == 0 && !gap {
						vals[q] = float64(1 + rng.IntN(3)) // no zero: the first run has no gap
					}
					if r == 2 {
						vals[q] = -want[i][lo+int64(q)] // cancels the run so far
					}
					add(i, lo+int64(q), vals[q])
				}
				c.addRow(lo, vals)
				if r == 1 {
					// Single keys inside the run, out of order, then one past it.
					for _, q := range rng.Perm(width) {
						v := float64(rng.IntN(3))
						c.addReal(lo+int64(q), v)
						add(i, lo+int64(q), v)
					}
				}
			}
			c.addReal(lo+int64(width)+1, 1)
			add(i, lo+int64(width)+1, 1)
		}
		w := b.x.tree.workspace(1)
		if used := len(w.reals)+len(w.ints) > 0; used != gap {
			t.Fatalf("trial %d: rows through the workspace %v, want %v (%d reals)", trial, used, gap, len(w.reals))
		}
		checkRows(t, b.freeze(), want)
	}
}

// TestAppendKeyedBatches: batches of keys into an appending row (the j
// of SDDMM's and TTV's rows, a batch of a segment at a time) whose keys
// all increase past the row's last go in one pass ("keys appended in one
// pass"), zeros dropped; a batch with a key out of order or repeated
// goes key by key (adding into the run, or settling). The entries are a
// map-based reference's.
func TestAppendKeyedBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 19))
	for trial := range 30 {
		b := newBuilder(rowsShape)
		want := map[int64]map[int64]float64{}
		seen := events(func() {
			for i := int64(0); i < 20; i++ {
				c := b.child(i)
				next := int64(rng.IntN(3))
				for range 1 + rng.IntN(4) {
					var keys []int64
					var vals []float64
					for range 1 + rng.IntN(12) {
						keys = append(keys, next)
						vals = append(vals, float64(rng.IntN(4)))
						next += 1 + int64(rng.IntN(3))
					}
					if trial%3 == 2 && rng.IntN(2) == 0 {
						rng.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
					}
					if want[i] == nil {
						want[i] = map[int64]float64{}
					}
					for q, k := range keys {
						want[i][k] += vals[q]
					}
					addReals(c, keys, vals)
				}
			}
		})
		if seen["keys appended in one pass"] == 0 {
			t.Errorf("trial %d: no batch appended in one pass; saw %v", trial, seen)
		}
		checkRows(t, b.freeze(), want)
	}
}

// checkNoZeros fails if a list row of d, a dictionary of depth 2, lists
// a zero: entries that cancel are no entries.
func checkNoZeros(t *testing.T, d dict) {
	t.Helper()
	for p := range d.size() {
		row := d.dictAt(p)
		if _, dense := row.(*denseLeaf); dense {
			continue // a dense row holds zeros at the keys it lacks
		}
		for q := range row.size() {
			if row.realAt(q) == 0 && row.intAt(q) == 0 {
				t.Fatalf("row %d lists key %d with a zero value", d.keyAt(p), row.keyAt(q))
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkSorted fails unless d, a dictionary of depth 2, lists its keys
// and each row's in increasing order.
func checkSorted(t *testing.T, d dict) {
	t.Helper()
	increasing := func(d dict) bool {
		for p := 1; p < d.size(); p++ {
			if d.keyAt(p) <= d.keyAt(p-1) {
				return false
			}
		}
		return true
	}
	if !increasing(d) {
		t.Fatal("rows out of order")
	}
	for p := range d.size() {
		if !increasing(d.dictAt(p)) {
			t.Fatalf("row %d: keys out of order", d.keyAt(p))
		}
	}
}

// TestAppendRowsSettle: an appending row that meets a key out of order,
// a scatter loop or a merge goes on in the workspace with the entries it
// had; the result is the reference's.
func TestAppendRowsSettle(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	for range 200 {
		b := newBuilder(rowsShape)
		want := map[int64]map[int64]float64{}
		add := func(i, j int64, v float64) {
			if want[i] == nil {
				want[i] = map[int64]float64{}
			}
			want[i][j] += v
		}
		for i := range int64(20) {
			c := b.child(i)
			for j := int64(0); j < 30; j += 1 + int64(rng.IntN(4)) {
				c.addReal(j, 1)
				add(i, j, 1)
			}
			switch rng.IntN(4) {
			case 0: // a key before the last
				j := int64(rng.IntN(30))
				c.addReal(j, 2)
				add(i, j, 2)
			case 1: // a scatter loop writing the slice directly
				idx := []int64{int64(rng.IntN(30)), 31, int64(rng.IntN(30))}
				scatterAdd(c, idx, []float64{1, 2, 3}, 1)
				for q, j := range idx {
					add(i, j, float64(q+1))
				}
			case 2: // a key a list of 4-byte keys cannot hold, or below 0
				j := []int64{-1, 1 << 40}[rng.IntN(2)]
				c.addReal(j, 5)
				add(i, j, 5)
			}
			if rng.IntN(3) == 0 { // the same row again, through child
				c = b.child(i)
				c.addReal(3, 1)
				add(i, 3, 1)
			}
		}
		d := b.freeze()
		checkEntries(t, d, want)
		checkSorted(t, d)
	}
}

// Sparse nested results of TTV and SDDMM, as the optimizer writes them,
// and a user's layout whose rows are not sorted.
const (
	planTTVNested = `sum(<p1, i> in T_idx1(T_pos1(0):T_pos1(1)))
    { @dense i -> sum(<p2, j> in T_idx2(T_pos2(p1):T_pos2(p1 + 1)))
      { @dense j -> sum(<p3, k> in T_idx3(T_pos3(p2):T_pos3(p2 + 1)))
        T_val(p3) * v_val(k) } }`
	// The rows' values read the parent's key: per row in position space.
	planTTVScaled = `sum(<p1, i> in T_idx1(T_pos1(0):T_pos1(1)))
    { @dense i -> sum(<p2, j> in T_idx2(T_pos2(p1):T_pos2(p1 + 1)))
      { @dense j -> w_val(i) * sum(<p3, k> in T_idx3(T_pos3(p2):T_pos3(p2 + 1)))
        T_val(p3) * v_val(k) } }`
	planSDDMMNested = `sum(<i, _> in 0:S_len1)
    { @dense i -> sum(<p2, j> in S_idx2(S_pos2(i):S_pos2(i + 1)))
      let t1 = sum(<k, _> in 0:U_len2) U_val(i * U_len2 + k) * V_val(j * V_len2 + k) in
      { @dense j -> S_val(p2) * t1 } }`
)

// TestSparseNestedOutputs runs TTV and SDDMM into sparse nested results
// at 1 and 3 threads against the interpreter: rows sorted (appended),
// rows with keys out of order or repeated (a layout of the user's),
// values that cancel to zero (dropped), and reads past an array's end
// (the interpreter's error). TTV's fibers of every row run as one run of
// rows, each row's into its own (the "up" event).
func TestSparseNestedOutputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	for trial := range 12 {
		tt := randCSF(30, 40, 12, 600, rng)
		if trial%3 == 1 {
			// Rows of the user's: level-2 keys shuffled within each
			// segment, some repeated.
			tt.idx2 = slices.Clone(tt.idx2)
			for p := range len(tt.pos2) - 1 {
				seg := tt.idx2[tt.pos2[p]:tt.pos2[p+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
				if len(seg) > 1 && rng.IntN(2) == 0 {
					seg[1] = seg[0]
				}
			}
		}
		st := storage.Store{}
		tt.store(st, "T")
		vlen := 12
		if trial%4 == 3 {
			vlen = 7 // reads past v's end: an error
		}
		v := randVec(vlen, rng)
		if trial%2 == 0 {
			for k := range v {
				v[k] = float64(k%3 - 1) // -1, 0, 1: many fibers sum to zero
			}
		}
		st["v_val"], st["v_len1"] = storage.RealArray(v), storage.IntScalar(int64(vlen))
		w := randVec(30-trial%2*10, rng) // shorter than T's first keys: an error
		st["w_val"], st["w_len1"] = storage.RealArray(w), storage.IntScalar(int64(len(w)))
		for _, plan := range []string{planTTVNested, planTTVScaled} {
			seen := events(func() { agree(t, parse(t, plan, st), st) })
			if seen["up"] == 0 && vlen == 12 && len(w) == 30 {
				t.Errorf("trial %d: TTV's fibers did not run as one run of rows: %v", trial, seen)
			}
		}

		s := randCSR(50, 60, 400, rng)
		st = storage.Store{}
		s.store(st, "S")
		if trial%3 == 1 {
			s.idx = slices.Clone(s.idx)
			slices.Reverse(s.idx)
			st["S_idx2"] = storage.IntArray(s.idx)
		}
		rank := 1 + rng.IntN(8)
		denseStore(st, "U", 50, rank, rng)
		vrows := 60
		if trial%4 == 3 {
			vrows = 40
		}
		denseStore(st, "V", vrows, rank, rng)
		agree(t, parse(t, planSDDMMNested, st), st)
	}
}

// BenchmarkSparseNested: TTV into a sparse nested result, fibers of one
// or two entries under short rows as in orghs (20k rows of about 17
// fibers), against a Go loop computing each fiber's sum into a slice
// aligned with the fibers (no keys written):
//
//	go test ./engine -run '^$' -bench SparseNested -count 5
func BenchmarkSparseNested(b *testing.B) {
	rng := rand.New(rand.NewPCG(28, 8))
	tt := randCSF(20000, 5000, 20, 350_000, rng)
	v := randVec(20, rng)
	st := storage.Store{"v_val": storage.RealArray(v), "v_len1": storage.IntScalar(20)}
	tt.store(st, "T")
	b.Run("storel", func(b *testing.B) { runKernel(b, planTTVNested, st, 1, 0) })
	b.Run("loop", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			out := make([]float64, len(tt.idx2))
			for p2 := range out {
				s := 0.0
				for p3 := tt.pos3[p2]; p3 < tt.pos3[p2+1]; p3++ {
					s += tt.val[p3] * v[tt.idx3[p3]]
				}
				out[p2] = s
			}
		}
	})
}

// TestRowsSizedFromTheWalk: TTV's rows, appended in order, take their
// records and entries' storage sized once from the level the walk is on:
// a hundred times the fibers cost no more allocations.
func TestRowsSizedFromTheWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 10))
	allocs := func(rows, nnz int) float64 {
		st := storage.Store{"v_val": storage.RealArray(randVec(20, rng)), "v_len1": storage.IntScalar(20)}
		randCSF(rows, 5000, 20, nnz, rng).store(st, "T")
		k, err := Compile(parse(t, planTTVNested, st), SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() {
			if _, err := k.Exec(st); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(200, 3500), allocs(20000, 350_000)
	if many > few+4 {
		t.Errorf("%v allocations for 3500 fibers, %v for 350000", few, many)
	}
}

// TestDenseRowsKeepKeyBlock: rows appended whole and closed dense (the
// rank of MTTKRP's rows) take no key from the level's key block, so the
// value blocks they fill are replaced without a new key block each time;
// the rows are what was added.
func TestDenseRowsKeepKeyBlock(t *testing.T) {
	const rows, width = 20000, 16 // about five value blocks
	b := newBuilder(rowsShape)
	vals := make([]float64, width)
	var keys *int32
	for i := range int64(rows) {
		for j := range vals {
			vals[j] = float64(i*width) + float64(j) + 1
		}
		b.child(i).addRow(0, vals)
		if i == 0 {
			keys = unsafe.SliceData(b.x.seq.w.keyBlock)
		}
	}
	if got := unsafe.SliceData(b.x.seq.w.keyBlock); got != keys {
		t.Errorf("a new key block for dense rows")
	}
	d := b.freeze()
	if d.size() != rows {
		t.Fatalf("%d rows, want %d", d.size(), rows)
	}
	for p := range rows {
		r := d.dictAt(p)
		for j := range width {
			if v, _ := r.getReal(int64(j)); d.keyAt(p) != int64(p) || v != float64(p*width+j+1) {
				t.Fatalf("row %d (key %d) at %d: %v", p, d.keyAt(p), j, v)
			}
		}
	}
}

// TestSegmentsInOrderByFacts: TTV's blocks of rows take their inner
// segments' order from the positions array's facts (values never
// decreasing, within the segmented array) rather than a pass over the
// rows; a positions array out of order (a user's layout) is checked row
// by row, and both agree with the interpreter at 1 and 3 threads.
func TestSegmentsInOrderByFacts(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 11))
	for _, sorted := range []bool{true, false} {
		tt := randCSF(40, 30, 12, 900, rng)
		st := storage.Store{}
		tt.store(st, "T")
		if !sorted {
			// A fiber's end moved past the next two fibers': it covers
			// them, the next runs backwards (empty).
			p := slices.Clone(tt.pos3)
			k := len(p) / 2
			p[k+1] = p[k+3]
			st["T_pos3"] = storage.IntArray(p)
		}
		v := randVec(12, rng)
		st["v_val"], st["v_len1"] = storage.RealArray(v), storage.IntScalar(12)
		seen := events(func() { agree(t, parse(t, planTTVNested, st), st) })
		if got := seen["segments in order by facts"] > 0; got != sorted {
			t.Errorf("positions sorted %v: segments taken in order by facts %v (%v)", sorted, got, seen)
		}
	}
}

// TestAppendIncreasing: keys that increase past the row's last are
// written with their values, zeros dropped; keys that do not (one equal
// to the last, or to the one before) are refused.
func TestAppendIncreasing(t *testing.T) {
	for _, c := range []struct {
		keys  []int64
		vals  []float64
		last  int64
		ok    bool
		wantK []int32
		wantV []float64
	}{
		{[]int64{0, 2, 5}, []float64{1, 2, 3}, -1, true, []int32{0, 2, 5}, []float64{1, 2, 3}},
		{[]int64{3, 4, 9}, []float64{0, 2, 0}, 2, true, []int32{4}, []float64{2}},
		{[]int64{3, 4}, []float64{0, 0}, 1, true, []int32{}, []float64{}},
		{[]int64{3, 4}, []float64{1, 2}, 3, false, nil, nil},
		{[]int64{3, 5, 5}, []float64{1, 2, 3}, -1, false, nil, nil},
		{[]int64{3, 6, 5}, []float64{1, 2, 3}, -1, false, nil, nil},
	} {
		ak, av := make([]int32, len(c.keys)+2), make([]float64, len(c.keys)+2)
		m, ok := appendIncreasing(ak, av, c.keys, c.vals, c.last)
		if ok != c.ok || ok && (!slices.Equal(ak[:m], c.wantK) || !slices.Equal(av[:m], c.wantV)) {
			t.Errorf("appendIncreasing(%v, %v, last %d) = %v %v, %v; want %v %v, %v",
				c.keys, c.vals, c.last, ak[:m], av[:m], ok, c.wantK, c.wantV, c.ok)
		}
	}
}

// TestRowsBlockSink: TTV's rows of a block of iterations i (each i's
// fibers, one value per fiber j) go into the result together, each row
// written where it stays and recorded closed at once (the "rows appended
// as a block" event): rows that are lists, rows half full or more
// (closed dense), fibers whose sum is zero (no entry), and level-1 keys
// repeated in a user's layout (two iterations into one row: those rows
// go the general way). List rows after the first of a block are kept in
// one loop, each extending its predecessor's chunk. The rows' keys (i,
// the values of B's first level) are read from the level's array in
// place, not evaluated row by row. Where storage knows the rows' keys (B's
// second level) increase within every row and fit a list key, rows are
// copied a run at a time from the keys' 32-bit copy, keys not read ("rows
// copied ahead"; where the row loops take such copies); keys out of
// order in a row (a user's layout) or past the list key's limit are not.
// Each agrees with the interpreter at 1 and 3 threads.
func TestRowsBlockSink(t *testing.T) {
	defer func(l int64) { narrowKeyLimit = l }(narrowKeyLimit)
	rng := rand.New(rand.NewPCG(28, 11))
	for _, tc := range []struct {
		name          string
		i, j, k, nnz  int
		zeros, repeat bool
		lists         bool // list rows follow one another in a block
		unsorted      bool // two keys of a row swapped
		limit         int64
		ahead         bool
	}{
		{"lists", 600, 300, 20, 4000, false, false, true, false, math.MaxInt32, true},
		{"dense rows", 200, 6, 20, 3000, false, false, false, false, math.MaxInt32, false},
		{"dense and list rows", 300, 12, 20, 1500, false, false, true, false, math.MaxInt32, true},
		{"zero sums", 600, 300, 20, 4000, true, false, true, false, math.MaxInt32, true},
		{"repeated row keys", 600, 300, 20, 4000, false, true, false, false, math.MaxInt32, true},
		{"keys out of order in a row", 600, 300, 20, 4000, false, false, false, true, math.MaxInt32, false},
		{"keys past the list key's limit", 600, 300, 20, 4000, false, false, false, false, 290, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			narrowKeyLimit = tc.limit
			st := storage.Store{}
			b := randCSF(tc.i, tc.j, tc.k, tc.nnz, rng)
			b.store(st, "B")
			if tc.unsorted {
				idx2 := slices.Clone(b.idx2)
				for r := range len(b.pos2) - 1 {
					if p := b.pos2[r]; b.pos2[r+1]-p >= 3 {
						idx2[p], idx2[p+1] = idx2[p+1], idx2[p]
						break
					}
				}
				st["B_idx2"] = storage.IntArray(idx2)
			}
			denseStore(st, "D", 1, tc.k, rng)
			if tc.zeros {
				d := st["D_val"].(*storage.Array).F
				for l := range d {
					if l%2 == 0 {
						d[l] = 0
					}
				}
			}
			if tc.repeat {
				idx1 := slices.Clone(b.idx1)
				for p := range idx1 {
					idx1[p] /= 2
				}
				st["B_idx1"] = storage.IntArray(idx1)
			}
			e := parse(t, shortTTV, st)
			var got value.Value
			seen := events(func() { got = agree(t, e, st) })
			if keepsZero(got) {
				t.Errorf("a zero kept as an entry")
			}
			if seen["rows appended as a block"] == 0 {
				t.Errorf("no block of rows went into the sink together; events %v", seen)
			}
			if tc.lists && seen["rows kept in one loop"] == 0 {
				t.Errorf("no list row extended the one before in one loop; events %v", seen)
			}
			if seen["row keys read in place"] == 0 {
				t.Errorf("the rows' keys were not read in place; events %v", seen)
			}
			if got := seen["rows copied ahead"] > 0; got != (tc.ahead && useNarrow) {
				t.Errorf("rows copied ahead %v, want %v; events %v", got, tc.ahead, seen)
			}
		})
	}
}

// keepsZero reports whether v, a dictionary of dictionaries of reals,
// holds a zero entry (the interpreter's results hold none).
func keepsZero(v value.Value) bool {
	d, ok := v.(*value.Dict)
	if !ok {
		return v == 0.0
	}
	for _, x := range d.Vals {
		if keepsZero(x) {
			return true
		}
	}
	return false
}

// TestCopyAhead: copyAhead copies whole rows only, as many as the room
// holds, and stops before a row half full or more (its last key + 1 at
// most twice its entries) and before the row of the first zero value.
func TestCopyAhead(t *testing.T) {
	// Rows at positions 10..13, 13..16, 16..17, 17..20 (from lo 10).
	keys := []int32{3, 8, 40, 1, 9, 30, 50, 2, 7, 60}
	ends := []int64{10, 13, 16, 17, 20}
	for _, c := range []struct {
		name  string
		room  int
		zero  int // a zero value there, -1 none
		dense bool
		want  int64
	}{
		{"all", 10, -1, false, 10},
		{"room for two rows", 6, -1, false, 6},
		{"room for three rows", 9, -1, false, 7},
		{"room inside the first row", 2, -1, false, 0},
		{"zero in the third row", 10, 6, false, 6},
		{"zero first", 10, 0, false, 0},
		{"third row dense", 10, -1, true, 6},
	} {
		vals := make([]float64, len(keys))
		for p := range vals {
			vals[p] = float64(p + 1)
		}
		if c.zero >= 0 {
			vals[c.zero] = 0
		}
		k := slices.Clone(keys)
		if c.dense {
			k[6] = 1 // one entry at key 1: half full
		}
		kb, vb := make([]int32, c.room), make([]float64, c.room)
		got := copyAhead(kb, vb, k, vals, ends, 10)
		if got != c.want || !slices.Equal(kb[:got], k[:got]) || !slices.Equal(vb[:got], vals[:got]) {
			t.Errorf("%s: copied to %d (%v %v), want %d", c.name, got, kb, vb, c.want)
		}
	}
}

// poisonBlock fills a new, unzeroed block of a level's lists with
// values no result holds (NaN values, negative keys), so that every test
// of the package fails where an entry is read before it is written.
func poisonBlock(b any) {
	switch b := b.(type) {
	case []float64:
		for i := range b {
			b[i] = math.NaN()
		}
	case []int64:
		for i := range b {
			b[i] = math.MinInt64 / 3
		}
	case []int32:
		for i := range b {
			b[i] = -7
		}
	}
}

// TestListBlocksUnzeroed: the blocks that TTV's and TTM's rows are
// written into come from newBlock, not zeroed (each filled with poison
// here, as in every test of the package), and the results still agree
// with the interpreter at 1 and 3 threads: no entry of a block is read
// before it is written.
func TestListBlocksUnzeroed(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 13))
	for _, tc := range []struct {
		name, prog string
		rank       int
	}{{"ttv", shortTTV, 1}, {"ttm", shortTTM, 16}} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			randCSF(500, 300, 20, 5000, rng).store(st, "B")
			denseStore(st, "D", tc.rank, 20, rng)
			var blocks atomic.Int64 // the workers' too
			blockUnzeroed = func(b any) { blocks.Add(1); poisonBlock(b) }
			defer func() { blockUnzeroed = poisonBlock }()
			agree(t, parse(t, tc.prog, st), st)
			if blocks.Load() == 0 {
				t.Errorf("no block of the result's rows came from newBlock")
			}
		})
	}
}

// TestRowsRoomMadeOnce: rows handed over a window at a time (appendRows
// over a run's windows, of doubling length as a run checked for limits
// takes them) take value blocks of about the entries they hold: each
// window's room is made before its first row is written (not after,
// replacing the block that row was given), and a window fills the room
// the blocks have before a new block is made.
func TestRowsRoomMadeOnce(t *testing.T) {
	const rows, width = 30000, 10
	ends := make([]int64, rows+1)
	ukeys := make([]int64, rows)
	var keys []int64
	var vals []float64
	want := map[int64]map[int64]float64{}
	for r := range int64(rows) {
		ukeys[r] = 2 * r
		want[2*r] = map[int64]float64{}
		for e := range int64(width) {
			j := 7*e + r%5
			keys, vals = append(keys, j), append(vals, float64(r+e+1))
			want[2*r][j] = float64(r + e + 1)
		}
		ends[r+1] = int64(len(keys))
	}
	var blocks, reals int
	blockUnzeroed = func(b any) {
		if v, ok := b.([]float64); ok {
			blocks++
			reals += len(v)
		}
		poisonBlock(b)
	}
	defer func() { blockUnzeroed = poisonBlock }()
	b := newBuilder(rowsShape)
	for w0, w := 0, 1; w0 < rows; w0, w = w0+w, 2*w {
		w1 := min(w0+w, rows)
		lo, hi := ends[w0], ends[w1]
		if c := b.appendRows(ends[w0:w1+1], 0, lo, hi, keys[lo:hi], nil, vals[lo:hi], ukeys[w0:w1], nil); c != w1-w0 {
			t.Fatalf("window %d..%d: appendRows stopped at row %d", w0, w1, w0+c)
		}
	}
	d := b.freeze()
	checkRows(t, d, want)
	if entries := len(keys); reals > entries+entries/8 {
		t.Errorf("%d value blocks of %d entries in all for %d entries", blocks, reals, entries)
	}
}

// TestAppendIncreasingVector checks appendIncreasing's vector pass
// (appendIncreasingReals) against its Go loop: keys that increase or fail to (at any place,
// the first against last, across a group of four), values with zeros of
// either sign and NaNs, at every length to 22, the same entries kept and
// the same answer.
func TestAppendIncreasingVector(t *testing.T) {
	if !useCopyIncreasing {
		t.Skip("no vector pass on this machine")
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for n := 0; n <= 22; n++ {
		for trial := range 40 {
			keys, vals := make([]int64, n), make([]float64, n)
			k := int64(rng.IntN(3)) - 1
			last := k - int64(rng.IntN(2))
			for l := range keys {
				k += 1 + int64(rng.IntN(4))
				keys[l] = k
				switch rng.IntN(8) {
				case 0:
					vals[l] = 0
				case 1:
					vals[l] = math.Copysign(0, -1)
				case 2:
					vals[l] = math.NaN()
				default:
					vals[l] = rng.NormFloat64()
				}
			}
			if n > 0 && trial%3 == 0 {
				l := rng.IntN(n) // a key that does not increase
				if l == 0 {
					keys[0] = last - int64(rng.IntN(2))
				} else {
					keys[l] = keys[l-1] - int64(rng.IntN(2))
				}
			}
			ak1, av1 := make([]int32, n), make([]float64, n)
			// Past the row, guards the masked stores must leave alone.
			ak2, av2 := make([]int32, n+4), make([]float64, n+4)
			for l := n; l < n+4; l++ {
				ak2[l], av2[l] = -7, -7
			}
			m1, ok1 := appendIncreasing(ak1, av1, keys, vals, last)
			m2, ok2 := appendIncreasingReals(ak2[:n], av2[:n], keys, vals, last)
			for l := n; l < n+4; l++ {
				if ak2[l] != -7 || av2[l] != -7 {
					t.Fatalf("keys %v: wrote past the row at %d", keys, l)
				}
			}
			same := m1 == m2 && ok1 == ok2 && (!ok1 || slices.Equal(ak1[:m1], ak2[:m2]))
			for l := range m1 {
				same = same && (!ok1 || math.Float64bits(av1[l]) == math.Float64bits(av2[l]))
			}
			if !same {
				t.Fatalf("keys %v vals %v last %d: %d %v %v %v, want %d %v %v %v", keys, vals, last, m2, ok2, ak2[:m2], av2[:m2], m1, ok1, ak1[:m1], av1[:m1])
			}
		}
	}
}
