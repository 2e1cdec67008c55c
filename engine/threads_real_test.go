package engine

import (
	"flag"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var (
	threadRuns    = flag.Int("engine.threads", 0, "TestRealMatrixThreads: alternate this many runs at 1 thread and split for 2 workers")
	threadKernels = flag.String("engine.kernels", "spmv,batax,mmm", "TestRealMatrixThreads: the kernels to run")
)

// TestRealMatrixThreads runs SpMV, BATAX and MMM (B random, 250 columns
// at density 1/32, as the e2e benchmark's) on -engine.matrix at one
// thread and split for 2 workers, alternating, and logs what a loaded
// machine shows where a wall-clock speed-up is noise: the CPU the one
// thread run takes, each worker's thread CPU time in its chunks (the
// busiest over the mean), and the CPU the split run takes outside its
// chunks (its private results' zeroing and merging, the result gathered
// after, the collector). The 2-worker run's answer must be the
// 1-thread run's; it never fails on timings.
//
//	go test ./engine -run RealMatrixThreads -engine.threads 9 -engine.matrix /tmp/cnr-real.mtx -v
func TestRealMatrixThreads(t *testing.T) {
	if *threadRuns == 0 {
		t.Skip("set -engine.threads N")
	}
	coo := readMatrixFlag(t)
	n, m := coo.Dims[0], coo.Dims[1]
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kernel := range strings.Split(*threadKernels, ",") {
		formats := map[string]string{"A": "csr"}
		tensors := map[string]stored{"A": {coo, "csr"}}
		if kernel == "mmm" {
			formats["B"] = "csr"
			tensors["B"] = stored{randFactor(rng, m, 250), "csr"}
		}
		st := storeOf(t, tensors)
		st["x"] = storage.RealArray(randVec(int(max(n, m)), rng))
		st["beta"] = storage.RealScalar(1.5)
		plan := optimizedPlan(t, kernel, formats, st)
		k1, err := Compile(plan, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		k2, err := Compile(plan, SchemaOf(st), Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		pos := st["A_pos2"].(*storage.Array).I
		entryWeight := int64(1)
		if kernel == "batax" {
			entryWeight = 2
		}
		var perWork []float64 // the chunks' ns per unit of weight
		var one, chunked, outside, ratios, walls1, walls2, before, after []float64
		want, err := k1.Run(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k2.Run(st)
		if err != nil {
			t.Fatal(err)
		}
		if !value.Equal(want, got, 1e-9) {
			t.Fatalf("%s: 2 workers differ from 1 thread", kernel)
		}
		for r := range 2 * *threadRuns {
			k := k1
			if r%2 == 1 {
				k = k2
			}
			runtime.GC()
			b, stop := traceBalance()
			// The wall time before the first chunk starts and after the
			// last ends: the run's serial parts.
			var mu sync.Mutex
			var first, last time.Time
			inner := chunkTrace
			chunkTrace = func(w int, part [2]int64) func() {
				mu.Lock()
				if first.IsZero() {
					first = time.Now()
				}
				mu.Unlock()
				done := inner(w, part)
				c0, _ := threadCPU()
				return func() {
					c1, _ := threadCPU()
					done()
					mu.Lock()
					last = time.Now()
					if r%2 == 1 && part[1] > part[0] && kernel != "mmm" {
						// CPU per unit of the chunk's weight, as the split
						// counts it: rows plus entries (SpMV), plus twice
						// the entries (BATAX). MMM's counts B's rows too.
						weight := part[1] - part[0] + entryWeight*(pos[part[1]]-pos[part[0]])
						perWork = append(perWork, float64(c1-c0)/float64(weight))
					}
					mu.Unlock()
				}
			}
			start, cpu0 := time.Now(), processCPU()
			_, err := k.Exec(st)
			end, cpu := time.Now(), time.Duration(processCPU()-cpu0)
			wall := end.Sub(start)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if r%2 == 0 {
				one = append(one, ms(cpu))
				walls1 = append(walls1, ms(wall))
				continue
			}
			ratio, total := b.ratio()
			before, after = append(before, ms(first.Sub(start))), append(after, ms(end.Sub(last)))
			chunked = append(chunked, ms(total))
			outside = append(outside, ms(cpu-total))
			ratios = append(ratios, ratio)
			walls2 = append(walls2, ms(wall))
			t.Logf("%s 2 workers: %v; process cpu %v, wall %v", kernel, b, cpu, wall)
		}
		med := func(s []float64) float64 { slices.Sort(s); return s[len(s)/2] }
		// The spread of the chunks' cost per unit of weight: with
		// chunks claimed in turn it costs at most the last chunk's
		// wait, but it is what equal work leaves unequal.
		slices.Sort(perWork)
		if len(perWork) > 0 {
			t.Logf("%s: %d chunks' cpu per unit of weight: 10th percentile %.2f ns, median %.2f, 90th %.2f, max %.2f",
				kernel, len(perWork), perWork[len(perWork)/10], perWork[len(perWork)/2], perWork[len(perWork)*9/10], perWork[len(perWork)-1])
		}
		t.Logf("%s medians of %d runs: 1 thread cpu %.2f ms (wall %.2f); 2 workers: chunks' cpu %.2f ms (%.2fx), outside the chunks %.2f ms (wall before the first %.2f, after the last %.2f), busiest/mean %.2f (wall %.2f)",
			kernel, *threadRuns, med(one), med(walls1), med(chunked), med(chunked)/med(one), med(outside), med(before), med(after), med(ratios), med(walls2))
	}
}
