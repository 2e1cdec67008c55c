package opt

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/examples"
)

// TestMTTKRPFactorLayoutRanking pins the model's ranking of MTTKRP's
// factor D in csr, dense, csc and hash, with B's fibers of one or two
// entries (as wordnet's and orghs') and D's rows long: the merges are
// cheapest, of each fiber with a row of D (csr) or of C's row with a
// column of D per entry of the fiber (csc), then the fiber walked again
// per entry of C's row with a dense read (dense), then the same walk with
// a probe per entry (hash). The clock agrees (CPU ms per execution, one
// thread, wordnet with C 26x25 and D 25x117659 of density 1/32: csr
// 25-29, csc 27-29, dense 30, hash 36).
func TestMTTKRPFactorLayoutRanking(t *testing.T) {
	src, _ := examples.Source("mttkrp")
	r := rand.New(rand.NewPCG(7, 8))
	b := randomCOO(r, []int64{300, 26, 3000}, 1.0/2000)
	c, d := randomCOO(r, []int64{26, 25}, 1.0/32), randomCOO(r, []int64{25, 3000}, 1.0/32)
	layouts := []string{"csr", "dense", "csc", "hash"}
	var alts []Alternative
	for _, f := range layouts {
		naive, st := setupCOO(t, rand.New(rand.NewPCG(1, 1)), "mttkrp", src, []cooSpec{{"B", "csf", b}, {"C", "csr", c}, {"D", f, d}})
		alts = append(alts, Alternative{Label: f, Naive: naive, Store: st})
	}
	res, err := OptimizeAlternatives(alts, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	ranked := slices.Clone(res.Labels)
	cost := map[string]float64{}
	for i, l := range res.Labels {
		cost[l] = res.Results[i].Cost.Value
	}
	slices.SortStableFunc(ranked, func(x, y string) int {
		switch {
		case cost[x] < cost[y]:
			return -1
		case cost[x] > cost[y]:
			return 1
		}
		return 0
	})
	merges := []string{"csc", "csr"}
	top := []string{ranked[0], ranked[1]}
	slices.Sort(top)
	if !slices.Equal(top, merges) || ranked[2] != "dense" {
		t.Fatalf("ranked %v (costs %v), chose %s; want csr and csc, then dense, then hash", ranked, cost, res.Labels[res.Best])
	}
}

// TestMTTKRPExtractionPricesItsPlan: the cost the physical stage's
// extraction gives its plan is the plan's cost costed whole, so that the
// search ranks plans as the comparison of storage choices does (a loop run
// again per step of a sparse loop around it, a let of a built dictionary).
func TestMTTKRPExtractionPricesItsPlan(t *testing.T) {
	src, _ := examples.Source("mttkrp")
	r := rand.New(rand.NewPCG(7, 8))
	b := randomCOO(r, []int64{300, 26, 3000}, 1.0/2000)
	c, d := randomCOO(r, []int64{26, 25}, 1.0/32), randomCOO(r, []int64{25, 3000}, 1.0/32)
	for _, f := range []string{"csr", "dense", "csc", "hash"} {
		naive, st := setupCOO(t, rand.New(rand.NewPCG(1, 1)), "mttkrp", src, []cooSpec{{"B", "csf", b}, {"C", "csr", c}, {"D", f, d}})
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		ext := res.Stages[len(res.Stages)-1].Cost.Value
		if res.Chosen != "optimized" || math.Abs(ext-res.Cost.Value) > 0.01*res.Cost.Value {
			t.Errorf("D %s: extracted at %.4g, the %s plan costed whole %.4g", f, ext, res.Chosen, res.Cost.Value)
		}
	}
}
