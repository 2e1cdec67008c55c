package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// seekTestRow returns n sorted keys (with repeats when dups) drawn from
// one of several spreads: even over [lo, lo+span), crowded into a few
// narrow clusters, or at the ends of the int64 range.
func seekTestRow(rng *rand.Rand, n int, dups bool) []int64 {
	keys := make([]int64, n)
	switch rng.IntN(4) {
	case 0: // even
		lo, span := rng.Int64N(2001)-1000, 1+rng.Int64N(int64(40*n+1))
		for i := range keys {
			keys[i] = lo + rng.Int64N(span)
		}
	case 1: // clusters: buckets of very different fullness
		centers := []int64{rng.Int64N(1000), 5000 + rng.Int64N(100000)}
		for i := range keys {
			keys[i] = centers[rng.IntN(2)] + rng.Int64N(8)
		}
	case 2: // a span that does not fit an int64's difference
		for i := range keys {
			if rng.IntN(2) == 0 {
				keys[i] = math.MinInt64 + rng.Int64N(1000)
			} else {
				keys[i] = math.MaxInt64 - rng.Int64N(1000)
			}
		}
	default: // dense
		for i := range keys {
			keys[i] = int64(i)
		}
	}
	if !dups {
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	slices.Sort(keys)
	return keys
}

// TestSeekTableFill checks each bucket of a row's table against its
// definition, the first position whose key's bucket is it or more (a
// table starting seeks too early still seeks right, only slower), on
// rows of every spread, with repeated keys, at an offset in their array,
// and that the fill writes nothing past the row's table.
func TestSeekTableFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for trial := range 300 {
		row := seekTestRow(rng, seekIndexFrom+rng.IntN(3*seekIndexFrom), trial%2 == 0)
		l := int64(rng.IntN(5))
		a := slices.Concat(make([]int64, l), row)
		h := int64(len(a))
		r, size := rowIndexOf(a, l, h, 0)
		tab := make([]int32, size+1)
		tab[size] = math.MaxInt32
		r.fill(tab, a, l, h)
		bucket := func(k int64) int64 { return int64((uint64(k) - uint64(r.k0)) >> r.shift) }
		for b := range size {
			want := int32(0)
			for want < int32(len(row)) && bucket(row[want]) < b {
				want++
			}
			if tab[b] != want {
				t.Fatalf("trial %d: bucket %d of %d starts at %d, want %d", trial, b, size, tab[b], want)
			}
		}
		if tab[size] != math.MaxInt32 {
			t.Fatalf("trial %d: the fill wrote past the table's %d buckets", trial, size)
		}
	}
}

// TestSeekThroughTable checks the table's seek against seek, and dotMerge
// through the table against dotMerge without it (the same bits), on rows
// of every spread, with repeated keys, from every start.
func TestSeekThroughTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 300 {
		var rows [][]int64
		for range 1 + rng.IntN(4) {
			rows = append(rows, seekTestRow(rng, rng.IntN(3*seekIndexFrom), trial%2 == 0))
		}
		pos := []int64{0}
		var all []int64
		for _, r := range rows {
			all = append(all, r...)
			pos = append(pos, int64(len(all)))
		}
		arr := &cell{ints: all, n: int64(len(all)), needSorted: true, descents: (&storage.Array{Elem: ir.Int, I: all}).Descents()}
		pc := &cell{ints: pos}
		ix := &seekIndex{arr: arr, lo: pc, hi: pc, hiOff: 1}
		ix.build()
		for j, row := range rows {
			r, tab := ix.row(int64(j))
			if (r != nil) != (len(row) >= seekIndexFrom) {
				t.Fatalf("trial %d: row %d of %d keys has a table: %v", trial, j, len(row), r != nil)
			}
			if r == nil {
				continue
			}
			if got := len(tab) - int(r.at); j == len(rows)-1 && got > 2*len(row) {
				t.Fatalf("trial %d: %d buckets for %d keys", trial, got, len(row))
			}
			probe := func(x int64) {
				for from := range len(row) + 1 {
					if got, want := r.seek(tab, row, from, x), seek(row, from, x); got != want {
						t.Fatalf("trial %d: seek from %d for %d: %d, want %d (row %v)", trial, from, x, got, want, row)
					}
				}
			}
			for _, k := range row {
				probe(k)
				probe(k - 1)
				probe(k + 1)
			}
			probe(math.MinInt64)
			probe(math.MaxInt64)
			for range 20 {
				probe(rng.Int64())
			}
			// dotMerge: a short sorted fiber against the row.
			fiber := make([]int64, rng.IntN(6))
			for i := range fiber {
				if rng.IntN(2) == 0 {
					fiber[i] = row[rng.IntN(len(row))]
				} else {
					fiber[i] = row[0] + rng.Int64N(1000)
				}
			}
			slices.Sort(fiber)
			fv, rv := make([]float64, len(fiber)), make([]float64, len(row))
			for i := range fv {
				fv[i] = float64(rng.IntN(9)+1) / 3
			}
			for i := range rv {
				rv[i] = float64(rng.IntN(9)+1) / 7
			}
			got, want := dotMerge(fiber, row, fv, rv, 0.1, r, tab), dotMerge(fiber, row, fv, rv, 0.1, nil, nil)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d: dotMerge through the table %v, without %v", trial, got, want)
			}
		}
	}
}

// longRowData is mergeData with B's rows long enough to get tables
// (seekIndexFrom keys and more out of w), some crowded into a narrow
// range, and A's and E's rows (the fibers) drawing half their keys from
// B's, so that merges find pairs. Trial 2 mod 4 reverses one of B's rows
// (no table; the general loop reports it), trial 3 mod 8 makes B's
// values one short, 7 mod 8 F's row bounds.
func longRowData(trial int, rng *rand.Rand) storage.Store {
	n, m, w := 1+rng.IntN(6), 1+rng.IntN(5), 600+rng.IntN(3000)
	st := storage.Store{"lastB": storage.IntScalar(int64(m - 1 - rng.IntN(2)))}
	bRows := make([][]int64, m)
	for j := range bRows {
		k := rng.IntN(4 * seekIndexFrom)
		if k > 0 && rng.IntN(3) == 0 { // crowded: in a window of 2k keys
			lo := rng.IntN(w - 2*k)
			for range k {
				bRows[j] = append(bRows[j], int64(lo+rng.IntN(2*k)))
			}
		} else {
			for range k {
				bRows[j] = append(bRows[j], int64(rng.IntN(w)))
			}
		}
	}
	fiber := func() []int64 {
		var f []int64
		for range rng.IntN(5) {
			if r := bRows[rng.IntN(m)]; len(r) > 0 && rng.IntN(2) == 0 {
				f = append(f, r[rng.IntN(len(r))])
			} else {
				f = append(f, int64(rng.IntN(w)))
			}
		}
		return f
	}
	aRows := make([][]int64, n)
	for i := range aRows {
		aRows[i] = fiber()
	}
	csrOf(st, "A", w, aRows, rng)
	csrOf(st, "B", w, bRows, rng)
	csr(st, "C", n, m, rng.IntN(3*n+1), rng)
	csr(st, "F", w, m, rng.IntN(3*w+1), rng) // rows for every key of A
	eRows := make([][]int64, st["A_val"].(*storage.Array).Len())
	for i := range eRows {
		eRows[i] = fiber()
	}
	csrOf(st, "E", w, eRows, rng)
	spoilRows(st, trial, "B_val", rng)
	return st
}

// csrOf stores rows (keys in any order, repeats dropped) as the CSR
// matrix p with w columns and values in thirds.
func csrOf(st storage.Store, p string, w int, rows [][]int64, rng *rand.Rand) {
	pos := []int64{0}
	var idx []int64
	var val []float64
	for _, r := range rows {
		r = slices.Clone(r)
		slices.Sort(r)
		r = slices.Compact(r)
		for _, k := range r {
			idx = append(idx, k)
			val = append(val, float64(rng.IntN(9)+1)/3)
		}
		pos = append(pos, int64(len(idx)))
	}
	st[p+"_len1"] = storage.IntScalar(int64(len(rows)))
	st[p+"_dim2"] = storage.IntScalar(int64(w))
	st[p+"_pos2"] = storage.IntArray(pos)
	st[p+"_idx2"] = storage.IntArray(idx)
	st[p+"_val"] = storage.RealArray(val)
}

// TestSeekIndexPlans runs the rows of merges on long rows against the
// interpreter (1 and 3 threads) and against kernels compiled without
// seek tables (the same bits and errors), and checks that the rows of
// merge-dots whose fixed operand is the first built tables.
func TestSeekIndexPlans(t *testing.T) {
	defer func() { seekIndexOff, seekIndexBuilt = false, nil }()
	rng := rand.New(rand.NewPCG(23, 24))
	tabled := 0
	for _, pc := range slices.Concat(mergeRowPlans, rowDotPlans) {
		var rows atomic.Int64 // agree runs 3 threads
		seekIndexBuilt = func(n int) { rows.Add(int64(n)) }
		for trial := range 40 {
			againstGeneral(t, pc.name, pc.plan, longRowData(trial, rng), func(off bool) { seekIndexOff = off })
		}
		if rows.Load() > 0 {
			tabled++
		}
		t.Logf("%s: %d rows with tables", pc.name, rows.Load())
	}
	if tabled < 4 {
		t.Errorf("%d plans built tables; want the four merge-dots times factors whose fixed operand is the first", tabled)
	}
}

// TestDescentsFollowNewSlices runs one compiled kernel per thread count
// (1, 2, 3) on a store whose merge operand's rows are in order, then on
// the store with that operand's keys a new slice holding a row out of
// order, then on the first again: the descents an array remembers are
// its slice's, so the second run must count the new slice's (a stale
// count would seek through the reversed row). Each run is checked
// against the interpreter.
func TestDescentsFollowNewSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	reversed := 0
	for trial := range 8 {
		st := longRowData(4*trial, rng) // 0 mod 4: B's rows in order, its arrays whole
		e := parse(t, mergeRowPlans[0].plan, st)
		b := st["B_idx2"].(*storage.Array)
		sorted := b.I
		for _, threads := range []int{1, 2, 3} {
			k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			for run, keys := range [][]int64{sorted, nil, sorted} {
				b.I = keys
				if keys == nil {
					b.I = slices.Clone(sorted)
					reverseARow(st, "B", rng)
					if slices.Equal(b.I, sorted) {
						continue
					}
					reversed++
				}
				want, werr := eval.Eval(e, st)
				got, err := k.Run(st)
				if (werr == nil) != (err == nil) || err == nil && !value.Equal(got, want, 1e-9) {
					t.Fatalf("trial %d, threads %d, run %d: engine %v (%v), interpreter %v (%v)", trial, threads, run, got, err, want, werr)
				}
			}
		}
		b.I = sorted
	}
	if reversed == 0 {
		t.Fatal("no row reversed")
	}
}
