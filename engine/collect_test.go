package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// TestCollectedRows: loop nests adding into a dense level of rows out of
// the rows' order (a transposed copy, a list of coordinates in any
// order) collect their entries and lay them out when the result closes,
// and agree with the interpreter at 1 and 3 threads: rows and keys out
// of order, entries at one (row, key) added up, a sum of zero dropped,
// values that are zero, reals or ints; a negative or far row key is
// replayed into the builder and agrees too.
func TestCollectedRows(t *testing.T) {
	programs := []string{
		// M4's copy of a matrix stored by columns.
		`sum(<j1, _> in 0:B_len1) sum(<p3, c1> in B_idx2(B_pos2(j1):B_pos2(j1 + 1))) { @dense c1 -> { @dense j1 -> VAL } }`,
		// Coordinates in any order.
		`sum(<p, _> in 0:B_nnz) { @dense B_idx2(p) -> { @dense B_col(p) -> VAL } }`,
		// The same, read back by rows.
		`let t = sum(<p, _> in 0:B_nnz) { @dense B_idx2(p) -> { @dense B_col(p) -> VAL } } in
sum(<r, row> in t) sum(<j, v> in row) r * 100 + j * v`,
	}
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		// B: 40 columns over 30 rows, a column's rows in any order and
		// some twice; some values zero, some pairs cancelling.
		pos, idx, col := []int64{0}, []int64{}, []int64{}
		var val []float64
		for j := 0; j < 40; j++ {
			for n := rng.IntN(12); n > 0; n-- {
				r := int64(rng.IntN(30))
				v := float64(rng.IntN(5) - 1)
				idx, col, val = append(idx, r), append(col, int64(j)), append(val, v)
				if rng.IntN(4) == 0 {
					idx, col, val = append(idx, r), append(col, int64(j)), append(val, -v)
				}
			}
			pos = append(pos, int64(len(idx)))
		}
		// The coordinates' order shuffled: keys out of order in a row.
		perm := rng.Perm(len(idx))
		pidx, pcol, pval := make([]int64, len(idx)), make([]int64, len(idx)), make([]float64, len(idx))
		for q, p := range perm {
			pidx[q], pcol[q], pval[q] = idx[p], col[p], val[p]
		}
		for _, rows := range []string{"ordered", "shuffled", "negative", "far"} {
			st := storage.Store{"B_len1": storage.IntScalar(40), "B_nnz": storage.IntScalar(int64(len(idx))), "B_pos2": storage.IntArray(pos)}
			ri, ci, vs := idx, col, val
			if rows != "ordered" {
				ri, ci, vs = pidx, pcol, pval
			}
			ri = append([]int64(nil), ri...)
			switch rows {
			case "negative":
				ri[len(ri)*3/4] = -1
			case "far":
				ri[len(ri)*3/4] = 1 << 20
			}
			st["B_idx2"], st["B_col"], st["B_val"] = storage.IntArray(ri), storage.IntArray(ci), storage.RealArray(vs)
			for pi, p := range programs {
				if pi == 0 && rows == "shuffled" {
					continue // B_pos2 is by column
				}
				for _, v := range []string{"B_val(p3)", "p3 + 1", "B_val(p3) * j1"} {
					if pi > 0 {
						v = map[string]string{"B_val(p3)": "B_val(p)", "p3 + 1": "p + 1", "B_val(p3) * j1": "B_val(p) * B_col(p)"}[v]
					}
					src := strings.ReplaceAll(p, "VAL", v)
					e := parse(t, src, st)
					seen := events(func() { agree(t, e, st) })
					// At 1 and 3 threads, the parts' entries joined.
					collected := seen["collected rows"] == 2 && seen["collected rows replayed"] == 0
					if rows == "negative" || rows == "far" {
						collected = seen["collected rows replayed"] > 0
					}
					if !collected {
						t.Errorf("seed %d, %s rows, %s: %v; want the rows collected (replayed for a negative or far row)", seed, rows, src, seen)
					}
				}
			}
		}
	}
}
