package opt

import (
	"math/rand/v2"
	"testing"
)

// The two forms of MTTKRP's inner product over orghs-shaped data that the
// optimizer chose between by the random draw: C's value multiplied inside
// the merge's singleton, or the merge's {j -> B*D} built as a temporary
// and scaled by it.
const (
	mttkrpInPlace = `
sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    if 0 <= k && k < C_len1 then
      sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
        merge(<p3, p5, _> in <B_idx3(B_pos3(p2):B_pos3(p2 + 1)), D_idx2(D_pos2(j):D_pos2(j + 1))>)
          { @dense j -> (if 0 <= j && j < D_len1 then B_val(p3) * C_val(p4)) * D_val(p5) } }`
	mttkrpScaledTemp = `
sum(<p1, i> in B_idx1(B_pos1(0):B_pos1(1)))
  { @dense i -> sum(<p2, k> in B_idx2(B_pos2(p1):B_pos2(p1 + 1)))
    if 0 <= k && k < C_len1 then
      sum(<p4, j> in C_idx2(C_pos2(k):C_pos2(k + 1)))
        (merge(<p3, p5, _> in <B_idx3(B_pos3(p2):B_pos3(p2 + 1)), D_idx2(D_pos2(j):D_pos2(j + 1))>)
          { @dense j -> B_val(p3) * D_val(p5) }) * (if 0 <= j && j < D_len1 then C_val(p4)) }`
)

// TestScaledTemporaryCostsItsConstruction: a product of a dictionary and
// a scalar builds the dictionary as a temporary every time it runs (a
// builder, filled, frozen, then scaled into a new one), whatever its few
// entries; the cost must say so (tempDict), or the optimizer takes the
// scaled form when the entry counts tie, which runs MTTKRP several times
// slower than the in-place form (engine.TestRealMTTKRPRatio).
func TestScaledTemporaryCostsItsConstruction(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	naive, st := composeOver(t, "mttkrp", []tensorInput{
		{"B", "csf", randomSparseCOO(r, []int64{2000, 1800, 20}, 20000)},
		{"C", "csr", randomSparseCOO(r, []int64{1800, 25}, 1800*25/32)},
		{"D", "csr", randomSparseCOO(r, []int64{25, 20}, 25*20/32)},
	})
	env := globalsEnv(naive)
	inPlace, scaled := textCost(t, st, env, mttkrpInPlace), textCost(t, st, env, mttkrpScaledTemp)
	// Per product the temporary costs tempDict against a few merge steps.
	if scaled < 2*inPlace {
		t.Errorf("the scaled temporary costs %g, the product in place %g: want at least twice", scaled, inPlace)
	}
}
