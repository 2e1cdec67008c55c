package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// TestMergeSegments runs merges of two segments (their bounds read in
// place, merge.go), one scalar and one into a dictionary, against the
// interpreter on sorted rows and on data that sends them to the general
// path: an unsorted row, bounds out of order in either operand (also
// where the other segment is empty), values shorter than the indices.
func TestMergeSegments(t *testing.T) {
	for _, plan := range []string{`sum(<i, _> in 0:A_len1)
  { @dense i -> 2.0 * merge(<p, q, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(i + 1):B_pos2(i + 2))>)
      A_val(p) * B_val(q) }`, `sum(<i, _> in 0:A_len1)
  { @dense i -> merge(<p, q, l> in <A_idx2(A_pos2(i):A_pos2(i + 1)), B_idx2(B_pos2(i + 1):B_pos2(i + 2))>)
      { @dense l -> A_val(p) * B_val(q) } }`} {
		mergeSegmentTrials(t, plan)
	}
}

// TestMergeWithRange runs merges of a segment with a range (the
// optimizer's lookup of key j in a sorted row: j:j+1), which seek into the
// segment, against the interpreter: scalar and dictionary bodies that read
// both keys and the value, a range of several keys, and the data of
// TestMergeSegments (an unsorted row takes the general path).
func TestMergeWithRange(t *testing.T) {
	for _, plan := range []string{`sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p, j> in B_idx2(B_pos2(i):B_pos2(i + 1)))
      B_val(p) * merge(<q, r, c> in <A_idx2(A_pos2(i):A_pos2(i + 1)), j:j + 1>)
        A_val(q) * (r + c + 1) }`, `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p, j> in B_idx2(B_pos2(i):B_pos2(i + 1)))
      merge(<q, r, c> in <A_idx2(A_pos2(i):A_pos2(i + 1)), j - 1:j + 2>)
        { @dense c -> A_val(q) * B_val(p) * r } }`} {
		mergeSegmentTrials(t, plan)
	}
}

func mergeSegmentTrials(t *testing.T, plan string) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 75 {
		n, m := 2+rng.IntN(20), 1+rng.IntN(12)
		st := storage.Store{}
		csr(st, "A", n-1, m, rng.IntN(4*n+1), rng)
		csr(st, "B", n, m, rng.IntN(4*n+1), rng)
		switch trial % 5 {
		case 1: // an unsorted row of A
			idx := slices.Clone(st["A_idx2"].(*storage.Array).I)
			pos := st["A_pos2"].(*storage.Array).I
			for r := range n - 1 {
				if l := pos[r]; pos[r+1]-l >= 2 {
					idx[l], idx[l+1] = idx[l+1], idx[l]
					break
				}
			}
			st["A_idx2"] = storage.IntArray(idx)
		case 2: // B's bounds out of order
			pos := slices.Clone(st["B_pos2"].(*storage.Array).I)
			if r := rng.IntN(n); pos[r+1] > pos[r] {
				pos[r], pos[r+1] = pos[r+1], pos[r]
			}
			st["B_pos2"] = storage.IntArray(pos)
		case 4: // A's bounds out of order, and most rows of B empty
			pos := slices.Clone(st["A_pos2"].(*storage.Array).I)
			if r := rng.IntN(n - 1); pos[r+1] > pos[r] {
				pos[r], pos[r+1] = pos[r+1], pos[r]
			}
			st["A_pos2"] = storage.IntArray(pos)
			csr(st, "B", n, m, rng.IntN(n/2+1), rng)
		case 3: // B's values shorter than its indices
			if v := st["B_val"].(*storage.Array); v.Len() > 0 {
				st["B_val"] = storage.RealArray(v.F[:v.Len()-1])
			}
		}
		agree(t, parse(t, plan, st), st)
	}
}

// TestHashRowViews looks rows of a two-level hash map up once per
// iteration, at 1 and 3 threads (the workers share the cached row views,
// dict.go): the answers must match the interpreter's. Run with -race to
// check the sharing.
func TestHashRowViews(t *testing.T) {
	const plan = `sum(<p, j> in I) { @dense p -> sum(<l, v> in H(j)) v * x(l) }`
	rng := rand.New(rand.NewPCG(23, 24))
	for range 20 {
		n, m := 1+rng.IntN(8), 1+rng.IntN(40)
		h := storage.NewHashMap(ir.Real, []int64{int64(n), int64(m)})
		for range rng.IntN(3 * m) {
			if err := h.Put([]int64{int64(rng.IntN(n)), int64(rng.IntN(m))}, 0, float64(rng.IntN(9)-4)); err != nil {
				t.Fatal(err)
			}
		}
		rows := make([]int64, 50+rng.IntN(200))
		for i := range rows {
			rows[i] = int64(rng.IntN(n + 1)) // n: a row with no entries
		}
		st := storage.Store{"H": h, "I": storage.IntArray(rows), "x": storage.RealArray(randVec(m, rng))}
		agree(t, parse(t, plan, st), st)
	}
}
