package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/storage"
)

// BenchmarkShortLoops measures plans whose inner loops hold a few
// entries (the optimizer's MTTKRP plan over a tensor of 1-2 entries a
// fiber, as orghs; TTV and TTM over the same fibers; SDDMM with rank-8
// factors): "nest" as the engine
// runs them, "batches" with the short calls run as batches instead of
// lane by lane, and "loop" a Go loop doing the plan's work
// (MTTKRP-guards-tested is the first plan with its guards kept: the
// fibers run a call each, not in position space).
//
//	go test ./engine -run XXX -bench ShortLoops -count 3
func BenchmarkShortLoops(b *testing.B) {
	rng := rand.New(rand.NewPCG(28, 7))
	st := storage.Store{}
	t := randCSF(6000, 5000, 20, 100_000, rng)
	t.store(st, "B")
	const rank = 16
	denseStore(st, "C", int(t.dims[1]), rank, rng)
	denseStore(st, "D", rank, int(t.dims[2]), rng)
	cv, dv := st["C_val"].(*storage.Array).F, st["D_val"].(*storage.Array).F
	l2 := t.dims[2]
	s := randCSR(4000, 4000, 240_000, rng)
	s.store(st, "S")
	const r8 = 8
	denseStore(st, "U", s.n, r8, rng)
	denseStore(st, "V", s.m, r8, rng)
	uv, vv := st["U_val"].(*storage.Array).F, st["V_val"].(*storage.Array).F
	shapes := []struct {
		name, plan string
		loop       func()
	}{
		{"MTTKRP-short-fibers", shortMTTKRP, func() {
			out := make([]float64, int(t.dims[0])*rank)
			for p1 := t.pos1[0]; p1 < t.pos1[1]; p1++ {
				row := out[t.idx1[p1]*rank:][:rank]
				for j := range int64(rank) {
					acc := 0.0
					for p2 := t.pos2[p1]; p2 < t.pos2[p1+1]; p2++ {
						s := 0.0
						for p3 := t.pos3[p2]; p3 < t.pos3[p2+1]; p3++ {
							s += t.val[p3] * dv[j*l2+t.idx3[p3]]
						}
						acc += cv[rank*t.idx2[p2]+j] * s
					}
					row[j] += acc
				}
			}
		}},
		{"MTTKRP-guards-tested", shortMTTKRPGuarded, nil},
		// The optimizer's plan with C's row a let: three factors a lane.
		{"MTTKRP-let", liftMTTKRP, func() {
			out := make([]float64, int(t.dims[0])*rank)
			for p1 := t.pos1[0]; p1 < t.pos1[1]; p1++ {
				row := out[t.idx1[p1]*rank:][:rank]
				for p2 := t.pos2[p1]; p2 < t.pos2[p1+1]; p2++ {
					cr := cv[rank*t.idx2[p2]:][:rank]
					for j := range int64(rank) {
						acc := 0.0
						for p3 := t.pos3[p2]; p3 < t.pos3[p2+1]; p3++ {
							acc += t.val[p3] * dv[j*l2+t.idx3[p3]] * cr[j]
						}
						row[j] += acc
					}
				}
			}
		}},
		// TTV and TTM over the same fibers (v D's first row; TTM's
		// factor D read k-major, the optimizer's plan for a dense B).
		{"TTV", shortTTV, func() {
			out := make([]float64, len(t.idx2))
			for p2 := range t.idx2 {
				s := 0.0
				for p3 := t.pos3[p2]; p3 < t.pos3[p2+1]; p3++ {
					s += t.val[p3] * dv[t.idx3[p3]]
				}
				out[p2] = s
			}
		}},
		{"TTM", shortTTM, func() {
			out := make([]float64, len(t.idx2)*rank)
			for p2 := range t.idx2 {
				row := out[p2*rank:][:rank]
				for p3 := t.pos3[p2]; p3 < t.pos3[p2+1]; p3++ {
					a, l := t.val[p3], t.idx3[p3]
					for k := range int64(rank) {
						row[k] += dv[k*l2+l] * a
					}
				}
			}
		}},
		{"SDDMM-rank8", shortSDDMM, func() {
			out := make([]float64, len(s.val))
			for i := range s.n {
				u := uv[i*r8:][:r8]
				for p := s.pos[i]; p < s.pos[i+1]; p++ {
					v := vv[s.idx[p]*r8:][:r8]
					d := 0.0
					for k := range r8 {
						d += u[k] * v[k]
					}
					out[p] = s.val[p] * d
				}
			}
		}},
	}
	for _, sh := range shapes {
		ss := st
		if sh.loop == nil {
			// C one row short of B's keys: the guard on k is tested per
			// iteration, and the fibers run one call each.
			ss = storage.Store{}
			for k, v := range st {
				ss[k] = v
			}
			ss["C_len1"] = storage.IntScalar(t.dims[1] - 1)
		}
		b.Run(sh.name+"/nest", func(b *testing.B) { runKernel(b, sh.plan, ss, 1, 0) })
		b.Run(sh.name+"/batches", func(b *testing.B) {
			defer func(a int64) { shortRun = a }(shortRun)
			shortRun = 0
			runKernel(b, sh.plan, ss, 1, 0)
		})
		if sh.loop == nil {
			continue
		}
		b.Run(sh.name+"/loop", func(b *testing.B) {
			for range b.N {
				sh.loop()
			}
		})
	}
}

// BenchmarkLaneMajorCopy: the lane-major copy of MTTKRP's D on WordNet
// (rank 16 and 32 rows of 117659 columns), one worker.
func BenchmarkLaneMajorCopy(b *testing.B) {
	for _, rows := range []int64{16, 32} {
		const stride = 117659
		src := make([]float64, rows*stride)
		for i := range src {
			src[i] = float64(i)
		}
		b.Run(fmt.Sprintf("R%d", rows), func(b *testing.B) {
			bufs := &copyBufs{}
			for range b.N {
				c := (&runCopies{bufs: bufs}).entry(src, stride)
				c.lanes()
				bufs.put(c.vals)
			}
		})
	}
}
