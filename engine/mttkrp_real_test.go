package engine

import (
	"flag"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var (
	mttkrpRuns   = flag.Int("engine.mttkrp", 0, "TestRealMTTKRPRatio: alternate this many runs of MTTKRP and its hand loop on -engine.tensor")
	mttkrpTensor = flag.String("engine.tensor", "", "TestRealMTTKRPRatio: a 3-tensor file (.tns or .tns.gz)")
	mttkrpD      = flag.String("engine.dformat", "csr", "TestRealMTTKRPRatio: D's format, csr or dense")
)

// TestRealMTTKRPRatio measures MTTKRP on a real 3-tensor against a
// hand-written loop over the same arrays, in one process, alternating, one
// thread: the optimizer's plan for B CSF, C CSR (dim2 x 25) and D CSR
// (25 x dim3), the factors random at density 1/32 as in the e2e benchmark.
// The hand loop is the engine's plan written out: per fiber B(i,k,:), per
// entry j of C's row k, the galloping merge (seek) of the fiber with D's
// row j, into a flat dense output. Its result must match the engine's; it
// never fails on timings.
//
//	go test ./engine -run RealMTTKRPRatio -engine.mttkrp 41 -engine.tensor /work/shared/data/wordnet30_synset_ptr_synset.tns.gz -v
func TestRealMTTKRPRatio(t *testing.T) {
	if *mttkrpRuns == 0 {
		t.Skip("set -engine.mttkrp N")
	}
	if _, err := os.Stat(*mttkrpTensor); err != nil {
		t.Skipf("no tensor: %v", err)
	}
	coo, err := storage.ReadTensorFile(*mttkrpTensor, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const rank = 25
	rng := rand.New(rand.NewPCG(14, 15))
	st := storeOf(t, map[string]stored{"B": {coo, "csf"}, "C": {randFactor(rng, coo.Dims[1], rank), "csr"}, "D": {randFactor(rng, rank, coo.Dims[2]), *mttkrpD}})
	ints := func(name string) []int64 { return st[name].(*storage.Array).I }
	reals := func(name string) []float64 { return st[name].(*storage.Array).F }
	b := &sparseCSF{pos1: ints("B_pos1"), idx1: ints("B_idx1"), pos2: ints("B_pos2"), idx2: ints("B_idx2"),
		pos3: ints("B_pos3"), idx3: ints("B_idx3"), val: reals("B_val")}
	c := &sparseCSR{n: int(coo.Dims[1]), m: rank, pos: ints("C_pos2"), idx: ints("C_idx2"), val: reals("C_val")}
	hand := func(out []float64) {
		handMTTKRP(b, c, &sparseCSR{n: rank, m: int(coo.Dims[2]), pos: ints("D_pos2"), idx: ints("D_idx2"), val: reals("D_val")}, out)
	}
	switch *mttkrpD {
	case "dense":
		hand = func(out []float64) { handMTTKRPDense(b, c, reals("D_val"), coo.Dims[2], out) }
	case "csr":
	default:
		t.Fatalf("-engine.dformat %s: want csr or dense", *mttkrpD)
	}

	plan := optimizedPlan(t, "mttkrp", map[string]string{"B": "csf", "C": "csr", "D": *mttkrpD}, st)
	t.Logf("the optimizer's plan:\n%s", ir.Format(plan))
	k, err := Compile(plan, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, coo.Dims[0]*rank)
	v, err := k.Run(st)
	if err != nil {
		t.Fatal(err)
	}
	hand(out)
	want := map[int64][]float64{}
	for _, i := range b.idx1 {
		want[i] = out[i*rank : (i+1)*rank]
	}
	if !value.Equal(v, mapValue(want, vecValue), 0) {
		t.Fatal("the engine's result differs from the hand loop's")
	}

	var ts, th []time.Duration
	for range *mttkrpRuns {
		start := time.Now()
		if _, err := k.Exec(st); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, time.Since(start))
		start = time.Now()
		clear(out)
		hand(out)
		th = append(th, time.Since(start))
	}
	slices.Sort(ts)
	slices.Sort(th)
	t.Logf("MTTKRP of %s, one thread, %d runs each: storel median %v (min %v), hand %v (min %v): ratio of medians %.2f, of mins %.2f",
		*mttkrpTensor, *mttkrpRuns, ts[len(ts)/2], ts[0], th[len(th)/2], th[0],
		float64(ts[len(ts)/2])/float64(th[len(th)/2]), float64(ts[0])/float64(th[0]))
}

// handMTTKRP adds A(i,j) = sum_{k,l} B(i,k,l) C(k,j) D(j,l) into the flat
// dense out (row i at out[i*c.m:]).
func handMTTKRP(b *sparseCSF, c, d *sparseCSR, out []float64) {
	for ip, i := range b.idx1 {
		row := out[i*int64(c.m) : (i+1)*int64(c.m)]
		for kp := b.pos2[ip]; kp < b.pos2[ip+1]; kp++ {
			k := b.idx2[kp]
			bs, bv := b.idx3[b.pos3[kp]:b.pos3[kp+1]], b.val[b.pos3[kp]:b.pos3[kp+1]]
			for jp := c.pos[k]; jp < c.pos[k+1]; jp++ {
				j := c.idx[jp]
				ds, dv := d.idx[d.pos[j]:d.pos[j+1]], d.val[d.pos[j]:d.pos[j+1]]
				s := 0.0
				x, y := 0, 0
				for x < len(bs) && y < len(ds) {
					switch {
					case bs[x] < ds[y]:
						x = seek(bs, x+1, ds[y])
					case ds[y] < bs[x]:
						y = seek(ds, y+1, bs[x])
					default:
						s += bv[x] * dv[y]
						x++
						y++
					}
				}
				row[j] += c.val[jp] * s
			}
		}
	}
}

// handMTTKRPDense is handMTTKRP with D dense (row j at dv[j*n:]): the
// optimizer's plan for that storage, per entry B(i,k,l) and entry j of C's
// row k, out[i][j] += B(i,k,l) C(k,j) D(j,l).
func handMTTKRPDense(b *sparseCSF, c *sparseCSR, dv []float64, n int64, out []float64) {
	for ip, i := range b.idx1 {
		row := out[i*int64(c.m) : (i+1)*int64(c.m)]
		for kp := b.pos2[ip]; kp < b.pos2[ip+1]; kp++ {
			k := b.idx2[kp]
			cs, cv := c.idx[c.pos[k]:c.pos[k+1]], c.val[c.pos[k]:c.pos[k+1]]
			for lp := b.pos3[kp]; lp < b.pos3[kp+1]; lp++ {
				l, bv := b.idx3[lp], b.val[lp]
				for q, j := range cs {
					row[j] += bv * cv[q] * dv[j*n+l]
				}
			}
		}
	}
}

var mttkrpCPD = flag.Bool("engine.cpd", false, "TestRealMTTKRPThreads: C and D dense, rank 16, every entry set (the cpd experiment's factors)")

// TestRealMTTKRPThreads runs MTTKRP on -engine.tensor split for 2 workers,
// its chunks in turn on one thread and then on 2 workers, and logs each
// worker's thread CPU time (a split's balance: the busiest worker over the
// mean) and the total against the chunks' in turn, which a loaded machine
// shows where a wall-clock speed-up is noise. Factors as in
// TestRealMTTKRPRatio, or dense as cpd's with -engine.cpd.
//
//	go test ./engine -run RealMTTKRPThreads -engine.mttkrp 9 -engine.tensor /work/shared/data/wordnet30_synset_ptr_synset.tns.gz [-engine.cpd] -v
func TestRealMTTKRPThreads(t *testing.T) {
	if *mttkrpRuns == 0 {
		t.Skip("set -engine.mttkrp N")
	}
	coo, err := storage.ReadTensorFile(*mttkrpTensor, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(14, 15))
	formats := map[string]string{"B": "csf", "C": "csr", "D": *mttkrpD}
	var c, d *storage.COO
	if *mttkrpCPD {
		formats["C"], formats["D"] = "dense", "dense"
		c, d = fullFactor(rng, coo.Dims[1], 16), fullFactor(rng, 16, coo.Dims[2])
	} else {
		c, d = randFactor(rng, coo.Dims[1], 25), randFactor(rng, 25, coo.Dims[2])
	}
	st := storeOf(t, map[string]stored{"B": {coo, "csf"}, "C": {c, formats["C"]}, "D": {d, formats["D"]}})
	plan := optimizedPlan(t, "mttkrp", formats, st)
	k, err := Compile(plan, SchemaOf(st), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	saved := parallelMin
	defer func() { parallelMin = saved }()
	var one, two []float64
	var ratios []float64
	for r := range 2 * *mttkrpRuns {
		inTurn := r%2 == 0
		parallelMin = saved
		if inTurn {
			parallelMin = time.Hour
		}
		b, stop := traceBalance()
		start, cpu0 := time.Now(), processCPU()
		_, err := k.Exec(st)
		wall, cpu := time.Since(start), time.Duration(processCPU()-cpu0)
		stop()
		if err != nil {
			t.Fatal(err)
		}
		ratio, total := b.ratio()
		if inTurn {
			one = append(one, float64(total)/1e6)
		} else {
			two = append(two, float64(total)/1e6)
			ratios = append(ratios, ratio)
		}
		t.Logf("in turn %v: %v; run %v, process cpu %v", inTurn, b, wall, cpu)
	}
	slices.Sort(one)
	slices.Sort(two)
	slices.Sort(ratios)
	t.Logf("medians over %d runs: chunks in turn %.2f ms, on 2 workers %.2f ms in all (%.2fx), busiest worker / mean %.2f",
		*mttkrpRuns, one[len(one)/2], two[len(two)/2], two[len(two)/2]/one[len(one)/2], ratios[len(ratios)/2])
}

// fullFactor returns an n x m matrix with every entry set.
func fullFactor(rng *rand.Rand, n, m int64) *storage.COO {
	f := &storage.COO{Dims: []int64{n, m}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	for i := range n {
		for j := range m {
			f.Coords[0], f.Coords[1] = append(f.Coords[0], i), append(f.Coords[1], j)
			f.Vals = append(f.Vals, float64(1+rng.IntN(2048))/1024)
		}
	}
	return f
}
