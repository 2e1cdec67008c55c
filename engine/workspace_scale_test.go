package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompactIntoAgainstSorting: the compaction of a workspace row (a
// bitmap over a narrow key range, a sort over a wide one, nothing for
// keys already in order) lists exactly the touched keys whose values are
// not zero, in order, and leaves the workspace and the bitmap zeroed; so
// does the bitmap of a whole narrow slice (markedRange, sweepMarked).
func TestCompactIntoAgainstSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var bits, bits2 []uint64
	marked := 0
	for trial := range 3000 {
		size := []int{1, 64, 250, 5000}[trial%4]
		ws := make([]float64, size)
		var touched []int64
		lo := rng.IntN(size)
		width := 1 + rng.IntN(size-lo)
		increasing := trial%5 == 0
		for range rng.IntN(3 * width) {
			k := int64(lo + rng.IntN(width))
			if increasing && len(touched) > 0 {
				k = touched[len(touched)-1] + 1 + int64(rng.IntN(3))
				if k >= int64(size) {
					break
				}
			}
			if ws[k] == 0 {
				touched = append(touched, k)
			}
			switch rng.IntN(6) {
			case 0:
				ws[k] = 0 // cancelled: listed again if written again
			case 1:
				ws[k] = math.Copysign(0, -1)
			default:
				ws[k] += float64(1 + rng.IntN(9))
			}
		}
		var wantK []int64
		var wantV []float64
		seen := map[int64]bool{}
		for _, k := range touched {
			if !seen[k] && ws[k] != 0 {
				wantK = append(wantK, k)
			}
			seen[k] = true
		}
		slices.Sort(wantK)
		for _, k := range wantK {
			wantV = append(wantV, ws[k])
		}
		keys, vals := make([]int64, len(touched)+1), make([]float64, len(touched)+1)
		first, last, sorted := keyRange(touched)
		if len(ws) <= bitmapFactor*len(touched) {
			// releaseLeaf's way for a narrow workspace: a bitmap of
			// the whole slice, which finds the greatest key too.
			// Some keys are marked beforehand, as scatterMark marks
			// the keys it writes; the rest are listed.
			ws2 := slices.Clone(ws)
			var listed []int64
			for _, k := range touched {
				if rng.IntN(2) == 0 {
					growBits(&bits2, int(k>>6)+1)
					bits2[k>>6] |= 1 << (k & 63)
				} else {
					listed = append(listed, k)
				}
			}
			bm, hi, count := markedRange(listed, len(ws2), &bits2)
			if hi != last {
				t.Fatalf("trial %d: markedRange's greatest key %d, keyRange's %d", trial, hi, last)
			}
			if count != len(seen) {
				t.Fatalf("trial %d: markedRange counted %d keys, want %d", trial, count, len(seen))
			}
			n := sweepMarked(ws2, bm, 0, keys, vals)
			if !slices.Equal(keys[:n], wantK) || !slices.Equal(vals[:n], wantV) {
				t.Fatalf("trial %d: swept %v %v, want %v %v", trial, keys[:n], vals[:n], wantK, wantV)
			}
			if slices.ContainsFunc(ws2, func(v float64) bool { return v != 0 }) || slices.ContainsFunc(bits2, func(w uint64) bool { return w != 0 }) {
				t.Fatalf("trial %d: sweepMarked left the workspace or the bitmap not zeroed", trial)
			}
			marked++
		}
		n := compactInto(ws, touched, first, last, sorted, keys, vals, &bits)
		if !slices.Equal(keys[:n], wantK) || !slices.Equal(vals[:n], wantV) {
			t.Fatalf("trial %d: got %v %v, want %v %v", trial, keys[:n], vals[:n], wantK, wantV)
		}
		if slices.ContainsFunc(ws, func(v float64) bool { return v != 0 }) {
			t.Fatalf("trial %d: workspace not zeroed", trial)
		}
		if slices.ContainsFunc(bits, func(w uint64) bool { return w != 0 }) {
			t.Fatalf("trial %d: bitmap not zeroed", trial)
		}
	}
	if marked < 1000 {
		t.Fatalf("only %d trials took the whole-slice bitmap", marked)
	}
}

// TestLeafRowRepresentation: a row of a nested @dense level is a dense
// slice from half full (8 bytes per key up to its highest against 12 per
// entry of a list), else a list of 4-byte keys carved from the level's
// blocks; two dense rows in a row start a streak of rows made dense at
// once, ended by the first judged row (every streakCheck-th) that comes
// out sparse; a sparse row not judged stays dense; empty rows change
// nothing. The entries are right whatever the representation.
func TestLeafRowRepresentation(t *testing.T) {
	spec := &bspec{depth: 2, real: true, dense: true, kid: &bspec{depth: 1, real: true, dense: true}}
	b := newBuilder(spec)
	b.x.sequential = false // a builder per row (see TestSequentialRows)
	// Keys of each row i (every step-th of 0..hi-1); 0 steps: empty.
	type row struct{ hi, step int }
	rows := []row{
		{100, 1},  // 0: full: dense
		{300, 3},  // 1: a third: list
		{0, 0},    // 2: empty
		{200, 1},  // 3: dense
		{0, 0},    // 4: empty, the run goes on
		{200, 2},  // 5: half: dense; a streak starts (once row 6 is open)
		{200, 1},  // 6: dense
		{200, 1},  // 7: made dense at once
		{200, 10}, // 8: made dense at once, sparse, not judged: the streak goes on
	}
	// Made dense at once up to the streakCheck-th row of the streak,
	// which is sparse and judged: the next row is back in the
	// workspace, a list.
	last := 7 + streakCheck - 1
	for len(rows) < last {
		rows = append(rows, row{200, 1})
	}
	rows = append(rows, row{200, 10}, row{200, 10})
	made := make([]*builder, len(rows))
	for i, r := range rows {
		c := b.child(int64(i))
		made[i] = c
		if i >= 7 && i <= last {
			if c.ws != nil {
				t.Errorf("row %d: in the workspace, want a streak row", i)
			}
		} else if c.ws == nil {
			t.Errorf("row %d: not in the workspace", i)
		}
		for k := 0; k < r.hi && r.step > 0; k += r.step {
			c.addReal(int64(r.hi-1-k), float64(k+1)) // keys in decreasing order
		}
	}
	d := b.freeze()
	dense := map[int]bool{0: true, 3: true, 5: true, 6: true}
	for i := 7; i <= last; i++ {
		dense[i] = true
	}
	for i, r := range rows {
		c := made[i]
		switch {
		case r.step == 0:
		case dense[i] && (c.listed || c.reals == nil):
			t.Errorf("row %d: a list, want dense", i)
		case !dense[i] && !c.listed:
			t.Errorf("row %d: dense, want a list", i)
		case c.listed && (cap(c.nkeys) != len(c.nkeys) || cap(c.reals) != len(c.reals)):
			t.Errorf("row %d: a list with room to grow into its neighbours", i)
		case c.listed && c.lkeys != nil:
			t.Errorf("row %d: a list of 8-byte keys, want 4-byte ones", i)
		}
		got := d.getDict(int64(i))
		want := 0
		for k := 0; k < r.hi && r.step > 0; k += r.step {
			want++
			if v, _ := got.getReal(int64(r.hi - 1 - k)); v != float64(k+1) {
				t.Fatalf("row %d key %d: got %v, want %v", i, r.hi-1-k, v, k+1)
			}
		}
		if got.size() != want {
			t.Errorf("row %d: %d entries, want %d", i, got.size(), want)
		}
	}
}

// BenchmarkCompactRow: one workspace row of MMM at the engine benchmark's
// scale (78 products over 250 keys), filled then compacted; subtract the
// fill line.
func BenchmarkCompactRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := make([]float64, 250)
	touched := make([]int64, 0, 100)
	keys, vals := make([]int64, 101), make([]float64, 101)
	var bits []uint64
	fill := func() {
		touched = touched[:0]
		for range 78 {
			k := rng.Int64N(250)
			if ws[k] == 0 {
				touched = append(touched, k)
			}
			ws[k] += 1
		}
	}
	b.Run("fill", func(b *testing.B) {
		for range b.N {
			fill()
			clear(ws)
		}
	})
	b.Run("compact", func(b *testing.B) {
		for range b.N {
			fill()
			lo, hi, sorted := keyRange(touched)
			compactInto(ws, touched, lo, hi, sorted, keys, vals, &bits)
		}
	})
}
