package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// rowsOfRowsShape is a nested @dense result of depth 3, {@dense i ->
// {@dense j -> {@dense k -> real}}}, as TTM builds it.
var rowsOfRowsShape = &bspec{depth: 3, real: true, dense: true, kid: rowsShape}

// TestRowsOfRowsAgainstMaps: a result of depth 3 built value by value and
// row by row freezes to exactly the non-zero entries of a map-based
// reference, whether the rows (i, j) arrive in order (sequential mode,
// seqouter.go, to the end) or end the mode on the way: a j out of order
// within an i, an i out of order, a spilled key, a dictionary added at a
// j (addDict), each met with values closed before and a row open. Built
// by one builder, or by three merged as workers' are.
func TestRowsOfRowsAgainstMaps(t *testing.T) {
	defer func(s bool) { useSweep = s }(useSweep)
	rng := rand.New(rand.NewPCG(11, 12))
	sequential := map[string]int{}
	left := 0
	defer func() {
		if !t.Failed() && (sequential["one"] < 40 || sequential["merged"] < 40 || left < 40) {
			t.Errorf("trials frozen in sequential mode: %v; left it on the way: %d", sequential, left)
		}
	}()
	type op struct {
		i, j, k int64
		v       float64
		dict    bool // added as a dictionary {k -> v} at j
	}
	for trial := range 300 {
		scatter := trial%4 >= 2
		useSweep = trial%8 >= 4
		ni, nj := 1+rng.IntN(12), 1+rng.IntN(30)
		width := []int{4, 25, 300}[trial%3]
		// How the ops break the order, if at all: 0 in order, 1 a j out
		// of order, 2 an i out of order, 3 spilled keys, 4 addDict.
		breaks := trial % 5
		if trial%10 < 5 {
			breaks = 0
		}
		var ops []op
		for range rng.IntN(300) {
			o := op{i: int64(rng.IntN(ni)), j: int64(rng.IntN(nj)), k: int64(rng.IntN(width)), v: float64(1 + rng.IntN(5))}
			switch rng.IntN(8) {
			case 0:
				o.v = 0
			case 1:
				if breaks == 3 {
					o.k = []int64{-2, 1 << 20}[rng.IntN(2)]
				}
			case 2:
				o.dict = breaks == 4
			}
			ops = append(ops, o)
			if rng.IntN(5) == 0 {
				ops = append(ops, op{i: o.i, j: o.j, k: o.k, v: -o.v}) // cancelled
			}
		}
		rng.Shuffle(len(ops), func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
		slices.SortStableFunc(ops, func(a, b op) int { return slices.Compare([]int64{a.i, a.j}, []int64{b.i, b.j}) })
		// broke: the ops do break the order. (Spilled keys end the mode
		// or not depending on whether they cancel and on the row's
		// representation: TestRowsAgainstMaps has those cases; here
		// only the entries are checked.)
		broke := false
		for _, o := range ops {
			broke = broke || o.dict
		}
		if len(ops) > 2 {
			switch p := 1 + rng.IntN(len(ops)-1); breaks {
			case 1: // a j out of order: p's row again, after a later row of its i
				for q := p + 1; q < len(ops) && ops[q].i == ops[p].i; q++ {
					if ops[q].j != ops[p].j {
						ops = slices.Insert(ops, q+1, op{i: ops[p].i, j: ops[p].j, k: 1, v: 7})
						broke = true
						break
					}
				}
			case 2: // an i out of order: the first op again, at the end
				last := ops[len(ops)-1]
				ops = append(ops, ops[0])
				broke = ops[0].i < last.i || ops[0].j < last.j
			}
		}
		want := map[[3]int64]float64{}
		for _, o := range ops {
			want[[3]int64{o.i, o.j, o.k}] += o.v
		}
		add := func(b *builder, ops []op) {
			for len(ops) > 0 {
				o := ops[0]
				if o.dict {
					b.child(o.i).addDict(o.j, &listLeaf{keys: []int64{o.k}, reals: []float64{o.v}, real: true})
					ops = ops[1:]
					continue
				}
				n := 1
				for scatter && n < len(ops) && ops[n].i == o.i && ops[n].j == o.j && !ops[n].dict {
					n++
				}
				if n == 1 {
					b.child(o.i).child(o.j).addReal(o.k, o.v)
					ops = ops[1:]
					continue
				}
				idx, vals := make([]int64, n), make([]float64, n)
				for q, o := range ops[:n] {
					idx[q], vals[q] = o.k, o.v
				}
				scatterAdd(b.child(o.i).child(o.j), idx, vals, 1)
				ops = ops[n:]
			}
		}
		one := newBuilder(rowsOfRowsShape)
		add(one, ops)
		// Three workers, cut between two values of i (their rows then
		// appended) in half the in-order trials, anywhere in the others.
		var split func(a, b op) bool
		if breaks == 0 && trial%2 == 0 {
			split = func(a, b op) bool { return a.i != b.i }
		}
		w0 := threeWorkers(rng, rowsOfRowsShape, ops, split, add)
		for name, d := range map[string]dict{"one": one.freeze(), "merged": w0.freeze()} {
			if _, ok := d.(*seqOuterNode); ok {
				sequential[name]++
				if broke && name == "one" && breaks != 3 {
					t.Fatalf("trial %d: still sequential with breaks %d", trial, breaks)
				}
			} else if name == "one" && len(ops) > 0 {
				if !broke && breaks != 3 {
					t.Fatalf("trial %d: left sequential mode with the rows in order", trial)
				}
				left++
			}
			checkEntriesOf(t, d, 3, want)
			values := 0
			for i := range int64(ni) {
				rows := 0
				for j := range int64(nj) {
					var keys []int64
					for c, v := range want {
						if c[0] == i && c[1] == j && v != 0 {
							keys = append(keys, c[2])
						}
					}
					slices.Sort(keys)
					row := d.getDict(i).getDict(j)
					if len(keys) > 0 {
						rows++
					}
					if row.size() != len(keys) {
						t.Fatalf("trial %d %s row (%d, %d): %d entries, want %d", trial, name, i, j, row.size(), len(keys))
					}
					for p, k := range keys {
						v := want[[3]int64{i, j, k}]
						if row.keyAt(p) != k || row.realAt(p) != v {
							t.Fatalf("trial %d %s row (%d, %d) entry %d: %d -> %v, want %d -> %v", trial, name, i, j, p, row.keyAt(p), row.realAt(p), k, v)
						}
						if got, _ := row.getReal(k); got != v || !listed(row, k) {
							t.Fatalf("trial %d %s row (%d, %d): lookup of %d: %v, want %v", trial, name, i, j, k, got, v)
						}
					}
				}
				if got := d.getDict(i).size(); got != rows {
					t.Fatalf("trial %d %s value %d: %d rows, want %d", trial, name, i, got, rows)
				}
				if rows > 0 {
					values++
				}
				if listed(d, i) != (rows > 0) {
					t.Fatalf("trial %d %s: has(%d) = %v with %d rows", trial, name, i, listed(d, i), rows)
				}
			}
			if d.size() != values {
				t.Fatalf("trial %d %s: %d values, want %d", trial, name, d.size(), values)
			}
		}
	}
}

// TestRowsOfRowsLastRowLeaves: when only the last row of a result of
// depth 3 cannot be kept in sequential mode (a spilled key), freezing
// ends the mode and keeps every row.
func TestRowsOfRowsLastRowLeaves(t *testing.T) {
	want := map[[3]int64]float64{}
	b := newBuilder(rowsOfRowsShape)
	for i := range int64(5) {
		for j := range int64(4) {
			k := (i + j) % 3
			b.child(i).child(j).addReal(k, float64(i+j+1))
			want[[3]int64{i, j, k}] = float64(i + j + 1)
		}
	}
	b.child(5).child(0).addReal(-3, 2)
	want[[3]int64{5, 0, -3}] = 2
	d := b.freeze()
	if _, ok := d.(*seqOuterNode); ok {
		t.Fatalf("still sequential with a spilled key")
	}
	checkEntriesOf(t, d, 3, want)
}
