package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// TestDictRowsScatter: a copy of a dense factor's rows built once (dense
// or listed rows, the zeros left out) and walked per entry of A runs as a
// scatter of compressed rows, and the product agrees with the
// interpreter; so does a copy keyed by a hash level, whose rows the
// scatter reads one at a time, a copy storing positions whose values the
// scatter reads from B at them, and a walk whose factor is not the
// entry's value alone (or a read at it), which the scatter declines.
func TestDictRowsScatter(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		st := storage.Store{}
		randCSR(50, 40, 300, rng).store(st, "A")
		const w = 30
		b := make([]float64, 40*w)
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = float64(rng.IntN(5) + 1)
			}
		}
		st["B_len1"], st["B_len2"] = storage.IntScalar(40), storage.IntScalar(w)
		st["B_val"] = storage.RealArray(b)
		const plan = `let t1 =
  sum(<k1, _> in 0:40)
    { OUTER k1 -> sum(<j1, _> in 0:B_len2) { INNER j1 -> ENTRY } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t3 = A_val(p2) in
    sum(<j, v> in t1(k)) { @dense j -> VALUE } }`
		const value, position = "B_val(k1 * B_len2 + j1)", "k1 * B_len2 + j1 + 1"
		for _, c := range []struct {
			outer, inner, entry, value string
			scatter                    bool
		}{
			{"@dense", "@dense", value, "v * t3", true},
			{"@dense", "", value, "t3 * v", true},
			{"@hash", "@dense", value, "v * t3", true},
			{"@dense", "@dense", value, "v * v * t3", false},
			// The copy stores positions plus one, read at B_val(v - 1).
			{"@dense", "@dense", position, "B_val(v - 1) * t3", true},
			{"@hash", "", position, "t3 * B_val(v - 1)", true},
			{"@dense", "@dense", position, "B_val(v - 1 + 1) * t3", false},
		} {
			src := strings.NewReplacer("OUTER", c.outer, "INNER", c.inner, "ENTRY", c.entry, "VALUE", c.value).Replace(plan)
			e := parse(t, src, st)
			seen := events(func() { agree(t, e, st) })
			if got := seen["dict rows scatter"] > 0; got != c.scatter {
				t.Errorf("seed %d, %s %s rows of %s, value %s: %v; want a scatter of the rows %v", seed, c.outer, c.inner, c.entry, c.value, seen, c.scatter)
			}
		}
	}
}
