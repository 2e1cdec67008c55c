package opt

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/examples"
)

// TestFormatChoiceRanksAsClock: OptimizeAlternatives, offered the formats
// of one tensor, picks the one the engine runs fastest, in either order,
// and rates it strictly cheaper. SpMV and BATAX over csc or coo write the
// result at row keys read from the data (a scatter) where csr's rows are
// a range: the engine's scatter is slower (bcsstk16, one thread: SpMV csr
// 0.27-0.31 ms, csc 0.46-0.64 ms, coo 0.46-0.55 ms; BATAX csr 0.40-0.42
// ms, coo 1.27-1.62 ms). MTTKRP with B in coo or hash runs its loop over
// the columns of a row of A once per entry of B, where csf runs it once
// per row of B (orghs, rank 16: csf 85-103 ms, coo 158-201 ms, hash
// 155-177 ms). The commands are in bench/results/formatchoice.txt.
func TestFormatChoiceRanksAsClock(t *testing.T) {
	// The slower format must be rated dearer by a margin, not by a tie
	// that the order of the alternatives or a rounding breaks: the
	// clock's ratios are 1.6 or more.
	const minRatio = 1.25
	r := rand.New(rand.NewPCG(41, 42))
	mat := randomCOO(r, []int64{600, 600}, 0.03)
	t3 := randomCOO(r, []int64{200, 300, 20}, 0.02)
	mC, mD := randomCOO(r, []int64{300, 16}, 1), randomCOO(r, []int64{16, 20}, 1)
	cases := []struct {
		kernel, tensor string
		fast, slow     string
		others         []cooSpec
	}{
		{"spmv", "A", "csr", "csc", nil},
		{"spmv", "A", "csr", "coo", nil},
		{"batax", "A", "csr", "coo", nil},
		{"mttkrp", "B", "csf", "coo", []cooSpec{{"C", "dense", mC}, {"D", "dense", mD}}},
		{"mttkrp", "B", "csf", "hash", []cooSpec{{"C", "dense", mC}, {"D", "dense", mD}}},
	}
	for _, c := range cases {
		src, _ := examples.Source(c.kernel)
		data := mat
		if c.kernel == "mttkrp" {
			data = t3
		}
		for _, order := range [][]string{{c.fast, c.slow}, {c.slow, c.fast}} {
			var alts []Alternative
			for _, f := range order {
				specs := append([]cooSpec{{c.tensor, f, data}}, c.others...)
				naive, st := setupCOO(t, rand.New(rand.NewPCG(1, 1)), c.kernel, src, specs)
				alts = append(alts, Alternative{Label: f, Naive: naive, Store: st})
			}
			res, err := OptimizeAlternatives(alts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cost := map[string]float64{}
			for i, l := range res.Labels {
				cost[l] = res.Results[i].Cost.Value
			}
			if res.Labels[res.Best] != c.fast || !(cost[c.fast]*minRatio < cost[c.slow]) {
				t.Errorf("%s, %s=%v: chose %s; cost %s %g, %s %g", c.kernel, c.tensor, order, res.Labels[res.Best], c.fast, cost[c.fast], c.slow, cost[c.slow])
			}
		}
	}
}
