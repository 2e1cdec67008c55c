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

// TestDictRowsCompressedWhereTheyLie: a copy of B built in sequential
// mode (seqrows.go) is compressed for the scatter from its chunks, not a
// dictionary per row: rows listed (sparse), dense (at least half full,
// shorter than a streak), with zeros among their values, of zeros only,
// absent (a guard), of reals and of positions (ints), over enough rows
// to fill several chunks; the product agrees with the interpreter at 1
// and 3 threads.
func TestDictRowsCompressedWhereTheyLie(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 18))
	st := storage.Store{}
	const rows, w = 400, 30
	randCSR(60, rows, 900, rng).store(st, "A")
	b := make([]float64, rows*w)
	for k := range rows {
		density := []float64{0, 1.0 / 8, 0.6, 1, 0.9}[k%5]
		for j := range w {
			if rng.Float64() < density {
				b[k*w+j] = float64(rng.IntN(5) + 1)
			}
		}
	}
	st["B_len1"], st["B_len2"] = storage.IntScalar(rows), storage.IntScalar(w)
	st["B_val"] = storage.RealArray(b)
	const plan = `let t1 =
  sum(<k1, _> in 0:B_len1) GUARD
    { @dense k1 -> sum(<j1, _> in 0:B_len2) { @dense j1 -> ENTRY } }
in
sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    let t3 = A_val(p2) in
    sum(<j, v> in t1(k)) { @dense j -> VALUE } }`
	for _, c := range []struct{ guard, entry, value string }{
		{"", "B_val(k1 * B_len2 + j1)", "v * t3"},
		{"if k1 % 7 != 3 then", "B_val(k1 * B_len2 + j1)", "v * t3"},
		// Positions plus one where B is not zero: a copy of ints.
		{"", "if B_val(k1 * B_len2 + j1) != 0 then k1 * B_len2 + j1 + 1", "B_val(v - 1) * t3"},
	} {
		src := strings.NewReplacer("GUARD", c.guard, "ENTRY", c.entry, "VALUE", c.value).Replace(plan)
		e := parse(t, src, st)
		seen := events(func() { agree(t, e, st) })
		if seen["dict rows scatter"] == 0 || seen["built rows compressed where they lie"] == 0 {
			t.Errorf("%q rows of %s: %v; want the built rows compressed where they lie and scattered", c.guard, c.entry, seen)
		}
	}
}
