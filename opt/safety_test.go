package opt

import "testing"

// A refused rewrite leaves its nodes in the graph: here F1r's
// let k12 = k5 in b, k5 wider than the range k12's body was judged with.
// LT2 then matched the leftover let (its variable unused in b) and united
// it with b, which made b's class, and every class above it, unsafe; from
// there on the safety check let in F1's let k12 = k5 of the same body
// (its bounds test dropped by I9), and the plan read A_val past its end.
func TestRefusedRewriteLeavesSafeClassesSafe(t *testing.T) {
	if err := checkPipeline(98, 142649); err != nil {
		t.Fatal(err)
	}
}
