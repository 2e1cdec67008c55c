package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/storage"
)

// TestTransposedCopy: the copy of a walk of B's columns grouped by row
// (M4's, c -> j -> v) is collected and laid out by counting and agrees
// with the interpreter, walked by a rows scatter, looked up, or returned
// whole: with entries of one column repeated at a row (added, a sum of
// zero dropped), values that are zero, positions or reals; a row index
// that is negative or far past the others is replayed into the builder.
func TestTransposedCopy(t *testing.T) {
	const copyOf = `sum(<j1, _> in 0:B_len1)
    sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
      { @dense c1 -> { @dense j1 -> ENTRY } }`
	consumers := []string{
		// MMM with B stored by columns, as the optimizer writes it.
		`let t1 = COPY in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t3 = A_val(p2) in
    sum(<j, r> in t1(k)) { @dense j -> VALUE } }`,
		`let t1 = COPY in sum(<i, _> in 0:A_len1) sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p2) * t1(k)(i % 7)`,
		`let t1 = COPY in t1`,
		// The number of entries: a zero left in would count.
		`let t1 = COPY in sum(<c, row> in t1) sum(<j, v> in row) 1`,
	}
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 29))
		st := storage.Store{}
		randCSR(30, 20, 150, rng).store(st, "A")
		// B: 12 columns over 20 rows, a column's rows in any order and
		// some twice; some values zero, some pairs cancelling.
		pos, idx := []int64{0}, []int64{}
		var val []float64
		for j := 0; j < 12; j++ {
			for n := rng.IntN(6); n > 0; n-- {
				r := int64(rng.IntN(20))
				v := float64(rng.IntN(5) - 1)
				idx, val = append(idx, r), append(val, v)
				if rng.IntN(4) == 0 {
					idx, val = append(idx, r), append(val, -v)
				}
			}
			pos = append(pos, int64(len(idx)))
		}
		st["B_len1"] = storage.IntScalar(12)
		st["B_pos2"], st["B_idx2"], st["B_val"] = storage.IntArray(pos), storage.IntArray(idx), storage.RealArray(val)
		// A copy storing positions plus one whose rows repeat a column
		// sums them: the scatter that reads B at them declines.
		for _, entry := range []struct {
			entry, value string
			scatter      bool
		}{
			{"p3 + 1", "B_val(r - 1) * t3", false},
			{"B_val(p3)", "r * t3", true},
			{"B_val(p3) * j1", "t3 * r", true},
		} {
			cp := strings.ReplaceAll(copyOf, "ENTRY", entry.entry)
			for _, use := range consumers {
				src := strings.NewReplacer("COPY", cp, "VALUE", entry.value).Replace(use)
				e := parse(t, src, st)
				seen := events(func() { agree(t, e, st) })
				if seen["collected rows"] == 0 || strings.Contains(use, "VALUE") && entry.scatter && seen["dict rows scatter"] == 0 {
					t.Errorf("seed %d, entry %s: %v; want the copy built by counting\n%s", seed, entry.entry, seen, src)
				}
			}
		}
		// Rows the counting declines: a negative row, a row far past
		// the others. The builder builds them; the results agree.
		for _, bad := range []int64{-1, 1 << 20} {
			st2 := storage.Store{}
			for k, v := range st {
				st2[k] = v
			}
			idx2 := append([]int64(nil), idx...)
			idx2[len(idx2)/2] = bad
			st2["B_idx2"] = storage.IntArray(idx2)
			src := strings.ReplaceAll(consumers[2], "COPY", strings.ReplaceAll(copyOf, "ENTRY", "B_val(p3)"))
			e := parse(t, src, st2)
			if seen := events(func() { agree(t, e, st2) }); seen["collected rows replayed"] == 0 {
				t.Errorf("seed %d, row %d: %v; want the builder", seed, bad, seen)
			}
		}
	}
}

// TestTransposedCopyInPlace: a copy whose rows repeat no key and hold
// no zero is laid out by counting alone, its rows left where they are;
// one repeated key or one zero value sends it through compaction. Both
// agree with the interpreter, walked by a rows scatter or returned whole.
func TestTransposedCopyInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	st := storage.Store{}
	randCSR(30, 20, 150, rng).store(st, "A")
	// B: 12 columns over 20 rows, each column's rows distinct and
	// increasing, its values 1..5.
	pos, idx := []int64{0}, []int64{}
	var val []float64
	for range 12 {
		for r := range int64(20) {
			if rng.IntN(3) == 0 {
				idx, val = append(idx, r), append(val, float64(1+rng.IntN(5)))
			}
		}
		pos = append(pos, int64(len(idx)))
	}
	const copyOf = `let t1 = sum(<j1, _> in 0:B_len1)
    sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1)))
      { @dense c1 -> { @dense j1 -> ENTRY } } in `
	uses := []string{
		`sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t3 = A_val(p2) in
    sum(<j, r> in t1(k)) { @dense j -> VALUE } }`,
		`t1`,
	}
	for _, c := range []struct {
		name    string
		edit    func(idx []int64, val []float64)
		inPlace bool
	}{
		{"clean", func([]int64, []float64) {}, true},
		// Column 5's first row twice: one row of the copy repeats j = 5
		// (after the rows have come out of order: collected).
		{"repeated key", func(idx []int64, _ []float64) { idx[pos[5]+1] = idx[pos[5]] }, false},
		// A zero in B: a zero value where the copy holds B's values,
		// none where it holds positions.
		{"zero value", func(_ []int64, val []float64) { val[len(val)/2] = 0 }, false},
	} {
		if pos[6]-pos[5] < 2 {
			t.Fatal("column 5 needs two rows")
		}
		idx2, val2 := slices.Clone(idx), slices.Clone(val)
		c.edit(idx2, val2)
		st2 := maps.Clone(st)
		st2["B_len1"] = storage.IntScalar(12)
		st2["B_pos2"], st2["B_idx2"], st2["B_val"] = storage.IntArray(pos), storage.IntArray(idx2), storage.RealArray(val2)
		for _, entry := range [][2]string{{"p3 + 1", "B_val(r - 1) * t3"}, {"B_val(p3)", "r * t3"}} {
			for _, use := range uses {
				src := strings.NewReplacer("ENTRY", entry[0], "VALUE", entry[1]).Replace(copyOf + use)
				e := parse(t, src, st2)
				seen := events(func() { agree(t, e, st2) })
				inPlace := c.inPlace || c.name == "zero value" && entry[0] == "p3 + 1"
				if seen["collected rows"] == 0 || (seen["collected rows in place"] > 0) != inPlace {
					t.Errorf("%s, entry %s: %v; want the copy laid out by counting, in place %v\n%s", c.name, entry[0], seen, inPlace, src)
				}
			}
		}
	}
}

// TestTransposedCopyError: a segment past the end of B_idx2 fails with
// the interpreter's message.
func TestTransposedCopyError(t *testing.T) {
	st := storage.Store{}
	st["B_len1"] = storage.IntScalar(2)
	st["B_pos2"], st["B_idx2"], st["B_val"] = storage.IntArray([]int64{0, 1, 5}), storage.IntArray([]int64{1, 0}), storage.RealArray([]float64{2, 3})
	e := parse(t, `sum(<j1, _> in 0:B_len1) sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1))) { @dense c1 -> { @dense j1 -> B_val(p3) } }`, st)
	_, werr := eval.Eval(e, st)
	for _, threads := range []int{1, 2} {
		_, err := runEngine(e, st, threads)
		if err == nil || werr == nil || !strings.Contains(err.Error(), "B_idx2(1:5)") {
			t.Errorf("threads %d: engine %v, interpreter %v; want both to fail at B_idx2(1:5)", threads, err, werr)
		}
	}
}

// BenchmarkRowsCopy builds the transposed copy of MMM's B stored by
// columns (4884 x 250, 3% non-zero, the shape of the variants experiment
// over bcsstk16).
func BenchmarkRowsCopy(b *testing.B) {
	const n, m = 4884, 250
	rng := rand.New(rand.NewPCG(3, 5))
	pos, idx := []int64{0}, []int64{}
	var val []float64
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			if rng.IntN(32) == 0 {
				v := float64(rng.IntN(9) + 1)
				idx, val = append(idx, int64(i)), append(val, v)
			}
		}
		pos = append(pos, int64(len(idx)))
	}
	st := storage.Store{"B_len1": storage.IntScalar(m), "B_pos2": storage.IntArray(pos), "B_idx2": storage.IntArray(idx), "B_val": storage.RealArray(val)}
	e := parse(b, `let t1 = sum(<j1, _> in 0:B_len1) sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1))) { @dense c1 -> { @dense j1 -> p3 + 1 } } in t1(7)(3)`, st)
	k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := k.Run(st); err != nil {
			b.Fatal(err)
		}
	}
}
