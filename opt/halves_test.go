package opt

import (
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// TestHalvesRange checks that the interval analysis bounds the 32-bit
// halves of a packed int array by the ranges GatherStats records, so that
// a read indexed by a half is proved in bounds and SpMV over a matrix
// whose columns are packed fuses into one loop; and that it does not for
// an array with a negative value, nor for a half that exceeds the vector.
func TestHalvesRange(t *testing.T) {
	cases := []struct {
		key   string
		cols  []int64
		fused bool
	}{
		{"A_cols(q) % 4294967296", []int64{1, 2<<32 + 3, 4, 9<<32 + 5, 6}, true},
		{"A_cols(q) / 4294967296", []int64{1, 2<<32 + 3, 4, 9<<32 + 5, 6}, true},
		{"A_cols(q) / 4294967296", []int64{1, 2<<32 + 3, 4, 10<<32 + 5, 6}, false}, // high half 10: past x
		{"A_cols(q) % 4294967296", []int64{1, 2<<32 + 3, -4, 9<<32 + 5, 6}, false}, // negative: no halves
		{"A_cols(q) % 4294967296", []int64{1, 2<<32 + 10, 4, 9<<32 + 5, 6}, false}, // low half 10: past x
		{"A_cols(q) % 7", []int64{1, 2<<32 + 3, 4, 9<<32 + 5, 6}, true},            // below the divisor
		{"A_cols(q) / 1000000000000", []int64{1, 2<<32 + 3, 4, 9<<32 + 5, 6}, true},
	}
	for _, tc := range cases {
		src := `CREATE int SCALAR A_dim1; CREATE int ARRAY A_cols(5); CREATE real ARRAY x(10);
CREATE TENSOR A AS sum(<q, _> in 0:5) { @unique q -> { @unique ` + tc.key + ` -> 1 } };
CREATE TENSOR y AS sum(<(i, j), a> in A) { i -> a * x(j) };`
		st := storage.Store{"A_dim1": storage.IntScalar(5), "A_cols": storage.IntArray(tc.cols), "x": storage.RealArray(make([]float64, 10))}
		prog, err := sdql.Compile(sdql.Source{Name: "halves.sdql", Text: []byte(src)})
		if err != nil {
			t.Fatal(err)
		}
		// A stage stopped by its 1 s time limit (a loaded machine) would
		// keep an unfused plan: the test is of the ranges, not the clock.
		res, err := Optimize(prog.Compose(""), st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		plan := ir.Format(res.Plan)
		// Fused: one loop reads x at the key; otherwise the matrix is
		// built first and the product loops over it.
		if fused := !strings.Contains(plan, "in (sum("); fused != tc.fused {
			t.Errorf("%s over %v: fused %v, want %v:\n%s", tc.key, tc.cols, fused, tc.fused, plan)
		}
	}
}
