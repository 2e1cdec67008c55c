package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// Plans that read a dense matrix G (G_len1 x G_len2, row-major) at an
// affine index of a loop's key: MTTKRP with D stored dense, in both of the
// orders the optimizer writes it, and the index written in other ways.
// A's row i gives keys k, E's row p2 (one per entry of A) the keys l, F's
// row k the keys j; G's rows are j, its columns l.
var affinePlans = []struct{ name, plan string }{
	{"MTTKRP's nest (affRowsRun)", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
        if 0 <= l && l < G_len2 then
          sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
            if 0 <= j && j < G_len1 then
              { @dense j -> E_val(p3) * F_val(q) * G_val(G_len2 * j + l) } }`},
	// Without guards a key past G is an error, which the fast loops must
	// report as the general one does (or leave to it).
	{"the nest unguarded", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> E_val(p3) * F_val(q) * G_val(G_len2 * j + l) } }`},
	// A let in the outer prelude, invariant factors around the product.
	{"the nest unguarded, with a let", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
        let t = E_val(p3) in
          sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
            { @dense j -> 0.5 * F_val(q) * t * G_val(l + j * G_len2) * t } }`},
	// The read behind its own guard, l - 1 (a difference), and a guard that
	// is not the read's bounds.
	{"the nest, l - 1 behind the read's own guard", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
        sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
          { @dense j -> F_val(q) * (if 1 <= j && j <= lastJ then
            G_val(G_len2 * j + l - 1)) } }`},
	// The other order: per entry j of F's row, a dot of E's row with G's
	// row j (affDot), the guarded F_val(q) an affine read with m 1.
	{"MTTKRP's dot (affDot)", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> (if 0 <= j && j <= lastJ then F_val(q)) *
          (sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
            E_val(p3) * (if 0 <= l && l < G_len2 then G_val(G_len2 * j + l))) } }`},
	{"the dot unguarded, with invariant factors", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    if 0 <= k && k < F_len1 then
      sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
        { @dense j -> 2.0 * F_val(q) * 3.0 * (sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
          E_val(p3) * G_val(G_len2 * j + l)) * 0.7 } }`},
	// A stride other than 1 in the dot: G read down a column.
	{"a dot down a column", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<p2, k> in A_idx2(A_pos2(i):A_pos2(i + 1)))
    sum(<q, j> in F_idx2(F_pos2(k):F_pos2(k + 1)))
      { @dense j -> F_val(q) * (sum(<p3, l> in E_idx2(E_pos2(p2):E_pos2(p2 + 1)))
        2.0 * E_val(p3) * G_val(l * G_len1 + j) * 0.25) } }`},
}

// TestAffineReads runs the plans against the interpreter (1 and 3
// threads) and against themselves compiled on the closure path only (the
// same bits and errors), on data where G covers every key and where it
// does not (fewer rows or columns: guards filter, or reads fail), with
// E's row bounds one short, G's values thirds, and G stored as ints. The
// loop-nest IR reads G at the affine index itself (nestvec.go); it must
// lower the dot forms' inner sum, whose read of G is the affine one.
func TestAffineReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, pc := range affinePlans {
		lowered := 0
		for trial := range 120 {
			st := affineData(trial, rng)
			againstGeneral(t, pc.name, pc.plan, st, func(off bool) { closuresOnly = off })
			if trial == 0 {
				k, err := Compile(parse(t, pc.plan, st), SchemaOf(st), Options{})
				if err != nil {
					t.Fatal(err)
				}
				lowered = len(k.nests)
			}
		}
		if strings.Contains(pc.name, "dot") && lowered == 0 {
			t.Errorf("%s: the loop-nest IR lowered no loop", pc.name)
		}
	}
}

// affineData returns the matrices of the affine plans for a trial: A (n x
// w), E (one row per entry of A, x w), F (w x m) and G (gm x gw dense,
// gm = m and gw = w unless trial 1 mod 4 makes G short of rows, 2 mod 4
// of columns, and 4 mod 8 one entry short of the largest index the
// unguarded plans read), lastJ (G's last row, one less in trial 3 mod 4). E's row
// bounds are one short in trial 5 mod 8, E's values half of them in 6
// mod 8 and F's one short in 7 mod 8; G's values are thirds, E's sevenths and F's fifths in trial 0 mod 3,
// and G's are ints in trial 1 mod 3.
func affineData(trial int, rng *rand.Rand) storage.Store {
	n, m, w := 1+rng.IntN(20), 1+rng.IntN(12), 1+rng.IntN(25)
	st := storage.Store{}
	csr(st, "A", n, w, rng.IntN(3*n+1), rng)
	ne := st["A_val"].(*storage.Array).Len()
	csr(st, "E", ne, w, rng.IntN(3*ne+1), rng)
	csr(st, "F", w, m, rng.IntN(2*w+1), rng)
	gm, gw := m, w
	switch trial % 4 {
	case 1:
		gm = rng.IntN(m + 1)
	case 2:
		gw = rng.IntN(w + 1)
	}
	if fk, ek := st["F_idx2"].(*storage.Array).I, st["E_idx2"].(*storage.Array).I; trial%8 == 4 && len(fk) > 0 && len(ek) > 0 {
		// G's last row is F's last key and G's width E's last key: the
		// largest index G_len2 * j + l is one past G's end.
		gm, gw = int(slices.Max(fk))+1, int(slices.Max(ek))
	}
	lastJ := gm - 1
	if trial%4 == 3 {
		lastJ--
	}
	vals := make([]float64, gm*gw)
	ints := make([]int64, gm*gw)
	for x := range vals {
		ints[x] = int64(rng.IntN(9) + 1)
		vals[x] = float64(ints[x])
		if trial%3 == 0 {
			vals[x] /= 3
		}
	}
	st["G_len1"], st["G_len2"] = storage.IntScalar(int64(gm)), storage.IntScalar(int64(gw))
	st["G_val"] = storage.RealArray(vals)
	if trial%3 == 1 {
		st["G_val"] = storage.IntArray(ints)
	}
	st["lastJ"] = storage.IntScalar(int64(lastJ))
	if trial%3 == 0 {
		// Sevenths and fifths: products in another order round differently.
		for name, d := range map[string]float64{"E_val": 7, "F_val": 5} {
			for i, v := range st[name].(*storage.Array).F {
				st[name].(*storage.Array).F[i] = v / d
			}
		}
	}
	switch {
	case trial%8 == 5:
		st["E_pos2"] = oneShort(st["E_pos2"].(*storage.Array))
	case trial%8 == 6:
		ev := st["E_val"].(*storage.Array).F
		st["E_val"] = storage.RealArray(ev[:len(ev)/2])
	case trial%8 == 7 && st["F_val"].(*storage.Array).Len() > 0:
		st["F_val"] = oneShort(st["F_val"].(*storage.Array))
	}
	return st
}
