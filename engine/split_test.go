package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestSplitChunksShareWork: chunks cover the iterations in order, none
// is empty, and each holds about its share of the work, however skewed
// the rows (a few rows hold most of the positions, as in a web graph).
func TestSplitChunksShareWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 3, 17, 1000} {
		pos := make([]int64, n+1)
		for i := 0; i < n; i++ {
			k := int64(rng.IntN(3))
			if rng.IntN(50) == 0 {
				k = 5000
			}
			pos[i+1] = pos[i] + k
		}
		lo := int64(5) // positions start at lo
		work := func(p int64) int64 { return p + clampedAt(pos, p-lo) }
		for _, parts := range []int{1, 2, 3, 8, 16} {
			cs := splitChunks(int64(n), parts, lo, work)
			if len(cs) == 0 || len(cs) > parts || cs[0][0] != 0 || cs[len(cs)-1][1] != int64(n) {
				t.Fatalf("n %d parts %d: chunks %v do not cover 0..%d", n, parts, cs, n)
			}
			total := work(lo+int64(n)) - work(lo)
			for i, c := range cs {
				if c[0] >= c[1] || (i > 0 && c[0] != cs[i-1][1]) {
					t.Fatalf("n %d parts %d: chunks %v are not contiguous and non-empty", n, parts, cs)
				}
				// A chunk passes its share by at most its last row.
				w := work(lo+c[1]) - work(lo+c[0])
				last := work(lo+c[1]) - work(lo+c[1]-1)
				if share := total / int64(len(cs)); len(cs) > 1 && w > share+last+1 {
					t.Errorf("n %d parts %d: chunk %v has work %d, share %d", n, parts, c, w, share)
				}
			}
		}
	}
}

// TestDenseMergeByWorkers: private dense results added by workers over
// ranges of keys give the bits a merge by one worker gives.
func TestDenseMergeByWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	a := randCSR(400, 5000, 8000, rng)
	for i := range a.val {
		a.val[i] = rng.Float64()*2 - 1 // not exactly summable
	}
	st := storage.Store{"x": storage.RealArray(randVec(5000, rng)), "beta": storage.RealScalar(math.E)}
	a.store(st, "A")
	saved := denseMergeMin
	defer func() { denseMergeMin = saved }()
	for _, plan := range []string{planBATAX,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> A_val(p) * x(i) }`,
		`sum(<i, _> in 0:A_len1) sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i+1))) { @dense j -> i }`} {
		e := parse(t, plan, st)
		for _, threads := range []int{2, 3, 7} {
			denseMergeMin = math.MaxInt
			one, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			denseMergeMin = 1
			many, err := runEngine(e, st, threads)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(one, many, 0) {
				t.Errorf("%s, %d threads: the merge by workers differs from the merge by one", plan, threads)
			}
		}
	}
}
