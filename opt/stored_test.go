package opt

import (
	"testing"
)

// TestStoredWalkCost: a walk of a stored hash map is priced as the engine
// runs it, a walk of its level layout's arrays (iterStored), near the
// same walk over the compressed format the map replaces, not as a walk of
// a dictionary the plan builds (iterHash). At iterHash the hash-stored
// forms cost 1.4-8x their compressed twins.
func TestStoredWalkCost(t *testing.T) {
	for _, c := range []struct {
		kernel string
		hashed []tensorSpec
		twin   []tensorSpec
		atMost float64
	}{
		{"spmv", []tensorSpec{{"A", "hash", []int64{300, 400}, 0.05}}, []tensorSpec{{"A", "csr", []int64{300, 400}, 0.05}}, 1.6},
		{"summmm", []tensorSpec{{"A", "csr", []int64{300, 300}, 0.05}, {"B", "hash", []int64{300, 250}, 0.03}},
			[]tensorSpec{{"A", "csr", []int64{300, 300}, 0.05}, {"B", "csr", []int64{300, 250}, 0.03}}, 1.6},
		{"mmm", []tensorSpec{{"A", "csr", []int64{300, 300}, 0.05}, {"B", "hash", []int64{300, 250}, 0.03}},
			[]tensorSpec{{"A", "csr", []int64{300, 300}, 0.05}, {"B", "csr", []int64{300, 250}, 0.03}}, 1.6},
		{"mttkrp", []tensorSpec{{"B", "hash", []int64{60, 50, 40}, 0.01}, {"C", "dense", []int64{50, 16}, 1}, {"D", "dense", []int64{16, 40}, 1}},
			[]tensorSpec{{"B", "csf", []int64{60, 50, 40}, 0.01}, {"C", "dense", []int64{50, 16}, 1}, {"D", "dense", []int64{16, 40}, 1}}, 1.2},
	} {
		cost := func(specs []tensorSpec) float64 {
			naive, st := setupKernel(t, c.kernel, 7, specs)
			res, err := Optimize(naive, st, searchLimits)
			if err != nil {
				t.Fatal(err)
			}
			return res.Cost.Value
		}
		h, w := cost(c.hashed), cost(c.twin)
		name := c.kernel
		for i, ts := range c.twin {
			if ts.format != c.hashed[i].format {
				name += " " + ts.name + " " + ts.format
			}
		}
		t.Logf("%s: hash %.3g, twin %.3g: %.2fx", name, h, w, h/w)
		if h > c.atMost*w {
			t.Errorf("%s: the hash-stored form costs %.3g, %.2fx its twin's %.3g (at most %.1fx)", name, h, h/w, w, c.atMost)
		}
	}
}
