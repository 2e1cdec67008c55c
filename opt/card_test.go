package opt

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// TestCardMeetKeepsOneEstimate: the meet of two shapes of one estimate
// (a row of n entries under one key, and n keys of one entry each, which
// equal terms get from different derivations) keeps n leaves. A
// level-by-level minimum claimed one leaf, made a temporary dictionary look
// free and chose MMM's scaled-temporary plan (55x slower than in place).
func TestCardMeetKeepsOneEstimate(t *testing.T) {
	row := Card{{Size: 1, Layout: LayoutLogical}, {Size: 100, Layout: LayoutLogical}}
	keys := Card{{Size: 100, Layout: LayoutLogical}, {Size: 1, Layout: LayoutLogical}}
	for _, c := range []Card{row.meet(keys), keys.meet(row)} {
		if c.Total() != 100 {
			t.Errorf("meet of %v and %v = %v: %g leaves, want 100", row, keys, c, c.Total())
		}
	}
	small := Card{{Size: 10, Layout: LayoutHash}, {Size: 5, Layout: LayoutDense}}
	if got := keys.meet(small); got.Total() != 50 || got[0].Layout != LayoutHash || got[1].Layout != LayoutDense {
		t.Errorf("meet of %v and %v = %v, want 50 leaves with the cheaper layouts", keys, small, got)
	}
}

// TestCardMeetSettles: a class holding if c then e for its own e (I9 once
// c is known true) meets its estimate with itself scaled by c's
// selectivity at every pass of the analysis. The estimate must settle in a
// few dozen passes: each pass re-estimates every class above it, and
// shrinking towards zero took about 800 (seeds 86, 39779 of FuzzPipeline
// then spent seconds in one rebuild).
func TestCardMeetSettles(t *testing.T) {
	for _, start := range []float64{1, 1e6, 1e9} {
		c := Card{{Size: start, Layout: LayoutLogical}}
		passes := 0
		for ; passes < 1000; passes++ {
			next := c.meet(c.scaled(selCmp))
			if next.equal(c) {
				break
			}
			c = next
		}
		if passes > 60 {
			t.Errorf("from %g entries: %d passes to settle (at %v)", start, passes, c)
		}
	}
}

func TestCardScaledAt(t *testing.T) {
	c := Card{{Size: 1}, {Size: 4}}
	if got := c.scaledAt(1, 10); got[0].Size != 1 || got[1].Size != 40 {
		t.Errorf("scaledAt(1, 10) of %v = %v", c, got)
	}
	if got := c.scaledAt(2, 10); !got.equal(c) {
		t.Errorf("scaledAt(2, 10) of %v = %v: a scalar body keeps its card", c, got)
	}
	capped := Card{{Size: 1, Keys: interval{0, 9, true}}}
	if got := capped.scaledAt(0, 100); got[0].Size != 10 {
		t.Errorf("scaledAt(0, 100) of %v = %v, want capped at 10 keys", capped, got)
	}
	// 10^7 entries {i -> {j -> v}} over 10^5 rows: rows of 100 (the
	// SumMMM sweep at 10^5 x 10^5, density 1e-3, chose a plan that
	// recomputes a row of B per non-zero of A when this read 1).
	rows := Card{{Size: 1, Keys: interval{0, 99_999, true}}, {Size: 1}}
	if got := rows.scaledAt(0, 1e7); got[0].Size != 1e5 || got[1].Size != 100 {
		t.Errorf("scaledAt(0, 1e7) of %v = %v, want 1e5 rows of 100", rows, got)
	}
}

// TestMMMAccumulatesInPlace: at density 0.1 the optimizer used to scale a
// freshly built row of B by A(i,k) ({i -> sum_j {j -> B}} * A_val) instead
// of accumulating A_val*B_val into the output row. No product of the plan
// may have a dictionary operand.
func TestMMMAccumulatesInPlace(t *testing.T) {
	for _, d := range []float64{0.03, 0.1, 0.3} {
		naive, st := setupKernel(t, "mmm", 1, []tensorSpec{{"A", "csr", []int64{1000, 1000}, d}, {"B", "csr", []int64{1000, 1000}, d}})
		res, err := Optimize(naive, st, searchLimits)
		if err != nil {
			t.Fatal(err)
		}
		var scaled []*ir.Expr
		ir.Walk(res.Plan, func(e *ir.Expr) bool {
			if e.Op == ir.OpMul && e.Type.Depth > 0 {
				scaled = append(scaled, e)
			}
			return true
		})
		if len(scaled) > 0 {
			t.Errorf("density %g: the plan multiplies a dictionary (%s):\n%s", d, ir.Format(scaled[0]), ir.Format(res.Plan))
		}
	}
}

// TestHashFanout checks the fan-outs GatherStats records for a hash map of
// three levels against counts of its distinct key prefixes, with the keys
// put in random order and in sorted order (counted in one pass).
func TestHashFanout(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	prefixes := [3]map[[3]int64]bool{{}, {}, {}}
	var keys [][3]int64
	for range 2000 {
		k := [3]int64{r.Int64N(4), r.Int64N(50), r.Int64N(50)}
		keys = append(keys, k)
		for l := range 3 {
			var p [3]int64
			copy(p[:l+1], k[:l+1])
			prefixes[l][p] = true
		}
	}
	want := fanout([]float64{float64(len(prefixes[0])), float64(len(prefixes[1])), float64(len(prefixes[2]))})
	for _, sorted := range []bool{false, true} {
		if sorted {
			slices.SortFunc(keys, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
		}
		h := storage.NewHashMap(ir.Real, []int64{4, 50, 50})
		for _, k := range keys {
			if err := h.Put(k[:], 0, 1); err != nil {
				t.Fatal(err)
			}
		}
		if got := GatherStats(storage.Store{"H": h}).Maps["H"]; !slices.Equal(got, want) {
			t.Errorf("keys sorted %v: fan-outs %v, want %v", sorted, got, want)
		}
	}
}
