package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// BenchmarkNestShapes is the execution bake-off of the loop-nest IR on
// the shapes: "nest" runs the IR (vectorized batches, position
// space), "older" the same plan with the IR off (the closure paths and
// shape-specific loops), "loop" a Go loop written for that plan alone,
// which is what a template generated per IR combination would run.
//
//	go test ./engine -run XXX -bench NestShapes -count 5
func BenchmarkNestShapes(b *testing.B) {
	d := benchInputs()
	rng := rand.New(rand.NewPCG(28, 4))
	a := d.spmvA
	st := storage.Store{"beta": storage.RealScalar(1.5)}
	a.store(st, "A")
	st["x_val"] = storage.RealArray(d.x)
	st["x_len1"] = storage.IntScalar(int64(len(d.x)))
	const dn = 2000
	denseStore(st, "M", dn, dn, rng)
	mv := st["M_val"].(*storage.Array).F
	xs := d.x[:dn]
	t := d.mttB
	t.store(st, "B")
	const rank = 16
	c1, d2 := int(t.dims[1]), int(t.dims[2])
	denseStore(st, "C", c1, rank, rng)
	denseStore(st, "D", rank, d2, rng)
	cv, dv := st["C_val"].(*storage.Array).F, st["D_val"].(*storage.Array).F
	// rowDot is row i of A times x, x's length guarding the reads.
	rowDot := func(i int) float64 {
		s := 0.0
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			if j := a.idx[p]; 0 <= j && j < int64(len(d.x)) {
				s += a.val[p] * d.x[j]
			}
		}
		return s
	}
	shapes := []struct {
		name, plan string
		loop       func()
	}{
		{"SpMV-x-tensor", nestSpMV, func() {
			y := make([]float64, a.n)
			for i := range a.n {
				y[i] = rowDot(i)
			}
		}},
		{"BATAX-x-tensor", nestBATAX, func() {
			y := make([]float64, a.m)
			for i := range a.n {
				s := rowDot(i)
				for p := a.pos[i]; p < a.pos[i+1]; p++ {
					y[a.idx[p]] += a.val[p] * s
				}
			}
			for j := range y {
				y[j] *= 1.5
			}
		}},
		{"dense-MV", nestDenseMV, func() {
			y := make([]float64, dn)
			for i := range dn {
				s := 0.0
				row := mv[i*dn : i*dn+dn]
				for j, m := range row {
					s += m * xs[j]
				}
				y[i] = s
			}
		}},
		{"MTTKRP-dense-rank16", nestMTTKRP, func() {
			out := make([]float64, int(t.dims[0])*rank)
			for p1 := t.pos1[0]; p1 < t.pos1[1]; p1++ {
				row := out[t.idx1[p1]*rank:][:rank]
				for p2 := t.pos2[p1]; p2 < t.pos2[p1+1]; p2++ {
					k := t.idx2[p2]
					cr := cv[k*rank:][:rank]
					for p3 := t.pos3[p2]; p3 < t.pos3[p2+1]; p3++ {
						l, v := t.idx3[p3], t.val[p3]
						for j := range rank {
							row[j] += v * (cr[j] * dv[int64(j)*int64(d2)+l])
						}
					}
				}
			}
		}},
	}
	for _, sh := range shapes {
		b.Run(sh.name+"/nest", func(b *testing.B) { runKernel(b, sh.plan, st, 1, 0) })
		b.Run(sh.name+"/older", func(b *testing.B) {
			defer nestsOff()()
			runKernel(b, sh.plan, st, 1, 0)
		})
		b.Run(sh.name+"/loop", func(b *testing.B) {
			for range b.N {
				sh.loop()
			}
		})
	}
}

// BenchmarkNestHeadline compares the IR with the older paths on the
// headline plans of SpMV and BATAX (x an ARRAY, kernels_test.go's plans),
// the shapes whose row loops run in assembly either way.
func BenchmarkNestHeadline(b *testing.B) {
	d := benchInputs()
	st := storage.Store{"x": storage.RealArray(d.x), "beta": storage.RealScalar(1.5)}
	d.spmvA.store(st, "A")
	for _, k := range []struct{ name, plan string }{{"SpMV", planSpMV}, {"BATAX", planBATAX}} {
		b.Run(k.name+"/nest", func(b *testing.B) { runKernel(b, k.plan, st, 1, 0) })
		b.Run(k.name+"/older", func(b *testing.B) {
			defer nestsOff()()
			runKernel(b, k.plan, st, 1, 0)
		})
	}
}

// BenchmarkScatterRuns: the scatter of a COO's entries by their row keys
// (runs of equal keys) and by their column keys (a new key at almost
// every entry), each as scatterProductRuns and as a plain store per
// value: the runs summed in a register are faster for the first; for the
// second, where looking for runs would cost more than it saves, inRuns
// sends scatterProductRuns to a store per value.
func BenchmarkScatterRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4884
	var rows, cols []int64
	for i := range n {
		for j := max(0, i-30); j < min(n, i+30); j++ {
			if rng.IntN(2) == 0 {
				rows, cols = append(rows, int64(i)), append(cols, int64(j))
			}
		}
	}
	av, src, rs := make([]float64, len(rows)), make([]float64, n), make([]float64, n)
	perValue := func(keys []int64, av []float64, idx []int64) {
		for l, k := range keys {
			rs[k] += av[l] * src[idx[l]]
		}
	}
	for _, c := range []struct {
		name      string
		keys, idx []int64
	}{{"row keys", rows, cols}, {"column keys", cols, rows}} {
		for _, how := range []string{"runs", "a store per value"} {
			b.Run(c.name+"/"+how, func(b *testing.B) {
				for range b.N {
					for p := 0; p < len(c.keys); p += vbatch {
						e := min(p+vbatch, len(c.keys))
						if how == "runs" {
							scatterProductRuns(rs, c.keys[p:e], av[p:e], src, c.idx[p:e])
						} else {
							perValue(c.keys[p:e], av[p:e], c.idx[p:e])
						}
					}
				}
			})
		}
	}
}
