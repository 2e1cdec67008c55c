package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestLiftedRows runs loops whose body opens a row that a lifted range
// fills (TTM's fibers) against the interpreter at 1 and 3 threads and
// the bits of the loops per j, and checks that the rows went through the
// lifted rows: rows of lanes from key 0 with no zero, rows with zeros
// (-0 among them) and rows of zeros only, a range not from key 0, guards
// and lets before the singleton, a guard of the range that fails (no
// entry), lanes from another key in some rows, and rows the general way
// takes: keys that repeat, a guard on j that fails in some lanes. Rows
// after the first are walked into their lanes (walkRow) except where a
// factor of the value is read at the row's own index, a short row's
// first position writing its lanes (no clear before). Where the rows'
// keys are the values the loop walks and nothing but the walk reads the
// row, rows after the first run in blocks (liftRows.rows), the fiber's
// bounds read at the loop's position, its value or an outer loop's
// position; a row of zeros leaves the block for the general way.
func TestLiftedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 41))
	b := randCSF(30, 25, 40, 700, rng)
	fiberAt := func(at, head, key, rng, guard, val string) string {
		return `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
		  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1))) ` + head + `
		    { @dense ` + key + ` -> sum(<j, _> in ` + rng + `) ` + guard + `
		      { @dense j -> sum(<p3, l> in B_idx3(B_pos3(` + at + `):B_pos3(` + at + ` + 1))) ` + val + ` } } }`
	}
	fiberOf := func(head, key, rng, guard, val string) string { return fiberAt("p2", head, key, rng, guard, val) }
	fiber := func(head, key, rng, guard string) string {
		return fiberOf(head, key, rng, guard, "B_val(p3) * D_val(j * D_len2 + l)")
	}
	for _, tc := range []struct {
		name, plan string
		zeros      bool // D's columns l < 20 zero (-0 in some), others half zero
		zeroLow    bool // D's columns l < 20 zero, others not: a fiber of those only is a row of zeros
		general    bool // some rows the general way (no "lifted rows" for them)
		unwalked   bool // the range's value not walked row by row (walkedRows)
		block      bool // rows run in blocks (liftRows.rows)
	}{
		{"TTM, the range swapped outward", liftTTM, false, false, false, false, true},
		{"rows from key 0", fiber("", "k", "0:D_len1", ""), false, false, false, false, true},
		{"rows with zeros", fiber("", "k", "0:D_len1", ""), true, false, false, false, false},
		{"rows of zeros between rows with none", fiber("", "k", "0:D_len1", ""), false, true, false, false, true},
		{"a range not from key 0", fiber("", "k", "3:D_len1", ""), false, false, false, false, false},
		{"a range not from key 0, zeros", fiber("", "k", "3:D_len1", ""), true, false, false, false, false},
		{"a guard and a let before the singleton", fiber("if k != 4 then let m = k + 1 in", "m", "0:D_len1", ""), false, false, false, false, false},
		{"a guard of the range that fails for some rows", fiber("", "k", "0:D_len1", "if D_val(k) < 0.5 then"), false, false, false, false, false},
		{"a guard on j that fails in some lanes of some rows", fiber("", "k", "0:D_len1", "if j < k then"), false, false, true, false, false},
		{"keys that repeat", fiber("", "k / 3", "0:D_len1", ""), false, false, true, false, false},
		{"lanes from another key in some rows", fiber("", "k", "k % 3:D_len1", ""), false, false, false, false, false},
		{"a factor read at the row's own index", fiberOf("", "k", "0:D_len1", "", "B_val(p3) * D_val(j * D_len2 + l) * D_val(i)"), false, false, false, true, true},
		{"fibers at the row's key", fiberAt("k", "", "k", "0:D_len1", "", "B_val(p3) * D_val(j * D_len2 + l)"), false, false, false, false, true},
		{"fibers at the outer loop's position", fiberAt("p1", "", "k", "0:D_len1", "", "B_val(p3) * D_val(j * D_len2 + l)"), false, false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "D", 12, 40, rng)
			if tc.zeros {
				d := st["D_val"].(*storage.Array).F
				for j := range 12 {
					for l := range 40 {
						switch {
						case l < 20 && l%2 == 0:
							d[j*40+l] = math.Copysign(0, -1)
						case l < 20, j%2 == 0:
							d[j*40+l] = 0
						}
					}
				}
			}
			if tc.zeroLow {
				d := st["D_val"].(*storage.Array).F
				for j := range 12 {
					clear(d[j*40 : j*40+20])
				}
			}
			e := parse(t, tc.plan, st)
			seen := events(func() { agree(t, e, st) })
			checkNoRowOfZeros(t, e, st)
			if walked := seen["lifted rows walked"]; walked == 0 && !tc.general && !tc.unwalked || walked > 0 && tc.unwalked {
				t.Errorf("rows walked row by row: %d, want them only where the value is walked (%v): %v", walked, !tc.unwalked, seen)
			}
			if set := seen["lifted rows set"]; (set == 0) != (seen["lifted rows walked"] == 0) {
				t.Errorf("rows whose first position sets their lanes: %d, want some where rows are walked: %v", set, seen)
			}
			if seen["lifted rows"] == 0 {
				t.Errorf("no row went through the lifted rows: %v", seen)
			}
			if blocks := seen["lifted rows in a block"]; (blocks > 0) != tc.block {
				t.Errorf("blocks of rows run in one loop: %d, want some: %v; events %v", blocks, tc.block, seen)
			}
			if tc.general && seen["lifted rows"] >= 2*len(b.idx2) { // a row a fiber, at 1 and 3 threads
				t.Errorf("no row went the general way: %v", seen)
			}
			sameBitsPerJ(t, e, st, nil)
		})
	}
}

// TestLiftedRowsBatched runs TTM's fibers where an outer row has more
// fibers of one entry in a row than a batch (rowBatchLen) holds, among
// fibers of three entries, empty ones and one of more positions than a
// batch holds (which goes through walkLanes), against the interpreter at 1
// and 3 threads and the bits of the loops per j: the rows of one entry
// are written a batch at a time (the vector loop for 12 lanes, the Go
// loop for 10), a row's positions summed in walkLanes' order, for a
// product of two factors and of three, and where some of them are rows of zeros (D's columns
// l < 20 zero, a fiber there a row of zeros) a batch is cut at such a
// row, which goes the general way and records nothing.
func TestLiftedRowsBatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 43))
	var cs []csfCoord
	for i := range int64(2) {
		for k := range int64(400) {
			switch {
			case k%11 == 3: // an empty fiber
			case k%150 == 7:
				for l := range int64(3) {
					cs = append(cs, csfCoord{i, k, 5 + 13*l})
				}
			case k == 200: // more positions than a batch holds
				for l := range int64(260) {
					cs = append(cs, csfCoord{i, k, l})
				}
			default:
				cs = append(cs, csfCoord{i, k, int64(rng.IntN(40))})
			}
		}
	}
	b := csfOf([3]int64{2, 400, 300}, cs, rng)
	three := `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense k -> sum(<j, _> in 0:D_len1)
	      { @dense j -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1))) B_val(p3) * D_val(j * D_len2 + l) * D_val(j * D_len2 + l + 1) } } }`
	for _, tc := range []struct {
		lanes   int
		zeroLow bool
		plan    string
	}{{12, false, liftTTM}, {12, true, liftTTM}, {10, false, liftTTM}, {10, true, liftTTM}, {12, false, three}, {10, false, three}} {
		lanes, zeroLow := tc.lanes, tc.zeroLow
		st := storage.Store{}
		b.store(st, "B")
		denseStore(st, "D", lanes, 300, rng)
		if zeroLow {
			d := st["D_val"].(*storage.Array).F
			for j := range lanes {
				clear(d[j*300 : j*300+20])
			}
		}
		e := parse(t, tc.plan, st)
		seen := events(func() { agree(t, e, st) })
		checkNoRowOfZeros(t, e, st)
		if seen["lifted rows batched"] == 0 || seen["lifted rows in a block"] == 0 {
			t.Errorf("%d lanes, zeros %v: no rows written in a batch: %v", lanes, zeroLow, seen)
		}
		sameBitsPerJ(t, e, st, nil)
	}
	// An entry past D's columns in the last fiber: the last lane's read
	// falls outside D, so a walk's bounds do not hold there and the row
	// goes the general way, which fails as the interpreter does.
	bad := csfOf([3]int64{2, 400, 301}, append(slices.Clone(cs), csfCoord{1, 399, 300}), rng)
	st := storage.Store{}
	bad.store(st, "B")
	denseStore(st, "D", 12, 300, rng)
	e := parse(t, liftTTM, st)
	if seen := events(func() { agree(t, e, st) }); seen["lifted rows batched"] == 0 {
		t.Errorf("an entry past D's columns: no rows written in a batch: %v", seen)
	}
	if _, err := runEngine(e, st, 1); err == nil {
		t.Errorf("an entry past D's columns: no error")
	}
}

// checkNoRowOfZeros runs e, a dictionary of depth 3, and fails where a
// row of its rows has no non-zero entry: the builder records no such row
// (a row of zeros kept dense would still agree with the interpreter).
func checkNoRowOfZeros(t *testing.T, e *ir.Expr, st storage.Store) {
	t.Helper()
	k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := k.Exec(st)
	if err != nil {
		t.Fatal(err)
	}
	for p := range r.d.size() {
		mid := r.d.dictAt(p)
		for q := range mid.size() {
			if mid.dictAt(q).size() == 0 {
				t.Fatalf("row (%d, %d) is kept with no non-zero entry", r.d.keyAt(p), mid.keyAt(q))
			}
		}
	}
}

// TestLiftedRowsRunAgain runs one compiled kernel of TTM's fibers on
// inputs of other sizes in turn (the rows' lanes, D's rows, 12 then 10
// then 12; B's fibers and their arrays other ones), at 1 and 3 threads,
// against the interpreter: what the rows' blocks find at their first
// call of a run (the lanes, the fibers' reader, the walks' set-up) is
// that run's, not kept from the run before.
func TestLiftedRowsRunAgain(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 47))
	var sts []storage.Store
	for i, lanes := range []int{12, 10, 12} {
		st := storage.Store{}
		randCSF(20+5*i, 30, 40, 600+100*i, rng).store(st, "B")
		denseStore(st, "D", lanes, 40, rng)
		sts = append(sts, st)
	}
	e := parse(t, liftTTM, sts[0])
	for _, threads := range []int{1, 3} {
		k, err := Compile(e, SchemaOf(sts[0]), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range sts {
			want, err := eval.Eval(e, st)
			if err != nil {
				t.Fatal(err)
			}
			var got value.Value
			seen := events(func() { got, err = k.Run(st) })
			if err != nil {
				t.Fatalf("threads=%d, input %d: %v", threads, i, err)
			}
			if !value.Equal(got, want, 1e-9) {
				t.Fatalf("threads=%d, input %d:\nengine:      %s\ninterpreter: %s", threads, i, value.Format(got), value.Format(want))
			}
			if seen["lifted rows in a block"] == 0 {
				t.Errorf("threads=%d, input %d: no rows run in blocks: %v", threads, i, seen)
			}
		}
	}
}

// TestLiftedRowsRecordsPooled: the records of TTM's rows (their keys;
// rows dense of one width record no ends), sized at the first rows for
// a level of more fibers than longRow, and those of the level around them (its keys and where each
// key's rows end) where it has more keys than outerPooled, are storage
// listed for the run's result, so that a release gives them to later
// runs (released.go); the rows agree with the interpreter at 1 and 3
// threads, and a run after a release too.
func TestLiftedRowsRecordsPooled(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 53))
	for _, tc := range []struct {
		name           string
		keys, fibers   int // of the outer level, of the rows'
		lanes, entries int // of D
	}{
		{"fibers", 40, 1000, 12, 30},
		{"fibers and keys", 4 * outerPooled, 20, 8, 1},
	} {
		st := storage.Store{}
		randCSF(tc.keys, tc.fibers, 1, longRow+1000, rng).store(st, "B")
		denseStore(st, "D", tc.lanes, tc.entries, rng)
		e := parse(t, liftTTM, st)
		want := agree(t, e, st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		for run := range 2 {
			r, err := k.Exec(st)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Value(); !value.Equal(got, want, 1e-9) {
				t.Fatalf("%s, run %d: the result differs from the interpreter's", tc.name, run)
			}
			d, ok := r.d.(*seqOuterNode)
			if !ok {
				t.Fatalf("%s: the result is a %T, not rows built in sequential mode", tc.name, r.d)
			}
			owned := map[unsafe.Pointer]bool{}
			for _, o := range r.owned {
				owned[o.p] = true
			}
			rows := d.rows
			if len(rows.keys) < longRow || !owned[unsafe.Pointer(&rows.keys[0])] {
				t.Errorf("%s, run %d: the records of %d rows are not the result's storage", tc.name, run, len(rows.keys))
			}
			if len(rows.vEnds)+len(rows.cEnds) > 0 {
				t.Errorf("%s, run %d: %d rows of %d lanes each record their ends", tc.name, run, len(rows.keys), tc.lanes)
			}
			if len(d.keys) > outerPooled && (!owned[unsafe.Pointer(&d.keys[0])] || !owned[unsafe.Pointer(&d.ends[0])]) {
				t.Errorf("%s, run %d: the records of %d keys are not the result's storage", tc.name, run, len(d.keys))
			}
			r.Release()
		}
	}
}

// TestLiftedRowsValuesInPlace runs TTM's batched rows where the value of
// each position is read at an offset that steps by one (B_val(p3), W(p3
// + 2)), which the batch reads in place, and where it is not (W(l),
// through the walked keys), which the batch gathers; W(p3 + 1) reads past
// W's end in the last fiber, whose batch gathers its values and whose row
// goes the general way and fails as the interpreter does: against the
// interpreter at 1 and 3 threads and the bits of the loops per j.
func TestLiftedRowsValuesInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 47))
	var cs []csfCoord
	for i := range int64(3) {
		for k := range int64(150) {
			for l := range int64(1 + k%3) {
				cs = append(cs, csfCoord{i, k, (7*k + 11*l) % 40})
			}
		}
	}
	b := csfOf([3]int64{3, 150, 40}, cs, rng)
	plan := func(value string) string {
		return `sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
	  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
	    { @dense k -> sum(<p3, l> in B_idx3(B_pos3(p2):B_pos3(p2 + 1)))
	      let t1 = ` + value + ` in
	      sum(<j, _> in 0:D_len1) { @dense j -> D_val(j * D_len2 + l) * t1 } } }`
	}
	for _, tc := range []struct {
		value   string
		w       int // W's length past the tensor's entries
		inPlace bool
		fails   bool
	}{
		{"B_val(p3)", 0, true, false},
		{"W(p3 + 2)", 2, true, false},
		{"W(l)", 0, false, false},
		{"W(p3 + 1)", 0, true, true}, // in place but in the last fiber's batch
	} {
		st := storage.Store{}
		b.store(st, "B")
		denseStore(st, "D", 12, 40, rng)
		st["W"] = storage.RealArray(randVec(len(cs)+tc.w, rng))
		e := parse(t, plan(tc.value), st)
		seen := events(func() { agree(t, e, st) })
		if seen["lifted rows batched"] == 0 {
			t.Errorf("%s: no rows written in a batch: %v", tc.value, seen)
		}
		if got := seen["lifted rows' values read in place"] > 0; got != tc.inPlace {
			t.Errorf("%s: values read in place %v, want %v: %v", tc.value, got, tc.inPlace, seen)
		}
		if _, err := runEngine(e, st, 1); (err != nil) != tc.fails {
			t.Errorf("%s: error %v, want one: %v", tc.value, err, tc.fails)
		}
		if !tc.fails {
			sameBitsPerJ(t, e, st, nil)
		}
	}
}

// TestRowsOfLiftedRows runs TTM's loop over i, whose body opens the row
// of rows that its fibers' lifted rows fill (runRowsOf), in blocks across
// the rows of rows (rowsAcross), against the interpreter at 1 and 3
// threads and the bits of the loops per j: as built, with an outer row
// of no fibers, with two outer keys out of order (the dictionary leaves
// sequential mode there, and the rows after go through the general
// builder), with an outer key repeated (its two runs of fibers add into
// one row of rows), with a fiber of zeros inside and first in an outer
// row (its row goes the general way: the block stops there and its outer
// row goes on from it), and with a fiber reading past D's end (the
// error is the interpreter's).
func TestRowsOfLiftedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 53))
	var cs []csfCoord
	for i := range int64(40) {
		if i%7 == 5 {
			continue
		}
		for k := range int64(1 + (3*i)%11) {
			for l := range int64(1 + (i+k)%3) {
				cs = append(cs, csfCoord{i, 2*k + i%2, (5*i + 7*k + 11*l) % 30})
			}
		}
	}
	for _, tc := range []struct {
		name  string
		alter func(b *sparseCSF)
	}{
		{"as built", func(*sparseCSF) {}},
		{"an outer row of no fibers", func(b *sparseCSF) { b.pos2[4] = b.pos2[3] }},
		{"outer keys out of order", func(b *sparseCSF) { b.idx1[20], b.idx1[21] = b.idx1[21], b.idx1[20] }},
		{"an outer key repeated", func(b *sparseCSF) { b.idx1[10] = b.idx1[9] }},
		{"a fiber of zeros inside an outer row", func(b *sparseCSF) { clear(b.val[b.pos3[b.pos2[12]+2]:b.pos3[b.pos2[12]+3]]) }},
		{"a fiber of zeros first in an outer row", func(b *sparseCSF) { clear(b.val[b.pos3[b.pos2[14]]:b.pos3[b.pos2[14]+1]]) }},
		{"a fiber reading past D's end", func(b *sparseCSF) { b.idx3[b.pos3[b.pos2[16]+1]] = 400 }},
	} {
		// D with zeros (rows with a zero lane go the general way, so
		// blocks stop often) and without (blocks run to their end).
		for _, zeros := range []bool{true, false} {
			b := csfOf([3]int64{40, 30, 30}, slices.Clone(cs), rng)
			tc.alter(b)
			st := storage.Store{}
			b.store(st, "B")
			denseStore(st, "D", 12, 30, rng)
			if !zeros {
				d := st["D_val"].(*storage.Array).F
				for i, v := range d {
					if v == 0 {
						d[i] = 5
					}
				}
			}
			e := parse(t, liftTTM, st)
			seen := events(func() { agree(t, e, st) })
			if seen["rows of lifted rows"] == 0 || seen["lifted rows in a block"] == 0 || seen["lifted rows across rows of rows"] == 0 {
				t.Errorf("%s, zeros in D %v: the rows of rows did not run the lifted rows directly, in blocks across them: %v", tc.name, zeros, seen)
			}
			if _, err := runEngine(e, st, 1); err == nil {
				sameBitsPerJ(t, e, st, nil)
			}
		}
	}
}
